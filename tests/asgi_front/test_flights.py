"""Issue 22: concurrent requests that need the same walk of a source share one.

:class:`asgi_sitemap.flights.Flights` on its own (one computation for the callers that
ask meanwhile, errors, cancellations, claims), then through the middleware: a crowd
asking the index or a page of a plain generator, cold or revalidating, costs one walk
per document and coding, not one per request.
"""

from __future__ import annotations

import gzip
from typing import Any

import anyio
import pytest

from asgi_sitemap import SitemapMiddleware
from asgi_sitemap.flights import Flights
from sitemap_core.sources.aio import AsyncUrlSource
from tests.asgi_front.test_relay import Walks, app_of, gather, get, hello


class Counted:
    """A computation that counts its runs and waits for :attr:`gate` before answering."""

    def __init__(self, answer: Any = 42, error: Exception | None = None) -> None:
        self.answer = answer
        self.error = error
        self.runs = 0
        self.gate = anyio.Event()

    async def __call__(self) -> Any:
        self.runs += 1
        await self.gate.wait()
        if self.error is not None:
            raise self.error
        return self.answer


def test_callers_asking_meanwhile_share_one_computation_and_later_ones_compute_afresh() -> None:
    async def main() -> None:
        flights = Flights()
        compute = Counted()
        got: list[Any] = []

        async def ask() -> None:
            got.append(await flights.once("k", compute))

        async with anyio.create_task_group() as group:
            for _ in range(5):
                group.start_soon(ask)
            await anyio.wait_all_tasks_blocked()
            assert len(flights) == 1
            compute.gate.set()
        assert got == [42] * 5 and compute.runs == 1
        assert len(flights) == 0  # nothing kept once given
        again = Counted(7)
        again.gate.set()
        assert await flights.once("k", again) == 7 and again.runs == 1

    anyio.run(main)


def test_a_failed_computation_fails_every_caller_that_waited_for_it() -> None:
    async def main() -> None:
        flights = Flights()
        compute = Counted(error=RuntimeError("walk failed"))
        errors: list[BaseException] = []

        async def ask() -> None:
            try:
                await flights.once("k", compute)
            except RuntimeError as exc:
                errors.append(exc)

        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(ask)
            await anyio.wait_all_tasks_blocked()
            compute.gate.set()
        assert len(errors) == 3 and compute.runs == 1
        assert len(flights) == 0

    anyio.run(main)


def test_a_cancelled_leader_leaves_the_computation_to_a_waiting_caller() -> None:
    async def main() -> None:
        flights = Flights()
        compute = Counted()
        got: list[Any] = []

        async def ask() -> None:
            got.append(await flights.once("k", compute))

        leader = anyio.CancelScope()

        async def lead() -> None:
            with leader:
                await flights.once("k", compute)

        async with anyio.create_task_group() as group:
            group.start_soon(lead)
            await anyio.wait_all_tasks_blocked()
            group.start_soon(ask)
            await anyio.wait_all_tasks_blocked()
            leader.cancel()  # the request computing goes away mid-way
            await anyio.wait_all_tasks_blocked()
            assert compute.runs == 2  # the waiter took over
            compute.gate.set()
        assert got == [42]

    anyio.run(main)


def test_every_caller_given_a_result_holds_a_claim_and_a_cancelled_waiter_gives_its_back() -> None:
    async def main() -> None:
        flights = Flights()
        compute = Counted(answer={"claims": 1})
        claims = compute.answer

        def claim(answer: dict[str, int]) -> None:
            answer["claims"] += 1

        def release(answer: dict[str, int]) -> None:
            answer["claims"] -= 1

        async def ask(scope: anyio.CancelScope | None = None) -> None:
            if scope is None:
                await flights.once("k", compute, claim, release)
                return
            with scope:
                await flights.once("k", compute, claim, release)

        before_ready, after_ready = anyio.CancelScope(), anyio.CancelScope()
        async with anyio.create_task_group() as group:
            group.start_soon(ask)  # computes: holds the first claim
            for _ in range(3):
                group.start_soon(ask)
            group.start_soon(ask, before_ready)
            group.start_soon(ask, after_ready)
            await anyio.wait_all_tasks_blocked()
            before_ready.cancel()  # gone before the result: never claimed for
            await anyio.wait_all_tasks_blocked()
            compute.gate.set()
            after_ready.cancel()  # the result is ready, its claim made: given back
        # The computing caller, the three that waited; not the two cancelled ones.
        assert claims == {"claims": 4}

    anyio.run(main)


# -- through the middleware --------------------------------------------------------


def test_a_crowd_asking_the_index_of_a_plain_generator_costs_one_walk() -> None:
    async def main() -> None:
        source = Walks(30_000)
        app = app_of(source, page_size=10_000)
        results = await gather(*(get(app, "/sitemap.xml") for _ in range(30)))
        assert all(r.status == 200 and r.error is None for r in results)
        assert {bytes(r.body) for r in results} == {bytes(results[0].body)}
        assert bytes(results[0].body).count(b"<sitemap>") == 3
        assert source.started == 1  # one count for thirty requests (was thirty)
        # And once they are answered, the next request counts afresh.
        assert (await get(app, "/sitemap.xml")).status == 200
        assert source.started == 2
        assert len(app._flights) == 0

    anyio.run(main)


def test_a_cold_crowd_on_pages_costs_a_count_and_a_render_per_page_in_both_codings() -> None:
    async def main() -> None:
        source = Walks(30_000)
        app = app_of(source, page_size=10_000)
        pages = [f"/sitemap-items-{n}.xml" for n in (1, 2, 3)]
        calls = [
            get(app, path, pause=0.001, coding=coding)
            for path in pages
            for coding in ("", "gzip")
            for _ in range(8)
        ]
        results = await gather(*calls)
        assert all(r.status == 200 and r.error is None for r in results)
        # One count, then one spooled render of each page, whose gzip coding is
        # written from it: 4 walks for 48 requests (7 when each coding was rendered
        # apart, 96 when each request counted and rendered).
        assert source.started == 1 + len(pages)
        for index, path in enumerate(pages):
            plain = results[index * 16 : index * 16 + 8]
            zipped = results[index * 16 + 8 : index * 16 + 16]
            assert len({bytes(r.body) for r in plain}) == 1
            assert {gzip.decompress(bytes(r.body)) for r in zipped} == {bytes(plain[0].body)}
            assert bytes(plain[0].body).count(b"<url>") == 10_000, path
            assert len({r.headers["etag"] for r in plain}) == 1
        assert len(app._flights) == 0

    anyio.run(main)


def test_a_warm_crowd_in_both_codings_streams_one_render_per_page() -> None:
    async def main() -> None:
        source = Walks(20_000)
        app = app_of(source, page_size=10_000)
        pages = ["/sitemap-items-1.xml", "/sitemap-items-2.xml"]
        alone = {}
        for path in pages:  # the validators are learnt; each coding's bytes alone
            await get(app, path)
            alone[path] = bytes((await get(app, path, coding="gzip")).body)
        walks = source.started
        calls = [
            get(app, path, pause=0.001, coding=coding)
            for path in pages
            for coding in ("", "gzip")
            for _ in range(5)
        ]
        results = await gather(*calls)
        assert all(r.status == 200 and r.error is None for r in results)
        # One render per page, its gzip coding made from it (two per page before).
        assert source.started == walks + len(pages)
        for index, path in enumerate(pages):
            plain = results[index * 10 : index * 10 + 5]
            zipped = results[index * 10 + 5 : index * 10 + 10]
            assert {r.headers.get("content-encoding") for r in zipped} == {"gzip"}
            assert {bytes(r.body) for r in zipped} == {alone[path]}  # byte for byte
            assert {gzip.decompress(bytes(r.body)) for r in zipped} == {bytes(plain[0].body)}
        assert len(app._relays) == 0

    anyio.run(main)


def test_a_walk_failing_under_a_warm_crowd_in_both_codings_cuts_every_transfer() -> None:
    async def main() -> None:
        source = Walks(30_000)
        app = app_of(source)
        await get(app, "/sitemap.xml")  # the validators are learnt
        source.fail_at = 29_000  # past the first chunk: the readers have bytes already
        results = await gather(
            *(get(app, "/sitemap.xml", pause=0.001, coding=c) for c in ("", "gzip") * 3)
        )
        for got in results:
            assert got.status == 200 and isinstance(got.error, RuntimeError)
        for got in results[::2]:
            assert b"</urlset>" not in got.body
        for got in results[1::2]:  # the gzip stream stops short of its end
            with pytest.raises(EOFError):
                gzip.decompress(bytes(got.body))
        assert len(app._relays) == 0

    anyio.run(main)


@pytest.mark.parametrize("changed", [False, True])
def test_a_crowd_revalidating_a_page_shares_one_checked_render(changed: bool) -> None:
    async def main() -> None:
        source = Walks(15_000)
        app = app_of(source, page_size=10_000)
        first = await get(app, "/sitemap-items-2.xml")
        etag = first.headers["etag"]
        if changed:
            source.n = 15_001  # one more entry on page 2: not what was remembered
        walks = source.started
        # A crawler's conditional GET: rendered to a spool (with a check) to answer it.
        condition = ((b"if-none-match", etag.encode()),)
        results = await gather(
            *(get(app, "/sitemap-items-2.xml", headers=condition) for _ in range(20))
        )
        if not changed:
            assert {r.status for r in results} == {304}
            assert source.started == walks + 1  # one checked render for twenty
        else:
            # The shared checked render saw the growth: every request counted afresh
            # (one shared count) and got the new page from one shared render.
            assert {r.status for r in results} == {200}
            assert {bytes(r.body) for r in results} == {bytes(results[0].body)}
            assert bytes(results[0].body).count(b"<url>") == 5_001
            assert source.started == walks + 3
        assert len(app._flights) == 0

    anyio.run(main)


def test_a_crowd_waiting_on_a_failing_walk_all_get_a_500_and_nothing_is_left() -> None:
    async def main() -> None:
        source = Walks(20_000, fail_at=15_000)
        app = app_of(source, page_size=10_000)
        walks = source.started
        results = await gather(*(get(app, "/sitemap-items-2.xml") for _ in range(10)))
        assert {r.status for r in results} == {500}
        assert source.started == walks + 1  # one count, which failed, for ten requests
        assert len(app._flights) == 0
        source.fail_at = None  # the next request renders afresh
        again = await get(app, "/sitemap-items-2.xml")
        assert again.status == 200 and bytes(again.body).count(b"<url>") == 10_000

    anyio.run(main)


def test_a_crowd_waiting_on_a_failing_render_all_get_a_500_and_nothing_is_left() -> None:
    async def main() -> None:
        source = Walks(20_000, fail_at=15_000)
        counted = AsyncUrlSource.from_object("items", source, count=lambda: 20_000)
        app = SitemapMiddleware(hello, [counted], cache=False, page_size=10_000)
        results = await gather(*(get(app, "/sitemap-items-2.xml") for _ in range(10)))
        assert {r.status for r in results} == {500}
        assert source.started == 1  # one render (it failed) for ten requests
        assert len(app._flights) == 0

    anyio.run(main)
