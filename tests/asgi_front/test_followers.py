"""Issue 22: a request identical to one in flight sends that one's answer.

Requests run in-process, concurrently, against the ASGI middleware (the helpers of
test_relay.py). ``respond_async`` is counted: a request that follows builds no flow of
its own, so a burst of identical requests calls it once.
"""

from __future__ import annotations

import abc
import gc
import threading
import tracemalloc
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from asgi_sitemap import middleware as middleware_module
from sitemap_core import Entry
from tests.asgi_front.test_relay import BASE, Got, Walks, app_of, gather, get
from tests.asgi_scope import get_scope


@pytest.fixture
def flows(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths of the requests that took the full path (a flow of their own)."""
    called: list[str] = []
    respond = middleware_module.respond_async

    async def counted(site: Any, method: str, path: str, *args: Any) -> Any:
        called.append(path)
        return await respond(site, method, path, *args)

    monkeypatch.setattr(middleware_module, "respond_async", counted)
    return called


def _same(got: Got, reference: Got) -> bool:
    return (got.status, got.headers, bytes(got.body)) == (
        reference.status,
        reference.headers,
        bytes(reference.body),
    )


@pytest.mark.parametrize("coding", ["", "gzip"])
@pytest.mark.parametrize("warm", [False, True])
def test_a_burst_of_identical_requests_is_answered_by_one_flow_with_the_same_bytes(
    flows: list[str], coding: str, warm: bool
) -> None:
    async def main() -> None:
        source = Walks(30_000)
        app = app_of(source, page_size=10_000)
        path = "/sitemap-items-2.xml"
        reference = await get(app, path, coding=coding)  # alone: the full path, spooled
        if warm:
            reference = await get(app, path, coding=coding)  # remembered: streamed
        else:
            app = app_of(source, page_size=10_000)  # a cold app again
        flows.clear()
        walks = source.started
        burst = await gather(*(get(app, path, pause=0.001, coding=coding) for _ in range(20)))
        assert all(_same(got, reference) for got in burst)
        assert flows == [path]  # one flow for twenty requests
        # No walk added: warm, one render; cold, a shared count and one walk.
        assert source.started - walks == (1 if warm else 2)
        assert len(app._followers) == 0 and len(app._relays) == 0

    anyio.run(main)


def test_a_follower_leaving_cuts_neither_the_leader_nor_the_others(flows: list[str]) -> None:
    async def main() -> None:
        source = Walks(40_000)
        app = app_of(source)
        await get(app, "/sitemap.xml")
        whole = await get(app, "/sitemap.xml")  # remembered: streamed
        flows.clear()
        lead, leaver, stayer = await gather(
            get(app, "/sitemap.xml", pause=0.001),
            get(app, "/sitemap.xml", leave_after=1),
            get(app, "/sitemap.xml", pause=0.001),
        )
        assert flows == ["/sitemap.xml"]
        assert _same(lead, whole) and lead.error is None
        assert _same(stayer, whole) and stayer.error is None
        # Cut when its client said it left (its watch), or at the send that failed.
        assert leaver.error is None or isinstance(leaver.error, OSError)
        assert b"</urlset>" not in leaver.body and len(leaver.body) < len(whole.body)
        assert len(app._followers) == 0 and len(app._relays) == 0

    anyio.run(main)


@pytest.mark.parametrize("warm", [False, True])
def test_a_leader_failing_mid_body_cuts_every_follower(flows: list[str], warm: bool) -> None:
    async def main() -> None:
        source = Walks(30_000)
        app = app_of(source)
        if warm:
            await get(app, "/sitemap.xml")  # remembered: streamed from a shared render
        source.fail_at = 29_000  # past the first chunk
        flows.clear()
        got = await gather(*(get(app, "/sitemap.xml", pause=0.001) for _ in range(5)))
        assert flows == ["/sitemap.xml"]
        if warm:
            # Cut, never a short body that looks complete.
            assert all(isinstance(g.error, RuntimeError) for g in got)
            assert all(b"</urlset>" not in g.body for g in got)
        else:
            # Spooled: the walk fails before the first byte, and each gets its 500.
            assert {g.status for g in got} == {500}
        assert len(app._followers) == 0 and len(app._relays) == 0

    anyio.run(main)


def test_head_requests_follow_each_other_and_send_no_body(flows: list[str]) -> None:
    async def main() -> None:
        source = Walks(20_000)
        app = app_of(source)
        whole = await get(app, "/sitemap.xml")
        flows.clear()
        heads = await gather(*(get(app, "/sitemap.xml", method="HEAD") for _ in range(5)))
        assert flows == ["/sitemap.xml"]
        assert all(h.status == 200 and h.body == b"" for h in heads)
        assert all(h.headers == whole.headers for h in heads)

    anyio.run(main)


def _types_abcs_keep() -> int:
    # The types every ABC has accepted or rejected so far: each kept in weak references
    # for the life of the process (abc's caches).
    dumps = [abc._get_dump(c) for c in gc.get_objects() if isinstance(c, abc.ABCMeta)]  # type: ignore[attr-defined]
    return sum(len(accepted) + len(rejected) for _, accepted, rejected, _ in dumps)


def test_a_crowd_of_followers_leaves_nothing_in_the_abcs_caches(flows: list[str]) -> None:
    # What outlives a crowd keeps the pymalloc arenas its peak mapped (issue 22). A
    # follower of a streamed document reads the relay through a Reading, a type no
    # lone request meets (a leader's body is the core's generator): told apart by
    # isinstance(body, Iterable), it was cached as rejected by Iterable and by every
    # ABC below it, some 85 objects made during the crowd's first second.
    async def main() -> None:
        source = Walks(30_000)
        app = app_of(source, page_size=10_000)
        path = "/sitemap-items-2.xml"
        await get(app, path)  # the first use of the route, alone (spooled)
        for cls in [o for o in gc.get_objects() if isinstance(o, abc.ABCMeta)]:
            abc._reset_caches(cls)  # type: ignore[attr-defined]
        await get(app, path)  # remembered: streamed through a relay, alone
        before = _types_abcs_keep()
        flows.clear()
        burst = await gather(*(get(app, path, pause=0.001) for _ in range(10)))
        assert flows == [path] and all(got.status == 200 for got in burst)
        assert _types_abcs_keep() == before

    anyio.run(main)


class Held:
    """A plain generator whose walks wait (in their worker thread) until released."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.go = threading.Event()

    def __call__(self) -> Iterator[Entry]:
        self.go.wait(10)
        for i in range(self.n):
            yield Entry(f"{BASE}/items/{i}")


def test_a_waiting_follower_holds_a_few_small_objects_not_a_flow(flows: list[str]) -> None:
    # What a request waiting on another's walk holds (the crowd's arrival, issue 22):
    # on the full path some 12 KB of the library's objects (a flow, a driver, a task
    # group, a runner), which for 200 requests at once mapped new pymalloc arenas.
    async def main() -> None:
        source = Held(2_000)
        app = app_of(source)
        source.go.set()
        await get(app, "/sitemap.xml")  # first use paid
        source.go.clear()
        app = app_of(source)
        flows.clear()
        tracemalloc.start()
        start = tracemalloc.take_snapshot()
        async with anyio.create_task_group() as group:
            for _ in range(101):
                group.start_soon(get, app, "/sitemap.xml")
            await anyio.sleep(0.2)
            held = tracemalloc.take_snapshot().compare_to(start, "filename")
            source.go.set()
        tracemalloc.stop()
        ours = [s for s in held if "asgi_sitemap" in str(s) or "sitemap_core" in str(s)]
        per_request = sum(stat.size_diff for stat in ours) / 100
        assert flows == ["/sitemap.xml"]
        assert per_request < 3_500, per_request

    anyio.run(main)


class Paused:
    """A plain generator whose walks, at entry ``at``, wait (in their worker thread)
    until released."""

    def __init__(self, n: int, at: int) -> None:
        self.n, self.at = n, at
        self.go = threading.Event()
        self.go.set()

    def __call__(self) -> Iterator[Entry]:
        for i in range(self.n):
            if i == self.at:
                self.go.wait(10)
            yield Entry(f"{BASE}/items/{i}")


def test_a_follower_whose_client_leaves_stops_while_the_render_it_read_waits(
    flows: list[str],
) -> None:
    # A server such as uvicorn drops what is sent to a client that left, and says so
    # only through receive(): a follower reading a relay must watch it, or it stays
    # (holding its reader and its connection) until the render it waits on ends.
    async def main() -> None:
        source = Paused(30_000, at=20_000)
        app = app_of(source)
        whole = await get(app, "/sitemap.xml")  # remembered: the next ones stream
        source.go.clear()
        flows.clear()
        first_body = anyio.Event()
        follower = Got()

        async def receive() -> dict[str, Any]:
            await first_body.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.body":
                follower.body += message.get("body", b"")
                first_body.set()

        async def follow() -> None:
            await app(get_scope("/sitemap.xml"), receive, send)
            follower.done_at = 1.0  # returned

        async with anyio.create_task_group() as group:
            leader = Got()
            group.start_soon(get, app, "/sitemap.xml", 0.0, None, "", leader)
            group.start_soon(follow)
            with anyio.move_on_after(3):
                while not follower.done_at:
                    await anyio.sleep(0.01)
            returned_while_held = bool(follower.done_at) and not source.go.is_set()
            source.go.set()
        assert flows == ["/sitemap.xml"]  # it followed
        assert returned_while_held
        assert 0 < len(follower.body) < len(whole.body)
        assert bytes(leader.body) == bytes(whole.body) and leader.error is None
        assert len(app._followers) == 0 and len(app._relays) == 0

    anyio.run(main)
