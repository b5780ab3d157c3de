"""The ASGI twin of ``examples/multisite``: the same two sites by host, on Starlette.

Served by uvicorn in the end-to-end tests (``test_example_multisite.py``) with the
example's folder on the path: its database (``MULTISITE_DATABASE``, created on first
import), hosts and IndexNow key are the Flask example's, and its sources are the same
tables, served by ``asgi_sitemap.SitemapMiddleware(sites=...)``.
"""

from __future__ import annotations

from typing import Any

from app import BLOG, SHOP, SHOP_KEY, connect  # the Flask example: its database, made on import
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from asgi_sitemap import SitemapMiddleware, SitemapRoutes, SiteSpec, UrlBuilder, url_builder
from sitemap_core.sql import SQLiteSource


def table_source(table: str, url: UrlBuilder) -> SQLiteSource:
    """The rows of ``table`` as a sitemap source, each URL built by ``url(slug=...)``."""
    return SQLiteSource(
        connect,
        table,
        "id",
        lambda row: (url(slug=row[1]), row[2], None, None),
        columns=("id", "slug", "updated_at"),
        lastmod="updated_at",
        page_facts=f"{table}_pages",
        row_factory=None,
    )


routes = SitemapRoutes()


@routes.include(changefreq="daily", priority=1.0)
async def home(request: Request) -> HTMLResponse:
    return HTMLResponse(f"<h1>Welcome to {request.headers.get('host')}</h1>")


async def page(request: Request) -> HTMLResponse:
    return HTMLResponse(f"<h1>{request.path_params['slug']}</h1>")


sites: dict[str, Any] = {
    BLOG: {"posts": table_source("posts", url_builder("post"))},
    SHOP: SiteSpec(
        {"products": table_source("products", url_builder("product"))}, indexnow_key=SHOP_KEY
    ),
}
app = SitemapMiddleware(
    Starlette(
        routes=[
            Route("/", home),
            Route("/posts/{slug}", page, name="post"),
            Route("/products/{slug}", page, name="product"),
        ]
    ),
    routes=routes,
    sites=sites,
    feed=True,
)
