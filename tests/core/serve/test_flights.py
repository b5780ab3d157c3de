"""Issue 22: the threads of one process that need the same walk share one
(:class:`~sitemap_core.serve.flights.ThreadFlights`, the sync driver's sharing)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from sitemap_core.serve.flights import ThreadFlights


class Gated:
    """A computation that counts its runs and waits for :attr:`gate` before answering."""

    def __init__(self, answer: Any = 42, error: Exception | None = None) -> None:
        self.answer = answer
        self.error = error
        self.runs = 0
        self.gate = threading.Event()

    def __call__(self) -> Any:
        self.runs += 1
        assert self.gate.wait(10)
        if self.error is not None:
            raise self.error
        return self.answer


def _ask_in_threads(flights: ThreadFlights, compute: Gated, count: int, **kwargs: Any) -> list[Any]:
    got: list[Any] = []

    def ask() -> None:
        try:
            got.append(flights.once("k", compute, **kwargs))
        except Exception as exc:  # what the caller saw, asserted below
            got.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(count)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 10
    while flights.flights.waiting("k") < count - 1 and time.monotonic() < deadline:
        time.sleep(0.005)
    compute.gate.set()
    for thread in threads:
        thread.join(10)
    return got


def test_threads_asking_meanwhile_share_one_computation_and_each_holds_a_claim() -> None:
    flights = ThreadFlights()
    compute = Gated(answer={"claims": 1})

    def claim(answer: dict[str, int]) -> None:
        answer["claims"] += 1

    got = _ask_in_threads(flights, compute, 8, claim=claim)
    assert compute.runs == 1
    assert got == [compute.answer] * 8 and compute.answer == {"claims": 8}
    assert len(flights.flights) == 0  # nothing kept once given
    again = Gated(7)
    again.gate.set()
    assert flights.once("k", again) == 7 and again.runs == 1


def test_a_failed_computation_fails_every_thread_that_waited_for_it() -> None:
    flights = ThreadFlights()
    compute = Gated(error=RuntimeError("walk failed"))
    got = _ask_in_threads(flights, compute, 5)
    assert compute.runs == 1
    assert len(got) == 5 and all(isinstance(error, RuntimeError) for error in got)
    assert len(flights.flights) == 0
    with pytest.raises(RuntimeError):
        flights.once("k", compute)  # the next one computes afresh
    assert compute.runs == 2
