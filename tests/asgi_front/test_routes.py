"""``SitemapRoutes``: where the params of a marked route are called and read."""

from __future__ import annotations

import re
import sqlite3
import threading
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

with warnings.catch_warnings():
    # Starlette 1.x announces that its TestClient will need `httpx2`; it works as it did.
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from starlette.testclient import TestClient

from asgi_sitemap import SitemapMiddleware, SitemapRoutes

BASE = "http://localhost"


def test_a_sync_params_is_called_and_its_query_read_in_one_worker_thread_off_the_loop(
    tmp_path: Path,
) -> None:
    database = tmp_path / "posts.db"
    with sqlite3.connect(database) as db:
        db.execute("CREATE TABLE posts (id INTEGER PRIMARY KEY)")
        db.executemany("INSERT INTO posts VALUES (?)", [(i,) for i in range(1, 601)])
    db.close()
    calls: list[tuple[int, set[int]]] = []  # per call: its thread, its reads' threads
    loop_threads: set[int] = set()
    list_calls: set[int] = set()
    routes = SitemapRoutes("posts")

    def post_params() -> Iterator[dict[str, int]]:
        # A cursor made in the call: sqlite3 refuses it in any other thread.
        reads: set[int] = set()
        calls.append((threading.get_ident(), reads))
        rows = sqlite3.connect(database).execute("SELECT id FROM posts ORDER BY id")

        def read() -> Iterator[dict[str, int]]:
            for (post_id,) in rows:
                reads.add(threading.get_ident())
                yield {"post_id": post_id}

        return read()

    async def tag_params() -> AsyncIterator[dict[str, str]]:
        loop_threads.add(threading.get_ident())
        yield {"tag": "news"}

    def page_params() -> list[dict[str, int]]:
        # A list made by a query: the call blocks, its items no longer can.
        list_calls.add(threading.get_ident())
        return [{"number": n} for n in range(1, 301)]

    @routes.include(params=post_params)
    async def post(request: Any) -> PlainTextResponse:
        return PlainTextResponse("post")

    @routes.include(params=tag_params)
    async def tag(request: Any) -> PlainTextResponse:
        return PlainTextResponse("tag")

    @routes.include(params=page_params)
    async def page(request: Any) -> PlainTextResponse:
        return PlainTextResponse("page")

    app = Starlette(
        routes=[
            Route("/posts/{post_id:int}", post, name="post"),
            Route("/tags/{tag}", tag, name="tag"),
            Route("/pages/{number:int}", page, name="page"),
        ]
    )
    site = SitemapMiddleware(app, routes=routes, base_url=BASE)
    response = TestClient(site, base_url=BASE).get("/sitemap.xml")
    assert response.status_code == 200
    locs = re.findall(r"<loc>([^<]*)</loc>", response.text)
    # More items than a batch and a hand-over: every one, in the query's order.
    assert locs == [
        *(f"{BASE}/posts/{i}" for i in range(1, 601)),
        f"{BASE}/tags/news",
        *(f"{BASE}/pages/{n}" for n in range(1, 301)),
    ]
    # Counted, digested for the ETag, read for the page: each call read where it was
    # made, off the loop.
    assert calls and len(loop_threads) == 1
    assert all(reads == {thread} for thread, reads in calls)
    assert not loop_threads & {thread for thread, _ in calls}
    assert list_calls and not loop_threads & list_calls
