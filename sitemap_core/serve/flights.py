"""One computation for every concurrent request that needs the same answer.

A source without a fingerprint is known only by walking it: its count is a walk, and
a document of it is a walk written to a spool before its first byte. Two hundred
crawlers asking the index or a page at once meant two hundred walks, and every
other request of the app waited behind them. Here the first request to need an
answer computes it; those that need the same answer meanwhile wait for it, and are
given it too. Nothing is kept once it is given: the next request computes afresh, so
an answer is never older than the requests it serves.

:class:`Flights` is the bookkeeping, written once; a front waits on it in its own
way: the threads of one process with :class:`ThreadFlights` (the sync driver's
``sharing``), the tasks of an event loop with ``asgi_sitemap.flights``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar, cast

__all__ = ["Flight", "Flights", "ThreadFlights"]

T = TypeVar("T")


class Flight(Generic[T]):
    """One computation under way, and the requests waiting for it."""

    def __init__(self, done: Any) -> None:
        #: Set once the computation ended, whatever its end.
        self.done = done
        self.waiting = 0
        self.given = False
        self.result: T | None = None
        self.error: Exception | None = None

    def outcome(self) -> tuple[bool, T | None]:
        """For a waiting request once :attr:`done`: (True, the result), the
        computation's error raised, or (False, None) when it left no result (its own
        request went away) and the waiting request must compute it again."""
        if self.given:
            return True, self.result
        if self.error is not None:
            raise self.error
        return False, None


class Flights:
    """The computations under way, by key; ``event()`` makes a flight's end event.

    Safe for threads: joining a flight and handing out its result's claims happen
    under one lock, so no request joins a flight once its result is handed out.
    """

    def __init__(self, event: Callable[[], Any]) -> None:
        self._event = event
        self._live: dict[str, Flight[Any]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._live)

    def waiting(self, key: str) -> int:
        """How many requests wait for the computation under ``key`` (0: none is under
        way, or no one waits)."""
        flight = self._live.get(key)
        return 0 if flight is None else flight.waiting

    def board(self, key: str) -> tuple[Flight[Any], bool]:
        """The flight under ``key`` and True when the caller leads it (computes it),
        False when it joined one under way (and waits for its end)."""
        with self._lock:
            flight = self._live.get(key)
            if flight is None:
                flight = self._live[key] = Flight(self._event())
                return flight, True
            flight.waiting += 1
            return flight, False

    @contextmanager
    def leading(self, key: str, flight: Flight[T]) -> Iterator[None]:
        """Around the leader's computation: its error is the waiting requests' too,
        and whatever the way out (a cancellation leaves neither result nor error), no
        later request joins the flight and its waiters wake."""
        try:
            yield
        except Exception as exc:
            flight.error = exc
            raise
        finally:
            with self._lock:
                if self._live.get(key) is flight:
                    del self._live[key]
            flight.done.set()

    def give(
        self, key: str, flight: Flight[T], result: T, claim: Callable[[T], object] | None
    ) -> None:
        """Hand ``result`` to the waiting requests: ``claim(result)`` once for each."""
        with self._lock:
            del self._live[key]  # no one joins once the claims are counted
            if claim is not None:
                for _ in range(flight.waiting):
                    claim(result)
            flight.result, flight.given = result, True


class ThreadFlights:
    """Shared computations for the threads of one process (gunicorn's gthread
    workers, a threaded WSGI server): see :func:`sitemap_core.serve.drive_sync.respond`."""

    def __init__(self) -> None:
        self.flights = Flights(threading.Event)

    def once(
        self, key: str, compute: Callable[[], T], claim: Callable[[T], object] | None = None
    ) -> T:
        """``compute()``, or the result of the computation under ``key`` already
        under way in another thread (its error, if it failed); ``claim(result)`` is
        called once for each other thread given it."""
        while True:
            flight, lead = self.flights.board(key)
            if lead:
                with self.flights.leading(key, flight):
                    result = compute()
                    self.flights.give(key, flight, result, claim)
                    return result
            flight.done.wait()
            given, shared = flight.outcome()
            if given:
                return cast(T, shared)
