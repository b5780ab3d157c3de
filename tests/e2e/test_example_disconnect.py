"""Clients that leave mid-page cost the example servers nothing that lasts.

Each example reads its items with the library's ``SQLiteSource``: every page on a
sqlite3 connection of its own, closed when the page's generator ends or is closed;
the small fact queries (count, fingerprint, newest) on one connection per thread. A
client that reads the first chunk of a 50,000-entry page and hangs up must leave no
page connection behind: no server process holds the database open more often than it
has threads (each keeps at most its fact connection), the thread counts stay within
the sitemap's own thread pool, nothing is logged as an error, and the site keeps
serving complete pages.

Threads are counted too, but may grow: in the ASGI examples a sync source's page is
pulled in a worker thread of the middleware's pool (at most ``SITEMAP_THREADS``), and
a request that starts while the thread of a page just left is still winding down is
given another one, which then idles in the pool. In the Flask example (gunicorn sync
workers) the counts return exactly to what they were.

Pages are cached per worker once sent whole, and a cache hit touches no database, so
every page a client leaves is named with a Host no request used before
(``fresh_host``): each one is rendered from the database, as the server's answer shows
(streamed, no Content-Length).

The servers run with ``ResourceWarning`` shown (see ``ExampleSite.serve``) and the log
must not have one, so a connection that is dropped rather than closed (aiosqlite, used
by the ASGI examples' own pages, says so) fails the test too.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from asgi_sitemap.middleware import SITEMAP_THREADS

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


def _open_files(pids: list[int], database: Path) -> dict[int, int]:
    """How many connections to ``database`` each process holds, by its descriptors.

    The examples' databases use write-ahead logging: each open connection holds one
    descriptor of the ``-wal`` file, closed with it. (The database file's own are not
    a count of connections there: while one connection holds its shared lock, SQLite
    keeps a closed connection's descriptor of that file for reuse, as POSIX locks
    belong to the process, not the descriptor.)
    """
    wal = database.with_name(database.name + "-wal")
    target = str((wal if wal.exists() else database).resolve())
    counts = {}
    for pid in pids:
        held = 0
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                held += fd.readlink().as_posix() == target
            except OSError:
                continue  # closed meanwhile
        counts[pid] = held
    return counts


def _settled(
    before: tuple[dict[int, int], dict[int, int]], after: tuple[dict[int, int], dict[int, int]]
) -> bool:
    """True when no process holds the database open more often than it has threads.

    Each thread keeps at most one connection open between requests (its fact queries'),
    so anything beyond that is a page connection left behind. The threads themselves
    may only have grown within the sitemap's pool.
    """
    (threads_before, _), (threads_after, files_after) = before, after
    return all(
        0 <= threads_after[pid] - threads_before[pid] <= SITEMAP_THREADS
        and files_after[pid] <= threads_after[pid]
        for pid in threads_before
    )


def test_clients_leaving_mid_page_leave_nothing_behind(served: ServedExample) -> None:
    server = served.server
    # The master / supervisor and its workers (uvicorn's spawned workers, gunicorn's).
    pids = [server.process.pid, *proc_children(server.process.pid)]
    page = f"/sitemap-{served.site.item_source}-1.xml"
    log_before = server.log()
    with httpx.Client(timeout=HTTP_TIMEOUT, trust_env=False) as client:
        client.get(served.url(page))  # warm-up: lazy imports, first connection
        before = _threads(pids), _open_files(pids, served.database)
        for _ in range(DISCONNECTS):
            # Identity: 5 MB that cannot all sit in the socket buffers before the hang-up.
            headers = {"Host": fresh_host(), "Accept-Encoding": "identity"}
            with client.stream("GET", served.url(page), headers=headers) as response:
                assert response.status_code == 200
                # Rendered from the database, not sent from a worker's cache.
                assert "content-length" not in response.headers, response.headers
                next(response.iter_raw())  # one chunk, then hang up
        deadline = time.monotonic() + SETTLE_SECONDS
        while not _settled(before, after := (_threads(pids), _open_files(pids, served.database))):
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert _settled(before, after), f"(threads, database files) before {before}, after {after}"
        if served.site.server == "gunicorn":  # sync workers: no thread pool that may grow
            assert after[0] == before[0], f"threads before {before[0]}, after {after[0]}"
        # Still serving complete pages.
        body = client.get(served.url(page)).content
        assert body.rstrip().endswith(b"</urlset>")
        assert body.count(b"<url>") == 50_000
    new_log = server.log()[len(log_before) :]
    assert "Traceback" not in new_log, new_log[-3000:]
    assert "ResourceWarning" not in new_log, new_log[-3000:]
