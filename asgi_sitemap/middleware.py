"""Pure ASGI middleware: sitemaps and robots.txt in front of any ASGI application.

::

    app = SitemapMiddleware(app, {"posts": all_posts}, base_url="https://example.com")
    # Starlette / FastAPI:  app.add_middleware(SitemapMiddleware, sources={...}, routes=routes)

It answers the sitemap paths and ``/robots.txt`` and passes everything else (other
paths, lifespan and websocket scopes) to the app untouched. It is not a
``BaseHTTPMiddleware``, so responses stream and the app's own streaming is unaffected.
"""

from __future__ import annotations

import logging
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
    MutableMapping,
)
from contextlib import asynccontextmanager
from typing import Any, Unpack, cast

import anyio
import anyio.lowlevel

from sitemap_core.serve.front import (
    CHUNK_BYTES,
    AsyncUrlSource,
    BasePolicy,
    BaseURL,
    ConfigurationError,
    Reply,
    Settings,
    SettingsArguments,
    Sharing,
    Site,
    Sites,
    UntrustedHostError,
    aclose,
    answer_robots,
    classify,
    close_now,
    count_index_parts_async,
    default_cache,
    is_mergeable,
    plain_text,
    request_headers,
    respond_async,
    sources_of,
)

from .context import SitemapContext, _current
from .flights import Flights
from .followers import Followers, Lead, identical
from .heap import Crowd, malloc_trim
from .relay import Relays
from .routes import SitemapRoutes
from .threads import ThreadRunner

__all__ = ["SitemapMiddleware"]

logger = logging.getLogger("asgi_sitemap")

#: Worker threads the sitemap may use at once (its own pool, apart from the app's).
SITEMAP_THREADS = 8

#: Documents rendered at once; more wait. A render runs at full speed into a relay that
#: every response for the document reads at its client's pace (asgi_sitemap.relay).
SITEMAP_RENDERS = 8

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class SitemapMiddleware:
    """Serve ``/sitemap.xml``, its pages and ``/robots.txt`` for an ASGI app.

    ``sources`` maps names to sources (sync or async callables and generators, sized
    sliceables, :class:`~sitemap_core.sources.aio.AsyncSliceable` objects) or is a list of
    :class:`~sitemap_core.sources.aio.AsyncUrlSource`. ``routes`` adds the endpoints marked
    with a :class:`~asgi_sitemap.routes.SitemapRoutes`. ``router`` is found from the
    app (``scope["app"].router``) unless given.

    The settings are keyword arguments, the same on every front (see
    :mod:`sitemap_core.serve.settings`): ``base_url`` fixes the origin of the URLs; without
    it the request's host is used when it is in ``allowed_hosts`` (default: loopback
    only) and other hosts get 400; ``robots=False`` leaves robots.txt alone;
    ``page_size``, ``robots_rules``, ``same_host_only``, ``cache_control``, ``cache``,
    ``gzip``, ``index_size``, ``extra_sitemaps`` and ``html`` shape the documents. Each
    is checked here: a bad one raises :class:`~sitemap_core.ConfigurationError`
    naming it.

    ``sites`` serves several sites, each on its own host with its own sources (and
    ``sources`` and ``routes`` are then listed by every site): see
    :mod:`sitemap_core.serve.sites` and ``docs/multisite.md``.
    """

    def __init__(
        self,
        app: ASGIApp,
        sources: Mapping[str, Any] | Iterable[AsyncUrlSource] = (),
        *,
        routes: SitemapRoutes | None = None,
        router: Any | None = None,
        sites: Mapping[str, Any] | None = None,
        **settings: Unpack[SettingsArguments],
    ) -> None:
        self.app = app
        self.settings = Settings.from_arguments(settings)
        adapted = sources_of(sources, AsyncUrlSource.from_object)
        if routes is not None:
            adapted.insert(0, routes.source())
        cache = default_cache(self.settings.cache)
        #: The declared sites, or None for one site (the request's host, if allowed).
        self.sites: Sites[AsyncUrlSource] | None = None
        if sites is not None:
            if "allowed_hosts" in settings:
                raise ConfigurationError(
                    "allowed_hosts= with sites=: the hosts of sites are the allowed hosts; drop one"
                )
            self.sites = Sites(
                sites,
                shared=adapted,
                settings=self.settings,
                adapt=AsyncUrlSource.from_object,
                cache=cache,
            )
            self.site, self.base_policy = self.sites.refusing.site, self.sites.refusing.policy
        else:
            self.site = self.settings.site(adapted, cache)
            self.base_policy = self.settings.base_policy()
        self.robots = self.settings.robots
        self.router = router
        self._limiter: anyio.CapacityLimiter | None = None
        # Concurrent requests for one document share one render, and renders are
        # bounded as the threads are (see asgi_sitemap.relay); those that need the
        # same walk of a source without a fingerprint (a count, a spooled document)
        # share it (see asgi_sitemap.flights).
        self._relays = Relays(SITEMAP_RENDERS)
        self._flights = Flights()
        self._followers = Followers()
        # The responses in flight, and the C heap given back when a crowd of them has
        # left (see asgi_sitemap.heap).
        self._crowd = Crowd(malloc_trim())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer sitemap paths; pass everything else to the wrapped app."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = _route_path(scope)
        method = scope["method"]
        site, policy = self.site, self.base_policy
        if self.sites is not None and self.sites.may_serve(path):
            # The site the (validated) host names: its own sources and memories.
            hosted = self.sites.choose(_host(scope))
            site, policy = hosted.site, hosted.policy
        action = classify(site, path, method, self.robots)
        if action == "app":
            await self.app(scope, receive, send)
        elif action == "robots":
            await self._robots(scope, receive, send, site, policy)
        else:
            await self._sitemap(scope, receive, send, method, path, site, policy)

    def _base(self, scope: Scope, policy: BasePolicy) -> BaseURL:
        return policy.resolve(scope.get("scheme", "http"), _host(scope), scope.get("root_path", ""))

    def _router(self, scope: Scope) -> Any | None:
        if self.router is not None:
            return self.router
        for candidate in (scope.get("app"), self.app):
            router = getattr(candidate, "router", None)
            if router is not None:
                return router
        return None

    async def _sitemap(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        method: str,
        path: str,
        site: Site[AsyncUrlSource],
        policy: BasePolicy,
    ) -> None:
        request = _asgi_headers(scope)
        origin = (
            scope.get("scheme"),
            _host(scope),
            scope.get("root_path"),
            scope.get("http_version"),
        )
        key = identical(site, method, path, origin, request)
        self._crowd.enter()
        try:
            # A request identical to one in flight sends that one's answer (see
            # asgi_sitemap.followers); else it answers, and identical ones follow it.
            handed = await self._followers.follow(key)
            if handed is not None:
                await _send_followed(handed, receive, send)
                return
            with self._followers.lead(key) as lead:
                await self._answer(
                    scope, receive, send, (method, path, request), site, policy, lead
                )
        finally:
            self._crowd.leave()

    async def _answer(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        asked: tuple[str, str, dict[str, str]],
        site: Site[AsyncUrlSource],
        policy: BasePolicy,
        lead: Lead,
    ) -> None:
        method, path, request = asked
        router = self._router(scope)

        tokens = []

        def base_url() -> BaseURL:
            base = self._base(scope, policy)
            # Sources (and threads started from here on) see the base URL and router.
            tokens.append(_current.set(SitemapContext(base, router)))
            return base

        try:
            async with _unwrapped(), anyio.create_task_group() as task_group:
                runner = ThreadRunner(task_group, self._thread_limiter())
                try:
                    try:
                        reply = await respond_async(
                            site,
                            method,
                            path,
                            base_url,
                            runner,
                            request,
                            scope.get("http_version", "1.1"),
                            self._sharing(task_group, lead),
                        )
                    except Exception:
                        logger.exception("sitemap %s failed before the response started", path)
                        reply = plain_text(500, "Internal Server Error\n", method == "HEAD")
                    assert reply is not None  # match() said the path is the site's
                    lead.give(reply)
                    await _send_reply(reply, receive, send, task_group)
                finally:
                    # Whatever happened, no worker thread may stay parked on a stream
                    # nobody reads: the task group would wait for it forever.
                    runner.close()
        finally:
            for token in tokens:
                _current.reset(token)

    async def _index_parts(
        self, scope: Scope, site: Site[AsyncUrlSource], policy: BasePolicy
    ) -> int:
        # How many index files robots.txt lists: counted as a sitemap request counts
        # (sync sources in our threads, the context set), one part if anything fails.
        try:
            base = self._base(scope, policy)
        except UntrustedHostError:
            return 1  # answer_robots refuses the host itself
        token = _current.set(SitemapContext(base, self._router(scope)))
        try:
            async with anyio.create_task_group() as task_group:
                runner = ThreadRunner(task_group, self._thread_limiter())
                try:
                    parts = await count_index_parts_async(
                        site, base, runner, self._sharing(task_group)
                    )
                finally:
                    runner.close()
        finally:
            _current.reset(token)
        return parts

    def _sharing(self, task_group: Any, lead: Lead | None = None) -> Sharing:
        # What one request shares with the concurrent others; shared renders run in
        # its task group (see Relays.bound); a leader notes the relays its followers
        # may read.
        seen = None if lead is None else lead.seen
        stream = self._relays.bound(task_group, self._thread_limiter(), seen)
        return Sharing(stream, self._flights.once)

    def _thread_limiter(self) -> anyio.CapacityLimiter:
        # The sitemap's own thread pool: slow crawlers holding threads for a streamed
        # sync page must not use up the app's default pool (run_in_threadpool etc.).
        # Made on first use, inside the event loop that will use it.
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(SITEMAP_THREADS)
        return self._limiter

    async def _robots(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        site: Site[AsyncUrlSource],
        policy: BasePolicy,
    ) -> None:
        head = scope["method"] == "HEAD"
        captured = _Captured()
        await self.app(_plain_get(scope), receive, captured.send)
        if not captured.understood:
            await captured.replay(send, head)
            return
        # Counting (the index parts robots.txt lists) only when the answer is ours or
        # mergeable: an app's robots.txt passed through as it is needs no count.
        content_type = next((v for k, v in captured.headers if k.lower() == "content-type"), "")
        used = captured.status == 404 or is_mergeable(captured.status, content_type)
        parts = await self._index_parts(scope, site, policy) if used else 1
        reply = answer_robots(
            captured.status,
            captured.headers,
            lambda: b"".join(captured.body),
            lambda: self._base(scope, policy),
            site.robots_rules,
            head,
            _asgi_headers(scope),
            site.cache_control,
            lambda base: parts,
            site.extra_sitemaps,
            site.feed,
            site.sitemaps_url,
        )
        if reply is None:
            await captured.replay(send, head)
        else:
            await _send_small(reply, send)


def _plain_get(scope: Scope) -> Scope:
    # robots.txt asked of the app with GET even for HEAD: an app answers HEAD without a
    # body, and the body is what the Sitemap line is merged into (and what the length
    # must describe). Without Accept-Encoding or Range, and without the server's
    # file-sending extensions, so that the body comes back whole, plain, in body
    # messages.
    headers = [
        (k, v)
        for k, v in scope.get("headers", ())
        if k.lower() not in (b"accept-encoding", b"range")
    ]
    extensions = {
        k: v
        for k, v in (scope.get("extensions") or {}).items()
        if k not in ("http.response.pathsend", "http.response.zerocopysend")
    }
    return {**scope, "method": "GET", "headers": headers, "extensions": extensions}


def _route_path(scope: Scope) -> str:
    # As Starlette's routing does: the path below where the app is mounted.
    path: str = scope["path"]
    root_path: str = scope.get("root_path", "")
    if root_path and path.startswith(root_path):
        return path[len(root_path) :] or "/"
    return path


def _host(scope: Scope) -> str:
    # The Host header, else the server's address (an HTTP/1.0 request may have none).
    host = _header(scope, b"host")
    if host is None:
        server = scope.get("server")
        host = f"{server[0]}:{server[1]}" if server else ""
    return host


def _asgi_headers(scope: Scope) -> dict[str, str]:
    return request_headers(lambda name: _header(scope, name.encode()))


def _header(scope: Scope, name: bytes) -> str | None:
    # Repeated field lines are one list (RFC 9110 5.3): join them as a proxy would,
    # so "If-None-Match" or "Accept-Encoding" sent on two lines loses nothing.
    values = [
        bytes(value).decode("latin-1")
        for key, value in scope.get("headers", ())
        if key.lower() == name
    ]
    return ", ".join(values) if values else None


async def _send_start(reply: Reply, send: Send) -> None:
    headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in reply.headers]
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})


async def _send_small(reply: Reply, send: Send) -> None:
    # A list or tuple of bytes: a cached page, robots.txt, a small answer.
    data = b"".join(cast(Iterable[bytes], reply.body))
    await _send_start(reply, send)
    # A page from the cache is one bytes object of megabytes: sent whole, each slow
    # reader's connection would buffer all of it that its reader has not taken.
    # Sent in slices, the server's flow control holds a slice until the reader takes
    # the one before, as for a streamed page.
    last = max(len(data) - 1, 0) // CHUNK_BYTES * CHUNK_BYTES
    for start in range(0, last, CHUNK_BYTES):
        await _send_chunk(send, data[start : start + CHUNK_BYTES])
    await send({"type": "http.response.body", "body": data[last:]})


@asynccontextmanager
async def _unwrapped() -> AsyncIterator[None]:
    # A task group wraps a source's error mid-stream; the server should see (and log)
    # the error itself when it cuts the transfer.
    try:
        yield
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise


async def _send_followed(reply: Reply, receive: Receive, send: Send) -> None:
    # A follower's reply (see asgi_sitemap.followers). Its task group, where its client
    # is watched while a streamed body waits on the render, is made only now: while it
    # waited for its leader it held one event, not a group.
    if _streamed(reply.body) is None:  # bytes in memory, or a spool
        await _send_reply(reply, receive, send, None)
        return
    async with _unwrapped(), anyio.create_task_group() as task_group:
        await _send_reply(reply, receive, send, task_group)


async def _send_reply(reply: Reply, receive: Receive, send: Send, task_group: Any) -> None:
    # ``task_group``, where a streamed body's client is watched: None only for a body
    # in memory or spooled, which never waits on anything but the client.
    body, streamed = reply.body, _streamed(reply.body)
    if isinstance(body, list | tuple):
        await _send_small(reply, send)
    elif streamed is None:
        await _send_spooled(reply, cast(Iterable[bytes], body), send)
    else:
        task_group.start_soon(_watch_disconnect, receive, task_group)
        await _send_streamed(reply, streamed, send)
        task_group.cancel_scope.cancel()  # stop watching for a disconnect


def _streamed(body: Iterable[bytes] | AsyncIterable[bytes]) -> AsyncIterable[bytes] | None:
    # The body as an async iterable; None for bytes in memory or a spool. Told by its
    # method, not by isinstance(body, Iterable): an ABC check keeps each new type it
    # rejects in weak references, in every subclass of the ABC it walks, for the life
    # of the process; the first crowd of followers (a relay's reader, a type no request
    # had met) left those in the arenas mapped at its peak, which then stayed mapped.
    return cast(AsyncIterable[bytes], body) if hasattr(body, "__aiter__") else None


async def _send_spooled(reply: Reply, body: Iterable[bytes], send: Send) -> None:
    # A spooled document: sent as it is read, never joined in memory.
    try:
        await _send_start(reply, send)
        for chunk in body:
            await _send_chunk(send, chunk)
        await send({"type": "http.response.body", "body": b""})
    finally:
        close_now(body)


async def _send_streamed(reply: Reply, body: AsyncIterable[bytes], send: Send) -> None:
    try:
        await _send_start(reply, send)
        async for chunk in body:
            await _send_chunk(send, chunk)
        await send({"type": "http.response.body", "body": b""})
    finally:
        # Closed here, not by the garbage collector later: a cut transfer releases its
        # source at once, and nothing of it is ever cached.
        with anyio.CancelScope(shield=True):
            await aclose(body)


async def _send_chunk(send: Send, chunk: bytes) -> None:
    await send({"type": "http.response.body", "body": chunk, "more_body": True})
    # A server's send() need not yield, nor an async source that never awaits: give the
    # loop a turn per chunk, so other requests run and a disconnect is seen.
    await anyio.lowlevel.checkpoint()


async def _watch_disconnect(receive: Receive, task_group: Any) -> None:
    # A client that goes away cancels the streaming, which stops pulling entries (and
    # lets a sync source's thread finish at its next batch).
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            task_group.cancel_scope.cancel()
            return


class _Captured:
    """Buffers what the wrapped app sends for /robots.txt (a small file)."""

    def __init__(self) -> None:
        self.status = 500
        self.headers: list[tuple[str, str]] = []
        self.body: list[bytes] = []
        self.messages: list[Message] = []
        #: False once the app sent something other than start + body messages: its
        #: answer is then passed on exactly as sent, never merged.
        self.understood = True

    async def send(self, message: Message) -> None:
        self.messages.append(message)
        if message["type"] == "http.response.start":
            self.status = int(message["status"])
            raw = [(bytes(k), bytes(v)) for k, v in message.get("headers", ())]
            self.headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in raw]
        elif message["type"] == "http.response.body":
            self.body.append(bytes(message.get("body", b"")))
        else:
            self.understood = False

    async def replay(self, send: Send, head: bool) -> None:
        for message in self.messages:
            if head and message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)
