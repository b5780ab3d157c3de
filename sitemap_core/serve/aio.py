"""The asynchronous counterparts of :class:`~sitemap_core.sources.base.UrlSource` and of the
body loop: the only part of serving that differs between a sync and an async front.

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
    Mapping,
)
from datetime import datetime
from functools import partial
from tempfile import SpooledTemporaryFile
from typing import IO, Any, Protocol, TypeVar, runtime_checkable

from sitemap_core.errors import ConfigurationError, InvalidEntryError
from sitemap_core.memory.cache import PageCache, cache_get, cache_set
from sitemap_core.memory.recall import Check, Recalled, StaleValidatorsError, head, probed
from sitemap_core.model.entries import Entry, normalise_lastmod
from sitemap_core.model.hosts import BaseURL
from sitemap_core.model.recent import NewestEntries, Recent, cutoff, merge_recent
from sitemap_core.model.rows import split_batch
from sitemap_core.serve.compress import agzip_chunks
from sitemap_core.serve.flow import (
    NO_HEADERS,
    SPOOL_MEMORY,
    Facts,
    Pending,
    Ready,
    Spool,
    answer_known,
    begin,
    cache_key_of,
    cached_reply,
    decide,
    feed_reply,
    finish_spooled,
    log_stale,
    logger,
    named,
    prepare,
    read_chunks,
    recalled_plan,
    recalled_ready,
    remember,
    remember_answer,
    remembered,
    streams_recalled,
    write_batch,
)
from sitemap_core.serve.http import Reply
from sitemap_core.serve.site import BATCH_SIZE, Plan, Site, check_complete
from sitemap_core.sources.base import (
    WHOLE,
    Item,
    Limits,
    UrlSource,
    check_name,
    coerce_batch,
    newest_listed,
    range_fact,
    recent_lister,
)
from sitemap_core.sources.newsroom import news_epoch
from sitemap_core.sources.scope import enter_request, leave_request
from sitemap_core.write.encoders import DocumentEncoder

__all__ = [
    "AsyncSliceable",
    "AsyncUrlSource",
    "Render",
    "Runner",
    "Share",
    "aiter_body",
    "chained",
    "count_index_parts_async",
    "known_counts_async",
    "respond_async",
    "robots_counts_async",
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
    ) -> None:
        self.name = name
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
        # The protocol checks names only: a sync count()/slice() (a SQLAlchemy Query)
        # must not be awaited, so an async count is required here.
        if isinstance(obj, AsyncSliceable) and inspect.iscoroutinefunction(obj.count):
            sliceable = obj
            return cls(
                name,
                counter or (lambda runner: sliceable.count()),
                lambda runner, start, stop, size: _async_batches(
                    sliceable.slice(start, stop), name, start, stop, size, skip=0
                ),
                **facts,
            )
        if inspect.isasyncgenfunction(obj):
            factory: Callable[[], AsyncIterable[Item]] = obj
            return cls(
                name,
                counter or (lambda runner: _async_walk_count(factory())),
                lambda runner, start, stop, size: _async_batches(
                    factory(), name, start, stop, size, skip=start
                ),
                **facts,
            )
        if inspect.iscoroutinefunction(obj):
            coroutine_function = obj

            async def resolved() -> UrlSource:
                result = await coroutine_function()
                return UrlSource.from_object(name, _as_callable(result))

            async def count_resolved(runner: Runner) -> int:
                source = await resolved()
                return await runner.run_sync(source.count)

            return cls(
                name,
                counter or count_resolved,
                lambda runner, start, stop, size: _resolved_batches(
                    resolved, runner, start, stop, size
                ),
                **facts,
            )
        sync = UrlSource.from_object(name, obj, recent=recent)
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
        try:
            total = await self._count(runner)
        except InvalidEntryError as exc:  # an entry built while walking to count
            raise named(exc, self.name) from exc
        if isinstance(total, bool) or not isinstance(total, int) or total < 0:
            raise ConfigurationError(
                f"count of source {self.name!r} returned {total!r}, not a whole number"
            )
        return total

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
        await _aclose(iterator)
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
        await _aclose(iterator)


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
        await _aclose(batches)


async def _aclose(iterator: object) -> None:
    # Abandoned async generators are otherwise closed by the garbage collector, late
    # and outside any cancel scope; closing them here releases cursors and threads now.
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        await aclose()


async def aiter_body(
    plan: Plan[AsyncUrlSource],
    runner: Runner,
    batch_size: int = BATCH_SIZE,
    observe: Callable[[list[Entry]], None] | None = None,
    check: Check | None = None,
) -> AsyncIterator[bytes]:
    """Stream the plan's document as chunks, pulling sources asynchronously.

    With ``check``, as :func:`~sitemap_core.serve.flow.iter_body`.
    """
    encoder = plan.encoder()
    if plan.children:
        chunk = encoder.feed(plan.children)
        if chunk:
            yield chunk
    for source, start, stop in plan.slices:
        probe = check is not None and check.probes(source.name, stop)
        if source.threaded is not None:
            # A sync source: pulled and written in one worker thread, which hands the
            # event loop finished chunks, several at a time. The loop is free meanwhile,
            # and the two threads do not trade the GIL for every batch. The encoder is
            # used by that thread alone until it has finished this slice.
            parts = runner.pull_sync(
                partial(
                    _written_in_thread,
                    plan,
                    encoder,
                    source,
                    source.threaded,
                    start,
                    stop,
                    batch_size,
                    observe,
                    check,
                    probe,
                )
            )
            try:
                async for chunks in parts:
                    for chunk in chunks:
                        yield chunk
            finally:
                await _aclose(parts)
            continue
        pulled = 0
        batches = _aprobed(
            source.batches(runner, start, stop + probe, batch_size), stop - start, check, probe
        )
        try:
            async for batch in batches:
                for part in split_batch(batch, batch_size):
                    pulled += len(part)
                    chunk = write_batch(plan, encoder, source, part, observe)
                    if chunk:
                        if check is not None:
                            check.chunk(chunk)
                        yield chunk
        except InvalidEntryError as exc:
            raise named(exc, source.name) from exc
        finally:
            await _aclose(batches)
        if check is None:
            check_complete(source.name, start, stop, pulled)
    last = encoder.close()
    if check is not None:
        check.chunk(last)
        check.finish()
    yield last


async def _aprobed(
    batches: AsyncIterator[list[Entry]], wanted: int, check: Check | None, probe: bool
) -> AsyncIterator[list[Entry]]:
    # The async twin of sitemap_core.memory.recall.probed.
    pulled = 0
    grew = False
    try:
        async for batch in batches:
            if probe and pulled + len(batch) > wanted:
                grew = True
                batch = head(batch, wanted - pulled)
                if not batch:
                    break
            pulled += len(batch)
            yield batch
    finally:
        await _aclose(batches)
    if check is not None:
        check.sliced(wanted, pulled, grew)


#: Bytes of finished chunks a writing thread hands the event loop at once.
HANDOVER_BYTES = 256 * 1024


def _written_in_thread(
    plan: Plan[AsyncUrlSource],
    encoder: DocumentEncoder,
    source: AsyncUrlSource,
    sync: UrlSource,
    start: int,
    stop: int,
    batch_size: int,
    observe: Callable[[list[Entry]], None] | None,
    check: Check | None = None,
    probe: bool = False,
) -> Iterator[list[bytes]]:
    # The first chunk goes at once (the first byte leaves early); then chunks are
    # grouped to about HANDOVER_BYTES per hop to the loop.
    pending: list[bytes] = []
    size = 0
    first = True
    pulled = 0
    try:
        batches = probed(sync.batches(start, stop + probe, batch_size), stop - start, check, probe)
        for batch in batches:
            pulled += len(batch)
            chunk = write_batch(plan, encoder, source, batch, observe)
            if chunk:
                if check is not None:
                    check.chunk(chunk)  # in this thread, before the loop may send it
                pending.append(chunk)
                size += len(chunk)
                if first or size >= HANDOVER_BYTES:
                    yield pending
                    pending, size, first = [], 0, False
    except InvalidEntryError as exc:
        raise named(exc, source.name) from exc
    if pending:
        yield pending
    if check is None:
        check_complete(source.name, start, stop, pulled)


async def robots_counts_async(
    sources: Iterable[AsyncUrlSource], runner: Runner, site: Site[AsyncUrlSource]
) -> dict[str, int] | None:
    """As :func:`~sitemap_core.serve.flow.robots_counts`: None (logged) when a count fails."""
    try:
        return await known_counts_async(site, sources, runner, {})
    except Exception:
        logger.exception("counting the sources for robots.txt failed; listing /sitemap.xml only")
        return None


async def known_counts_async(
    site: Site[AsyncUrlSource],
    sources: Iterable[AsyncUrlSource],
    runner: Runner,
    whole: dict[str, object],
) -> dict[str, int]:
    """As :func:`~sitemap_core.serve.flow.known_counts`."""
    counts = {}
    for source in sources:
        if source.name in whole:  # asked already in this request
            fingerprint = whole[source.name]
        else:
            fingerprint = whole[source.name] = await source.fingerprint(runner, 0, WHOLE)
        count = site.known.count(source.name, fingerprint)
        if count is None:
            count = await source.count(runner)
            site.known.counted(source.name, fingerprint, count)
        counts[source.name] = count
    return counts


async def count_index_parts_async(site: Site[AsyncUrlSource], base: BaseURL, runner: Runner) -> int:
    """How many index files robots.txt lists for ``base``: one if a count fails (in a
    request scope of its own, as :func:`~sitemap_core.serve.flow.count_index_parts`)."""
    scope = enter_request()
    try:
        counts = await robots_counts_async(site.sources.values(), runner, site)
    finally:
        leave_request(scope)
    return 1 if counts is None else site.index_parts(counts, base)


async def respond_async(
    site: Site[AsyncUrlSource],
    method: str,
    path: str,
    base_url: Callable[[], BaseURL],
    runner: Runner,
    request: Mapping[str, str] = NO_HEADERS,
    protocol: str = "1.1",
    share: Share | None = None,
) -> Reply | None:
    """Answer a request asynchronously; None when ``path`` is not the site's.

    As :func:`~sitemap_core.serve.flow.respond`: a source error before the first byte is
    raised here, after it the body raises. A streamed body is an async iterator, but
    over HTTP/1.0 (``protocol``, see :func:`~sitemap_core.serve.flow.is_sized`), where
    the document is rendered whole first and sent with its length. With ``share``,
    a streamed document is rendered through it (see :data:`Share`). The sources' facts
    are asked in one request scope (see :mod:`sitemap_core.sources.scope`), which the worker
    threads of sync sources share.
    """
    scope = enter_request()
    try:
        return await _respond_async(site, method, path, base_url, runner, request, protocol, share)
    finally:
        leave_request(scope)


async def _respond_async(
    site: Site[AsyncUrlSource],
    method: str,
    path: str,
    base_url: Callable[[], BaseURL],
    runner: Runner,
    request: Mapping[str, str],
    protocol: str,
    share: Share | None,
) -> Reply | None:
    step = begin(site, method, path, base_url, request, protocol)
    if not isinstance(step, Pending):
        return step
    whole: dict[str, object] = {}
    if step.target.kind != "robots":
        for source in step.sources:
            whole[source.name] = await source.fingerprint(runner, 0, WHOLE)
    memo, answer, reply = remembered(site, step, whole)
    if reply is not None:
        return reply
    if answer is not None and site.cache is not None and answer.cache_key is not None:
        hit = await _cache_get(site.cache, answer.cache_key, runner)
        if hit is not None:
            return cached_reply(answer, hit)
    if step.target.kind == "feed":
        since = cutoff(site.feed_max_days)
        items = await recent_changes_async(step.sources, runner, site.feed_size, since)
        return await runner.run_sync(lambda: feed_reply(site, step, memo, items))
    recalled = recalled_plan(site, step)
    if recalled is not None:
        answered = await _respond_recalled(site, step, runner, *recalled, share=share)
        if answered is not None:
            return answered
    if step.target.kind == "robots":
        counts = await robots_counts_async(step.sources, runner, site)
    else:
        counts = await known_counts_async(site, step.sources, runner, whole)
    plan = decide(site, step, counts)
    if isinstance(plan, Reply):
        return plan
    ranges = plan.ranges()

    async def fact(source: AsyncUrlSource, kind: str, start: int, stop: int) -> Any:
        # As sitemap_core.serve.flow.known_fact.
        fingerprint = whole.get(source.name)
        hit, value = site.known.fact(source.name, fingerprint, kind, start, stop)
        if hit:
            return value
        ask = source.fingerprint if kind == "fingerprint" else source.newest
        answer = await ask(runner, start, stop)
        site.known.found(source.name, fingerprint, kind, start, stop, answer)
        return answer

    fingerprints = (
        [] if plan.kind == "index" else [await fact(s, "fingerprint", a, b) for s, a, b in ranges]
    )
    facts = Facts(fingerprints, [await fact(s, "newest", a, b) for s, a, b in ranges])
    ready = prepare(site, step, plan, facts)
    remember_answer(site, memo, ready)
    if ready.validators is not None:
        answered = answer_known(ready, ready.validators, None)
        if answered is not None:
            return answered
    if ready.validators is None:
        assert counts is not None  # only robots.txt goes without counts
        spooled = await _spooled(site, ready, counts, runner)
        assert spooled is not None  # no check: the counts were just taken
        return spooled
    cache, key = site.cache, ready.cache_key
    if cache is not None and key is not None and (answer is None or answer.cache_key != key):
        hit = await _cache_get(cache, key, runner)
        if hit is not None:
            return Reply(200, ready.full_headers(ready.validators, len(hit)), [hit])
    if ready.sized:
        length, chunks = await _sized_body(_coded(aiter_body(plan, runner), ready.coding))
        if cache is not None and key is not None:
            chunks = _kept(chunks, cache, key, runner)
        return Reply(200, ready.full_headers(ready.validators, length), chunks)

    def render(runner: Runner) -> AsyncIterator[bytes]:
        body = _logged(_coded(aiter_body(plan, runner), ready.coding))
        if cache is not None and key is not None:
            # Stored only once the whole document went out: a cut render caches nothing.
            body = _kept(body, cache, key, runner)
        return body

    streamed = await _started(render, key, share, runner)
    return Reply(200, ready.full_headers(ready.validators, None), streamed)


#: A document's render: its chunks, pulling sources through the runner given.
Render = Callable[[Runner], AsyncIterator[bytes]]

#: How a front lets concurrent requests share renders: ``share(key, render)`` returns
#: the body of the document ``key`` (its ETag, coding included), from a render of it
#: already under way or from ``render(runner)`` started now with a runner of the
#: front's (one no single request closes), with its first chunk already read (so a
#: render failing before it raises here, and the front answers 500).
Share = Callable[[str, Render], Awaitable[AsyncIterator[bytes]]]


async def _started(
    render: Render, key: str | None, share: Share | None, runner: Runner
) -> AsyncIterator[bytes]:
    # The body with its first chunk read: shared when the front shares renders.
    if share is not None and key is not None:
        return await share(key, render)
    body = render(runner)
    try:
        first = await anext(body)
    except BaseException:
        await _aclose(body)
        raise
    return chained(first, body)


def _coded(body: AsyncIterator[bytes], coding: str) -> AsyncIterator[bytes]:
    return agzip_chunks(body) if coding == "gzip" else body


async def chained(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """``first``, then the chunks of ``rest``, which is closed at the end either way."""
    try:
        yield first
        async for chunk in rest:
            yield chunk
    finally:
        await _aclose(rest)


async def _sized_body(chunks: AsyncIterator[bytes]) -> tuple[int, AsyncIterator[bytes]]:
    # As sitemap_core.serve.flow.sized_body: the whole document before the first byte.
    file: IO[bytes] = SpooledTemporaryFile(max_size=SPOOL_MEMORY)  # noqa: SIM115
    length = 0
    try:
        async for chunk in chunks:
            file.write(chunk)
            length += len(chunk)
    except BaseException:
        file.close()
        raise
    finally:
        await _aclose(chunks)
    file.seek(0)
    return length, _replayed(read_chunks(file))


async def _replayed(chunks: Iterable[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


async def _spooled(
    site: Site[AsyncUrlSource],
    ready: Ready[AsyncUrlSource],
    counts: Mapping[str, int],
    runner: Runner,
    check: Check | None = None,
) -> Reply | None:
    # As sitemap_core.serve.flow._spooled.
    spool = Spool(ready.coding, text=ready.plan.kind == "text")
    try:
        async for chunk in aiter_body(ready.plan, runner, observe=spool.observe, check=check):
            spool.write(chunk)
    except BaseException:
        spool.file.close()  # the temporary file goes now, not with the traceback
        raise
    if check is not None and not check.counts_hold:
        spool.file.close()
        return None
    reply = finish_spooled(ready, spool)
    remember(site, ready, counts, spool)
    return reply


async def _respond_recalled(
    site: Site[AsyncUrlSource],
    pending: Pending[AsyncUrlSource],
    runner: Runner,
    plan: Plan[AsyncUrlSource],
    recalled: Recalled,
    share: Share | None = None,
) -> Reply | None:
    # As sitemap_core.serve.flow._respond_recalled: None when counting afresh is needed.
    ready = recalled_ready(site, pending, plan, recalled)
    text = plan.kind == "text"
    if not streams_recalled(pending):
        check = Check(recalled.counts, text=False)
        spooled = await _spooled(site, ready, recalled.counts, runner, check)
        if spooled is None:
            site.recall.disarm(ready.identity)
        return spooled

    def render(runner: Runner) -> AsyncIterator[bytes]:
        check = Check(recalled.counts, text, expected=recalled)
        body = aiter_body(plan, runner, observe=check.observe if text else None, check=check)
        return _disarming(_logged(_coded(body, ready.coding)), site, ready.identity)

    assert ready.validators is not None
    try:
        streamed = await _started(render, cache_key_of(ready.validators), share, runner)
    except StaleValidatorsError:
        return None  # nothing was sent: count and render afresh (already disarmed)
    return Reply(200, ready.full_headers(ready.validators, None), streamed)


async def _disarming(
    body: AsyncIterator[bytes], site: Site[AsyncUrlSource], identity: str
) -> AsyncIterator[bytes]:
    # A streamed document found stale is cut and disarmed (see sitemap_core.memory.recall).
    try:
        async for chunk in body:
            yield chunk
    except StaleValidatorsError:
        site.recall.disarm(identity)
        raise
    finally:
        await _aclose(body)


async def _cache_get(cache: PageCache, key: str, runner: Runner) -> bytes | None:
    if cache.blocking:
        return await runner.run_sync(lambda: cache_get(cache, key))
    return cache_get(cache, key)


async def _kept(
    chunks: AsyncIterator[bytes], cache: PageCache, key: str, runner: Runner
) -> AsyncIterator[bytes]:
    # Stored only once the whole document went out: a cut transfer caches nothing.
    parts: list[bytes] | None = []
    size = 0
    try:
        async for chunk in chunks:
            if parts is not None:
                size += len(chunk)
                if size <= cache.max_item_bytes:
                    parts.append(chunk)
                else:
                    parts = None
            yield chunk
    finally:
        await _aclose(chunks)
    if parts is not None:
        document = b"".join(parts)
        if cache.blocking:
            await runner.run_sync(lambda: cache_set(cache, key, document))
        else:
            cache_set(cache, key, document)


async def _logged(rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    # A failure after the first byte is logged here, once per render; the error goes on,
    # so the server cuts the transfer.
    try:
        async for chunk in rest:
            yield chunk
    except StaleValidatorsError as exc:
        log_stale(exc)
        raise
    except Exception:
        logger.exception("sitemap source failed mid-response; the transfer is cut")
        raise
    finally:
        await _aclose(rest)


async def recent_changes_async(
    sources: Iterable[AsyncUrlSource], runner: Runner, limit: int, since: datetime | None = None
) -> list[Recent]:
    """As :func:`~sitemap_core.sources.base.recent_changes`, for async sources."""
    return merge_recent([await source.recent(runner, limit, since) for source in sources], limit)
