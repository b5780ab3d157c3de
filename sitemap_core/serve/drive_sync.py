"""The synchronous driver of the flow: WSGI, Flask and the commands.

:func:`respond` runs :func:`sitemap_core.serve.flow.serve`, answering each of its
needs with a plain call; :func:`iter_body` pulls a plan's sources and writes its
document.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import Any

from sitemap_core.memory.cache import cache_get, cache_set
from sitemap_core.memory.recall import Check, StaleValidatorsError
from sitemap_core.model.entries import Entry
from sitemap_core.model.hosts import BaseURL
from sitemap_core.serve import flow
from sitemap_core.serve.body import Delivery, DocumentWriter
from sitemap_core.serve.compress import gzip_chunks
from sitemap_core.serve.flights import ThreadFlights
from sitemap_core.serve.http import Reply
from sitemap_core.serve.request import NO_HEADERS
from sitemap_core.serve.site import Plan, Site
from sitemap_core.serve.spool import Spool
from sitemap_core.sources.base import BATCH_SIZE, UrlSource, close_now, naming, recent_changes
from sitemap_core.sources.scope import enter_request, leave_request

__all__ = ["count_index_parts", "iter_body", "respond", "run"]


def respond(
    site: Site[UrlSource],
    method: str,
    path: str,
    base_url: Callable[[], BaseURL],
    request: Mapping[str, str] = NO_HEADERS,
    protocol: str = "HTTP/1.1",
    sharing: ThreadFlights | None = None,
) -> Reply | None:
    """Answer a request synchronously; None when ``path`` is not the site's.

    ``request`` holds the lower-cased request headers the core reads, ``protocol`` the
    request's HTTP version (see :func:`~sitemap_core.serve.request.is_sized`). A source
    error before the first byte propagates to the caller, which answers 500; after it,
    the body raises mid-stream and the server cuts the transfer. The sources' facts are
    asked in one request scope (see :mod:`sitemap_core.sources.scope`). With
    ``sharing``, the threads of a process answering at once share the walks the flow
    marks as shared (counts and spooled documents of sources without a fingerprint).
    """
    scope = enter_request()
    try:
        steps = flow.serve(site, method, path, base_url, request, protocol)
        reply: Reply | None = run(site, steps, sharing)
        return reply
    finally:
        leave_request(scope)


def count_index_parts(site: Site[UrlSource], base: BaseURL) -> int:
    """How many index files robots.txt lists for ``base``: one if a count fails (in a
    request scope of its own; see :func:`~sitemap_core.serve.flow.index_parts`)."""
    scope = enter_request()
    try:
        parts: int = run(site, flow.index_parts(site, base))
        return parts
    finally:
        leave_request(scope)


def run(site: Site[UrlSource], steps: flow.Flow, sharing: ThreadFlights | None = None) -> Any:
    """Drive ``steps`` (a flow) to its end, answering each need; its result."""
    driving = flow.Driving(steps)
    for need in driving:
        try:
            driving.answer(_answer_shared(site, need, sharing))
        except Exception as exc:  # handed to the flow, which may recover or re-raise
            driving.fail(exc)
    return driving.result


def _answer_shared(site: Site[UrlSource], need: flow.Need, sharing: ThreadFlights | None) -> Any:
    # The answer to ``need``, shared with the threads that ask it meanwhile when the
    # flow marks it so: a count, or a spool (then claimed by each of them).
    shared = getattr(need, "shared", None)
    if sharing is None or shared is None:
        return _answer(site, need)
    if isinstance(need, flow.Fact):
        return sharing.once(shared, partial(_answer, site, need))
    spool: Spool = sharing.once(shared, partial(_answer, site, need), Spool.claim)
    if isinstance(need, flow.Fill) and spool is not need.spool:
        need.spool.release()  # another thread's fill answered for it
    return spool


def _answer(site: Site[UrlSource], need: flow.Need) -> Any:
    if isinstance(need, flow.Fact):
        if need.kind == "count":
            return need.source.count()
        return getattr(need.source, need.kind)(need.start, need.stop)
    if isinstance(need, flow.CacheRead):
        return cache_get(need.cache, need.key)
    if isinstance(need, flow.CacheWrite):
        return cache_set(need.cache, need.key, need.data)
    if isinstance(need, flow.RecentChanges):
        return recent_changes(need.sources, need.limit, need.since)
    if isinstance(need, flow.RenderFeed):
        return need.render()
    if isinstance(need, flow.Fill):
        return _filled(need.spool, _written(need.writer()))
    if isinstance(need, flow.Encode):
        return need.spool.gzipped()
    return _opened(site, need.body)


def iter_body(
    plan: Plan[UrlSource],
    batch_size: int = BATCH_SIZE,
    observe: Callable[[list[Entry]], None] | None = None,
    check: Check | None = None,
) -> Iterator[bytes]:
    """Stream the plan's uncompressed document as chunks, pulling sources synchronously.

    ``observe`` sees each batch; with ``check`` (a plan made from remembered counts),
    each slice is verified as it is read (see :class:`~sitemap_core.serve.body.DocumentWriter`).
    """
    return _written(DocumentWriter(plan, observe, check), batch_size)


def _written(writer: DocumentWriter[UrlSource], batch_size: int = BATCH_SIZE) -> Iterator[bytes]:
    if opening := writer.opening():
        yield opening
    for part in writer.slices():
        batches = part.source.batches(part.start, part.asked, batch_size)
        try:
            with naming(part.source.name):
                for batch in batches:
                    if chunk := part.write(batch):
                        yield chunk
                    if part.done:
                        break
        finally:
            close_now(batches)
        part.finish()
    yield writer.closing()


def _filled(spool: Spool, chunks: Iterator[bytes]) -> Spool:
    # The whole of ``chunks`` written to ``spool``, which is closed if they fail.
    try:
        for chunk in chunks:
            spool.write(chunk)
    except BaseException:
        spool.release()  # the temporary file goes now, not with the traceback
        raise
    return spool


def _opened(site: Site[UrlSource], body: flow.Body[UrlSource]) -> flow.Opened | None:
    # The body started: its first chunk read (a failure before it raises here), or
    # read whole when it must carry its length.
    chunks = _written(body.writer())
    if body.coding == "gzip":
        chunks = gzip_chunks(chunks)
    if body.sized:
        # Read whole before the first byte: a failure is the front's 500, not a cut
        # transfer, so only the replay is delivered (and kept for the cache).
        spool = _filled(Spool("identity"), chunks)
        return flow.Opened(_delivered(spool.chunks(), body.delivery(site)), spool.length)
    stream = _delivered(chunks, body.delivery(site))
    try:
        first = next(stream)
    except StaleValidatorsError:
        return None
    return flow.Opened(_chained(first, stream))


def _delivered(chunks: Iterator[bytes], delivery: Delivery) -> Iterator[bytes]:
    try:
        for chunk in chunks:
            delivery.chunk(chunk)
            yield chunk
    except Exception as exc:
        delivery.failed(exc)
        raise
    document = delivery.kept()
    if document is not None and delivery.cache is not None and delivery.key is not None:
        cache_set(delivery.cache, delivery.key, document)


def _chained(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest
