"""Running sync sources off the event loop, with anyio (asyncio and trio alike)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

__all__ = ["ThreadRunner"]

T = TypeVar("T")


@dataclass
class _Failure:
    error: Exception


class SourceStoppedError(RuntimeError):
    """The worker pulling a sync source stopped before the source's end (cancelled).

    Raised instead of ending the items there: a stream that simply stopped would read as
    the end of the source, and a body cut short would look complete.
    """


#: Sent by the worker after the source's last item: the end, said explicitly.
_END = object()


class ThreadRunner:
    """The :class:`~sitemap_core.sources.aio.Runner` of one request, bound to its task group.

    Each sync iteration runs in one worker thread, which hands its items (batches of
    entries, or chunks a sync source's page was already written into) over a
    one-slot stream: the thread stays at most one item ahead of the writer (memory
    stays flat) and the event loop only ever waits, never runs source code.
    """

    def __init__(self, task_group: TaskGroup, limiter: anyio.CapacityLimiter | None = None) -> None:
        self._task_group = task_group
        self._limiter = limiter
        self._open: list[tuple[MemoryObjectReceiveStream[Any], threading.Event]] = []

    async def run_sync(self, func: Callable[[], T]) -> T:
        """Await ``func()`` run in a worker thread."""
        return await anyio.to_thread.run_sync(func, limiter=self._limiter)

    def close(self) -> None:
        """Stop every pulling thread of this request (their streams are closed).

        A thread parked handing over a batch then gets a closed stream and ends, so
        the request's task group can finish whatever way the response ended.
        """
        for receive, stopped in self._open:
            stopped.set()
            receive.close()
        self._open.clear()

    def pull_sync(self, make_batches: Callable[[], Iterator[T]]) -> AsyncIterator[T]:
        """Iterate ``make_batches()`` in one worker thread, as an async iterator."""
        send, receive = anyio.create_memory_object_stream[Any](1)
        stopped = threading.Event()
        self._open.append((receive, stopped))
        self._task_group.start_soon(_produce, make_batches, send, stopped, self._limiter)
        return _consume(receive, stopped)


async def _produce(
    make_batches: Callable[[], Iterator[Any]],
    send: MemoryObjectSendStream[Any],
    stopped: threading.Event,
    limiter: anyio.CapacityLimiter | None,
) -> None:
    async with send:
        await anyio.to_thread.run_sync(_pull_all, make_batches, send, stopped, limiter=limiter)


def _pull_all(
    make_batches: Callable[[], Iterator[Any]],
    send: MemoryObjectSendStream[Any],
    stopped: threading.Event,
) -> None:
    batches: Iterator[Any] | None = None
    try:
        batches = make_batches()
        for batch in batches:
            if stopped.is_set():
                return
            anyio.from_thread.run(send.send, batch)
        anyio.from_thread.run(send.send, _END)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        return  # the response was abandoned (client gone): stop pulling
    except Exception as exc:
        # Hand the source's error to the writer, which raises it where a sync front
        # would: before the first byte (500) or mid-stream (transfer cut).
        try:
            anyio.from_thread.run(send.send, _Failure(exc))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return
    finally:
        close = getattr(batches, "close", None)
        if close is not None:
            close()


async def _consume(
    receive: MemoryObjectReceiveStream[Any], stopped: threading.Event
) -> AsyncIterator[Any]:
    try:
        async with receive:
            async for item in receive:
                if item is _END:
                    return
                if isinstance(item, _Failure):
                    raise item.error
                yield item
        raise SourceStoppedError("the worker pulling a sync source stopped before its end")
    finally:
        stopped.set()
