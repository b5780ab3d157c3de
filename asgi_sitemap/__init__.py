"""asgi_sitemap: sitemaps and robots.txt for any ASGI app (Starlette, FastAPI, ...).

``SitemapMiddleware`` is pure ASGI middleware; ``SitemapRoutes`` marks Starlette /
FastAPI endpoints; ``url_for`` and ``url_builder`` build absolute URLs inside sources
(exactly the router's ``url_path_for`` on the site's base URL, several times faster).
The core's public names are re-exported, so one import suffices. It needs the
``asgi`` extra (Starlette and anyio); without it, importing it raises an
:class:`ImportError` that says so.
"""

from sitemap_core.serve.front import (
    Alternate,
    AsyncSliceable,
    AsyncUrlSource,
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
    SiteSpec,
    Video,
    hreflang_cluster,
    news_cutoff,
)

try:
    from .middleware import SitemapMiddleware
    from .routes import SitemapRoutes
    from .urls import UrlBuilder, url_builder, url_for
except ModuleNotFoundError as exc:
    # Without the extra, say which one to install rather than "No module named 'anyio'";
    # any other missing module is reported as it is.
    # Only a package that is not there at all: a submodule missing from an installed
    # Starlette (a version mismatch) is reported as it is.
    if exc.name not in ("anyio", "starlette"):
        raise
    raise ImportError(
        f"asgi_sitemap needs Starlette and anyio ({exc.name!r} is missing):"
        ' pip install "dynamic-sitemaps[asgi]"',
        name=exc.name,
    ) from exc

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
    "SiteSpec",
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
