"""The asynchronous driver of the flow: ASGI.

:func:`respond_async` runs :func:`sitemap_core.serve.flow.serve`, awaiting each of its
needs; :func:`aiter_body` pulls a plan's sources and writes its document. Sync source
code runs off the event loop through the front's :class:`~sitemap_core.sources.aio.Runner`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, TypeVar

from sitemap_core.memory.cache import PageCache, cache_get, cache_set
from sitemap_core.memory.recall import Check, StaleValidatorsError
from sitemap_core.model.entries import Entry
from sitemap_core.model.hosts import BaseURL
from sitemap_core.model.rows import split_batch
from sitemap_core.serve import flow
from sitemap_core.serve.body import Delivery, DocumentWriter, Slice
from sitemap_core.serve.compress import agzip_chunks
from sitemap_core.serve.http import Reply
from sitemap_core.serve.request import NO_HEADERS
from sitemap_core.serve.site import Plan, Site
from sitemap_core.serve.spool import Spool
from sitemap_core.sources.aio import AsyncUrlSource, Runner, aclose, recent_changes_async
from sitemap_core.sources.base import BATCH_SIZE, UrlSource, close_now, naming
from sitemap_core.sources.scope import enter_request, leave_request

__all__ = [
    "HANDOVER_BYTES",
    "Once",
    "Render",
    "Share",
    "Sharing",
    "aiter_body",
    "chained",
    "count_index_parts_async",
    "respond_async",
    "run_async",
]

T = TypeVar("T")

#: A document's render: its chunks, pulling sources through the runner given.
Render = Callable[[Runner], AsyncIterator[bytes]]


class Share(Protocol):
    """How a front lets concurrent requests share renders.

    ``share(key, render)`` returns the body of the document ``key`` (its ETag, coding
    included), from a render of it already under way or from ``render(runner)``
    started now with a runner of the front's (one no single request closes), with its
    first chunk already read (so a render failing before it raises here, and the front
    answers 500). ``bounded=False``: a render that only recodes another shared render,
    so it takes none of the front's render slots (the render it reads holds one).
    """

    async def __call__(
        self, key: str, render: Render, bounded: bool = True
    ) -> AsyncIterator[bytes]:
        """The body of document ``key``, shared."""
        ...


class Once(Protocol):
    """How a front lets concurrent requests share one answer to the same need.

    ``once(key, compute, claim, release)`` awaits ``compute()`` (in the caller's own
    request), or the answer of the computation under ``key`` already under way;
    ``claim(answer)`` is called for each other request given it, when it is ready,
    and ``release(answer)`` gives a claim back that a cancelled request never used.
    """

    async def __call__(
        self,
        key: str,
        compute: Callable[[], Awaitable[T]],
        claim: Callable[[T], object] | None = None,
        release: Callable[[T], object] | None = None,
    ) -> T:
        """The answer under ``key``, computed once for the requests that ask meanwhile."""
        ...


@dataclass(frozen=True)
class Sharing:
    """What a front shares among concurrent requests: streamed documents (``stream``,
    see :data:`Share`) and the needs the flow marks as shared (``once``, see
    :class:`Once`): the counts and the spooled documents of sources without a
    fingerprint, each a walk of the source."""

    stream: Share
    once: Once


#: Bytes of finished chunks a writing thread hands the event loop at once.
HANDOVER_BYTES = 256 * 1024


async def respond_async(
    site: Site[AsyncUrlSource],
    method: str,
    path: str,
    base_url: Callable[[], BaseURL],
    runner: Runner,
    request: Mapping[str, str] = NO_HEADERS,
    protocol: str = "1.1",
    sharing: Sharing | None = None,
) -> Reply | None:
    """Answer a request asynchronously; None when ``path`` is not the site's.

    As :func:`~sitemap_core.serve.drive_sync.respond`: a source error before the first
    byte is raised here, after it the body raises. A streamed body is an async
    iterator. With ``sharing``, concurrent requests share renders, counts and spools
    (see :class:`Sharing`). The sources' facts are asked in one request scope (see
    :mod:`sitemap_core.sources.scope`), which the worker threads of sync sources share.
    """
    scope = enter_request()
    try:
        steps = flow.serve(site, method, path, base_url, request, protocol)
        reply: Reply | None = await run_async(site, steps, runner, sharing)
        return reply
    finally:
        leave_request(scope)


async def count_index_parts_async(
    site: Site[AsyncUrlSource], base: BaseURL, runner: Runner, sharing: Sharing | None = None
) -> int:
    """How many index files robots.txt lists for ``base``: one if a count fails (in a
    request scope of its own; see :func:`~sitemap_core.serve.flow.index_parts`)."""
    scope = enter_request()
    try:
        parts: int = await run_async(site, flow.index_parts(site, base), runner, sharing)
        return parts
    finally:
        leave_request(scope)


async def run_async(
    site: Site[AsyncUrlSource], steps: flow.Flow, runner: Runner, sharing: Sharing | None = None
) -> Any:
    """Drive ``steps`` (a flow) to its end, awaiting each need; its result."""
    driving = flow.Driving(steps)
    for need in driving:
        try:
            driving.answer(await _answer(site, need, runner, sharing))
        except Exception as exc:  # handed to the flow, which may recover or re-raise
            driving.fail(exc)
    return driving.result


async def _answer(
    site: Site[AsyncUrlSource], need: flow.Need, runner: Runner, sharing: Sharing | None
) -> Any:
    if isinstance(need, flow.Fact):
        if sharing is not None and need.shared is not None:
            return await sharing.once(need.shared, partial(_fact, need, runner))
        return await _fact(need, runner)
    if isinstance(need, flow.CacheRead):
        return await _cached(need.cache, runner, cache_get, need.cache, need.key)
    if isinstance(need, flow.CacheWrite):
        return await _cached(need.cache, runner, cache_set, need.cache, need.key, need.data)
    if isinstance(need, flow.RecentChanges):
        return await recent_changes_async(need.sources, runner, need.limit, need.since)
    if isinstance(need, flow.RenderFeed):
        return await runner.run_sync(need.render)
    if isinstance(need, flow.Fill):
        return await _fill(need, runner, sharing)
    if isinstance(need, flow.Encode):
        return await _encoded(need, runner, sharing)
    return await _opened(site, need.body, runner, sharing)


async def _fact(need: flow.Fact[AsyncUrlSource], runner: Runner) -> Any:
    if need.kind == "count":
        return await need.source.count(runner)
    return await getattr(need.source, need.kind)(runner, need.start, need.stop)


async def _fill(need: flow.Fill[AsyncUrlSource], runner: Runner, sharing: Sharing | None) -> Spool:
    # The spool holding the document: this need's, or, shared, the one another
    # request's identical fill wrote (claimed for this request).
    written = False

    async def fill() -> Spool:
        nonlocal written
        written = True
        return await _filled(need.spool, _written(need.writer(), runner))

    if sharing is None or need.shared is None:
        return await fill()
    try:
        return await sharing.once(need.shared, fill, Spool.claim, Spool.release)
    finally:
        if not written:
            need.spool.release()  # another request's fill answered (or failed) for it


async def _encoded(need: flow.Encode, runner: Runner, sharing: Sharing | None) -> Spool:
    # The gzip spool of the document (compressed in a worker thread): this need's, or,
    # shared, the one another request's identical encoding wrote (claimed for this one).
    encode = partial(runner.run_sync, need.spool.gzipped)
    if sharing is None or need.shared is None:
        return await encode()
    return await sharing.once(need.shared, encode, Spool.claim, Spool.release)


async def _cached(cache: PageCache, runner: Runner, call: Callable[..., T], *args: Any) -> T:
    # A blocking cache (Redis) is asked in a worker thread, the in-process one here.
    if cache.blocking:
        return await runner.run_sync(partial(call, *args))
    return call(*args)


def aiter_body(
    plan: Plan[AsyncUrlSource],
    runner: Runner,
    batch_size: int = BATCH_SIZE,
    observe: Callable[[list[Entry]], None] | None = None,
    check: Check | None = None,
) -> AsyncIterator[bytes]:
    """Stream the plan's document as chunks, pulling sources asynchronously.

    With ``observe`` and ``check``, as :func:`~sitemap_core.serve.drive_sync.iter_body`.
    """
    return _written(DocumentWriter(plan, observe, check), runner, batch_size)


async def _written(
    writer: DocumentWriter[AsyncUrlSource], runner: Runner, batch_size: int = BATCH_SIZE
) -> AsyncIterator[bytes]:
    if opening := writer.opening():
        yield opening
    for part in writer.slices():
        if part.source.threaded is None:
            chunks = _pulled(part, runner, batch_size)
        else:
            chunks = _handed(part, part.source.threaded, runner, batch_size)
        try:
            async for chunk in chunks:
                yield chunk
        finally:
            await aclose(chunks)
    yield writer.closing()


async def _pulled(
    part: Slice[AsyncUrlSource], runner: Runner, batch_size: int
) -> AsyncIterator[bytes]:
    # The chunks of an async source's slice, its batches awaited on the event loop.
    batches = part.source.batches(runner, part.start, part.asked, batch_size)
    try:
        with naming(part.source.name):
            async for batch in batches:
                for piece in split_batch(batch, batch_size):
                    if chunk := part.write(piece):
                        yield chunk
                if part.done:
                    break
    finally:
        await aclose(batches)
    part.finish()


async def _handed(
    part: Slice[AsyncUrlSource], sync: UrlSource, runner: Runner, batch_size: int
) -> AsyncIterator[bytes]:
    # A sync source: pulled and written in one worker thread, which hands the event loop
    # finished chunks, several at a time. The loop is free meanwhile, and the two
    # threads do not trade the GIL for every batch. The writer is used by that thread
    # alone until it has finished this slice.
    handed = runner.pull_sync(partial(_written_in_thread, part, sync, batch_size))
    try:
        async for chunks in handed:
            for chunk in chunks:
                yield chunk
    finally:
        await aclose(handed)


def _written_in_thread(
    part: Slice[AsyncUrlSource], sync: UrlSource, batch_size: int
) -> Iterator[list[bytes]]:
    # The first chunk goes at once (the first byte leaves early); then chunks are
    # grouped to about HANDOVER_BYTES per hop to the loop.
    pending: list[bytes] = []
    size = 0
    first = True
    batches = sync.batches(part.start, part.asked, batch_size)
    try:
        with naming(part.source.name):
            for batch in batches:
                if chunk := part.write(batch):
                    pending.append(chunk)
                    size += len(chunk)
                    if first or size >= HANDOVER_BYTES:
                        yield pending
                        pending, size, first = [], 0, False
                if part.done:
                    break
    finally:
        close_now(batches)
    if pending:
        yield pending
    part.finish()


async def _filled(spool: Spool, chunks: AsyncIterator[bytes]) -> Spool:
    # The whole of ``chunks`` written to ``spool``, which is closed if they fail.
    try:
        async for chunk in chunks:
            spool.write(chunk)
    except BaseException:
        spool.release()  # the temporary file goes now, not with the traceback
        raise
    finally:
        await aclose(chunks)
    return spool


async def _opened(
    site: Site[AsyncUrlSource],
    body: flow.Body[AsyncUrlSource],
    runner: Runner,
    sharing: Sharing | None,
) -> flow.Opened | None:
    # The body started: its first chunk read (a failure before it raises here), or
    # read whole when it must carry its length.

    def coded(runner: Runner) -> AsyncIterator[bytes]:
        chunks = _written(body.writer(), runner)
        return agzip_chunks(chunks) if body.coding == "gzip" else chunks

    def render(runner: Runner) -> AsyncIterator[bytes]:
        return _delivered(coded(runner), body.delivery(site), runner)

    if body.sized:
        # Read whole before the first byte: a failure is the front's 500, not a cut
        # transfer, so only the replay is delivered (and kept for the cache).
        spool = await _filled(Spool("identity"), coded(runner))
        replay = _replayed(spool.chunks())
        return flow.Opened(_delivered(replay, body.delivery(site), runner), spool.length)
    try:
        if sharing is not None and body.key is not None:
            return flow.Opened(await _shared(site, body, sharing.stream, render))
        return flow.Opened(await _started(render(runner)))
    except StaleValidatorsError:
        return None


async def _shared(
    site: Site[AsyncUrlSource], body: flow.Body[AsyncUrlSource], share: Share, render: Render
) -> AsyncIterator[bytes]:
    # The body from a render shared by the requests for the same document. A gzip
    # document streamed on remembered validators gzips its identity twin's shared
    # render, so a crowd asking both codings costs one walk.
    assert body.key is not None
    twin = body.identity_twin()
    if twin is None or twin.key is None:
        return await share(body.key, render)
    plain_key = twin.key

    def plain(runner: Runner) -> AsyncIterator[bytes]:
        return _delivered(_written(twin.writer(), runner), twin.delivery(site), runner)

    async def recoded() -> AsyncIterator[bytes]:
        async for chunk in agzip_chunks(await share(plain_key, plain)):
            yield chunk

    def coded(runner: Runner) -> AsyncIterator[bytes]:
        return _delivered(recoded(), body.delivery(site), runner)

    return await share(body.key, coded, bounded=False)


async def _started(body: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    # ``body`` with its first chunk read.
    try:
        first = await anext(body)
    except BaseException:
        await aclose(body)
        raise
    return chained(first, body)


async def _delivered(
    chunks: AsyncIterator[bytes], delivery: Delivery, runner: Runner
) -> AsyncIterator[bytes]:
    try:
        async for chunk in chunks:
            delivery.chunk(chunk)
            yield chunk
    except Exception as exc:
        delivery.failed(exc)
        raise
    finally:
        await aclose(chunks)
    document = delivery.kept()
    if document is not None and delivery.cache is not None and delivery.key is not None:
        await _cached(delivery.cache, runner, cache_set, delivery.cache, delivery.key, document)


async def chained(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """``first``, then the chunks of ``rest``, which is closed at the end either way."""
    try:
        yield first
        async for chunk in rest:
            yield chunk
    finally:
        await aclose(rest)


async def _replayed(chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk
