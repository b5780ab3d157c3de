"""asgi_sitemap: sitemaps and robots.txt for any ASGI app (Starlette, FastAPI, ...).

``SitemapMiddleware`` is pure ASGI middleware; ``SitemapRoutes`` marks Starlette /
FastAPI endpoints; ``url_for`` builds absolute URLs inside sources. The core's public
names are re-exported, so one import suffices.
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

from .context import url_for
from .middleware import SitemapMiddleware
from .routes import SitemapRoutes

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
    "Video",
    "hreflang_cluster",
    "news_cutoff",
    "url_for",
]
