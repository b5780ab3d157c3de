"""Issue 11, item 3: slow clients share one render, renders are bounded, memory returns.

Requests are run in-process, concurrently, against the ASGI middleware; a "slow client"
is a ``send`` that sleeps on every body message. The source counts its walks and how
many of them run at once.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest

from asgi_sitemap import SitemapMiddleware
from asgi_sitemap import middleware as middleware_module
from asgi_sitemap.relay import WINDOW, Relay
from sitemap_core import Entry
from tests.asgi_scope import get_scope

BASE = "http://localhost"


@dataclass
class Walks:
    """A plain generator source (no count, no fingerprint) that records its walks."""

    n: int
    fail_at: int | None = None
    started: int = 0
    running: int = 0
    most_running: int = 0
    finished_at: list[float] = field(default_factory=list)
    #: Called when a walk ends; what it returns is kept in ``seen_at_finish``.
    probe: Any = None
    seen_at_finish: list[Any] = field(default_factory=list)

    def __call__(self) -> Iterator[Entry]:
        self.started += 1
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        try:
            for i in range(self.n):
                if i == self.fail_at:
                    raise RuntimeError(f"row {i} failed")
                yield Entry(f"{BASE}/items/{i}")
        finally:
            self.running -= 1
            self.finished_at.append(time.monotonic())
            if self.probe is not None:
                self.seen_at_finish.append(self.probe())


def hello(scope: Any, receive: Any, send: Any) -> Any:
    raise AssertionError("only sitemap paths are asked")


@dataclass
class Got:
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytearray = field(default_factory=bytearray)
    error: BaseException | None = None
    done_at: float = 0.0
    messages: int = 0


async def get(
    app: Any,
    path: str,
    pause: float = 0.0,
    leave_after: int | None = None,
    coding: str = "",
    got: Got | None = None,
    method: str = "GET",
    headers: tuple[tuple[bytes, bytes], ...] = (),
) -> Got:
    """One GET (or ``method``, with more request ``headers``); ``pause`` seconds per body
    message (a slow reader); ``leave_after`` body messages, then the client disconnects."""
    got = got if got is not None else Got()
    gone = anyio.Event()
    coded = ((b"accept-encoding", coding.encode()),) if coding else ()
    scope = {**get_scope(path, *coded, *headers), "method": method}
    messages = 0

    async def receive() -> dict[str, Any]:
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal messages
        if gone.is_set():
            raise OSError("client gone")
        if message["type"] == "http.response.start":
            got.status = message["status"]
            got.headers = {k.decode(): v.decode() for k, v in message["headers"]}
            return
        got.body += message.get("body", b"")
        messages += 1
        got.messages = messages
        if leave_after is not None and messages >= leave_after:
            gone.set()
        if pause:
            await anyio.sleep(pause)

    try:
        await app(scope, receive, send)
    except Exception as exc:
        got.error = exc
    got.done_at = time.monotonic()
    return got


def app_of(source: Walks, **settings: Any) -> SitemapMiddleware:
    return SitemapMiddleware(hello, {"items": source}, cache=False, **settings)


async def gather(*calls: Any) -> list[Got]:
    results: list[Got] = [Got() for _ in calls]

    async def one(index: int, call: Any) -> None:
        results[index] = await call

    async with anyio.create_task_group() as group:
        for index, call in enumerate(calls):
            group.start_soon(one, index, call)
    return results


def test_concurrent_slow_readers_of_one_document_share_one_render() -> None:
    async def main() -> None:
        source = Walks(20_000)
        app = app_of(source)
        first = await get(app, "/sitemap.xml")  # learns the validators (spooled)
        walks = source.started
        readers = await gather(*(get(app, "/sitemap.xml", pause=0.01) for _ in range(20)))
        assert all(r.status == 200 and r.error is None for r in readers)
        assert all(bytes(r.body) == bytes(first.body) for r in readers)
        # Twenty responses, one walk of the source between them.
        assert source.started == walks + 1
        # The render ran at full speed, not at the readers' pace.
        assert source.finished_at[-1] < min(r.done_at for r in readers)
        assert len(app._relays) == 0  # nothing left in flight

    anyio.run(main)


def test_a_slow_reader_does_not_hold_the_source() -> None:
    async def main() -> None:
        source = Walks(20_000)
        app = app_of(source)
        await get(app, "/sitemap.xml")
        slow = Got()
        source.probe = lambda: slow.messages
        await get(app, "/sitemap.xml", pause=0.02, got=slow)
        assert slow.error is None and slow.status == 200
        # The source was done while the reader had taken only the first few of its
        # 30-odd chunks: the reader's pace does not hold the source open.
        assert slow.messages > 25
        assert source.seen_at_finish[-1] <= 5, source.seen_at_finish

    anyio.run(main)


def test_renders_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(middleware_module, "SITEMAP_RENDERS", 2)

    async def main() -> None:
        sources = Walks(30_000)
        app = app_of(sources, page_size=1_000)
        pages = [f"/sitemap-items-{n}.xml" for n in range(1, 13)]
        await gather(*(get(app, path) for path in pages))  # learn each page's validators
        sources.most_running = 0
        results = await gather(*(get(app, path, pause=0.001) for path in pages))
        assert all(r.status == 200 and r.error is None for r in results)
        # Twelve different documents streamed at once, at most two rendered at a time.
        assert sources.most_running <= 2

    anyio.run(main)


def test_a_reader_leaving_does_not_cut_the_others_and_the_last_stops_the_render() -> None:
    async def main() -> None:
        source = Walks(40_000)
        app = app_of(source)
        whole = await get(app, "/sitemap.xml", coding="gzip")
        leaver, stayer = await gather(
            get(app, "/sitemap.xml", leave_after=1, coding="gzip"),
            get(app, "/sitemap.xml", pause=0.001, coding="gzip"),
        )
        assert stayer.error is None and bytes(stayer.body) == bytes(whole.body)
        assert len(gzip.decompress(bytes(stayer.body))) > 1_000_000
        assert len(leaver.body) < len(whole.body)
        # Alone, a reader that leaves stops the render within a chunk or two.
        walks = source.started
        alone = await get(app, "/sitemap.xml", leave_after=1)
        assert alone.status == 200 and source.started == walks + 1
        assert len(app._relays) == 0

    anyio.run(main)


def test_a_failing_render_cuts_every_reader_and_caches_nothing() -> None:
    async def main() -> None:
        source = Walks(30_000)
        app = app_of(source)
        await get(app, "/sitemap.xml")
        source.fail_at = 29_000  # past the first chunk: the readers have bytes already
        readers = await gather(*(get(app, "/sitemap.xml", pause=0.001) for _ in range(3)))
        for reader in readers:
            assert reader.status == 200
            assert isinstance(reader.error, RuntimeError)
            assert b"</urlset>" not in reader.body

    anyio.run(main)


def test_a_relay_keeps_a_window_in_memory_and_the_rest_on_disk() -> None:
    async def main() -> None:
        relay = Relay()
        chunk = b"x" * 32_768
        for _ in range(100):
            relay.put(chunk)
        assert sum(len(c) for _, c in relay._recent) <= WINDOW + len(chunk)
        reader = relay.read()
        first = await anext(reader)  # a reader counts from its first read
        relay.finish()
        data = bytearray(first)
        sizes = {len(first)}
        async for part in reader:
            data += part
            sizes.add(len(part))
        assert bytes(data) == chunk * 100
        assert sizes == {len(chunk)}  # read back as it was cut, from disk and memory
        assert relay._file.closed  # the last reader gone: the file goes with it

    anyio.run(main)


class Versioned:
    """A sized sliceable with a fingerprint (no digest check behind its streams); its
    entry ``gate_at`` waits until :attr:`gate` is set (it is pulled in a worker thread)."""

    def __init__(self, n: int, gate_at: int) -> None:
        self.n = n
        self.gate_at = gate_at
        self.gate = threading.Event()

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, window: slice) -> Iterator[Entry]:
        for i in range(*window.indices(self.n)):
            if i == self.gate_at:
                assert self.gate.wait(30), "the gate was never opened"
            yield Entry(f"{BASE}/items/{i}")

    def fingerprint(self) -> str:
        return "v1"


def test_the_reader_who_started_a_render_leaving_never_truncates_it_for_the_others() -> None:
    # The render's threads now run in a task group of its own, inside its shield; in
    # the starting request's group they were exposed to that request's cancellation
    # (under load, test_a_reader_leaving_... above then failed about one run in six).
    # Here the source is held mid-page until the starter has left: the others still get
    # the whole document.
    async def main() -> None:
        source = Versioned(40_000, gate_at=20_000)
        app = SitemapMiddleware(hello, {"items": source}, cache=False)
        starter, other = Got(), Got()
        async with anyio.create_task_group() as group:
            group.start_soon(get, app, "/sitemap.xml", 0.0, 1, "", starter)
            await anyio.sleep(0.2)  # the render is under way, held at the gate
            group.start_soon(get, app, "/sitemap.xml", 0.0, None, "", other)
            with anyio.fail_after(30):
                while not starter.done_at:
                    await anyio.sleep(0.01)
            source.gate.set()
        assert other.error is None and other.status == 200
        assert bytes(other.body).count(b"<url>") == 40_000
        assert bytes(other.body).endswith(b"</urlset>\n")

    anyio.run(main)


class Listed:
    """A fingerprinted list source (a sync sliceable), for documents of several sources."""

    def __init__(self, name: str, n: int) -> None:
        self.items = [f"{BASE}/{name}/{i}" for i in range(n)]

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, window: slice) -> list[str]:
        return self.items[window]

    def fingerprint(self) -> str:
        return "v1"


def test_a_document_of_several_sync_sources_survives_its_starter_leaving() -> None:
    # From review: with the render's threads in the starting request's task group, the
    # next source's puller started in an already cancelled group and spun for good: the
    # other reader's transfer stopped after the first source, and a render slot was lost.
    async def main() -> None:
        for stagger in (0.0, 0.001, 0.002):
            app = SitemapMiddleware(
                hello, {"a": Listed("a", 20_000), "b": Listed("b", 20_000)}, cache=False
            )
            with anyio.fail_after(30):
                _leaver, stayer = await gather(
                    get(app, "/sitemap.xml", leave_after=1),
                    _later(stagger, get(app, "/sitemap.xml", pause=0.0005)),
                )
            assert stayer.error is None and stayer.status == 200
            body = bytes(stayer.body)
            assert body.count(b"<url>") == 40_000 and body.endswith(b"</urlset>\n")
            assert len(app._relays) == 0

    anyio.run(main)


async def _later(delay: float, call: Any) -> Got:
    await anyio.sleep(delay)
    got: Got = await call
    return got


def test_a_worker_stream_that_closes_without_its_end_is_an_error() -> None:
    # A sync source's worker says the end explicitly; a stream closed without it (the
    # worker's task cancelled) raises instead of reading as the source's end.
    from asgi_sitemap.threads import SourceStoppedError, _consume

    async def main() -> None:
        send, receive = anyio.create_memory_object_stream[Any](4)
        await send.send(["a batch"])
        await send.aclose()  # closed, no end marker
        items = []
        with pytest.raises(SourceStoppedError):
            async for item in _consume(receive, threading.Event()):
                items.append(item)
        assert items == [["a batch"]]

    anyio.run(main)
