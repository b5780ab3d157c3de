"""Issue 22: the C heap is given back once, when the last response of a crowd ends.

:class:`asgi_sitemap.heap.Crowd` on its own, then through the middleware: a crowd of
slow readers (some leaving early) ends with exactly one trim and nothing of it left in
flight; requests one after another never trim.
"""

from __future__ import annotations

import ctypes.util

import anyio
import pytest

from asgi_sitemap.heap import CROWD, Crowd, malloc_trim
from tests.asgi_front.test_relay import Walks, app_of, gather, get


class Trims:
    """A stand-in for ``malloc_trim(0)`` that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> int:
        self.calls += 1
        return 1


def test_the_last_response_of_a_crowd_gives_the_heap_back_once() -> None:
    trims = Trims()
    crowd = Crowd(trims, crowd=3)
    for _ in range(3):
        crowd.enter()
    crowd.leave()
    crowd.leave()
    assert trims.calls == 0  # one is still in flight
    crowd.enter()  # a newcomer before the last one left: the same crowd
    crowd.leave()
    crowd.leave()
    assert (trims.calls, crowd.open, crowd.trims) == (1, 0, 1)


def test_responses_one_after_another_never_trim() -> None:
    trims = Trims()
    crowd = Crowd(trims, crowd=3)
    for _ in range(100):
        crowd.enter()
        crowd.enter()
        crowd.leave()
        crowd.leave()
    assert trims.calls == 0 and crowd.trims == 0


def test_without_a_trim_a_crowd_is_only_counted() -> None:
    crowd = Crowd(None, crowd=1)
    crowd.enter()
    crowd.leave()
    assert crowd.trims == 1 and crowd.open == 0


def test_a_crowd_of_slow_readers_through_the_middleware_ends_with_one_trim() -> None:
    async def main() -> None:
        app = app_of(Walks(5_000))
        trims = Trims()
        app._crowd = Crowd(trims)
        await get(app, "/sitemap.xml")  # learns the validators (spooled)
        readers = [
            get(app, "/sitemap.xml", pause=0.005, leave_after=2 if n % 4 == 0 else None)
            for n in range(CROWD)
        ]
        got = await gather(*readers)
        assert all(g.status == 200 for g in got)
        assert trims.calls == 1
        # Nothing of the crowd is held: no response, render or shared walk in flight.
        assert (app._crowd.open, len(app._relays), len(app._flights)) == (0, 0, 0)
        for _ in range(3):
            await get(app, "/sitemap.xml")
        assert trims.calls == 1

    anyio.run(main)


@pytest.mark.skipif(ctypes.util.find_library("c") is None, reason="no C library found")
def test_malloc_trim_is_glibcs_where_there_is_one() -> None:
    trim = malloc_trim()
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "malloc_trim"):
        assert trim is None
        return
    assert trim is not None and trim() in (0, 1)
