"""Issue 22: slow readers on the Quick start's shape do not hold up a normal client.

A real uvicorn (one worker), and gunicorn with one uvicorn worker, serve the Quick
start's app: a plain generator built with ``url_for``, here 20,000 entries in an index
of three pages. Eighty slow readers (1 KiB/s, half asking gzip) arrive at once on the
index and the pages, on a cold server, and hold their connections; meanwhile a normal
client asks the index, every page and a page of the app, and every answer is checked.
Before the walks were shared, each reader counted the generator and rendered its own
spool on the sitemap's eight threads, and the normal client waited for all of theirs
(one answer in 6 s here, growing with readers and entries: 50 s for 200 readers of
120,000 entries); with them shared the slowest answer takes under a second. The bound
leaves room for a loaded machine on both sides. When the crowd's last response ends,
the middleware gives the C heap back once, in the worker that served it.
``benchmarks/bench_load.py`` measures the full size.

A burst asking every document in both codings costs one walk to count and one per
page (a page's gzip coding is written from its identity spool, or, once validators
are known, streamed from its identity render), on uvicorn and, cold, on gunicorn's
gthread workers, whose threads share the walks as the event loop's requests do. The
app counts the walks of its generator.
"""

from __future__ import annotations

import gzip
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from pathlib import Path

import httpx
import pytest

from .crowd import QuickSite, slow_crowd, write_quick_app
from .load import url_count, verified_clients
from .servers import HTTP_TIMEOUT, Server, run_gunicorn, run_uvicorn

SITE = QuickSite(20_000, page_size=7_000, url_for=True)
READERS = 80
#: Seconds a normal request may take while the readers arrive and read.
BOUND = 3.0


def _quick_server(tmp_path: Path, front: str, site: QuickSite) -> AbstractContextManager[Server]:
    """The Quick start's app written to ``tmp_path``, served by ``front``: uvicorn; one
    uvicorn worker under gunicorn's arbiter (the process that serves, and gives its
    heap back, is the worker); or the Flask app on one gthread worker whose threads
    outnumber a burst (they share the walks)."""
    write_quick_app(tmp_path)
    logs = tmp_path / "logs"
    if front == "uvicorn":
        return run_uvicorn("quick_app:asgi_app", tmp_path, logs, env=site.env)
    if front == "gunicorn-uvicorn":
        return run_gunicorn(
            "quick_app:asgi_app",
            tmp_path,
            logs,
            env=site.env,
            worker_class="uvicorn.workers.UvicornWorker",
        )
    return run_gunicorn(
        "quick_app:flask_app", tmp_path, logs, env=site.env, worker_class="gthread", threads=32
    )


@pytest.mark.parametrize("front", ["uvicorn", "gunicorn-uvicorn"])
def test_a_normal_client_is_answered_while_slow_readers_hold_the_quick_start(
    tmp_path: Path, front: str
) -> None:
    server = _quick_server(tmp_path, front, SITE)
    with server as running:
        readers, threads = slow_crowd(running.port, SITE.documents, READERS, rate=1024, seconds=10)
        normal = verified_clients(running.base_url, SITE.expected, clients=1, seconds=6)
        for thread in threads:
            thread.join(60)
        time.sleep(1)  # the last responses end as their readers leave
        trims = int(httpx.get(running.base_url + "/trims", timeout=HTTP_TIMEOUT).text)
    # The crowd's last response gave the C heap back, once (asgi_sitemap.heap).
    assert trims == 1
    slowest = {path: round(max(took), 2) for path, took in normal.by_path.items()}
    assert max(slowest.values()) < BOUND, slowest
    assert normal.errors == []
    assert set(slowest) == set(SITE.expected), slowest  # each asked at least once
    assert all(r.status == 200 and not r.error for r in readers), readers
    # The pages' readers held their connections to the end (a page is 1 MB or more).
    assert not any(r.complete for r in readers if r.path != "/sitemap.xml")


#: A walk waits this long before its first entry: a burst surely arrives during it.
PAUSED = QuickSite(12_000, page_size=5_000, pause=2.0)


def _walks(server: Server) -> int:
    return int(httpx.get(server.base_url + "/walks", timeout=HTTP_TIMEOUT).text)


def _fetch(url: str, zipped: bool) -> tuple[int, bytes]:
    headers = {"Accept-Encoding": "gzip" if zipped else "identity"}
    with httpx.stream("GET", url, headers=headers, timeout=HTTP_TIMEOUT) as response:
        raw = b"".join(response.iter_raw())
    assert (response.headers.get("content-encoding") == "gzip") == zipped
    return response.status_code, gzip.decompress(raw) if zipped else raw


def _burst(server: Server, each: int) -> int:
    # ``each`` requests of every document in each coding, all at once; the walks they
    # cost. Every answer is checked, and both codings of a document hold one text.
    asked = [(path, zipped) for path in PAUSED.documents for zipped in (False, True)] * each
    before = _walks(server)
    with ThreadPoolExecutor(len(asked)) as pool:
        got = list(pool.map(lambda job: _fetch(server.base_url + job[0], job[1]), asked))
    walks = _walks(server) - before
    for path in PAUSED.documents:
        bodies = {
            body
            for (asked_path, _), (_, body) in zip(asked, got, strict=True)
            if asked_path == path
        }
        assert len(bodies) == 1, path
        assert url_count(bodies.pop()) == PAUSED.expected[path], path
    assert {status for status, _ in got} == {200}
    return walks


@pytest.mark.parametrize("front", ["uvicorn", "gthread"])
def test_a_burst_in_both_codings_costs_one_walk_to_count_and_one_per_page(
    tmp_path: Path, front: str
) -> None:
    server = _quick_server(tmp_path, front, PAUSED)
    with server as running:
        cold = _burst(running, each=3)
        warm = _burst(running, each=3) if front == "uvicorn" else None
    # 24 requests: one count and one walk per page (3), whatever the codings. Each
    # coding walked apart before (7 on uvicorn), and each gthread request walked on its
    # own (2 per request: 48).
    assert cold == 1 + len(PAUSED.pages)
    # Once the pages' validators are known, they stream from shared renders: the
    # gzip coding's from the identity one's (7 walks before, as cold).
    assert warm in (None, 1 + len(PAUSED.pages))
