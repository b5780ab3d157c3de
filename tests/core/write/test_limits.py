"""The protocol's two limits per file: 50,000 entries and 52,428,800 bytes.

Pages are counted in entries, so their URLs stay stable and page N costs one slice;
a source whose entries can be large declares ``max_entry_bytes`` and its pages then
hold fewer entries, so no file can pass 50 MiB and no entry is dropped to get there.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sitemap_core import BaseURL, InvalidEntryError, Site, SitemapTooLargeError, UrlSource
from sitemap_core.limits import MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP
from sitemap_core.serve.drive_sync import respond
from sitemap_core.serve.site import DOCUMENT_OVERHEAD
from sitemap_core.sources.base import Limits

BASE = BaseURL.parse("https://example.com")


def long_urls(n: int, length: int = 2_000) -> list[str]:
    """``n`` distinct URLs of ``length`` characters (with '&' to escape, as worst cases)."""
    head = "https://example.com/"
    return [f"{head}{i:08d}?" + "a&" * ((length - len(head) - 9) // 2) for i in range(n)]


def fetch(site: Site[UrlSource], path: str) -> bytes:
    reply = respond(site, "GET", path, lambda: BASE)
    assert reply is not None and reply.status == 200, path
    return b"".join(reply.body)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "limits",
    [{"page_size": 0}, {"page_size": 50_001}, {"page_size": True}, {"max_entry_bytes": 10}],
)
def test_bad_limits_are_refused_at_registration(limits: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="must be between"):
        UrlSource.from_object("posts", [], **limits)  # type: ignore[arg-type]


def test_a_declared_entry_bound_sizes_the_pages() -> None:
    source = UrlSource.from_object("long", long_urls(3), max_entry_bytes=6_000)
    site = Site([source])
    expected = (MAX_SITEMAP_BYTES - DOCUMENT_OVERHEAD) // 6_000
    assert site.entries_per_page("long") == expected < MAX_URLS_PER_SITEMAP
    assert site.pages(expected + 1, "long") == 2
    # A source's own page size is a cap too, below the site's.
    small = UrlSource.from_object("small", ["https://example.com/a"], page_size=7)
    assert Site([small], page_size=100).entries_per_page("small") == 7
    assert Site([small], page_size=5).entries_per_page("small") == 5


def test_long_entries_are_split_into_pages_under_the_byte_limit_none_lost() -> None:
    # 30,000 URLs of 2,000 characters, half of them '&' (escaped to 5 bytes each), so
    # ~5,960 bytes per entry: one file would be ~179 MB. With the bound declared, every
    # page fits and together they list every URL exactly once.
    urls = long_urls(30_000)
    source = UrlSource.from_object(
        "long", urls, max_entry_bytes=6_000, fingerprint=lambda: ("long", len(urls))
    )
    site = Site([source])
    index = fetch(site, "/sitemap.xml")
    pages = site.pages(len(urls), "long")
    assert pages == 4  # 8,737 entries of at most 6,000 bytes per page
    assert index.count(b"<sitemap>") == pages
    seen: list[str] = []
    for number in range(1, pages + 1):
        body = fetch(site, f"/sitemap-long-{number}.xml")
        assert len(body) <= MAX_SITEMAP_BYTES
        assert body.count(b"<url>") <= MAX_URLS_PER_SITEMAP
        seen += [
            part.split(b"</loc>")[0].decode().replace("&amp;", "&")
            for part in body.split(b"<loc>")[1:]
        ]
    assert seen == urls  # in order, none dropped, none twice


def test_an_entry_over_its_declared_bound_is_an_error_naming_it() -> None:
    urls = ["https://example.com/short", *long_urls(1, 1_800)]
    source = UrlSource.from_object("long", urls, max_entry_bytes=1_024, fingerprint=lambda: 1)
    with pytest.raises(InvalidEntryError) as caught:
        fetch(Site([source]), "/sitemap.xml")
    assert caught.value.source == "long"
    assert caught.value.value == urls[1]
    assert "max_entry_bytes 1024" in str(caught.value)


def test_an_undeclared_page_over_50_mib_is_refused_not_written() -> None:
    # No bound declared, 30,000 huge entries in one page: the writer stops at the limit
    # with a typed error instead of producing an oversized file (before the first byte
    # here, since without a fingerprint the page is rendered to a spool first).
    def huge() -> Iterator[str]:
        yield from long_urls(30_000)

    site = Site([UrlSource.from_object("huge", huge, count=lambda: 30_000)])
    with pytest.raises(SitemapTooLargeError, match="52428800"):
        respond(site, "GET", "/sitemap-huge-1.xml", lambda: BASE)


def test_one_file_only_while_declared_bounds_fit() -> None:
    few = UrlSource.from_object("few", long_urls(10), max_entry_bytes=6_000)
    site = Site([few])
    assert b"<urlset" in fetch(site, "/sitemap.xml")
    # 20,000 entries of a declared 3,000 bytes cannot share one file: an index.
    many = UrlSource.from_object("many", long_urls(20_000, 100), max_entry_bytes=3_000)
    assert b"<sitemapindex" in fetch(Site([many]), "/sitemap.xml")


def test_limits_default_to_none() -> None:
    assert Limits() == Limits(None, None)
    assert UrlSource.from_object("x", []).limits == Limits()
