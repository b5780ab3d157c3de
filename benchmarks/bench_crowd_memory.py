"""Issue 22: where a uvicorn server's memory goes after crowds of slow readers.

The app of ``tests/e2e/crowd.py`` (the Quick start's shape, ``--entries`` entries) is
served by one uvicorn worker (``--server gunicorn``: gunicorn's arbiter and one
``uvicorn.workers.UvicornWorker``) behind a probe: ``/memory`` answers, after a full
collection, the serving process's id (its RSS is read after: a gunicorn worker's, not
its arbiter's), the objects the gc tracks, pymalloc's arenas and blocks (``sys._debugmallocstats``),
glibc's main arena (``mallinfo2``), the resident memory by kind of mapping
(``/proc/self/smaps``: the main heap, threads' stacks and malloc arenas, other
anonymous maps, files), the transports' unsent bytes, how many times the middleware
gave the heap back (``asgi_sitemap.heap``) and, with ``--trace``, ``tracemalloc``'s
largest growths since the first probe (and the small blocks more numerous than then:
what may keep pymalloc's arenas).

The baseline is taken after one request of every route the crowd asks, in both
codings, and of the text pages (``--cold``: none), so that first-use imports are not
counted as the crowd's. Then ``--crowds`` crowds of ``--readers`` slow readers (as
``bench_load.py --only crowd``) come and go, the server probed halfway through each
(``tracemalloc``'s largest holders then, with ``--trace``) and ``--settle`` seconds
after it. ``--trim`` asks glibc's ``malloc_trim(0)`` at the end (and times it), to see
what free memory glibc still keeps; ``--control`` has the crowd read the same documents
kept as bytes by a plain ASGI app (what any app sending them costs); ``--new`` lists the
types of the objects the gc tracks that are new since the start. Extra environment for
the server: ``--env NAME=VALUE`` (``MALLOC_MMAP_THRESHOLD_=131072``;
``PROBE_NO_TRIM=1``: the middleware does not give the heap back, as before;
``PROBE_PREFILL=255``: asyncio's free list of ``FutureIter`` filled after the warm-up;
``PROBE_CACHED=1``: the same entries from a fingerprinted sliceable, so that the crowd
reads pages from the page cache; ``PROBE_WHOLE=1``: a cached page handed to the server
in one message, as before; ``PROBE_BATCH=32``: entries per batch of a render, and
``PROBE_THREAD_BATCHES=1``: batches per hand-over from a sync source's thread;
``PROBE_SIZE=64``: the objects of that pymalloc size class, by type, at each probe;
``PROBE_CONTROL_WAIT=1``: with ``--control``, each request waits that many seconds
before its answer, as a request of the library's waits for a walk;
``PROBE_CONTROL_STARLETTE=1``: with ``--control``, the bytes are a Starlette route's
``StreamingResponse``, as an app's own streamed page would be).
``--classes`` prints, at each probe, how pymalloc's pools differ from the start's by
size class (pools in use, bytes live and free inside them: where the crowd's fragments
sit); ``--waiting N --lines`` breaks what N waiting requests hold down by line.
``--arenas`` lists, after each crowd, the objects that live in anonymous memory mapped
since the start (the pymalloc arenas the crowd added, the new threads' maps), by type
and, with ``--trace``, by where they were allocated; and how many of the iterators
asyncio's free list keeps are there: what keeps those arenas.

Run from the repository root::

    .venv/bin/python benchmarks/bench_crowd_memory.py [--trace] [--trim] [--crowds 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from e2e.crowd import QuickSite, slow_crowd, write_quick_app
from e2e.load import server_rss_kib
from e2e.servers import HTTP_TIMEOUT, Server, run_gunicorn, run_uvicorn

#: The probe wrapped around the crowd's app (``probe_app:app``).
PROBE_APP = '''
"""The crowd's app, and /memory and /trim for the memory bench."""
import asyncio
import ctypes
import gc
import json
import os
import sys
import tempfile
import time
import tracemalloc

if os.environ.get("PROBE_TRACE") == "1":
    tracemalloc.start(3)

from quick_app import asgi_app

if os.environ.get("PROBE_CACHED") == "1":
    # The same entries from a fingerprinted sliceable: once warm, every document is
    # answered from the page cache, with no render, walk or worker thread.
    import quick_app
    from asgi_sitemap import SitemapMiddleware
    from flask_sitemapper import Entry

    class CachedPosts:
        def __len__(self):
            return quick_app.ENTRIES

        def __getitem__(self, window):
            for i in range(window.start, min(window.stop, quick_app.ENTRIES)):
                yield Entry(f"{quick_app.BASE}/posts/post-{i}", lastmod=quick_app.LASTMOD)

        def fingerprint(self):
            return 1

    asgi_app = SitemapMiddleware(
        asgi_app,
        {"posts": CachedPosts()},
        base_url=quick_app.BASE,
        page_size=quick_app.PAGE_SIZE,
    )

if os.environ.get("PROBE_WHOLE") == "1":  # the code before: a cached page in one message
    import asgi_sitemap.middleware

    async def send_whole(reply, send):
        await asgi_sitemap.middleware._send_start(reply, send)
        await send({"type": "http.response.body", "body": b"".join(reply.body)})

    asgi_sitemap.middleware._send_small = send_whole

if os.environ.get("PROBE_NO_TRIM") == "1":  # the code before the crowd's trim
    import asgi_sitemap.middleware
    asgi_sitemap.middleware.malloc_trim = lambda: None

if os.environ.get("PROBE_THREAD_BATCHES"):  # an experiment: entries per hand-over
    import sitemap_core.sources.aio
    sitemap_core.sources.aio.THREAD_BATCHES = int(os.environ["PROBE_THREAD_BATCHES"])

if os.environ.get("PROBE_BATCH"):  # an experiment: entries per batch of a render
    import sitemap_core.serve.drive_async as drive_async
    drive_async.aiter_body.__defaults__ = (int(os.environ["PROBE_BATCH"]), None, None)

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
    classes = []
    for line in lines:
        name, _, value = line.lstrip("# ").partition("=")
        if name.strip() in PYMALLOC:
            found["pymalloc " + name.strip()] = int(value.strip().replace(",", ""))
        fields = line.split()
        if len(fields) == 5 and fields[0].isdigit():
            size, pools, used, free = (int(x) for x in fields[1:])
            classes.append((size, pools, used, free))
    # By size class: pools in use, bytes live and free inside them (where fragments sit).
    found["pymalloc classes"] = [
        (size, pools, used * size, free * size) for size, pools, used, free in classes
    ]
    return found


def transports():
    # The unsent bytes each connection's asyncio transport holds (its write buffer),
    # and what those buffers have allocated.
    found = [o for o in gc.get_objects() if type(o).__name__ == "_SelectorSocketTransport"]
    buffers = [o._buffer for o in found if isinstance(getattr(o, "_buffer", None), bytearray)]
    return {
        "transports": len(found),
        "transport buffers unsent": sum(len(b) for b in buffers),
        "transport buffers allocated": sum(sys.getsizeof(b) for b in buffers),
    }


def resident():
    # Resident KiB by kind of mapping (/proc/self/smaps): glibc's main heap, pymalloc
    # arenas (1 MiB anonymous maps), other anonymous maps (threads' stacks and malloc
    # arenas, glibc's mmapped blocks), files.
    kinds = {"heap": 0, "pymalloc-sized": 0, "anon": 0, "file": 0, "stack": 0, "arena": 0}
    kind = "file"
    with open("/proc/self/smaps") as maps:
        for line in maps:
            fields = line.split()
            if "-" in fields[0] and len(fields) >= 5:
                start, end = (int(x, 16) for x in fields[0].split("-"))
                name = fields[5] if len(fields) > 5 else ""
                if name == "[heap]":
                    kind = "heap"
                elif name:
                    kind = "file"
                elif end - start == 8 * 2**20:
                    kind = "stack"  # a thread's stack (glibc's default size)
                elif start % (64 * 2**20) == 0:
                    kind = "arena"  # a thread's malloc arena (64 MiB-aligned heaps)
                else:
                    kind = "pymalloc-sized" if end - start == 2**20 else "anon"
            elif fields[0] == "Rss:":
                kinds[kind] += int(fields[1])
    import threading
    return {"rss " + k: v for k, v in kinds.items()} | {"threads": threading.active_count()}


def holders():
    # tracemalloc's largest holders now, by the line that allocated them (3 frames).
    snapshot = tracemalloc.take_snapshot()
    top = snapshot.statistics("traceback")[:10]
    small = [s for s in snapshot.statistics("traceback") if s.size <= 512 * s.count]
    top += sorted(small, key=lambda s: -s.size)[:20]
    return [f"{s.size / 2**20:.2f} MiB in {s.count} blocks: " + " < ".join(
        f"{f.filename.rsplit('/', 2)[-1]}:{f.lineno}" for f in s.traceback) for s in top]


ANON = []


def anonymous():
    # The anonymous mappings now (pymalloc's arenas, threads' stacks and arenas).
    found = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) == 5:
                found.append(tuple(int(x, 16) for x in fields[0].split("-")))
    return found


def added(now, before):
    # The address ranges of ``now`` that no range of ``before`` covered.
    pieces = []
    for start, end in now:
        cuts = sorted((s, e) for s, e in before if s < end and e > start)
        at = start
        for s, e in cuts:
            if s > at:
                pieces.append((at, s))
            at = max(at, e)
        if at < end:
            pieces.append((at, end))
    return pieces


def survivors():
    # The objects living in anonymous memory mapped since the start (the arenas a
    # crowd added), by type and by where they were allocated (with tracemalloc).
    import bisect
    import collections
    now = anonymous()
    if not ANON:
        ANON.extend(now)
        return []
    pieces = added(now, ANON)
    starts = [s for s, _ in pieces]

    def inside(address):
        # "" outside the new memory, else the kind of piece it is in.
        at = bisect.bisect_right(starts, address) - 1
        if at < 0 or address >= pieces[at][1]:
            return ""
        return "small map" if pieces[at][1] - pieces[at][0] < 8 * 2**20 else "large map"

    # The objects the gc tracks, what they refer to, and what the untracked tuples and
    # dicts among those refer to (their strings, numbers).
    objects = {id(o): o for o in gc.get_objects()}
    for o in list(objects.values()):
        for r in gc.get_referents(o):
            objects.setdefault(id(r), r)
            if isinstance(r, tuple | dict) and not gc.is_tracked(r):
                for atom in gc.get_referents(r):
                    objects.setdefault(id(atom), atom)
    # asyncio's FutureIter free list: the first iterators made now are the kept ones.
    future = asyncio.get_event_loop().create_future()
    held = [future.__await__() for _ in range(255)]
    kept = sum(bool(inside(id(i))) for i in held)
    del held
    found = collections.Counter()
    for address, o in objects.items():
        kind = inside(address)
        if kind:
            where = tracemalloc.get_object_traceback(o) if tracemalloc.is_tracing() else None
            text = " < ".join(
                f"{f.filename.rsplit('/', 2)[-1]}:{f.lineno}" for f in where
            ) if where else ""
            found[kind + ": " + type(o).__qualname__ + " " + text] += 1
    size = sum(e - s for s, e in pieces) / 2**20
    return [f"new anonymous memory {size:.2f} MiB in {len(pieces)} pieces",
            f"{kept} FutureIter kept by asyncio's free list"] + [
        f"{n} {name}" for name, n in found.most_common(40)]


def sized(size):
    # The objects of pymalloc's size class ``size`` among those the gc tracks and what
    # they refer to, by type (strings by length): what fills that class.
    import collections
    objects = {id(o): o for o in gc.get_objects()}
    for o in list(objects.values()):
        for r in gc.get_referents(o):
            objects.setdefault(id(r), r)
    found = collections.Counter()
    for o in objects.values():
        if size - 16 < sys.getsizeof(o) <= size:
            sized = f" {len(o)}" if isinstance(o, str | bytes | tuple) else ""
            found[type(o).__qualname__ + sized] += 1
    return [f"{n} of {size} B: {name}" for name, n in found.most_common(25)]


SEEN = set()


def newcomers():
    # The types of the objects the gc tracks now that it did not at the first probe.
    import collections
    now = gc.get_objects()
    if not SEEN:
        SEEN.update(id(o) for o in now)
        return []
    def name(o):
        code = getattr(o, "cr_code", None) or getattr(o, "ag_code", None)
        return type(o).__qualname__ + (" " + code.co_qualname if code else "")

    new = collections.Counter(name(o) for o in now if id(o) not in SEEN)
    return [f"{n} {name}" for name, n in new.most_common(45)]


def report(during=False):
    garbage = None
    if not during or os.environ.get("PROBE_COLLECT_DURING") == "1":
        garbage = gc.collect()  # what only the cycle collector could free
    info = LIBC.mallinfo2()
    found = {
        "garbage": garbage,
        "pid": os.getpid(),  # the serving process (under gunicorn, the worker)
        **transports(),
        **resident(),
        "heap given back": sum(
            o.trims for o in gc.get_objects() if type(o).__name__ == "Crowd"
        ),
        "gc objects": len(gc.get_objects()),
        "glibc main arena in use": info.uordblks,
        "glibc main arena free": info.fordblks,
        **pymalloc(),
    }
    if os.environ.get("PROBE_NEW") == "1":
        found["growth"] = newcomers()
    if os.environ.get("PROBE_SIZE"):
        found["growth"] = found.get("growth", []) + sized(int(os.environ["PROBE_SIZE"]))
    if during and tracemalloc.is_tracing():
        found["traced"] = tracemalloc.get_traced_memory()[0]
        found["growth"] = holders()
    elif tracemalloc.is_tracing() and os.environ.get("PROBE_ARENAS") != "1":
        snapshot = tracemalloc.take_snapshot()
        found["traced"] = tracemalloc.get_traced_memory()[0]
        if not FIRST:
            FIRST.append(snapshot)
        else:
            top = snapshot.compare_to(FIRST[0], "lineno")[:8]
            # Small blocks (pymalloc's) more numerous than at the start: what may
            # keep the arenas a crowd added.
            small = [
                s for s in snapshot.compare_to(FIRST[0], "traceback")
                if s.count_diff > 0 and s.size <= 512 * s.count
            ]
            small.sort(key=lambda s: -s.count_diff)
            found["growth"] = [str(stat) for stat in top] + [
                f"small +{s.count_diff}: " + " < ".join(
                    f"{f.filename.rsplit('/', 2)[-1]}:{f.lineno}" for f in s.traceback)
                for s in small[:25]
            ]
    if os.environ.get("PROBE_ARENAS") == "1" and not during:
        found["growth"] = found.get("growth", []) + survivors()
    return found


async def answer(send, body):
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


CONTROL = {}


async def rendered(path, coding):
    # The library's answer for ``path``, asked in-process once, kept as bytes.
    if (path, coding) not in CONTROL:
        sent = []
        asked = []

        async def receive():
            if asked:  # after the request, nothing until the answer is complete
                await asyncio.Event().wait()
            asked.append(1)
            return {"type": "http.request", "body": b"", "more_body": False}

        async def keep(message):
            sent.append(message)

        headers = [(b"host", b"quick.example.com"), (b"accept-encoding", coding)]
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": "GET", "scheme": "http", "path": path, "raw_path": path.encode(),
            "query_string": b"", "root_path": "", "headers": headers,
            "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80),
        }
        await asgi_app(scope, receive, keep)
        head = [m for m in sent if m["type"] == "http.response.start"][0]
        body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        CONTROL[path, coding] = (head["headers"], body)
    return CONTROL[path, coding]


async def control(scope, send):
    # The same bytes from memory, in 32 KiB slices: what any app serving them costs.
    asked = dict(scope["headers"]).get(b"accept-encoding", b"")
    coding = b"gzip" if b"gzip" in asked else b"identity"
    headers, body = await rendered(scope["path"][len("/control"):], coding)
    # PROBE_CONTROL_WAIT=seconds: each request waits first, as one waits for a walk.
    await asyncio.sleep(float(os.environ.get("PROBE_CONTROL_WAIT", "0")))
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    for start in range(0, len(body), 32768):
        piece = body[start:start + 32768]
        await send({"type": "http.response.body", "body": piece, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


async def streamed_control(request):
    # PROBE_CONTROL_STARLETTE=1: the control as a Starlette app's own route streams it.
    from starlette.responses import StreamingResponse

    asked = request.headers.get("accept-encoding", "")
    coding = b"gzip" if "gzip" in asked else b"identity"
    headers, body = await rendered(request.url.path[len("/control"):], coding)
    await asyncio.sleep(float(os.environ.get("PROBE_CONTROL_WAIT", "0")))

    async def slices():
        for start in range(0, len(body), 32768):
            yield body[start:start + 32768]

    kept = {k.decode(): v.decode() for k, v in headers if k.lower() != b"content-length"}
    return StreamingResponse(slices(), headers=kept)


def starlette_control():
    from starlette.applications import Starlette
    from starlette.routing import Route

    return Starlette(routes=[Route("/control/{path:path}", streamed_control)])


STARLETTE_CONTROL = starlette_control() if os.environ.get("PROBE_CONTROL_STARLETTE") else None


async def app(scope, receive, send):
    if scope["type"] == "http" and scope["path"].startswith("/control/"):
        if STARLETTE_CONTROL is not None:
            return await STARLETTE_CONTROL(scope, receive, send)
        return await control(scope, send)
    if scope["type"] == "http" and scope["path"] == "/memory":
        during = scope["query_string"] == b"during"
        return await answer(send, json.dumps(report(during)).encode())
    if scope["type"] == "http" and scope["path"] == "/prefill":
        # An experiment: asyncio's FutureIter free list filled before the crowd.
        future = asyncio.get_event_loop().create_future()
        held = [future.__await__() for _ in range(int(os.environ.get("PROBE_PREFILL", "0")))]
        del held
        return await answer(send, b"")
    if scope["type"] == "http" and scope["path"] == "/trim":
        started = time.perf_counter()
        LIBC.malloc_trim(0)
        return await answer(send, f"{time.perf_counter() - started:.6f}".encode())
    return await asgi_app(scope, receive, send)
'''


def waiting_cost(requests: int) -> None:
    """In-process, no server: what ``requests`` sitemap requests waiting at once for
    shared walks and renders (the crowd's first second) hold, by file that allocated
    it, per request (the source waits until they all wait)."""
    import asyncio
    import gc
    import tracemalloc

    from asgi_sitemap import SitemapMiddleware
    from flask_sitemapper import Entry

    gate = threading.Event()

    def posts() -> Iterator[Entry]:
        gate.wait()
        for i in range(1_000):
            yield Entry(f"https://q.example.com/posts/{i}", lastmod="2024-05-01T10:00:00+00:00")

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    site = SitemapMiddleware(app, {"posts": posts}, base_url="https://q.example.com", page_size=500)
    paths = ["/sitemap.xml", "/sitemap-posts-1.xml", "/sitemap-posts-2.xml"]

    async def ask(number: int) -> None:
        async def receive() -> dict[str, Any]:
            await asyncio.Event().wait()  # no disconnect
            return {}

        async def send(message: dict[str, Any]) -> None:
            pass

        coding = (b"identity", b"gzip")[number % 2]
        headers = [(b"host", b"q.example.com"), (b"accept-encoding", coding)]
        path = paths[number % len(paths)]
        scope = {"type": "http", "method": "GET", "path": path, "headers": headers}
        await site(scope, receive, send)

    async def measure() -> None:
        gate.set()
        for number in range(2 * len(paths)):  # first use of every route, both codings
            await ask(number)
        gate.clear()
        gc.collect()
        tracemalloc.start(1)
        objects, before = len(gc.get_objects()), tracemalloc.take_snapshot()
        waiting = [asyncio.ensure_future(ask(n)) for n in range(requests)]
        await asyncio.sleep(0.5)
        gc.collect()
        stats = tracemalloc.take_snapshot().compare_to(before, WAITING_KEY[0])
        print(
            f"objects the gc tracks per request: {(len(gc.get_objects()) - objects) / requests:.0f}"
        )
        print(f"traced per request: {sum(s.size_diff for s in stats) / requests:.0f} B")
        for stat in stats[: 12 if WAITING_KEY[0] == "filename" else 30]:
            frame = stat.traceback[0]
            name = frame.filename.rsplit("/", 2)[-1]
            if WAITING_KEY[0] == "lineno":
                name += f":{frame.lineno}"
            print(f"  {stat.size_diff / requests:6.0f} B  {name}")
        tracemalloc.stop()
        gate.set()
        await asyncio.gather(*waiting)

    asyncio.run(measure())


def warm(server: Server, documents: list[str], together: bool = False) -> None:
    """One request of every route the crowd asks, in both codings, and the text
    sitemaps: what the first use of each imports and builds is then in the baseline.
    ``together``: all at once, as a crowd asks them, rather than one after another."""
    asked = [
        (path, coding)
        for path in [*documents, *(p.replace(".xml", ".txt") for p in documents[1:])]
        for coding in ("identity", "gzip")
    ]

    def get(path: str, coding: str) -> None:
        with httpx.Client(base_url=server.base_url, timeout=HTTP_TIMEOUT) as client:
            client.get(path, headers={"Accept-Encoding": coding}).raise_for_status()

    if not together:
        for path, coding in asked:
            get(path, coding)
        return
    threads = [threading.Thread(target=get, args=each) for each in asked]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


#: ``--waiting``'s grouping of what the waiting requests hold: by file, or by line.
WAITING_KEY = ["filename"]

#: pymalloc's pools by size class at the first probe, with ``--classes``.
CLASSES: list[dict[int, tuple[int, int, int]]] = []


def size_classes(label: str, found: list[list[int]]) -> None:
    """Print how pymalloc's pools differ from the first probe's, by size class: pools
    in use (16 KiB each), KB live and KB free inside them."""
    now = {size: (pools, live, free) for size, pools, live, free in found}
    if not CLASSES[0]:
        CLASSES[0].update(now)
        return
    first = CLASSES[0]
    moved = [
        (size, *(now[size][i] - first.get(size, (0, 0, 0))[i] for i in range(3)))
        for size in now
        if now[size][0] != first.get(size, (0, 0, 0))[0]
    ]
    pools, live, free = (sum(row[i] for row in moved) for i in (1, 2, 3))
    print(
        f"  {label}: pymalloc pools {pools:+d} ({pools * 16} KiB), live {live / 1000:+.0f} KB,"
        f" free in them {free / 1000:+.0f} KB; by size class (pools / KB live / KB free): "
        + ", ".join(f"{s} B {p:+d} / {lv / 1000:+.0f} / {f / 1000:+.0f}" for s, p, lv, f in moved)
    )


def probe(server: Server, label: str, during: bool = False) -> str:
    """A table row: RSS and what /memory says now (``during``: no collection first,
    and tracemalloc's largest holders rather than its growth)."""
    url = server.base_url + "/memory" + ("?during" if during else "")
    found = httpx.get(url, timeout=HTTP_TIMEOUT).json()
    # The serving process's (a gunicorn worker's, not its arbiter's), after the probe
    # answered, as the figures before the worker's own were.
    rss = server_rss_kib(found["pid"]) / 1024
    mib = 2**20
    traced = f"{found['traced'] / mib:.2f}" if "traced" in found else "-"
    for line in found.get("growth", []):
        print(f"  {label}: {line}")
    if CLASSES:
        size_classes(label, found["pymalloc classes"])
    if found.get("garbage") is not None:
        print(f"  {label}: {found['garbage']:,} objects in cycles freed by the probe's collection")
    return (
        f"| {label} | {rss:.1f} | {found['gc objects']:,} |"
        f" {found.get('pymalloc arenas allocated current', '-')} |"
        f" {found.get('pymalloc bytes in allocated blocks', 0) / 1e6:.2f} /"
        f" {found.get('pymalloc bytes in available blocks', 0) / 1e6:.2f} |"
        f" {found['glibc main arena in use'] / mib:.1f} /"
        f" {found['glibc main arena free'] / mib:.1f} | {traced} |"
        f" {found['transports']} | {found['transport buffers unsent'] / mib:.2f} /"
        f" {found['transport buffers allocated'] / mib:.2f} |"
        f" {found['rss heap'] / 1024:.1f} / {found['rss pymalloc-sized'] / 1024:.1f} /"
        f" {found['rss anon'] / 1024:.1f} / {found['rss file'] / 1024:.1f} |"
        f" {found['rss stack'] / 1024:.2f} / {found['rss arena'] / 1024:.2f} |"
        f" {found['threads']} | {found['heap given back']} |"
    )


def serve(kind: str, folder: Path, env: dict[str, str]) -> AbstractContextManager[Server]:
    """The probed app on one uvicorn process, or on one uvicorn worker of gunicorn (the
    probe answers from the worker, so what it reports is the worker's)."""
    if kind == "gunicorn":
        return run_gunicorn(
            "probe_app:app",
            folder,
            folder / "logs",
            env=env,
            worker_class="uvicorn.workers.UvicornWorker",
        )
    return run_uvicorn("probe_app:app", folder, folder / "logs", env=env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--entries", type=int, default=120_000)
    parser.add_argument("--readers", type=int, default=200)
    parser.add_argument("--rate", type=int, default=1_024, help="bytes/s per slow reader")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--crowds", type=int, default=3)
    parser.add_argument(
        "--settle", type=float, default=1.0, help="seconds between a crowd's end and its probe"
    )
    parser.add_argument("--trace", action="store_true", help="tracemalloc in the server")
    parser.add_argument(
        "--new", action="store_true", help="list the types of objects new since the start"
    )
    parser.add_argument(
        "--arenas",
        action="store_true",
        help="list the objects living in anonymous memory mapped since the start",
    )
    parser.add_argument(
        "--server",
        choices=["uvicorn", "gunicorn"],
        default="uvicorn",
        help="one uvicorn process, or gunicorn -k uvicorn.workers.UvicornWorker -w 1",
    )
    parser.add_argument("--trim", action="store_true", help="malloc_trim(0) at the end")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server")
    parser.add_argument(
        "--control",
        action="store_true",
        help="the crowd reads the same documents kept as bytes by a plain ASGI app",
    )
    parser.add_argument(
        "--warm-together", action="store_true", help="the warm-up's requests all at once"
    )
    parser.add_argument(
        "--cold", action="store_true", help="no warm-up request of each route before the start"
    )
    parser.add_argument(
        "--waiting",
        type=int,
        default=0,
        help="in-process: what this many requests waiting at once for shared walks hold",
    )
    parser.add_argument(
        "--lines", action="store_true", help="--waiting: what they hold by line, not by file"
    )
    parser.add_argument(
        "--classes",
        action="store_true",
        help="pymalloc's pools by size class at each probe, against the first",
    )
    args = parser.parse_args(argv)
    if args.classes:
        CLASSES.append({})
    if args.lines:
        WAITING_KEY[0] = "lineno"
    if args.waiting:
        waiting_cost(args.waiting)
        return 0
    site = QuickSite(args.entries)
    env = dict(site.env, PROBE_TRACE="1" if args.trace else "0", PROBE_NEW="1" if args.new else "0")
    env["PROBE_ARENAS"] = "1" if args.arenas else "0"
    env.update(item.split("=", 1) for item in args.env)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_quick_app(folder)
        (folder / "probe_app.py").write_text(PROBE_APP)
        with serve(args.server, folder, env) as server:
            documents = [("/control" if args.control else "") + p for p in site.documents]
            if not args.cold:
                warm(server, documents, args.warm_together)
            if "PROBE_PREFILL" in env:
                httpx.get(server.base_url + "/prefill", timeout=HTTP_TIMEOUT)
            rows.append(probe(server, "start"))
            for number in range(1, args.crowds + 1):
                _, threads = slow_crowd(
                    server.port, documents, args.readers, rate=args.rate, seconds=args.seconds
                )
                time.sleep(args.seconds / 2)
                rows.append(probe(server, f"during crowd {number}", during=True))
                for thread in threads:
                    thread.join(args.seconds + 90)
                time.sleep(args.settle)  # the server lets go of what the readers held
                rows.append(probe(server, f"after crowd {number}"))
            if args.trim:
                took = httpx.get(server.base_url + "/trim", timeout=HTTP_TIMEOUT).text
                print(f"malloc_trim(0) took {float(took) * 1000:.2f} ms")
                rows.append(probe(server, "after malloc_trim(0)"))
    shown = {
        "server": args.server,
        "env": args.env,
        "trace": args.trace,
        "cold": args.cold,
        "control": args.control,
    }
    print(json.dumps(shown))
    print(
        "| | RSS (MiB) | gc objects | pymalloc arenas | pymalloc live / free blocks (MB) |"
        " glibc main arena in use / free (MiB) | traced (MiB) | transports |"
        " transport buffers unsent / allocated (MiB) |"
        " resident: heap / 1 MiB maps / other anonymous / files (MiB) |"
        " threads' stacks / malloc arenas (MiB) | threads | heap given back |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
