"""One computation for every concurrent request of an event loop that needs the same
answer (see :mod:`sitemap_core.serve.flights`, whose bookkeeping this waits on)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar, cast

import anyio

from sitemap_core.serve.front import Flight
from sitemap_core.serve.front import Flights as Board

__all__ = ["Flights"]

T = TypeVar("T")


class Flights:
    """The computations under way, by key (a driver's ``Sharing.once``)."""

    def __init__(self) -> None:
        self._board = Board(anyio.Event)

    def __len__(self) -> int:
        return len(self._board)

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
            flight, lead = self._board.board(key)
            if lead:
                with self._board.leading(key, flight):
                    result = await compute()
                    self._board.give(key, flight, result, claim)
                    return result
            await _follow(flight, release)
            given, shared = flight.outcome()
            if given:
                return cast(T, shared)


async def _follow(flight: Flight[T], release: Callable[[T], object] | None) -> None:
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
