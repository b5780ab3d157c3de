"""What a source may ask about the request being answered: absolute URLs.

While the middleware serves a sitemap it sets the site's trusted base URL and the app's
router here (a new :class:`SitemapContext` per request), so a source (sync ones run in
a worker thread, which inherits the context) can build absolute URLs like Starlette's
``request.url_for``. :func:`url_for` here is the reference: the router's own
``url_path_for`` on the base URL. ``asgi_sitemap.url_for`` and
:func:`asgi_sitemap.url_builder` give the same, faster (:mod:`asgi_sitemap.urls`).
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from sitemap_core.serve.front import BaseURL

__all__ = ["SitemapContext", "current", "url_for"]


@dataclass(frozen=True)
class SitemapContext:
    """The base URL of the sitemap being served and the router of the app, if any."""

    base: BaseURL
    router: Any | None


_current: ContextVar[SitemapContext] = ContextVar("asgi_sitemap_context")


def current() -> SitemapContext:
    """The context of the sitemap being served; LookupError outside of one."""
    try:
        return _current.get()
    except LookupError:
        raise LookupError("asgi_sitemap.url_for() works only while a sitemap is served") from None


def url_for(name: str, /, **path_params: Any) -> str:
    """Absolute URL of the route ``name`` on the site's trusted base URL.

    Uses the router's own ``url_path_for``, so mounts and converters apply.
    """
    context = current()
    if context.router is None:
        raise LookupError("no router: wrap a Starlette / FastAPI app, or pass router=")
    path = str(context.router.url_path_for(name, **path_params))
    return context.base.join(path)
