"""Apps whose decorated routes take odd URL values, for the URL-builder tests.

Each front's ``include(params=...)`` output over these apps is compared byte for byte
with a source building the same entries with the framework's own ``url_for``, and with
the digest the library gave before route URLs had a fast builder.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Flask, url_for
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

import asgi_sitemap
from flask_sitemapper import Entry, Sitemapper

#: Odd values for string segments: spaces, unicode, reserved and quoting characters.
ODD_TEXT = [
    "plain",
    "with space",
    "caf\u00e9",
    "\u65e5\u672c",
    "a%20b",
    "100%",
    "q?x=1",
    "frag#top",
    "semi;colon,comma",
    "plus+sign",
    "tilde~dot.dash-under_",
    "quote'and\"double",
    "amp&lt<gt>",
    "emoji\U0001f600",
    "back\\slash",
    "(paren)!*$@=:",
]
#: Odd values for ``path`` converters: slashes, empty segments, the same oddities.
ODD_PATHS = ["a/b/c", "dir/with space/\u00fc", "trailing/", "x//y", "%2F/q?#", "-"]
UUIDS = [uuid.UUID(int=0), uuid.UUID("12345678-1234-5678-1234-567812345678")]
FLOATS = [0.0, 1.5, 0.1, 1e-07, 12345678.25, 3.0]
INTS = [0, 1, 7, 42, 10**12]
FIELDS = {"lastmod": "2024-05-01", "changefreq": "weekly", "priority": 0.5}
BASE_URL = "https://example.com:8443/root"


def flask_app(*, with_url_for_twin: bool = False) -> Flask:
    """A Flask app listing odd values through ``include(params=...)``.

    With ``with_url_for_twin`` a second app's worth of the same entries is built by a
    plain source with ``url_for(..., _external=True)`` (the behaviour before the fast
    builder), as the section ``twin``; :func:`flask_twin_sections` names both.
    """
    app = Flask("url_apps")
    app.config["SITEMAP_BASE_URL"] = BASE_URL
    sitemapper = Sitemapper(app)
    blog = Blueprint("blog", __name__, url_prefix="/blog/<lang>", url_defaults={"lang": "en"})
    shop = Blueprint("shop", __name__, url_prefix="/shop")

    @shop.url_defaults
    def shop_defaults(endpoint: str, values: dict[str, Any]) -> None:
        values.setdefault("currency", "eur")

    @sitemapper.include(params=lambda: [({"post_id": i}, FIELDS) for i in INTS], source="routes")
    @app.get("/posts/<int:post_id>")
    def post(post_id: int) -> str:
        return str(post_id)

    @sitemapper.include(params=[{"tag": text} for text in ODD_TEXT], source="routes")
    @app.get("/tags/<tag>/")
    def tag(tag: str) -> str:
        return tag

    @sitemapper.include(params=[{"p": path} for path in ODD_PATHS], source="routes")
    @app.get("/files/<path:p>")
    def files(p: str) -> str:
        return p

    @sitemapper.include(params=[{"x": x} for x in FLOATS], source="routes")
    @app.get("/f/<float:x>")
    def floats(x: float) -> str:
        return str(x)

    @sitemapper.include(params=[{"u": u} for u in UUIDS], source="routes")
    @app.get("/u/<uuid:u>")
    def uuids(u: uuid.UUID) -> str:
        return str(u)

    @sitemapper.include(params=[{"kind": "news"}, {"kind": "blog"}], source="routes")
    @app.get("/<any(news, blog):kind>/latest")
    def latest(kind: str) -> str:
        return kind

    @sitemapper.include(params=[{"slug": s} for s in ODD_TEXT[:4]], source="routes")
    @blog.get("/<slug>")
    def article(slug: str, lang: str) -> str:
        return slug

    @sitemapper.include(params=[{"item": i} for i in INTS[:3]], source="routes")
    @shop.get("/<currency>/<int:item>")
    def product(currency: str, item: int) -> str:
        return f"{currency}{item}"

    @sitemapper.include(params=[{"post_id": 3, "ref": "feed & more"}], source="routes")
    @app.get("/with-query/<int:post_id>")
    def with_query(post_id: int) -> str:
        return str(post_id)

    @sitemapper.include(source="routes")
    @app.get("/")
    def home() -> str:
        return "home"

    app.register_blueprint(blog)
    app.register_blueprint(shop)

    if with_url_for_twin:

        @sitemapper.source("twin")
        def twin() -> Iterator[Entry]:
            for endpoint, values, fields in flask_expected_items():
                yield Entry(url_for(endpoint, _external=True, **values), **fields)

    return app


def flask_expected_items() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """The (endpoint, values, fields) of every URL :func:`flask_app` lists, in order."""
    items: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    items += [("post", {"post_id": i}, FIELDS) for i in INTS]
    items += [("tag", {"tag": text}, {}) for text in ODD_TEXT]
    items += [("files", {"p": path}, {}) for path in ODD_PATHS]
    items += [("floats", {"x": x}, {}) for x in FLOATS]
    items += [("uuids", {"u": u}, {}) for u in UUIDS]
    items += [("latest", {"kind": kind}, {}) for kind in ("news", "blog")]
    items += [("blog.article", {"slug": s}, {}) for s in ODD_TEXT[:4]]
    items += [("shop.product", {"item": i}, {}) for i in INTS[:3]]
    items += [("with_query", {"post_id": 3, "ref": "feed & more"}, {})]
    items += [("home", {}, {})]
    return items


# -- Starlette ------------------------------------------------------------------------

ASGI_TEXT = [text for text in ODD_TEXT if "/" not in text]


def starlette_app(*, with_url_for_twin: bool = False) -> Any:
    """A Starlette app listing odd values through ``SitemapRoutes.include``."""
    routes = asgi_sitemap.SitemapRoutes("routes")

    async def view(request: Any) -> PlainTextResponse:
        return PlainTextResponse("ok")

    def endpoint() -> Any:
        async def marked(request: Any) -> PlainTextResponse:
            return await view(request)

        return marked

    post, tag, files, floats, uuids, inner, home = (endpoint() for _ in range(7))
    routes.include(params=lambda: [({"post_id": i}, FIELDS) for i in INTS])(post)
    routes.include(params=[{"tag": text} for text in ASGI_TEXT])(tag)
    routes.include(params=[{"p": path} for path in ODD_PATHS])(files)
    routes.include(params=[{"x": x} for x in FLOATS])(floats)
    routes.include(params=[{"u": u} for u in UUIDS])(uuids)
    routes.include(params=[{"slug": s, "section": "s p"} for s in ASGI_TEXT[:4]])(inner)
    routes.include()(home)

    app_routes = [
        Route("/posts/{post_id:int}", post, name="post"),
        Route("/tags/{tag}/", tag, name="tag"),
        Route("/files/{p:path}", files, name="files"),
        Route("/f/{x:float}", floats, name="floats"),
        Route("/u/{u:uuid}", uuids, name="uuids"),
        Mount(
            "/docs/{section}",
            routes=[Mount("/inner", routes=[Route("/{slug}", inner, name="page")])],
            name="docs",
        ),
        Route("/", home, name="home"),
    ]
    if with_url_for_twin:

        async def twin() -> Any:
            for name, values, fields in starlette_expected_items():
                yield Entry(asgi_sitemap.url_for(name, **values), **fields)

        sources: list[Any] = [asgi_sitemap.AsyncUrlSource.from_object("twin", twin)]
    else:
        sources = []
    return asgi_sitemap.SitemapMiddleware(
        Starlette(routes=app_routes), sources, routes=routes, base_url=BASE_URL
    )


def starlette_expected_items() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """The (name, values, fields) of every URL :func:`starlette_app` lists, in order."""
    items: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    items += [("post", {"post_id": i}, FIELDS) for i in INTS]
    items += [("tag", {"tag": text}, {}) for text in ASGI_TEXT]
    items += [("files", {"p": path}, {}) for path in ODD_PATHS]
    items += [("floats", {"x": x}, {}) for x in FLOATS]
    items += [("uuids", {"u": u}, {}) for u in UUIDS]
    items += [("docs:page", {"slug": s, "section": "s p"}, {}) for s in ASGI_TEXT[:4]]
    items += [("home", {}, {})]
    return items
