"""Every document each example serves, fetched over HTTP from its real server.

Checks the bytes on the wire, the same way for the Flask blog (gunicorn) and the
Starlette and FastAPI examples (uvicorn): schema validity, Content-Type, streaming
(chunked, no Content-Length, on a cache miss), HEAD, methods, unknown pages, forged
hosts, and the lastmod values against the database the server reads.

The servers are shared by every e2e module and cache rendered pages per worker, so a
GET here may be a cache hit (sent with Content-Length) as well as a miss (streamed).
Tests that need a miss name the document with a Host no one used (``fresh_host``).
"""

from __future__ import annotations

import random
import socket
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from lxml import etree
from xsd import validate

from .sites import PAGE_SIZE, SITES, ServedExample, each
from .wire import fresh_host, get_raw

NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
XML = "application/xml; charset=utf-8"
TEXT = "text/plain; charset=utf-8"

Fetch = Callable[[str], httpx.Response]


@pytest.fixture(scope="module")
def fetch(served: ServedExample, http: httpx.Client) -> Iterator[Fetch]:
    """GET a path once per site and module (pages are up to 5 MB) and keep the response."""
    cache: dict[str, httpx.Response] = {}

    def get(path: str) -> httpx.Response:
        if path not in cache:
            cache[path] = http.get(served.url(path))
        return cache[path]

    yield get
    cache.clear()  # before the next site's server starts


def _locs(body: bytes) -> list[str]:
    root = etree.fromstring(body)
    return [loc.text or "" for loc in root.iterfind("sm:*/sm:loc", NS)]


# GET -----------------------------------------------------------------------------------


def test_robots_txt_keeps_its_rules_and_declares_the_index(
    fetch: Fetch, served: ServedExample
) -> None:
    response = fetch("/robots.txt")
    assert response.status_code == 200
    assert response.headers["content-type"] == TEXT
    # The app's own file (or the default rules) byte for byte, then the Sitemap line.
    assert response.text.startswith(served.site.robots_text), response.text
    lines = response.text.splitlines()
    assert [line for line in lines if line.lower().startswith("sitemap:")] == [
        f"Sitemap: {served.base_url}/sitemap.xml",
        f"Sitemap: {served.base_url}/sitemap-recent.atom",  # the examples serve the feed
    ]
    assert "User-agent: *" in lines


def test_index_lists_every_child(fetch: Fetch, served: ServedExample) -> None:
    response = fetch("/sitemap.xml")
    assert response.status_code == 200
    assert response.headers["content-type"] == XML
    validate(response.content)
    assert etree.fromstring(response.content).tag == f"{{{NS['sm']}}}sitemapindex"
    assert _locs(response.content) == [served.url(p) for p in served.site.xml_pages]


@each(lambda site: site.xml_pages)
def test_xml_page_is_valid_and_complete(fetch: Fetch, served: ServedExample, path: str) -> None:
    response = fetch(path)
    assert response.status_code == 200
    assert response.headers["content-type"] == XML
    validate(response.content)
    assert etree.fromstring(response.content).tag == f"{{{NS['sm']}}}urlset"
    assert _locs(response.content) == served.expected_locs(path)


@each(lambda site: site.text_pages)
def test_text_page_lists_the_same_urls(fetch: Fetch, served: ServedExample, path: str) -> None:
    response = fetch(path)
    assert response.status_code == 200
    assert response.headers["content-type"] == TEXT
    assert response.content.endswith(b"\n")
    assert response.text.splitlines() == served.expected_locs(path)
    assert response.text.splitlines() == _locs(fetch(path.replace(".txt", ".xml")).content)


def test_root_text_sitemap_is_404_when_an_index_is_needed(fetch: Fetch) -> None:
    # Documented: a text sitemap has no index form, so /sitemap.txt exists only while
    # the whole site fits one page. No example does (60,008 URLs and more).
    assert fetch("/sitemap.txt").status_code == 404


def _streamed_cases() -> list[Any]:
    # Every big page as the document itself (identity), and the first item page gzipped
    # too: gzip must stream as well (sync-flushed per chunk), not be gathered first.
    cases: list[Any] = []
    for site in SITES:
        for path in site.big_pages:
            cases.append(pytest.param(site, path, "identity", id=f"{site.name}:{path}"))
        page = site.first_item_page
        cases.append(pytest.param(site, page, "gzip", id=f"{site.name}:{page}:gzip"))
    return cases


@pytest.mark.parametrize(
    ("example", "path", "coding"), _streamed_cases(), indirect=["example"], scope="session"
)
def test_big_pages_are_streamed(
    served: ServedExample, http: httpx.Client, path: str, coding: str
) -> None:
    # A Host no request used yet: the page is in no worker's cache, so the first GET
    # renders it, whatever the other tests fetched from this shared server before.
    url, headers = served.url(path), {"Host": fresh_host(), "Accept-Encoding": coding}
    first = get_raw(http, url, headers)
    assert first.status == 200
    assert first.http_version == "HTTP/1.1"
    assert first.streamed, first.headers
    assert first.headers.get("content-encoding") == (None if coding == "identity" else "gzip")
    # Really a big document: the smallest, 10,000 articles as text, is ~380 kB (gzipped,
    # 50,000 articles, ~330 kB).
    assert len(first.body) > 300_000

    # The miss stored the page: the same request is then a cache hit, sent whole with its
    # length, byte for byte what was streamed. Each worker has its own cache, so a request
    # may first land on a worker that has not rendered it yet (one more miss each).
    for _ in range(served.site.workers + 1):
        again = get_raw(http, url, headers)
        assert again.status == 200
        if not again.streamed:
            break
    assert again.sized, again.headers
    assert again.body == first.body
    assert again.headers["etag"] == first.headers["etag"]


# HEAD ----------------------------------------------------------------------------------

#: What describes the representation: HEAD must say exactly what GET says.
REPRESENTATION = (
    "content-type",
    "content-encoding",
    "etag",
    "last-modified",
    "cache-control",
    "vary",
)
# Framing and per-response headers legitimately differ between HEAD and GET: gunicorn
# sends no chunked framing when there is no body to frame. Content-Length is checked
# on its own below.
_VOLATILE = {"date", "transfer-encoding", "content-length"}


@each(lambda site: site.documents)
def test_head_has_the_get_headers_and_no_body(
    fetch: Fetch, served: ServedExample, http: httpx.Client, path: str
) -> None:
    get = fetch(path)  # httpx asks for gzip: both requests negotiate the same coding
    head = http.head(served.url(path))
    assert head.status_code == get.status_code == 200
    assert head.content == b""
    for name in REPRESENTATION:
        assert head.headers.get(name) == get.headers.get(name), name
    assert "etag" in head.headers

    def comparable(response: httpx.Response) -> dict[str, str]:
        return {k: v for k, v in response.headers.items() if k.lower() not in _VOLATILE}

    assert comparable(head) == comparable(get)

    sent = str(get.num_bytes_downloaded)  # the body as sent, still gzipped
    if path in served.site.sized_documents:
        # Validated by rendering: HEAD renders (checked) to learn its ETag, so it knows
        # and gives the length of what GET sends. GET has it too when it was rendered
        # whole (robots.txt, a worker's first render of a page); a later GET of a page
        # streams on the remembered validators (sitemap_core.memory.recall), chunked.
        assert head.headers.get("content-length") == sent
        if "content-length" in get.headers:
            assert get.headers["content-length"] == sent
        else:
            assert path != "/robots.txt"
            assert get.headers.get("transfer-encoding") == "chunked"
    else:
        # Known by fingerprint: HEAD is answered from the validators without rendering
        # (or reading the cache), so it has no length to give (RFC 9110 9.3.2 lets it
        # omit a field only known while generating the content). GET either streamed
        # (a miss) or came from the worker's cache with its length (a hit).
        assert "content-length" not in head.headers
        if "content-length" in get.headers:
            assert get.headers["content-length"] == sent
        else:
            assert get.headers.get("transfer-encoding") == "chunked"


# Methods and unknown paths ---------------------------------------------------------------


@each(lambda site: site.documents)
def test_post_is_405(served: ServedExample, http: httpx.Client, path: str) -> None:
    response = http.post(served.url(path), content=b"x")
    assert response.status_code == 405, response.text[:200]
    allowed = {m.strip() for m in response.headers.get("allow", "").split(",")}
    assert {"GET", "HEAD"} <= allowed


@each(lambda site: site.unknown_pages)
def test_unknown_pages_are_404(served: ServedExample, http: httpx.Client, path: str) -> None:
    assert http.get(served.url(path)).status_code == 404
    head = http.head(served.url(path))
    assert head.status_code == 404
    assert head.content == b""


# Forged hosts --------------------------------------------------------------------------

EVIL = "evil.example"
FORGED_HOSTS = [EVIL, f"{EVIL}:8080", f"127.0.0.1.{EVIL}", f"localhost.{EVIL}"]


@pytest.mark.parametrize("method", ["GET", "HEAD"])
@pytest.mark.parametrize("host", FORGED_HOSTS)
def test_forged_host_gets_no_document(
    served: ServedExample, http: httpx.Client, host: str, method: str
) -> None:
    for path in served.site.documents:
        response = http.request(method, served.url(path), headers={"Host": host})
        for name, value in response.headers.items():
            assert EVIL not in value, (path, name, value)
        assert b"<url" not in response.content
        assert b"Sitemap:" not in response.content
        if path == "/robots.txt" and served.site.own_robots:
            # Documented (both fronts): the app's own robots.txt is its business and is
            # served as it is; only the Sitemap line, which needs the host, is left out.
            assert response.status_code == 200, (path, response.text[:200])
            expected = b"" if method == "HEAD" else served.site.robots_text.encode()
            assert response.content == expected
            continue
        assert response.status_code == 400, (path, response.text[:200])
        assert response.headers["content-type"] == TEXT


def test_forged_host_is_not_echoed_in_the_400_body(
    served: ServedExample, http: httpx.Client
) -> None:
    for path in served.site.documents:
        response = http.get(served.url(path), headers={"Host": EVIL})
        own_file = path == "/robots.txt" and served.site.own_robots
        assert response.status_code == (200 if own_file else 400), path
        assert EVIL not in response.text, (path, response.text)


def _raw_get(served: ServedExample, request: str) -> bytes:
    port = int(served.base_url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request.encode("ascii"))
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data


def test_other_ways_of_naming_a_host_do_not_leak(served: ServedExample, http: httpx.Client) -> None:
    own_host = served.base_url.removeprefix("http://")
    # Absolute-form request target naming another authority than the Host header.
    # gunicorn serves the path; uvicorn passes the whole target on as the path, which
    # is then no sitemap path and the app answers 404. Either way, nothing of EVIL.
    raw = _raw_get(
        served,
        f"GET http://{EVIL}/sitemap.xml HTTP/1.1\r\nHost: {own_host}\r\nConnection: close\r\n\r\n",
    )
    assert raw.startswith((b"HTTP/1.1 200 ", b"HTTP/1.1 400 ", b"HTTP/1.1 404 ")), raw[:200]
    assert EVIL.encode() not in raw
    # Proxy headers nobody configured the app to trust.
    for header in ("X-Forwarded-Host", "Forwarded", "X-Host", "X-Original-Host"):
        value = f"host={EVIL}" if header == "Forwarded" else EVIL
        for path in ("/robots.txt", "/sitemap.xml", "/sitemap-pages-1.xml"):
            response = http.get(served.url(path), headers={header: value})
            assert response.status_code == 200, (header, path)
            assert EVIL not in response.text, (header, path)
    # And the forged requests changed nothing for the next honest client: the page cache
    # keys documents on the trusted base URL, so nothing forged can be planted in it.
    index = http.get(served.url("/sitemap.xml"))
    assert EVIL not in index.text
    assert _locs(index.content)[0] == served.url("/sitemap-pages-1.xml")


# lastmod -------------------------------------------------------------------------------


def _as_aware(text: str) -> datetime:
    # What the README promises: text without an offset is UTC (SQLite CURRENT_TIMESTAMP).
    stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)


def test_lastmod_has_a_timezone_and_matches_the_database(
    fetch: Fetch, served: ServedExample
) -> None:
    site = served.site
    prefix = served.url(site.item_path.format(""))
    lastmods: dict[int, str] = {}
    for number in site.item_pages:
        root = etree.fromstring(fetch(f"/sitemap-{site.item_source}-{number}.xml").content)
        for url in root.iterfind("sm:url", NS):
            loc = url.findtext("sm:loc", namespaces=NS)
            lastmod = url.findtext("sm:lastmod", namespaces=NS)
            assert loc is not None
            assert loc.startswith(prefix), loc
            assert lastmod is not None, f"{loc} has no lastmod"
            lastmods[int(loc.removeprefix(prefix))] = lastmod
    assert sorted(lastmods) == served.item_ids

    # Every value is a W3C datetime with an explicit offset (a date-time without one
    # means "local time of the server", which a crawler cannot know).
    for item_id, text in lastmods.items():
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
        assert "T" in text, (item_id, text)
        assert stamp.tzinfo is not None, (item_id, text)

    ids = served.item_ids
    rng = random.Random(20_240_601)
    boundaries = {ids[0], ids[1], ids[-1]}
    for start in range(PAGE_SIZE, len(ids), PAGE_SIZE):
        boundaries |= {ids[start - 1], ids[start]}
    sample = sorted({*boundaries, *rng.sample(ids, 500)})
    stored = served.lastmods(sample)
    assert sorted(stored) == sample
    for item_id in sample:
        served_at = datetime.fromisoformat(lastmods[item_id].replace("Z", "+00:00"))
        stored_at = _as_aware(stored[item_id])
        assert served_at == stored_at, (item_id, lastmods[item_id], stored[item_id])
        # The instant AND the offset: the sitemap keeps the database's own offset.
        assert served_at.utcoffset() == stored_at.utcoffset(), (item_id, lastmods[item_id])
