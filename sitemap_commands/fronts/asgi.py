"""Where the ``sitemap`` command finds the sitemap of an ASGI app with the middleware
(see :mod:`sitemap_commands.cli`), and how it asks the app for one of its documents.

:func:`find` is this front's entry in the entry-point group ``sitemap_commands.fronts``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

import anyio
import anyio.from_thread

from asgi_sitemap.middleware import SitemapMiddleware
from asgi_sitemap.threads import ThreadRunner
from sitemap_commands.build import Fetch, Fetched
from sitemap_commands.cli import CommandError, Served, middleware_base
from sitemap_commands.sites import declared_site, host_header, several, site_base
from sitemap_core import BaseURL
from sitemap_core.model.hosts import BasePolicy
from sitemap_core.model.recent import Recent
from sitemap_core.serve.site import Site
from sitemap_core.serve.sites import Sites
from sitemap_core.sources.aio import AsyncUrlSource, recent_changes_async

__all__ = ["AsgiFetcher", "asgi_served", "find"]


def find(candidate: object, base: BaseURL | None, outer: object) -> Served | None:
    """The sitemap of ``candidate`` if it is an :class:`asgi_sitemap.SitemapMiddleware`,
    else None (see :class:`sitemap_commands.cli.Find`)."""
    if isinstance(candidate, SitemapMiddleware):
        return asgi_served(candidate, base, outer=outer)
    return None


# How many body messages may wait between the app and the file being written: enough
# to overlap rendering with writing, few enough that memory stays flat.
_QUEUED_MESSAGES = 8


class AsgiFetcher:
    """``fetch(path, headers)`` for an ASGI app, called in-process as a server would.

    The app runs in an event loop of its own (a blocking portal's thread, started on
    the first fetch of each process, so a forked worker starts its own); its body
    messages are handed over as they are sent, so a document streams to its file.
    """

    def __init__(
        self,
        app: Any,
        base: BaseURL,
        prepare: Callable[[], None] | None = None,
        host: str | None = None,
    ) -> None:
        self.app = app
        self.base = base
        self.prepare = prepare
        #: The Host header instead of the base URL's (the site of several to choose).
        self.host = host
        self._portal: tuple[int, AbstractContextManager[Any], Any] | None = None

    def _portal_now(self) -> Any:
        pid = os.getpid()
        if self._portal is None or self._portal[0] != pid:
            # A portal inherited through fork has no thread in this process.
            manager = anyio.from_thread.start_blocking_portal()
            self._portal = (pid, manager, manager.__enter__())
        return self._portal[2]

    def close(self) -> None:
        """Stop this process's event loop thread, if one was started."""
        if self._portal is not None and self._portal[0] == os.getpid():
            self._portal[1].__exit__(None, None, None)
        self._portal = None

    def scope(self, path: str, headers: Mapping[str, str]) -> dict[str, Any]:
        """The HTTP scope of ``GET path`` on the base URL's host."""
        parts = self.base.url.split("/", 3)
        scheme, host = parts[0].rstrip(":"), parts[2]
        root = "/" + parts[3] if len(parts) > 3 else ""
        port = int(host.rsplit(":", 1)[1]) if ":" in host.rsplit("]", 1)[-1] else None
        if port is None:
            port = 443 if scheme == "https" else 80
        return {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": scheme,
            "path": root + path,
            "raw_path": (root + path).encode(),
            "query_string": b"",
            "root_path": root,
            "headers": [(b"host", (self.host or host).encode())]
            + [(name.lower().encode(), value.encode()) for name, value in headers.items()],
            "server": (host.rsplit(":", 1)[0].strip("[]"), port),
            "client": ("127.0.0.1", 0),
        }

    def __call__(self, path: str, headers: Mapping[str, str]) -> Fetched:
        """See :data:`sitemap_commands.build.Fetch`."""
        if self.prepare is not None:
            self.prepare()
        portal = self._portal_now()
        scope = self.scope(path, headers)
        sender, receiver = portal.call(_stream)
        requested = False

        async def receive() -> dict[str, Any]:
            nonlocal requested
            if not requested:
                requested = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await anyio.sleep_forever()  # the client stays until the response ends
            raise AssertionError("unreachable")

        async def run() -> None:
            async with sender:
                try:
                    await self.app(scope, receive, sender.send)
                except Exception as exc:  # handed to the reader, in order
                    await sender.send(exc)

        future = portal.start_task_soon(run)

        def take() -> Any:
            try:
                message = portal.call(receiver.receive)
            except anyio.EndOfStream:
                return None
            if isinstance(message, BaseException):
                raise message
            return message

        try:
            start = take()
        except BaseException:
            future.cancel()
            raise
        if start is None or start.get("type") != "http.response.start":
            future.cancel()
            raise CommandError(f"the ASGI app sent no response to GET {path}")
        answered = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in start["headers"]]

        def body() -> Iterator[bytes]:
            try:
                while (message := take()) is not None:
                    if message.get("body"):
                        yield message["body"]
                    if not message.get("more_body", False):
                        break
            finally:
                future.cancel()
                portal.call(receiver.aclose)

        return Fetched(int(start["status"]), answered, body())


async def _stream() -> tuple[Any, Any]:
    # Made in the loop that uses it.
    return anyio.create_memory_object_stream[Any](_QUEUED_MESSAGES)


def asgi_served(
    middleware: SitemapMiddleware, base: BaseURL | None = None, *, outer: Any = None
) -> Served:
    """The sitemap of :class:`~asgi_sitemap.SitemapMiddleware`: its async sources are
    asked in an event loop of the command's own, sync ones in worker threads.
    Documents are fetched from ``outer`` (what a server runs), else the middleware; a
    ``base`` other than its ``base_url=`` is fixed on it for the command."""
    if middleware.sites is not None:
        return _asgi_sites(middleware, outer, middleware.sites)
    site = middleware.site
    known = middleware_base(base, middleware.settings.base_url, "ASGI")
    recent = _recent(site)

    def prepare() -> None:
        # The command builds for the base URL it is given, whatever the request's host.
        if middleware.base_policy.fixed != known:
            middleware.base_policy = BasePolicy(known, middleware.base_policy.allowed_hosts)

    fetcher = AsgiFetcher(middleware if outer is None else outer, known, prepare)
    fetch: Fetch = fetcher
    return Served(
        "ASGI SitemapMiddleware", known, site.indexnow_key, recent, fetch, site, fetcher.close
    )


def _asgi_sites(middleware: SitemapMiddleware, outer: Any, sites: Sites[AsyncUrlSource]) -> Served:
    # An ASGI middleware of several sites (sites=): each site served as its host asks.
    def for_site(host: str, base: BaseURL | None) -> Served:
        hosted = declared_site(sites, host, "sites=")
        known = site_base(host, hosted.policy.fixed, base)
        fetcher = AsgiFetcher(
            middleware if outer is None else outer, known, host=host_header(host, hosted)
        )
        site = hosted.site
        label = f"site {host!r} of ASGI SitemapMiddleware"
        return Served(label, known, site.indexnow_key, _recent(site), fetcher, site, fetcher.close)

    return several("ASGI SitemapMiddleware", sites, for_site)


def _recent(site: Site[AsyncUrlSource]) -> Callable[[int, datetime | None], list[Recent]]:
    # ``recent(limit, since)`` of a site's sources: async ones in an event loop of the
    # command's own, sync ones in worker threads.
    async def gather(limit: int, since: datetime | None) -> list[Recent]:
        async with anyio.create_task_group() as task_group:
            runner = ThreadRunner(task_group)
            try:
                found = await recent_changes_async(site.sources.values(), runner, limit, since)
            finally:
                runner.close()
        return found

    def recent(limit: int, since: datetime | None) -> list[Recent]:
        return anyio.run(gather, limit, since)

    return recent
