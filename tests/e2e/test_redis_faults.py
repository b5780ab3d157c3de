"""The Flask blog under gunicorn while its Redis freezes, then dies (issue 11.6).

Measured before: Redis frozen for 16 s gave a p99 of 12.7 s with timeouts documented
as 1 s, and a dead Redis wrote a traceback per request. Now the cache made from
``FLASK_SITEMAP_CACHE`` bounds each call to 1 s and stops asking a failing Redis for
10 s: here, with Redis stopped (SIGSTOP) and later killed while client threads keep
fetching cached pages, every request is answered 200 with a whole page, none waits
much more than one timeout, and each worker logs one line per interval, no traceback.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from redis_server import redis_server

from .servers import HTTP_TIMEOUT, GunicornServer, run_gunicorn
from .sites import FLASK_BLOG

WORKERS = 2
CLIENTS = 6
PAGE_SIZE = 1000
PAGES = [f"/sitemap-posts-{n}.xml" for n in range(1, 9)]


def load(
    server: GunicornServer, seconds: float, during: Callable[[float], None] = lambda _: None
) -> list[float]:
    """Fetch the pages from ``CLIENTS`` threads for ``seconds``; each answer checked."""
    latencies: list[float] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    stop = threading.Event()

    def work(offset: int) -> None:
        with httpx.Client(timeout=HTTP_TIMEOUT, trust_env=False) as client:
            n = offset
            while not stop.is_set():
                path = PAGES[n % len(PAGES)]
                n += 1
                began = time.monotonic()
                try:
                    response = client.get(server.url(path))
                    assert response.status_code == 200, (path, response.status_code)
                    assert response.content.count(b"<url>") == PAGE_SIZE
                except BaseException as exc:
                    with lock:
                        errors.append(exc)
                    return
                with lock:
                    latencies.append(time.monotonic() - began)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(CLIENTS)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    try:
        while (elapsed := time.monotonic() - began) < seconds:
            during(elapsed)
            time.sleep(0.05)
    finally:
        stop.set()
        for thread in threads:
            thread.join(60)
    assert errors == []
    return sorted(latencies)


def failure_lines(server: GunicornServer) -> list[str]:
    return [line for line in server.log().splitlines() if "sitemap cache Redis" in line]


def test_a_frozen_then_dead_redis_costs_the_blog_one_timeout_per_interval(
    tmp_path: Path, blog_database: Path
) -> None:
    with redis_server(tmp_path) as redis:
        env = {
            FLASK_BLOG.database_variable: str(blog_database),
            "FLASK_SITEMAP_CACHE": redis.url,
            "FLASK_SITEMAP_PAGE_SIZE": str(PAGE_SIZE),
        }
        run = run_gunicorn(
            "app:app", FLASK_BLOG.directory, tmp_path / "logs", workers=WORKERS, env=env
        )
        with run as server:
            warm = load(server, 1.0)  # every page rendered once and stored in Redis
            os.kill(redis.process.pid, signal.SIGSTOP)
            try:
                frozen = load(server, 6.0)
            finally:
                os.kill(redis.process.pid, signal.SIGCONT)
            log = server.log()
            lines = failure_lines(server)

            killed: list[float] = []

            def kill(elapsed: float) -> None:
                if elapsed > 0.5 and not killed:
                    redis.process.kill()
                    redis.process.wait(10)
                    killed.append(elapsed)

            # The breaker may still be open from the freeze: wait it out, so the
            # first requests after the kill do ask the dead server.
            time.sleep(10)
            dead = load(server, 6.0, kill)
            dead_lines = failure_lines(server)[len(lines) :]
            dead_log = server.log()

    assert len(warm) > 10
    p99 = frozen[int(len(frozen) * 0.99)]
    assert len(frozen) > 50
    # One timeout (1 s) for the requests in flight when it froze, plus a render and a
    # place in a sync worker's queue; before, each request paid a get and a set.
    assert p99 < 2.5, frozen[-10:]
    assert frozen[-1] < 4.0, frozen[-10:]
    assert 1 <= len(lines) <= WORKERS, lines  # 6 s frozen, 10 s interval: one per worker
    assert "TimeoutError" in lines[0]
    assert "Traceback" not in log

    assert killed
    assert dead[int(len(dead) * 0.99)] < 2.5, dead[-10:]
    assert 1 <= len(dead_lines) <= WORKERS, dead_lines
    assert "Traceback" not in dead_log
