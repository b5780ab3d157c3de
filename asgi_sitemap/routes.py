"""Starlette and FastAPI routes as a URL source.

::

    routes = SitemapRoutes()

    @app.get("/posts/{post_id}")                     # FastAPI; or Route(...) in Starlette
    @routes.include(params=post_params, changefreq="weekly")
    async def post(post_id: int): ...

Each marked endpoint is found among the app's routes (through mounts, by identity,
through ``functools.wraps`` wrappers) and its URLs are built on the trusted base URL
by a :class:`~asgi_sitemap.urls.UrlBuilder` per route name: exactly what the router's
own ``url_path_for`` gives, at a fraction of its cost. ``params`` may be a list, a sync callable
(run in a worker thread), a coroutine function or an async generator function.
"""

from __future__ import annotations

import hashlib
import inspect
import sys
import weakref
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import aclosing
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, TypeVar

from sitemap_core.serve.front import (
    FINGERPRINT_ITEMS,
    THREAD_BATCHES,
    AsyncUrlSource,
    ChangeFreq,
    ConfigurationError,
    Entry,
    Languages,
    LastmodInput,
    Params,
    Row,
    Runner,
    check_name,
    check_params,
    coerce_batch,
    entry_defaults,
    iter_param_entries,
    param_result,
    params_fingerprint,
    walk_count,
    wraps,
)

from .context import current
from .urls import UrlBuilder

__all__ = ["SitemapRoutes"]

F = TypeVar("F", bound=Callable[..., Any])
#: How many items of a sync callable's or an async generator's params are counted at
#: a time (the first part; then THREAD_BATCHES times as many per hand-over).
_COUNTED_PART = 1_024
#: Builds a route's absolute URL from its path parameters.
BuildUrl = Callable[[Mapping[str, Any]], str]


@dataclass
class _Spec:
    endpoint: Callable[..., Any]
    params: Params | None
    defaults: dict[str, Any] = field(default_factory=dict)
    languages: Languages | None = None

    @property
    def label(self) -> str:
        return getattr(self.endpoint, "__qualname__", repr(self.endpoint))


class SitemapRoutes:
    """A registry of endpoints to list in the sitemap, as the source ``name``."""

    def __init__(self, name: str = "pages") -> None:
        self.name = check_name(name)
        self._specs: list[_Spec] = []
        #: The router whose routes were digested, and that digest (see _fingerprint).
        self._fixed: tuple[weakref.ref[Any], str] | None = None
        #: Set once params could not be digested: the source has no fingerprint.
        self._unfingerprinted = False

    def include(
        self,
        *,
        params: Params | None = None,
        lastmod: LastmodInput | None = None,
        changefreq: ChangeFreq | str | None = None,
        priority: float | None = None,
        hreflang: str | None = None,
        languages: Iterable[str] | None = None,
        x_default: str | None = None,
    ) -> Callable[[F], F]:
        """Mark an endpoint; bad arguments raise here, at import time.

        A route with path parameters needs ``params``: dicts of path values, or
        ``(values, fields)`` pairs with per-URL ``lastmod`` / ``changefreq`` /
        ``priority`` (or ``images`` / ``videos`` / ``news`` / ``alternates``). The
        rest are defaults for every URL of the route.

        hreflang: for a route whose path parameter ``hreflang`` holds the language
        (``/{lang}/about``), ``languages`` lists its values; each param item gives one
        URL per language, each listing all of them (and ``x-default``, the URL of
        ``x_default``) as alternates.
        """
        defaults = entry_defaults(lastmod, changefreq, priority)

        def decorator(endpoint: F) -> F:
            if not callable(endpoint):
                raise ConfigurationError(f"include() decorates an endpoint, got {endpoint!r}")
            label = getattr(endpoint, "__qualname__", repr(endpoint))
            group = Languages.build(hreflang, languages, x_default, label)
            spec = _Spec(endpoint, params, defaults, group)
            check_params(params, spec.label)
            self._specs.append(spec)
            return endpoint

        return decorator

    def source(self) -> AsyncUrlSource:
        """The marked routes as a source (the middleware calls this)."""
        return AsyncUrlSource(self.name, self._count, self._batches, fingerprint=self._fingerprint)

    async def _fingerprint(self, runner: Runner, start: int, stop: int) -> str | None:
        """The fingerprint of the whole source (every range has it).

        The URLs come from the app's routes, fixed while it serves, and from the
        params: so the routes (every path of the router's tree, and what each spec
        adds: its defaults and languages) are digested once per router, and the
        params' values on each request (one call of each ``params``, as counting them
        is). None when a params value has no stable encoding (see
        :func:`~sitemap_core.sources.params.params_fingerprint`): the source's documents are
        then rendered to learn their ETag, as before.
        """
        router = current().router
        if router is None or self._unfingerprinted:
            return None
        parts = [self._routes_digest(router)]
        for spec in self._specs:
            if spec.params is None:
                continue
            # One item past the most that are digested: more means none (then never
            # tried again, as for a value without a stable encoding).
            items = await _first_items(spec, runner, FINGERPRINT_ITEMS + 1)
            digest = params_fingerprint(items)
            if digest is None:
                self._unfingerprinted = True
                return None
            parts.append(digest)
        return ":".join(parts)

    def _routes_digest(self, router: Any) -> str:
        """:meth:`_fixed_part` of ``router``, remembered for the last router."""
        known = self._fixed
        if known is not None and known[0]() is router:
            return known[1]
        fixed = self._fixed_part(router)
        # Routers compare by value and cannot be dict keys: the last one is kept by
        # identity (an app has one; a test may build several).
        try:
            self._fixed = (weakref.ref(router), fixed)
        except TypeError:  # a router without weak references: digested each time
            self._fixed = None
        return fixed

    def _fixed_part(self, router: Any) -> str:
        # The specs' routes must be found (as counting needs); the paths of every route
        # give mounts' prefixes and converters too, so a deploy that moves a route or
        # a mount changes every ETag of the source though no params value moved.
        specs = [
            (
                spec.label,
                [name for name, _route in self._routes_of(spec)],
                _fields(spec.defaults),
                spec.languages,
            )
            for spec in self._specs
        ]
        text = repr((specs, list(_route_tree(router.routes))))
        return "routes:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    # The router is only known while a request is served (scope["app"]), so routes
    # are matched then, from the context the middleware sets.

    def _routes_of(self, spec: _Spec) -> list[tuple[str, Any]]:
        router = current().router
        if router is None:
            raise ConfigurationError("SitemapRoutes needs a Starlette / FastAPI router")
        found = [
            (name, route)
            for name, route in _named_routes(router.routes)
            if wraps(route.endpoint, spec.endpoint)
        ]
        if not found:
            raise ConfigurationError(
                f"{spec.label} is marked with include() but is not a route of this app"
            )
        for name, route in found:
            _check_path_parameters(spec, name, route)
        return found

    async def _count(self, runner: Runner) -> int:
        total = 0
        for spec in self._specs:
            routes = len(self._routes_of(spec))
            per_item = 1 if spec.languages is None else len(spec.languages.values)
            total += routes * per_item * await _count_params(spec, runner)
        return total

    async def _batches(
        self, runner: Runner, start: int, stop: int, size: int
    ) -> AsyncIterator[list[Entry]]:
        # Route sources are small by nature; page N skips the entries before it.
        position = 0
        pending: list[Entry | Row] = []
        async with aclosing(self._every_batch(runner, size)) as batches:
            async for batch in batches:
                pending += batch[max(start - position, 0) : max(stop - position, 0)]
                position += len(batch)
                if len(pending) >= size:
                    yield coerce_batch(pending, self.name)
                    pending = []
                if position >= stop:
                    break
        if pending:
            yield coerce_batch(pending, self.name)

    async def _every_batch(
        self, runner: Runner, size: int
    ) -> AsyncGenerator[Sequence[Entry | Row], None]:
        # The entries of every marked route in turn; each route's params closed as soon
        # as its reader stops (a sync callable's worker thread with them).
        for spec in self._specs:
            for name, _route in self._routes_of(spec):
                async with aclosing(_spec_batches(spec, name, runner, size)) as batches:
                    async for batch in batches:
                        yield batch


def _check_path_parameters(spec: _Spec, name: str, route: Any) -> None:
    # The route has the parameter its hreflang languages fill in, and any other path
    # parameter has values from params=.
    variable = None if spec.languages is None else spec.languages.variable
    language = set() if variable is None else {variable}
    declared = set(getattr(route, "param_convertors", None) or ())
    if not language <= declared:
        raise ConfigurationError(
            f"route {name!r} has no path parameter {variable!r} for its hreflang languages"
        )
    if declared - language and spec.params is None:
        raise ConfigurationError(
            f"route {name!r} has path parameters; include() needs params= for it"
        )


def _named_routes(routes: Iterable[Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for route in routes:
        endpoint = getattr(route, "endpoint", None)
        children = getattr(route, "routes", None)
        if endpoint is not None:
            if getattr(route, "name", None):
                yield prefix + route.name, route
        elif children is not None:  # a Mount / Host
            name = getattr(route, "name", None)
            yield from _named_routes(children, f"{prefix}{name}:" if name else prefix)
        else:
            yield from _named_routes(_included_routes(route), prefix)


def _included_routes(route: Any) -> list[Any]:
    """The routes of a FastAPI included router, which newer FastAPI keeps as one route.

    FastAPI's ``iter_route_contexts`` lists them with their effective name, endpoint and
    path parameters (the prefix's too); only looked up when FastAPI is in use.
    """
    expand = getattr(sys.modules.get("fastapi.routing"), "iter_route_contexts", None)
    if expand is None:
        return []
    # A route it does not expand comes back as itself (or wrapped): not followed again.
    return [
        context
        for context in expand([route])
        if context is not route and (getattr(context, "route", None) is not route)
    ]


def _route_tree(routes: Iterable[Any], depth: int = 0) -> Iterator[tuple[Any, ...]]:
    """Every route of a router as (depth, kind, path or host, name), mounts' routes
    after their mount: what the URLs of named routes are built from."""
    for route in routes:
        where = getattr(route, "path", None) or getattr(route, "host", None)
        yield depth, type(route).__name__, where, getattr(route, "name", None)
        inner = getattr(route, "routes", None)
        if isinstance(inner, Sequence) and depth < 32:  # a Mount's or a Host's
            yield from _route_tree(inner, depth + 1)


def _fields(defaults: Mapping[str, Any]) -> tuple[Any, ...]:
    # The default fields as entries write them: a date and its text agree.
    sample = Entry("http://fields.invalid/", **defaults)
    return sample.lastmod, sample.changefreq, sample.priority


async def _param_chunks(
    spec: _Spec, runner: Runner, size: int
) -> AsyncGenerator[Iterable[Any], None]:
    """The items of one call of ``spec.params``, in parts: a list or tuple whole,
    other iterables ``size`` items or more at a time.

    A sync callable is called, and its items pulled, in one worker thread (a query and
    its cursor may block, and may be bound to that thread), which hands a list or
    tuple over whole (nothing left in it can block); anything else is read on the
    event loop. The entries are then made on the loop, beside the writer: a thread
    making them while the loop writes would contend for the GIL.
    """
    params = spec.params
    if params is None:
        yield [{}]  # a route without path parameters: one URL
    elif inspect.isasyncgenfunction(params):
        async with aclosing(_async_chunks(params(), size)) as parts:
            async for chunk in parts:
                yield chunk
    elif inspect.iscoroutinefunction(params):
        yield param_result(await params(), spec.label)
    elif callable(params):
        sync_params = params
        chunks = runner.pull_sync(lambda: _chunks(param_result(sync_params(), spec.label), size))
        try:
            async for items in chunks:
                yield items
        finally:
            await chunks.aclose()  # type: ignore[attr-defined]
    else:
        yield param_result(params, spec.label)


async def _first_items(spec: _Spec, runner: Runner, limit: int) -> list[Any]:
    # The first ``limit`` items of one call of spec.params (all of them when fewer).
    items: list[Any] = []
    async with aclosing(_param_chunks(spec, runner, limit)) as chunks:
        async for chunk in chunks:
            items += islice(chunk, limit - len(items))
            if len(items) == limit:
                break
    return items


async def _count_params(spec: _Spec, runner: Runner) -> int:
    # Counted by parts as pages are read (a list at once): no part is kept.
    async with aclosing(_param_chunks(spec, runner, _COUNTED_PART)) as chunks:
        return sum([walk_count(chunk) async for chunk in chunks])


async def _spec_batches(
    spec: _Spec, name: str, runner: Runner, size: int
) -> AsyncGenerator[Sequence[Entry | Row], None]:
    build_url = UrlBuilder(name).for_request()  # this request's, looked up once
    async with aclosing(_param_chunks(spec, runner, size)) as chunks:
        async for chunk in chunks:
            for batch in _sync_batches(spec, name, chunk, size, build_url):
                yield batch


async def _async_chunks(
    generator: AsyncGenerator[Any, None], size: int
) -> AsyncGenerator[list[Any], None]:
    # The items of an async generator of params, ``size`` at a time; closed when done.
    try:
        chunk: list[Any] = []
        async for item in generator:
            chunk.append(item)
            if len(chunk) == size:
                yield chunk
                chunk = []
        if chunk:
            yield chunk
    finally:
        await generator.aclose()


def _sync_batches(
    spec: _Spec, name: str, items: Iterable[Any], size: int, build_url: BuildUrl
) -> Iterator[list[Entry | Row]]:
    # Items with only the usual fields come as tuple rows, which _batches hands on as
    # a RowBatch: written without building an Entry each (see iter_param_entries).
    entries = iter_param_entries(items, name, spec.defaults, spec.languages, build_url, rows=True)
    batch = list(islice(entries, size))
    while batch:
        yield batch
        batch = list(islice(entries, size))


def _chunks(items: Iterable[Any], size: int) -> Iterator[Sequence[Any]]:
    # A sync callable's items, pulled in its worker thread: a list or tuple whole (in
    # memory, nothing left to block: read on the loop), else ``size`` first (the first
    # byte leaves early), then THREAD_BATCHES batches' worth per hand-over, each
    # hand-over a round trip to the event loop.
    if isinstance(items, list | tuple):
        yield items
        return
    iterator = iter(items)
    chunk = list(islice(iterator, size))
    while chunk:
        yield chunk
        chunk = list(islice(iterator, size * THREAD_BATCHES))
