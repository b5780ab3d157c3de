"""One render of a document, read by every concurrent response for it.

A streamed sitemap page used to be rendered at the pace of its client: a crawler reading
at 1 KB/s held its source (and, for a sync source, one of the sitemap's threads) for as
long as it read, and two hundred such readers of ``/sitemap.xml`` meant two hundred
renders and their buffers. Here a document is rendered once, at full speed, into a
:class:`Relay`: a temporary file (so a slow reader costs disk, not memory) whose newest
:data:`WINDOW` bytes are also kept in memory (so a reader that keeps up never touches the
file). Every response for the same document and coding (the same ETag) reads the relay
from the start at its own pace. Renders are bounded by a limiter; a render whose last
reader left stops at its next chunk.
"""

from __future__ import annotations

import logging
import os
import tempfile
from bisect import bisect_right
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import nullcontext
from typing import Any

import anyio
import anyio.lowlevel

from sitemap_core.serve.front import Render, Share, aclose, chained

from .threads import ThreadRunner

__all__ = ["WINDOW", "AbandonedRender", "Reading", "Relay", "Relays"]

logger = logging.getLogger("asgi_sitemap")

#: Bytes of the newest chunks a relay keeps in memory for readers that keep up.
WINDOW = 256 * 1024


class AbandonedRender(Exception):
    """A render stopped because no response was reading it any more."""


class Relay:
    """The chunks of one render, written once and read by any number of readers."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()  # noqa: SIM115  # closed by the last reader
        self._recent: deque[tuple[int, bytes]] = deque()
        self._recent_bytes = 0
        #: Where each chunk ends: a reader behind the window reads whole chunks from
        #: the file, so what it sends is cut as the render cut it.
        self._ends: list[int] = []
        self._more = anyio.Event()
        #: Bytes written so far.
        self.end = 0
        self.done = False
        self.error: BaseException | None = None
        #: Readers still reading; the render stops once this falls to zero.
        self.readers = 0

    def put(self, chunk: bytes) -> None:
        """Add the next chunk of the document and wake the readers."""
        os.write(self._file.fileno(), chunk)
        self._recent.append((self.end, chunk))
        self._recent_bytes += len(chunk)
        self.end += len(chunk)
        self._ends.append(self.end)
        while self._recent_bytes > WINDOW and len(self._recent) > 1:
            _, old = self._recent.popleft()
            self._recent_bytes -= len(old)
        self._wake()

    def finish(self, error: BaseException | None = None) -> None:
        """The render ended: complete, or with ``error`` (the readers raise it)."""
        self.done = True
        self.error = error
        self._wake()
        self._close_if_unread()

    def _wake(self) -> None:
        more, self._more = self._more, anyio.Event()
        more.set()

    def _take(self, offset: int) -> bytes:
        # From memory when the chunk at ``offset`` is still there, else from the file.
        for start, chunk in self._recent:
            if start <= offset < start + len(chunk):
                return chunk[offset - start :]
        end = self._ends[bisect_right(self._ends, offset)]
        return os.pread(self._file.fileno(), end - offset, offset)

    def read(self) -> Reading:
        """The whole document from its first byte, as fast as it is rendered: a reader
        counted from now until it reads to the end or is closed."""
        return Reading(self)

    def readable(self) -> bool:
        """Whether a new reader can still read it whole (its file is open)."""
        return not self._file.closed

    async def _after(self, offset: int) -> bytes | None:
        # The bytes after ``offset``, waiting for them; None at the document's end.
        while offset >= self.end:
            if self.done:
                if self.error is not None:
                    raise self.error
                return None
            await self._more.wait()
        return self._take(offset)

    def _close_if_unread(self) -> None:
        if self.done and self.readers == 0:
            self._file.close()


class Reading:
    """One reader of a relay, at its own offset: it counts among the relay's readers
    from its making (so that one made for a waiting request holds the relay open before
    it reads) until it reaches the end, fails or is closed."""

    def __init__(self, relay: Relay) -> None:
        self._relay: Relay | None = relay
        self._offset = 0
        relay.readers += 1

    def __aiter__(self) -> Reading:
        return self

    async def __anext__(self) -> bytes:
        if self._relay is None:
            raise StopAsyncIteration
        try:
            data = await self._relay._after(self._offset)
        except BaseException:
            self.close()
            raise
        if data is None:
            self.close()
            raise StopAsyncIteration
        self._offset += len(data)
        return data

    async def aclose(self) -> None:
        """Stop reading (see :meth:`close`)."""
        self.close()

    def close(self) -> None:
        """Stop reading (again: nothing); the last reader of a finished render closes
        its file."""
        relay, self._relay = self._relay, None
        if relay is not None:
            relay.readers -= 1
            relay._close_if_unread()


class Relays:
    """The renders in flight, by document key (its ETag), and the bound on renders."""

    def __init__(self, renders: int) -> None:
        self._live: dict[str, Relay] = {}
        self._renders = renders
        self._limiter: anyio.CapacityLimiter | None = None

    def __len__(self) -> int:
        return len(self._live)

    def _limit(self) -> anyio.CapacityLimiter:
        # Made on first use, inside the event loop that uses it.
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self._renders)
        return self._limiter

    def bound(
        self,
        task_group: Any,
        threads: anyio.CapacityLimiter | None = None,
        seen: Callable[[AsyncIterator[bytes], Relay], object] | None = None,
    ) -> Share:
        """The sharing hook for one request (see
        :func:`sitemap_core.serve.drive_async.respond_async`).

        Its renders run in ``task_group``, the request's own, with a runner of their
        own (sync sources in ``threads``): the request closing its runner when its
        client leaves must not stop a render other responses still read. ``seen`` is
        told each body handed out and the relay it reads (see asgi_sitemap.followers).
        """

        async def share(key: str, render: Render, bounded: bool = True) -> AsyncIterator[bytes]:
            relay = self._live.get(key)
            if relay is None or relay.done:
                relay = self._live[key] = Relay()
                task_group.start_soon(self._produce, key, relay, render, threads, bounded)
            reader = relay.read()
            try:
                # The first chunk now: a render failing before it is a 500, not a 200.
                first = await anext(reader)
            except BaseException:
                await reader.aclose()
                raise
            body = chained(first, reader)
            if seen is not None:
                seen(body, relay)
            return body

        return share

    async def _produce(
        self,
        key: str,
        relay: Relay,
        render: Render,
        threads: anyio.CapacityLimiter | None,
        bounded: bool,
    ) -> None:
        error: BaseException | None = None
        try:
            # Shielded: other requests' readers depend on this render, so the request
            # that started it going away must not cut it short; it ends by itself once
            # no reader is left, and it is bounded by the limiter. Its threads run in a
            # task group made inside the shield: in the request's own group, that
            # request's disconnect would cancel the task pulling a sync source, whose
            # stream would then end early, as if complete.
            with anyio.CancelScope(shield=True):
                # A recoding render (not ``bounded``) waits on one that holds a slot:
                # were it to hold one too, such renders could take every slot and
                # wait for ever on renders that cannot start.
                limit = self._limit() if bounded else nullcontext()
                async with limit, anyio.create_task_group() as pulling:
                    runner = ThreadRunner(pulling, threads)
                    try:
                        error = await self._pump(key, relay, render(runner))
                    except Exception as exc:  # caught here, not wrapped by the group
                        error = exc
                    finally:
                        runner.close()
        except Exception as exc:  # given to the readers, who cut their transfers
            error = exc
        finally:
            relay.finish(error)
            self._drop(key, relay)

    async def _pump(
        self, key: str, relay: Relay, body: AsyncIterator[bytes]
    ) -> AbandonedRender | None:
        # The render's chunks into the relay, until it ends or every reader left.
        try:
            async for chunk in body:
                relay.put(chunk)
                # A turn for the loop per chunk, even for a source that never awaits:
                # other requests run, and a disconnect is seen.
                await anyio.lowlevel.checkpoint()
                if relay.readers == 0:
                    # Every reader left: stop, and let no new one join.
                    self._drop(key, relay)
                    return AbandonedRender("every reader of this render left")
        finally:
            await aclose(body)
        return None

    def _drop(self, key: str, relay: Relay) -> None:
        if self._live.get(key) is relay:
            del self._live[key]
