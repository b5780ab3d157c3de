"""Issue 10, item 6: the index costs one query per section while nothing changed.

A fingerprinted section is asked its whole-source fingerprint; while it is the one
remembered, its count and its child pages' lastmods (and a page's range facts) come from
memory (sitemap_core.memory.known). Any change of the fingerprint asks everything again.
"""

from __future__ import annotations

import pytest

from sitemap_core.memory.known import Known
from sitemap_core.sources.base import WHOLE
from tests.core.serve.test_validators import GZIP, IDENTITY, FactRows, etag_of, fetch, site_of


class Counted(FactRows):
    """FactRows that also counts ``len()`` (the section's count query)."""

    def __init__(self, n: int, prefix: str = "item") -> None:
        super().__init__(n, prefix)
        self.counts = 0

    def __len__(self) -> int:
        self.counts += 1
        return super().__len__()

    def queries(self) -> int:
        return self.counts + len(self.fingerprint_calls) + len(self.newest_calls)

    def reset(self) -> None:
        self.counts = 0
        self.fingerprint_calls.clear()
        self.newest_calls.clear()


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_an_index_asks_one_fingerprint_per_section_while_unchanged(method: str) -> None:
    a, b = Counted(95, "a"), Counted(40, "b")
    site = site_of(("a", a), ("b", b), page_size=10)
    first = fetch(site, "/sitemap.xml", method=method)
    assert first.status == 200
    assert a.newest_calls and len(a.newest_calls) == 10 and a.counts == 1
    for rows in (a, b):
        rows.reset()
    again = fetch(site, "/sitemap.xml", method=method)
    assert etag_of(again) == etag_of(first)
    assert again.header("Last-Modified") == first.header("Last-Modified")
    for rows in (a, b):
        assert rows.fingerprint_calls == [(0, WHOLE)] and rows.queries() == 1
    etag = etag_of(first)
    for rows in (a, b):
        rows.reset()
    not_modified = fetch(site, "/sitemap.xml", headers={**IDENTITY, "if-none-match": etag})
    assert not_modified.status == 304
    assert a.queries() == 1 and b.queries() == 1


def test_a_changed_section_is_asked_again_the_other_is_not() -> None:
    a, b = Counted(95, "a"), Counted(40, "b")
    site = site_of(("a", a), ("b", b), page_size=10)
    first = fetch(site, "/sitemap.xml")
    a.reset()
    b.reset()
    a.n, a.version = 101, 2  # rows appended: a new version
    changed = fetch(site, "/sitemap.xml", headers=GZIP)
    assert etag_of(changed) != etag_of(first)
    assert a.counts == 1 and len(a.newest_calls) == 11  # one more child page
    assert b.queries() == 1


def test_a_page_asks_one_fingerprint_while_unchanged() -> None:
    rows = Counted(25)
    site = site_of(("facts", rows))
    first = fetch(site, "/sitemap-facts-2.xml", method="HEAD")
    rows.reset()
    again = fetch(site, "/sitemap-facts-2.xml", method="HEAD")
    assert etag_of(again) == etag_of(first)
    assert rows.queries() == 1 and rows.fingerprint_calls == [(0, WHOLE)]


def test_sources_without_a_fingerprint_remember_nothing() -> None:
    known = Known()
    known.counted("s", None, 5)
    assert known.count("s", None) is None
    known.counted("s", "v1", 5)
    known.found("s", "v1", "newest", 0, 10, "2024-01-01")
    assert known.count("s", "v1") == 5
    assert known.fact("s", "v1", "newest", 0, 10) == (True, "2024-01-01")
    assert known.fact("s", "v2", "newest", 0, 10) == (False, None)
    known.counted("s", "v2", 6)  # a new version replaces the old facts
    assert known.fact("s", "v2", "newest", 0, 10) == (False, None)
    assert known.count("s", "v1") is None
