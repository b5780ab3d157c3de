"""The Flask extension: registration, configuration, decorated routes and sources."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from importlib.metadata import version
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from flask import (
    Blueprint,
    Flask,
    Response,
    request,
    send_from_directory,
    stream_with_context,
    url_for,
)
from lxml import etree
from werkzeug.middleware.proxy_fix import ProxyFix
from xsd import SITEMAP_NS, SITEMAPINDEX_TAG, URLSET_TAG, validate

from flask_sitemapper import ConfigurationError, Entry, InvalidEntryError, Sitemapper

from .conftest import BASE

NS = {"sm": SITEMAP_NS}


# -- helpers ---------------------------------------------------------------------------


def new_app(**config: Any) -> Flask:
    app = Flask("extension_tests")
    app.config.update(config)
    return app


def client_for(app: Flask, script_name: str = "") -> httpx.Client:
    transport = httpx.WSGITransport(app=app, script_name=script_name)
    return httpx.Client(transport=transport, base_url=BASE)


def parse(body: bytes) -> etree._Element:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    return etree.fromstring(body, parser)


def urls(body: bytes) -> dict[str, dict[str, str]]:
    """``{loc: {child tag: text}}`` of a urlset, in document order."""
    out: dict[str, dict[str, str]] = {}
    for url in parse(body).iterfind("sm:url", NS):
        fields = {etree.QName(child).localname: str(child.text) for child in url}
        out[fields.pop("loc")] = fields
    return out


def sitemap(client: httpx.Client, path: str = "/sitemap.xml", **kwargs: Any) -> bytes:
    response = client.get(path, **kwargs)
    assert response.status_code == 200, response.text[:300]
    assert response.headers["content-type"] == "application/xml; charset=utf-8"
    validate(response.content)
    return response.content


def add_pages(app: Flask, sitemapper: Sitemapper) -> None:
    """Two static routes and one dynamic route, all included."""

    @app.get("/")
    @sitemapper.include(priority=1.0)
    def home() -> str:
        return "home"

    @app.get("/about")
    @sitemapper.include(changefreq="yearly")
    def about() -> str:
        return "about"

    @app.get("/post/<int:post_id>")
    @sitemapper.include(params=[{"post_id": 1}, {"post_id": 2}])
    def post(post_id: int) -> str:
        return str(post_id)


EXPECTED_PAGES = {
    f"{BASE}/": {"priority": "1.0"},
    f"{BASE}/about": {"changefreq": "yearly"},
    f"{BASE}/post/1": {},
    f"{BASE}/post/2": {},
}


# -- registration ------------------------------------------------------------------------


def test_sitemapper_with_the_app() -> None:
    app = new_app()
    sitemapper = Sitemapper(app)
    add_pages(app, sitemapper)
    assert "sitemapper" in app.extensions
    assert urls(sitemap(client_for(app))) == EXPECTED_PAGES


def test_sitemapper_then_init_app() -> None:
    sitemapper = Sitemapper()
    app = new_app()
    add_pages(app, sitemapper)  # decorated before the app is known
    assert "sitemapper" not in app.extensions
    sitemapper.init_app(app)
    assert "sitemapper" in app.extensions
    assert urls(sitemap(client_for(app))) == EXPECTED_PAGES
    robots = client_for(app).get("/robots.txt").text
    assert "Sitemap: http://localhost/sitemap.xml" in robots.splitlines()


def test_config_defaults() -> None:
    app = new_app()
    Sitemapper(app)
    assert app.config["SITEMAP_BASE_URL"] is None
    assert app.config["SITEMAP_ALLOWED_HOSTS"] is None
    assert app.config["SITEMAP_PAGE_SIZE"] == 50_000
    assert app.config["SITEMAP_ROBOTS_TXT"] is True
    assert app.config["SITEMAP_ROBOTS_RULES"] == "User-agent: *\nDisallow:\n"
    assert app.config["SITEMAP_SAME_HOST_ONLY"] is True


def test_config_set_before_init_app_is_kept() -> None:
    app = new_app(SITEMAP_PAGE_SIZE=2, SITEMAP_ROBOTS_RULES="User-agent: *\nDisallow: /x\n")
    sitemapper = Sitemapper(app)
    add_pages(app, sitemapper)
    assert app.config["SITEMAP_PAGE_SIZE"] == 2
    client = client_for(app)
    index = sitemap(client)
    assert parse(index).tag == SITEMAPINDEX_TAG
    assert len(parse(index).findall("sm:sitemap", NS)) == 2
    robots = client.get("/robots.txt").text
    assert robots.startswith("User-agent: *\nDisallow: /x\n")


def test_one_sitemapper_serves_two_apps_with_their_own_config() -> None:
    # The application-factory pattern: one module-level Sitemapper, the same views
    # registered on every app the factory builds, a different config per app.
    sitemapper = Sitemapper()
    views = Blueprint("views", __name__)

    @views.get("/a")
    @sitemapper.include()
    def a() -> str:
        return "a"

    sitemapper.add_source("extra", [f"{BASE}/e/{i}" for i in range(5)])

    def create_app(**config: Any) -> Flask:
        app = new_app(**config)
        app.register_blueprint(views)
        sitemapper.init_app(app)
        return app

    small, large = create_app(SITEMAP_PAGE_SIZE=2), create_app()
    index = parse(sitemap(client_for(small)))
    assert index.tag == SITEMAPINDEX_TAG
    assert [str(loc.text) for loc in index.iterfind(".//sm:loc", NS)] == [
        f"{BASE}/sitemap-pages-1.xml",
        f"{BASE}/sitemap-extra-1.xml",
        f"{BASE}/sitemap-extra-2.xml",
        f"{BASE}/sitemap-extra-3.xml",
    ]
    assert list(urls(sitemap(client_for(large)))) == [f"{BASE}/a"] + [
        f"{BASE}/e/{i}" for i in range(5)
    ]


def test_one_sitemapper_on_two_apps_with_different_routes() -> None:
    sitemapper = Sitemapper()
    sitemapper.add_source("extra", [f"{BASE}/e/{i}" for i in range(2)])
    first, second = new_app(), new_app()
    sitemapper.init_app(first)
    sitemapper.init_app(second)
    add_pages(first, sitemapper)  # routes of the first app only
    assert list(urls(sitemap(client_for(first))))[:4] == list(EXPECTED_PAGES)
    assert list(urls(sitemap(client_for(second)))) == [f"{BASE}/e/0", f"{BASE}/e/1"]


def test_a_view_in_a_blueprint_with_a_url_prefix() -> None:
    sitemapper = Sitemapper()
    blog = Blueprint("blog", __name__, url_prefix="/blog")

    @blog.get("/")
    @sitemapper.include()
    def index() -> str:
        return "blog"

    @sitemapper.include(params=lambda: [{"slug": "hello-world"}])
    @blog.get("/<slug>/")
    def article(slug: str) -> str:
        return slug

    app = new_app()
    app.register_blueprint(blog)
    # The same blueprint mounted a second time: both copies are routes of the app.
    app.register_blueprint(blog, name="archive", url_prefix="/archive")
    sitemapper.init_app(app)
    assert list(urls(sitemap(client_for(app)))) == [
        f"{BASE}/blog/",
        f"{BASE}/archive/",
        f"{BASE}/blog/hello-world/",
        f"{BASE}/archive/hello-world/",
    ]


# -- dynamic routes ----------------------------------------------------------------------


def test_params_as_callable_list_and_value_field_pairs() -> None:
    app = new_app()
    sitemapper = Sitemapper(app)
    calls: list[int] = []

    def tag_params() -> Iterator[dict[str, str]]:
        calls.append(1)
        yield from ({"name": "python"}, {"name": "flask"})

    @app.get("/tag/<name>")
    @sitemapper.include(params=tag_params, changefreq="weekly")
    def tag(name: str) -> str:
        return name

    @app.get("/year/<int:year>")
    @sitemapper.include(params=[{"year": 2023}, {"year": 2024}], priority=0.2)
    def year(year: int) -> str:
        return str(year)

    aware = datetime(2024, 5, 1, 23, 30, tzinfo=timezone(timedelta(hours=-5)))

    @app.get("/doc/<int:doc_id>")
    @sitemapper.include(
        params=[
            ({"doc_id": 1}, {"lastmod": date(2024, 1, 2)}),
            ({"doc_id": 2}, {"lastmod": aware, "changefreq": "daily"}),
            ({"doc_id": 3}, {"lastmod": "2024-03-04T05:06:07Z", "priority": 0.9}),
            {"doc_id": 4},
        ],
        changefreq="monthly",
        lastmod="2020-01-01",
    )
    def doc(doc_id: int) -> str:
        return str(doc_id)

    client = client_for(app)
    assert urls(sitemap(client)) == {
        f"{BASE}/tag/python": {"changefreq": "weekly"},
        f"{BASE}/tag/flask": {"changefreq": "weekly"},
        f"{BASE}/year/2023": {"priority": "0.2"},
        f"{BASE}/year/2024": {"priority": "0.2"},
        f"{BASE}/doc/1": {"lastmod": "2024-01-02", "changefreq": "monthly"},
        f"{BASE}/doc/2": {"lastmod": "2024-05-01T23:30:00-05:00", "changefreq": "daily"},
        f"{BASE}/doc/3": {
            "lastmod": "2024-03-04T05:06:07+00:00",
            "changefreq": "monthly",
            "priority": "0.9",
        },
        f"{BASE}/doc/4": {"lastmod": "2020-01-01", "changefreq": "monthly"},
    }
    # A callable is called again on each crawl (it may read a database).
    before = len(calls)
    sitemap(client)
    assert len(calls) > before


def test_route_urls_are_paged_like_any_source() -> None:
    app = new_app(SITEMAP_PAGE_SIZE=3)
    sitemapper = Sitemapper(app)

    @app.get("/n/<int:n>")
    @sitemapper.include(params=lambda: [{"n": n} for n in range(7)])
    def number(n: int) -> str:
        return str(n)

    client = client_for(app)
    children = [str(loc.text) for loc in parse(sitemap(client)).iterfind(".//sm:loc", NS)]
    assert children == [f"{BASE}/sitemap-pages-{n}.xml" for n in (1, 2, 3)]
    served = [loc for child in children for loc in urls(sitemap(client, child[len(BASE) :]))]
    assert served == [f"{BASE}/n/{n}" for n in range(7)]


def my_decorator(view: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return view(*args, **kwargs)

    return wrapper


def test_decorator_order_and_wrapped_views() -> None:
    app = new_app()
    sitemapper = Sitemapper(app)

    @sitemapper.include()  # above the route decorator
    @app.get("/above")
    def above() -> str:
        return "above"

    @app.get("/below")
    @sitemapper.include()  # below the route decorator
    def below() -> str:
        return "below"

    @app.get("/wrapped-inside")
    @my_decorator
    @sitemapper.include()  # the route registers the wrapper, include saw the view
    def wrapped_inside() -> str:
        return "inside"

    @app.get("/wrapped-outside/<int:n>")
    @sitemapper.include(params=[{"n": 1}])
    @my_decorator  # include sees the wrapper; the wrapped signature needs params
    def wrapped_outside(n: int) -> str:
        return str(n)

    client = client_for(app)
    assert list(urls(sitemap(client))) == [
        f"{BASE}/above",
        f"{BASE}/below",
        f"{BASE}/wrapped-inside",
        f"{BASE}/wrapped-outside/1",
    ]
    assert client.get("/wrapped-inside").text == "inside"


def test_route_values_with_special_characters_round_trip() -> None:
    app = new_app()
    sitemapper = Sitemapper(app)
    odd = "fish & chips <b>'quoted' \"double\" caf\u00e9"

    @app.get("/tag/<path:name>")
    @sitemapper.include(params=[{"name": odd}, {"name": "a&b", "q": "x<y>&z='1'"}])
    def tag(name: str) -> str:
        return name

    body = sitemap(client_for(app))
    locs = list(urls(body))
    assert all(loc.isascii() for loc in locs)
    assert unquote(locs[0]) == f"{BASE}/tag/{odd}"
    assert unquote(locs[1]) == f"{BASE}/tag/a&b?q=x<y>&z='1'"


# -- absolute URLs -----------------------------------------------------------------------


def app_with_url_for_source(**config: Any) -> Flask:
    app = new_app(**config)
    sitemapper = Sitemapper(app)

    @app.get("/article/<int:n>")
    def article(n: int) -> str:
        return str(n)

    @sitemapper.include()
    @app.get("/contact")
    def contact() -> str:
        return "contact"

    @sitemapper.source("articles")
    def articles() -> Iterator[Entry | str]:
        yield url_for("article", n=1, _external=True)
        yield Entry(url_for("article", n=2, _external=True), lastmod=date(2024, 2, 2))
        yield url_for("contact", _external=True).replace("/contact", "/plain")

    return app


def test_url_for_in_a_source_uses_the_base_url_not_the_request_host() -> None:
    app = app_with_url_for_source(
        SITEMAP_BASE_URL="https://www.example.com",
        SITEMAP_ALLOWED_HOSTS=["localhost", "staging.example.com"],
    )
    client = client_for(app)
    expected = [
        "https://www.example.com/contact",
        "https://www.example.com/article/1",
        "https://www.example.com/article/2",
        "https://www.example.com/plain",
    ]
    for host in ("localhost", "staging.example.com", "evil.example"):
        body = sitemap(client, headers={"Host": host})
        assert list(urls(body)) == expected
        assert host.encode() not in body


def test_a_source_using_the_request_host_is_refused_not_served() -> None:
    # ``request`` in a source is the crawler's request: its host is what must never
    # reach a sitemap. With a base URL on another host such an entry is an error that
    # names the URL and the source, never a silently poisoned document.
    app = new_app(SITEMAP_BASE_URL="https://www.example.com")
    app.config["PROPAGATE_EXCEPTIONS"] = True
    sitemapper = Sitemapper(app)

    @sitemapper.source("hosted")
    def hosted() -> Iterator[str]:
        yield request.url_root + "page"

    with pytest.raises(InvalidEntryError) as caught:
        client_for(app).get("/sitemap.xml", headers={"Host": "localhost"})
    assert caught.value.source == "hosted"
    assert "http://localhost/page" in str(caught.value)


def test_a_base_url_with_a_path_prefix() -> None:
    app = app_with_url_for_source(SITEMAP_BASE_URL="https://www.example.com/shop/")
    client = client_for(app)
    assert list(urls(sitemap(client))) == [
        "https://www.example.com/shop/contact",
        "https://www.example.com/shop/article/1",
        "https://www.example.com/shop/article/2",
        "https://www.example.com/shop/plain",
    ]
    robots = client.get("/robots.txt").text.splitlines()
    assert "Sitemap: https://www.example.com/shop/sitemap.xml" in robots
    paged = app_with_url_for_source(
        SITEMAP_BASE_URL="https://www.example.com/shop", SITEMAP_PAGE_SIZE=2
    )
    index = parse(sitemap(client_for(paged)))
    assert [str(loc.text) for loc in index.iterfind(".//sm:loc", NS)] == [
        "https://www.example.com/shop/sitemap-pages-1.xml",
        "https://www.example.com/shop/sitemap-articles-1.xml",
        "https://www.example.com/shop/sitemap-articles-2.xml",
    ]


def test_mounted_under_a_script_name() -> None:
    app = app_with_url_for_source()
    # httpx's WSGI transport puts script_name in SCRIPT_NAME, the path in PATH_INFO.
    client = client_for(app, script_name="/site")
    response = client.get("/sitemap.xml")
    assert response.status_code == 200
    assert list(urls(response.content)) == [
        f"{BASE}/site/contact",
        f"{BASE}/site/article/1",
        f"{BASE}/site/article/2",
        f"{BASE}/site/plain",
    ]


#: Flask before 3.1 routes only requests whose Host is SERVER_NAME (others are its own
#: 404, before any view); 3.1 routes every host.
SERVER_NAME_ROUTES = tuple(int(part) for part in version("flask").split(".")[:2]) < (3, 1)


def test_server_name_is_the_origin() -> None:
    app = app_with_url_for_source(SERVER_NAME="example.test")
    client = client_for(app)
    if SERVER_NAME_ROUTES:
        assert client.get("/sitemap.xml", headers={"Host": "evil.example"}).status_code == 404
    hosts = ("example.test",) if SERVER_NAME_ROUTES else ("localhost", "evil.example")
    for host in hosts:
        body = sitemap(client, headers={"Host": host})
        assert list(urls(body)) == [
            "http://example.test/contact",
            "http://example.test/article/1",
            "http://example.test/article/2",
            "http://example.test/plain",
        ]
    robots = client.get("/robots.txt", headers={"Host": hosts[-1]}).text
    assert "Sitemap: http://example.test/sitemap.xml" in robots.splitlines()
    assert "evil" not in robots


@pytest.mark.parametrize(
    "server_name",
    ["https://example.test", "example.test/shop", "example.test:0", "example.test:http", "*"],
)
def test_a_server_name_that_is_not_a_host_fails_at_start_naming_it(server_name: str) -> None:
    # Without SITEMAP_BASE_URL it is the host of every sitemap URL: each sitemap request
    # would be refused, found only when a crawler came.
    with pytest.raises(ConfigurationError, match="SERVER_NAME must be a host") as caught:
        app_with_url_for_source(SERVER_NAME=server_name)
    assert repr(server_name) in str(caught.value)
    # SITEMAP_BASE_URL set: the package does not read it (Flask's routing does).
    app_with_url_for_source(SERVER_NAME=server_name, SITEMAP_BASE_URL=BASE)


def test_a_server_name_set_after_start_is_checked_as_the_other_settings_are(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = app_with_url_for_source()
    client = client_for(app)
    assert sitemap(client)
    app.config["SERVER_NAME"] = "http://example.test"
    with caplog.at_level(logging.ERROR, "flask_sitemapper"):
        response = client.get("/sitemap.xml", headers={"Host": "example.test"})
    if SERVER_NAME_ROUTES:
        # Flask's routing matches no request to that name: its 404, before any view.
        assert response.status_code == 404
        return
    assert response.status_code == 500  # a setting is wrong: the server's fault
    assert "SERVER_NAME must be a host" in caplog.text


@pytest.mark.parametrize("server_name", ["example.test", "example.test:8080", "[::1]:5000"])
def test_a_server_name_with_a_port_or_an_ip_is_a_host(server_name: str) -> None:
    app_with_url_for_source(SERVER_NAME=server_name)


def test_trusted_hosts_are_the_default_allow_list() -> None:
    app = app_with_url_for_source(TRUSTED_HOSTS=["www.example.org"])
    client = client_for(app)
    body = sitemap(client, headers={"Host": "www.example.org"})
    assert next(iter(urls(body))) == "http://www.example.org/contact"
    assert client.get("/sitemap.xml", headers={"Host": "evil.example"}).status_code == 400


def test_scheme_and_host_behind_a_proxy() -> None:
    app = app_with_url_for_source(SITEMAP_PAGE_SIZE=2)
    app.wsgi_app = ProxyFix(app.wsgi_app, x_proto=1, x_host=1)  # type: ignore[method-assign]
    client = client_for(app)
    forwarded = {"X-Forwarded-Proto": "https"}
    index = parse(sitemap(client, headers=forwarded))
    children = [str(loc.text) for loc in index.iterfind(".//sm:loc", NS)]
    assert children[0] == "https://localhost/sitemap-pages-1.xml"
    assert all(child.startswith("https://localhost/") for child in children)
    page = sitemap(client, "/sitemap-articles-1.xml", headers=forwarded)
    assert list(urls(page)) == ["https://localhost/article/1", "https://localhost/article/2"]
    robots = client.get("/robots.txt", headers=forwarded).text.splitlines()
    assert "Sitemap: https://localhost/sitemap.xml" in robots
    # The forwarded host goes through the same allow-list as a Host header.
    spoofed = {**forwarded, "X-Forwarded-Host": "evil.example"}
    response = client.get("/sitemap.xml", headers=spoofed)
    assert response.status_code == 400
    assert b"<loc>" not in response.content


# -- configuration errors ----------------------------------------------------------------


def view() -> str:
    return "x"


def view_with_slug(slug: str) -> str:
    return slug


@pytest.mark.parametrize(
    ("decorate", "error", "match"),
    [
        (lambda s: s.include(changefreq="sometimes")(view), InvalidEntryError, "changefreq"),
        (lambda s: s.include(priority=2)(view), InvalidEntryError, "priority 2"),
        (lambda s: s.include(priority=-0.1)(view), InvalidEntryError, "priority"),
        (lambda s: s.include(lastmod="2024-13-45")(view), InvalidEntryError, "lastmod"),
        (lambda s: s.include(lastmod="yesterday")(view), InvalidEntryError, "lastmod"),
        (lambda s: s.include()(view_with_slug), ConfigurationError, r"slug.*params="),
        (
            lambda s: s.include(params=({"slug": x} for x in "ab"))(view_with_slug),
            ConfigurationError,
            "iterator",
        ),
        (lambda s: s.include(params=42)(view_with_slug), ConfigurationError, "int"),
        (lambda s: s.include(source="Pages!")(view), ConfigurationError, "'Pages!'"),
        (lambda s: s.source("has space")(list), ConfigurationError, "'has space'"),
        (lambda s: s.add_source("", []), ConfigurationError, "source name"),
        (
            lambda s: s.add_source("gen", (x for x in ["http://localhost/"])),
            ConfigurationError,
            "iterator",
        ),
    ],
)
def test_bad_decorator_arguments_fail_at_decoration_time(
    decorate: Callable[[Sitemapper], Any], error: type[Exception], match: str
) -> None:
    sitemapper = Sitemapper()
    with pytest.raises(error, match=match):
        decorate(sitemapper)


def test_changefreq_error_lists_the_allowed_words() -> None:
    with pytest.raises(InvalidEntryError, match=r"'sometimes'.*daily.*weekly"):
        Sitemapper().include(changefreq="sometimes")(view)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (lambda s: s.add_source("news", []), lambda s: s.add_source("news", [])),
        (lambda s: s.add_source("news", []), lambda s: s.source("news")(list)),
        (lambda s: s.include(source="news")(view), lambda s: s.add_source("news", [])),
        (lambda s: s.add_source("news", []), lambda s: s.include(source="news")(view)),
    ],
)
def test_duplicate_source_names_fail_at_registration(
    first: Callable[[Sitemapper], Any], second: Callable[[Sitemapper], Any]
) -> None:
    sitemapper = Sitemapper()
    first(sitemapper)
    with pytest.raises(ConfigurationError, match="'news'"):
        second(sitemapper)


def test_several_routes_may_share_one_source_name() -> None:
    app = new_app()
    sitemapper = Sitemapper(app)
    for path in ("/a", "/b"):
        app.add_url_rule(path, path, sitemapper.include(source="misc")(lambda: "x"))
    assert list(urls(sitemap(client_for(app)))) == [f"{BASE}/a", f"{BASE}/b"]


def test_a_decorated_function_that_is_not_a_route_fails_when_the_sitemap_is_built() -> None:
    app = new_app()
    app.testing = True  # let the error reach the test
    sitemapper = Sitemapper(app)

    @sitemapper.include()
    def forgotten() -> str:
        return "never routed"

    with pytest.raises(ConfigurationError, match=r"forgotten.*not a route"):
        client_for(app).get("/sitemap.xml")


def test_an_unknown_per_url_field_names_the_route() -> None:
    app = new_app()
    app.testing = True
    sitemapper = Sitemapper(app)

    @app.get("/p/<int:n>")
    @sitemapper.include(params=[({"n": 1}, {"last_modified": "2024-01-01"})])
    def page(n: int) -> str:
        return str(n)

    with pytest.raises(InvalidEntryError, match="last_modified"):
        client_for(app).get("/sitemap.xml")


@pytest.mark.parametrize("page_size", [0, 50_001, -1, "10", 2.5])
def test_page_size_out_of_range(page_size: Any) -> None:
    app = new_app(SITEMAP_PAGE_SIZE=page_size)
    app.testing = True
    with pytest.raises(ConfigurationError, match="page size"):
        Sitemapper(app).add_source("pages", [f"{BASE}/"])
        client_for(app).get("/sitemap.xml")


def test_page_size_out_of_range_fails_at_init_app() -> None:
    app = new_app(SITEMAP_PAGE_SIZE=0)
    with pytest.raises(ConfigurationError, match="page size"):
        Sitemapper(app)


def test_a_bad_base_url_fails_at_init_app() -> None:
    with pytest.raises(ConfigurationError, match=re.escape("'ftp://example.com'")):
        Sitemapper(new_app(SITEMAP_BASE_URL="ftp://example.com"))


# -- robots.txt --------------------------------------------------------------------------


def test_robots_txt_false_leaves_robots_txt_to_the_app() -> None:
    app = new_app(SITEMAP_ROBOTS_TXT=False)
    sitemapper = Sitemapper(app)
    add_pages(app, sitemapper)
    assert client_for(app).get("/robots.txt").status_code == 404

    own = new_app(SITEMAP_ROBOTS_TXT=False)
    Sitemapper(own).add_source("pages", [f"{BASE}/"])

    @own.get("/robots.txt")
    def robots() -> Response:
        return Response("User-agent: *\nDisallow: /\n", mimetype="text/plain")

    response = client_for(own).get("/robots.txt")
    assert response.content == b"User-agent: *\nDisallow: /\n"


def test_a_static_robots_txt_gets_the_sitemap_line(tmp_path: Path) -> None:
    original = b"User-agent: *\nDisallow: /admin/\n"
    (tmp_path / "robots.txt").write_bytes(original)
    app = Flask("static_robots", static_folder=str(tmp_path), static_url_path="/static")
    sitemapper = Sitemapper(app)
    add_pages(app, sitemapper)

    @app.get("/robots.txt")
    def robots() -> Response:
        return send_from_directory(str(tmp_path), "robots.txt")

    client = client_for(app)
    get = client.get("/robots.txt")
    assert get.status_code == 200
    assert get.content == original + b"\nSitemap: http://localhost/sitemap.xml\n"
    assert get.headers["content-length"] == str(len(get.content))
    # Validators of the file on disk do not describe the merged body: it has its own.
    assert "last-modified" not in get.headers
    assert get.headers["etag"].startswith('"')
    again = client.get("/robots.txt", headers={"If-None-Match": get.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    head = client.head("/robots.txt")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == get.headers["content-length"]
    # Flask's own static route serves the file itself, untouched.
    assert client.get("/static/robots.txt").content == original


def test_a_broken_sitemap_config_does_not_break_the_apps_robots_txt() -> None:
    app = new_app()
    sitemapper = Sitemapper(app)

    @sitemapper.include()
    def forgotten() -> str:
        return "never routed"

    @app.get("/robots.txt")
    def robots() -> Response:
        return Response("User-agent: *\nDisallow: /private/\n", mimetype="text/plain")

    response = client_for(app).get("/robots.txt")
    assert response.status_code == 200
    assert response.text.startswith("User-agent: *\nDisallow: /private/\n")


def test_an_app_robots_txt_that_is_not_text_is_left_alone() -> None:
    app = new_app()
    Sitemapper(app).add_source("pages", [f"{BASE}/"])

    @app.get("/robots.txt")
    def robots() -> Response:
        return Response("<p>not a robots file</p>", mimetype="text/html")

    assert client_for(app).get("/robots.txt").text == "<p>not a robots file</p>"


# -- Flask context hygiene ---------------------------------------------------------------


def test_teardown_request_runs_as_for_any_flask_streaming_view() -> None:
    # A sitemap streams with flask.stream_with_context, so its teardown_request calls
    # are exactly those of a plain streamed view of the same Flask (3.1 runs teardown
    # when the view returns and again when the stream ends), and the last one comes
    # after the final chunk: no extra context of ours adds more.
    app = new_app()
    sitemapper = Sitemapper(app)
    add_pages(app, sitemapper)
    events: list[str] = []

    @app.get("/stream")
    def stream() -> Any:
        def chunks() -> Iterator[str]:
            events.append("chunk")
            yield "x"

        return stream_with_context(chunks())

    @app.teardown_request
    def count(exc: BaseException | None) -> None:
        events.append("teardown")

    client_for(app).get("/stream").read()
    plain_view = list(events)
    events.clear()
    sitemap(client_for(app))
    assert events.count("teardown") == plain_view.count("teardown")
    assert events[-1] == "teardown"


def test_sources_run_in_an_app_context_while_streaming() -> None:
    app = new_app()
    sitemapper = Sitemapper(app)
    seen: list[str] = []

    @sitemapper.source("big")
    def big() -> Iterator[str]:
        for i in range(3_000):  # several chunks: the later ones stream after the view
            if i % 1_000 == 0:
                from flask import current_app

                seen.append(current_app.name)
            yield url_for("static", filename=f"f{i}.txt", _external=True)

    body = sitemap(client_for(app))
    assert len(urls(body)) == 3_000
    assert seen and set(seen) == {"extension_tests"}
    assert parse(body).tag == URLSET_TAG


def test_same_host_only_false_allows_other_origins() -> None:
    app = new_app(SITEMAP_SAME_HOST_ONLY=False)
    Sitemapper(app).add_source("cdn", ["https://cdn.example.net/a", f"{BASE}/b"])
    assert list(urls(sitemap(client_for(app)))) == ["https://cdn.example.net/a", f"{BASE}/b"]


def test_lastmod_naive_datetime_is_written_with_a_timezone() -> None:
    app = new_app()
    sitemapper = Sitemapper(app)

    @app.get("/x")
    @sitemapper.include(lastmod=datetime(2024, 1, 2, 3, 4, 5))  # naive: taken as UTC
    def x() -> str:
        return "x"

    @app.get("/y")
    @sitemapper.include(lastmod=datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC))
    def y() -> str:
        return "y"

    assert urls(sitemap(client_for(app))) == {
        f"{BASE}/x": {"lastmod": "2024-01-02T03:04:05+00:00"},
        f"{BASE}/y": {"lastmod": "2024-01-02T03:04:05+00:00"},
    }


def test_params_returning_a_str_is_refused_naming_the_view() -> None:
    # A str is iterable, but its "items" would be characters: refused, with the view named
    # (the same core check as the ASGI routes use).
    app = new_app()
    app.config["PROPAGATE_EXCEPTIONS"] = True
    sitemapper = Sitemapper(app)

    @app.get("/tags/<tag>")
    @sitemapper.include(params=lambda: "python")
    def tag(tag: str) -> str:
        return tag

    with pytest.raises(ConfigurationError, match=r"params of .*tag returned str"):
        client_for(app).get("/sitemap.xml")
