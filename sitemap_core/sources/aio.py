"""Async sources: the asynchronous counterpart of :class:`~sitemap_core.sources.base.UrlSource`.

Nothing here picks an event loop or a thread pool. Sync sources must not block the
loop, so the front passes, per request, a :class:`Runner` that knows its concurrency
library.
"""

from __future__ import annotations

import inspect
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
)
from dataclasses import replace
from datetime import datetime
from typing import Any, Protocol, TypeVar, runtime_checkable

from sitemap_core.errors import ConfigurationError
from sitemap_core.model.entries import Entry, normalise_lastmod
from sitemap_core.model.recent import NewestEntries, Recent, merge_recent
from sitemap_core.sources.base import (
    BATCH_SIZE,
    WHOLE,
    Item,
    Limits,
    UrlSource,
    check_name,
    checked_count,
    checked_summary,
    coerce_batch,
    naming,
    newest_listed,
    range_fact,
    recent_lister,
)
from sitemap_core.sources.newsroom import news_epoch
from sitemap_core.sources.pages import Page, PageCheck, Summary, Summing

__all__ = [
    "THREAD_BATCHES",
    "AsyncSliceable",
    "AsyncUrlSource",
    "Runner",
    "aclose",
    "recent_changes_async",
]

#: Batches a worker thread pulling a sync source hands to the event loop at once.
THREAD_BATCHES = 8

T = TypeVar("T")


class Runner(Protocol):
    """How a front runs sync source code off its event loop, for one request."""

    async def run_sync(self, func: Callable[[], T]) -> T:
        """Await ``func()`` run in a worker thread (counts)."""
        ...

    def pull_sync(self, make_batches: Callable[[], Iterator[T]]) -> AsyncIterator[T]:
        """Iterate ``make_batches()`` in ONE worker thread, an item per hop.

        One thread for the whole iteration, because a source may hold objects bound to
        the thread that made them (a sqlite3 connection). Closing the async iterator
        must stop the thread's pulling and close the sync iterator.
        """
        ...


@runtime_checkable
class AsyncSliceable(Protocol):
    """An async source with range access: ``await count()`` and ``slice(start, stop)``.

    The async twin of a sized sliceable: a query doing ``COUNT(*)`` and
    ``LIMIT/OFFSET`` through an async database driver.
    """

    async def count(self) -> int:
        """How many entries there are."""
        ...

    def slice(self, start: int, stop: int) -> AsyncIterable[Item]:
        """The entries in ``[start, stop)``."""
        ...


_Count = Callable[[Runner], Awaitable[int]]
_Batches = Callable[[Runner, int, int, int], AsyncIterator[list[Entry]]]
_Fact = Callable[[Runner, int, int], Awaitable[Any]]


class AsyncUrlSource:
    """A named source with async counting and async batches of validated entries."""

    def __init__(
        self,
        name: str,
        count: _Count,
        batches: _Batches,
        *,
        fingerprint: _Fact | None = None,
        newest: _Fact | None = None,
        limits: Limits | None = None,
        threaded: UrlSource | None = None,
        recent: Callable[[int], Awaitable[Iterable[Item] | None]] | None = None,
        pages: Callable[[int, int], Awaitable[Iterable[Page] | AsyncIterable[Page]]] | None = None,
        summary: Callable[[], Awaitable[Summary]] | None = None,
    ) -> None:
        self.name = name
        self._pages = pages
        self._summary = summary
        self._count = count
        self._batches = batches
        self._fingerprint = fingerprint
        self._newest = newest
        self._recent = recent
        self.limits = limits or Limits()
        #: A plain sync source behind this one: its pages are pulled *and written* in
        #: a worker thread (see :func:`aiter_body`).
        self.threaded = threaded

    @classmethod
    def from_object(
        cls,
        name: str,
        obj: Any,
        *,
        count: Callable[[], int] | Callable[[], Awaitable[int]] | None = None,
        fingerprint: Callable[..., Any] | None = None,
        newest: Callable[..., Any] | None = None,
        page_size: int | None = None,
        max_entry_bytes: int | None = None,
        news: bool = False,
        recent: Callable[[int], Any] | None = None,
    ) -> AsyncUrlSource:
        """Adapt any supported source object.

        * an :class:`AsyncSliceable` (async count, async slice): the big-site path;
        * an async generator function: counted by walking, sliced by skipping, unless
          ``count=`` (sync or async) is given;
        * a coroutine function: awaited, and its result (a list, a sliceable) used as
          a sync source would be;
        * anything :meth:`UrlSource.from_object` takes (sync sliceables and callables,
          generator functions): counted and pulled in a worker thread.

        ``recent`` (or a ``recent`` method, sync or async) lists the most recent
        changes for the feed (see :meth:`UrlSource.recent
        <sitemap_core.sources.base.UrlSource.recent>`).
        """
        check_name(name)
        counter = _counter(name, count)
        lister = recent_lister(name, recent, obj)
        facts: dict[str, Any] = {
            "fingerprint": _async_fact(name, "fingerprint", fingerprint, obj),
            "newest": _async_fact(name, "newest", newest, obj),
            "limits": Limits(page_size, max_entry_bytes, news),
            "recent": None if lister is None else _async_lister(lister),
        }
        native = _native_reading(name, obj, counter)
        if native is not None:
            count_of, batches, pages = native
            facts["limits"] = replace(facts["limits"], stable=pages is not None)
            summary = getattr(obj, "stable_summary", None) if pages is not None else None
            return cls(name, count_of, batches, pages=pages, summary=summary, **facts)
        sync = UrlSource.from_object(name, obj, recent=recent)
        facts["limits"] = replace(facts["limits"], stable=sync.limits.stable)
        return cls(
            name,
            counter or (lambda runner: runner.run_sync(sync.count)),
            lambda runner, start, stop, size: runner.pull_sync(
                lambda: sync.batches(start, stop, size, size * THREAD_BATCHES)
            ),
            threaded=sync,
            **facts,
        )

    async def count(self, runner: Runner) -> int:
        """Return how many entries the source holds now."""
        with naming(self.name):  # an entry built while walking to count
            return checked_count(await self._count(runner), self.name)

    async def fingerprint(self, runner: Runner, start: int, stop: int) -> object | None:
        """As :meth:`UrlSource.fingerprint <sitemap_core.sources.base.UrlSource.fingerprint>`."""
        if self._fingerprint is None:
            return None
        value = await self._fingerprint(runner, start, stop)
        # A news section's pages change as articles age out, without a write.
        return (value, news_epoch()) if self.limits.news and value is not None else value

    async def newest(self, runner: Runner, start: int, stop: int) -> str | None:
        """As :meth:`UrlSource.newest <sitemap_core.sources.base.UrlSource.newest>`."""
        if self._newest is None:
            return None
        value = await self._newest(runner, start, stop)
        return None if value is None else normalise_lastmod(value)

    async def pages(self, runner: Runner, first: int, stop: int) -> list[Page]:
        """As :meth:`UrlSource.pages <sitemap_core.sources.base.UrlSource.pages>`: of an
        async source (``stable_pages`` a coroutine function), or of a sync one in a
        worker thread."""
        if self._pages is not None:
            return [page async for page in self.stream(first, stop)]
        threaded = self.threaded
        if threaded is None:
            raise ConfigurationError(f"source {self.name!r} has no stable pages")
        return await runner.run_sync(lambda: threaded.pages(first, stop))

    async def stream(self, first: int, stop: int) -> AsyncIterator[Page]:
        """As :meth:`UrlSource.stream <sitemap_core.sources.base.UrlSource.stream>`, of
        an async source: its ``stable_pages`` may give a list or an async iterator (a
        cursor). A sync source's pages stream in a worker thread instead (``threaded``)."""
        if self._pages is None:
            raise ConfigurationError(f"source {self.name!r} has no stable pages here")
        given = await self._pages(first, stop)
        check = PageCheck(self.name, first, stop)
        if not isinstance(given, AsyncIterable):
            for page in given:
                yield check(page)
            return
        iterator = aiter(given)
        try:
            async for page in iterator:
                yield check(page)
        finally:
            await aclose(iterator)

    async def summary(self, runner: Runner, first: int = 1, stop: int = WHOLE) -> Summary:
        """As :meth:`UrlSource.summary <sitemap_core.sources.base.UrlSource.summary>`."""
        threaded = self.threaded
        if threaded is not None:
            return await runner.run_sync(lambda: threaded.summary(first, stop))
        if self._summary is not None and (first, stop) == (1, WHOLE):
            return checked_summary(await self._summary(), self.name)
        summing = Summing()
        pages = self.stream(first, stop)
        try:
            async for page in pages:
                summing.add(page)
        finally:
            await aclose(pages)
        return summing.summary()

    async def recent(
        self, runner: Runner, limit: int, since: datetime | None = None
    ) -> list[Recent]:
        """As :meth:`UrlSource.recent <sitemap_core.sources.base.UrlSource.recent>`: a sync
        source is asked in a worker thread, others here, walked when they cannot tell."""
        if self.threaded is not None:
            threaded = self.threaded
            return await runner.run_sync(lambda: threaded.recent(limit, since))
        listed = None if self._recent is None else await self._recent(limit)
        if listed is not None:
            return newest_listed(listed, limit, since, self.name)
        kept = NewestEntries(limit, since)
        async for batch in self.batches(runner, 0, WHOLE):  # one walk, no count first
            kept.add(batch)
        return kept.newest_first()

    def batches(
        self, runner: Runner, start: int, stop: int, size: int = BATCH_SIZE
    ) -> AsyncIterator[list[Entry]]:
        """Yield the entries of ``[start, stop)`` as validated lists of at most ``size``."""
        return self._batches(runner, start, stop, size)


#: How an async-native source object is read: its count, its batches, and its stable
#: pages (None: ranked pages).
_Reading = tuple[_Count, _Batches, "Callable[[int, int], Awaitable[Iterable[Page]]] | None"]


def _native_reading(name: str, obj: Any, counter: _Count | None) -> _Reading | None:
    """How an async source object is counted and read on the event loop; None for a
    sync one (read in a worker thread).

    An object whose ``stable_pages`` is a coroutine function has stable pages (see
    :mod:`sitemap_core.sources.pages`); an :class:`AsyncSliceable` is sliced; an async
    generator function is walked; a coroutine function is awaited and its result read
    as a sync source would be.
    """
    stable = getattr(obj, "stable_pages", None)
    if stable is not None and inspect.iscoroutinefunction(stable):
        return (
            counter or (lambda runner: obj.count()),
            lambda runner, start, stop, size: _async_batches(
                obj.stable_items(start, stop), name, start, stop, size, skip=0
            ),
            stable,
        )
    # The protocol checks names only: a sync count()/slice() (a SQLAlchemy Query)
    # must not be awaited, so an async count is required here.
    if isinstance(obj, AsyncSliceable) and inspect.iscoroutinefunction(obj.count):
        sliceable = obj
        return (
            counter or (lambda runner: sliceable.count()),
            lambda runner, start, stop, size: _async_batches(
                sliceable.slice(start, stop), name, start, stop, size, skip=0
            ),
            None,
        )
    if inspect.isasyncgenfunction(obj):
        factory: Callable[[], AsyncIterable[Item]] = obj
        return (
            counter or (lambda runner: _async_walk_count(factory())),
            lambda runner, start, stop, size: _async_batches(
                factory(), name, start, stop, size, skip=start
            ),
            None,
        )
    if inspect.iscoroutinefunction(obj):
        return _awaited_reading(name, obj, counter)
    return None


def _awaited_reading(
    name: str, coroutine_function: Callable[[], Awaitable[Any]], counter: _Count | None
) -> _Reading:
    # A coroutine function: awaited, its result (a list, a sliceable) read as a sync
    # source's would be.
    async def resolved() -> UrlSource:
        result = await coroutine_function()
        return UrlSource.from_object(name, _as_callable(result))

    async def count_resolved(runner: Runner) -> int:
        source = await resolved()
        return await runner.run_sync(source.count)

    return (
        counter or count_resolved,
        lambda runner, start, stop, size: _resolved_batches(resolved, runner, start, stop, size),
        None,
    )


def _async_lister(
    lister: Callable[[int], Any],
) -> Callable[[int], Awaitable[Iterable[Item] | None]]:
    # A sync or async recent(limit), awaited alike (a sync one of an async source is
    # cheap by contract: it answers from memory or one query of an async driver).
    async def listed(limit: int) -> Iterable[Item] | None:
        result = lister(limit)
        return await result if inspect.isawaitable(result) else result  # type: ignore[no-any-return]

    return listed


def _as_callable(result: Any) -> Any:
    # A sliceable is adapted as it is; anything else is wrapped so that UrlSource takes
    # it as "a callable returning an iterable" (and validates it on the way).
    return result if callable(result) or hasattr(result, "__getitem__") else lambda: result


def _async_fact(name: str, kind: str, given: Callable[..., Any] | None, obj: Any) -> _Fact | None:
    # fingerprint / newest: a coroutine function is awaited on the loop; a plain one
    # (a database call) runs in a worker thread like a sync source.
    func = given if given is not None else getattr(obj, kind, None)
    fact = range_fact(name, kind, func, obj)
    if fact is None:
        return None
    ranged = fact
    if inspect.iscoroutinefunction(func):

        async def awaited(runner: Runner, start: int, stop: int) -> Any:
            return await ranged(start, stop)

        return awaited

    async def threaded(runner: Runner, start: int, stop: int) -> Any:
        return await runner.run_sync(lambda: ranged(start, stop))

    return threaded


def _counter(
    name: str, count: Callable[[], int] | Callable[[], Awaitable[int]] | None
) -> _Count | None:
    if count is None:
        return None
    if not callable(count):
        raise ConfigurationError(f"count= of source {name!r} must be a callable")
    if inspect.iscoroutinefunction(count):
        async_count: Callable[[], Awaitable[int]] = count
        return lambda runner: async_count()
    sync_count: Callable[[], int] = count  # type: ignore[assignment]
    return lambda runner: runner.run_sync(sync_count)


async def _async_walk_count(items: AsyncIterable[Any]) -> int:
    total = 0
    iterator = aiter(items)
    try:
        async for _ in iterator:
            total += 1
    finally:
        await aclose(iterator)
    return total


async def _async_batches(
    items: AsyncIterable[Item], name: str, start: int, stop: int, size: int, *, skip: int
) -> AsyncIterator[list[Entry]]:
    # ``skip`` entries are dropped first (a plain async generator has no range access);
    # at most ``stop - start`` are then yielded even if the source gives more. The
    # per-item loop is kept to an append and a length test: it runs 50,000 times.
    iterator = aiter(items)
    try:
        if skip:
            skipped = 0
            async for _ in iterator:
                skipped += 1
                if skipped == skip:
                    break
        wanted = stop - start
        while wanted > 0:
            limit = min(size, wanted)
            pending: list[Any] = []
            append = pending.append
            async for item in iterator:
                append(item)
                if len(pending) == limit:
                    break
            if not pending:
                break
            wanted -= len(pending)
            yield coerce_batch(pending, name)
            if len(pending) < limit:
                break  # the source ended
    finally:
        await aclose(iterator)


async def _resolved_batches(
    resolved: Callable[[], Awaitable[UrlSource]],
    runner: Runner,
    start: int,
    stop: int,
    size: int,
) -> AsyncIterator[list[Entry]]:
    source = await resolved()
    # After a first batch of ``size`` (the first byte leaves early), the worker thread
    # hands over THREAD_BATCHES batches at once: each hand-over is a round trip to the
    # event loop, and 196 of them per 50,000 entries cost more than the rendering.
    batches = runner.pull_sync(lambda: source.batches(start, stop, size, size * THREAD_BATCHES))
    try:
        async for batch in batches:
            yield batch
    finally:
        await aclose(batches)


async def aclose(iterator: object) -> None:
    """Close ``iterator`` now if it is an async generator (or has ``aclose``).

    Abandoned async generators are otherwise closed by the garbage collector, late and
    outside any cancel scope; closing them here releases cursors and threads now.
    """
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        await aclose()


async def recent_changes_async(
    sources: Iterable[AsyncUrlSource], runner: Runner, limit: int, since: datetime | None = None
) -> list[Recent]:
    """As :func:`~sitemap_core.sources.base.recent_changes`, for async sources."""
    return merge_recent([await source.recent(runner, limit, since) for source in sources], limit)
