"""flask_sitemapper: sitemaps and robots.txt for Flask apps, and any WSGI app.

``Sitemapper`` is the Flask extension; ``SitemapMiddleware`` serves the same for any
WSGI application; ``url_builder`` builds an endpoint's absolute URLs inside sources,
as ``url_for(..., _external=True)`` does, several times faster. The core's public
names are re-exported, so one import suffices.

The WSGI middleware needs no Flask: the Flask parts (``Sitemapper``, ``url_builder``,
``UrlBuilder``) are imported on first use, and without Flask installed that use raises
an :class:`ImportError` naming the extra to install.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sitemap_core.serve.front import (
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
    SiteSpec,
    UrlSource,
    Video,
    hreflang_cluster,
    news_cutoff,
)

from .wsgi import SitemapMiddleware

if TYPE_CHECKING:
    # What the lazy names below resolve to, for type checkers and editors.
    from .extension import Sitemapper
    from .urls import UrlBuilder, url_builder

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
    "SiteSpec",
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

# The names that need Flask, and the module of this package defining each.
_FLASK_NAMES = {
    "Sitemapper": "extension",
    "UrlBuilder": "urls",
    "url_builder": "urls",
}

# The distributions of the ``flask`` extra, as their top-level module names.
_FLASK_MODULES = frozenset({"flask", "werkzeug"})

# What to tell someone who has the core but not the extra.
_INSTALL_HINT = 'pip install "dynamic-sitemaps[flask]"'


def __getattr__(name: str) -> Any:
    """Import the Flask parts on first use (PEP 562), so the WSGI middleware needs no Flask.

    A missing Flask or Werkzeug becomes an :class:`ImportError` that says which extra
    installs them; any other missing module is reported as it is.
    """
    module_name = _FLASK_NAMES.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    try:
        module = import_module(f".{module_name}", __name__)
    except ModuleNotFoundError as exc:
        # Only a package that is not there at all: a submodule missing from an
        # installed Flask (a version mismatch) is reported as it is.
        if exc.name not in _FLASK_MODULES:
            raise
        raise ImportError(
            f"flask_sitemapper.{name} needs Flask, which is not installed"
            f" ({exc.name!r} is missing): {_INSTALL_HINT}."
            " The WSGI SitemapMiddleware works without it.",
            name=exc.name,
        ) from exc
    value = getattr(module, name)
    # Later lookups find the name in the module's namespace, not through here.
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """List the lazy names too, as if they had been imported eagerly."""
    return sorted({*globals(), *__all__})
