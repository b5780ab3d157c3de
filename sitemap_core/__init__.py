"""sitemap_core: the framework-free sitemap protocol.

Validated entries, streaming writers, sources with range access, the site logic that
maps a path to a document, HTTP validators, conditional requests, gzip, page caches
and robots.txt; one table of settings (``Settings``) for every front; IndexNow
submission for commands (``sitemap_core.indexnow``). No web framework
is imported here; the fronts (``flask_sitemapper``, ``asgi_sitemap``) translate
requests to and from it.
"""

from .alternates import Alternate, hreflang_cluster
from .cache import MemoryCache, PageCache, RedisCache
from .entries import ChangeFreq, Entry, normalise_lastmod, normalise_url
from .errors import ConfigurationError, InvalidEntryError, SitemapError, SitemapTooLargeError
from .hosts import LOOPBACK_HOSTS, BaseURL, UntrustedHostError, host_is_allowed
from .http import Reply
from .indexnow import IndexNowStateError, InvalidKeyError, OffHostURLError
from .media import Image
from .news import News
from .newsroom import news_cutoff
from .render import IndexEncoder, TextEncoder, UrlsetEncoder, escape
from .robots import DEFAULT_RULES, merge_sitemap_lines, robots_txt
from .serve import iter_body, respond
from .settings import Settings
from .site import Plan, Site, Target
from .sources import Limits, Sliceable, UrlSource
from .videos import Video

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
    "IndexNowStateError",
    "InvalidEntryError",
    "InvalidKeyError",
    "Limits",
    "MemoryCache",
    "News",
    "OffHostURLError",
    "PageCache",
    "Plan",
    "RedisCache",
    "Reply",
    "Settings",
    "Site",
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
