"""flask_sitemapper: sitemaps and robots.txt for Flask apps, and any WSGI app.

``Sitemapper`` is the Flask extension; ``SitemapMiddleware`` serves the same for any
WSGI application. The core's public names are re-exported, so one import suffices.
"""

from sitemap_core import (
    ChangeFreq,
    ConfigurationError,
    Entry,
    InvalidEntryError,
    Limits,
    MemoryCache,
    RedisCache,
    SitemapError,
    SitemapTooLargeError,
    UrlSource,
)

from .extension import Sitemapper
from .wsgi import SitemapMiddleware

__all__ = [
    "ChangeFreq",
    "ConfigurationError",
    "Entry",
    "InvalidEntryError",
    "Limits",
    "MemoryCache",
    "RedisCache",
    "SitemapError",
    "SitemapMiddleware",
    "SitemapTooLargeError",
    "Sitemapper",
    "UrlSource",
]
