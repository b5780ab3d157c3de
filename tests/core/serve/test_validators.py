"""Validators: ETag and Last-Modified of every document, and conditional requests.

What is shown here, through :func:`sitemap_core.respond` and the helpers of
:mod:`sitemap_core.serve.validators`:

* every document (urlset, text, index, robots.txt, ``.gz``) has a strong ETag;
* Last-Modified is the newest lastmod the document lists: from ``newest(start, stop)``
  for a source with facts, from the rendered entries for one without, the newest child
  for an index; always an IMF-fixdate;
* ETags are deterministic (a fresh process with another hash seed agrees) and change
  with the fingerprint, the base URL, the path and the content coding;
* with a fingerprint, validators, 304 and HEAD never read an entry;
* ``If-None-Match`` / ``If-Modified-Since`` as RFC 9110 section 13 says.

The fakes here (:class:`Rows`, :class:`FactRows`) are shared with ``test_compress`` and
``test_cache``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from xsd import validate

from sitemap_core import BaseURL, ConfigurationError, Entry, Site, UrlSource, respond
from sitemap_core.serve.validators import (
    Validators,
    digest_etag,
    fingerprint_etag,
    http_date,
    is_not_modified,
    lastmod_instant,
    parse_http_date,
)
from sitemap_core.sources.base import WHOLE
from tests.core.helpers import BASE, ORIGIN, SM, Got, locs, parse, url

#: An IMF-fixdate (RFC 9110 5.6.7): ``Sun, 06 Nov 1994 08:49:37 GMT``.
IMF_FIXDATE = re.compile(
    r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-3][0-9] "
    r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{4} "
    r"[0-2][0-9]:[0-5][0-9]:[0-6][0-9] GMT"
)
#: An entity-tag as the library writes it: strong and quoted for an identity document;
#: weak and "-gz" for a gzipped one (gzip bytes may differ between zlib builds).
STRONG_ETAG = re.compile(r'"[A-Za-z0-9_-]{24}"')
GZIP_ETAG = re.compile(r'W/"[A-Za-z0-9_-]{24}-gz"')
ETAG = re.compile(f"{STRONG_ETAG.pattern}|{GZIP_ETAG.pattern}")

IDENTITY: Mapping[str, str] = {"accept-encoding": "identity"}
GZIP: Mapping[str, str] = {"accept-encoding": "gzip"}

DAY0 = date(2024, 1, 1)


def lastmod_of(i: int) -> date:
    """The lastmod of row ``i``: later rows are newer (row i is DAY0 + i days)."""
    return DAY0 + timedelta(days=i)


# -- fakes -------------------------------------------------------------------------------


class Rows:
    """A sized sliceable standing in for a SQL query, recording every access.

    ``slices`` lists the ``__getitem__`` calls, ``pulled`` the rows handed out; a row at
    ``fail_at`` raises instead. No ``fingerprint``: documents of it are spooled.
    """

    def __init__(self, n: int, prefix: str = "item") -> None:
        self.n = n
        self.prefix = prefix
        self.slices: list[slice] = []
        self.pulled = 0
        self.fail_at: int | None = None

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: slice) -> Iterator[Entry]:
        assert isinstance(index, slice), f"only slices are expected, got {index!r}"
        self.slices.append(index)
        start, stop, _ = index.indices(self.n)
        return self._rows(start, stop)

    def _rows(self, start: int, stop: int) -> Iterator[Entry]:
        for i in range(start, stop):
            if i == self.fail_at:
                raise RuntimeError(f"database went away at row {i}")
            self.pulled += 1
            yield Entry(url(i, self.prefix), lastmod=lastmod_of(i))


class FactRows(Rows):
    """:class:`Rows` with the cheap facts of an indexed table: fingerprint and newest.

    The fingerprint is ``(prefix, version, n)``: bump ``version`` when rows change.
    ``newest(start, stop)`` is the lastmod of row ``stop - 1`` (rows get newer).
    """

    def __init__(self, n: int, prefix: str = "item", version: int = 1) -> None:
        super().__init__(n, prefix)
        self.version = version
        self.fingerprint_calls: list[tuple[int, int]] = []
        self.newest_calls: list[tuple[int, int]] = []

    def fingerprint(self, start: int, stop: int) -> tuple[str, int, int]:
        self.fingerprint_calls.append((start, stop))
        return (self.prefix, self.version, self.n)

    def newest(self, start: int, stop: int) -> date:
        self.newest_calls.append((start, stop))
        return lastmod_of(stop - 1)


def facts_only(rows: Rows, name: str, fingerprint: Any = None, newest: Any = None) -> UrlSource:
    """A UrlSource over ``rows`` with exactly the facts given (none by default)."""
    return UrlSource(
        name, lambda: len(rows), lambda a, b: rows[a:b], fingerprint=fingerprint, newest=newest
    )


def site_of(*sources: tuple[str, Any], page_size: int = 10, **settings: Any) -> Site[UrlSource]:
    """A site of ``(name, obj)`` pairs (objects adapted) or ready UrlSources."""
    adapted = [
        obj if isinstance(obj, UrlSource) else UrlSource.from_object(name, obj)
        for name, obj in sources
    ]
    return Site(adapted, page_size=page_size, **settings)


def fetch(
    site: Site[UrlSource],
    path: str,
    method: str = "GET",
    headers: Mapping[str, str] = IDENTITY,
    base: BaseURL = BASE,
) -> Got:
    """Run ``respond`` with request headers (lower-case names); read the whole body."""
    reply = respond(site, method, path, lambda: base, dict(headers))
    assert reply is not None, f"{path} is not a path of the site"
    body = reply.body
    assert isinstance(body, Iterable), "the sync path must give a sync body"
    return Got(reply, b"".join(body))


def etag_of(got: Got) -> str:
    etag = got.header("ETag")
    assert etag is not None, got.reply.headers
    return etag


# -- every document has validators -------------------------------------------------------

DOCUMENT_PATHS = [
    "/sitemap.xml",  # an index (25 rows, 10 a page)
    "/sitemap-facts-1.xml",
    "/sitemap-facts-3.txt",
    "/sitemap-plain-1.xml",  # no fingerprint: spooled
    "/sitemap-plain-1.txt",
    "/sitemap-facts-2.xml.gz",
    "/sitemap-plain-1.txt.gz",
    "/robots.txt",
]


@pytest.mark.parametrize("path", DOCUMENT_PATHS)
@pytest.mark.parametrize("headers", [IDENTITY, GZIP], ids=["identity", "gzip"])
def test_every_document_carries_an_etag(path: str, headers: Mapping[str, str]) -> None:
    site = site_of(("facts", FactRows(25)), ("plain", Rows(7, "plain")))
    got = fetch(site, path, headers=headers)
    assert got.status == 200
    gzipped = path != "/robots.txt" and (path.endswith(".gz") or headers is GZIP)
    assert (GZIP_ETAG if gzipped else STRONG_ETAG).fullmatch(etag_of(got)), etag_of(got)
    # Asked again, the same document has the same tag.
    assert etag_of(fetch(site, path, headers=headers)) == etag_of(got)


@pytest.mark.parametrize("kind", ["urlset", "text"])
def test_a_root_document_that_fits_carries_an_etag(kind: str) -> None:
    site = site_of(("facts", FactRows(5)), ("plain", Rows(3, "plain")), page_size=50)
    got = fetch(site, "/sitemap.xml" if kind == "urlset" else "/sitemap.txt")
    assert got.status == 200
    assert STRONG_ETAG.fullmatch(etag_of(got))


def test_error_responses_carry_no_validators() -> None:
    site = site_of(("facts", FactRows(5)))
    for path in ("/sitemap-facts-2.xml", "/sitemap-nope-1.xml"):
        got = fetch(site, path)
        assert got.status == 404
        assert got.header("ETag") is None and got.header("Last-Modified") is None


# -- Last-Modified ------------------------------------------------------------------------


def test_last_modified_of_a_page_comes_from_newest_of_its_range() -> None:
    rows = FactRows(25)
    got = fetch(site_of(("facts", rows)), "/sitemap-facts-2.xml")
    assert rows.newest_calls == [(10, 20)]
    # The whole source's first (it keeps the count remembered), then the page's.
    assert rows.fingerprint_calls == [(0, WHOLE), (10, 20)]
    # Row 19 is the newest of rows 10..19: 2024-01-20, at UTC midnight.
    assert got.header("Last-Modified") == "Sat, 20 Jan 2024 00:00:00 GMT"
    assert IMF_FIXDATE.fullmatch(got.header("Last-Modified") or "")


def test_last_modified_with_facts_costs_no_rendering() -> None:
    rows = FactRows(25)
    got = fetch(site_of(("facts", rows)), "/sitemap-facts-3.xml", method="HEAD")
    assert got.status == 200 and got.body == b""
    assert got.header("Last-Modified") == "Thu, 25 Jan 2024 00:00:00 GMT"
    assert STRONG_ETAG.fullmatch(etag_of(got))
    assert rows.slices == [] and rows.pulled == 0


def test_last_modified_compares_instants_not_texts() -> None:
    # 23:30 at -05:00 on 1 March is 04:30 UTC on 2 March: later than 01:00 UTC that day,
    # though its text sorts first. Two sources at the root; the newest of both wins.
    west = FactRows(3, "west")
    east = FactRows(3, "east")
    site = site_of(
        (
            "west",
            facts_only(west, "west", lambda a, b: 1, lambda a, b: "2024-03-01T23:30:00-05:00"),
        ),
        ("east", facts_only(east, "east", lambda a, b: 1, lambda a, b: "2024-03-02T01:00:00Z")),
        page_size=50,
    )
    got = fetch(site, "/sitemap.xml")
    assert got.header("Last-Modified") == "Sat, 02 Mar 2024 04:30:00 GMT"


def test_without_fingerprint_last_modified_is_computed_while_rendering() -> None:
    entries = [
        Entry(url(0), lastmod="2024-03-02T01:00:00+00:00"),
        Entry(url(1), lastmod="2024-03-01T23:30:00.750-05:00"),  # the newest instant
        Entry(url(3), lastmod="2023-12-31"),
    ]
    got = fetch(site_of(("plain", entries), page_size=50), "/sitemap.xml")
    assert got.status == 200
    # The fraction of a second is dropped: HTTP dates have whole seconds.
    assert got.header("Last-Modified") == "Sat, 02 Mar 2024 04:30:00 GMT"
    assert got.header("Content-Length") == str(len(got.body))


def test_last_modified_only_when_every_entry_is_dated() -> None:
    # One rule for every document (urlset, text, index child): an undated entry may
    # have changed at any time, so a document holding one claims no Last-Modified.
    entries = [Entry(url(0), lastmod="2024-03-02"), Entry(url(2))]
    for path in ("/sitemap.xml", "/sitemap.txt"):
        got = fetch(site_of(("plain", entries), page_size=50), path)
        assert got.status == 200 and got.header("ETag") is not None
        assert got.header("Last-Modified") is None


@pytest.mark.parametrize("page_size", [10, 50], ids=["index", "urlset"])
def test_a_future_lastmod_never_makes_a_future_last_modified(page_size: int) -> None:
    # RFC 9110 8.8.2.1: Last-Modified is never later than the response's own date.
    source = facts_only(Rows(25), "facts", lambda a, b: 1, lambda a, b: "2999-01-01")
    before = datetime.now(UTC).replace(microsecond=0)
    got = fetch(site_of(("facts", source), page_size=page_size), "/sitemap.xml")
    after = datetime.now(UTC)
    sent = parse_http_date(got.header("Last-Modified") or "")
    assert sent is not None and before <= sent <= after
    if page_size == 10:  # the index itself lists the lastmods as given
        assert b"<lastmod>2999-01-01</lastmod>" in got.body


def test_a_future_lastmod_in_a_spooled_document_never_makes_a_future_last_modified() -> None:
    entries = [Entry(url(0), lastmod="2999-01-01"), Entry(url(1), lastmod="2024-01-01")]
    got = fetch(site_of(("plain", entries), page_size=50), "/sitemap.xml")
    sent = parse_http_date(got.header("Last-Modified") or "")
    assert sent is not None and sent <= datetime.now(UTC)


def test_no_lastmod_anywhere_means_no_last_modified() -> None:
    got = fetch(site_of(("plain", [url(0), url(1)]), page_size=50), "/sitemap.xml")
    assert got.status == 200
    assert got.header("Last-Modified") is None
    assert STRONG_ETAG.fullmatch(etag_of(got))


def test_a_fingerprint_without_newest_gives_an_etag_and_no_last_modified() -> None:
    rows = Rows(5)
    source = facts_only(rows, "facts", fingerprint=lambda a, b: "v1")
    got = fetch(site_of(("facts", source), page_size=50), "/sitemap.xml", method="HEAD")
    assert STRONG_ETAG.fullmatch(etag_of(got))
    assert got.header("Last-Modified") is None
    assert rows.slices == []


def test_a_root_with_one_source_without_newest_has_no_last_modified() -> None:
    # The newest lastmod of the document is unknown if one of its sources cannot tell:
    # a date from the other source alone could be too old (a 304 for changed content).
    known = FactRows(3, "known")
    unknown = Rows(3, "unknown")
    site = site_of(
        ("known", known),
        ("unknown", facts_only(unknown, "unknown", fingerprint=lambda a, b: 7)),
        page_size=50,
    )
    got = fetch(site, "/sitemap.xml", method="HEAD")
    assert got.header("Last-Modified") is None
    assert STRONG_ETAG.fullmatch(etag_of(got))


# -- the index -----------------------------------------------------------------------------


def test_index_lastmods_come_from_newest_and_no_entry_is_read() -> None:
    posts = FactRows(25, "posts")
    pages = FactRows(12, "pages")
    site = site_of(("posts", posts), ("pages", pages))
    got = fetch(site, "/sitemap.xml")
    assert got.status == 200
    validate(got.body)
    assert posts.slices == [] and pages.slices == [] and posts.pulled == pages.pulled == 0
    assert posts.newest_calls == [(0, 10), (10, 20), (20, 25)]
    assert pages.newest_calls == [(0, 10), (10, 12)]
    children = parse(got.body).findall("sm:sitemap", SM)
    found = [
        (child.findtext("sm:loc", namespaces=SM), child.findtext("sm:lastmod", namespaces=SM))
        for child in children
    ]
    assert found == [
        (f"{ORIGIN}/sitemap-posts-1.xml", lastmod_of(9).isoformat()),
        (f"{ORIGIN}/sitemap-posts-2.xml", lastmod_of(19).isoformat()),
        (f"{ORIGIN}/sitemap-posts-3.xml", lastmod_of(24).isoformat()),
        (f"{ORIGIN}/sitemap-pages-1.xml", lastmod_of(9).isoformat()),
        (f"{ORIGIN}/sitemap-pages-2.xml", lastmod_of(11).isoformat()),
    ]
    # Last-Modified: the newest child (posts page 3, row 24: 25 January).
    assert got.header("Last-Modified") == "Thu, 25 Jan 2024 00:00:00 GMT"


def test_index_of_sources_without_newest_has_no_lastmods_and_reads_no_entry() -> None:
    rows = Rows(25)
    got = fetch(site_of(("plain", rows)), "/sitemap.xml")
    validate(got.body)
    assert locs(got.body) == [f"{ORIGIN}/sitemap-plain-{n}.xml" for n in (1, 2, 3)]
    assert b"<lastmod>" not in got.body
    assert got.header("Last-Modified") is None
    assert STRONG_ETAG.fullmatch(etag_of(got))
    assert rows.slices == []


def test_index_etag_follows_the_child_lastmods() -> None:
    rows = FactRows(25)
    site = site_of(("facts", rows))
    before = etag_of(fetch(site, "/sitemap.xml"))
    rows.n = 26  # a row added on page 3: its newest, hence its <lastmod>, changes
    after = fetch(site, "/sitemap.xml")
    assert etag_of(after) != before
    assert lastmod_of(25).isoformat().encode() in after.body


# -- 304 and HEAD cost no rendering --------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "page_size"),
    [
        ("/sitemap-facts-2.xml", 10),
        ("/sitemap-facts-2.txt", 10),
        ("/sitemap-facts-2.xml.gz", 10),
        ("/sitemap.xml", 10),  # the index
        ("/sitemap.xml", 50),  # a urlset of everything
    ],
)
def test_with_a_fingerprint_304_and_head_read_no_entry(path: str, page_size: int) -> None:
    rows = FactRows(25)
    site = site_of(("facts", rows), page_size=page_size)
    head = fetch(site, path, method="HEAD")
    assert head.status == 200 and head.body == b""
    etag, last_modified = etag_of(head), head.header("Last-Modified")
    assert last_modified is not None
    opaque = etag.removeprefix("W/")
    conditional = [
        {"if-none-match": etag},
        {"if-modified-since": last_modified},
        {"if-none-match": f'"other", W/{opaque}'},  # weak comparison
        {"if-none-match": opaque},
    ]
    for headers in conditional:
        for method in ("GET", "HEAD"):
            got = fetch(site, path, method=method, headers={**IDENTITY, **headers})
            assert (got.status, got.body) == (304, b""), (method, headers)
            assert etag_of(got) == etag
    assert rows.slices == [] and rows.pulled == 0
    # A GET with no condition is what reads the entries (never, for the index).
    assert fetch(site, path).status == 200
    is_index = path == "/sitemap.xml" and page_size < rows.n
    assert (rows.pulled > 0) is not is_index


def test_a_fingerprint_is_asked_for_the_exact_range_of_the_document() -> None:
    rows = FactRows(25)
    site = site_of(("facts", rows))
    fetch(site, "/sitemap-facts-3.xml", method="HEAD")
    assert rows.fingerprint_calls == [(0, WHOLE), (20, 25)]


def test_head_of_a_spooled_document_has_its_length_and_etag() -> None:
    site = site_of(("plain", Rows(15, "plain")))
    for headers in (IDENTITY, GZIP):
        get = fetch(site, "/sitemap-plain-2.xml", headers=headers)
        head = fetch(site, "/sitemap-plain-2.xml", method="HEAD", headers=headers)
        assert head.body == b""
        # A HEAD renders (checked) to know its validators, so it has the length; the
        # GETs after the first stream without one.
        assert head.header("Content-Length") == str(len(get.body))
        without_length = [(k, v) for k, v in head.reply.headers if k != "Content-Length"]
        assert without_length == [(k, v) for k, v in get.reply.headers if k != "Content-Length"]


# -- what the ETag depends on --------------------------------------------------------------


def test_the_etag_changes_with_the_fingerprint_only() -> None:
    rows = FactRows(25)
    site = site_of(("facts", rows))
    first = etag_of(fetch(site, "/sitemap-facts-1.xml", method="HEAD"))
    assert etag_of(fetch(site, "/sitemap-facts-1.xml", method="HEAD")) == first
    rows.version = 2
    second = etag_of(fetch(site, "/sitemap-facts-1.xml", method="HEAD"))
    assert second != first
    # The old tag no longer matches: the client gets the new document.
    got = fetch(site, "/sitemap-facts-1.xml", headers={**IDENTITY, "if-none-match": first})
    assert got.status == 200 and etag_of(got) == second


def test_the_etag_differs_between_base_urls() -> None:
    rows = FactRows(25)
    site = site_of(("facts", rows), ("plain", Rows(3, "plain")))
    other = BaseURL.parse("https://www.example.com")
    for path in ("/sitemap.xml", "/sitemap-facts-1.xml", "/robots.txt"):
        here = etag_of(fetch(site, path, method="HEAD"))
        there = etag_of(fetch(site, path, method="HEAD", base=other))
        assert here != there, path
    # A spooled page of the same entries under another base: same bytes, other document.
    same_host_off = site_of(("plain", Rows(3, "plain")), same_host_only=False)
    local = fetch(same_host_off, "/sitemap-plain-1.xml")
    remote = fetch(same_host_off, "/sitemap-plain-1.xml", base=other)
    assert local.body == remote.body
    assert etag_of(local) != etag_of(remote)


def test_the_etag_differs_between_paths_with_the_same_fingerprint() -> None:
    rows = Rows(25)
    site = site_of(("facts", facts_only(rows, "facts", fingerprint=lambda a, b: "same")))
    tags = {
        etag_of(fetch(site, path, method="HEAD"))
        for path in ("/sitemap-facts-1.xml", "/sitemap-facts-2.xml", "/sitemap-facts-1.txt")
    }
    assert len(tags) == 3


def test_the_etag_differs_between_gzip_and_identity() -> None:
    site = site_of(("facts", FactRows(25)), ("plain", Rows(3, "plain")))
    for path in ("/sitemap.xml", "/sitemap-facts-1.xml", "/sitemap-plain-1.xml"):
        plain = etag_of(fetch(site, path, headers=IDENTITY))
        gzipped = etag_of(fetch(site, path, headers=GZIP))
        assert plain != gzipped, path
        assert STRONG_ETAG.fullmatch(plain) and GZIP_ETAG.fullmatch(gzipped)


def test_a_spooled_etag_is_the_digest_of_the_content() -> None:
    urls = [url(i) for i in range(5)]

    def generated() -> Iterator[str]:
        yield from urls

    as_list = fetch(site_of(("plain", list(urls)), page_size=50), "/sitemap.xml")
    as_generator = fetch(site_of(("plain", generated), page_size=50), "/sitemap.xml")
    assert as_list.body == as_generator.body
    assert etag_of(as_list) == etag_of(as_generator)
    identity = f"{ORIGIN}|/sitemap.xml"
    expected = digest_etag(identity, hashlib.sha256(as_list.body).digest(), "identity")
    assert etag_of(as_list) == expected
    changed = fetch(site_of(("plain", [*urls, url(99)]), page_size=50), "/sitemap.xml")
    assert etag_of(changed) != etag_of(as_list)


@pytest.mark.parametrize(
    "fingerprint",
    [{"a": 1}, {1, 2}, object(), ("ok", ["nested", {"no": 1}]), frozenset({1})],
    ids=["dict", "set", "object", "nested-dict", "frozenset"],
)
def test_a_fingerprint_of_an_unsupported_type_is_a_configuration_error(fingerprint: Any) -> None:
    rows = Rows(5)
    site = site_of(("facts", facts_only(rows, "facts", fingerprint=lambda a, b: fingerprint)))
    with pytest.raises(ConfigurationError, match="fingerprint"):
        fetch(site, "/sitemap-facts-1.xml")
    assert rows.slices == []


# -- the ETag functions --------------------------------------------------------------------


def test_fingerprint_values_are_type_tagged() -> None:
    values: list[Any] = [
        "1",
        1,
        1.0,
        b"1",
        True,
        None,
        ("1",),
        ["1", "1"],
        ("11",),
        (("1",), "1"),
        date(2024, 1, 1),
        datetime(2024, 1, 1, tzinfo=UTC),
        datetime(2024, 1, 1),
    ]
    tags = [fingerprint_etag("id", [value], "identity") for value in values]
    assert len(set(tags)) == len(values), list(zip(values, tags, strict=True))
    # Same values, same tag; the coding and the identity enter the tag as well.
    assert fingerprint_etag("id", [("a", 1)], "identity") == fingerprint_etag(
        "id", [("a", 1)], "identity"
    )
    assert fingerprint_etag("id", ["a"], "gzip") != fingerprint_etag("id", ["a"], "identity")
    assert fingerprint_etag("id2", ["a"], "identity") != fingerprint_etag("id", ["a"], "identity")
    # Sequences are length-delimited: moving a boundary changes the tag.
    assert fingerprint_etag("id", ["ab", "c"], "identity") != fingerprint_etag(
        "id", ["a", "bc"], "identity"
    )


def test_digest_etags_depend_on_identity_digest_and_coding() -> None:
    digest = hashlib.sha256(b"<urlset/>").digest()
    other = hashlib.sha256(b"<urlset />").digest()
    base = digest_etag("a", digest, "identity")
    assert STRONG_ETAG.fullmatch(base)
    assert digest_etag("a", digest, "identity") == base
    assert (
        len({base, digest_etag("b", digest, "identity"), digest_etag("a", other, "identity")}) == 3
    )
    assert digest_etag("a", digest, "gzip") == "W/" + base[:-1] + '-gz"'


def sample_etags() -> dict[str, str]:
    """ETags (and a gzip body digest) of a fixed site, computed from scratch.

    Run in this process and in fresh ones with other hash seeds: the results must agree.
    """
    site = site_of(("facts", FactRows(25)), ("plain", Rows(7, "plain")))
    out: dict[str, str] = {}
    for path in DOCUMENT_PATHS:
        for name, headers in (("identity", IDENTITY), ("gzip", GZIP)):
            got = fetch(site, path, headers=headers)
            out[f"{path} {name}"] = etag_of(got)
            out[f"{path} {name} body"] = hashlib.sha256(got.body).hexdigest()
    rich: list[object] = [
        "text",
        b"bytes",
        7,
        2.5,
        None,
        False,
        date(2024, 5, 1),
        datetime(2024, 5, 1, 10, 20, 30, tzinfo=timezone(timedelta(hours=2))),
        ("nested", ("tuple", 1), ["list"]),
    ]
    out["rich"] = fingerprint_etag("https://example.com|/sitemap.xml", rich, "identity")
    return out


@pytest.mark.parametrize("seed", ["0", "4242"])
def test_etags_are_the_same_in_a_fresh_process(seed: str) -> None:
    tests_dir = Path(__file__).resolve().parents[2]
    code = (
        "import json\n"
        "from core.serve.test_validators import sample_etags\n"
        "print(json.dumps(sample_etags()))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(tests_dir)}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tests_dir.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    ours = sample_etags()
    assert theirs == ours
    assert len(ours) == 2 * 2 * len(DOCUMENT_PATHS) + 1


# -- dates ---------------------------------------------------------------------------------


def test_http_date_is_an_imf_fixdate_in_gmt() -> None:
    moment = datetime(2024, 3, 1, 23, 30, 15, 999_999, tzinfo=timezone(timedelta(hours=-5)))
    text = http_date(moment)
    assert text == "Sat, 02 Mar 2024 04:30:15 GMT"
    assert IMF_FIXDATE.fullmatch(text)
    assert (
        http_date(datetime(1994, 11, 6, 8, 49, 37, tzinfo=UTC)) == "Sun, 06 Nov 1994 08:49:37 GMT"
    )


def test_lastmod_instants() -> None:
    assert lastmod_instant("2024-05-01") == datetime(2024, 5, 1, tzinfo=UTC)
    assert lastmod_instant("2024-05-01T10:00:00+02:00") == datetime(2024, 5, 1, 8, tzinfo=UTC)
    assert lastmod_instant("2024-05-01T10:00:00+02:00").utcoffset() is not None


@pytest.mark.parametrize(
    "text",
    ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"],
    ids=["imf-fixdate", "rfc850", "asctime"],
)
def test_the_three_http_date_formats_are_read(text: str) -> None:
    # RFC 9110 5.6.7: a recipient must accept all three.
    assert parse_http_date(text) == datetime(1994, 11, 6, 8, 49, 37, tzinfo=UTC)


@pytest.mark.parametrize(
    "text", ["", "garbage", "2024-05-01", "Sun, 31 Feb 1994 08:49:37 GMT", "06 Nov 1994"]
)
def test_invalid_http_dates_are_none(text: str) -> None:
    assert parse_http_date(text) is None


# -- is_not_modified -----------------------------------------------------------------------

OURS = Validators('"abc"', datetime(2024, 5, 1, 10, 20, 30, tzinfo=UTC))
LM = "Wed, 01 May 2024 10:20:30 GMT"


@pytest.mark.parametrize(
    ("if_none_match", "expected"),
    [
        ('"abc"', True),
        ('W/"abc"', True),  # weak comparison: W/ on the request side
        ('"abd"', False),
        ("abc", False),  # not a quoted entity-tag
        ('"ABC"', False),  # entity-tags are case-sensitive
        ('"xyz", "abc"', True),
        ('"xyz","abc"', True),
        ('  "xyz" ,   W/"abc"  ', True),
        ('"a,b", "abc"', True),  # a comma inside quotes does not split
        ('"abc,x"', False),
        ('"x,abc"', False),
        ("*", True),
        ('"xyz", *', True),
        ("", False),
    ],
)
def test_if_none_match(if_none_match: str, expected: bool) -> None:
    assert is_not_modified({"if-none-match": if_none_match}, OURS) is expected


def test_a_comma_inside_an_entity_tag_is_not_a_separator() -> None:
    comma = Validators('"a,b"')
    assert is_not_modified({"if-none-match": '"x", "a,b"'}, comma)
    assert is_not_modified({"if-none-match": 'W/"a,b"'}, comma)
    assert not is_not_modified({"if-none-match": '"a", "b"'}, comma)


def test_weak_comparison_both_ways() -> None:
    weak = Validators('W/"abc"')
    assert is_not_modified({"if-none-match": '"abc"'}, weak)
    assert is_not_modified({"if-none-match": 'W/"abc"'}, weak)
    assert not is_not_modified({"if-none-match": 'W/"abd"'}, weak)


@pytest.mark.parametrize(
    ("since", "expected"),
    [
        (LM, True),  # equal
        ("Wed, 01 May 2024 10:20:31 GMT", True),  # later
        ("Thu, 02 May 2024 00:00:00 GMT", True),
        ("Wed, 01 May 2024 10:20:29 GMT", False),  # earlier
        ("Wed, 01 May 2024 12:20:30 +0200", True),  # the same instant in another zone
        ("Wednesday, 01-May-24 10:20:30 GMT", True),
        ("Wed May  1 10:20:29 2024", False),
        ("not a date", False),  # invalid: ignored, so the document is sent
        ("", False),
    ],
)
def test_if_modified_since(since: str, expected: bool) -> None:
    assert is_not_modified({"if-modified-since": since}, OURS) is expected


def test_if_modified_since_compares_whole_seconds() -> None:
    fractional = Validators('"t"', datetime(2024, 5, 1, 10, 20, 30, 750_000, tzinfo=UTC))
    assert is_not_modified({"if-modified-since": LM}, fractional)


def test_if_none_match_takes_precedence_over_if_modified_since() -> None:
    later = "Thu, 02 May 2024 00:00:00 GMT"
    assert not is_not_modified({"if-none-match": '"other"', "if-modified-since": later}, OURS)
    earlier = "Tue, 30 Apr 2024 00:00:00 GMT"
    assert is_not_modified({"if-none-match": '"abc"', "if-modified-since": earlier}, OURS)


def test_without_validators_nothing_is_not_modified() -> None:
    nothing = Validators()
    assert not is_not_modified({"if-none-match": '"abc"'}, nothing)
    assert not is_not_modified({"if-modified-since": LM}, nothing)
    assert not is_not_modified({}, OURS)


def test_validators_headers() -> None:
    assert OURS.headers() == [("ETag", '"abc"'), ("Last-Modified", LM)]
    assert Validators('"x"').headers() == [("ETag", '"x"')]
    assert Validators().headers() == []


# -- conditional requests through respond ---------------------------------------------------


def test_a_304_has_the_validators_cache_control_and_vary_and_no_body() -> None:
    pages = site_of(("facts", FactRows(25)), ("plain", Rows(3, "plain")))
    index = site_of(("facts", FactRows(25)))
    cases = [
        (pages, "/sitemap-facts-1.xml"),
        (pages, "/sitemap-plain-1.xml"),
        (index, "/sitemap.xml"),
    ]
    for site, path in cases:
        for headers in (IDENTITY, GZIP):
            ok = fetch(site, path, headers=headers)
            cond = {**headers, "if-none-match": etag_of(ok)}
            got = fetch(site, path, headers=cond)
            assert (got.status, got.body) == (304, b"")
            assert got.header("ETag") == ok.header("ETag")
            # RFC 9110 15.4.5: with an ETag, no other representation metadata; the
            # same 304 on every front (Werkzeug strips Last-Modified from 304s anyway).
            assert ok.header("Last-Modified") is not None
            assert got.header("Last-Modified") is None
            assert got.header("Cache-Control") == ok.header("Cache-Control") is not None
            assert got.header("Vary") == "Accept-Encoding"
            assert got.header("Content-Length") in (None, ok.header("Content-Length"))
            assert got.header("Content-Type") is None


def test_if_modified_since_through_respond() -> None:
    rows = FactRows(25)
    site = site_of(("facts", rows))
    last_modified = fetch(site, "/sitemap-facts-1.xml", method="HEAD").header("Last-Modified")
    assert last_modified == "Wed, 10 Jan 2024 00:00:00 GMT"
    cases = {
        last_modified: 304,
        "Thu, 11 Jan 2024 00:00:00 GMT": 304,
        "Tue, 09 Jan 2024 23:59:59 GMT": 200,
        "yesterday": 200,
    }
    for since, status in cases.items():
        got = fetch(site, "/sitemap-facts-1.xml", headers={**IDENTITY, "if-modified-since": since})
        assert got.status == status, since
    # An If-None-Match that does not match wins over a later If-Modified-Since.
    both = {
        **IDENTITY,
        "if-none-match": '"stale"',
        "if-modified-since": "Thu, 11 Jan 2024 00:00:00 GMT",
    }
    assert fetch(site, "/sitemap-facts-1.xml", headers=both).status == 200


def test_robots_txt_answers_if_none_match() -> None:
    site = site_of(("facts", FactRows(5)))
    ok = fetch(site, "/robots.txt")
    etag = etag_of(ok)
    for method in ("GET", "HEAD"):
        got = fetch(site, "/robots.txt", method=method, headers={"if-none-match": etag})
        assert (got.status, got.body) == (304, b"")
        assert got.header("ETag") == etag
        assert got.header("Cache-Control") == ok.header("Cache-Control")
    assert fetch(site, "/robots.txt", headers={"if-none-match": '"other"'}).body == ok.body


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (1, 1.0),
        (1, True),
        (0.0, -0.0),
        (Decimal("1"), Decimal("1.0")),
        (
            datetime(2024, 1, 1, 12, tzinfo=timezone(timedelta(hours=1))),
            datetime(2024, 1, 1, 11, tzinfo=UTC),
        ),
        (("a", 1), ["a", 1.0]),
    ],
)
def test_etags_never_mix_values_python_calls_equal(one: object, other: object) -> None:
    # Equal in Python, encoded apart for the ETag: each has its own, in either order.
    first = fingerprint_etag("doc", [one], "identity")
    assert fingerprint_etag("doc", [other], "identity") != first
    assert fingerprint_etag("doc", [one], "identity") == first
