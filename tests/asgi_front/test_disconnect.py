"""A client that goes away mid-page stops the source, on a real uvicorn.

The source is slow on purpose (it naps every 100 entries, so one page of 50,000 takes
at least 2.5 s) and holds up to 1,000,000 entries. The client reads the first chunk of
``/sitemap-big-1.xml`` and closes the connection. The middleware must notice the
disconnect and stop pulling: the source's counter stops growing within a batch or two
of what had been sent, far below the page's 50,000, and the generator is closed (its
``finally`` runs), for a sync generator (pulled in a worker thread) and an async one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import pytest
from starlette.applications import Starlette

from asgi_sitemap import AsyncUrlSource, SitemapMiddleware

from .conftest import ServeApp

BASE_URL = "https://www.example.com"
TOTAL = 1_000_000
PAGE_SIZE = 50_000
NAP_EVERY = 100
NAP = 0.005
#: How long after the disconnect the source must have been closed.
CLOSE_WITHIN = 2.0
#: The source may run ahead of the socket by a few hand-overs (a sync source is written
#: in a worker thread that hands the loop up to 256 KiB of chunks at once), never by a
#: large share of the page.
MAX_PRODUCED = PAGE_SIZE // 5


@dataclass
class Probe:
    """What the source did, written by the source (server side), read by the test."""

    produced: int = 0
    closed_at: float | None = None
    finally_ran: threading.Event = field(default_factory=threading.Event)
    #: Set after an ``await`` in the async source's ``finally`` (cleanup that awaits).
    cleanup_done: threading.Event = field(default_factory=threading.Event)


def _url(n: int) -> str:
    return f"{BASE_URL}/items/{n}"


def sync_source(probe: Probe) -> Callable[[], Iterator[str]]:
    """A generator function pulled in a worker thread."""

    def entries() -> Iterator[str]:
        try:
            for n in range(1, TOTAL + 1):
                if n % NAP_EVERY == 0:
                    time.sleep(NAP)
                probe.produced = n
                yield _url(n)
        finally:
            probe.closed_at = time.monotonic()
            probe.finally_ran.set()

    return entries


def async_source(
    probe: Probe, *, cpu_bound: bool = False, shielded_cleanup: bool = False
) -> Callable[[], AsyncIterator[str]]:
    """An async generator function pulled on the event loop.

    It naps with ``await anyio.sleep`` (an async driver waiting for rows), or with
    ``cpu_bound`` it never awaits and its naps hold the thread, as computing the
    entries would (an async source over data already in memory). ``shielded_cleanup``
    gives its ``finally`` an ``await`` (as ``async with connection:`` has on the way
    out), shielded as anyio requires of cleanup that must run in a cancelled scope.
    """

    async def entries() -> AsyncIterator[str]:
        try:
            for n in range(1, TOTAL + 1):
                if n % NAP_EVERY == 0:
                    if cpu_bound:
                        time.sleep(NAP)  # stands for 5 ms of computing, never awaiting
                    else:
                        await anyio.sleep(NAP)
                probe.produced = n
                yield _url(n)
        finally:
            probe.closed_at = time.monotonic()
            probe.finally_ran.set()
            if shielded_cleanup:
                with anyio.CancelScope(shield=True):
                    await anyio.sleep(0.01)
            probe.cleanup_done.set()

    return entries


def _app(name: str, source: Any) -> SitemapMiddleware:
    # count= keeps the count cheap: walking a million slow entries would take minutes.
    # A fingerprint makes the page stream (without one it would be spooled whole first).
    big = AsyncUrlSource.from_object(
        name, source, count=lambda: TOTAL, fingerprint=lambda: (name, TOTAL)
    )
    return SitemapMiddleware(Starlette(), [big], base_url=BASE_URL, page_size=PAGE_SIZE)


def _read_first_chunk_and_leave(url: str) -> tuple[int, float]:
    """GET ``url``, read one chunk, close the connection; return its size and the time."""
    with (
        httpx.Client(timeout=httpx.Timeout(30.0), trust_env=False) as client,
        client.stream("GET", url) as response,
    ):
        assert response.status_code == 200
        # Keep the iterator: dropping it would close the response right away.
        chunks = response.iter_raw()
        first = next(chunks)
        left_at = time.monotonic()
    # Leaving the blocks closes the socket with most of the page unread (and the
    # client's unread bytes make the kernel answer with a reset).
    return len(first), left_at


def _check_stopped(probe: Probe, left_at: float, label: str) -> None:
    assert probe.finally_ran.wait(CLOSE_WITHIN + 5), (
        f"the source was never closed ({probe.produced} entries produced)"
    )
    assert probe.closed_at is not None
    delay = probe.closed_at - left_at
    produced = probe.produced
    time.sleep(0.5)  # would be 10,000 more entries if the source were still pulled
    print(
        f"\n{label}: {produced} entries produced, closed {delay * 1000:.0f} ms after the"
        f" client left; {probe.produced} after another 0.5 s"
    )
    assert probe.produced == produced, "the source is still being pulled"
    assert produced < MAX_PRODUCED, produced
    assert delay < CLOSE_WITHIN, delay


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_disconnect_stops_and_closes_the_source(kind: str, uvicorn_thread: ServeApp) -> None:
    probe = Probe()
    source = sync_source(probe) if kind == "sync" else async_source(probe)
    server = uvicorn_thread(_app("big", source))

    size, left_at = _read_first_chunk_and_leave(server.url("/sitemap-big-1.xml"))
    assert size > 0
    _check_stopped(probe, left_at, f"{kind} generator")

    # The worker is fine and serves the next request.
    with httpx.Client(trust_env=False) as client:
        assert client.get(server.url("/robots.txt")).status_code == 200


def test_async_source_cleanup_that_awaits_completes_when_shielded(
    uvicorn_thread: ServeApp,
) -> None:
    # The disconnect cancels the request's task group, and anyio cancels every await
    # inside a cancelled scope, the source's own cleanup included (as for Starlette's
    # StreamingResponse): cleanup that must await shields itself, and then completes.
    probe = Probe()
    server = uvicorn_thread(_app("big", async_source(probe, shielded_cleanup=True)))
    _, left_at = _read_first_chunk_and_leave(server.url("/sitemap-big-1.xml"))
    _check_stopped(probe, left_at, "async generator, shielded cleanup")
    assert probe.cleanup_done.wait(2.0), "the shielded cleanup did not complete"


def test_disconnect_stops_an_async_source_that_never_awaits(uvicorn_thread: ServeApp) -> None:
    probe = Probe()
    server = uvicorn_thread(_app("big", async_source(probe, cpu_bound=True)))
    _, left_at = _read_first_chunk_and_leave(server.url("/sitemap-big-1.xml"))
    _check_stopped(probe, left_at, "async generator that never awaits")
