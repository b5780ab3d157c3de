"""robots.txt ``Sitemap:`` lines: extra sitemaps, merging into the app's file, prefixes.

``extra_sitemaps=`` (both middlewares) and ``SITEMAP_EXTRA_SITEMAPS`` (Flask) add
absolute sitemap URLs after ours, in robots.txt we serve and in the app's own, whose
bytes are kept; each URL is declared once. Bad values fail at construction or
``init_app``. Under a path prefix (a mounted app) the lines are absolute URLs under
the prefix.
"""

from __future__ import annotations

import warnings
from collections import Counter
from typing import Any

import httpx
import pytest
from flask import Flask
from starlette.applications import Starlette
from starlette.routing import Mount
from werkzeug.middleware.dispatcher import DispatcherMiddleware

import asgi_sitemap
from flask_sitemapper import ConfigurationError, Sitemapper

from .conftest import BASE, FRONTS, Front, build_flask_app, hello_asgi_app, hello_wsgi_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

OURS = f"{BASE}/sitemap.xml"
CDN = "https://cdn.example.com/sitemaps/products.xml"
STATIC = "https://static.example.org/news-sitemap.xml.gz"
RULES = "User-agent: *\nDisallow:\n"
TEXT = "text/plain; charset=utf-8"


def build(
    front: Front,
    extra: Any = (),
    *,
    app_robots: bytes | None = None,
    sources: dict[str, Any] | None = None,
) -> Any:
    """An app of ``front`` with ``extra_sitemaps`` (each front's own spelling)."""
    sources = sources if sources is not None else {"pages": [f"{BASE}/a", f"{BASE}/b"]}
    return front.build_app(sources, app_robots=app_robots, extra_sitemaps=extra)


def robots(front: Front, extra: Any = (), **options: Any) -> httpx.Response:
    client = front.client(build(front, extra, **options))
    try:
        response = client.get("/robots.txt")
        response.read()
        return response
    finally:
        client.close()


def sitemap_lines(text: str) -> list[str]:
    return [
        line.split(":", 1)[1].split("#", 1)[0].strip()
        for line in text.splitlines()
        if line.lower().startswith("sitemap:")
    ]


# -- our own robots.txt ---------------------------------------------------------------------


def test_our_robots_txt_lists_the_extra_sitemaps_after_ours(front: Front) -> None:
    response = robots(front, [CDN, STATIC])
    assert response.status_code == 200
    assert response.headers["content-type"] == TEXT
    assert response.text == (f"{RULES}\nSitemap: {OURS}\nSitemap: {CDN}\nSitemap: {STATIC}\n")


def test_no_extra_sitemaps_lists_ours_alone(front: Front) -> None:
    assert robots(front).text == f"{RULES}\nSitemap: {OURS}\n"
    assert robots(front, []).text == f"{RULES}\nSitemap: {OURS}\n"


def test_extra_sitemaps_as_a_tuple_and_normalised_like_any_url(front: Front) -> None:
    response = robots(
        front, ("https://ex\u00e4mple.com/site maps/a.xml", "HTTPS://CDN.example.com")
    )
    assert sitemap_lines(response.text) == [
        OURS,
        "https://xn--exmple-cua.com/site%20maps/a.xml",
        "https://cdn.example.com/",
    ]


def test_extra_sitemaps_do_not_change_the_sitemap_itself(front: Front) -> None:
    client = front.client(build(front, [CDN]))
    try:
        body = client.get("/sitemap.xml").content
    finally:
        client.close()
    assert b"cdn.example.com" not in body


def test_an_extra_sitemap_on_any_host_may_be_listed(front: Front) -> None:
    # robots.txt may list sitemaps on other hosts (cross-site submission); no same-host check.
    response = robots(front, ["http://other.example.net:8080/s.xml"])
    assert sitemap_lines(response.text) == [OURS, "http://other.example.net:8080/s.xml"]


# -- the app's own robots.txt ------------------------------------------------------------------

OWN = (
    b"# the app's own rules\r\n"
    b"User-agent: BadBot\r\nDisallow: /\r\n\r\n"
    b"User-agent: *\r\nDisallow: /private/  # keep out\r\nCrawl-delay: 2"
)


def test_the_apps_robots_txt_is_kept_byte_for_byte_and_the_lines_added_once(
    front: Front,
) -> None:
    response = robots(front, [CDN, STATIC], app_robots=OWN)
    assert response.status_code == 200
    body = response.content
    assert body.startswith(OWN)
    added = body[len(OWN) :].decode()
    assert added == f"\n\nSitemap: {OURS}\nSitemap: {CDN}\nSitemap: {STATIC}\n"
    assert Counter(sitemap_lines(body.decode())) == Counter([OURS, CDN, STATIC])
    assert response.headers.get("content-length", str(len(body))) == str(len(body))


@pytest.mark.parametrize(
    "declared",
    [
        f"Sitemap: {CDN}",
        f"sitemap:{CDN}",
        f"SITEMAP:   {CDN}   # our CDN copy",
    ],
)
def test_an_extra_sitemap_the_app_already_lists_is_not_added_again(
    front: Front, declared: str
) -> None:
    own = f"User-agent: *\nDisallow:\n\n{declared}\n".encode()
    body = robots(front, [CDN, STATIC], app_robots=own).content
    # A blank line keeps the added lines apart from the app's last group.
    assert body == own + f"\nSitemap: {OURS}\nSitemap: {STATIC}\n".encode()
    assert sitemap_lines(body.decode()).count(CDN) == 1


def test_an_app_listing_every_sitemap_is_served_unchanged(front: Front) -> None:
    own = f"User-agent: *\nDisallow:\n\nSitemap: {STATIC}\nSitemap: {OURS}\nSitemap: {CDN}\n"
    response = robots(front, [CDN, STATIC], app_robots=own.encode())
    assert response.content == own.encode()


def test_an_app_listing_another_sitemap_keeps_it_first(front: Front) -> None:
    other = "https://elsewhere.example/sitemap.xml"
    own = f"User-agent: *\nDisallow:\n\nSitemap: {other}\n".encode()
    body = robots(front, [CDN], app_robots=own).content
    assert body == own + f"\nSitemap: {OURS}\nSitemap: {CDN}\n".encode()
    assert sitemap_lines(body.decode()) == [other, OURS, CDN]


def test_an_empty_app_robots_txt_gets_the_lines_alone(front: Front) -> None:
    body = robots(front, [CDN], app_robots=b"").content
    assert body == f"Sitemap: {OURS}\nSitemap: {CDN}\n".encode()


@pytest.mark.parametrize("app_robots", [None, b"User-agent: *\nDisallow:\n"], ids=["ours", "apps"])
def test_a_url_given_twice_in_extra_sitemaps_is_listed_once(
    front: Front, app_robots: bytes | None
) -> None:
    text = robots(front, [CDN, CDN], app_robots=app_robots).text
    assert sitemap_lines(text) == [OURS, CDN]


@pytest.mark.parametrize("app_robots", [None, b"User-agent: *\nDisallow:\n"], ids=["ours", "apps"])
def test_an_extra_sitemap_equal_to_ours_is_listed_once(
    front: Front, app_robots: bytes | None
) -> None:
    text = robots(front, [OURS, CDN], app_robots=app_robots).text
    assert sitemap_lines(text) == [OURS, CDN]


# -- bad values fail at start-up ------------------------------------------------------------------

BAD_EXTRAS = [
    pytest.param("https://cdn.example.com/s.xml", id="a-str-not-a-list"),
    pytest.param(["/sitemap-other.xml"], id="relative"),
    pytest.param(["cdn.example.com/s.xml"], id="no-scheme"),
    pytest.param(["ftp://cdn.example.com/s.xml"], id="ftp"),
    pytest.param(["not a url"], id="text"),
    pytest.param([CDN, 42], id="not-a-str"),
    pytest.param(["https://cdn.example.com/" + "a" * 2100], id="too-long"),
    pytest.param(None, id="none"),
    pytest.param({CDN}, id="a-set"),
]


@pytest.mark.parametrize("extra", BAD_EXTRAS)
def test_a_bad_extra_sitemap_fails_at_construction(front: Front, extra: Any) -> None:
    with pytest.raises(ConfigurationError, match="extra sitemap"):
        build(front, extra)


@pytest.mark.parametrize("extra", BAD_EXTRAS)
def test_a_bad_flask_extra_sitemap_fails_at_init_app(extra: Any) -> None:
    app = Flask("bad_extra")
    app.config["SITEMAP_EXTRA_SITEMAPS"] = extra
    sitemapper = Sitemapper()
    with pytest.raises(ConfigurationError, match="extra sitemap"):
        sitemapper.init_app(app)


def test_flask_extra_sitemaps_set_after_init_app_are_used() -> None:
    app = build_flask_app({"pages": [f"{BASE}/a"]})
    app.config["SITEMAP_EXTRA_SITEMAPS"] = [CDN]
    client = httpx.Client(transport=httpx.WSGITransport(app=app), base_url=BASE)
    assert sitemap_lines(client.get("/robots.txt").text) == [OURS, CDN]


def test_a_bad_flask_extra_sitemap_set_late_does_not_break_the_apps_robots_txt() -> None:
    own = b"User-agent: *\nDisallow: /private/\n"
    app = build_flask_app({"pages": [f"{BASE}/a"]}, app_robots=own)
    app.config["SITEMAP_EXTRA_SITEMAPS"] = "https://cdn.example.com/s.xml"
    client = httpx.Client(transport=httpx.WSGITransport(app=app), base_url=BASE)
    response = client.get("/robots.txt")
    assert response.status_code == 200
    assert response.content.startswith(own)


# -- a path prefix: a mounted app ------------------------------------------------------------------


def prefixed_sources() -> dict[str, Any]:
    return {"pages": [f"{BASE}/site/a", f"{BASE}/site/b"]}


def expected_prefixed(extra: list[str]) -> str:
    return f"{RULES}\nSitemap: {BASE}/site/sitemap.xml\n" + "".join(
        f"Sitemap: {url}\n" for url in extra
    )


def test_wsgi_fronts_under_a_script_name_list_urls_under_the_prefix() -> None:
    for name in ("flask-extension", "wsgi-middleware"):
        app = build(FRONTS[name], [CDN], sources=prefixed_sources())
        client = httpx.Client(
            transport=httpx.WSGITransport(app=app, script_name="/site"), base_url=BASE
        )
        response = client.get("/robots.txt")
        assert response.status_code == 200, name
        assert response.text == expected_prefixed([CDN]), name
        sitemap = client.get("/sitemap.xml")
        assert sitemap.status_code == 200
        assert b"http://localhost/site/a" in sitemap.content


@pytest.mark.parametrize("name", ["flask-extension", "wsgi-middleware"])
def test_the_apps_robots_txt_under_a_script_name_gets_prefixed_lines(name: str) -> None:
    own = b"User-agent: *\nDisallow: /site/tmp/\n"
    app = build(FRONTS[name], [CDN], app_robots=own, sources=prefixed_sources())
    client = httpx.Client(
        transport=httpx.WSGITransport(app=app, script_name="/site"), base_url=BASE
    )
    body = client.get("/robots.txt").content
    assert body == own + f"\nSitemap: {BASE}/site/sitemap.xml\nSitemap: {CDN}\n".encode()


def test_wsgi_fronts_mounted_with_a_dispatcher_list_urls_under_the_prefix() -> None:
    for name in ("flask-extension", "wsgi-middleware"):
        mounted = build(FRONTS[name], [CDN], sources=prefixed_sources())
        outer = DispatcherMiddleware(hello_wsgi_app(), {"/site": mounted})
        client = httpx.Client(transport=httpx.WSGITransport(app=outer), base_url=BASE)
        response = client.get("/site/robots.txt")
        assert response.status_code == 200, name
        assert response.text == expected_prefixed([CDN]), name
        # The outer app's own /robots.txt is not ours.
        assert client.get("/robots.txt").status_code == 404


def test_the_asgi_middleware_under_a_root_path_lists_urls_under_the_prefix() -> None:
    app = asgi_sitemap.SitemapMiddleware(
        hello_asgi_app(), prefixed_sources(), extra_sitemaps=[CDN, STATIC]
    )
    client = TestClient(app, base_url=BASE, root_path="/site")
    response = client.get("/site/robots.txt")
    assert response.status_code == 200
    assert response.text == expected_prefixed([CDN, STATIC])


def test_the_asgi_middleware_mounted_in_starlette_lists_urls_under_the_prefix() -> None:
    inner = asgi_sitemap.SitemapMiddleware(
        hello_asgi_app(), prefixed_sources(), extra_sitemaps=[CDN]
    )
    outer = Starlette(routes=[Mount("/site", app=inner)])
    client = TestClient(outer, base_url=BASE)
    response = client.get("/site/robots.txt")
    assert response.status_code == 200
    assert response.text == expected_prefixed([CDN])
    sitemap = client.get("/site/sitemap.xml")
    assert sitemap.status_code == 200
    assert b"<loc>http://localhost/site/a</loc>" in sitemap.content


def test_flask_base_url_with_a_prefix_lists_urls_under_it() -> None:
    app = Flask("prefixed_base")
    app.config["SITEMAP_BASE_URL"] = "https://www.example.com/shop/"
    app.config["SITEMAP_EXTRA_SITEMAPS"] = [CDN]
    Sitemapper(app).add_source("pages", ["https://www.example.com/shop/a"])
    client = httpx.Client(transport=httpx.WSGITransport(app=app), base_url=BASE)
    assert client.get("/robots.txt").text == (
        f"{RULES}\nSitemap: https://www.example.com/shop/sitemap.xml\nSitemap: {CDN}\n"
    )
