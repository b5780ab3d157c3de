"""Issue 22: slow readers on the Quick start's shape do not hold up a normal client.

A real uvicorn (one worker) serves the Quick start's app: a plain generator built with
``url_for``, here 20,000 entries in an index of three pages. Eighty slow readers (1 KiB/s,
half asking gzip) arrive at once on the index and the pages, on a cold server, and
hold their connections; meanwhile a normal client asks the index, every page and a
page of the app, and every answer is checked. Before the walks were shared, each
reader counted the generator and rendered its own spool on the sitemap's eight
threads, and the normal client waited for all of theirs (one answer in 6 s here,
growing with readers and entries: 50 s for 200 readers of 120,000 entries); with
them shared the slowest answer takes under a second. The bound leaves room for a loaded
machine on both sides. ``benchmarks/bench_load.py`` measures the full size.
"""

from __future__ import annotations

from pathlib import Path

from .crowd import QuickSite, slow_crowd, write_quick_app
from .load import verified_clients
from .servers import run_uvicorn

SITE = QuickSite(20_000, page_size=7_000, url_for=True)
READERS = 80
#: Seconds a normal request may take while the readers arrive and read.
BOUND = 3.0


def test_a_normal_client_is_answered_while_slow_readers_hold_the_quick_start(
    tmp_path: Path,
) -> None:
    write_quick_app(tmp_path)
    with run_uvicorn("quick_app:asgi_app", tmp_path, tmp_path / "logs", env=SITE.env) as server:
        readers, threads = slow_crowd(server.port, SITE.documents, READERS, rate=1024, seconds=10)
        normal = verified_clients(server.base_url, SITE.expected, clients=1, seconds=6)
        for thread in threads:
            thread.join(60)
    slowest = {path: round(max(took), 2) for path, took in normal.by_path.items()}
    assert max(slowest.values()) < BOUND, slowest
    assert normal.errors == []
    assert set(slowest) == set(SITE.expected), slowest  # each asked at least once
    assert all(r.status == 200 and not r.error for r in readers), readers
    # The pages' readers held their connections to the end (a page is 1 MB or more).
    assert not any(r.complete for r in readers if r.path != "/sitemap.xml")
