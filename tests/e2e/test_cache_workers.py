"""ETags agree across gunicorn workers and restarts, and gzip bytes are the same in each.

Every worker of the Flask blog has its own page cache (the default ``MemoryCache``), so
each renders a page itself the first time it is asked for it. A client or a CDN talking
to any of them must still see one ETag per document and coding, or a worker that did
not render the page would answer its If-None-Match with the whole page again, and two
workers would disagree about which version is current. That holds only if ETags come
from content and settings, never from a process, a clock or a hash seed, and if gzip
output carries no timestamp: this is what is checked here, with four workers.

The blog runs behind a small WSGI wrapper that adds ``X-Worker-Pid``, so the test can
show that several workers answered. The base URL is fixed (``FLASK_SITEMAP_BASE_URL``)
because an ETag includes the document's base URL, and the restarted server listens on
another port: in production the base URL is fixed as well.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from .servers import HTTP_TIMEOUT, GunicornServer, StartGunicorn
from .sites import FLASK_BLOG
from .wire import Raw, request_raw

WORKERS = 4
#: Requests for each (document, coding): 20 per document. They are sent several at a
#: time so that they spread over the workers (a sync worker busy with one request cannot
#: accept another).
ROUNDS = 10
IN_FLIGHT = 4
BASE_URL = "https://blog.example.com"
CODINGS = ("identity", "gzip")

PID_WRAPPER = '''
"""The example blog, with the answering worker's pid in every response."""
import os

from app import app as blog


def app(environ, start_response):
    def start(status, headers, exc_info=None):
        return start_response(status, [*headers, ("X-Worker-Pid", str(os.getpid()))], exc_info)

    return blog(environ, start)
'''

#: Every document the blog serves: HEAD ``ROUNDS`` times per coding (validators only).
DOCUMENTS = FLASK_BLOG.documents
#: GET ``ROUNDS`` times per coding: one document of each kind. Each worker renders each
#: once (a miss per worker and coding, ~0.5 s for a 50,000-entry page), so the item pages
#: are represented by the last one: 20,000 entries, ~120 chunks of gzip.
GOT: tuple[str, ...] = (
    "/robots.txt",
    "/sitemap.xml",
    "/sitemap-pages-1.xml",
    "/sitemap-pages-1.txt",
    "/sitemap-posts-3.xml",
    "/sitemap-posts-3.txt",
)
#: Extra rounds allowed for a document that only one worker happened to answer.
TOP_UP = 3

Job = tuple[str, str]


def _start(start_gunicorn: StartGunicorn, folder: Path, database: Path) -> GunicornServer:
    return start_gunicorn(
        "pid_blog:app",
        folder,
        workers=WORKERS,
        env={"BLOG_DATABASE": str(database), "FLASK_SITEMAP_BASE_URL": BASE_URL},
        pythonpath=[FLASK_BLOG.directory],
    )


@pytest.fixture
def wrapper_folder(tmp_path: Path) -> Path:
    """A folder holding the pid-reporting wrapper module."""
    folder = tmp_path / "wrapper"
    folder.mkdir()
    (folder / "pid_blog.py").write_text(PID_WRAPPER)
    return folder


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    """A client safe to share between threads (httpx's pool is thread-safe)."""
    limits = httpx.Limits(max_connections=IN_FLIGHT)
    with httpx.Client(timeout=HTTP_TIMEOUT, trust_env=False, limits=limits) as shared:
        yield shared


def _spread(
    server: GunicornServer, client: httpx.Client, method: str, paths: tuple[str, ...]
) -> dict[Job, list[Raw]]:
    """Send ``method`` for every (path, coding) ``ROUNDS`` times, ``IN_FLIGHT`` at a time.

    A (path, coding) that only one worker answered gets more rounds (at most
    ``TOP_UP``), and so does every one while some worker has answered nothing: fast
    answers can all land on a few workers by chance.
    """
    answers: dict[Job, list[Raw]] = defaultdict(list)
    every_job = [(path, coding) for path in paths for coding in CODINGS]
    jobs = every_job
    workers = {str(pid) for pid in server.worker_pids()}

    def send(job: Job) -> tuple[Job, Raw]:
        path, coding = job
        return job, request_raw(client, method, server.url(path), {"Accept-Encoding": coding})

    with ThreadPoolExecutor(IN_FLIGHT) as pool:
        for _ in range(TOP_UP + 1):
            for job, response in pool.map(send, [j for j in jobs for _ in range(ROUNDS)]):
                answers[job].append(response)
            jobs = [j for j in jobs if len({r.headers["x-worker-pid"] for r in answers[j]}) < 2]
            seen = {r.headers["x-worker-pid"] for rs in answers.values() for r in rs}
            if not jobs and seen >= workers:
                break
            jobs = jobs or every_job
    return answers


def _one_etag(answers: dict[Job, list[Raw]], workers: set[str]) -> dict[Job, str]:
    """Check every (path, coding) had one ETag from at least two workers; return them."""
    etags = {}
    for (path, coding), responses in answers.items():
        assert {r.status for r in responses} == {200}, (path, coding)
        pids = {r.headers["x-worker-pid"] for r in responses}
        assert pids <= workers, pids
        assert len(pids) >= 2, (path, coding, pids)
        tags = {r.headers["etag"] for r in responses}
        assert len(tags) == 1, (path, coding, tags)
        etags[path, coding] = tags.pop()
    # The load spread over all of them.
    assert {r.headers["x-worker-pid"] for rs in answers.values() for r in rs} == workers
    return etags


def test_every_worker_gives_the_same_etag_and_bytes_and_so_does_a_restart(
    blog_database: Path,
    start_gunicorn: StartGunicorn,
    wrapper_folder: Path,
    client: httpx.Client,
) -> None:
    server = _start(start_gunicorn, wrapper_folder, blog_database)
    workers = set(map(str, server.worker_pids()))
    assert len(workers) == WORKERS

    # Validators of every document: one ETag per (document, coding), whoever answers.
    heads = _spread(server, client, "HEAD", DOCUMENTS)
    etags = _one_etag(heads, workers)
    spread = sorted(len({r.headers["x-worker-pid"] for r in rs}) for rs in heads.values())
    report = [f"HEAD: {len(heads)} (document, coding) pairs, answered by {spread} workers"]
    # Codings are distinct representations with distinct tags (robots.txt has one).
    for path in DOCUMENTS:
        same = etags[path, "identity"] == etags[path, "gzip"]
        assert same == (path == "/robots.txt"), path

    # Whole documents: each worker renders (and caches) its own copy; all agree.
    got = _spread(server, client, "GET", GOT)
    assert _one_etag(got, workers) == {job: etags[job] for job in got}
    for (path, coding), responses in got.items():
        # Identical bytes from every worker, gzip included (deterministic compression),
        # whether a response was rendered (a miss) or came from that worker's cache.
        assert len({r.body for r in responses}) == 1, (path, coding)
        pids = {r.headers["x-worker-pid"] for r in responses}
        misses = sum(r.streamed for r in responses)
        if path in FLASK_BLOG.fingerprinted_documents:
            # Each worker rendered it once (streamed), then sent it from its own cache:
            # the bytes compared above are several independent renderings.
            assert misses == len(pids), (path, coding, misses, pids)
        elif path == "/robots.txt":
            assert all(r.sized for r in responses), (path, coding)
        else:
            # No fingerprint, never cached: a worker's first render of it is spooled
            # (sent with its length); its later GETs stream on the validators that
            # render found (sitemap_core.memory.recall). Never more than one spool per worker.
            spooled = sum(r.sized for r in responses)
            assert spooled + misses == len(responses), (path, coding)
            assert spooled <= len(pids), (path, coding, spooled, pids)
        report.append(
            f"{path} {coding}: {len(responses)} GETs, {len(pids)} workers,"
            f" {misses} streamed (misses)"
        )
    print("\n" + "\n".join(report))

    # A restart (new processes, new hash seeds, empty caches, same database) gives the
    # same ETags: a client's cached copy stays valid, and 304s go on.
    server.process.terminate()
    server.process.wait(30)
    restarted = _start(start_gunicorn, wrapper_folder, blog_database)
    assert set(restarted.worker_pids()).isdisjoint(map(int, workers))
    for (path, coding), etag in etags.items():
        head = request_raw(client, "HEAD", restarted.url(path), {"Accept-Encoding": coding})
        assert head.headers["etag"] == etag, (path, coding)
        again = request_raw(
            client,
            "GET",
            restarted.url(path),
            {"Accept-Encoding": coding, "If-None-Match": etag},
        )
        assert again.status == 304, (path, coding)
