"""Load figures for issues 11 and 22: slow readers and concurrent verified clients, real servers.

**Issue 22, the Quick start's shape** (``--only crowd``): the app of
``tests/e2e/crowd.py`` (one plain generator of ``--entries`` entries, default 120,000:
an index and three pages, and a page of the app) on uvicorn (one worker), gunicorn
with uvicorn workers (``-w 1`` and ``-w 2``; their workers' RSS without the arbiter
is printed too), and, for the Flask app, gunicorn's sync and gthread workers.
``--readers`` slow readers (default 200, 1 KiB/s, spread over the index and the pages,
every other one asking gzip) arrive at once and read for ``--seconds``, while one
normal client asks the index, the pages and the app's page, every answer checked;
reported: its p50 / p95 / max and failures, the readers' answers, and the server's
RSS before, at peak and after the readers left. Each ASGI server and gthread run it
twice: "warm" (the client ran idle first, so the pages' validators are known) and
"cold" (the crowd is the first thing the server sees).

Issue 11's scenarios (``--only issue11``; all on 127.0.0.1, bounded in count and
time), on the load app of ``tests/e2e/load.py`` (20,000 entries per page: a plain
generator, the Quick start's shape, and a fingerprinted sliceable):

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
        [--entries 120000] [--only crowd|issue11]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from docblocks import PROJECT, read_blocks
from e2e.crowd import QuickSite, slow_crowd, write_quick_app
from e2e.load import (
    LOAD_ENV,
    LOAD_EXPECTED,
    MemorySampler,
    SlowRead,
    Verified,
    server_rss_kib,
    slow_readers,
    verified_clients,
    write_load_app,
)
from e2e.servers import GunicornServer, Server, free_port, run_gunicorn, run_uvicorn, stop_process


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def describe(name: str, result: Verified, seconds: float) -> str:
    return (
        f"| {name} | {result.checked} | {result.checked / seconds:.1f} | {ms(result.median)} |"
        f" {ms(result.percentile(0.95))} | {len(result.errors)} |"
    )


@contextmanager
def behind_nginx(app: str, folder: Path, env: dict[str, str]) -> Iterator[Server]:
    """gunicorn's sync workers (-w 4) behind nginx, set up as docs/deployment.md says:
    its ``nginx`` block with the gunicorn and nginx ports put in. The server's
    process (for its memory) stays gunicorn's."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    documented = [
        b.source for b in read_blocks(PROJECT / "docs" / "deployment.md") if b.language == "nginx"
    ]
    block = next(text for text in documented if "proxy_buffering" in text)
    with run_gunicorn(app, folder, folder / "logs", workers=4, env=env) as upstream:
        port = free_port()
        site = block.replace("127.0.0.1:8000", f"127.0.0.1:{upstream.port}")
        site = site.replace("listen 80;", f"listen 127.0.0.1:{port};")
        temp = folder / "nginx"
        temp.mkdir()
        paths = " ".join(
            f"{kind}_temp_path {temp / kind};" for kind in ("client_body", "proxy", "fastcgi")
        )
        (temp / "nginx.conf").write_text(
            f"user root; worker_processes 1; pid {temp / 'nginx.pid'}; error_log stderr;\n"
            "events { worker_connections 4096; }\n"
            f"http {{ access_log off; {paths} uwsgi_temp_path {temp / 'uwsgi'};"
            f" scgi_temp_path {temp / 'scgi'};\n{site}\n}}\n"
        )
        command = [nginx, "-p", str(temp), "-c", str(temp / "nginx.conf"), "-g", "daemon off;"]
        process = subprocess.Popen(command, stderr=subprocess.DEVNULL)
        try:
            time.sleep(1)  # nginx listens at once; no readiness line to wait for
            yield Server(upstream.process, port, upstream.log_path)
        finally:
            stop_process(process)


#: A server of the crowd scenario: its name, the app it serves, how it is started.
Starter = Callable[[str, Path, dict[str, str]], AbstractContextManager[Server]]


def _uvicorn_workers(
    app: str, folder: Path, env: dict[str, str], workers: int
) -> AbstractContextManager[Server]:
    # gunicorn's arbiter with ``workers`` uvicorn workers.
    return run_gunicorn(
        app,
        folder,
        folder / "logs",
        workers=workers,
        env=env,
        worker_class="uvicorn.workers.UvicornWorker",
    )


#: The servers of the crowd scenario, by key: a name, whether it serves the ASGI app,
#: how it starts.
CROWD_SERVERS: dict[str, tuple[str, bool, Starter]] = {
    "uvicorn": (
        "uvicorn, 1 worker",
        True,
        lambda app, folder, env: run_uvicorn(app, folder, folder / "logs", env=env),
    ),
    "gunicorn-uvicorn-1": (
        "gunicorn -k uvicorn.workers.UvicornWorker -w 1",
        True,
        lambda app, folder, env: _uvicorn_workers(app, folder, env, 1),
    ),
    "gunicorn-uvicorn": (
        "gunicorn -k uvicorn.workers.UvicornWorker -w 2",
        True,
        lambda app, folder, env: _uvicorn_workers(app, folder, env, 2),
    ),
    "sync": (
        "gunicorn sync -w 4 (Flask)",
        False,
        lambda app, folder, env: run_gunicorn(app, folder, folder / "logs", workers=4, env=env),
    ),
    "nginx-sync": ("nginx (docs/deployment.md) -> gunicorn sync -w 4 (Flask)", False, behind_nginx),
    "gthread": (
        "gunicorn gthread -w 2 --threads 8 (Flask)",
        False,
        lambda app, folder, env: run_gunicorn(
            app, folder, folder / "logs", workers=2, env=env, worker_class="gthread", threads=8
        ),
    ),
}


def crowd_row(
    name: str, server: Server, site: QuickSite, args: argparse.Namespace, warm: bool
) -> str:
    """One server under the crowd: a table row of what the normal client and the
    readers got, and the server's memory."""
    pid = server.process.pid
    if warm:
        idle = verified_clients(server.base_url, site.expected, clients=1, seconds=3)
        print(f"  {name}, idle: p50 {ms(idle.median)}, max {ms(max(idle.latencies))}")
    before, workers_before = server_rss_kib(pid), _workers_rss_kib(server)
    with MemorySampler(pid) as memory:
        readers, threads = slow_crowd(
            server.port, site.documents, args.readers, rate=args.rate, seconds=args.seconds
        )
        normal = verified_clients(
            server.base_url, site.expected, clients=1, seconds=args.seconds - 2
        )
        for thread in threads:
            thread.join(args.seconds + 90)
    time.sleep(1)  # the server lets go of what the readers held
    after, workers_after = server_rss_kib(pid), _workers_rss_kib(server)
    if workers_before is not None and workers_after is not None:
        print(
            f"  {name}, {'warm' if warm else 'cold'}: the workers' RSS alone before / after"
            f" {workers_before / 1024:.1f} / {workers_after / 1024:.1f} MiB"
        )
    answered = sum(1 for r in readers if r.status == 200 and not r.error)
    worst = max(normal.latencies, default=0.0)
    for error in normal.errors[:3]:
        print(f"  {name}: {error}")
    return (
        f"| {name} | {'warm' if warm else 'cold'} | {normal.checked} | {ms(normal.median)} |"
        f" {ms(normal.percentile(0.95))} | {ms(worst)} | {len(normal.errors)} |"
        f" {answered} / {len(readers)} | {_waits(readers)} |"
        f" {before / 1024:.0f} / {memory.peak / 1024:.0f} / {after / 1024:.0f} |"
    )


def _workers_rss_kib(server: Server) -> int | None:
    # gunicorn's workers without their arbiter (None for a server of one process).
    if not isinstance(server, GunicornServer):
        return None
    return sum(server_rss_kib(worker) for worker in server.worker_pids())


def _waits(readers: list[SlowRead]) -> str:
    # The readers' own waits for their answer's head: median and max.
    waits = sorted(r.waited for r in readers if r.status)
    if not waits:
        return "-"
    return f"{ms(waits[len(waits) // 2])} / {ms(waits[-1])}"


def crowd(args: argparse.Namespace) -> None:
    """Issue 22: the Quick start's shape under a crowd of slow readers, every server."""
    site = QuickSite(args.entries)
    rows: list[str] = []
    for key in args.servers.split(","):
        name, asgi, start = CROWD_SERVERS[key]
        # Cold too where concurrent requests share walks (the ASGI servers, gthread).
        for warm in (True, False) if asgi or key == "gthread" else (True,):
            with tempfile.TemporaryDirectory() as tmp:
                folder = Path(tmp)
                write_quick_app(folder)
                app = "quick_app:asgi_app" if asgi else "quick_app:flask_app"
                with start(app, folder, site.env) as server:
                    rows.append(crowd_row(name, server, site, args, warm))
            print(rows[-1], flush=True)
    print(
        f"\n## {args.readers} slow readers at {args.rate} B/s for {args.seconds:.0f} s,"
        f" Quick start's shape, {args.entries:,} entries ({len(site.pages)} pages)\n"
    )
    print(
        "| server | | normal answers | p50 | p95 | max | failed | readers answered |"
        " readers' wait p50 / max | RSS before / peak / after (MiB) |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    print("\n".join(rows))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--readers", type=int, default=200)
    parser.add_argument("--rate", type=int, default=1_024, help="bytes/s per slow reader")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--entries", type=int, default=120_000, help="entries (crowd)")
    parser.add_argument("--only", choices=["crowd", "issue11"])
    parser.add_argument(
        "--servers", default=",".join(CROWD_SERVERS), help="crowd: comma-separated keys"
    )
    args = parser.parse_args(argv)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(f"load average before: {os.getloadavg()}")
    if args.only != "issue11":
        crowd(args)
    if args.only != "crowd":
        issue11(args)
    print(f"\nload average after: {os.getloadavg()}")
    return 0


def issue11(args: argparse.Namespace) -> None:
    """Issue 11: slow readers of one page, and concurrent verified clients."""
    env = LOAD_ENV
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


if __name__ == "__main__":
    raise SystemExit(main())
