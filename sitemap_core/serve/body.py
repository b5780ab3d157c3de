"""Writing a document's body: the one place that turns a plan's batches into chunks.

The sync and the async drivers differ only in how they pull a source's batches; what
is done with each batch (the plan's checks, the news rules, the encoder, the checks
of a remembered document) and with each chunk on its way out (kept for the page
cache, a failure logged, a stale memory dropped) is written here once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, Generic

from sitemap_core.memory.cache import PageCache
from sitemap_core.memory.recall import Check, Recall, StaleValidatorsError, head
from sitemap_core.model.entries import Entry
from sitemap_core.serve.children import children_of
from sitemap_core.serve.site import Plan, S, check_complete
from sitemap_core.sources.newsroom import check_news

__all__ = [
    "Delivery",
    "DocumentWriter",
    "Slice",
    "clamped",
]

logger = logging.getLogger("sitemap_core")

#: What sees each batch of entries as it is written (a spool's newest lastmod).
Observer = Callable[[list[Entry]], None]


class DocumentWriter(Generic[S]):
    """The bytes of one document, as its batches arrive.

    ``check`` (a plan made from remembered counts) verifies each slice as it is read;
    ``observe`` sees every batch. A driver calls :meth:`opening`, then for each of
    :meth:`slices` its :meth:`Slice.write` per batch and :meth:`Slice.finish`, then
    :meth:`closing`.
    """

    def __init__(
        self, plan: Plan[S], observe: Observer | None = None, check: Check | None = None
    ) -> None:
        self.plan = plan
        self.observe = observe
        self.check = check
        self.encoder = plan.encoder()

    def opening(self) -> bytes:
        """The first bytes: the index's children before any that stream."""
        runs, children = self.plan.runs, self.plan.children
        if runs:
            children = children[: runs[0].at]
        return self.encoder.feed(children) if children else b""

    def slices(self) -> Iterator[Slice[S]]:
        """The writers of the plan's slices, in order; for an index, of its runs of
        children streamed from stable pages, each with the children that follow it
        (see :mod:`sitemap_core.serve.children`)."""
        for source, start, stop in self.plan.slices:
            yield Slice(self, source, start, stop)
        runs, children = self.plan.runs, self.plan.children
        ends = [run.at for run in runs[1:]] + [len(children)]
        for run, end in zip(runs, ends[: len(runs)], strict=True):
            following = children[run.at : end]
            # A source of entries to the drivers, pulled as a slice is.
            pulled: Any = children_of(run, following)
            yield Slice(self, pulled, 0, run.take + len(following))

    def closing(self) -> bytes:
        """The last bytes; a remembered document's check runs before they are given."""
        last = self.encoder.close()
        if self.check is not None:
            self.check.chunk(last)
            self.check.finish()
        return last


class Slice(Generic[S]):
    """One slice ``[start, stop)`` of a source being written.

    A slice that ends its source's remembered count is read one entry further
    (:attr:`asked` is ``stop + 1``): that entry is never written, but seeing it tells
    the check that the source grew.
    """

    def __init__(self, writer: DocumentWriter[S], source: S, start: int, stop: int) -> None:
        self.writer = writer
        self.source = source
        self.start = start
        self.stop = stop
        check = writer.check
        self.probe = check is not None and check.probes(source.name, stop)
        #: The stop to ask the source for.
        self.asked = stop + self.probe
        self.pulled = 0
        self.grew = False
        stable = writer.plan.stable.get((source.name, start, stop))
        #: How many entries the plan expects: a stable page's own count, else the range.
        self.expected = stop - start if stable is None else stable.urls
        #: True once the entry past the end was seen: pull no more.
        self.done = False

    def write(self, batch: list[Entry]) -> bytes:
        """The chunk of ``batch`` (possibly empty), checked and encoded."""
        wanted = self.stop - self.start
        if self.probe and self.pulled + len(batch) > wanted:
            self.grew = True
            batch = head(batch, wanted - self.pulled)
            if not batch:
                self.done = True
                return b""
        self.pulled += len(batch)
        writer = self.writer
        plan, source = writer.plan, self.source
        plan.check(batch, source.name)
        if source.limits.news:
            check_news(batch, source.name)
        if writer.observe is not None:
            writer.observe(batch)
        # max_entry_bytes bounds the XML element; the HTML view has its own, looser cap.
        bound = None if plan.view is not None else source.limits.max_entry_bytes
        chunk = writer.encoder.feed(batch, bound, source.name)
        if chunk and writer.check is not None:
            writer.check.chunk(chunk)
        return chunk

    def finish(self) -> None:
        """The slice is read: fewer entries than planned is an error, or, for a
        remembered document, a sign that its counts no longer hold."""
        if self.writer.check is None:
            check_complete(self.source.name, self.start, self.stop, self.pulled, self.expected)
        else:
            self.writer.check.sliced(self.stop - self.start, self.pulled, self.grew)


def clamped(newest: datetime | None) -> datetime | None:
    """``newest``, but never in the future: a lastmod in the future must not become a
    future Last-Modified (RFC 9110 8.8.2.1)."""
    return None if newest is None else min(newest, datetime.now(UTC))


class Delivery:
    """What happens to a streamed body's chunks on their way to the client.

    The whole document is kept for the page cache once it all went out (a cut transfer
    caches nothing; one too large to keep is let go as soon as it is); a failure after
    the first byte is logged, since the transfer is then cut and the front cannot
    answer 500; a remembered document found stale is dropped from ``recall``, so that
    the next request renders it afresh.
    """

    def __init__(
        self,
        cache: PageCache | None = None,
        key: str | None = None,
        recall: Recall | None = None,
        identity: str = "",
    ) -> None:
        self.cache = cache if key is not None else None
        self.key = key
        self.recall = recall
        self.identity = identity
        self._parts: list[bytes] | None = [] if self.cache is not None else None
        self._size = 0
        self.sent = False

    def chunk(self, data: bytes) -> None:
        """See ``data`` before it is sent."""
        self.sent = True
        if self._parts is not None and self.cache is not None:
            self._size += len(data)
            if self._size <= self.cache.max_item_bytes:
                self._parts.append(data)
            else:
                self._parts = None  # too large to keep: stop holding it

    def failed(self, error: Exception) -> None:
        """The body raised ``error``: drop a stale memory, and log a cut transfer."""
        stale = isinstance(error, StaleValidatorsError)
        if stale and self.recall is not None:
            self.recall.disarm(self.identity)
        if not self.sent:
            return  # nothing went out: the error reaches the front, which answers it
        if stale:
            # Expected now and then, when data changes under a stream: no traceback.
            logger.warning("sitemap document cut: %s", error)
        else:
            logger.exception("sitemap source failed mid-response; the transfer is cut")

    def kept(self) -> bytes | None:
        """The whole document, to store in the page cache, or None."""
        if self._parts is None or self.key is None:
            return None
        return b"".join(self._parts)
