"""A slow sync source runs off the event loop: the worker keeps answering meanwhile.

While a 50,000-entry page streams from a sync source that naps 2 ms every 100
entries (so the page takes over a second, all of it spent in the source), 20 requests
to a plain endpoint of the same uvicorn worker must answer quickly: the source runs
in a worker thread and the event loop only waits for its batches.

A control run proves the probe can see a blocked loop at all: the same naps in an
async source (``time.sleep`` on the event loop, what a sync source must never do)
hold the pings up for most of the page.
"""

from __future__ import annotations

import gc
import statistics
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import httpx
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from asgi_sitemap import AsyncUrlSource, SitemapMiddleware

from .conftest import ServeApp, ThreadedServer

BASE_URL = "https://www.example.com"
ENTRIES = 50_000
NAP_EVERY = 100
NAP = 0.002
PINGS = 20
PING_INTERVAL = 0.01
P95_BOUND = 0.100
BLOCK_AT = 1_500
BLOCK = 1.0


def slow_sync() -> Iterator[str]:
    """A sync source whose time goes into naps, as a slow database's would."""
    for n in range(1, ENTRIES + 1):
        if n % NAP_EVERY == 0:
            time.sleep(NAP)
        yield f"{BASE_URL}/items/{n}"


async def blocking_async() -> AsyncIterator[str]:
    """The control: a sync call inside an async source, holding the loop for a second.

    One long block just after the first chunk (the pings start at the first byte): the
    middleware yields to the loop between chunks, so blocking in small slices would be
    partly hidden, and the control must show plainly what blocking looks like.
    """
    for n in range(1, ENTRIES + 1):
        if n == BLOCK_AT:
            time.sleep(BLOCK)  # deliberately blocking: this is the failure the probe must see
        yield f"{BASE_URL}/items/{n}"


async def ping(request: Request) -> PlainTextResponse:
    """A plain endpoint of the app, answered by the same worker as the sitemap."""
    return PlainTextResponse("pong")


def _app() -> Starlette:
    sources = [
        # Fingerprints: the pages stream (without, they would be spooled whole first).
        AsyncUrlSource.from_object(
            "slow", slow_sync, count=lambda: ENTRIES, fingerprint=lambda: "slow"
        ),
        AsyncUrlSource.from_object(
            "blocking", blocking_async, count=lambda: ENTRIES, fingerprint=lambda: "blocking"
        ),
    ]
    return Starlette(
        routes=[Route("/ping", ping)],
        middleware=[Middleware(SitemapMiddleware, sources=sources, base_url=BASE_URL)],
    )


@dataclass
class Measurement:
    """Ping latencies (seconds) taken while a page streamed, and the page's own figures."""

    latencies: list[float]
    #: True when every ping had its answer before the page's last byte arrived.
    during_stream: bool
    page_seconds: float
    page_urls: int

    @property
    def p95(self) -> float:
        """The 95th percentile (the 19th of 20 sorted latencies)."""
        ordered = sorted(self.latencies)
        return ordered[max(0, -(-len(ordered) * 95 // 100) - 1)]

    def describe(self) -> str:
        """One line for the test output."""
        return (
            f"page {self.page_seconds:.2f} s ({self.page_urls} URLs); pings: median"
            f" {statistics.median(self.latencies) * 1000:.1f} ms, p95 {self.p95 * 1000:.1f}"
            f" ms, max {max(self.latencies) * 1000:.1f} ms; all during the stream:"
            f" {self.during_stream}"
        )


def _ping_latencies(server: ThreadedServer) -> list[float]:
    """Time ``PINGS`` requests to ``/ping``, each on a new connection.

    A new connection each: on a kept-alive one, every answer here waits ~40 ms for a
    delayed ACK (uvicorn writes head and body as two segments), idle or not, which
    would drown what is measured. Connecting costs ~1 ms on loopback.
    """
    latencies = []
    with httpx.Client(
        timeout=httpx.Timeout(30.0), trust_env=False, headers={"Connection": "close"}
    ) as client:
        for _ in range(PINGS):
            started = time.perf_counter()
            response = client.get(server.url("/ping"))
            latencies.append(time.perf_counter() - started)
            assert response.text == "pong"
            time.sleep(PING_INTERVAL)
    return latencies


def _measure(server: ThreadedServer, path: str) -> Measurement:
    first_bytes = threading.Event()
    finished = threading.Event()
    page: dict[str, float] = {}

    def stream() -> None:
        started = time.perf_counter()
        body = bytearray()
        with (
            httpx.Client(timeout=httpx.Timeout(60.0), trust_env=False) as client,
            client.stream("GET", server.url(path)) as response,
        ):
            for chunk in response.iter_bytes():
                body += chunk
                first_bytes.set()
        finished.set()
        page["seconds"] = time.perf_counter() - started
        page["urls"] = body.count(b"<url>")

    streamer = threading.Thread(target=stream, name="sitemap-reader")
    # The pings measure the event loop, not the garbage collector: the server runs in
    # this process, where a full collection after thousands of tests stops every
    # thread for 100 ms or more (about the bound itself).
    gc.collect()
    collecting = gc.isenabled()
    gc.disable()
    streamer.start()
    try:
        assert first_bytes.wait(10), "the page did not start"
        latencies = _ping_latencies(server)
        during_stream = not finished.is_set()
    finally:
        streamer.join(60)
        if collecting:
            gc.enable()
    assert finished.is_set(), "the page did not finish"
    return Measurement(latencies, during_stream, page["seconds"], int(page["urls"]))


def test_slow_sync_source_does_not_block_other_requests(uvicorn_thread: ServeApp) -> None:
    server = uvicorn_thread(_app())
    idle = _ping_latencies(server)
    measured = _measure(server, "/sitemap-slow-1.xml")
    print(f"\nidle pings: median {statistics.median(idle) * 1000:.1f} ms")
    print(f"slow sync source: {measured.describe()}")
    assert measured.page_urls == ENTRIES
    # The pings really overlapped the page (it takes over a second, they ~0.3 s)...
    assert measured.during_stream, measured.describe()
    # ...and were answered as if the worker were idle.
    assert measured.p95 < P95_BOUND, measured.describe()


def test_control_a_blocking_source_is_seen(uvicorn_thread: ServeApp) -> None:
    server = uvicorn_thread(_app())
    measured = _measure(server, "/sitemap-blocking-1.xml")
    print(f"\nblocking async source (control): {measured.describe()}")
    assert measured.page_urls == ENTRIES
    # A ping waits for the loop, which the source holds for a whole second.
    assert max(measured.latencies) > 3 * P95_BOUND, measured.describe()
