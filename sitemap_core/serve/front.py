"""The contract between the core and its fronts: the one module they import from.

``flask_sitemapper`` and ``asgi_sitemap`` translate a framework's requests to and from
the core; everything they use of it is named here, so that every other core module
stays private to the core and can change without a front noticing.
"""

from sitemap_core.errors import (
    ConfigurationError,
    InvalidEntryError,
    SitemapError,
    SitemapTooLargeError,
)
from sitemap_core.limits import CHUNK_BYTES
from sitemap_core.memory.cache import MemoryCache, PageCache, RedisCache, default_cache
from sitemap_core.model.alternates import Alternate, hreflang_cluster
from sitemap_core.model.entries import ChangeFreq, Entry, LastmodInput
from sitemap_core.model.hosts import (
    LOOPBACK_HOSTS,
    BasePolicy,
    BaseURL,
    UntrustedHostError,
    check_allowed_hosts,
    check_host,
)
from sitemap_core.model.images import Image
from sitemap_core.model.news import News
from sitemap_core.model.rows import Row, not_under
from sitemap_core.model.values import lastmod_instant
from sitemap_core.model.videos import Video
from sitemap_core.serve.compress import accepts_gzip
from sitemap_core.serve.document import Ready, finish_spooled
from sitemap_core.serve.drive_async import (
    Once,
    Render,
    Share,
    Sharing,
    chained,
    count_index_parts_async,
    respond_async,
)
from sitemap_core.serve.drive_sync import count_index_parts, respond
from sitemap_core.serve.flights import Flight, Flights, ThreadFlights
from sitemap_core.serve.http import (
    ALLOWED_METHODS,
    XML,
    Reply,
    method_not_allowed,
    not_found,
    plain_text,
)
from sitemap_core.serve.indexnow_key import key_file_path
from sitemap_core.serve.request import (
    answer_robots,
    classify,
    environ_headers,
    refuse_host,
    request_headers,
)
from sitemap_core.serve.settings import FLASK_PREFIX, OPTIONS, Settings, SettingsArguments
from sitemap_core.serve.site import PAGE_NAME, Plan, Site
from sitemap_core.serve.sites import Hosted, Sites, SiteSpec
from sitemap_core.serve.spool import Chunks, Spool
from sitemap_core.sources.aio import (
    THREAD_BATCHES,
    AsyncSliceable,
    AsyncUrlSource,
    Runner,
    aclose,
)
from sitemap_core.sources.base import (
    Limits,
    SourceOptions,
    UrlSource,
    check_name,
    close_now,
    coerce_batch,
    sources_of,
    walk_count,
)
from sitemap_core.sources.newsroom import news_cutoff
from sitemap_core.sources.params import (
    FINGERPRINT_ITEMS,
    Languages,
    ParamItem,
    Params,
    check_params,
    entry_defaults,
    iter_param_entries,
    param_entries,
    param_result,
    params_fingerprint,
    wraps,
)
from sitemap_core.write.encoders import IndexEncoder
from sitemap_core.write.feed import FEED_PATH
from sitemap_core.write.robots import is_mergeable

__all__ = [
    "ALLOWED_METHODS",
    "CHUNK_BYTES",
    "FEED_PATH",
    "FINGERPRINT_ITEMS",
    "FLASK_PREFIX",
    "LOOPBACK_HOSTS",
    "OPTIONS",
    "PAGE_NAME",
    "THREAD_BATCHES",
    "XML",
    "Alternate",
    "AsyncSliceable",
    "AsyncUrlSource",
    "BasePolicy",
    "BaseURL",
    "ChangeFreq",
    "Chunks",
    "ConfigurationError",
    "Entry",
    "Flight",
    "Flights",
    "Hosted",
    "Image",
    "IndexEncoder",
    "InvalidEntryError",
    "Languages",
    "LastmodInput",
    "Limits",
    "MemoryCache",
    "News",
    "Once",
    "PageCache",
    "ParamItem",
    "Params",
    "Plan",
    "Ready",
    "RedisCache",
    "Render",
    "Reply",
    "Row",
    "Runner",
    "Settings",
    "SettingsArguments",
    "Share",
    "Sharing",
    "Site",
    "SiteSpec",
    "SitemapError",
    "SitemapTooLargeError",
    "Sites",
    "SourceOptions",
    "Spool",
    "ThreadFlights",
    "UntrustedHostError",
    "UrlSource",
    "Video",
    "accepts_gzip",
    "aclose",
    "answer_robots",
    "chained",
    "check_allowed_hosts",
    "check_host",
    "check_name",
    "check_params",
    "classify",
    "close_now",
    "coerce_batch",
    "count_index_parts",
    "count_index_parts_async",
    "default_cache",
    "entry_defaults",
    "environ_headers",
    "finish_spooled",
    "hreflang_cluster",
    "is_mergeable",
    "iter_param_entries",
    "key_file_path",
    "lastmod_instant",
    "method_not_allowed",
    "news_cutoff",
    "not_found",
    "not_under",
    "param_entries",
    "param_result",
    "params_fingerprint",
    "plain_text",
    "refuse_host",
    "request_headers",
    "respond",
    "respond_async",
    "sources_of",
    "walk_count",
    "wraps",
]
