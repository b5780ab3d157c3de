"""flask_sitemapper: sitemaps and robots.txt for Flask apps, and any WSGI app.

``Sitemapper`` is the Flask extension; ``SitemapMiddleware`` serves the same for any
WSGI application; ``url_builder`` builds an endpoint's absolute URLs inside sources,
as ``url_for(..., _external=True)`` does, several times faster. The core's public
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
    UrlSource,
    Video,
    hreflang_cluster,
    news_cutoff,
)

from .extension import Sitemapper
from .urls import UrlBuilder, url_builder
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
    "UrlBuilder",
    "UrlSource",
    "Video",
    "hreflang_cluster",
    "news_cutoff",
    "url_builder",
]
