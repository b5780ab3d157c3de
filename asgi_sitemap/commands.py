"""Where the ``sitemap`` command finds the sitemap of an ASGI app with the middleware
(see :mod:`sitemap_core.cli`)."""

from __future__ import annotations

from datetime import datetime

import anyio

from sitemap_core import BaseURL
from sitemap_core.cli import CommandError, Served
from sitemap_core.feed import Recent, merge_recent

from .middleware import SitemapMiddleware
from .threads import ThreadRunner

__all__ = ["asgi_served"]


def asgi_served(middleware: SitemapMiddleware, base: BaseURL | None = None) -> Served:
    """The sitemap of :class:`~asgi_sitemap.SitemapMiddleware`: its async sources are
    asked in an event loop of the command's own, sync ones in worker threads."""
    site = middleware.site
    base = base or middleware.settings.base_url
    if base is None:
        raise CommandError(
            "the ASGI SitemapMiddleware has no base_url=: a command has no request to"
            " take the host from; set it, or pass --base-url"
        )

    async def gather(limit: int, since: datetime | None) -> list[Recent]:
        async with anyio.create_task_group() as task_group:
            runner = ThreadRunner(task_group)
            try:
                groups = [
                    await source.recent(runner, limit, since) for source in site.sources.values()
                ]
            finally:
                runner.close()
        return merge_recent(groups, limit)

    def recent(limit: int, since: datetime | None) -> list[Recent]:
        return anyio.run(gather, limit, since)

    return Served("ASGI SitemapMiddleware", base, site.indexnow_key, recent)
