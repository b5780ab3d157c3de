"""sitemap_core: the framework-free sitemap protocol.

Validated entries, streaming writers, sources with range access, the site logic that
maps a path to a document, HTTP validators, conditional requests, gzip, page caches
and robots.txt; one table of settings (``Settings``) for every front; the IndexNow
key a site serves (``sitemap_core.serve.indexnow_key``). No web framework is imported
here; the fronts (``flask_sitemapper``, ``asgi_sitemap``) translate requests to and
from it, and the commands (``sitemap_commands``: build, check, IndexNow submission)
sit above the fronts.
"""

from sitemap_core.errors import (
    ConfigurationError,
    InvalidEntryError,
    SitemapError,
    SitemapTooLargeError,
)
from sitemap_core.memory.cache import MemoryCache, PageCache, RedisCache
from sitemap_core.model.alternates import Alternate, hreflang_cluster
from sitemap_core.model.entries import ChangeFreq, Entry, normalise_lastmod, normalise_url
from sitemap_core.model.hosts import LOOPBACK_HOSTS, BaseURL, UntrustedHostError, host_is_allowed
from sitemap_core.model.images import Image
from sitemap_core.model.news import News
from sitemap_core.model.videos import Platform, Price, Restriction, Video
from sitemap_core.serve.drive_sync import iter_body, respond
from sitemap_core.serve.http import Reply
from sitemap_core.serve.indexnow_key import InvalidKeyError
from sitemap_core.serve.settings import Settings
from sitemap_core.serve.site import Plan, Site, Target
from sitemap_core.serve.sites import SiteSpec
from sitemap_core.sources.base import Limits, Sliceable, UrlSource
from sitemap_core.sources.newsroom import news_cutoff
from sitemap_core.write.encoders import IndexEncoder, TextEncoder, UrlsetEncoder, escape
from sitemap_core.write.robots import DEFAULT_RULES, merge_sitemap_lines, robots_txt

__all__ = [
    "DEFAULT_RULES",
    "LOOPBACK_HOSTS",
    "Alternate",
    "BaseURL",
    "ChangeFreq",
    "ConfigurationError",
    "Entry",
    "Image",
    "IndexEncoder",
    "InvalidEntryError",
    "InvalidKeyError",
    "Limits",
    "MemoryCache",
    "News",
    "PageCache",
    "Plan",
    "Platform",
    "Price",
    "RedisCache",
    "Reply",
    "Restriction",
    "Settings",
    "Site",
    "SiteSpec",
    "SitemapError",
    "SitemapTooLargeError",
    "Sliceable",
    "Target",
    "TextEncoder",
    "UntrustedHostError",
    "UrlSource",
    "UrlsetEncoder",
    "Video",
    "escape",
    "host_is_allowed",
    "hreflang_cluster",
    "iter_body",
    "merge_sitemap_lines",
    "news_cutoff",
    "normalise_lastmod",
    "normalise_url",
    "respond",
    "robots_txt",
]
