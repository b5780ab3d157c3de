"""Load figures for issue 11: slow readers and concurrent verified clients, real servers.

Scenarios (all on 127.0.0.1, bounded in count and time), on the load app of
``tests/e2e/load.py`` (20,000 entries per page: a plain generator, the Quick start's
shape, and a fingerprinted sliceable):

1. **Slow readers**: ``--readers`` clients (default 200) read ``/sitemap-posts-1.xml``
   at ``--rate`` bytes/s (default 1,024) for ``--seconds`` on ONE uvicorn worker, while
   two fast clients fetch and verify documents; reported: the fast clients' latency
   percentiles against the same fetches on the idle server, and the server's RSS before,
   at peak and after the readers left.
2. **Concurrent verified clients**: 8 clients for ``--seconds`` against uvicorn (1
   worker) and gunicorn (``-w 4``), every body parsed, gunzipped and counted:
   requests/s, latency percentiles, errors.

Run from the repository root::

    .venv/bin/python benchmarks/bench_load.py [--readers 200] [--rate 1024] [--seconds 10]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from e2e.load import (
    LOAD_ENV,
    LOAD_EXPECTED,
    MemorySampler,
    Verified,
    server_rss_kib,
    slow_readers,
    verified_clients,
    write_load_app,
)
from e2e.servers import run_gunicorn, run_uvicorn


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def describe(name: str, result: Verified, seconds: float) -> str:
    return (
        f"| {name} | {result.checked} | {result.checked / seconds:.1f} | {ms(result.median)} |"
        f" {ms(result.percentile(0.95))} | {len(result.errors)} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--readers", type=int, default=200)
    parser.add_argument("--rate", type=int, default=1_024, help="bytes/s per slow reader")
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args(argv)
    env = LOAD_ENV
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_load_app(folder)
        rows: list[str] = []
        with run_uvicorn("load_app:asgi_app", folder, folder / "logs-u", env=env) as server:
            pid = server.process.pid
            idle = verified_clients(server.base_url, LOAD_EXPECTED, clients=2, seconds=3)
            before = server_rss_kib(pid)
            with MemorySampler(pid) as memory:
                readers, threads = slow_readers(
                    server.port,
                    "/sitemap-posts-1.xml",
                    args.readers,
                    rate=args.rate,
                    seconds=args.seconds,
                )
                loaded = verified_clients(
                    server.base_url, LOAD_EXPECTED, clients=2, seconds=args.seconds - 1
                )
                for thread in threads:
                    thread.join(args.seconds + 60)
            after_readers = server_rss_kib(pid)
            ok = sum(1 for r in readers if r.status == 200 and not r.error)
            print(
                f"\n## {args.readers} slow readers at {args.rate} B/s for {args.seconds:.0f} s,"
                " one uvicorn worker\n"
            )
            print("| | answers | per s | p50 | p95 | errors |\n|---|---:|---:|---:|---:|---:|")
            print(describe("fast clients, idle server", idle, 3))
            print(describe("fast clients, during the slow readers", loaded, args.seconds - 1))
            print(
                f"\nslow readers answered 200: {ok} of {len(readers)};"
                f" server RSS before {before / 1024:.0f} MiB, peak {memory.peak / 1024:.0f} MiB,"
                f" after they left {after_readers / 1024:.0f} MiB"
            )
            rows.append(
                describe(
                    "uvicorn, 1 worker",
                    verified_clients(
                        server.base_url, LOAD_EXPECTED, clients=8, seconds=args.seconds / 2
                    ),
                    args.seconds / 2,
                )
            )
        with run_gunicorn(
            "load_app:flask_app", folder, folder / "logs-g", workers=4, env=env
        ) as server:
            rows.append(
                describe(
                    "gunicorn -w 4",
                    verified_clients(
                        server.base_url, LOAD_EXPECTED, clients=8, seconds=args.seconds / 2
                    ),
                    args.seconds / 2,
                )
            )
        print(f"\n## 8 concurrent verified clients for {args.seconds / 2:.0f} s\n")
        print("| server | answers | per s | p50 | p95 | errors |\n|---|---:|---:|---:|---:|---:|")
        print("\n".join(rows))
    print(f"\nload average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
