"""Issue 22: where a uvicorn server's memory goes after crowds of slow readers.

The app of ``tests/e2e/crowd.py`` (the Quick start's shape, ``--entries`` entries) is
served by one uvicorn worker behind a probe: ``/memory`` answers, after a full
collection, the objects the gc tracks, pymalloc's arenas and blocks
(``sys._debugmallocstats``), glibc's main arena (``mallinfo2``) and, with ``--trace``,
``tracemalloc``'s traced memory and its largest growths since the first probe. Then
``--crowds`` crowds of ``--readers`` slow readers (as ``bench_load.py --only crowd``)
come and go, the server probed 1 s after each; ``--trim`` asks glibc's
``malloc_trim(0)`` at the end, to see how much of the growth is free memory glibc
keeps. Extra environment for the server: ``--env NAME=VALUE`` (for instance
``MALLOC_MMAP_THRESHOLD_=131072``).

Run from the repository root::

    .venv/bin/python benchmarks/bench_crowd_memory.py [--trace] [--trim] [--crowds 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from e2e.crowd import QuickSite, slow_crowd, write_quick_app
from e2e.load import server_rss_kib
from e2e.servers import HTTP_TIMEOUT, Server, run_uvicorn

#: The probe wrapped around the crowd's app (``probe_app:app``).
PROBE_APP = '''
"""The crowd's app, and /memory and /trim for the memory bench."""
import ctypes
import gc
import json
import os
import sys
import tempfile
import tracemalloc

if os.environ.get("PROBE_TRACE") == "1":
    tracemalloc.start()

from quick_app import asgi_app

FIRST = []
PYMALLOC = ("arenas allocated current", "bytes in allocated blocks", "bytes in available blocks")


class MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd",
            "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
        )
    ]


LIBC = ctypes.CDLL("libc.so.6")
LIBC.mallinfo2.restype = MallInfo2


def pymalloc():
    # sys._debugmallocstats() writes to the C stderr: read it back from a file.
    with tempfile.TemporaryFile() as out:
        saved = os.dup(2)
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        lines = out.read().decode().splitlines()
    found = {}
    for line in lines:
        name, _, value = line.lstrip("# ").partition("=")
        if name.strip() in PYMALLOC:
            found["pymalloc " + name.strip()] = int(value.strip().replace(",", ""))
    return found


def report():
    gc.collect()
    info = LIBC.mallinfo2()
    found = {
        "gc objects": len(gc.get_objects()),
        "glibc main arena in use": info.uordblks,
        "glibc main arena free": info.fordblks,
        **pymalloc(),
    }
    if tracemalloc.is_tracing():
        snapshot = tracemalloc.take_snapshot()
        found["traced"] = tracemalloc.get_traced_memory()[0]
        if not FIRST:
            FIRST.append(snapshot)
        else:
            top = snapshot.compare_to(FIRST[0], "lineno")[:8]
            found["growth"] = [str(stat) for stat in top]
    return found


async def answer(send, body):
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


async def app(scope, receive, send):
    if scope["type"] == "http" and scope["path"] == "/memory":
        return await answer(send, json.dumps(report()).encode())
    if scope["type"] == "http" and scope["path"] == "/trim":
        return await answer(send, str(LIBC.malloc_trim(0)).encode())
    return await asgi_app(scope, receive, send)
'''


def probe(server: Server, label: str) -> str:
    """A table row: RSS and what /memory says now."""
    found = httpx.get(server.base_url + "/memory", timeout=HTTP_TIMEOUT).json()
    rss = server_rss_kib(server.process.pid) / 1024
    mib = 2**20
    traced = f"{found['traced'] / mib:.2f}" if "traced" in found else "-"
    for line in found.get("growth", []):
        print(f"  {label}: {line}")
    return (
        f"| {label} | {rss:.1f} | {found['gc objects']:,} |"
        f" {found.get('pymalloc arenas allocated current', '-')} |"
        f" {found.get('pymalloc bytes in allocated blocks', 0) / 1e6:.2f} /"
        f" {found.get('pymalloc bytes in available blocks', 0) / 1e6:.2f} |"
        f" {found['glibc main arena in use'] / mib:.1f} /"
        f" {found['glibc main arena free'] / mib:.1f} | {traced} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--entries", type=int, default=120_000)
    parser.add_argument("--readers", type=int, default=200)
    parser.add_argument("--rate", type=int, default=1_024, help="bytes/s per slow reader")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--crowds", type=int, default=3)
    parser.add_argument("--trace", action="store_true", help="tracemalloc in the server")
    parser.add_argument("--trim", action="store_true", help="malloc_trim(0) at the end")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server")
    args = parser.parse_args(argv)
    site = QuickSite(args.entries)
    env = dict(site.env, PROBE_TRACE="1" if args.trace else "0")
    env.update(item.split("=", 1) for item in args.env)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_quick_app(folder)
        (folder / "probe_app.py").write_text(PROBE_APP)
        with run_uvicorn("probe_app:app", folder, folder / "logs", env=env) as server:
            rows.append(probe(server, "start"))
            for number in range(1, args.crowds + 1):
                _, threads = slow_crowd(
                    server.port, site.documents, args.readers, rate=args.rate, seconds=args.seconds
                )
                for thread in threads:
                    thread.join(args.seconds + 90)
                time.sleep(1)  # the server lets go of what the readers held
                rows.append(probe(server, f"after crowd {number}"))
            if args.trim:
                httpx.get(server.base_url + "/trim", timeout=HTTP_TIMEOUT)
                rows.append(probe(server, "after malloc_trim(0)"))
    print(json.dumps({"env": args.env, "trace": args.trace}))
    print(
        "| | RSS (MiB) | gc objects | pymalloc arenas | pymalloc live / free blocks (MB) |"
        " glibc main arena in use / free (MiB) | traced (MiB) |\n"
        "|---|---:|---:|---:|---:|---:|---:|"
    )
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
