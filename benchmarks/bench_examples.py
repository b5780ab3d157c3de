"""Benchmark: the Flask blog example as users copy it, in-process and under gunicorn.

Three parts, all on the example's own database (120,000 posts, built once in a
temporary folder by importing ``examples/flask_blog/app.py`` in a subprocess):

**render**: one full posts page (``/sitemap-posts-1.xml``: 50,000 posts, each with
its cover image and a text ``updated_at``), served by the example's Flask app called
as WSGI in this process, page cache off (``FLASK_SITEMAP_CACHE=false``), identity
coding, against a **reference**: plain Python that reads the same 50,000 rows from the
same SQLite file (``SELECT id, updated_at ... ORDER BY id LIMIT 50000``) and writes
the same document with f-strings, chained ``str.replace`` escaping, ``"".join`` and
``.encode()``. The two documents must be byte-identical (checked before timing).
Reported: medians, the ratio, the library's first byte and the peak memory of each
(tracemalloc, in separate untimed runs). Target: at most 2x the reference.

**cached**: the four requests of the load part (below), in-process: the example (its
default page cache on) and the dict app called as WSGI apps with a prepared environ,
no server and no client, so the difference is the library's own work per request.
Reported per request (best of three batches of ``--requests``); ``--profile`` adds
the library's functions by cumulative time for each request.

**load**: the example under ``gunicorn -w 4`` (sync workers, its default
``MemoryCache`` per worker) on 127.0.0.1, and a **dict app**: a minimal Flask app,
also under ``gunicorn -w 4``, answering the same paths with the same status, headers
and bytes, taken from the example beforehand and kept in a dict (checked before the
load runs: everything but ``Date``, ``Server`` and ``Connection`` must be equal). Four
requests, each as a crawler sends it (``Accept-Encoding: gzip``):

* ``page 304``: ``/sitemap-posts-1.xml`` with ``If-None-Match`` of its current ETag;
* ``page cached 200``: the same page, sent from the worker's page cache;
* ``index 304`` / ``index cached 200``: the same for ``/sitemap.xml``.

The load comes from a separate process: ``wrk`` when it is installed (Debian:
``apt-get install wrk``), else a small multi-process Python client written here
(``http.client`` per process; gunicorn's sync workers close every connection, so both
clients reconnect per request, as they would against a real sync deployment).
``--client`` chooses. Each run lasts ``--duration`` seconds, after warm-up; the example
and the dict app alternate, ``--rounds`` times, and the median requests/s of each is
reported with latency percentiles (of the median run) and the ratio example / dict app.
Target: at least 0.8x. Servers are started and stopped by the script; every
subprocess has a timeout.

Figures depend on the machine's load: the load average is printed beside each.

Run from the repository root::

    .venv/bin/python benchmarks/bench_examples.py [--repeat 5] [--duration 3] [--rounds 2]
        [--client auto|wrk|python] [--connections 8] [--requests 2000]
        [--only render|cached|load] [--json results.json] [--profile]

About two minutes with the defaults (most of it the 16 load runs and their warm-up).
"""

from __future__ import annotations

import argparse
import cProfile
import http.client
import io
import json
import multiprocessing
import os
import pickle
import pstats
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, closing, contextmanager
from dataclasses import asdict, dataclass, field
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path
from types import ModuleType
from typing import Any

from bench_page import fetch, machine, mib, ms, peak_memory, timed, xml_escape
from flask import Flask
from werkzeug.test import EnvironBuilder

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_DIR = ROOT / "examples" / "flask_blog"
#: The page measured, and the site's index.
PAGE_PATH = "/sitemap-posts-1.xml"
INDEX_PATH = "/sitemap.xml"
#: The in-process part's base URL (``bench_page.fetch`` asks for this host).
BASE_URL = "https://example.com"
PAGE_ENTRIES = 50_000
WORKERS = 4
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
#: Headers gunicorn (or the moment) adds on its own: not compared between the apps.
SERVER_HEADERS = frozenset({"date", "server", "connection"})
#: What a crawler sends.
GZIP = {"Accept-Encoding": "gzip"}
#: name -> (path, conditional): the four requests of the load part.
CASES: dict[str, tuple[str, bool]] = {
    "page 304": (PAGE_PATH, True),
    "page cached 200": (PAGE_PATH, False),
    "index 304": (INDEX_PATH, True),
    "index cached 200": (INDEX_PATH, False),
}
#: Longest a server may take to boot, and to stop after SIGTERM.
START_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0
#: Longest the warm-up of one case may take (each worker renders a page once).
WARM_TIMEOUT = 120.0

DICT_APP = '''
"""A minimal Flask app answering captured requests from a dict (bench_examples.py)."""
import os
import pickle

from flask import Flask, Response, request

with open(os.environ["BENCH_RESPONSES"], "rb") as file:
    #: path -> (etag, headers of the 200, body of the 200, headers of the 304)
    DOCUMENTS = pickle.load(file)

app = Flask(__name__)


@app.get("/<path:path>")
def answer(path):
    etag, headers, body, not_modified = DOCUMENTS["/" + path]
    if request.headers.get("If-None-Match") == etag:
        return Response(status=304, headers=not_modified)
    return Response(body, headers=headers)
'''

WRK_SCRIPT = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'RESULT {"requests": %d, "duration_us": %d, "bytes": %d, "socket_errors": %d,'
    .. ' "http_errors": %d, "p50_us": %d, "p90_us": %d, "p99_us": %d, "max_us": %d}\\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
"""


def loadavg() -> str:
    """The 1, 5 and 15 minute load averages, as ``/proc/loadavg`` gives them."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


# The database ----------------------------------------------------------------------


def build_database(folder: Path) -> Path:
    """Let the example build its database in ``folder`` (in a subprocess); return it."""
    database = folder / "blog.db"
    env = {**os.environ, "BLOG_DATABASE": str(database)}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    subprocess.run(
        [sys.executable, "-c", "import app"],
        cwd=EXAMPLE_DIR,
        env=env,
        check=True,
        timeout=300,
        capture_output=True,
    )
    return database


# Part 1: one full page in-process --------------------------------------------------


def load_example(database: Path, *, cache: bool = False) -> ModuleType:
    """Import the example app in this process: its database, base URL fixed.

    The example reads its settings from the environment when imported; they are set
    for the import only, so that the servers started later do not inherit them.
    ``cache`` False turns the page cache off (every page is rendered).
    """
    settings = {"BLOG_DATABASE": str(database), "FLASK_SITEMAP_BASE_URL": BASE_URL}
    if not cache:
        settings["FLASK_SITEMAP_CACHE"] = "false"  # from_prefixed_env reads JSON: False
    saved = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        name = "blog_example_cached" if cache else "blog_example"
        spec = spec_from_file_location(name, EXAMPLE_DIR / "app.py")
        assert spec is not None and spec.loader is not None
        module = module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return module


def render_reference(database: Path) -> bytes:
    """The posts page from the same rows, in plain Python, all in memory."""
    with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
        rows = db.execute(
            "SELECT id, updated_at FROM posts ORDER BY id LIMIT ?", (PAGE_ENTRIES,)
        ).fetchall()
    head = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="{SITEMAP_NS}" xmlns:image="{IMAGE_NS}">\n'
    )
    body = "".join(
        [
            f"<url><loc>{loc}</loc><lastmod>{xml_escape(updated_at)}</lastmod>"
            f"<image:image><image:loc>{loc}/cover.svg</image:loc></image:image></url>\n"
            for post_id, updated_at in rows
            # One escaped loc per row, used twice (the post and its cover).
            for loc in (xml_escape(f"{BASE_URL}/posts/{post_id}"),)
        ]
    )
    return (head + body + "</urlset>\n").encode()


def _first_difference(left: bytes, right: bytes) -> str:
    at = next((i for i, (a, b) in enumerate(zip(left, right, strict=False)) if a != b), None)
    if at is None:
        at = min(len(left), len(right))
    return f"at byte {at}: library {left[at : at + 80]!r}, reference {right[at : at + 80]!r}"


#: (label, file suffix, function names): cumulative shares reported by ``--profile``
#: (the core is being tuned: a label whose functions are gone is left out).
PROFILED: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("the example's build callback (post_row)", "examples/flask_blog/app.py", ("post_row",)),
    ("  URL building (url_builder)", "flask_sitemapper/urls.py", ("build", "__call__")),
    ("  URL building (url_for)", "flask/helpers.py", ("url_for",)),
    ("SQLiteSource rows read and built", "sitemap_core/sources/sql/sqlite.py", ("_built",)),
    (
        "the row writer (rows with images)",
        "sitemap_core/write/encoders.py",
        ("_wide_row_elements",),
    ),
    ("  fields validated (_row_fields)", "sitemap_core/write/encoders.py", ("_row_fields",)),
    ("    lastmods (normalise_lastmods)", "sitemap_core/model/values.py", ("normalise_lastmods",)),
    ("    locs (normalise_urls)", "sitemap_core/model/values.py", ("normalise_urls",)),
    ("  image fragments", "sitemap_core/write/encoders.py", ("_image_fragments",)),
    (
        "  Entry construction (a batch with a refused value)",
        "sitemap_core/model/entries.py",
        ("__init__",),
    ),
)


def profile(app: Flask, top: int = 20) -> tuple[str, dict[str, float]]:
    """cProfile of one full page: the ``top`` functions by own time, and stage shares."""
    fetch(app)  # warm-up
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
    for label, suffix, names in PROFILED:
        # The largest cumulative time of the label's functions: they may call each
        # other (UrlBuilder.build calls the rule's build).
        cumulative = max(
            (
                row[3]
                for (path, _, name), row in table.items()
                if name in names and path.replace(os.sep, "/").endswith(suffix)
            ),
            default=0.0,
        )
        if cumulative:
            shares[label] = 100 * cumulative / total
    shares["profiled total (s)"] = total
    return out.getvalue(), shares


def run_render(database: Path, repeat: int, with_profile: bool) -> dict[str, Any]:
    """Part 1: the example's full posts page against the reference."""
    app: Flask = load_example(database).app
    sink: list[bytes] = []
    answer = fetch(app, sink)
    document, reference = b"".join(sink), render_reference(database)
    if not answer.status.startswith("200") or answer.header("ETag") is None:
        raise SystemExit(f"the example answered {answer.status} {answer.headers}")
    if answer.header("Content-Length") is not None:
        raise SystemExit("the page was not streamed (Content-Length on a render, cache on?)")
    if document != reference:
        raise SystemExit(
            "the example's page differs from the reference "
            + _first_difference(document, reference)
        )
    load_before = loadavg()
    library, library_cpu, first_bytes, plain, plain_cpu = [], [], [], [], []
    for _ in range(repeat):
        wall, cpu = timed(lambda: render_reference(database))
        plain.append(wall)
        plain_cpu.append(cpu)
        result = fetch(app)
        library.append(result.total)
        library_cpu.append(result.cpu)
        first_bytes.append(result.first_byte)
    median = statistics.median(library)
    results: dict[str, Any] = {
        "entries": PAGE_ENTRIES,
        "repeat": repeat,
        "document_bytes": len(document),
        "byte_identical": True,
        "reference_s": statistics.median(plain),
        "library_s": median,
        "ratio": median / statistics.median(plain),
        "ratio_of_minimums": min(library) / min(plain),
        "ratio_cpu": statistics.median(library_cpu) / statistics.median(plain_cpu),
        "first_byte_s": statistics.median(first_bytes),
        "first_byte_pct": 100 * statistics.median(first_bytes) / median,
        "reference_peak_bytes": peak_memory(lambda: render_reference(database)),
        "library_peak_bytes": peak_memory(lambda: fetch(app)),
        "loadavg_before": load_before,
        "loadavg_after": loadavg(),
    }
    if with_profile:
        results["profile_top"], results["profile_shares_pct"] = profile(app)
    return results


# Part 1b: a 304 and a cached 200 in-process -------------------------------------


def load_dict_app(documents: Mapping[str, tuple[Any, ...]], folder: Path) -> Flask:
    """The dict app of the load part (:data:`DICT_APP`), imported in this process."""
    responses = folder / "responses-in-process.pickle"
    responses.write_bytes(pickle.dumps(dict(documents)))
    module = ModuleType("dict_app_in_process")
    saved = os.environ.get("BENCH_RESPONSES")
    os.environ["BENCH_RESPONSES"] = str(responses)
    try:
        exec(compile(DICT_APP, "dict_app.py", "exec"), module.__dict__)
    finally:
        if saved is None:
            del os.environ["BENCH_RESPONSES"]
        else:
            os.environ["BENCH_RESPONSES"] = saved
    app: Flask = module.app
    return app


def wsgi_call(app: Flask, environ: Mapping[str, Any]) -> tuple[str, list[tuple[str, str]], bytes]:
    """Call ``app`` with a copy of ``environ``; return status, headers and body."""
    answer: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        answer["status"], answer["headers"] = status, headers
        return lambda data: None

    body = app(dict(environ), start_response)
    try:
        data = b"".join(body)
    finally:
        getattr(body, "close", lambda: None)()
    return answer["status"], answer["headers"], data


def per_request(app: Flask, environ: Mapping[str, Any], count: int) -> float:
    """Seconds per request of ``count`` calls (the best of three batches)."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(count):
            wsgi_call(app, environ)
        best = min(best, (time.perf_counter() - started) / count)
    return best


#: Where a cached request's profile is cut: functions of these packages only.
LIBRARY_PATHS = ("/sitemap_core/", "/flask_sitemapper/")


def run_cached(database: Path, folder: Path, count: int, with_profile: bool) -> dict[str, Any]:
    """The four requests of the load part, in-process: the example against the dict app.

    Both are called as WSGI apps with a prepared environ (no server, no client), so the
    difference is the library's work per request (and the example's queries). The
    example has its default page cache; the dict app answers with its captured bytes.
    """
    example: Flask = load_example(database, cache=True).app
    base = EnvironBuilder(path=PAGE_PATH, base_url=BASE_URL).get_environ()
    etags: dict[str, str] = {}
    documents: dict[str, tuple[Any, ...]] = {}
    for path in (PAGE_PATH, INDEX_PATH):
        environ = {**base, "PATH_INFO": path, "HTTP_ACCEPT_ENCODING": "gzip"}
        for _ in range(2):  # a render, then a cache hit
            _, headers, body = wsgi_call(example, environ)
        etag = dict(headers)["ETag"]
        _, not_modified, _ = wsgi_call(example, {**environ, "HTTP_IF_NONE_MATCH": etag})
        etags[path] = etag
        documents[path] = (etag, headers, body, not_modified)
    plain = load_dict_app(documents, folder)
    results: dict[str, Any] = {"requests": count, "loadavg_before": loadavg(), "cases": {}}
    for name, (path, conditional) in CASES.items():
        environ = {**base, "PATH_INFO": path, "HTTP_ACCEPT_ENCODING": "gzip"}
        if conditional:
            environ["HTTP_IF_NONE_MATCH"] = etags[path]
        ours, theirs = wsgi_call(example, environ), wsgi_call(plain, environ)
        if ours[0] != theirs[0] or ours[2] != theirs[2]:
            raise SystemExit(f"{name}: the dict app answers {theirs[0]}, the example {ours[0]}")
        example_s, plain_s = (
            per_request(example, environ, count),
            per_request(plain, environ, count),
        )
        case: dict[str, Any] = {
            "example_us": 1e6 * example_s,
            "dict_app_us": 1e6 * plain_s,
            # As a throughput ratio (example / dict app requests per second).
            "ratio": plain_s / example_s,
        }
        if with_profile:
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(count // 4):
                wsgi_call(example, environ)
            profiler.disable()
            out = io.StringIO()
            stats = pstats.Stats(profiler, stream=out)
            stats.sort_stats(pstats.SortKey.CUMULATIVE).print_stats("|".join(LIBRARY_PATHS), 15)
            case["profile_top"] = out.getvalue()
        results["cases"][name] = case
    results["loadavg_after"] = loadavg()
    return results


# Part 2: servers ---------------------------------------------------------------------


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on now."""
    with closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Server:
    """A gunicorn master started by this script."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path

    def url(self, path: str) -> str:
        """The absolute URL of ``path`` on this server."""
        return f"http://127.0.0.1:{self.port}{path}"


@contextmanager
def gunicorn(
    app: str, cwd: Path, env: Mapping[str, str], log: Path, ready: str
) -> Iterator[Server]:
    """Run ``gunicorn -w 4 app`` on a free port until the block ends, then stop it.

    It is ready once every worker has booted and ``ready`` (a path) is answered.
    """
    port = free_port()
    environment = {**os.environ, **env}
    environment["PYTHONPATH"] = os.pathsep.join([str(ROOT), environment.get("PYTHONPATH", "")])
    command = [
        sys.executable, "-m", "gunicorn", "--workers", str(WORKERS),
        "--bind", f"127.0.0.1:{port}", "--log-level", "info", app,
    ]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=cwd, env=environment, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    server = Server(process, port, log)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while log.read_text(errors="replace").count("Booting worker") < WORKERS:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"gunicorn {app} did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.1)
        while True:  # the workers have booted; wait until one answers
            try:
                request(server, ready, {})
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the group of the master started here
            process.wait(STOP_TIMEOUT)


@dataclass
class Answer:
    """One response as it came: status, headers (in order), body."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        """The header ``name`` (any case), or None."""
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def comparable(self) -> tuple[int, list[tuple[str, str]], bytes]:
        """Status, the headers an app chose (sorted), body."""
        kept = sorted((k.lower(), v) for k, v in self.headers if k.lower() not in SERVER_HEADERS)
        return self.status, kept, self.body


def request(server: Server, path: str, headers: Mapping[str, str]) -> Answer:
    """One GET on a new connection; the body is read whole, as sent (no decoding)."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        connection.request("GET", path, headers=dict(headers))
        response = connection.getresponse()
        return Answer(response.status, response.getheaders(), response.read())
    finally:
        connection.close()


def case_headers(etags: Mapping[str, str], name: str) -> dict[str, str]:
    """The request headers of case ``name``."""
    path, conditional = CASES[name]
    return {**GZIP, "If-None-Match": etags[path]} if conditional else dict(GZIP)


def warm(server: Server, path: str, in_flight: int = 8) -> None:
    """Ask for ``path`` until every worker sends it from its cache.

    A cache hit has a Content-Length; a render (the first time in each worker) streams
    without one. Requests go several at a time so that every worker gets some.
    """
    deadline = time.monotonic() + WARM_TIMEOUT
    hits_in_a_row = 0
    with ThreadPoolExecutor(in_flight) as pool:
        while hits_in_a_row < 6 * WORKERS:
            if time.monotonic() > deadline:
                raise SystemExit(f"{path} never came from every worker's cache")
            for answer in pool.map(lambda _: request(server, path, GZIP), range(in_flight)):
                if answer.status != 200:
                    raise SystemExit(f"{path}: {answer.status}")
                hits_in_a_row = hits_in_a_row + 1 if answer.header("Content-Length") else 0


def capture(example: Server) -> tuple[dict[str, str], dict[str, tuple[Any, ...]]]:
    """The current ETags, and what the dict app must answer for each path."""
    etags: dict[str, str] = {}
    documents: dict[str, tuple[Any, ...]] = {}
    for path in (PAGE_PATH, INDEX_PATH):
        warm(example, path)
        full = request(example, path, GZIP)
        etag = full.header("ETag")
        assert etag is not None and full.header("Content-Length") is not None, full.headers
        not_modified = request(example, path, {**GZIP, "If-None-Match": etag})
        assert not_modified.status == 304, not_modified.status
        keep = [(k, v) for k, v in full.headers if k.lower() not in SERVER_HEADERS]
        keep_304 = [(k, v) for k, v in not_modified.headers if k.lower() not in SERVER_HEADERS]
        etags[path] = etag
        documents[path] = (etag, keep, full.body, keep_304)
    return etags, documents


def check_same(example: Server, plain: Server, etags: Mapping[str, str]) -> None:
    """Both apps answer every case with the same status, headers and bytes."""
    for name, (path, _) in CASES.items():
        headers = case_headers(etags, name)
        ours, theirs = request(example, path, headers), request(plain, path, headers)
        if ours.comparable() != theirs.comparable():
            raise SystemExit(
                f"{name}: the dict app answers differently:\n"
                f"example  {ours.comparable()[:2]}\ndict app {theirs.comparable()[:2]}"
            )
        expected = 304 if CASES[name][1] else 200
        if ours.status != expected:
            raise SystemExit(f"{name}: {ours.status}, expected {expected}")


# Part 2: load generators -------------------------------------------------------------


@dataclass
class Load:
    """One load run: throughput and latency percentiles (microseconds)."""

    requests: int
    seconds: float
    bytes: int
    errors: int
    p50_us: float
    p90_us: float
    p99_us: float
    max_us: float
    loadavg: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def rps(self) -> float:
        """Requests per second."""
        return self.requests / self.seconds if self.seconds else 0.0


def run_wrk(url: str, headers: Mapping[str, str], seconds: int, connections: int,
            threads: int, script: Path) -> Load:  # fmt: skip
    """One ``wrk`` run; its Lua ``done`` hook prints the figures as JSON."""
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s",
               "-s", str(script)]  # fmt: skip
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    done = subprocess.run(
        [*command, url], capture_output=True, text=True, timeout=seconds + 30, check=False
    )
    if done.returncode:
        raise SystemExit(f"wrk failed ({done.returncode}): {done.stdout}{done.stderr}")
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    data = json.loads(line.removeprefix("RESULT "))
    return Load(
        data["requests"], data["duration_us"] / 1e6, data["bytes"],
        data["socket_errors"] + data["http_errors"],
        data["p50_us"], data["p90_us"], data["p99_us"], data["max_us"],
    )  # fmt: skip


def _client(port: int, path: str, headers: dict[str, str], start: float, stop: float,
            expected: int) -> tuple[int, int, int, list[float]]:  # fmt: skip
    # One load process: GET in a loop (http.client reconnects when the server closes),
    # counting answers, bytes and unexpected statuses, timing each request.
    while time.time() < start:
        time.sleep(0.001)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    done = size = errors = 0
    latencies: list[float] = []
    while time.time() < stop:
        began = time.perf_counter()
        try:
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            size += len(response.read())
        except (OSError, http.client.HTTPException):
            errors += 1
            connection.close()
            continue
        latencies.append(time.perf_counter() - began)
        done += 1
        errors += response.status != expected
        if response.getheader("Connection", "").lower() == "close":
            connection.close()
    connection.close()
    return done, size, errors, latencies


def run_python(port: int, path: str, headers: Mapping[str, str], seconds: float,
               connections: int, expected: int) -> Load:  # fmt: skip
    """One run of ``connections`` client processes (see :func:`_client`)."""
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    start = time.time() + (0.3 if method == "fork" else 3.0)  # every process is ready
    with multiprocessing.get_context(method).Pool(connections) as pool:
        runs = pool.starmap(
            _client,
            [(port, path, dict(headers), start, start + seconds, expected)] * connections,
        )
    latencies = sorted(t for run in runs for t in run[3])

    def pct(q: float) -> float:
        return 1e6 * latencies[min(len(latencies) - 1, int(q * len(latencies)))] if latencies else 0

    return Load(
        sum(r[0] for r in runs), seconds, sum(r[1] for r in runs), sum(r[2] for r in runs),
        pct(0.50), pct(0.90), pct(0.99), 1e6 * latencies[-1] if latencies else 0,
    )  # fmt: skip


def run_load(
    database: Path, work: Path, client: str, seconds: int, rounds: int, connections: int,
    threads: int,
) -> dict[str, Any]:  # fmt: skip
    """Part 2: the four cases on the example and on the dict app, ``rounds`` times."""
    script = work / "report.lua"
    script.write_text(WRK_SCRIPT)
    (work / "dict_app.py").write_text(DICT_APP)
    responses = work / "responses.pickle"
    results: dict[str, Any] = {"client": client, "seconds": seconds, "rounds": rounds,
                               "connections": connections, "workers": WORKERS}  # fmt: skip
    with ExitStack() as stack:
        example = stack.enter_context(
            gunicorn("app:app", EXAMPLE_DIR, {"BLOG_DATABASE": str(database)}, work / "ex.log", "/")
        )
        etags, documents = capture(example)
        responses.write_bytes(pickle.dumps(documents))
        dict_env = {"BENCH_RESPONSES": str(responses)}
        plain = stack.enter_context(
            gunicorn("dict_app:app", work, dict_env, work / "d.log", INDEX_PATH)
        )
        check_same(example, plain, etags)
        servers = {"example": example, "dict app": plain}
        results["sizes"] = {path: len(document[2]) for path, document in documents.items()}

        def once(server: Server, name: str, duration: int) -> Load:
            path, conditional = CASES[name]
            headers = case_headers(etags, name)
            load = loadavg()
            if client == "wrk":
                run = run_wrk(server.url(path), headers, duration, connections, threads, script)
            else:
                expected = 304 if conditional else 200
                run = run_python(server.port, path, headers, duration, connections, expected)
            run.loadavg = load
            if run.errors:
                raise SystemExit(f"{name} on {server.url(path)}: {run.errors} errors")
            return run

        for name in CASES:  # a short warm-up of every case on both (not reported)
            for server in servers.values():
                once(server, name, 1)
        runs: dict[str, dict[str, list[Load]]] = {n: {a: [] for a in servers} for n in CASES}
        for round_number in range(rounds):
            for name in CASES:
                # Alternate which app goes first, so a drift of the machine hits both.
                order = list(servers) if round_number % 2 == 0 else list(servers)[::-1]
                for app in order:
                    runs[name][app].append(once(servers[app], name, seconds))
        results["cases"] = {}
        for name, by_app in runs.items():
            summary: dict[str, Any] = {}
            for app, loads in by_app.items():
                ranked = sorted(loads, key=lambda run: run.rps)
                median_run = ranked[len(ranked) // 2]
                summary[app] = {
                    "rps_median": statistics.median(run.rps for run in loads),
                    "rps_runs": [run.rps for run in loads],
                    "bytes_per_request": median_run.bytes / max(1, median_run.requests),
                    "median_run": asdict(median_run),
                }
            summary["ratio"] = summary["example"]["rps_median"] / summary["dict app"]["rps_median"]
            results["cases"][name] = summary
    return results


# Output ------------------------------------------------------------------------------


def render_table(results: dict[str, Any]) -> str:
    """Part 1 as Markdown."""
    return "\n".join([
        f"Full page: {results['entries']:,} posts with a cover image, cache off, identity, "
        f"median of {results['repeat']} runs; document {results['document_bytes']:,} bytes, "
        f"byte-identical to the reference: {results['byte_identical']}; "
        f"load average {results['loadavg_before']} -> {results['loadavg_after']}",
        "",
        "| Contender | Time | vs reference | First byte (% of time) | Peak memory |",
        "|---|---:|---:|---:|---:|",
        f"| Reference (plain Python over the same rows, whole document) | "
        f"{ms(results['reference_s'])} | 1.00x | - | {mib(results['reference_peak_bytes'])} |",
        f"| Flask example (SQLiteSource, Entry + Image per post) | {ms(results['library_s'])} | "
        f"{results['ratio']:.2f}x | {ms(results['first_byte_s'])} "
        f"({results['first_byte_pct']:.1f}%) | {mib(results['library_peak_bytes'])} |",
        "",
        f"Ratio of the fastest runs {results['ratio_of_minimums']:.2f}x; of median CPU times "
        f"{results['ratio_cpu']:.2f}x. Target: at most 2x.",
    ])  # fmt: skip


def cached_table(results: dict[str, Any]) -> str:
    """Part 1b as Markdown."""
    lines = [
        f"The same requests in-process (WSGI call, prepared environ, best of 3 x "
        f"{results['requests']:,}; load average {results['loadavg_before']} -> "
        f"{results['loadavg_after']})",
        "",
        "| Request | Example | Dict app | Ratio (throughput) |",
        "|---|---:|---:|---:|",
    ]
    for name, case in results["cases"].items():
        lines.append(
            f"| {name} | {case['example_us']:.0f} us | {case['dict_app_us']:.0f} us | "
            f"{case['ratio']:.2f}x |"
        )
    return "\n".join(lines)


def load_table(results: dict[str, Any]) -> str:
    """Part 2 as Markdown."""
    client = "wrk" if results["client"] == "wrk" else "Python client (http.client per process)"
    lines = [
        f"gunicorn -w {results['workers']} (sync), {client}, {results['connections']} "
        f"connections, {results['seconds']:g} s per run, median of {results['rounds']} runs; "
        f"Accept-Encoding: gzip; bodies: "
        + ", ".join(f"{p} {n:,} bytes" for p, n in results["sizes"].items()),
        "",
        "| Request | Example req/s | Dict app req/s | Ratio | Example p50 / p90 / p99 | "
        "Dict app p50 / p90 / p99 | Load average before (example / dict app) |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, case in results["cases"].items():
        ours, theirs = case["example"], case["dict app"]

        def pcts(run: Mapping[str, Any]) -> str:
            return " / ".join(f"{run[k] / 1000:.1f}" for k in ("p50_us", "p90_us", "p99_us"))

        loads = f"{ours['median_run']['loadavg']} / {theirs['median_run']['loadavg']}"
        lines.append(
            f"| {name} | {ours['rps_median']:,.0f} | {theirs['rps_median']:,.0f} | "
            f"{case['ratio']:.2f}x | {pcts(ours['median_run'])} ms | "
            f"{pcts(theirs['median_run'])} ms | {loads} |"
        )
    lines += ["", "Target: ratio at least 0.80x for every request."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, build the database, run the parts, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5, help="timed full renders of each")
    parser.add_argument("--duration", type=int, default=3, help="seconds per load run")
    parser.add_argument("--rounds", type=int, default=2, help="load runs per case and app")
    parser.add_argument("--connections", type=int, default=8, help="concurrent connections")
    parser.add_argument("--threads", type=int, default=1, help="wrk threads")
    parser.add_argument("--client", choices=("auto", "wrk", "python"), default="auto")
    parser.add_argument("--only", choices=("render", "cached", "load"), help="run one part only")
    parser.add_argument(
        "--requests", type=int, default=2000, help="in-process requests per batch (cached)"
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write results here")
    parser.add_argument("--profile", action="store_true", help="cProfile one full render")
    args = parser.parse_args(argv)
    if min(args.repeat, args.rounds, args.duration, args.connections, args.requests) < 1:
        parser.error("--repeat, --rounds, --duration, --connections, --requests must be >= 1")
    client = args.client
    if client == "auto":
        client = "wrk" if shutil.which("wrk") else "python"
    elif client == "wrk" and not shutil.which("wrk"):
        parser.error("wrk is not installed (Debian: apt-get install wrk)")

    results: dict[str, Any] = {"machine": machine(), "loadavg_start": loadavg()}
    info = results["machine"]
    print(
        f"Machine: {info['processor']}, {info['cpu_count']} CPUs, {info['implementation']} "
        f"{info['python']}, {info['platform']}; library {info['library']}; "
        f"load average {results['loadavg_start']}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="bench-examples-") as folder:
        work = Path(folder)
        database = build_database(work)
        if args.only in (None, "render"):
            results["render"] = run_render(database, args.repeat, args.profile)
            print("\n" + render_table(results["render"]), flush=True)
            if args.profile:
                print("\nShares of one profiled render (cumulative, % of profiled time):")
                for label, value in results["render"]["profile_shares_pct"].items():
                    print(f"  {label}: {value:.1f}")
                print(results["render"]["profile_top"])
        if args.only in (None, "cached"):
            results["cached"] = run_cached(database, work, args.requests, args.profile)
            print("\n" + cached_table(results["cached"]), flush=True)
            if args.profile:
                for name, case in results["cached"]["cases"].items():
                    print(f"\nProfile of {name} (library functions by cumulative time):")
                    print(case["profile_top"])
        if args.only in (None, "load"):
            results["load"] = run_load(
                database, work, client, args.duration, args.rounds, args.connections, args.threads
            )
            print("\n" + load_table(results["load"]), flush=True)
    results["loadavg_end"] = loadavg()
    print(f"\nLoad average at the end: {results['loadavg_end']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
