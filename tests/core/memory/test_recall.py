"""Remembered validators (sitemap_core.memory.recall): a plain generator streams, and never lies.

A source with neither ``count=`` nor a fingerprint is walked to learn what its document
is. The first request renders it whole (spooled); later GETs stream at once on what that
render found, and the walk that streams them checks it again: a change seen in the
first chunk is rendered afresh, a change seen later cuts the transfer before its last
bytes, so no body ever completes under validators that are not its own.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_core import Entry, Site, UrlSource, respond
from sitemap_core.memory.recall import Recall, Recalled, StaleValidatorsError
from sitemap_core.serve.site import BATCH_SIZE
from tests.core.helpers import BASE, locs, url

DAY0 = date(2024, 1, 1)
IDENTITY = {"accept-encoding": "identity"}
GZIP = {"accept-encoding": "gzip"}


class Feed:
    """A plain generator function over items the test edits; it counts its walks."""

    def __init__(self, n: int) -> None:
        self.items: list[tuple[str, date | datetime]] = [
            (url(i), datetime(2024, 1, 1, tzinfo=UTC) + timedelta(minutes=i)) for i in range(n)
        ]
        self.calls = 0
        self.yielded = 0

    def __call__(self) -> Iterator[Entry]:
        self.calls += 1
        for loc, lastmod in list(self.items):
            self.yielded += 1
            yield Entry(loc, lastmod=lastmod)


def site_for(feed: Feed, page_size: int = 50_000) -> Site[UrlSource]:
    return Site([UrlSource.from_object("feed", feed)], page_size=page_size)


class Answer:
    """A reply whose body was drained, or cut (``error`` set, ``body`` what came first)."""

    def __init__(self, site: Site[UrlSource], path: str, method: str, headers: dict[str, str]):
        reply = respond(site, method, path, lambda: BASE, headers)
        assert reply is not None
        self.status = reply.status
        self.headers = dict(reply.headers)
        self.error: Exception | None = None
        parts: list[bytes] = []
        assert isinstance(reply.body, Iterable)
        try:
            for chunk in reply.body:
                parts.append(chunk)
        except StaleValidatorsError as exc:
            self.error = exc
        self.body = b"".join(parts)

    @property
    def spooled(self) -> bool:
        return "Content-Length" in self.headers

    def text(self, coding: str = "identity") -> bytes:
        return gzip.decompress(self.body) if coding == "gzip" else self.body


def answer(
    site: Site[UrlSource],
    path: str = "/sitemap.xml",
    method: str = "GET",
    headers: dict[str, str] | None = None,
) -> Answer:
    return Answer(site, path, method, dict(headers or IDENTITY))


def test_the_first_render_is_spooled_the_next_stream_with_one_walk() -> None:
    feed = Feed(2_000)
    site = site_for(feed)
    first = answer(site)
    assert first.spooled and first.error is None
    assert feed.calls == 2  # counted, then rendered
    reply = respond(site, "GET", "/sitemap.xml", lambda: BASE, IDENTITY)
    assert reply is not None and isinstance(reply.body, Iterator)
    # Streamed: when the reply is handed to the server, one batch (and no more than
    # the next) has been read of the 2,000 entries.
    assert feed.yielded - 4_000 <= 2 * BATCH_SIZE
    body = b"".join(reply.body)
    assert feed.calls == 3  # one walk for the whole request, no count
    assert feed.yielded == 6_000 + 0  # the probe past the end finds nothing more
    assert body == first.body
    assert reply.header("ETag") == first.headers["ETag"]
    assert reply.header("Last-Modified") == first.headers["Last-Modified"]
    assert reply.header("Content-Length") is None


def test_gzip_streams_on_the_same_validators() -> None:
    feed = Feed(700)
    site = site_for(feed)
    spooled = answer(site, headers=GZIP)
    streamed = answer(site, headers=GZIP)
    assert spooled.spooled and not streamed.spooled
    assert streamed.headers["ETag"] == spooled.headers["ETag"]
    assert streamed.text("gzip") == spooled.text("gzip")
    identity = answer(site)  # the same memory serves the other coding
    assert not identity.spooled and identity.body == spooled.text("gzip")


def test_a_change_in_the_first_chunk_renders_afresh_without_a_cut() -> None:
    feed = Feed(1_000)
    site = site_for(feed)
    old = answer(site)
    feed.items[0] = (url(0), DAY0 + timedelta(days=300))
    new = answer(site)
    assert new.error is None and new.spooled
    assert new.headers["ETag"] != old.headers["ETag"]
    assert new.headers["Last-Modified"] != old.headers["Last-Modified"]
    assert locs(new.body) == [loc for loc, _ in feed.items]


@pytest.mark.parametrize("change", ["append", "remove", "edit"])
def test_a_change_past_the_first_chunk_cuts_the_transfer(change: str) -> None:
    feed = Feed(1_000)
    site = site_for(feed)
    old = answer(site)
    if change == "append":
        feed.items.append((url(5_000), DAY0))
    elif change == "remove":
        feed.items.pop()
    else:
        feed.items[900] = (url(900), DAY0 + timedelta(days=1))
    cut = answer(site)
    # Sent under the old validators, and cut before the end: it never looks complete.
    assert isinstance(cut.error, StaleValidatorsError)
    assert cut.headers["ETag"] == old.headers["ETag"]
    assert b"</urlset>" not in cut.body
    fresh = answer(site)
    assert fresh.error is None and fresh.spooled
    assert fresh.headers["ETag"] != old.headers["ETag"]
    assert locs(fresh.body) == [loc for loc, _ in feed.items]


def test_a_document_found_stale_streams_again_once_two_renders_agree() -> None:
    feed = Feed(1_000)
    site = site_for(feed)
    answer(site)
    feed.items.append((url(5_000), DAY0))
    assert answer(site).error is not None  # cut, and disarmed
    assert answer(site).spooled  # rendered whole: the first of the new data
    feed.items.append((url(5_001), DAY0))
    assert answer(site).spooled  # it changed again: still rendered whole, never cut
    assert answer(site).spooled  # agrees with the one before: armed again
    streamed = answer(site)
    assert streamed.error is None and not streamed.spooled
    assert locs(streamed.body) == [loc for loc, _ in feed.items]


def test_a_text_sitemap_is_cut_when_only_a_date_changed() -> None:
    feed = Feed(5_000)
    site = site_for(feed)
    old = answer(site, "/sitemap.txt")
    feed.items[4_900] = (url(4_900), DAY0 + timedelta(days=300))
    cut = answer(site, "/sitemap.txt")
    # Its bytes list URLs only, so they are the same; its Last-Modified is not.
    assert isinstance(cut.error, StaleValidatorsError)
    fresh = answer(site, "/sitemap.txt")
    assert fresh.body == old.body
    assert fresh.headers["Last-Modified"] != old.headers["Last-Modified"]


def test_the_last_page_is_planned_from_what_was_found_and_probed_for_growth() -> None:
    feed = Feed(2_500)
    site = site_for(feed, page_size=1_000)
    assert answer(site, "/sitemap-feed-3.xml").spooled
    calls = feed.calls
    last = answer(site, "/sitemap-feed-3.xml")
    assert not last.spooled and feed.calls == calls + 1
    assert locs(last.body) == [url(i) for i in range(2_000, 2_500)]
    feed.items.append((url(2_500), DAY0))  # the last page grows: the probe sees it
    assert isinstance(answer(site, "/sitemap-feed-3.xml").error, StaleValidatorsError)
    grown = answer(site, "/sitemap-feed-3.xml")
    assert locs(grown.body) == [url(i) for i in range(2_000, 2_501)]
    # A page past the end is never remembered: it is counted each time (404).
    assert answer(site, "/sitemap-feed-4.xml").status == 404
    feed.items.extend((url(5_000 + i), DAY0) for i in range(600))
    assert answer(site, "/sitemap-feed-4.xml").status == 200


@pytest.mark.parametrize("change", ["append", "remove", "edit"])
def test_a_document_of_one_chunk_is_never_cut(change: str) -> None:
    # Under 32 KiB the whole document is one chunk, checked before it is sent.
    feed = Feed(25)
    site = site_for(feed, page_size=10)
    old = answer(site, "/sitemap-feed-3.xml")
    if change == "append":
        feed.items.append((url(25), DAY0))
    elif change == "remove":
        feed.items.pop()
    else:
        feed.items[24] = (url(24), DAY0)
    new = answer(site, "/sitemap-feed-3.xml")
    assert new.error is None and new.headers["ETag"] != old.headers["ETag"]
    assert locs(new.body) == [loc for loc, _ in feed.items[20:]]


def test_conditional_requests_and_head_never_answer_from_stale_memory() -> None:
    feed = Feed(1_000)
    site = site_for(feed)
    first = answer(site)
    etag = first.headers["ETag"]
    unchanged = answer(site, headers={**IDENTITY, "if-none-match": etag})
    assert unchanged.status == 304
    feed.items[900] = (url(900), date(2023, 6, 1))  # an older date: newest stays
    head = answer(site, method="HEAD")
    assert head.status == 200 and head.headers["ETag"] != etag and head.body == b""
    changed = answer(site, headers={**IDENTITY, "if-none-match": etag})
    assert changed.status == 200 and changed.error is None
    assert changed.headers["ETag"] == head.headers["ETag"]
    assert locs(changed.body) == [loc for loc, _ in feed.items]
    modified = answer(
        site, headers={**IDENTITY, "if-modified-since": first.headers["Last-Modified"]}
    )
    assert modified.status == 304  # the newest date did not move: as for any Last-Modified


def test_the_memory_is_bounded() -> None:
    recall = Recall(size=3)
    item = Recalled({"a": 1}, b"d", None, None, b"f")
    for key in "abcde":
        recall.put(key, item)
    assert len(recall) == 3
    assert recall.get("a") is None and recall.get("e") == item


# -- the property the issue asks for ----------------------------------------------------

edits = st.lists(
    st.tuples(
        st.sampled_from(["append", "remove", "edit", "none"]),
        st.integers(min_value=0, max_value=10_000),
    ),
    max_size=6,
)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=700),
    steps=edits,
    page_size=st.sampled_from([50_000, 300]),
    path=st.sampled_from(["/sitemap.xml", "/sitemap.txt", "/sitemap-feed-1.xml"]),
    coding=st.sampled_from(["identity", "gzip"]),
)
def test_every_complete_answer_is_what_a_fresh_worker_gives_for_the_same_data(
    n: int, steps: list[tuple[str, int]], page_size: int, path: str, coding: str
) -> None:
    feed = Feed(n)
    site = site_for(feed, page_size)
    headers = {"accept-encoding": coding}
    seen: dict[str, bytes] = {}
    for change, where in [("none", 0), *steps]:
        if change == "append":
            feed.items.append((url(10_000 + where), DAY0 + timedelta(days=where % 97)))
        elif change == "remove" and len(feed.items) > 1:
            feed.items.pop(where % len(feed.items))
        elif change == "edit":
            index = where % len(feed.items)
            feed.items[index] = (feed.items[index][0], DAY0 + timedelta(days=30 + where % 600))
        for _ in range(2):
            got = answer(site, path, headers=headers)
            fresh = answer(site_for(feed, page_size), path, headers=headers)  # another worker
            if got.error is not None:
                # Cut only when its validators were no longer the document's, and
                # before the end of the document.
                assert (got.headers["ETag"], got.headers.get("Last-Modified")) != (
                    fresh.headers.get("ETag"),
                    fresh.headers.get("Last-Modified"),
                ) or got.status != fresh.status
                if coding == "identity" and not path.endswith(".txt"):
                    assert b"</urlset>" not in got.body
                continue
            assert got.status == fresh.status
            if got.status != 200:
                continue
            # Same data, same validators, in every worker; and the bytes they describe.
            assert got.headers["ETag"] == fresh.headers["ETag"]
            assert got.headers.get("Last-Modified") == fresh.headers.get("Last-Modified")
            assert got.text(coding) == fresh.text(coding)
            # Any change of the document's data changes its ETag.
            before = seen.get(got.headers["ETag"])
            assert before is None or before == got.text(coding)
            seen[got.headers["ETag"]] = got.text(coding)


def test_a_source_that_counted_nothing_is_never_remembered_away() -> None:
    # From review: a source with no entry has no slice in the plan, so no walk read it
    # again; its first entries went unseen, and /sitemap.xml (and its 304s) stayed stale.
    a, b = Feed(3), Feed(0)
    site = Site([UrlSource.from_object("a", a), UrlSource.from_object("b", b)], page_size=10)
    first = answer(site)
    etag = first.headers["ETag"]
    b.items = [(url(100 + i), DAY0) for i in range(50)]  # b grows past one page
    head = answer(site, method="HEAD")
    assert head.headers["ETag"] != etag
    assert answer(site, headers={**IDENTITY, "if-none-match": etag}).status == 200
    grown = answer(site)
    assert grown.error is None
    assert b"<sitemapindex" in grown.body  # 53 URLs at 10 a page: an index now
