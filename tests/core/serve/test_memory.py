"""Streaming: serving a page holds a chunk and a batch, never all entries or the document.

Entries come from a generator function, built one by one as they are pulled, so the only
way the peak could grow with the page is the library keeping them (or the text) around.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Iterator

import pytest
from xsd import validate

from sitemap_core import Entry, UrlSource, respond
from sitemap_core.serve.site import Site
from sitemap_core.serve.spool import SPOOL_MEMORY
from tests.core.helpers import BASE, locs

SMALL = 5_000
LARGE = 50_000


def _lazy_source(n: int, *, counted: bool = False, fingerprinted: bool = True) -> UrlSource:
    def articles() -> Iterator[Entry]:
        for i in range(n):
            yield Entry(
                f"https://example.com/articles/{i}/a-readable-slug-for-this-article",
                lastmod="2024-03-10T12:00:00+02:00",
                changefreq="weekly",
                priority=0.5,
            )

    # count= spares walking the generator once more (it would be as lazy, only slower);
    # a fingerprint lets the page stream (without one it is spooled to learn its ETag)
    return UrlSource.from_object(
        "articles",
        articles,
        count=(lambda: n) if counted else None,
        fingerprint=(lambda: ("articles", n)) if fingerprinted else None,
    )


def _stream(
    n: int,
    path: str = "/sitemap.xml",
    page_size: int = LARGE,
    *,
    counted: bool = False,
    fingerprinted: bool = True,
) -> tuple[int, int, int]:
    """Serve ``path`` of a site of ``n`` lazy entries; return (peak, bytes, chunks).

    Chunks are measured and dropped as they come, as a server writing to a socket does.
    """
    site = Site(
        [_lazy_source(n, counted=counted, fingerprinted=fingerprinted)], page_size=page_size
    )
    gc.collect()
    tracemalloc.start()
    try:
        baseline, _ = tracemalloc.get_traced_memory()
        reply = respond(site, "GET", path, lambda: BASE)
        assert reply is not None and reply.status == 200
        size = chunks = 0
        for chunk in reply.body:  # type: ignore[union-attr]
            size += len(chunk)
            chunks += 1
        del chunk
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - baseline, size, chunks


@pytest.fixture(scope="module")
def measured() -> dict[int, tuple[int, int, int]]:
    return {n: _stream(n) for n in (SMALL, LARGE)}


def test_peak_is_far_below_the_document_size(measured: dict[int, tuple[int, int, int]]) -> None:
    peak, size, chunks = measured[LARGE]
    assert size > 5_000_000  # a realistic 50,000-URL page
    assert chunks > 50  # it really streamed
    assert peak < size / 10, f"peak {peak} bytes for a {size}-byte document"


def test_peak_does_not_grow_with_the_entry_count(
    measured: dict[int, tuple[int, int, int]],
) -> None:
    small_peak, small_size, _ = measured[SMALL]
    large_peak, large_size, _ = measured[LARGE]
    assert large_size > 9 * small_size
    # ten times the entries; a linear peak would be ~10x, streaming stays flat
    assert large_peak < 2 * small_peak + 64 * 1024, (small_peak, large_peak)


def test_a_later_page_of_a_generator_also_streams() -> None:
    # page 2 skips the first 20,000 entries lazily and streams the next 20,000
    peak, size, _ = _stream(40_000, "/sitemap-articles-2.xml", page_size=20_000, counted=True)
    assert size > 3_000_000
    assert peak < size / 8, f"peak {peak} bytes for a {size}-byte page"


def test_a_page_without_fingerprint_is_spooled_in_bounded_memory() -> None:
    # Without a fingerprint the page is rendered before the first byte (its ETag needs
    # the bytes): memory then holds at most the spool's in-memory part, not the page.
    peak, size, _ = _stream(LARGE, fingerprinted=False)
    assert size > 5_000_000
    assert peak < SPOOL_MEMORY + 400_000, f"peak {peak} bytes for a {size}-byte page"


def test_streamed_document_is_complete_and_valid() -> None:
    site = Site([_lazy_source(SMALL)], page_size=LARGE)
    reply = respond(site, "GET", "/sitemap.xml", lambda: BASE)
    assert reply is not None
    body = b"".join(reply.body)  # type: ignore[arg-type]
    validate(body, profile="core")
    got = locs(body)
    assert len(got) == SMALL
    assert got[0] == "https://example.com/articles/0/a-readable-slug-for-this-article"
    assert got[-1].startswith(f"https://example.com/articles/{SMALL - 1}/")
