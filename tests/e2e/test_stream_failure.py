"""A source that fails while a sitemap is being served, behind a real server.

Whether the failure can still become an error status depends on how the document is
sent, which depends on the source:

* A source **with a fingerprint** has its ETag before any entry is read, so its page is
  streamed (on a cache miss). Once the first bytes of a 200 are on the wire the status
  cannot change, and the only honest signal left is to cut the transfer: the client
  must see an incomplete chunked body, never a short document that looks complete, and
  nothing of it may be cached. A failure before the first byte gives a 500.
* A source **without a fingerprint** is rendered to a spool first (its ETag is a digest
  of the bytes), so a failure anywhere in the page, even after 30,000 entries, is a
  clean 500 with a Content-Length: nothing of the page was sent.

The same two failing sources, ``late`` (fails after 30,000 entries) and ``early``
(fails before its first entry), run in six apps: with and without fingerprints, each
in a Flask app under gunicorn, and in a Starlette app under uvicorn twice, once with
async sources (an ``AsyncSliceable`` and an async generator, iterated on the event
loop) and once with sync ones (a sized sliceable and a generator, iterated in a worker
thread).
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from crawlers import scrapy_page_urls, usp_page_urls
from lxml import etree

from .servers import HTTP_TIMEOUT, Server, run_gunicorn, run_uvicorn

GOOD_ENTRIES = 30_000
#: What ``late`` claims to hold: its page asks for more than it delivers before failing.
LATE_COUNT = GOOD_ENTRIES + 10_000

FLASK_APP = f'''
"""Flask apps whose sitemap sources fail: one after {GOOD_ENTRIES} entries, one at once.

``app``'s sources have a fingerprint (their pages are streamed); ``plain_app``'s are
generator functions without one (their pages are rendered before they are sent).
"""
from flask import Flask, url_for

from flask_sitemapper import Entry, Sitemapper


def item(n):
    return f"item {{n}}"


def entry(n):
    return Entry(url_for("item", n=n, _external=True), lastmod="2024-05-01")


class Late:
    """A sized sliceable whose len() promises more than its slices deliver."""

    def __len__(self):
        return {LATE_COUNT}

    def fingerprint(self):
        return "late-v1"

    def __getitem__(self, window):
        for n in range(window.start + 1, min(window.stop, {GOOD_ENTRIES}) + 1):
            yield entry(n)
        raise RuntimeError("late source failure after {GOOD_ENTRIES} entries")


class Early:
    """A sized sliceable that fails as soon as a slice is asked for."""

    def __len__(self):
        return 10

    def fingerprint(self):
        return "early-v1"

    def __getitem__(self, window):
        raise RuntimeError("early source failure before any entry")


app = Flask(__name__)
app.add_url_rule("/items/<int:n>", view_func=item)
streaming = Sitemapper(app)
streaming.add_source("late", Late())
streaming.add_source("early", Early())

plain_app = Flask(__name__)
plain_app.add_url_rule("/items/<int:n>", view_func=item)
plain = Sitemapper(plain_app)


# count= promises more than the source delivers, so the page's slice asks for more
# entries and the generator runs into its failure.
@plain.source("late", count=lambda: {LATE_COUNT})
def late():
    for n in range(1, {GOOD_ENTRIES} + 1):
        yield entry(n)
    raise RuntimeError("late source failure after {GOOD_ENTRIES} entries")


@plain.source("early", count=lambda: 10)
def early():
    raise RuntimeError("early source failure before any entry")
    yield  # makes this a generator function
'''

STARLETTE_APP = f'''
"""Starlette apps whose sitemap sources fail: one after {GOOD_ENTRIES} entries, one at once.

``async_*`` iterate their sources on the event loop, ``sync_*`` in a thread; the
``*_sources`` apps give the sources a fingerprint, the ``*_plain`` ones do not.
"""
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from asgi_sitemap import AsyncUrlSource, Entry, SitemapMiddleware, url_for


async def item(request):
    return PlainTextResponse(f"item {{request.path_params['n']}}")


def entry(n):
    return Entry(url_for("item", n=n), lastmod="2024-05-01")


class AsyncLate:
    """An AsyncSliceable whose count() promises more than slice() delivers."""

    async def count(self):
        return {LATE_COUNT}

    async def slice(self, start, stop):
        for n in range(start + 1, min(stop, {GOOD_ENTRIES}) + 1):
            yield entry(n)
        raise RuntimeError("late source failure after {GOOD_ENTRIES} entries")


async def async_early():
    raise RuntimeError("early source failure before any entry")
    yield  # makes this an async generator function


class SyncLate:
    """A sized sliceable, iterated in a worker thread, failing the same way."""

    def __len__(self):
        return {LATE_COUNT}

    def __getitem__(self, window):
        for n in range(window.start + 1, min(window.stop, {GOOD_ENTRIES}) + 1):
            yield entry(n)
        raise RuntimeError("late source failure after {GOOD_ENTRIES} entries")


def sync_early():
    raise RuntimeError("early source failure before any entry")
    yield  # makes this a generator function


def build(late, early, fingerprinted):
    def version(name):
        return (lambda: name + "-v1") if fingerprinted else None

    return Starlette(
        routes=[Route("/items/{{n:int}}", item)],
        middleware=[
            Middleware(
                SitemapMiddleware,
                sources=[
                    AsyncUrlSource.from_object("late", late, fingerprint=version("late")),
                    AsyncUrlSource.from_object(
                        "early", early, count=lambda: 10, fingerprint=version("early")
                    ),
                ],
            )
        ],
    )


async_sources = build(AsyncLate(), async_early, fingerprinted=True)
sync_sources = build(SyncLate(), sync_early, fingerprinted=True)
async_plain = build(AsyncLate(), async_early, fingerprinted=False)
sync_plain = build(SyncLate(), sync_early, fingerprinted=False)
'''


@dataclass(frozen=True)
class FailingApp:
    """One of the failing apps: its module, the ASGI/WSGI object, and how to serve it."""

    name: str
    module: str
    source: str
    attribute: str
    server: str
    #: Its sources have a fingerprint: pages are streamed, not spooled.
    fingerprinted: bool

    def serve(self, folder: Path) -> AbstractContextManager[Server]:
        """Write the module to ``folder`` and serve it from there."""
        (folder / f"{self.module}.py").write_text(self.source)
        run = run_gunicorn if self.server == "gunicorn" else run_uvicorn
        return run(f"{self.module}:{self.attribute}", folder, folder / "logs", workers=1)


STREAMING_APPS = [
    FailingApp("flask", "failing_flask", FLASK_APP, "app", "gunicorn", True),
    FailingApp(
        "starlette-async", "failing_starlette", STARLETTE_APP, "async_sources", "uvicorn", True
    ),
    FailingApp(
        "starlette-sync", "failing_starlette", STARLETTE_APP, "sync_sources", "uvicorn", True
    ),
]
SPOOLING_APPS = [
    FailingApp("flask-plain", "failing_flask", FLASK_APP, "plain_app", "gunicorn", False),
    FailingApp(
        "starlette-async-plain", "failing_starlette", STARLETTE_APP, "async_plain", "uvicorn", False
    ),
    FailingApp(
        "starlette-sync-plain", "failing_starlette", STARLETTE_APP, "sync_plain", "uvicorn", False
    ),
]


def serving(apps: list[FailingApp]) -> pytest.MarkDecorator:
    """Run a test against each of ``apps`` (one server per app for the whole module)."""
    return pytest.mark.parametrize(
        "failing_app", apps, indirect=True, ids=lambda app: app.name, scope="module"
    )


@pytest.fixture(scope="module")
def failing_app(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """A failing app (the test's parameter) on its real server, one worker."""
    app: FailingApp = request.param
    with app.serve(tmp_path_factory.mktemp(f"failing-{app.name}")) as server:
        yield server


def _read_cut(server: Server, path: str, coding: str) -> tuple[bytearray, httpx.HTTPError | None]:
    """GET ``path``: check the 200 was streamed, return what arrived and the read error."""
    received = bytearray()
    error: httpx.HTTPError | None = None
    with (
        httpx.Client(timeout=HTTP_TIMEOUT, trust_env=False) as client,
        client.stream("GET", server.url(path), headers={"Accept-Encoding": coding}) as response,
    ):
        assert response.status_code == 200  # sent before the source failed
        assert response.headers["content-type"] == "application/xml; charset=utf-8"
        assert response.headers.get("content-encoding") == ("gzip" if coding == "gzip" else None)
        assert "content-length" not in response.headers
        assert response.headers.get("transfer-encoding") == "chunked"
        try:
            for chunk in response.iter_bytes():  # gunzipped as it arrives
                received += chunk
        except httpx.HTTPError as exc:
            error = exc
    return received, error


@serving(STREAMING_APPS)
@pytest.mark.parametrize("coding", ["identity", "gzip"])
def test_failure_mid_stream_cuts_the_transfer(failing_app: Server, coding: str) -> None:
    # Twice: a cut page must not have been cached, or the second client would get the
    # truncated bytes with a Content-Length, as if they were the whole document.
    for attempt in (1, 2):
        received, error = _read_cut(failing_app, "/sitemap-late-1.xml", coding)
        # The HTTP layer says the message is incomplete (no terminating zero-size chunk).
        assert isinstance(error, httpx.RemoteProtocolError), (
            f"attempt {attempt}: the body arrived as a complete chunked message"
            f" ({len(received)} bytes, ends {bytes(received[-80:])!r}; error {error!r})"
        )
        # It really failed mid-stream: a good part of the entries had been sent...
        assert received.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n<urlset')
        sent = received.count(b"<url>")
        assert 1_000 < sent <= GOOD_ENTRIES, sent
        # ...and what arrived is not a document: no closing tag, not well-formed.
        assert b"</urlset>" not in received
        with pytest.raises(etree.XMLSyntaxError):
            etree.fromstring(bytes(received))
    # The server saw the failure (not a timeout or a crash of something else).
    assert "late source failure" in failing_app.log()


CRAWLER_CASES = [
    # Streamed: /sitemap.xml is one <urlset> (40,010 entries fit one page), cut mid-way.
    # usp: "Response ended prematurely"; Scrapy's walk: "incomplete chunked read".
    *(
        pytest.param(app, r"prematurely|incomplete chunked read", id=app.name)
        for app in STREAMING_APPS
    ),
    # Spooled: the same <urlset> fails while it is rendered, before a byte is sent: a 500.
    *(pytest.param(app, r"\b500\b", id=app.name) for app in SPOOLING_APPS),
]


@pytest.mark.parametrize(
    ("failing_app", "failure"), CRAWLER_CASES, indirect=["failing_app"], scope="module"
)
@pytest.mark.parametrize("crawl", [usp_page_urls, scrapy_page_urls], ids=["usp", "scrapy"])
def test_crawlers_do_not_accept_the_failed_sitemap(
    failing_app: Server, failure: str, crawl: Callable[[str], list[str]]
) -> None:
    with pytest.raises(AssertionError, match=failure):
        crawl(failing_app.homepage)


@serving(STREAMING_APPS + SPOOLING_APPS)
def test_failure_before_the_first_byte_is_500(failing_app: Server) -> None:
    with httpx.Client(timeout=HTTP_TIMEOUT, trust_env=False) as client:
        for path in ("/sitemap-early-1.xml", "/sitemap-early-1.txt"):
            response = client.get(failing_app.url(path))
            assert response.status_code == 500, (path, response.text[:200])
            assert b"<urlset" not in response.content
            assert not response.headers["content-type"].startswith("application/xml")
        # The worker survives and keeps serving.
        assert client.get(failing_app.url("/robots.txt")).status_code == 200
    assert "early source failure" in failing_app.log()


@serving(SPOOLING_APPS)
def test_late_failure_without_fingerprint_is_a_clean_500(failing_app: Server) -> None:
    # 30,000 entries (~2.5 MB of XML, well past the spool's 256 KiB in memory) render
    # before the failure; none of them may reach the client.
    # (/sitemap.xml, the same entries in one <urlset>, is the crawlers' 500 above.)
    cases = [("/sitemap-late-1.xml", "identity"), ("/sitemap-late-1.xml", "gzip")]
    cases.append(("/sitemap-late-1.txt", "gzip"))
    with httpx.Client(timeout=HTTP_TIMEOUT, trust_env=False) as client:
        for path, coding in cases:
            # A complete message (httpx raises on a cut one), whose length was known.
            response = client.get(failing_app.url(path), headers={"Accept-Encoding": coding})
            assert response.status_code == 500, (path, coding, response.text[:200])
            assert response.headers.get("content-length") == str(len(response.content))
            assert b"<url" not in response.content
            assert b"http://" not in response.content
            assert "etag" not in response.headers
        # HEAD renders the page too (its ETag is a digest of the bytes): the same 500.
        assert client.head(failing_app.url("/sitemap-late-1.xml")).status_code == 500
        # The worker survives and keeps serving.
        assert client.get(failing_app.url("/robots.txt")).status_code == 200
    assert "late source failure" in failing_app.log()


# -- HTTP/1.0: no chunked coding, so a cut transfer would look complete -------------------


def http10_get(
    server: Server, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """GET ``path`` over HTTP/1.0 on a raw socket: status, headers, the body until close."""
    host, port = "127.0.0.1", server.port
    lines = [f"GET {path} HTTP/1.0", f"Host: {host}:{port}"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    with socket.create_connection((host, port), timeout=60) as conn:
        conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        data = bytearray()
        while chunk := conn.recv(65_536):
            data += chunk
    head, _, body = bytes(data).partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    fields = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), fields, body


#: Every kind of document the late source has a page of.
LATE_DOCUMENTS = [
    ("/sitemap-late-1.xml", {}),
    ("/sitemap-late-1.xml", {"Accept-Encoding": "gzip"}),
    ("/sitemap-late-1.txt", {}),
    ("/sitemap-late-1.html", {}),
    ("/sitemap-late-1.xml.gz", {}),
]


@serving(STREAMING_APPS + SPOOLING_APPS)
@pytest.mark.parametrize(("path", "headers"), LATE_DOCUMENTS, ids=lambda v: str(v))
def test_over_http_1_0_a_late_failure_is_a_500_never_a_short_200(
    failing_app: Server, path: str, headers: dict[str, str]
) -> None:
    status, fields, body = http10_get(failing_app, path, headers)
    # Rendered whole before the first byte (HTTP/1.0 cannot show a cut), so the
    # failure after 30,000 entries is an error status with its own length.
    assert status == 500, (path, status, fields, body[:200])
    assert fields.get("content-length") == str(len(body))
    assert b"/items/" not in body and "etag" not in fields


@serving(STREAMING_APPS)
@pytest.mark.parametrize(
    "path", ["/sitemap-late-1.txt", "/sitemap-late-1.html", "/sitemap-late-1.xml.gz"]
)
def test_over_http_1_1_every_kind_is_cut_never_short(failing_app: Server, path: str) -> None:
    # Text ends on a newline and HTML and gzip can look whole too: only the missing
    # terminating chunk says the transfer was cut, and it must be missing.
    received = bytearray()
    with (
        httpx.Client(timeout=HTTP_TIMEOUT, trust_env=False) as client,
        client.stream("GET", failing_app.url(path)) as response,
    ):
        assert response.status_code == 200  # sent before the source failed
        assert "content-length" not in response.headers
        assert response.headers.get("transfer-encoding") == "chunked"
        with pytest.raises(httpx.RemoteProtocolError):
            for chunk in response.iter_raw():
                received += chunk
    assert len(received) > 10_000  # it really failed mid-stream
