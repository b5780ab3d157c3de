"""Benchmark: one 50,000-URL sitemap page served by the Flask extension and ASGI.

Compares, in one process and on the same raw data,

* a **reference**: plain Python (f-strings, ``"".join``, chained ``str.replace``,
  ``datetime.isoformat``, ``.encode()``) that renders the whole ``<urlset>`` at once;
* the **library**'s full-render streaming path: a Flask app with ``Sitemapper`` (and
  the ASGI middleware) whose source has a ``fingerprint``, with the page cache off and
  no Accept-Encoding (identity), fetched by calling the WSGI / ASGI app directly and
  draining the body. Two kinds of source, both validated on every request: one
  yielding the raw **tuple rows** as they are (as a database cursor gives them; the
  library validates and writes each row in one pass), the main contender, and one
  building a validated ``Entry`` per URL;
* the same without ``count=`` (the source walked twice), and a source **without a
  fingerprint**, which the library renders into a spool before the first byte to
  learn its ETag;
* the same Flask sources with each lastmod given as **text**, as a database column
  gives it (``str(datetime)``: ``2024-05-01 12:00:00+05:30``), which the library
  writes as the datetime's own text: the same document, the same reference;
* a page of 50,000 posts with **one image each** (``Entry(..., images=[url])``),
  against its own plain reference writing the same bytes.

Each repeat runs every contender once, in turn, after one warm-up. Reported: median
wall time of each and its ratio to the reference (plus, for the two Flask streamed
paths, the ratio of the fastest runs and of median CPU times, which show how much a busy
machine moved it), each library contender's time to first byte and peak traced
memory (separate tracemalloc runs, never timed), and the library's stages timed in
isolation. Every library answer is checked first: 200, no Content-Encoding, an ETag,
no Content-Length when streamed (one when spooled), the reference's bytes.
``--profile`` adds a cProfile of one library request (top 25 by tottime) and the
share of the profiled time spent in each stage.

Run from the repository root::

    .venv/bin/python benchmarks/bench_page.py [--entries 50000] [--repeat 7]
        [--json results.json] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import functools
import gc
import io
import json
import os
import platform
import pstats
import statistics
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
)
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flask import Flask
from measure import peak_memory
from reference import SITEMAP_NS, Raw, build_raw, render_reference, xml_escape
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
from sitemap_core.limits import MAX_URLS_PER_SITEMAP
from sitemap_core.memory.cache import PageCache
from sitemap_core.model.namespaces import IMAGE_NS
from sitemap_core.model.rows import RowBatch
from sitemap_core.serve.site import BATCH_SIZE
from sitemap_core.sources.aio import AsyncUrlSource
from sitemap_core.write.encoders import encode_all

BASE_URL = "https://example.com"
PAGE_PATH = "/sitemap-posts-1.xml"

T = TypeVar("T")

#: The library's packages (for the version note of the results).
LIBRARY_DIRS = ("sitemap_core", "flask_sitemapper", "asgi_sitemap")

# Raw data --------------------------------------------------------------------------


def as_database_text(raw: list[Raw]) -> list[tuple[str, str, str, float]]:
    """The raw tuples with each lastmod as a database gives it as text (``str()``)."""
    return [(loc, str(lastmod), changefreq, priority) for loc, lastmod, changefreq, priority in raw]


def build_images(n: int) -> list[str]:
    """One image URL per post (with an ``&`` to escape), built once."""
    return [f"https://cdn.example.com/img/{i}.jpg?w=800&h=600" for i in range(n)]


# Reference: plain Python, no library code -------------------------------------------


def render_image_reference(raw: list[Raw], images: list[str]) -> bytes:
    """The ``<urlset>`` of posts with one image each, the image namespace on the root."""
    head = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="{SITEMAP_NS}" xmlns:image="{IMAGE_NS}">\n'
    )
    body = "".join(
        [
            f"<url><loc>{xml_escape(loc)}</loc><lastmod>{lastmod.isoformat()}</lastmod>"
            f"<changefreq>{changefreq}</changefreq><priority>{priority}</priority>"
            f"<image:image><image:loc>{xml_escape(image)}</image:loc></image:image></url>\n"
            for (loc, lastmod, changefreq, priority), image in zip(raw, images, strict=True)
        ]
    )
    return (head + body + "</urlset>\n").encode()


# Library: the source, a Flask app with Sitemapper, the WSGI call --------------------


def iter_rows(raw: list[Raw]) -> Iterator[Raw]:
    """What a row source gives: the rows as they are, as a database cursor's iterator.

    Every field is still validated and normalised by the library, as ``Entry`` would.
    """
    return iter(raw)


def iter_entries(raw: list[Raw]) -> Iterator[Entry]:
    """What a user's source does: one validated Entry per row, built lazily."""
    for loc, lastmod, changefreq, priority in raw:
        yield Entry(loc, lastmod=lastmod, changefreq=changefreq, priority=priority)


class Posts:
    """The benchmark's source: a callable returning a generator of validated entries.

    It has no ``fingerprint``, so the library renders a page into a spool before the
    first byte to learn its ETag. ``reads`` counts the calls, i.e. how many times the
    library started reading the rows (a cached page or a 304 must leave it alone).
    """

    def __init__(self, raw: list[Raw]) -> None:
        self.raw = raw
        self.reads = 0

    def __call__(self) -> Iterator[Entry]:
        self.reads += 1
        return iter_entries(self.raw)

    def count(self) -> int:
        """What ``count=`` is given: cheap, as a ``COUNT(*)`` would be."""
        return len(self.raw)


class FingerprintedPosts(Posts):
    """The same source with a cheap ``fingerprint()``, so pages stream and can be cached.

    Flask's ``add_source`` takes no ``fingerprint=``; the core uses a ``fingerprint``
    method of the source object (as on the Flask example's sliceable ``PostPages``).
    ``fingerprints`` counts its calls.
    """

    def __init__(self, raw: list[Raw], version: str = "v1") -> None:
        super().__init__(raw)
        self.version = version
        self.fingerprints = 0

    def fingerprint(self) -> str:
        """Constant while the data is, as ``MAX(updated_at), COUNT(*)`` would be."""
        self.fingerprints += 1
        return self.version


class RowPosts(FingerprintedPosts):
    """The fingerprinted source, giving tuple rows instead of entries."""

    def __call__(self) -> Iterator[Raw]:  # type: ignore[override]
        self.reads += 1
        return iter_rows(self.raw)


class ImagePosts(FingerprintedPosts):
    """The fingerprinted source, each post with its one image: ``images=[url]``."""

    def __init__(self, raw: list[Raw], images: list[str]) -> None:
        super().__init__(raw)
        self.images = images

    def __call__(self) -> Iterator[Entry]:
        self.reads += 1
        return self._entries()

    def _entries(self) -> Iterator[Entry]:
        for (loc, lastmod, changefreq, priority), image in zip(self.raw, self.images, strict=True):
            yield Entry(
                loc, lastmod=lastmod, changefreq=changefreq, priority=priority, images=[image]
            )


def make_app(source: Posts, *, with_count: bool = True, cache: PageCache | bool = False) -> Flask:
    """A Flask app serving ``source``, which validates every raw row on every request.

    ``with_count`` passes ``count=``, the documented way to make counting a callable
    source cheap; without it the library walks the source once to count it and again
    to serve the page, so every entry is validated twice. ``cache`` is
    ``SITEMAP_CACHE``: False (the default here) so that every request renders;
    gzip stays on, so a request without Accept-Encoding gets identity.
    """
    app = Flask("bench_page")
    app.config["SITEMAP_BASE_URL"] = BASE_URL
    app.config["SITEMAP_PAGE_SIZE"] = MAX_URLS_PER_SITEMAP
    app.config["SITEMAP_CACHE"] = cache
    sitemapper = Sitemapper(app)
    sitemapper.add_source("posts", source, count=source.count if with_count else None)
    return app


def make_environ(headers: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A fresh WSGI environ for ``GET https://example.com/sitemap-posts-1.xml``."""
    builder = EnvironBuilder(
        path=PAGE_PATH, base_url=BASE_URL, headers=list((headers or {}).items())
    )
    environ: dict[str, Any] = builder.get_environ()
    return environ


@dataclass
class Fetch:
    """One library request: timings (seconds), what the body gave, response headers."""

    total: float
    first_byte: float
    cpu: float
    chunks: int
    size: int
    status: str
    headers: list[tuple[str, str]] = field(default_factory=list)

    def header(self, name: str) -> str | None:
        """The response header ``name`` (any case), or None."""
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)


def fetch(
    app: Flask, sink: list[bytes] | None = None, headers: Mapping[str, str] | None = None
) -> Fetch:
    """Call the WSGI app directly and drain its body; keep chunks only if ``sink``.

    ``headers`` are request headers (none by default: identity coding, no validators).
    The clocks start at the WSGI call, after the environ is built.
    """
    environ = make_environ(headers)
    record = Fetch(0.0, 0.0, 0.0, 0, 0, "")

    def start_response(
        status: str, headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Callable[[bytes], object]:
        record.status, record.headers = status, list(headers)
        return lambda data: None

    cpu_started = time.process_time()
    started = time.perf_counter()
    body: Iterable[bytes] = app(environ, start_response)
    try:
        for chunk in body:
            if not chunk:
                continue
            if not record.chunks:
                record.first_byte = time.perf_counter() - started
            record.chunks += 1
            record.size += len(chunk)
            if sink is not None:
                sink.append(chunk)
    finally:
        close = getattr(body, "close", None)
        if close is not None:
            close()
    record.total = time.perf_counter() - started
    record.cpu = time.process_time() - cpu_started
    return record


# Library: the same page through the ASGI middleware ---------------------------------


async def _not_found(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 404, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def make_asgi_app(
    source: Posts, *, async_source: bool = False, cache: PageCache | Literal[False] = False
) -> asgi_sitemap.SitemapMiddleware:
    """``asgi_sitemap.SitemapMiddleware`` serving ``source``, sync or async.

    A sync source (``source`` itself) is pulled in a worker thread in batches, and its
    ``fingerprint`` runs in a thread too, as a database query would. An async
    generator over the same items (entries or rows, as ``source`` gives them) runs on
    the event loop, with an async fingerprint.
    Both pass ``count=``, as the Flask app does; ``cache`` is the middleware's
    ``cache=`` (False here unless given).
    """
    if not async_source:
        adapted = AsyncUrlSource.from_object("posts", source, count=source.count)
    else:
        items = source.__call__

        async def posts_async() -> AsyncIterator[Entry | Raw]:
            # What an async driver's cursor gives: the same items, one at a time.
            for item in items():
                yield item

        fingerprint: Callable[[], Awaitable[str]] | None = None
        if isinstance(source, FingerprintedPosts):
            fingerprinted = source

            async def fingerprint() -> str:
                return fingerprinted.fingerprint()

        adapted = AsyncUrlSource.from_object(
            "posts", posts_async, count=source.count, fingerprint=fingerprint
        )
    return asgi_sitemap.SitemapMiddleware(
        _not_found, [adapted], base_url=BASE_URL, page_size=MAX_URLS_PER_SITEMAP, cache=cache
    )


class EventLoopThread:
    """An event loop in its own thread around one long-lived root task, as in a server.

    anyio stops its worker threads when the root task ends. Under ``asyncio.run`` or
    ``asyncio.Runner.run`` that task is each call's, so every request would start a
    new thread; under uvicorn the root task lives as long as the server and idle
    workers are reused. Requests here are tasks beside a root task that lives until
    :meth:`close`, so the thread pool behaves as under a server.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        ready = threading.Event()
        self._thread = threading.Thread(target=self._main, args=(ready,), daemon=True)
        self._thread.start()
        ready.wait()

    def _main(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)

        async def root() -> None:
            self._stop = asyncio.Event()
            ready.set()
            await self._stop.wait()

        self.loop.run_until_complete(root())

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` as a task on the loop; block until it is done."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def close(self) -> None:
        """End the root task (and so the worker threads), then the loop."""
        stop = self._stop
        if stop is not None:
            self.loop.call_soon_threadsafe(stop.set)
        self._thread.join()
        self.loop.close()


def fetch_asgi(
    loop: EventLoopThread,
    app: asgi_sitemap.SitemapMiddleware,
    sink: list[bytes] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Fetch:
    """Call the ASGI app on ``loop`` (a task there) and collect its body messages.

    ``headers`` are request headers besides ``Host``; the clocks start at the call.
    """
    raw_headers = [(b"host", b"example.com")]
    raw_headers += [
        (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()
    ]
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
        "headers": raw_headers,
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
                record.headers = [
                    (bytes(k).decode("latin-1"), bytes(v).decode("latin-1"))
                    for k, v in message["headers"]
                ]
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


def url_count(document: bytes) -> int:
    """Parse ``document`` with ElementTree and count its ``<url>`` elements."""
    root = ET.fromstring(document)
    if root.tag != f"{{{SITEMAP_NS}}}urlset":
        raise AssertionError(f"root element is {root.tag}, not urlset")
    return len(root.findall(f"{{{SITEMAP_NS}}}url"))


# Benchmark --------------------------------------------------------------------------


#: The library's contenders: name -> label. Names with "spooled" have no fingerprint.
LIBRARY = {
    "rows": "Flask, tuple rows, fingerprinted, cache off (streamed)",
    "asgi_rows_sync": "ASGI, tuple rows, sync source in a thread (streamed)",
    "asgi_rows_async": "ASGI, tuple rows, async generator (streamed)",
    "library": "Flask, Entry per URL, fingerprinted, cache off (streamed)",
    "library_no_count": "Flask, the same without count= (walked twice)",
    "library_spooled": "Flask, source without fingerprint (spooled)",
    "asgi_sync": "ASGI, Entry per URL, sync source in a thread (streamed)",
    "asgi_async": "ASGI, Entry per URL, async generator (streamed)",
    "asgi_spooled": "ASGI, sync source without fingerprint (spooled)",
    "rows_text": "Flask, tuple rows, lastmod as database text (streamed)",
    "library_text": "Flask, Entry per URL, lastmod as database text (streamed)",
    "library_images": "Flask, Entry per URL with one image (own reference)",
}
#: Contenders measured against a reference of their own: name -> reference's name.
OWN_REFERENCE = {"library_images": "reference_images"}


def check_response(name: str, result: Fetch, document: bytes, reference: bytes) -> bool:
    """Check one library answer is the full page, as ``name`` claims it is served.

    Always: 200, identity (no Content-Encoding), an ETag, as many ``<url>`` as the
    reference. Streamed: no Content-Length (the length is unknown before the last
    byte). Spooled: a Content-Length equal to the body. Returns byte-identity.
    """
    problems = []
    if not result.status.startswith("200"):
        problems.append(f"status {result.status!r}")
    if result.header("Content-Encoding") is not None:
        problems.append(f"Content-Encoding {result.header('Content-Encoding')!r}")
    if result.header("ETag") is None:
        problems.append("no ETag")
    length = result.header("Content-Length")
    if "spooled" in name and length != str(len(document)):
        problems.append(f"spooled but Content-Length {length!r}, body {len(document)}")
    if "spooled" not in name and length is not None:
        problems.append(f"meant to stream but Content-Length {length!r}")
    if url_count(document) != url_count(reference):
        problems.append(f"{url_count(document)} <url>, reference {url_count(reference)}")
    if problems:
        raise AssertionError(f"{name}: " + "; ".join(problems))
    return document == reference


def verify(
    raw: list[Raw],
    library: Mapping[str, Callable[[list[bytes]], Fetch]],
    references: Mapping[str, bytes] | None = None,
) -> dict[str, Any]:
    """Check every library document against its reference; fail loudly otherwise.

    ``references`` gives the reference of a contender that has its own (by name);
    the others are checked against :func:`render_reference`.
    """
    reference = render_reference(raw)
    for document in (reference, *(references or {}).values()):
        if url_count(document) != len(raw):
            raise AssertionError(f"reference has {url_count(document)} <url>, raw {len(raw)}")
    identical: dict[str, bool] = {}
    size = 0
    for name, call in library.items():
        sink: list[bytes] = []
        result = call(sink)
        document = b"".join(sink)
        own = (references or {}).get(name, reference)
        identical[name] = check_response(name, result, document, own)
        if own is reference:
            size = len(document)
    return {
        "urls": len(raw),
        "reference_bytes": len(reference),
        "library_bytes": size,
        "byte_identical": all(identical.values()),
        "byte_identical_each": identical,
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

    def render_rows() -> None:
        encoder = UrlsetEncoder()
        for start in range(0, len(raw), BATCH_SIZE):
            encoder.feed(RowBatch(list(raw[start : start + BATCH_SIZE]), "posts"))
        encoder.close()

    # Fingerprinted and without a page cache, as the Flask contender: the streamed path.
    posts = FingerprintedPosts(raw)
    site = Site([UrlSource.from_object("posts", posts, count=posts.count)])
    base = BaseURL.parse(BASE_URL)

    rows = RowPosts(raw)
    rows_site = Site([UrlSource.from_object("posts", rows, count=rows.count)])

    def drain(site: Site[UrlSource]) -> None:
        reply = respond(site, "GET", PAGE_PATH, lambda: base)
        if reply is None or not isinstance(reply.body, Iterator):
            raise AssertionError("the core did not stream the page")
        for _ in reply.body:
            pass

    return {
        "entry_construction": build_entries,
        "normalise_url": urls,
        "normalise_lastmod": dates,
        "render_encode": render,
        "rows_validate_render_encode": render_rows,
        "core_without_flask": functools.partial(drain, site),
        "core_rows_without_flask": functools.partial(drain, rows_site),
    }


#: Profile categories: (label, file suffix, function name), measured by cumulative time.
_CUMULATIVE = (
    ("Entry construction (all of Entry.__init__)", "sitemap_core/model/entries.py", "__init__"),
    ("  normalise_url", "sitemap_core/model/values.py", "normalise_url"),
    ("  normalise_lastmod", "sitemap_core/model/values.py", "normalise_lastmod"),
    ("  changefreq", "sitemap_core/model/values.py", "normalise_changefreq"),
    ("  priority", "sitemap_core/model/values.py", "normalise_priority"),
    ("render + encode (DocumentEncoder.feed)", "sitemap_core/write/encoders.py", "feed"),
    (
        "  rows validated and written (_row_elements)",
        "sitemap_core/write/encoders.py",
        "_row_elements",
    ),
    ("url_for", "flask/helpers.py", "url_for"),
)
#: Self time of every function whose file path contains one of these fragments.
_PACKAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("source generator of this benchmark (self time)", ("/benchmarks/",)),
    (
        "sources.py + site.py + rows.py plumbing (self time)",
        ("core/sources.py", "core/site.py", "core/rows.py"),
    ),
    ("serve.py body loop (self time)", ("core/serve.py",)),
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
    text_raw: Any = as_database_text(raw)
    images = build_images(entries)
    flask_apps = {
        "rows": make_app(RowPosts(raw)),
        "library": make_app(FingerprintedPosts(raw)),
        "library_no_count": make_app(FingerprintedPosts(raw), with_count=False),
        "library_spooled": make_app(Posts(raw)),
        "rows_text": make_app(RowPosts(text_raw)),
        "library_text": make_app(FingerprintedPosts(text_raw)),
        "library_images": make_app(ImagePosts(raw, images)),
    }
    asgi_apps = {
        "asgi_rows_sync": make_asgi_app(RowPosts(raw)),
        "asgi_rows_async": make_asgi_app(RowPosts(raw), async_source=True),
        "asgi_sync": make_asgi_app(FingerprintedPosts(raw)),
        "asgi_async": make_asgi_app(FingerprintedPosts(raw), async_source=True),
        "asgi_spooled": make_asgi_app(Posts(raw)),
    }
    loop = EventLoopThread()
    library: dict[str, Callable[[list[bytes] | None], Fetch]] = {}
    for name, app in flask_apps.items():
        library[name] = functools.partial(fetch, app)
    for name, asgi in asgi_apps.items():
        library[name] = functools.partial(fetch_asgi, loop, asgi)
    checks = verify(raw, library, {"library_images": render_image_reference(raw, images)})

    def reference() -> bytes:
        return render_reference(raw)

    def reference_images() -> bytes:
        return render_image_reference(raw, images)

    fetches: dict[str, list[Fetch]] = {name: [] for name in library}

    def recorder(name: str) -> Callable[[], object]:
        call = library[name]
        return lambda: fetches[name].append(call(None))

    contenders: dict[str, Callable[[], object]] = {
        "reference": reference,
        "reference_images": reference_images,
    }
    contenders.update({name: recorder(name) for name in library})
    if with_breakdown:
        contenders.update(stages(raw))
    for func in contenders.values():  # warm-up: lazy set-up, caches
        func()
    for done in fetches.values():
        done.clear()
    times: dict[str, list[float]] = {name: [] for name in contenders}
    cpu_times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, func in contenders.items():
            wall, cpu = timed(func)
            times[name].append(wall)
            cpu_times[name].append(cpu)
    # The library's own clocks start at the WSGI / ASGI call, not before the environ.
    for name, done in fetches.items():
        times[name] = [f.total for f in done]
        cpu_times[name] = [f.cpu for f in done]
    median = {name: statistics.median(values) for name, values in times.items()}
    cpu_median = {name: statistics.median(values) for name, values in cpu_times.items()}

    reference_s, library_s = median["reference"], median["library"]
    each: dict[str, dict[str, float]] = {}
    for name, done in fetches.items():
        first_byte = statistics.median(f.first_byte for f in done)
        own_reference_s = median[OWN_REFERENCE.get(name, "reference")]
        each[name] = {
            "median_s": median[name],
            "ratio": median[name] / own_reference_s,
            "first_byte_s": first_byte,
            "first_byte_pct": 100 * first_byte / median[name],
            "peak_bytes": peak_memory(contenders[name]),
        }
    last = fetches["library"][-1]
    results: dict[str, Any] = {
        "machine": machine(),
        "entries": entries,
        "repeat": repeat,
        "checks": checks,
        "reference_s": reference_s,
        "library_s": library_s,
        "ratio": library_s / reference_s,
        "ratio_rows": each["rows"]["ratio"],
        "ratio_asgi_rows_sync": each["asgi_rows_sync"]["ratio"],
        "ratio_asgi_rows_async": each["asgi_rows_async"]["ratio"],
        "ratio_rows_of_minimums": min(times["rows"]) / min(times["reference"]),
        "ratio_rows_cpu": cpu_median["rows"] / cpu_median["reference"],
        "ratio_of_minimums": min(times["library"]) / min(times["reference"]),
        "reference_cpu_s": cpu_median["reference"],
        "library_cpu_s": cpu_median["library"],
        "ratio_cpu": cpu_median["library"] / cpu_median["reference"],
        "library_no_count_s": median["library_no_count"],
        "ratio_no_count": each["library_no_count"]["ratio"],
        "library_spooled_s": median["library_spooled"],
        "ratio_spooled": each["library_spooled"]["ratio"],
        "spooled_first_byte_pct": each["library_spooled"]["first_byte_pct"],
        "asgi_sync_s": median["asgi_sync"],
        "ratio_asgi_sync": each["asgi_sync"]["ratio"],
        "asgi_async_s": median["asgi_async"],
        "ratio_asgi_async": each["asgi_async"]["ratio"],
        "asgi_first_byte_pct": each["asgi_sync"]["first_byte_pct"],
        "asgi_peak_bytes": each["asgi_sync"]["peak_bytes"],
        "ratio_rows_text": each["rows_text"]["ratio"],
        "ratio_text": each["library_text"]["ratio"],
        "text_vs_datetime": median["library_text"] / median["library"],
        "reference_images_s": median["reference_images"],
        "ratio_images": each["library_images"]["ratio"],
        "first_byte_s": each["library"]["first_byte_s"],
        "first_byte_pct": each["library"]["first_byte_pct"],
        "chunks": last.chunks,
        "mean_chunk_bytes": last.size / last.chunks,
        "reference_peak_bytes": peak_memory(reference),
        "library_peak_bytes": each["library"]["peak_bytes"],
        "library": each,
        "times_s": times,
        "cpu_times_s": cpu_times,
        "last_fetch": asdict(last),
    }
    if with_breakdown:
        names = [name for name in contenders if not name.startswith("reference")]
        names = [name for name in names if name not in library]
        results["breakdown_s"] = {name: median[name] for name in names}
        results["breakdown_pct"] = {name: 100 * median[name] / library_s for name in names}
    loop.close()
    return results


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "cpu_count": os.cpu_count(),
        "library": library_version(),
    }


def library_version() -> str:
    """The commit measured, with "+dirty" when the library's files differ from it."""
    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--", *LIBRARY_DIRS],
            cwd=root,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return "unknown"
    return f"{commit or 'unknown'}{'+dirty' if changed else ''}"


# Output -----------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def mib(size: float) -> str:
    return f"{size / 2**20:,.2f} MiB"


def table(results: dict[str, Any]) -> str:
    """The results as a Markdown table (plus the breakdown when present)."""
    checks = results["checks"]
    rows = [
        f"| Reference (plain Python, whole document) | {ms(results['reference_s'])} | "
        f"1.00x | - | {mib(results['reference_peak_bytes'])} |"
    ]
    for name, label in LIBRARY.items():
        if name == "library_images":
            rows.append(
                f"| Reference of the image page (plain Python, whole document) | "
                f"{ms(results['reference_images_s'])} | 1.00x | - | - |"
            )
        row = results["library"][name]
        rows.append(
            f"| {label} | {ms(row['median_s'])} | {row['ratio']:.2f}x | "
            f"{ms(row['first_byte_s'])} ({row['first_byte_pct']:.1f}%) | "
            f"{mib(row['peak_bytes'])} |"
        )
    lines = [
        f"{results['entries']:,} URLs, median of {results['repeat']} runs "
        f"(document {checks['library_bytes']:,} bytes, identity coding, "
        f"byte-identical to its reference: {checks['byte_identical']})",
        "",
        "| Contender | Time | vs reference | First byte (% of time) | Peak memory |",
        "|---|---:|---:|---:|---:|",
        *rows,
        "",
        "| Measure | Value |",
        "|---|---:|",
        f"| Ratio of the fastest runs (Flask tuple rows min / reference min) | "
        f"{results['ratio_rows_of_minimums']:.2f}x |",
        f"| Ratio of median CPU times (Flask tuple rows) | {results['ratio_rows_cpu']:.2f}x |",
        f"| Ratio of the fastest runs (Flask Entry per URL min / reference min) | "
        f"{results['ratio_of_minimums']:.2f}x |",
        f"| Ratio of median CPU times (Flask Entry per URL; {ms(results['library_cpu_s'])} / "
        f"{ms(results['reference_cpu_s'])}) | {results['ratio_cpu']:.2f}x |",
        f"| Entry per URL, lastmod as database text / as datetime (Flask) | "
        f"{results['text_vs_datetime']:.2f}x |",
        f"| Flask streamed: chunks / mean chunk size | {results['chunks']} / "
        f"{results['mean_chunk_bytes']:,.0f} bytes |",
    ]
    if "breakdown_s" in results:
        lines += [
            "",
            "Library stages timed in isolation (no Flask, no profiler), share of the "
            "Flask Entry-per-URL time:",
            "",
            f"| Stage ({results['entries']:,} calls) | Time | % of library |",
            "|---|---:|---:|",
        ]
        for name, seconds in results["breakdown_s"].items():
            pct = results["breakdown_pct"][name]
            lines.append(f"| {name} | {ms(seconds)} | {pct:.0f}% |")
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
        f"{info['implementation']} {info['python']}, {info['platform']}; "
        f"library {info['library']}"
    )
    print()
    print(table(results))
    if args.profile:
        profiled = {"rows": RowPosts, "entries": FingerprintedPosts}
        for kind, posts in profiled.items():
            text, shares = profile(make_app(posts(build_raw(args.entries))))
            results[f"profile_{kind}_top25"] = text
            results[f"profile_{kind}_shares_pct"] = shares
            print()
            print(f"cProfile of one Flask request, source of {kind} (top 25 by tottime):")
            print(text)
            print("Share of the profiled time (cumulative unless marked self time):")
            for label, share in shares.items():
                unit = " s" if label.endswith("(s)") else "%"
                print(f"  {label:<55} {share:6.2f}{unit}")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\nResults written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
