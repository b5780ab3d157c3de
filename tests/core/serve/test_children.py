"""The index's children streamed from stable pages (sitemap_core.serve.children)."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Iterable, Iterator
from typing import Any

import anyio
import pytest
from xsd import validate

from sitemap_core import ConfigurationError, Site, UrlSource, respond
from sitemap_core.serve.drive_async import respond_async
from sitemap_core.sources.aio import AsyncUrlSource
from tests.core.helpers import BASE, ORIGIN, SM, get, locs, parse, url
from tests.core.memory.test_cache import InlineRunner
from tests.core.stable_fakes import AsyncStablePages, StablePages


def site_of(*sources: tuple[str, Any], page_size: int = 1, **settings: Any) -> Site:
    return Site(
        [UrlSource.from_object(name, obj) for name, obj in sources],
        page_size=page_size,
        **settings,
    )


def children(body: bytes) -> list[tuple[str, str | None]]:
    """The index's children: (loc, lastmod), in order."""
    return [
        (str(child.findtext("sm:loc", namespaces=SM)), child.findtext("sm:lastmod", namespaces=SM))
        for child in parse(body).iterfind("sm:sitemap", SM)
    ]


def page_urls(name: str, numbers: Iterable[int]) -> list[str]:
    return [f"{ORIGIN}/sitemap-{name}-{number}.xml" for number in numbers]


@pytest.mark.parametrize("summary", [True, False], ids=["summary", "walked"])
def test_the_index_lists_every_stable_page_in_order(summary: bool) -> None:
    fake = StablePages(2_500, summary=summary)
    got = get(site_of(("posts", fake)), "/sitemap.xml")
    assert got is not None and got.status == 200
    validate(got.body)
    listed = children(got.body)
    assert [loc for loc, _ in listed] == page_urls("posts", range(1, 2_501))
    assert [lastmod for _, lastmod in listed] == [
        fake.page(n).lastmod.isoformat() for n in range(1, 2_501)
    ]
    # Last-Modified is the newest child's.
    assert got.header("Last-Modified") == "Mon, 03 Feb 2025 00:00:00 GMT"


def test_a_summary_and_a_walk_give_the_same_document_and_validators() -> None:
    summed = get(site_of(("posts", StablePages(700))), "/sitemap.xml")
    walked = get(site_of(("posts", StablePages(700, summary=False))), "/sitemap.xml")
    assert summed is not None and walked is not None
    assert summed.body == walked.body
    assert summed.header("ETag") == walked.header("ETag")
    assert summed.header("Last-Modified") == walked.header("Last-Modified")


def test_an_out_of_order_page_mid_stream_cuts_the_transfer() -> None:
    fake = StablePages(5_000, bad_at=4_000)
    reply = respond(site_of(("posts", fake)), "GET", "/sitemap.xml", lambda: BASE)
    assert reply is not None and reply.status == 200
    body: Iterator[bytes] = iter(reply.body)  # type: ignore[arg-type]
    sent = [next(body)]
    with pytest.raises(ConfigurationError, match=r"'posts'.*out of order"):
        sent.extend(body)
    document = b"".join(sent)
    assert document.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex')
    assert b"</sitemapindex>" not in document
    assert fake.pulled < 5_000  # the error stopped the reading


def test_an_out_of_order_page_before_the_first_byte_fails_the_request() -> None:
    with pytest.raises(ConfigurationError, match=r"'posts'.*out of order"):
        served = site_of(("posts", StablePages(5_000, bad_at=3)))
        respond(served, "GET", "/sitemap.xml", lambda: BASE)


def test_over_http_10_a_failure_anywhere_is_the_request_s() -> None:
    # No chunked coding: the body is written whole before its first byte.
    with pytest.raises(ConfigurationError, match="out of order"):
        respond(
            site_of(("posts", StablePages(5_000, bad_at=4_000))),
            "GET",
            "/sitemap.xml",
            lambda: BASE,
            protocol="HTTP/1.0",
        )


def test_a_page_over_its_window_is_refused_mid_stream() -> None:
    class Overfull(StablePages):
        def page(self, number: int) -> Any:
            page = super().page(number)
            return page._replace(urls=2) if number == 3_000 else page

    reply = respond(site_of(("posts", Overfull(4_000))), "GET", "/sitemap.xml", lambda: BASE)
    assert reply is not None
    with pytest.raises(ConfigurationError, match="page 3000 of source 'posts' lists 2 URLs"):
        b"".join(reply.body)  # type: ignore[arg-type]


def _index_peak(pages: int) -> int:
    site = site_of(("posts", StablePages(pages)))
    gc.collect()
    tracemalloc.start()
    try:
        reply = respond(site, "GET", "/sitemap.xml", lambda: BASE)
        assert reply is not None and reply.status == 200
        size = sum(len(chunk) for chunk in reply.body)  # type: ignore[union-attr]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert size > pages * 60
    return peak


def test_the_memory_of_an_index_does_not_grow_with_its_pages() -> None:
    _index_peak(2_000)  # warm: what a first request builds once (regexes, caches)
    small, big = _index_peak(2_000), _index_peak(20_000)
    # Ten times the pages: the same batches and chunks in flight (a list of the pages
    # would add some 3 MiB).
    assert big <= small * 1.3 + 64 * 1024, (small, big)


def test_children_keep_the_order_of_the_sources_around_a_stable_one() -> None:
    before = [url(i, "before") for i in range(3)]
    after = [url(i, "after") for i in range(2)]
    served = site_of(("before", before), ("posts", StablePages(4)), ("after", after))
    got = get(served, "/sitemap.xml")
    assert got is not None and got.status == 200
    assert locs(got.body) == [
        *page_urls("before", range(1, 4)),
        *page_urls("posts", range(1, 5)),
        *page_urls("after", range(1, 3)),
    ]


def test_a_split_index_streams_its_part_of_the_stable_pages() -> None:
    after = [url(i, "after") for i in range(3)]
    served = site_of(("posts", StablePages(25)), ("after", after), index_size=10)
    robots = get(served, "/robots.txt")
    assert robots is not None
    assert robots.body.decode().count("Sitemap:") == 3
    parts = []
    for path in ("/sitemap.xml", "/sitemap-index-2.xml", "/sitemap-index-3.xml"):
        got = get(served, path)
        assert got is not None and got.status == 200, path
        validate(got.body)
        parts.append(locs(got.body))
    assert [len(part) for part in parts] == [10, 10, 8]
    listed = [loc for part in parts for loc in part]
    assert listed == [*page_urls("posts", range(1, 26)), *page_urls("after", range(1, 4))]
    missing = get(served, "/sitemap-index-4.xml")
    assert missing is not None and missing.status == 404


def test_the_html_view_of_the_index_streams_too() -> None:
    got = get(site_of(("posts", StablePages(30))), "/sitemap.html")
    assert got is not None and got.status == 200
    text = got.body.decode()
    assert "30 sitemaps listing 30 URLs" in text
    assert "sitemap-posts-30.html" in text


def test_a_write_renews_the_index_etag_and_no_process_differs() -> None:
    first, again = StablePages(40), StablePages(40)
    etags = [
        get(site_of(("posts", fake)), "/sitemap.xml").header("ETag")  # type: ignore[union-attr]
        for fake in (first, again)
    ]
    assert etags[0] == etags[1]
    grown = get(site_of(("posts", StablePages(41))), "/sitemap.xml")
    assert grown is not None and grown.header("ETag") != etags[0]


def _async_get(source: AsyncStablePages, path: str = "/sitemap.xml") -> tuple[int, bytes]:
    site = Site([AsyncUrlSource.from_object("posts", source)], page_size=1)

    async def run() -> tuple[int, bytes]:
        reply = await respond_async(site, "GET", path, lambda: BASE, InlineRunner())
        assert reply is not None
        return reply.status, b"".join([chunk async for chunk in reply.body])  # type: ignore[union-attr]

    return anyio.run(run)


def test_an_async_source_streams_its_index_from_an_async_iterator() -> None:
    status, body = _async_get(AsyncStablePages(1_500))
    assert status == 200
    validate(body)
    assert locs(body) == page_urls("posts", range(1, 1_501))
    sync = get(site_of(("posts", StablePages(1_500))), "/sitemap.xml")
    assert sync is not None and body == sync.body


def test_an_async_source_out_of_order_mid_stream_cuts_the_transfer() -> None:
    with pytest.raises(ConfigurationError, match="out of order"):
        _async_get(AsyncStablePages(5_000, bad_at=4_000))
