"""A source that fails while a sitemap is being served, behind a real server.

Once the first bytes of a 200 are on the wire the status cannot change, so the only
honest signal left is to cut the transfer: the client must see an incomplete chunked
body, never a short document that looks complete. A source failing before the first
byte must give a 500 instead.

The same checks run against three apps with the same two failing sources, ``late``
(fails after 30,000 entries) and ``early`` (fails before its first entry): a Flask app
under gunicorn, and a Starlette app under uvicorn twice, once with async sources
(an ``AsyncSliceable`` and an async generator, iterated on the event loop) and once
with sync ones (a sized sliceable and a generator, iterated in a worker thread).
"""

from __future__ import annotations

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
"""A Flask app whose sitemap sources fail: one after {GOOD_ENTRIES} entries, one at once."""
from flask import Flask, url_for

from flask_sitemapper import Entry, Sitemapper

app = Flask(__name__)
sitemapper = Sitemapper(app)


@app.get("/items/<int:n>")
def item(n):
    return f"item {{n}}"


# count= promises more than the source delivers, so the page's slice asks for more
# entries and the generator runs into its failure.
@sitemapper.source("late", count=lambda: {LATE_COUNT})
def late():
    for n in range(1, {GOOD_ENTRIES} + 1):
        yield Entry(url_for("item", n=n, _external=True), lastmod="2024-05-01")
    raise RuntimeError("late source failure after {GOOD_ENTRIES} entries")


@sitemapper.source("early", count=lambda: 10)
def early():
    raise RuntimeError("early source failure before any entry")
    yield  # makes this a generator function
'''

STARLETTE_APP = f'''
"""Starlette apps whose sitemap sources fail: one after {GOOD_ENTRIES} entries, one at once.

``async_sources`` iterates its sources on the event loop, ``sync_sources`` in a thread.
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


def build(late, early):
    return Starlette(
        routes=[Route("/items/{{n:int}}", item)],
        middleware=[
            Middleware(
                SitemapMiddleware,
                sources=[
                    AsyncUrlSource.from_object("late", late),
                    AsyncUrlSource.from_object("early", early, count=lambda: 10),
                ],
            )
        ],
    )


async_sources = build(AsyncLate(), async_early)
sync_sources = build(SyncLate(), sync_early)
'''


@dataclass(frozen=True)
class FailingApp:
    """One of the failing apps: its module, the ASGI/WSGI object, and how to serve it."""

    name: str
    module: str
    source: str
    attribute: str
    server: str

    def serve(self, folder: Path) -> AbstractContextManager[Server]:
        """Write the module to ``folder`` and serve it from there."""
        (folder / f"{self.module}.py").write_text(self.source)
        run = run_gunicorn if self.server == "gunicorn" else run_uvicorn
        return run(f"{self.module}:{self.attribute}", folder, folder / "logs", workers=1)


FAILING_APPS = [
    FailingApp("flask", "failing_flask", FLASK_APP, "app", "gunicorn"),
    FailingApp("starlette-async", "failing_starlette", STARLETTE_APP, "async_sources", "uvicorn"),
    FailingApp("starlette-sync", "failing_starlette", STARLETTE_APP, "sync_sources", "uvicorn"),
]


@pytest.fixture(scope="module", params=FAILING_APPS, ids=lambda app: app.name)
def failing_app(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """A failing app on its real server, one worker."""
    app: FailingApp = request.param
    with app.serve(tmp_path_factory.mktemp(f"failing-{app.name}")) as server:
        yield server


def test_failure_mid_stream_cuts_the_transfer(failing_app: Server) -> None:
    received = bytearray()
    error: httpx.HTTPError | None = None
    with (
        httpx.Client(timeout=HTTP_TIMEOUT, trust_env=False) as client,
        client.stream("GET", failing_app.url("/sitemap-late-1.xml")) as response,
    ):
        assert response.status_code == 200  # sent before the source failed
        assert response.headers["content-type"] == "application/xml; charset=utf-8"
        assert "content-length" not in response.headers
        assert response.headers.get("transfer-encoding") == "chunked"
        try:
            for chunk in response.iter_bytes():
                received += chunk
        except httpx.RemoteProtocolError as exc:
            error = exc

    # The HTTP layer says the message is incomplete (no terminating zero-size chunk).
    assert isinstance(error, httpx.RemoteProtocolError), (
        f"the body arrived as a complete chunked message ({len(received)} bytes,"
        f" ends {bytes(received[-80:])!r})"
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


@pytest.mark.parametrize("crawl", [usp_page_urls, scrapy_page_urls], ids=["usp", "scrapy"])
def test_crawlers_do_not_accept_the_truncated_sitemap(
    failing_app: Server, crawl: Callable[[str], list[str]]
) -> None:
    # /sitemap.xml is one <urlset> here (40,010 entries fit one page), cut mid-way.
    # usp: "Response ended prematurely"; Scrapy's walk: "incomplete chunked read".
    with pytest.raises(AssertionError, match=r"prematurely|incomplete chunked read"):
        crawl(failing_app.homepage)


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
