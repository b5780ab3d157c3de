"""Benchmark: one 50,000-URL sitemap page served by the Flask extension.

Compares, in one process and on the same raw data,

* a **reference**: plain Python (f-strings, ``"".join``, chained ``str.replace``,
  ``datetime.isoformat``, ``.encode()``) that renders the whole ``<urlset>`` at once;
* the **library**: a Flask app with ``Sitemapper`` whose source builds a validated
  ``Entry`` per URL on every request, fetched by calling the WSGI app directly and
  draining the streamed body.

Each repeat runs every contender once, in turn, after one warm-up. Reported: median
wall time of each and the ratio library / reference (plus the ratio of the fastest runs
and of median CPU times, which show how much a busy machine moved it), peak traced
memory of each (separate tracemalloc runs, never timed), the library's time to first
byte, its chunk count and mean chunk size, and the library's stages timed in isolation.
``--profile`` adds a cProfile of one library request (top 25 by tottime) and the share
of the profiled time spent in each stage.

Run from the repository root::

    .venv/bin/python benchmarks/bench_page.py [--entries 50000] [--repeat 7]
        [--json results.json] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import json
import os
import platform
import pstats
import statistics
import sys
import time
import tracemalloc
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, MutableMapping
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flask import Flask
from werkzeug.test import EnvironBuilder

import asgi_sitemap
from flask_sitemapper import Sitemapper
from sitemap_core import (
    BaseURL,
    Entry,
    Site,
    UrlsetEncoder,
    UrlSource,
    normalise_lastmod,
    normalise_url,
    respond,
)
from sitemap_core.aio import AsyncUrlSource
from sitemap_core.limits import MAX_URLS_PER_SITEMAP
from sitemap_core.render import encode_all

BASE_URL = "https://example.com"
PAGE_PATH = "/sitemap-posts-1.xml"
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
CHANGEFREQS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
#: A non-UTC offset with minutes, so ``isoformat`` writes ``+05:30``.
TZ = timezone(timedelta(hours=5, minutes=30))

#: One URL's raw data: location, aware lastmod, changefreq word, priority.
Raw = tuple[str, datetime, str, float]


# Raw data --------------------------------------------------------------------------


def build_raw(n: int) -> list[Raw]:
    """Return ``n`` raw URL tuples, built once and shared by both contenders."""
    start = datetime(2024, 5, 1, 12, 0, 0, tzinfo=TZ)
    return [
        (
            f"https://example.com/posts/{i}?ref=feed&x={i % 7}",
            start + timedelta(seconds=37 * i),
            CHANGEFREQS[(i // 3) % 7],
            (i % 11) / 10,
        )
        for i in range(n)
    ]


# Reference: plain Python, no library code -------------------------------------------


def xml_escape(text: str) -> str:
    """Escape the five XML special characters with chained ``str.replace``."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def render_reference(raw: list[Raw]) -> bytes:
    """Render the whole ``<urlset>`` in memory and return it encoded."""
    head = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}">\n'
    body = "".join(
        [
            f"<url><loc>{xml_escape(loc)}</loc><lastmod>{lastmod.isoformat()}</lastmod>"
            f"<changefreq>{changefreq}</changefreq><priority>{priority}</priority></url>\n"
            for loc, lastmod, changefreq, priority in raw
        ]
    )
    return (head + body + "</urlset>\n").encode()


# Library: Flask app, Sitemapper, WSGI call -------------------------------------------


def make_app(raw: list[Raw], *, with_count: bool = True) -> Flask:
    """A Flask app whose one source validates every raw tuple into an Entry per request.

    ``with_count`` passes ``count=len(raw)``, the documented way to make counting a
    callable source cheap; without it the library walks the source once to count it
    and again to serve the page, so every entry is validated twice.
    """
    app = Flask("bench_page")
    app.config["SITEMAP_BASE_URL"] = BASE_URL
    app.config["SITEMAP_PAGE_SIZE"] = MAX_URLS_PER_SITEMAP
    sitemapper = Sitemapper(app)

    def posts() -> Iterator[Entry]:
        return _entries(raw)

    def count() -> int:
        return len(raw)

    sitemapper.add_source("posts", posts, count=count if with_count else None)
    return app


def _entries(raw: list[Raw]) -> Iterator[Entry]:
    """What a user's source does: one validated Entry per row, built lazily."""
    for loc, lastmod, changefreq, priority in raw:
        yield Entry(loc, lastmod=lastmod, changefreq=changefreq, priority=priority)


def make_environ() -> dict[str, Any]:
    """A fresh WSGI environ for ``GET https://example.com/sitemap-posts-1.xml``."""
    environ: dict[str, Any] = EnvironBuilder(path=PAGE_PATH, base_url=BASE_URL).get_environ()
    return environ


@dataclass
class Fetch:
    """One library request: timings (seconds) and what the body iterator gave."""

    total: float
    first_byte: float
    cpu: float
    chunks: int
    size: int
    status: str


def fetch(app: Flask, sink: list[bytes] | None = None) -> Fetch:
    """Call the WSGI app directly and drain its body; keep chunks only if ``sink``."""
    environ = make_environ()
    statuses: list[str] = []

    def start_response(
        status: str, headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Callable[[bytes], object]:
        statuses.append(status)
        return lambda data: None

    chunks = size = 0
    cpu_started = time.process_time()
    started = time.perf_counter()
    body: Iterable[bytes] = app(environ, start_response)
    first_byte = 0.0
    try:
        for chunk in body:
            if not chunk:
                continue
            if not chunks:
                first_byte = time.perf_counter() - started
            chunks += 1
            size += len(chunk)
            if sink is not None:
                sink.append(chunk)
    finally:
        close = getattr(body, "close", None)
        if close is not None:
            close()
    total = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    return Fetch(total, first_byte, cpu, chunks, size, statuses[0] if statuses else "")


# Library: the same page through the ASGI middleware ---------------------------------


async def _not_found(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 404, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def make_asgi_app(raw: list[Raw], *, async_source: bool) -> asgi_sitemap.SitemapMiddleware:
    """``asgi_sitemap.SitemapMiddleware`` with the same source, sync or async.

    A sync source is pulled in a worker thread in batches; an async generator runs on
    the event loop. Both pass ``count=``, as the Flask app does.
    """

    async def posts_async() -> AsyncIterator[Entry]:
        for entry in _entries(raw):
            yield entry

    def posts_sync() -> Iterator[Entry]:
        return _entries(raw)

    source = AsyncUrlSource.from_object(
        "posts", posts_async if async_source else posts_sync, count=lambda: len(raw)
    )
    return asgi_sitemap.SitemapMiddleware(
        _not_found, [source], base_url=BASE_URL, page_size=MAX_URLS_PER_SITEMAP
    )


def fetch_asgi(
    loop: asyncio.Runner, app: asgi_sitemap.SitemapMiddleware, sink: list[bytes] | None = None
) -> Fetch:
    """Call the ASGI app on ``loop`` and collect its body messages."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "https",
        "path": PAGE_PATH,
        "raw_path": PAGE_PATH.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"example.com")],
        "server": ("example.com", 443),
    }
    record = Fetch(0.0, 0.0, 0.0, 0, 0, "")

    async def receive() -> MutableMapping[str, Any]:
        await asyncio.Event().wait()  # no request body, and the client stays
        raise AssertionError("unreachable")

    async def call() -> None:
        started = time.perf_counter()
        cpu_started = time.process_time()

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                record.status = str(message["status"])
            elif message.get("body"):
                if not record.chunks:
                    record.first_byte = time.perf_counter() - started
                record.chunks += 1
                record.size += len(message["body"])
                if sink is not None:
                    sink.append(message["body"])

        await app(scope, receive, send)
        record.total = time.perf_counter() - started
        record.cpu = time.process_time() - cpu_started

    loop.run(call())
    return record


# Measurement helpers ----------------------------------------------------------------


def timed(func: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of one call of ``func`` (after a collection, gc enabled)."""
    gc.collect()
    cpu_started = time.process_time()
    started = time.perf_counter()
    func()
    return time.perf_counter() - started, time.process_time() - cpu_started


def peak_memory(func: Callable[[], object]) -> int:
    """Peak bytes allocated by one call of ``func``, measured with tracemalloc."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        func()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - base


def url_count(document: bytes) -> int:
    """Parse ``document`` with ElementTree and count its ``<url>`` elements."""
    root = ET.fromstring(document)
    if root.tag != f"{{{SITEMAP_NS}}}urlset":
        raise AssertionError(f"root element is {root.tag}, not urlset")
    return len(root.findall(f"{{{SITEMAP_NS}}}url"))


# Benchmark --------------------------------------------------------------------------


def verify(raw: list[Raw], app: Flask) -> dict[str, Any]:
    """Check both documents parse and hold the same URLs; fail loudly otherwise."""
    reference = render_reference(raw)
    sink: list[bytes] = []
    result = fetch(app, sink)
    library = b"".join(sink)
    if not result.status.startswith("200"):
        raise AssertionError(f"library answered {result.status!r}")
    urls_reference, urls_library = url_count(reference), url_count(library)
    if urls_reference != urls_library or urls_library != len(raw):
        raise AssertionError(
            f"<url> counts differ: reference {urls_reference}, library {urls_library}, "
            f"raw {len(raw)}"
        )
    return {
        "urls": urls_library,
        "reference_bytes": len(reference),
        "library_bytes": len(library),
        "byte_identical": reference == library,
    }


def stages(raw: list[Raw]) -> dict[str, Callable[[], object]]:
    """The library's stages as separate callables, to time in isolation (no Flask)."""
    entries = [Entry(loc, lastmod=lm, changefreq=cf, priority=p) for loc, lm, cf, p in raw]
    locs = [row[0] for row in raw]
    lastmods = [row[1] for row in raw]

    def build_entries() -> None:
        for loc, lastmod, changefreq, priority in raw:
            Entry(loc, lastmod=lastmod, changefreq=changefreq, priority=priority)

    def urls() -> None:
        for loc in locs:
            normalise_url(loc)

    def dates() -> None:
        for lastmod in lastmods:
            normalise_lastmod(lastmod)

    def render() -> None:
        encode_all(UrlsetEncoder(), entries)

    site = Site([UrlSource.from_object("posts", lambda: _entries(raw), count=lambda: len(raw))])
    base = BaseURL.parse(BASE_URL)

    def core() -> None:
        reply = respond(site, "GET", PAGE_PATH, lambda: base)
        if reply is None or not isinstance(reply.body, Iterable):
            raise AssertionError("the core did not serve the page")
        for _ in reply.body:
            pass

    return {
        "entry_construction": build_entries,
        "normalise_url": urls,
        "normalise_lastmod": dates,
        "render_encode": render,
        "core_without_flask": core,
    }


#: Profile categories: (label, file suffix, function name), measured by cumulative time.
_CUMULATIVE = (
    ("Entry construction (all of Entry.__init__)", "sitemap_core/entries.py", "__init__"),
    ("  normalise_url", "sitemap_core/entries.py", "normalise_url"),
    ("  normalise_lastmod", "sitemap_core/entries.py", "normalise_lastmod"),
    ("  changefreq", "sitemap_core/entries.py", "_normalise_changefreq"),
    ("  priority", "sitemap_core/entries.py", "_normalise_priority"),
    ("render + encode (DocumentEncoder.feed)", "sitemap_core/render.py", "feed"),
    ("url_for", "flask/helpers.py", "url_for"),
)
#: Self time of every function whose file path contains one of these fragments.
_PACKAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("source generator of this benchmark (self time)", ("/benchmarks/",)),
    ("sources.py + site.py plumbing (self time)", ("core/sources.py", "core/site.py")),
    ("werkzeug (self time)", ("/werkzeug/",)),
    ("flask (self time)", ("/flask/",)),
    ("flask_sitemapper (self time)", ("/flask_sitemapper/",)),
)


def profile(app: Flask, top: int = 25) -> tuple[str, dict[str, float]]:
    """cProfile of one library request.

    Returns the ``top`` functions by tottime as text, and the share (percent of the
    profiled total) of the stages in :data:`_CUMULATIVE` and :data:`_PACKAGES`.
    """
    fetch(app)  # warm-up: Flask's lazy set-up is not what we profile
    profiler = cProfile.Profile()
    profiler.enable()
    fetch(app)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats(pstats.SortKey.TIME).print_stats(top)
    table: dict[tuple[str, int, str], tuple[int, int, float, float, Any]]
    table = stats.stats  # type: ignore[attr-defined]
    total = sum(row[2] for row in table.values())
    shares: dict[str, float] = {}
    for label, suffix, name in _CUMULATIVE:
        cumulative = sum(
            row[3]
            for (path, _, func), row in table.items()
            if func == name and path.replace(os.sep, "/").endswith(suffix)
        )
        shares[label] = 100 * cumulative / total
    for label, fragments in _PACKAGES:
        own = sum(
            row[2]
            for (path, _, _), row in table.items()
            if any(fragment in path.replace(os.sep, "/") for fragment in fragments)
        )
        shares[label] = 100 * own / total
    shares["profiled total (s)"] = total
    return out.getvalue(), shares


def run(entries: int, repeat: int, *, with_breakdown: bool = True) -> dict[str, Any]:
    """Run every measurement and return the results as plain data.

    Each repeat runs every contender once, in turn, so that drift in the machine's
    speed (other processes, frequency scaling) hits all of them alike.
    """
    raw = build_raw(entries)
    app = make_app(raw)
    app_no_count = make_app(raw, with_count=False)
    checks = verify(raw, app)

    def reference() -> bytes:
        return render_reference(raw)

    fetches: list[Fetch] = []

    def library() -> object:
        fetches.append(fetch(app))
        return None

    loop = asyncio.Runner()
    asgi_sync = make_asgi_app(raw, async_source=False)
    asgi_async = make_asgi_app(raw, async_source=True)
    asgi_fetches: dict[str, list[Fetch]] = {"asgi_sync": [], "asgi_async": []}
    sink: list[bytes] = []
    fetch_asgi(loop, asgi_sync, sink)
    checks["asgi_byte_identical"] = b"".join(sink) == render_reference(raw)

    contenders: dict[str, Callable[[], object]] = {
        "reference": reference,
        "library": library,
        "library_no_count": lambda: fetch(app_no_count),
        "asgi_sync": lambda: asgi_fetches["asgi_sync"].append(fetch_asgi(loop, asgi_sync)),
        "asgi_async": lambda: asgi_fetches["asgi_async"].append(fetch_asgi(loop, asgi_async)),
    }
    if with_breakdown:
        contenders.update(stages(raw))
    for func in contenders.values():  # warm-up: lazy set-up, caches
        func()
    fetches.clear()
    for done in asgi_fetches.values():
        done.clear()
    times: dict[str, list[float]] = {name: [] for name in contenders}
    cpu_times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, func in contenders.items():
            wall, cpu = timed(func)
            times[name].append(wall)
            cpu_times[name].append(cpu)
    # The library's own clocks start at the WSGI call, not before building the environ.
    times["library"] = [f.total for f in fetches]
    cpu_times["library"] = [f.cpu for f in fetches]
    for name, done in asgi_fetches.items():
        times[name] = [f.total for f in done]
    median = {name: statistics.median(values) for name, values in times.items()}
    cpu_median = {name: statistics.median(values) for name, values in cpu_times.items()}

    reference_s, library_s = median["reference"], median["library"]
    first_byte_s = statistics.median(f.first_byte for f in fetches)
    last = fetches[-1]
    results: dict[str, Any] = {
        "machine": machine(),
        "entries": entries,
        "repeat": repeat,
        "checks": checks,
        "reference_s": reference_s,
        "library_s": library_s,
        "ratio": library_s / reference_s,
        "ratio_of_minimums": min(times["library"]) / min(times["reference"]),
        "reference_cpu_s": cpu_median["reference"],
        "library_cpu_s": cpu_median["library"],
        "ratio_cpu": cpu_median["library"] / cpu_median["reference"],
        "library_no_count_s": median["library_no_count"],
        "asgi_sync_s": median["asgi_sync"],
        "ratio_asgi_sync": median["asgi_sync"] / reference_s,
        "asgi_async_s": median["asgi_async"],
        "ratio_asgi_async": median["asgi_async"] / reference_s,
        "asgi_first_byte_pct": 100
        * statistics.median(f.first_byte for f in asgi_fetches["asgi_sync"])
        / median["asgi_sync"],
        "asgi_peak_bytes": peak_memory(lambda: fetch_asgi(loop, asgi_sync)),
        "ratio_no_count": median["library_no_count"] / reference_s,
        "first_byte_s": first_byte_s,
        "first_byte_pct": 100 * first_byte_s / library_s,
        "chunks": last.chunks,
        "mean_chunk_bytes": last.size / last.chunks,
        "reference_peak_bytes": peak_memory(reference),
        "library_peak_bytes": peak_memory(lambda: fetch(app)),
        "times_s": times,
        "cpu_times_s": cpu_times,
        "last_fetch": asdict(last),
    }
    if with_breakdown:
        skipped = ("reference", "library", "library_no_count", "asgi_sync", "asgi_async")
        names = [name for name in contenders if name not in skipped]
        results["breakdown_s"] = {name: median[name] for name in names}
        results["breakdown_pct"] = {name: 100 * median[name] / library_s for name in names}
    return results


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "cpu_count": os.cpu_count(),
    }


# Output -----------------------------------------------------------------------------


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def _mib(size: float) -> str:
    return f"{size / 2**20:,.2f} MiB"


def table(results: dict[str, Any]) -> str:
    """The results as a Markdown table (plus the breakdown when present)."""
    checks = results["checks"]
    rows = [
        ("Reference (plain Python, whole document)", _ms(results["reference_s"]), "1.00x"),
        (
            "Library (Flask + Sitemapper, WSGI, streamed)",
            _ms(results["library_s"]),
            f"{results['ratio']:.2f}x",
        ),
        (
            "Library, source without count= (walked twice)",
            _ms(results["library_no_count_s"]),
            f"{results['ratio_no_count']:.2f}x",
        ),
        (
            "Library (ASGI middleware, sync source in a thread)",
            _ms(results["asgi_sync_s"]),
            f"{results['ratio_asgi_sync']:.2f}x",
        ),
        (
            "Library (ASGI middleware, async generator source)",
            _ms(results["asgi_async_s"]),
            f"{results['ratio_asgi_async']:.2f}x",
        ),
    ]
    lines = [
        f"{results['entries']:,} URLs, median of {results['repeat']} runs "
        f"(document {checks['library_bytes']:,} bytes, "
        f"byte-identical to the reference: {checks['byte_identical']})",
        "",
        "| Measure | Time | vs reference |",
        "|---|---:|---:|",
        *(f"| {name} | {time_} | {ratio} |" for name, time_, ratio in rows),
        "",
        "| Measure | Value |",
        "|---|---:|",
        f"| Ratio of the fastest runs (library min / reference min) | "
        f"{results['ratio_of_minimums']:.2f}x |",
        f"| Ratio of median CPU times (process_time; {_ms(results['library_cpu_s'])} / "
        f"{_ms(results['reference_cpu_s'])}) | {results['ratio_cpu']:.2f}x |",
        f"| Library time to first byte | {_ms(results['first_byte_s'])} "
        f"({results['first_byte_pct']:.1f}% of full time) |",
        f"| Library chunks / mean chunk size | {results['chunks']} / "
        f"{results['mean_chunk_bytes']:,.0f} bytes |",
        f"| Peak memory, reference (tracemalloc) | {_mib(results['reference_peak_bytes'])} |",
        f"| Peak memory, library (tracemalloc) | {_mib(results['library_peak_bytes'])} |",
        f"| Peak memory, ASGI sync source (tracemalloc) | {_mib(results['asgi_peak_bytes'])} |",
        f"| ASGI time to first byte (sync source) | {results['asgi_first_byte_pct']:.1f}% |",
    ]
    if "breakdown_s" in results:
        lines += [
            "",
            "Library stages timed in isolation (no Flask, no profiler), share of the full time:",
            "",
            f"| Stage ({results['entries']:,} calls) | Time | % of library |",
            "|---|---:|---:|",
        ]
        for name, seconds in results["breakdown_s"].items():
            pct = results["breakdown_pct"][name]
            lines.append(f"| {name} | {_ms(seconds)} | {pct:.0f}% |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run, print the table, write JSON if asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--entries", type=int, default=MAX_URLS_PER_SITEMAP, help="URLs (1-50000)")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs of each (>= 1)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write results here")
    parser.add_argument(
        "--profile", action="store_true", help="print a cProfile of one library request"
    )
    parser.add_argument(
        "--no-breakdown", action="store_true", help="skip the isolated stage timings"
    )
    args = parser.parse_args(argv)
    if not 1 <= args.entries <= MAX_URLS_PER_SITEMAP:
        parser.error(f"--entries must be between 1 and {MAX_URLS_PER_SITEMAP} (one page)")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    results = run(args.entries, args.repeat, with_breakdown=not args.no_breakdown)
    info = results["machine"]
    print(
        f"Machine: {info['processor']}, {info['cpu_count']} CPUs, "
        f"{info['implementation']} {info['python']}, {info['platform']}"
    )
    print()
    print(table(results))
    if args.profile:
        text, shares = profile(make_app(build_raw(args.entries)))
        results["profile_top25"] = text
        results["profile_shares_pct"] = shares
        print()
        print("cProfile of one library request (top 25 by tottime):")
        print(text)
        print("Share of the profiled time (cumulative unless marked self time):")
        for label, share in shares.items():
            unit = " s" if label.endswith("(s)") else "%"
            print(f"  {label:<50} {share:6.2f}{unit}")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\nResults written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
