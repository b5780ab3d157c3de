"""Edges found in review: the HTML view's ETag follows the totals it shows, its rows are
not held to the XML byte bound, html=False gives its paths back to the app, a source
that counts entries it does not give never yields an empty urlset, and an hreflang
route without its language variable is a configuration error."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from flask import Flask
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from asgi_sitemap import SitemapMiddleware, SitemapRoutes
from flask_sitemapper import Sitemapper
from sitemap_core.sources.aio import AsyncUrlSource

from .conftest import BASE, url_list

IDENTITY = {"accept-encoding": "identity"}


class Growing:
    """A sliceable whose fingerprint is per range: a grown list keeps page 1's."""

    def __init__(self, n: int) -> None:
        self.urls = url_list(BASE, "grow", n)

    def __len__(self) -> int:
        return len(self.urls)

    def __getitem__(self, window: slice) -> list[str]:
        return self.urls[window]

    def fingerprint(self, start: int, stop: int) -> object:
        return tuple(self.urls[start:stop])


def test_an_html_page_gets_a_new_etag_when_the_source_grows(
    make_client: Callable[..., httpx.Client],
) -> None:
    source = Growing(2)
    client = make_client({"grow": source}, page_size=2)
    first = client.get("/sitemap-grow-1.html", headers=IDENTITY)
    assert first.status_code == 200 and "Next page" not in first.text
    source.urls.append(f"{BASE}/grow/extra")
    second = client.get("/sitemap-grow-1.html", headers=IDENTITY)
    assert second.headers["etag"] != first.headers["etag"]
    assert "Next page" in second.text and "page 1 of 2" in second.text
    revalidated = client.get(
        "/sitemap-grow-1.html", headers={**IDENTITY, "if-none-match": first.headers["etag"]}
    )
    assert revalidated.status_code == 200
    # The XML of the same page did not change: its ETag stands.
    xml_before = client.get("/sitemap-grow-1.xml", headers=IDENTITY).headers["etag"]
    source.urls.append(f"{BASE}/grow/more")
    assert client.get("/sitemap-grow-1.xml", headers=IDENTITY).headers["etag"] == xml_before


def test_html_rows_are_not_held_to_the_xml_byte_bound() -> None:
    app = Flask("bounded")
    app.config["SITEMAP_BASE_URL"] = BASE
    Sitemapper(app).add_source("pages", url_list(BASE, "p", 3), max_entry_bytes=100)
    client = app.test_client()
    assert client.get("/sitemap-pages-1.xml").status_code == 200
    page = client.get("/sitemap-pages-1.html")
    assert page.status_code == 200 and f"{BASE}/p/2" in page.text


def test_html_false_leaves_the_html_paths_to_the_app(
    make_client: Callable[..., httpx.Client],
) -> None:
    client = make_client({"pages": url_list(BASE, "p", 3)}, html=False)
    for path in ("/sitemap.html", "/sitemap-pages-1.html"):
        response = client.get(path)
        assert response.status_code == 404
        assert "content-security-policy" not in response.headers
    assert client.get("/sitemap.xml").status_code == 200


def test_a_source_that_gives_nothing_it_counted_is_a_500_not_an_empty_urlset(
    make_client: Callable[..., httpx.Client], caplog: pytest.LogCaptureFixture
) -> None:
    client = make_client({"ghost": _Lying(3)})
    with caplog.at_level(logging.ERROR):
        response = client.get("/sitemap.xml", headers=IDENTITY)
    assert response.status_code == 500
    assert "<urlset" not in response.text
    assert "gave no entry" in caplog.text


class _Lying:
    """Says it has ``n`` entries and has none (rows deleted between count and read)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, window: slice) -> list[str]:
        return []


def test_flask_hreflang_route_without_the_variable_is_a_configuration_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = Flask("no_lang")
    app.config["SITEMAP_BASE_URL"] = BASE
    app.config["PROPAGATE_EXCEPTIONS"] = False
    sitemap = Sitemapper(app)

    @app.route("/about")
    @sitemap.include(hreflang="lang", languages=["en", "fr"])
    def about(lang: str = "en") -> str:
        return lang

    with caplog.at_level(logging.ERROR):
        response = app.test_client().get("/sitemap.xml")
    assert response.status_code == 500
    assert "no URL variable 'lang'" in caplog.text


def test_asgi_hreflang_route_without_the_parameter_is_a_configuration_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    routes = SitemapRoutes()

    @routes.include(hreflang="lang", languages=["en", "fr"])
    async def about(request: Any) -> PlainTextResponse:
        return PlainTextResponse("about")

    app = SitemapMiddleware(
        Starlette(routes=[Route("/about", about)]), routes=routes, base_url=BASE
    )
    with caplog.at_level(logging.ERROR):
        response = TestClient(app, base_url=BASE).get("/sitemap.xml")
    assert response.status_code == 500
    assert "no path parameter 'lang'" in caplog.text


def test_asgi_robots_passed_through_does_not_count_the_sources() -> None:
    counted: list[int] = []

    def count() -> int:
        counted.append(1)
        return 1

    async def app_with_html_robots(scope: Any, receive: Any, send: Any) -> None:
        body = b"<html>robots</html>"
        headers = [(b"content-type", b"text/html"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    asgi_source = AsyncUrlSource.from_object("pages", lambda: [f"{BASE}/a"], count=count)
    middleware = SitemapMiddleware(app_with_html_robots, [asgi_source], base_url=BASE)
    response = TestClient(middleware, base_url=BASE).get("/robots.txt")
    assert response.text == "<html>robots</html>"
    assert counted == []
