"""Remembered answers (sitemap_core.serve.answers): a 304, a HEAD or a cached 200 of a
document whose sources are all fingerprinted is answered from what the last request
worked out, while the fingerprints hold, and is exactly what working it out gives."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_core import MemoryCache, Site, UrlSource
from sitemap_core.serve.answers import Answers
from sitemap_core.serve.validators import http_date
from sitemap_core.sources.base import WHOLE
from tests.core.serve.test_validators import GZIP, IDENTITY, FactRows, Got, etag_of, fetch, site_of

PATHS = ["/sitemap.xml", "/sitemap-a-1.xml", "/sitemap-a-3.txt", "/sitemap-b-1.xml.gz"]


def fresh(rows: dict[str, FactRows], **options: Any) -> Site[UrlSource]:
    """A new site (nothing remembered) over the same rows."""
    return site_of(*rows.items(), **options)


def answer_of(got: Got) -> tuple[int, list[tuple[str, str]], bytes]:
    return got.status, sorted(got.reply.headers), got.body


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("method", ["GET", "HEAD"])
@pytest.mark.parametrize("coding", [IDENTITY, GZIP])
def test_a_remembered_answer_is_the_worked_out_one(
    path: str, method: str, coding: dict[str, str]
) -> None:
    rows = {"a": FactRows(25, "a"), "b": FactRows(7, "b")}
    cache = MemoryCache()  # shared: a cached document is a cache hit for both sites
    site = fresh(rows, cache=cache)
    fetch(site, path, method, coding)  # works it out and remembers it
    etag = etag_of(fetch(site, path, "HEAD", coding))
    for headers in (coding, {**coding, "if-none-match": etag}, {**coding, "if-none-match": '"x"'}):
        remembered = fetch(site, path, method, headers)
        worked_out = fetch(fresh(rows, cache=cache), path, method, headers)
        assert answer_of(remembered) == answer_of(worked_out)


def test_a_hit_asks_the_fingerprints_only() -> None:
    rows = FactRows(25, "a")
    site = site_of(("a", rows))
    etag = etag_of(fetch(site, "/sitemap.xml"))
    rows.fingerprint_calls.clear()
    rows.newest_calls.clear()
    for _ in range(3):
        assert fetch(site, "/sitemap.xml", headers={"if-none-match": etag}).status == 304
    assert rows.fingerprint_calls == [(0, WHOLE)] * 3
    assert rows.newest_calls == []


def test_a_changed_fingerprint_is_worked_out_again() -> None:
    rows = FactRows(25, "a")
    site = site_of(("a", rows))
    before = etag_of(fetch(site, "/sitemap-a-3.xml"))
    rows.n, rows.version = 27, 2
    after = fetch(site, "/sitemap-a-3.xml", headers={"if-none-match": before})
    assert after.status == 200 and etag_of(after) != before
    assert after.body.count(b"<url>") == 7


class Typed(FactRows):
    """Rows whose fingerprint is a value set by the test."""

    value: object = 1

    def fingerprint(self, start: int, stop: int) -> Any:
        self.fingerprint_calls.append((start, stop))
        return self.value


def test_fingerprints_equal_to_python_but_not_alike_are_two_keys() -> None:
    # 1 == 1.0 == True to Python; as fingerprints they are three versions (as for ETags).
    keys = {Answers.key(("doc",), ["a"], {"a": value}) for value in (1, 1.0, True, (1,), [1])}
    assert None not in keys and len(keys) == 5
    assert Answers.key(("doc",), ["a", "b"], {"a": 1}) is None  # b has no fingerprint


class Listed(FactRows):
    """Rows whose fingerprint is a new list each time, of the values set by the test."""

    values: tuple[object, ...] = ("a", 1)

    def fingerprint(self, start: int, stop: int) -> Any:
        return list(self.values)


def test_a_list_fingerprint_is_keyed_by_its_values() -> None:
    rows = Listed(25, "a")
    site = site_of(("a", rows))
    first = etag_of(fetch(site, "/sitemap-a-1.xml"))
    assert etag_of(fetch(site, "/sitemap-a-1.xml", "HEAD")) == first
    rows.values = ("a", 1, 2)
    rows.newest_calls.clear()
    changed = fetch(site, "/sitemap-a-1.xml", headers={"if-none-match": first})
    assert changed.status == 200 and etag_of(changed) != first
    assert rows.newest_calls  # worked out again


class Future(FactRows):
    """Rows whose newest lastmod is tomorrow."""

    def newest(self, start: int, stop: int) -> datetime:
        return datetime.now(UTC) + timedelta(days=1)


def test_a_future_lastmod_is_clamped_on_every_request(monkeypatch: pytest.MonkeyPatch) -> None:
    site = site_of(("a", Future(5, "a")))
    fetch(site, "/sitemap-a-1.xml")
    later = datetime.now(UTC) + timedelta(hours=2)

    class Clock(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Any:
            return later

    monkeypatch.setattr("sitemap_core.serve.body.datetime", Clock)
    again = fetch(site, "/sitemap-a-1.xml", "HEAD")
    assert again.header("Last-Modified") == http_date(later)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 30)), min_size=1, max_size=8))
def test_any_sequence_of_changes_answers_as_a_fresh_site(changes: list[tuple[int, int]]) -> None:
    # Versions going back and forth (a version seen before, with other rows) must never
    # revive an answer of other data: the fingerprint names both version and size here.
    rows = FactRows(10, "a")
    site = site_of(("a", rows), page_size=10)
    for version, size in changes:
        rows.version, rows.n = version, size
        for path in ("/sitemap.xml", "/sitemap-a-1.xml"):
            remembered = fetch(site, path, "HEAD")
            worked_out = fetch(site_of(("a", rows), page_size=10), path, "HEAD")
            assert answer_of(remembered) == answer_of(worked_out)


def test_a_date_lastmod_source_answers_the_same_after_a_hit() -> None:
    rows = FactRows(12, "a")
    site = site_of(("a", rows))
    first = fetch(site, "/sitemap.xml")
    assert first.header("Last-Modified") is not None
    assert isinstance(rows.newest(0, 1), date)
    hit = fetch(site, "/sitemap.xml", headers={"if-modified-since": first.header("Last-Modified")})
    assert hit.status == 304
