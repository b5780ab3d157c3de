"""Issue 11: hold under load and slow clients, on real uvicorn and gunicorn.

Properties only, never timings: every body a client completes is whole and right
(parsed, gunzipped, counted), a reader that was cut knows it, and the server's memory
stays bounded while a hundred slow readers hold ``/sitemap-posts-1.xml`` and comes back
when they leave. The figures (latencies, requests, memory) are recorded by
``benchmarks/bench_load.py``, which runs the same scenarios.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .load import (
    LOAD_ENTRIES,
    LOAD_ENV,
    LOAD_EXPECTED,
    MemorySampler,
    server_rss_kib,
    slow_readers,
    verified_clients,
    write_load_app,
)
from .servers import Server, run_gunicorn, run_uvicorn


@pytest.fixture(scope="module", params=["uvicorn", "gunicorn"])
def load_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp(f"load-{request.param}")
    write_load_app(folder)
    if request.param == "uvicorn":
        with run_uvicorn("load_app:asgi_app", folder, folder / "logs", env=LOAD_ENV) as server:
            yield server
    else:
        with run_gunicorn(
            "load_app:flask_app", folder, folder / "logs", workers=2, env=LOAD_ENV
        ) as server:
            yield server


def test_concurrent_clients_get_every_body_whole(load_server: Server) -> None:
    result = verified_clients(load_server.base_url, LOAD_EXPECTED, clients=8, seconds=4)
    assert result.checked >= 8
    assert result.errors == []


@pytest.fixture(scope="module")
def uvicorn_load(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("load-slow")
    write_load_app(folder)
    with run_uvicorn("load_app:asgi_app", folder, folder / "logs", env=LOAD_ENV) as server:
        yield server


def test_slow_readers_share_renders_and_memory_comes_back(uvicorn_load: Server) -> None:
    server = uvicorn_load
    path = "/sitemap-posts-1.xml"  # a plain generator source: the Quick start's shape
    warm = verified_clients(server.base_url, {path: LOAD_ENTRIES}, clients=1, seconds=1)
    assert warm.errors == []
    before = server_rss_kib(server.process.pid)
    with MemorySampler(server.process.pid) as memory:
        readers, threads = slow_readers(server.port, path, 100, rate=16_384, seconds=4)
        # Meanwhile, fast clients are answered, whole.
        fast = verified_clients(server.base_url, LOAD_EXPECTED, clients=2, seconds=3)
        for thread in threads:
            thread.join(60)
    assert fast.errors == [] and fast.checked >= 2
    assert all(reader.status == 200 and not reader.error for reader in readers)
    assert all(not reader.complete for reader in readers)  # cut by leaving, not ended
    during = memory.peak
    # A hundred readers of a 1 MB page held open: bounded (it was ~500 MB for 200).
    assert during - before < 120 * 1024, (before, during)
    after_clients = verified_clients(server.base_url, {path: LOAD_ENTRIES}, clients=1, seconds=1)
    assert after_clients.errors == []
    after = server_rss_kib(server.process.pid)
    # And the memory comes back once they left.
    assert after - before < 60 * 1024, (before, during, after)
