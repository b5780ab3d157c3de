"""A source that fails while a sitemap is being served, behind a real gunicorn.

Once the first bytes of a 200 are on the wire the status cannot change, so the only
honest signal left is to cut the transfer: the client must see an incomplete chunked
body, never a short document that looks complete. A source failing before the first
byte must give a 500 instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest
from crawlers import scrapy_page_urls, usp_page_urls
from lxml import etree

from .servers import HTTP_TIMEOUT, GunicornServer, run_gunicorn

GOOD_ENTRIES = 30_000

FAILING_APP = f'''
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
@sitemapper.source("late", count=lambda: {GOOD_ENTRIES} + 10_000)
def late():
    for n in range(1, {GOOD_ENTRIES} + 1):
        yield Entry(url_for("item", n=n, _external=True), lastmod="2024-05-01")
    raise RuntimeError("late source failure after {GOOD_ENTRIES} entries")


@sitemapper.source("early", count=lambda: 10)
def early():
    raise RuntimeError("early source failure before any entry")
    yield  # makes this a generator function
'''


@pytest.fixture(scope="module")
def failing_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GunicornServer]:
    """``FAILING_APP`` served by gunicorn, one sync worker."""
    app_dir = tmp_path_factory.mktemp("failing-app")
    (app_dir / "failing_app.py").write_text(FAILING_APP)
    with run_gunicorn("failing_app:app", app_dir, app_dir / "logs", workers=1) as server:
        yield server


def test_failure_mid_stream_cuts_the_transfer(failing_app: GunicornServer) -> None:
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
    failing_app: GunicornServer, crawl: Callable[[str], list[str]]
) -> None:
    # /sitemap.xml is one <urlset> here (40,010 entries fit one page), cut mid-way.
    # usp: "Response ended prematurely"; Scrapy's walk: "incomplete chunked read".
    with pytest.raises(AssertionError, match=r"prematurely|incomplete chunked read"):
        crawl(failing_app.homepage)


def test_failure_before_the_first_byte_is_500(failing_app: GunicornServer) -> None:
    with httpx.Client(timeout=HTTP_TIMEOUT, trust_env=False) as client:
        for path in ("/sitemap-early-1.xml", "/sitemap-early-1.txt"):
            response = client.get(failing_app.url(path))
            assert response.status_code == 500, (path, response.text[:200])
            assert b"<urlset" not in response.content
            assert not response.headers["content-type"].startswith("application/xml")
        # The worker survives and keeps serving.
        assert client.get(failing_app.url("/robots.txt")).status_code == 200
    assert "early source failure" in failing_app.log()
