"""flask_sitemapper: sitemaps and robots.txt for Flask apps, and any WSGI app.

``Sitemapper`` is the Flask extension; ``SitemapMiddleware`` serves the same for any
WSGI application. The core's public names are re-exported, so one import suffices.
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
    UrlSource,
    Video,
    hreflang_cluster,
    news_cutoff,
)

from .extension import Sitemapper
from .wsgi import SitemapMiddleware

__all__ = [
    "Alternate",
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
    "SitemapTooLargeError",
    "Sitemapper",
    "UrlSource",
    "Video",
    "hreflang_cluster",
    "news_cutoff",
]
