"""Clients that leave mid-page cost the example servers nothing that lasts.

Each example reads its items through a connection opened per page (sqlite3 in the
Flask blog; aiosqlite in the ASGI examples, where every connection is a thread that
lives until the connection is closed). A client that reads the first chunk of a
50,000-entry page and hangs up must leave no connection behind: the servers' thread
counts return to what they were, nothing is logged as an error, and the site keeps
serving complete pages.

Pages are cached per worker once sent whole, and a cache hit touches no database, so
every page a client leaves is named with a Host no request used before
(``fresh_host``): each one is rendered from the database, as the server's answer shows
(streamed, no Content-Length).

A connection that is dropped rather than closed would not show in the thread counts
(CPython collects it at once, and aiosqlite's ``__del__`` stops its thread), so the
servers run with ``ResourceWarning`` shown (see ``ExampleSite.serve``) and the log
must not have one: a variant of the Starlette example whose ``slice()`` never closes
its connection fails this test with 11 of them (one per page served after warm-up).
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from .servers import HTTP_TIMEOUT, proc_children
from .sites import ServedExample
from .wire import fresh_host

DISCONNECTS = 10
SETTLE_SECONDS = 5.0


def _threads(pids: list[int]) -> dict[int, int]:
    counts = {}
    for pid in pids:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Threads:"):
                counts[pid] = int(line.split()[1])
    return counts


def test_clients_leaving_mid_page_leave_nothing_behind(served: ServedExample) -> None:
    server = served.server
    # The master / supervisor and its workers (uvicorn's spawned workers, gunicorn's).
    pids = [server.process.pid, *proc_children(server.process.pid)]
    page = f"/sitemap-{served.site.item_source}-1.xml"
    log_before = server.log()
    with httpx.Client(timeout=HTTP_TIMEOUT, trust_env=False) as client:
        client.get(served.url(page))  # warm-up: lazy imports, first connection
        before = _threads(pids)
        for _ in range(DISCONNECTS):
            # Identity: 5 MB that cannot all sit in the socket buffers before the hang-up.
            headers = {"Host": fresh_host(), "Accept-Encoding": "identity"}
            with client.stream("GET", served.url(page), headers=headers) as response:
                assert response.status_code == 200
                # Rendered from the database, not sent from a worker's cache.
                assert "content-length" not in response.headers, response.headers
                next(response.iter_raw())  # one chunk, then hang up
        deadline = time.monotonic() + SETTLE_SECONDS
        while (after := _threads(pids)) != before and time.monotonic() < deadline:
            time.sleep(0.1)
        assert after == before, f"threads per process before {before}, after {after}"
        # Still serving complete pages.
        body = client.get(served.url(page)).content
        assert body.rstrip().endswith(b"</urlset>")
        assert body.count(b"<url>") == 50_000
    new_log = server.log()[len(log_before) :]
    assert "Traceback" not in new_log, new_log[-3000:]
    assert "ResourceWarning" not in new_log, new_log[-3000:]
