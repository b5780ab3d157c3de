"""One computation for every concurrent request that needs the same answer.

A source without a fingerprint is known only by walking it: its count is a walk, and
a document of it is a walk written to a spool before its first byte. Two hundred
crawlers asking the index or a page at once meant two hundred walks, and every
other request of the app waited behind them for the sitemap's threads. Here the
first request to need an answer computes it, in its own task; those that need the
same answer meanwhile wait for it, and are given it too. Nothing is kept once it is
given: the next request computes afresh, so an answer is never older than the
requests it serves.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar, cast

import anyio

__all__ = ["Flights"]

T = TypeVar("T")


class _Flight(Generic[T]):
    """One computation under way, and the requests waiting for it."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.waiting = 0
        self.given = False
        self.result: T | None = None
        self.error: Exception | None = None


class Flights:
    """The computations under way, by key (a driver's ``Sharing.once``)."""

    def __init__(self) -> None:
        self._live: dict[str, _Flight[Any]] = {}

    def __len__(self) -> int:
        return len(self._live)

    async def once(
        self,
        key: str,
        compute: Callable[[], Awaitable[T]],
        claim: Callable[[T], object] | None = None,
        release: Callable[[T], object] | None = None,
    ) -> T:
        """``await compute()``, or the result of the computation under ``key`` already
        under way (its error, if it failed).

        ``claim(result)`` is called once for each other request given the result, at
        the moment it is ready (a shared spool counts its holders); ``release`` gives
        a claim back for a waiting request cancelled before it could use it. A
        computation whose own request was cancelled leaves no result: one of the
        waiting requests computes it again.
        """
        while True:
            flight: _Flight[T] | None = self._live.get(key)
            if flight is None:
                return await self._lead(key, compute, claim)
            await self._follow(flight, release)
            if flight.given:
                return cast(T, flight.result)
            if flight.error is not None:
                raise flight.error

    async def _lead(
        self, key: str, compute: Callable[[], Awaitable[T]], claim: Callable[[T], object] | None
    ) -> T:
        flight: _Flight[T] = _Flight()
        self._live[key] = flight
        try:
            result = await compute()
        except Exception as exc:
            flight.error = exc  # the waiting requests fail as this one does
            raise
        else:
            if claim is not None:
                for _ in range(flight.waiting):
                    claim(result)
            flight.result, flight.given = result, True
            return result
        finally:
            # Whatever the way out (a cancellation leaves neither result nor error),
            # no later request may join this flight, and its waiters must wake.
            del self._live[key]
            flight.done.set()

    async def _follow(self, flight: _Flight[T], release: Callable[[T], object] | None) -> None:
        flight.waiting += 1
        try:
            await flight.done.wait()
        except BaseException:
            # Cancelled while waiting: counted out, or, if the result was already
            # claimed for this request, its claim given back.
            if not flight.done.is_set():
                flight.waiting -= 1
            elif flight.given and release is not None:
                release(cast(T, flight.result))
            raise
