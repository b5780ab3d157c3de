"""asgi_sitemap: sitemaps and robots.txt for any ASGI app (Starlette, FastAPI, ...).

``SitemapMiddleware`` is pure ASGI middleware; ``SitemapRoutes`` marks Starlette /
FastAPI endpoints; ``url_for`` and ``url_builder`` build absolute URLs inside sources
(exactly the router's ``url_path_for`` on the site's base URL, several times faster).
The core's public names are re-exported, so one import suffices.
"""

from sitemap_core import (
    Alternate,
    ChangeFreq,
    ConfigurationError,
    Entry,
    Image,
    InvalidEntryError,
    Limits,
    MemoryCache,
    News,
    RedisCache,
    SitemapError,
    SitemapTooLargeError,
    Video,
    hreflang_cluster,
    news_cutoff,
)
from sitemap_core.aio import AsyncSliceable, AsyncUrlSource

from .middleware import SitemapMiddleware
from .routes import SitemapRoutes
from .urls import UrlBuilder, url_builder, url_for

__all__ = [
    "Alternate",
    "AsyncSliceable",
    "AsyncUrlSource",
    "ChangeFreq",
    "ConfigurationError",
    "Entry",
    "Image",
    "InvalidEntryError",
    "Limits",
    "MemoryCache",
    "News",
    "RedisCache",
    "SitemapError",
    "SitemapMiddleware",
    "SitemapRoutes",
    "SitemapTooLargeError",
    "UrlBuilder",
    "Video",
    "hreflang_cluster",
    "news_cutoff",
    "url_builder",
    "url_for",
]
