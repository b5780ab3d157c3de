"""Every document the example blog serves, fetched over HTTP from a real gunicorn.

Checks the bytes on the wire: schema validity, Content-Type, streaming (chunked, no
Content-Length), HEAD, methods, unknown pages, forged hosts, and the lastmod values
against the database the server reads.
"""

from __future__ import annotations

import random
import socket
import sqlite3
from collections.abc import Callable
from contextlib import closing
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from lxml import etree
from xsd import validate

from .servers import (
    PAGE_SIZE,
    POST_COUNT,
    POST_PAGES,
    GunicornServer,
    page_urls,
    post_urls,
)

NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
XML = "application/xml; charset=utf-8"
TEXT = "text/plain; charset=utf-8"

XML_PAGES = ["/sitemap-pages-1.xml", *(f"/sitemap-posts-{n}.xml" for n in POST_PAGES)]
TEXT_PAGES = ["/sitemap-pages-1.txt", *(f"/sitemap-posts-{n}.txt" for n in POST_PAGES)]
#: Every document the example serves, robots.txt first.
DOCUMENTS = ["/robots.txt", "/sitemap.xml", *XML_PAGES, *TEXT_PAGES]
#: The documents of 50,000 / 20,000 entries (several MB): these must be streamed.
BIG_PAGES = [p for p in XML_PAGES + TEXT_PAGES if "posts" in p]

Fetch = Callable[[str], httpx.Response]


@pytest.fixture(scope="module")
def fetch(blog_server: GunicornServer, http: httpx.Client) -> Fetch:
    """GET a path once per module (the post pages are 5 MB each) and keep the response."""
    cache: dict[str, httpx.Response] = {}

    def get(path: str) -> httpx.Response:
        if path not in cache:
            cache[path] = http.get(blog_server.url(path))
        return cache[path]

    return get


def _locs(body: bytes) -> list[str]:
    root = etree.fromstring(body)
    return [loc.text or "" for loc in root.iterfind("sm:*/sm:loc", NS)]


def _expected_locs(base: str, path: str) -> list[str]:
    """The URLs a child page must list, in order."""
    if "pages" in path:
        return page_urls(base)
    number = int(path.rsplit("-", 1)[1].split(".")[0])
    start = (number - 1) * PAGE_SIZE + 1
    return post_urls(base, start, min(start + PAGE_SIZE, POST_COUNT + 1))


# GET -----------------------------------------------------------------------------------


def test_robots_txt_declares_the_index(fetch: Fetch, blog_server: GunicornServer) -> None:
    response = fetch("/robots.txt")
    assert response.status_code == 200
    assert response.headers["content-type"] == TEXT
    lines = response.text.splitlines()
    assert [line for line in lines if line.lower().startswith("sitemap:")] == [
        f"Sitemap: {blog_server.base_url}/sitemap.xml"
    ]
    assert "User-agent: *" in lines


def test_index_lists_the_four_children(fetch: Fetch, blog_server: GunicornServer) -> None:
    response = fetch("/sitemap.xml")
    assert response.status_code == 200
    assert response.headers["content-type"] == XML
    validate(response.content)
    assert etree.fromstring(response.content).tag == f"{{{NS['sm']}}}sitemapindex"
    assert _locs(response.content) == [blog_server.url(p) for p in XML_PAGES]


@pytest.mark.parametrize("path", XML_PAGES)
def test_xml_page_is_valid_and_complete(
    fetch: Fetch, blog_server: GunicornServer, path: str
) -> None:
    response = fetch(path)
    assert response.status_code == 200
    assert response.headers["content-type"] == XML
    validate(response.content)
    assert etree.fromstring(response.content).tag == f"{{{NS['sm']}}}urlset"
    assert _locs(response.content) == _expected_locs(blog_server.base_url, path)


@pytest.mark.parametrize("path", TEXT_PAGES)
def test_text_page_lists_the_same_urls(
    fetch: Fetch, blog_server: GunicornServer, path: str
) -> None:
    response = fetch(path)
    assert response.status_code == 200
    assert response.headers["content-type"] == TEXT
    assert response.content.endswith(b"\n")
    assert response.text.splitlines() == _expected_locs(blog_server.base_url, path)
    assert response.text.splitlines() == _locs(fetch(path.replace(".txt", ".xml")).content)


def test_root_text_sitemap_is_404_when_an_index_is_needed(fetch: Fetch) -> None:
    # Documented: a text sitemap has no index form, so /sitemap.txt exists only while
    # the whole site fits one page. The example (120,011 URLs) does not.
    assert fetch("/sitemap.txt").status_code == 404


@pytest.mark.parametrize("path", BIG_PAGES)
def test_big_pages_are_streamed(fetch: Fetch, path: str) -> None:
    response = fetch(path)
    assert response.status_code == 200
    assert response.http_version == "HTTP/1.1"
    assert "content-length" not in response.headers
    assert response.headers.get("transfer-encoding") == "chunked"
    assert len(response.content) > 500_000  # really a big document (the smallest: 720 kB)


# HEAD ----------------------------------------------------------------------------------

# Framing and per-response headers legitimately differ between HEAD and GET: gunicorn
# sends no chunked framing when there is no body to frame.
_VOLATILE = {"date", "transfer-encoding"}


@pytest.mark.parametrize("path", DOCUMENTS)
def test_head_has_the_get_headers_and_no_body(
    fetch: Fetch, blog_server: GunicornServer, http: httpx.Client, path: str
) -> None:
    get = fetch(path)
    head = http.head(blog_server.url(path))
    assert head.status_code == get.status_code == 200
    assert head.content == b""

    def comparable(response: httpx.Response) -> dict[str, str]:
        return {k: v for k, v in response.headers.items() if k.lower() not in _VOLATILE}

    assert comparable(head) == comparable(get)


# Methods and unknown paths ---------------------------------------------------------------


@pytest.mark.parametrize("path", DOCUMENTS)
def test_post_is_405(blog_server: GunicornServer, http: httpx.Client, path: str) -> None:
    response = http.post(blog_server.url(path), content=b"x")
    assert response.status_code == 405, response.text[:200]
    allowed = {m.strip() for m in response.headers.get("allow", "").split(",")}
    assert {"GET", "HEAD"} <= allowed


@pytest.mark.parametrize(
    "path",
    [
        "/sitemap-posts-4.xml",
        "/sitemap-posts-0.xml",
        "/sitemap-posts-abc.xml",
        "/sitemap-posts-4.txt",
        "/sitemap-posts-01.xml",
        "/sitemap-posts--1.xml",
        "/sitemap-posts-99999999999999999999999.xml",
        "/sitemap-pages-2.xml",
        "/sitemap-nope-1.xml",
        "/sitemap-posts.xml",
    ],
)
def test_unknown_pages_are_404(blog_server: GunicornServer, http: httpx.Client, path: str) -> None:
    assert http.get(blog_server.url(path)).status_code == 404
    head = http.head(blog_server.url(path))
    assert head.status_code == 404
    assert head.content == b""


# Forged hosts --------------------------------------------------------------------------

EVIL = "evil.example"
FORGED_HOSTS = [EVIL, f"{EVIL}:8080", f"127.0.0.1.{EVIL}", f"localhost.{EVIL}"]


@pytest.mark.parametrize("method", ["GET", "HEAD"])
@pytest.mark.parametrize("host", FORGED_HOSTS)
def test_forged_host_is_400_for_every_document(
    blog_server: GunicornServer, http: httpx.Client, host: str, method: str
) -> None:
    for path in DOCUMENTS:
        response = http.request(method, blog_server.url(path), headers={"Host": host})
        assert response.status_code == 400, (path, response.text[:200])
        assert response.headers["content-type"] == TEXT
        for name, value in response.headers.items():
            assert EVIL not in value, (path, name, value)
        assert b"<url" not in response.content
        assert b"Sitemap:" not in response.content


def test_forged_host_is_not_echoed_in_the_400_body(
    blog_server: GunicornServer, http: httpx.Client
) -> None:
    for path in DOCUMENTS:
        response = http.get(blog_server.url(path), headers={"Host": EVIL})
        assert response.status_code == 400
        assert EVIL not in response.text, (path, response.text)


def _raw_get(server: GunicornServer, request: str) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(request.encode("ascii"))
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data


def test_other_ways_of_naming_a_host_do_not_leak(
    blog_server: GunicornServer, http: httpx.Client
) -> None:
    own_host = f"127.0.0.1:{blog_server.port}"
    # Absolute-form request target naming another authority than the Host header.
    raw = _raw_get(
        blog_server,
        f"GET http://{EVIL}/sitemap.xml HTTP/1.1\r\nHost: {own_host}\r\nConnection: close\r\n\r\n",
    )
    assert raw.startswith((b"HTTP/1.1 200 ", b"HTTP/1.1 400 ")), raw[:200]
    assert EVIL.encode() not in raw
    # Proxy headers nobody configured the app to trust.
    for header in ("X-Forwarded-Host", "Forwarded", "X-Host", "X-Original-Host"):
        value = f"host={EVIL}" if header == "Forwarded" else EVIL
        for path in ("/robots.txt", "/sitemap.xml", "/sitemap-pages-1.xml"):
            response = http.get(blog_server.url(path), headers={header: value})
            assert response.status_code == 200, (header, path)
            assert EVIL not in response.text, (header, path)
    # And the forged requests changed nothing for the next honest client (no caching).
    index = http.get(blog_server.url("/sitemap.xml"))
    assert EVIL not in index.text
    assert _locs(index.content)[0] == blog_server.url("/sitemap-pages-1.xml")


# lastmod -------------------------------------------------------------------------------


def test_lastmod_has_a_timezone_and_matches_the_database(fetch: Fetch, blog_database: Path) -> None:
    lastmods: dict[int, str] = {}
    for number in POST_PAGES:
        root = etree.fromstring(fetch(f"/sitemap-posts-{number}.xml").content)
        for url in root.iterfind("sm:url", NS):
            loc = url.findtext("sm:loc", namespaces=NS)
            lastmod = url.findtext("sm:lastmod", namespaces=NS)
            assert loc is not None
            assert lastmod is not None, f"{loc} has no lastmod"
            lastmods[int(loc.rsplit("/", 1)[1])] = lastmod
    assert sorted(lastmods) == list(range(1, POST_COUNT + 1))

    # Every value is a W3C datetime with an explicit offset (a date-time without one
    # means "local time of the server", which a crawler cannot know).
    for post_id, text in lastmods.items():
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
        assert "T" in text, (post_id, text)
        assert stamp.tzinfo is not None, (post_id, text)

    rng = random.Random(20_240_601)
    boundaries = [1, 2, PAGE_SIZE, PAGE_SIZE + 1, 2 * PAGE_SIZE, 2 * PAGE_SIZE + 1, POST_COUNT]
    sample = sorted({*boundaries, *rng.sample(range(1, POST_COUNT + 1), 500)})
    with closing(sqlite3.connect(f"file:{blog_database}?mode=ro", uri=True)) as db:
        marks = ",".join("?" * len(sample))
        rows = dict(db.execute(f"SELECT id, updated_at FROM posts WHERE id IN ({marks})", sample))
    assert sorted(rows) == sample
    for post_id in sample:
        served = datetime.fromisoformat(lastmods[post_id].replace("Z", "+00:00"))
        stored = datetime.fromisoformat(rows[post_id])
        assert served == stored, (post_id, lastmods[post_id], rows[post_id])
        assert served.utcoffset() == stored.utcoffset(), (post_id, lastmods[post_id])
