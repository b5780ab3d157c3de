"""Benchmark: what HTTP caching saves on one 50,000-URL sitemap page.

In one process, on the raw data of ``bench_page.py``, through the Flask request path (a
WSGI call) and the ASGI middleware, with a source that has a fingerprint:

* **full**: a full render, page cache off, identity coding (the baseline);
* **revalidate**: a conditional GET with ``If-None-Match: <the page's ETag>``, answered
  304 without reading the source (asserted with a counter on every request);
* **cached**: a 200 from the in-process ``MemoryCache``, warmed by one request
  (asserted: the source is not read again);
* **gzip_full** / **gzip_cached**: the same two with ``Accept-Encoding: gzip``;
* the plain-Python **reference** of ``bench_page.py`` (f-strings, whole document).

Each repeat runs every contender once, in turn, after one warm-up. Reported: median
wall time of each, its ratio to the full render of the same front and to the
reference, and peak traced memory of one request of each (separate tracemalloc runs,
never timed). ``--profile`` adds a cProfile of a burst of 304 and cached requests.

Run from the repository root::

    .venv/bin/python benchmarks/bench_caching.py [--entries 50000] [--repeat 7]
        [--json results.json] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import gzip
import io
import json
import pstats
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_page import (
    EventLoopThread,
    Fetch,
    FingerprintedPosts,
    Raw,
    build_raw,
    fetch,
    fetch_asgi,
    machine,
    make_app,
    make_asgi_app,
    mib,
    ms,
    peak_memory,
    render_reference,
    timed,
)

from sitemap_core.limits import MAX_URLS_PER_SITEMAP
from sitemap_core.memory.cache import MemoryCache

#: A request of one kind to one front: ``send(sink)`` (chunks kept only if a list).
Request = Callable[[list[bytes] | None], Fetch]
#: A front's way to send a request with these headers to one of its apps.
Send = Callable[[Mapping[str, str], list[bytes] | None], Fetch]

NO_HEADERS: Mapping[str, str] = {}
GZIP = {"Accept-Encoding": "gzip"}

#: What each kind of request is, in table order.
KINDS = {
    "full": "(a) Full render, cache off (baseline)",
    "revalidate": "(b) 304 revalidation (If-None-Match)",
    "cached": "(c) Cached 200 (MemoryCache, warmed)",
    "gzip_full": "(d) gzip full render, cache off",
    "gzip_cached": "(d) gzip cached 200",
}
#: The kinds that render nothing: also timed back to back.
FAST = ("revalidate", "cached", "gzip_cached")
FRONTS = {"flask": "Flask (WSGI call)", "asgi": "ASGI middleware (sync source)"}


# The fronts: three apps each, over three sources with their own counters -------------


@dataclass
class Front:
    """One front's apps: cache off (full renders), cache off (304s), cache on."""

    name: str
    full_source: FingerprintedPosts
    revalidate_source: FingerprintedPosts
    cached_source: FingerprintedPosts
    cache: MemoryCache
    full: Send
    revalidate: Send
    cached: Send


def _send(call: Callable[[Any, list[bytes] | None, Mapping[str, str]], Fetch], app: Any) -> Send:
    return lambda headers, sink: call(app, sink, headers)


def flask_front(raw: list[Raw]) -> Front:
    """The Flask apps (``SITEMAP_CACHE=False``, or a ``MemoryCache`` for the cached one)."""
    full, revalidate, cached = (FingerprintedPosts(raw) for _ in range(3))
    cache = MemoryCache()
    return Front(
        "flask",
        full,
        revalidate,
        cached,
        cache,
        _send(fetch, make_app(full)),
        _send(fetch, make_app(revalidate)),
        _send(fetch, make_app(cached, cache=cache)),
    )


def asgi_front(raw: list[Raw], loop: EventLoopThread) -> Front:
    """The ASGI middlewares (``cache=False``, or a ``MemoryCache`` for the cached one)."""
    full, revalidate, cached = (FingerprintedPosts(raw) for _ in range(3))
    cache = MemoryCache()
    call = functools.partial(fetch_asgi, loop)
    return Front(
        "asgi",
        full,
        revalidate,
        cached,
        cache,
        _send(call, make_asgi_app(full)),
        _send(call, make_asgi_app(revalidate)),
        _send(call, make_asgi_app(cached, cache=cache)),
    )


# Checks, then the requests to time ---------------------------------------------------


def _require(condition: bool, front: Front, what: str) -> None:
    if not condition:
        raise AssertionError(f"{front.name}: {what}")


def _document(send: Send, headers: Mapping[str, str]) -> tuple[Fetch, bytes]:
    sink: list[bytes] = []
    result = send(headers, sink)
    return result, b"".join(sink)


def prepare(front: Front, reference: bytes) -> tuple[dict[str, Request], dict[str, Any]]:
    """Check each kind of request once, warm the cache, and return the timed requests.

    The returned requests re-check on every call (after the front's clocks stop)
    that the 304 source was never read and the cached source not read again.
    """
    # (a) full render: streamed (no Content-Length), identity, the reference's bytes.
    result, document = _document(front.full, NO_HEADERS)
    etag = result.header("ETag")
    _require(result.status.startswith("200"), front, f"full render {result.status}")
    _require(result.header("Content-Encoding") is None, front, "identity has Content-Encoding")
    _require(result.header("Content-Length") is None, front, "full render not streamed")
    _require(etag is not None, front, "full render without ETag")
    _require(document == reference, front, "full render differs from the reference")
    assert etag is not None
    # (d) gzip full render: its own ETag, gunzips to the same document.
    result, gzipped = _document(front.full, GZIP)
    gzip_etag = result.header("ETag")
    _require(result.header("Content-Encoding") == "gzip", front, "gzip not negotiated")
    _require(gzip.decompress(gzipped) == reference, front, "gzip body differs")
    _require(gzip_etag not in (None, etag), front, "gzip ETag equals identity ETag")
    # (b) 304: no body, and the source only fingerprinted, never read.
    if_none_match = {"If-None-Match": etag}
    result = front.revalidate(if_none_match, None)
    _require(result.status.startswith("304") and not result.size, front, "no empty 304")
    _require(result.header("ETag") == etag, front, "304 without the same ETag")
    _require(front.revalidate_source.reads == 0, front, "304 read the source")
    # A fresh app's first 304 also asks the page's range fingerprint (nothing is
    # remembered yet); from the second on, one call of fingerprint() per 304.
    _require(front.revalidate_source.fingerprints >= 1, front, "304 without fingerprint")
    before = front.revalidate_source.fingerprints
    front.revalidate(if_none_match, None)
    _require(front.revalidate_source.fingerprints == before + 1, front, "a 304's fingerprints")
    # (c) warm the cache with one identity and one gzip request: two reads, no more.
    front.cached(NO_HEADERS, None)
    front.cached(GZIP, None)
    _require(front.cached_source.reads == 2, front, "warming did not read twice")
    _require(front.cache.size == len(reference) + len(gzipped), front, "cache not filled")
    result, document = _document(front.cached, NO_HEADERS)
    _require(document == reference, front, "cached body differs")
    _require(result.header("Content-Length") == str(len(reference)), front, "no length")
    _require(result.header("ETag") == etag, front, "cached ETag differs")
    result, document = _document(front.cached, GZIP)
    _require(document == gzipped, front, "cached gzip body differs from the streamed one")
    _require(result.header("Content-Encoding") == "gzip", front, "cached gzip not gzip")
    _require(front.cached_source.reads == 2, front, "a cached 200 read the source")

    def revalidate(sink: list[bytes] | None) -> Fetch:
        result = front.revalidate(if_none_match, sink)
        _require(result.status.startswith("304"), front, f"304 answered {result.status}")
        _require(front.revalidate_source.reads == 0, front, "a 304 read the source")
        return result

    def cached(headers: Mapping[str, str]) -> Request:
        def request(sink: list[bytes] | None) -> Fetch:
            result = front.cached(headers, sink)
            _require(front.cached_source.reads == 2, front, "a cached 200 read the source")
            return result

        return request

    requests: dict[str, Request] = {
        "full": lambda sink: front.full(NO_HEADERS, sink),
        "revalidate": revalidate,
        "cached": cached(NO_HEADERS),
        "gzip_full": lambda sink: front.full(GZIP, sink),
        "gzip_cached": cached(GZIP),
    }
    checks = {
        "etag": etag,
        "gzip_etag": gzip_etag,
        "identity_bytes": len(reference),
        "gzip_bytes": len(gzipped),
    }
    return requests, checks


# Benchmark --------------------------------------------------------------------------


def run(entries: int, repeat: int, burst: int = 200) -> dict[str, Any]:
    """Run every measurement and return the results as plain data.

    Each repeat runs every contender once, in turn, after a ``gc.collect()``: an
    isolated request, which follows other work (caches cold). Then, for the kinds that
    render nothing, a burst of ``burst`` back-to-back requests (caches warm, as under a
    crawl of many 304s); its per-request median is that repeat's back-to-back figure.
    """
    raw = build_raw(entries)
    reference = render_reference(raw)
    loop = EventLoopThread()
    fronts = [flask_front(raw), asgi_front(raw, loop)]
    requests: dict[str, Request] = {}
    checks: dict[str, Any] = {}
    for front in fronts:
        prepared, checks[front.name] = prepare(front, reference)
        requests.update({f"{front.name}_{kind}": call for kind, call in prepared.items()})
    # The ETag is derived from the site and the fingerprint only: both fronts agree.
    same = checks["flask"]["etag"] == checks["asgi"]["etag"]
    checks["same_etag_in_both_fronts"] = same

    for call in requests.values():  # warm-up
        call(None)
    times: dict[str, list[float]] = {"reference": [], **{name: [] for name in requests}}
    bursts: dict[str, list[float]] = {n: [] for n in requests if n.split("_", 1)[1] in FAST}
    for _ in range(repeat):
        times["reference"].append(timed(lambda: render_reference(raw))[0])
        for name, call in requests.items():
            gc.collect()
            # The front's own clocks start at the WSGI / ASGI call, after the environ.
            times[name].append(call(None).total)
        for name in bursts:
            call = requests[name]
            gc.collect()
            bursts[name].append(statistics.median(call(None).total for _ in range(burst)))
    median = {name: statistics.median(values) for name, values in times.items()}

    reference_s = median["reference"]
    each: dict[str, dict[str, dict[str, float]]] = {}
    for front in fronts:
        full_s = median[f"{front.name}_full"]
        each[front.name] = {}
        for kind in KINDS:
            name = f"{front.name}_{kind}"
            row = each[front.name][kind] = {
                "median_s": median[name],
                "min_s": min(times[name]),
                "vs_full": median[name] / full_s,
                "vs_reference": median[name] / reference_s,
                "peak_bytes": peak_memory(functools.partial(requests[name], None)),
            }
            if name in bursts:
                warm = statistics.median(bursts[name])
                row["back_to_back_s"] = warm
                row["back_to_back_vs_full"] = warm / full_s
                row["back_to_back_vs_reference"] = warm / reference_s
    for front in fronts:  # every 304 consulted the fingerprint; none read the source
        _require(front.revalidate_source.reads == 0, front, "a 304 read the source")
        checks[front.name]["revalidate_fingerprints"] = front.revalidate_source.fingerprints
        checks[front.name]["cached_source_reads"] = front.cached_source.reads
    loop.close()
    return {
        "machine": machine(),
        "entries": entries,
        "repeat": repeat,
        "burst": burst,
        "checks": checks,
        "reference_s": reference_s,
        "reference_peak_bytes": peak_memory(lambda: render_reference(raw)),
        "results": each,
        "times_s": times,
        "back_to_back_s": bursts,
    }


async def _switch(profiler: cProfile.Profile, on: bool) -> None:
    # Run in the loop's thread, so that the profiler watches that thread.
    if on:
        profiler.enable()
    else:
        profiler.disable()


def profile(entries: int, count: int = 200, top: int = 20) -> str:
    """cProfile of ``count`` 304s and ``count`` cached 200s on each front."""
    raw = build_raw(entries)
    reference = render_reference(raw)
    loop = EventLoopThread()
    out = io.StringIO()
    for front in (flask_front(raw), asgi_front(raw, loop)):
        requests, _ = prepare(front, reference)
        for kind in ("revalidate", "cached"):
            call = requests[kind]
            call(None)
            profiler = cProfile.Profile()
            # cProfile sees one thread: the ASGI requests run in the loop's thread.
            in_loop = front.name == "asgi"
            if in_loop:
                loop.run(_switch(profiler, True))
            else:
                profiler.enable()
            for _ in range(count):
                call(None)
            if in_loop:
                loop.run(_switch(profiler, False))
            else:
                profiler.disable()
            out.write(f"\n{FRONTS[front.name]}: {count} x {KINDS[kind]}, top {top} by tottime\n")
            stats = pstats.Stats(profiler, stream=out)
            stats.sort_stats(pstats.SortKey.TIME).print_stats(top)
    loop.close()
    return out.getvalue()


# Output -----------------------------------------------------------------------------


def ratio(value: float) -> str:
    """A ratio, with its inverse when it is small (``0.0012x (1/830)``)."""
    if value >= 0.1:
        return f"{value:.2f}x"
    return f"{value:.4f}x (1/{1 / value:,.0f})"


def _time(seconds: float) -> str:
    return ms(seconds) if seconds >= 0.01 else f"{seconds * 1e6:,.0f} µs"


def table(results: dict[str, Any]) -> str:
    """The results as Markdown tables."""
    flask, asgi = results["results"]["flask"], results["results"]["asgi"]
    checks = results["checks"]
    lines = [
        f"{results['entries']:,} URLs, median of {results['repeat']} runs; reference "
        f"(plain Python, whole document) {ms(results['reference_s'])}; document "
        f"{checks['flask']['identity_bytes']:,} bytes, gzip "
        f"{checks['flask']['gzip_bytes']:,} bytes",
        "",
        "Isolated requests (one per repeat, after gc.collect() and the other contenders):",
        "",
        "| Request | Flask | vs full | vs reference | ASGI | vs full | vs reference |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for kind, label in KINDS.items():
        row = [label]
        for front in (flask, asgi):
            got = front[kind]
            row += [_time(got["median_s"]), ratio(got["vs_full"]), ratio(got["vs_reference"])]
        lines.append("| " + " | ".join(row) + " |")
    lines += [
        "",
        f"Back to back (per-request median of {results['burst']} consecutive requests, "
        "caches warm):",
        "",
        "| Request | Flask | vs full | vs reference | ASGI | vs full | vs reference |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for kind in FAST:
        row = [KINDS[kind]]
        for front in (flask, asgi):
            got = front[kind]
            row += [
                _time(got["back_to_back_s"]),
                ratio(got["back_to_back_vs_full"]),
                ratio(got["back_to_back_vs_reference"]),
            ]
        lines.append("| " + " | ".join(row) + " |")
    lines += [
        "",
        "| Peak memory of one request (tracemalloc) | Flask | ASGI |",
        "|---|---:|---:|",
        *(
            f"| {label} | {mib(flask[kind]['peak_bytes'])} | {mib(asgi[kind]['peak_bytes'])} |"
            for kind, label in KINDS.items()
        ),
        f"| Reference (whole document in memory) | {mib(results['reference_peak_bytes'])} | |",
        "",
        f"Checks: the 304 sources were never read (fingerprint called "
        f"{checks['flask']['revalidate_fingerprints']} / "
        f"{checks['asgi']['revalidate_fingerprints']} times); the cached sources were read "
        f"only to warm the cache ({checks['flask']['cached_source_reads']} / "
        f"{checks['asgi']['cached_source_reads']} reads: identity + gzip); same ETag in "
        f"both fronts: {checks['same_etag_in_both_fronts']}.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run, print the table, write JSON if asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--entries", type=int, default=MAX_URLS_PER_SITEMAP, help="URLs (1-50000)")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs of each (>= 1)")
    parser.add_argument(
        "--burst", type=int, default=200, help="back-to-back requests per repeat (>= 1)"
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write results here")
    parser.add_argument(
        "--profile", action="store_true", help="print a cProfile of 304 and cached requests"
    )
    args = parser.parse_args(argv)
    if not 1 <= args.entries <= MAX_URLS_PER_SITEMAP:
        parser.error(f"--entries must be between 1 and {MAX_URLS_PER_SITEMAP} (one page)")
    if args.repeat < 1 or args.burst < 1:
        parser.error("--repeat and --burst must be at least 1")

    started = time.perf_counter()
    results = run(args.entries, args.repeat, args.burst)
    info = results["machine"]
    print(
        f"Machine: {info['processor']}, {info['cpu_count']} CPUs, "
        f"{info['implementation']} {info['python']}, {info['platform']}; "
        f"library {info['library']}"
    )
    print()
    print(table(results))
    if args.profile:
        text = profile(args.entries)
        results["profile"] = text
        print(text)
    print(f"\n(took {time.perf_counter() - started:.0f} s)")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
        print(f"Results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
