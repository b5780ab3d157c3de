"""Tests of the sitemap-consumer adapters in ``crawlers.py``.

The adapters are pointed at a tiny ``http.server`` on 127.0.0.1 that serves
hand-written files, so every expected URL below is known exactly.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from crawlers import scrapy_page_urls, usp_page_urls  # tests/ is on sys.path under pytest

Adapter = Callable[[str], list[str]]
ADAPTERS = pytest.mark.parametrize(
    "page_urls", [usp_page_urls, scrapy_page_urls], ids=["usp", "scrapy"]
)

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


@dataclass
class Site:
    """Files served by :class:`_Handler`: path -> (Content-Type, body).

    Unknown paths answer 404; ``status`` overrides the status of a path.
    """

    base: str = ""
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    status: dict[str, int] = field(default_factory=dict)
    headers: dict[str, dict[str, str]] = field(default_factory=dict)
    requested: list[str] = field(default_factory=list)

    def put(self, path: str, text: str, content_type: str = "application/xml") -> None:
        """Serve *text* (``{base}`` replaced by the server's base URL) at *path*."""
        self.files[path] = (content_type, text.replace("{base}", self.base).encode())

    def put_gzip(self, path: str, text: str) -> None:
        """Serve *text* gzip-compressed as a file (not as a Content-Encoding)."""
        body = gzip.compress(text.replace("{base}", self.base).encode())
        self.files[path] = ("application/gzip", body)


class _Handler(BaseHTTPRequestHandler):
    site: Site

    def do_GET(self) -> None:
        self.site.requested.append(self.path)
        content_type, body = self.site.files.get(self.path, ("text/plain", b""))
        default_status = 200 if self.path in self.site.files else 404
        self.send_response(self.site.status.get(self.path, default_status))
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in self.site.headers.get(self.path, {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[Site]:
    """A running server with a robots.txt -> index -> two urlsets layout."""
    served = Site()
    handler = type("Handler", (_Handler,), {"site": served})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    served.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()

    served.put(
        "/robots.txt",
        "User-agent: *\nDisallow: /private/\n\nSitemap: {base}/sitemap_index.xml\n",
        "text/plain",
    )
    served.put(
        "/sitemap_index.xml",
        f"""<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex {NS}>
  <sitemap><loc>{{base}}/sitemaps/pages-1.xml</loc></sitemap>
  <sitemap><loc>{{base}}/sitemaps/pages-2.xml.gz</loc><lastmod>2024-05-01</lastmod></sitemap>
</sitemapindex>
""",
    )
    served.put(
        "/sitemaps/pages-1.xml",
        f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset {NS}>
  <url><loc>{{base}}/</loc><priority>1.0</priority></url>
  <url><loc>{{base}}/about</loc></url>
  <url><loc>{{base}}/search?q=sitemaps&amp;page=2</loc></url>
</urlset>
""",
    )
    served.put_gzip(
        "/sitemaps/pages-2.xml.gz",
        f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset {NS}>
  <url><loc>{{base}}/blog/1</loc><lastmod>2024-05-01T10:00:00+00:00</lastmod></url>
  <url>
    <loc>
      {{base}}/caf%C3%A9
    </loc>
  </url>
</urlset>
""",
    )
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def expected(site: Site) -> list[str]:
    return [
        f"{site.base}/",
        f"{site.base}/about",
        f"{site.base}/search?q=sitemaps&page=2",
        f"{site.base}/blog/1",
        f"{site.base}/caf%C3%A9",
    ]


# ------------------------------------------------------------------ happy path


@ADAPTERS
def test_finds_every_url_through_robots_index_and_gzip(site: Site, page_urls: Adapter) -> None:
    started = time.perf_counter()
    urls = page_urls(site.base)
    elapsed = time.perf_counter() - started

    # Exact list equality: fails on an empty list, a missing child, an
    # un-decoded "&amp;" or stray whitespace around a <loc>.
    assert urls == expected(site)
    assert elapsed < 5, f"took {elapsed:.2f}s"
    assert site.requested == [
        "/robots.txt",
        "/sitemap_index.xml",
        "/sitemaps/pages-1.xml",
        "/sitemaps/pages-2.xml.gz",
    ]


@ADAPTERS
@pytest.mark.parametrize("suffix", ["/", "/some/page?x=1"])
def test_any_url_on_the_site_works_as_homepage(site: Site, page_urls: Adapter, suffix: str) -> None:
    assert page_urls(site.base + suffix) == expected(site)


@ADAPTERS
def test_content_encoding_gzip_is_decoded(site: Site, page_urls: Adapter) -> None:
    """An .xml sitemap compressed on the fly (e.g. by a GZip middleware)."""
    content_type, body = site.files["/sitemaps/pages-1.xml"]
    site.files["/sitemaps/pages-1.xml"] = (content_type, gzip.compress(body))
    site.headers["/sitemaps/pages-1.xml"] = {"Content-Encoding": "gzip"}
    assert page_urls(site.base) == expected(site)


@ADAPTERS
def test_duplicates_across_sitemaps_are_kept(site: Site, page_urls: Adapter) -> None:
    site.put(
        "/sitemaps/pages-1.xml",
        f"<urlset {NS}><url><loc>{{base}}/blog/1</loc></url></urlset>",
    )
    assert page_urls(site.base) == [f"{site.base}/blog/1"] * 2 + [f"{site.base}/caf%C3%A9"]


def test_duplicates_within_one_urlset(site: Site) -> None:
    site.put(
        "/sitemaps/pages-1.xml",
        f"<urlset {NS}><url><loc>{{base}}/a</loc></url><url><loc>{{base}}/a</loc></url></urlset>",
    )
    tail = [f"{site.base}/blog/1", f"{site.base}/caf%C3%A9"]
    assert scrapy_page_urls(site.base) == [f"{site.base}/a"] * 2 + tail
    # usp silently keeps only the first of repeated <loc>s within one urlset.
    assert usp_page_urls(site.base) == [f"{site.base}/a", *tail]


def test_usp_html_unescapes_locs_a_second_time(site: Site) -> None:
    """usp runs html.unescape() over the already XML-decoded <loc>.

    "&region" and friends (HTML entities that need no ";") get mangled, so
    such query strings cannot be compared verbatim with usp's output.
    """
    site.put(
        "/sitemaps/pages-1.xml",
        f"<urlset {NS}><url><loc>{{base}}/s?a=1&amp;region=eu</loc></url></urlset>",
    )
    assert scrapy_page_urls(site.base)[0] == f"{site.base}/s?a=1&region=eu"
    assert usp_page_urls(site.base)[0] == f"{site.base}/s?a=1\N{REGISTERED SIGN}ion=eu"


def test_usp_known_paths_are_probed_only_when_asked(site: Site) -> None:
    usp_page_urls(site.base)
    assert len(site.requested) == 4

    site.requested.clear()
    assert usp_page_urls(site.base, use_known_paths=True) == expected(site)
    probes = set(site.requested) - {
        "/robots.txt",
        "/sitemap_index.xml",
        "/sitemaps/pages-1.xml",
        "/sitemaps/pages-2.xml.gz",
    }
    assert {"/sitemap.xml", "/sitemap.xml.gz", "/sitemap-index.xml"} <= probes
    # /sitemap_index.xml is listed in robots.txt, so it is not probed again.
    assert len(probes) == 13


# ------------------------------------------------------------------- failures

MALFORMED = {
    "truncated": f"<urlset {NS}><url><loc>{{base}}/blog/1</loc></url><url><loc>{{base}}/x",
    "mismatched-tag": f"<urlset {NS}><url><loc>{{base}}/blog/1</loc></url><url><loc>x</url>"
    "</urlset>",
    "html-page": "<html><body><h1>Not a sitemap</h1></body></html>",
    "not-xml": "oops, this is not XML at all\n",
    "empty": "",
}


@ADAPTERS
@pytest.mark.parametrize("body", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_child_raises(site: Site, page_urls: Adapter, body: str) -> None:
    site.put("/sitemaps/pages-1.xml", body)
    with pytest.raises(AssertionError, match=r"/sitemaps/pages-1\.xml"):
        page_urls(site.base)


@ADAPTERS
def test_corrupt_gzip_child_raises(site: Site, page_urls: Adapter) -> None:
    good = site.files["/sitemaps/pages-2.xml.gz"][1]
    site.files["/sitemaps/pages-2.xml.gz"] = ("application/gzip", good[: len(good) // 2])
    with pytest.raises(AssertionError, match="pages-2"):
        page_urls(site.base)


@ADAPTERS
@pytest.mark.parametrize("status", [404, 500])
def test_http_error_on_child_raises_quickly(site: Site, page_urls: Adapter, status: int) -> None:
    site.status["/sitemaps/pages-1.xml"] = status
    started = time.perf_counter()
    with pytest.raises(AssertionError, match=rf"pages-1\.xml.*{status}"):
        page_urls(site.base)
    # usp on its own would retry a 500 five times, sleeping a second each time.
    assert time.perf_counter() - started < 2


@ADAPTERS
def test_missing_robots_txt_raises(site: Site, page_urls: Adapter) -> None:
    del site.files["/robots.txt"]
    with pytest.raises(AssertionError, match=r"robots\.txt"):
        page_urls(site.base)


@ADAPTERS
def test_robots_txt_without_sitemap_lines_raises(site: Site, page_urls: Adapter) -> None:
    site.put("/robots.txt", "User-agent: *\nDisallow:\n", "text/plain")
    with pytest.raises(AssertionError, match="no Sitemap"):
        page_urls(site.base)


@ADAPTERS
def test_index_that_lists_itself_raises(site: Site, page_urls: Adapter) -> None:
    # usp turns the loop into an InvalidSitemap without logging a warning.
    site.put(
        "/sitemap_index.xml",
        f"<sitemapindex {NS}><sitemap><loc>{{base}}/sitemap_index.xml</loc></sitemap>"
        "</sitemapindex>",
    )
    with pytest.raises(AssertionError, match=r"sitemap_index\.xml"):
        page_urls(site.base)
