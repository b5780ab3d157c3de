"""Clients that leave mid-page cost the example servers nothing that lasts.

Each example reads its items with the library's ``SQLiteSource``: every page on a
sqlite3 connection of its own, closed when the page's generator ends or is closed;
the small fact queries (count, fingerprint, newest) on one connection per thread. A
client that reads the first chunk of a 50,000-entry page and hangs up must leave no
page connection behind: no server process holds the database open more often than it
has threads (each keeps at most its fact connection), the thread counts stay within
the sitemap's own thread pool, nothing is logged as an error, and the site keeps
serving complete pages.

On PostgreSQL the examples read through SQLAlchemy, whose pool keeps connections open
between requests by design; what a page left behind would be a session still inside
its transaction (the page's streaming cursor), so there no session of the example's
database may be anything but idle once the clients are gone.

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

import re
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


def _busy_sessions(served: ServedExample) -> list[tuple[object, ...]]:
    """The PostgreSQL sessions of the example's database that are not idle (but ours)."""
    return served.query(
        "SELECT pid, state, query FROM pg_stat_activity WHERE datname = current_database()"
        " AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND state <> 'idle'"
    )


def _left_open(served: ServedExample, pids: list[int], threads: dict[int, int]) -> list[str]:
    """What holds the database that should have been closed with the pages.

    SQLite: each thread keeps at most one connection open between requests (its fact
    queries'), so a process holding the database open more often than it has threads
    holds a page connection left behind. PostgreSQL: a session still in a transaction
    or statement.
    """
    if served.database_url is not None:
        return [repr(session) for session in _busy_sessions(served)]
    files = _open_files(pids, served.database)
    return [
        f"process {pid}: {files[pid]} connections, {threads[pid]} threads"
        for pid in pids
        if files[pid] > threads[pid]
    ]


def _settled(
    served: ServedExample, pids: list[int], before: dict[int, int]
) -> tuple[bool, dict[int, int], list[str]]:
    """Whether nothing is left open and the threads only grew within the sitemap's pool;
    with the thread counts and what is left open."""
    threads = _threads(pids)
    left = _left_open(served, pids, threads)
    grown = all(0 <= threads[pid] - before[pid] <= SITEMAP_THREADS for pid in before)
    return grown and not left, threads, left


#: psycopg's warning of a server-side cursor collected while still open: a page closed
#: early (the client hung up) must close its streamed result, so none may appear.
UNCLOSED_CURSOR = re.compile(
    r"[^\n]*ResourceWarning: <psycopg\.ServerCursor object at 0x[0-9a-f]+>"
    r" was deleted while still open[^\n]*\n[ \t]*__warn\(\n"
)


def test_clients_leaving_mid_page_leave_nothing_behind(served: ServedExample) -> None:
    server = served.server
    # The master / supervisor and its workers (uvicorn's spawned workers, gunicorn's).
    pids = [server.process.pid, *proc_children(server.process.pid)]
    page = f"/sitemap-{served.site.item_source}-1.xml"
    log_before = server.log()
    with httpx.Client(timeout=HTTP_TIMEOUT, trust_env=False) as client:
        client.get(served.url(page))  # warm-up: lazy imports, first connection
        before = _threads(pids)
        settled, _, left = _settled(served, pids, before)
        assert settled, f"before any disconnect: {left}"
        for _ in range(DISCONNECTS):
            # Identity: 5 MB that cannot all sit in the socket buffers before the hang-up.
            headers = {"Host": fresh_host(), "Accept-Encoding": "identity"}
            with client.stream("GET", served.url(page), headers=headers) as response:
                assert response.status_code == 200
                # Rendered from the database, not sent from a worker's cache.
                assert "content-length" not in response.headers, response.headers
                next(response.iter_raw())  # one chunk, then hang up
        deadline = time.monotonic() + SETTLE_SECONDS
        while not (outcome := _settled(served, pids, before))[0]:
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
        settled, after, left = outcome
        assert settled, f"threads before {before}, after {after}; left open: {left}"
        if served.site.server == "gunicorn":  # sync workers: no thread pool that may grow
            assert after == before, f"threads before {before}, after {after}"
        # Still serving complete pages.
        body = client.get(served.url(page)).content
        assert body.rstrip().endswith(b"</urlset>")
        assert body.count(b"<url>") == 50_000
    new_log = server.log()[len(log_before) :]
    assert "Traceback" not in new_log, new_log[-3000:]
    # A page closed early closes its server-side cursor (psycopg warns of any it
    # finds still open when collected).
    assert not UNCLOSED_CURSOR.findall(new_log), new_log[-3000:]
    assert "ResourceWarning" not in new_log, new_log[-3000:]
