"""Route decorators declaring hreflang groups, on Flask and on Starlette / FastAPI.

``include(hreflang="lang", languages=[...], x_default=...)`` lists one URL per language
per param item, each carrying the whole group (and ``x-default``): counts, paging,
reciprocity and schema validity are checked over HTTP, and bad declarations fail at
import time with a ConfigurationError.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from flask import Flask
from lxml import etree
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from xsd import IMAGE_NS, SITEMAP_NS, XHTML_NS, validate

import asgi_sitemap
from flask_sitemapper import ConfigurationError, Image, Sitemapper

from .conftest import BASE, asgi_client, wsgi_client

NS = {"sm": SITEMAP_NS, "xhtml": XHTML_NS, "image": IMAGE_NS}
LANGUAGES = ["en", "fr", "pt_br"]
CODES = {"en": "en", "fr": "fr", "pt_br": "pt-BR"}
POSTS = [1, 2, 3, 5, 8]
FRAMEWORKS = ["flask", "starlette", "fastapi"]


def post_params() -> list[Any]:
    items: list[Any] = [{"post_id": post} for post in POSTS]
    # One item with per-URL fields: every language of it gets them.
    items[0] = (
        {"post_id": POSTS[0]},
        {"lastmod": "2024-03-04", "images": [f"https://cdn.example.com/{POSTS[0]}.jpg"]},
    )
    return items


# -- apps --------------------------------------------------------------------------------


def flask_app(page_size: int = 50_000, **group: Any) -> Flask:
    app = Flask("route_languages")
    app.config["SITEMAP_PAGE_SIZE"] = page_size
    sitemapper = Sitemapper(app)
    group = group or {"hreflang": "lang", "languages": LANGUAGES, "x_default": "en"}

    @sitemapper.include(changefreq="monthly", **group)
    @app.get("/<lang>/about")
    def about(lang: str) -> str:
        return lang

    @sitemapper.include(params=post_params, **group)
    @app.get("/<lang>/posts/<int:post_id>")
    def post(lang: str, post_id: int) -> str:
        return f"{lang} {post_id}"

    @sitemapper.include()
    @app.get("/")
    def home() -> str:
        return "home"

    return app


def asgi_routes(**group: Any) -> tuple[asgi_sitemap.SitemapRoutes, list[Any]]:
    routes = asgi_sitemap.SitemapRoutes()
    group = group or {"hreflang": "lang", "languages": LANGUAGES, "x_default": "en"}

    @routes.include(changefreq="monthly", **group)
    async def about(request: Any) -> PlainTextResponse:
        return PlainTextResponse("about")

    async def async_params() -> list[Any]:
        return post_params()

    @routes.include(params=async_params, **group)
    async def post(request: Any) -> PlainTextResponse:
        return PlainTextResponse("post")

    @routes.include()
    async def home(request: Any) -> PlainTextResponse:
        return PlainTextResponse("home")

    return routes, [about, post, home]


def starlette_app(page_size: int = 50_000, **group: Any) -> Any:
    routes, (about, post, home) = asgi_routes(**group)
    app = Starlette(
        routes=[
            Route("/{lang}/about", about, name="about"),
            Route("/{lang}/posts/{post_id:int}", post, name="post"),
            Route("/", home, name="home"),
        ]
    )
    return asgi_sitemap.SitemapMiddleware(app, routes=routes, page_size=page_size)


def fastapi_app(page_size: int = 50_000, **group: Any) -> Any:
    app = FastAPI()
    routes = asgi_sitemap.SitemapRoutes()
    group = group or {"hreflang": "lang", "languages": LANGUAGES, "x_default": "en"}

    @app.get("/{lang}/about")
    @routes.include(changefreq="monthly", **group)
    async def about(lang: str) -> str:
        return lang

    @app.get("/{lang}/posts/{post_id}")
    @routes.include(params=post_params, **group)
    def post(lang: str, post_id: int) -> str:
        return f"{lang} {post_id}"

    @app.get("/")
    @routes.include()
    async def home() -> str:
        return "home"

    app.add_middleware(asgi_sitemap.SitemapMiddleware, routes=routes, page_size=page_size)
    return app


BUILDERS: dict[str, Callable[..., Any]] = {
    "flask": flask_app,
    "starlette": starlette_app,
    "fastapi": fastapi_app,
}


def client_of(framework: str, page_size: int = 50_000, **group: Any) -> httpx.Client:
    app = BUILDERS[framework](page_size, **group)
    return wsgi_client(app) if framework == "flask" else asgi_client(app)


# -- reading what is served ---------------------------------------------------------------


def parse(body: bytes) -> etree._Element:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    return etree.fromstring(body, parser)


def get_valid(client: httpx.Client, path: str) -> bytes:
    response = client.get(path)
    assert response.status_code == 200, (path, response.status_code, response.text[:500])
    validate(response.content)
    return response.content


def served(client: httpx.Client) -> list[etree._Element]:
    """Every ``<url>`` served, from /sitemap.xml and any children, in order."""
    root = parse(get_valid(client, "/sitemap.xml"))
    if root.tag == f"{{{SITEMAP_NS}}}urlset":
        return list(root.iterfind("sm:url", NS))
    elements = []
    for loc in root.iterfind("sm:sitemap/sm:loc", NS):
        page = parse(get_valid(client, str(loc.text).removeprefix(BASE)))
        elements += page.iterfind("sm:url", NS)
    return elements


def group_of(element: etree._Element) -> list[tuple[str, str]]:
    return [
        (str(link.get("hreflang")), str(link.get("href")))
        for link in element.iterfind("xhtml:link", NS)
    ]


def expected_group(
    path: Callable[[str], str], x_default: str | None = "en"
) -> list[tuple[str, str]]:
    group = [(CODES[lang], f"{BASE}{path(lang)}") for lang in LANGUAGES]
    if x_default is not None:
        group.append(("x-default", f"{BASE}{path(x_default)}"))
    return group


def about_path(lang: str) -> str:
    return f"/{lang}/about"


def post_path(post: int) -> Callable[[str], str]:
    return lambda lang: f"/{lang}/posts/{post}"


def expected_locs() -> list[str]:
    about = [f"{BASE}{about_path(lang)}" for lang in LANGUAGES]
    posts = [f"{BASE}{post_path(post)(lang)}" for post in POSTS for lang in LANGUAGES]
    return [*about, *posts, f"{BASE}/"]


# -- what is listed ---------------------------------------------------------------------


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_one_url_per_language_per_item_each_with_the_whole_group(framework: str) -> None:
    elements = served(client_of(framework))
    locs = [element.findtext("sm:loc", namespaces=NS) for element in elements]
    assert locs == expected_locs()
    assert len(locs) == (1 + len(POSTS)) * len(LANGUAGES) + 1  # items x languages, + home
    by_loc = dict(zip(locs, elements, strict=True))
    for lang in LANGUAGES:
        about = by_loc[f"{BASE}/{lang}/about"]
        assert group_of(about) == expected_group(about_path)
        assert about.findtext("sm:changefreq", namespaces=NS) == "monthly"
        for post in POSTS:
            assert group_of(by_loc[f"{BASE}/{lang}/posts/{post}"]) == expected_group(
                post_path(post)
            )
    assert group_of(by_loc[f"{BASE}/"]) == []


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_language_value_in_the_url_and_its_hreflang_code(framework: str) -> None:
    elements = served(client_of(framework))
    links = {code: href for e in elements for code, href in group_of(e)}
    # pt_br stays pt_br in the URL and is written pt-BR as hreflang.
    assert links["pt-BR"].endswith("/pt_br/posts/8")
    assert links["x-default"] == f"{BASE}/en/posts/8"


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_groups_are_reciprocal(framework: str) -> None:
    elements = served(client_of(framework))
    locs = [str(e.findtext("sm:loc", namespaces=NS)) for e in elements]
    assert not [loc for loc, n in Counter(locs).items() if n > 1]  # each URL once
    groups = {loc: group_of(e) for loc, e in zip(locs, elements, strict=True) if group_of(e)}
    for loc, group in groups.items():
        hrefs = {href for _, href in group}
        assert loc in hrefs  # every page lists itself
        for href in hrefs:
            # every alternate is itself an entry listing the very same group
            assert groups[href] == group


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("page_size", [1, 2, 4, 5, 7])
def test_paging_keeps_every_group_whole_on_each_entry(framework: str, page_size: int) -> None:
    client = client_of(framework, page_size)
    elements = served(client)
    assert [e.findtext("sm:loc", namespaces=NS) for e in elements] == expected_locs()
    for element in elements[:-1]:
        assert len(group_of(element)) == len(LANGUAGES) + 1
    # Same entries, same groups as on one page.
    whole = {e.findtext("sm:loc", namespaces=NS): group_of(e) for e in served(client_of(framework))}
    assert {e.findtext("sm:loc", namespaces=NS): group_of(e) for e in elements} == whole


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_per_url_fields_with_images_go_to_every_language(framework: str) -> None:
    elements = served(client_of(framework))
    first = POSTS[0]
    for element in elements:
        loc = str(element.findtext("sm:loc", namespaces=NS))
        images = [str(i.text) for i in element.iterfind("image:image/image:loc", NS)]
        lastmod = element.findtext("sm:lastmod", namespaces=NS)
        if loc.endswith(f"/posts/{first}"):
            assert images == [f"https://cdn.example.com/{first}.jpg"]
            assert lastmod == "2024-03-04"
        else:
            assert images == []
            assert lastmod is None


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_without_x_default(framework: str) -> None:
    group = {"hreflang": "lang", "languages": LANGUAGES}
    elements = served(client_of(framework, **group))
    about = elements[0]
    assert group_of(about) == expected_group(about_path, x_default=None)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_text_and_html_views_list_every_language(framework: str) -> None:
    client = client_of(framework)
    text = client.get("/sitemap.txt")
    assert text.status_code == 200
    assert text.text.splitlines() == expected_locs()
    html = client.get("/sitemap-pages-1.html")
    assert html.status_code == 200
    for loc in expected_locs():
        assert f'href="{loc}"' in html.text


# -- per-URL alternates on a route with languages ---------------------------------------------


def test_per_url_alternates_on_a_route_with_languages_are_refused_naming_the_route(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = Flask("alternates_twice")
    app.config["PROPAGATE_EXCEPTIONS"] = False
    sitemapper = Sitemapper(app)

    @sitemapper.include(
        params=[({"post_id": 1}, {"alternates": {"en": f"{BASE}/en/posts/1"}})],
        hreflang="lang",
        languages=["en", "fr"],
    )
    @app.get("/<lang>/posts/<int:post_id>")
    def post(lang: str, post_id: int) -> str:
        return "post"

    response = wsgi_client(app).get("/sitemap.xml")
    assert response.status_code == 500
    assert b"<urlset" not in response.content
    logged = "\n".join(str(r.exc_info[1]) for r in caplog.records if r.exc_info)
    assert "invalid alternates" in logged
    assert "languages= already set them" in logged
    assert "(from source 'post')" in logged


# -- bad declarations fail at import time -------------------------------------------------------

BAD_GROUPS = [
    pytest.param({"hreflang": "lang", "languages": ["en", "xx"]}, "not an ISO 639-1", id="unknown"),
    pytest.param({"hreflang": "lang", "languages": ["en", "en-UK"]}, "GB", id="unknown-region"),
    pytest.param({"hreflang": "lang", "languages": ["en", "fr", "en"]}, "repeats", id="duplicate"),
    pytest.param(
        {"hreflang": "lang", "languages": ["en_gb", "en-GB"]}, "repeats", id="duplicate-normalised"
    ),
    pytest.param(
        {"hreflang": "lang", "languages": ["en", "x-default"]}, "x_default=", id="x-default-listed"
    ),
    pytest.param(
        {"hreflang": "lang", "languages": ["en", "fr"], "x_default": "de"},
        "must be one of",
        id="x-default-not-listed",
    ),
    pytest.param(
        {"hreflang": "lang", "languages": ["en", "fr"], "x_default": "EN"},
        "must be one of",
        id="x-default-other-spelling",
    ),
    pytest.param({"hreflang": "lang", "languages": ["en"]}, "at least two", id="one-language"),
    pytest.param({"hreflang": "lang", "languages": []}, "at least two", id="no-language"),
    pytest.param({"hreflang": "lang"}, "languages=", id="hreflang-without-languages"),
    pytest.param({"hreflang": "lang", "languages": "en,fr"}, "languages=", id="languages-as-str"),
    pytest.param({"languages": ["en", "fr"]}, "hreflang=", id="languages-without-hreflang"),
    pytest.param({"x_default": "en"}, "hreflang=", id="x-default-alone"),
    pytest.param({"hreflang": "", "languages": ["en", "fr"]}, "hreflang=", id="empty-hreflang"),
]


@pytest.mark.parametrize(("group", "message"), BAD_GROUPS)
def test_flask_bad_groups_fail_at_decoration(group: dict[str, Any], message: str) -> None:
    app = Flask("bad_group")
    sitemapper = Sitemapper(app)

    def about(lang: str) -> str:
        return lang  # pragma: no cover

    app.add_url_rule("/<lang>/about", view_func=about)
    with pytest.raises(ConfigurationError, match=message) as caught:
        sitemapper.include(**group)(about)
    assert "about" in str(caught.value)


@pytest.mark.parametrize(("group", "message"), BAD_GROUPS)
def test_asgi_bad_groups_fail_at_decoration(group: dict[str, Any], message: str) -> None:
    routes = asgi_sitemap.SitemapRoutes()
    with pytest.raises(ConfigurationError, match=message) as caught:

        @routes.include(**group)
        async def about(request: Any) -> None: ...

    assert "about" in str(caught.value)


def test_a_flask_route_with_more_variables_than_the_language_still_needs_params() -> None:
    app = Flask("needs_params")
    sitemapper = Sitemapper(app)
    with pytest.raises(ConfigurationError, match="post_id"):

        @sitemapper.include(hreflang="lang", languages=["en", "fr"])
        @app.get("/<lang>/posts/<int:post_id>")
        def post(lang: str, post_id: int) -> str:
            return "post"  # pragma: no cover


def test_an_asgi_route_with_more_parameters_than_the_language_needs_params() -> None:
    routes = asgi_sitemap.SitemapRoutes()

    @routes.include(hreflang="lang", languages=["en", "fr"])
    async def post(request: Any) -> None: ...

    app = Starlette(routes=[Route("/{lang}/posts/{post_id:int}", post, name="post")])
    client = asgi_client(asgi_sitemap.SitemapMiddleware(app, routes=routes))
    response = client.get("/sitemap.xml")
    assert response.status_code == 500
    assert b"<urlset" not in response.content


def test_groups_are_also_accepted_with_images_from_image_objects() -> None:
    routes = asgi_sitemap.SitemapRoutes()
    image = Image("https://cdn.example.com/about.jpg", caption="About")

    @routes.include(params=[({}, {"images": [image]})], hreflang="lang", languages=["en", "de-AT"])
    async def about(request: Any) -> PlainTextResponse:
        return PlainTextResponse("about")

    app = Starlette(routes=[Route("/{lang}/about", about, name="about")])
    client = asgi_client(asgi_sitemap.SitemapMiddleware(app, routes=routes))
    elements = served(client)
    assert [e.findtext("sm:loc", namespaces=NS) for e in elements] == [
        f"{BASE}/en/about",
        f"{BASE}/de-AT/about",
    ]
    for element in elements:
        assert element.findtext("image:image/image:caption", namespaces=NS) == "About"
        assert group_of(element) == [("en", f"{BASE}/en/about"), ("de-AT", f"{BASE}/de-AT/about")]
