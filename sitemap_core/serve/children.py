"""An index's children that stream from a source's stable pages.

An index of a source with stable pages is decided from the summary of its pages (see
:mod:`sitemap_core.sources.pages`); its children are read as the index is written, from
the source's pages in order (a database cursor), checked as they come, and written in
batches. Each run of them (:class:`~sitemap_core.serve.site.Run`) is handed to the
drivers as a source of entries, the others that follow it in the index after its own:
the drivers pull it as they pull any slice, so an error met mid-stream cuts the
transfer as a source's error does, and nothing a request keeps grows with the pages.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from itertools import islice
from typing import Any, Generic, TypeVar

from sitemap_core.model.entries import Entry
from sitemap_core.serve.site import Run
from sitemap_core.sources.aio import AsyncUrlSource, Runner, aclose
from sitemap_core.sources.base import BATCH_SIZE, WHOLE, Limits, UrlSource, close_now
from sitemap_core.sources.pages import Page
from sitemap_core.write.index_children import ChildBatch, ChildTemplate

__all__ = ["AsyncChildren", "SyncChildren", "children_of"]

#: The limits of a run of children: an index's own (50,000 children, 50 MiB).
_CHILD_LIMITS = Limits()

_S = TypeVar("_S", UrlSource, AsyncUrlSource)


def children_of(run: Run[Any], following: Sequence[Entry]) -> SyncChildren | AsyncChildren:
    """The source of entries a driver pulls for ``run``: its children, then
    ``following`` (the index's children between it and the next run)."""
    source = run.source
    if isinstance(source, UrlSource):
        return SyncChildren(source, run, following)
    if isinstance(source, AsyncUrlSource) and source.threaded is not None:
        return SyncChildren(source.threaded, run, following)
    return AsyncChildren(source, run, following)


class _Children(Generic[_S]):
    # What the children of a run are read from, and their URLs' template.

    limits = _CHILD_LIMITS

    def __init__(self, source: _S, run: Run[Any], following: Sequence[Entry]) -> None:
        self.name = source.name
        self.source: _S = source
        self.run = run
        self.following = following
        #: The children's URLs, made once.
        self.template = ChildTemplate.of(run.prefix, run.suffix)


class SyncChildren(_Children[UrlSource]):
    """The children of ``run``, from a sync source's pages (pulled by the sync driver,
    or in one worker thread by the async one: see ``threaded``)."""

    @property
    def threaded(self) -> SyncChildren:
        """What the async driver pulls in a worker thread: this."""
        return self

    def batches(self, start: int, stop: int, size: int = BATCH_SIZE) -> Iterator[list[Entry]]:
        """The children as lists of at most ``size`` entries (``start`` and ``stop`` are
        the run's own: its children and those following it)."""
        run = self.run
        pages = self.source.stream(1, WHOLE)
        try:
            taken = islice(pages, run.skip, run.skip + run.take)
            while batch := ChildBatch(list(islice(taken, size)), self.template, self.name):
                yield batch
            # Read on to the end of the stream, which is usually the next read: a
            # stream left open is cancelled, which costs a connection to the server.
            next(pages, None)
        finally:
            close_now(pages)
        if self.following:
            yield list(self.following)


class AsyncChildren(_Children[AsyncUrlSource]):
    """The children of ``run``, from an async source's pages, awaited on the loop."""

    threaded = None

    async def batches(
        self, runner: Runner, start: int, stop: int, size: int = BATCH_SIZE
    ) -> AsyncIterator[list[Entry]]:
        """As :meth:`SyncChildren.batches`, awaited."""
        run = self.run
        pages = self.source.stream(1, WHOLE)
        taken: list[Page] = []
        try:
            async for page in _taken(pages, run.skip, run.take):
                taken.append(page)
                if len(taken) == size:
                    yield ChildBatch(taken, self.template, self.name)
                    taken = []
            if taken:
                yield ChildBatch(taken, self.template, self.name)
        finally:
            await aclose(pages)
        if self.following:
            yield list(self.following)


async def _taken(pages: AsyncIterator[Page], skip: int, take: int) -> AsyncIterator[Page]:
    # Pages ``[skip, skip + take)`` of ``pages``; then one more read, usually the end
    # of the stream (see SyncChildren.batches).
    seen = 0
    async for page in pages:
        seen += 1
        if seen > skip:
            yield page
        if seen == skip + take:
            await anext(pages, None)
            return
