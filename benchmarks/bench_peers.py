"""Benchmark: this project beside its peers, one 50,000-URL sitemap, in the same run.

The same data as ``bench_page.py`` (``build_raw``: 50,000 URLs with ``&`` in each
location, aware lastmods at ``+05:30``, changefreq words, priorities 0.0 to 1.0) is
served, in-process, by

* this project's paths, in this process: Flask with tuple rows and with an ``Entry``
  per URL (``bench_page``'s apps: ``count=``, a fingerprint), the Quick start's
  ``@sitemapper.source`` generator of ``Entry`` (no count, no fingerprint),
  ``@sitemapper.include(params=...)`` (``url_for`` per URL), and the ASGI
  middleware with tuple rows (async generator; sync source in a worker thread) and
  with the Quick start's async generator of ``Entry`` (no count, no fingerprint);
* the peers, each in its own virtual environment (created here, once, under
  ``benchmarks/.peer-venvs/``, with pinned versions from PyPI; flask-sitemapper's
  import name is also ours), each by a driver script in ``benchmarks/peers/``
  running as a long-lived subprocess: flask-sitemapper, Flask-Sitemap, Django's
  ``contrib.sitemaps`` and asgi-sitemaps (on Starlette), each used as its own
  documentation shows a new user.

Every contender is timed from the WSGI / ASGI call to the drained body: wall time,
process CPU time, time to the first body byte. The plain reference of
``bench_page.py`` (f-strings, whole document) runs in this process and in every
peer's process, and each contender's ratio is to the reference measured in its own
process. Each repeat runs every contender once, in turn (the peers' subprocess
calls included), so a slow spell of the machine hits all alike; figures are medians.
Peak traced memory comes from one more request of each under tracemalloc, never
timed. Every answer is checked once before timing: status, well-formed XML, the
``<url>`` count, and each URL's fields against the data; defects are reported as
facts, never fatal. A peer that cannot be installed or fails is reported as such
and the run goes on.

Run from the repository root (the first run creates the peers' virtualenvs)::

    .venv/bin/python benchmarks/bench_peers.py [--repeat 7] [--json peers.json]
        [--entries 50000] [--peers flask-sitemapper,django] [--rebuild-venvs]
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import platform
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from bench_page import (
    BASE_URL,
    PAGE_PATH,
    EventLoopThread,
    Fetch,
    FingerprintedPosts,
    RowPosts,
    build_raw,
    fetch,
    fetch_asgi,
    library_version,
    make_app,
    make_asgi_app,
    peak_memory,
    render_reference,
)
from flask import Flask
from peers import peercommon  # imports nothing of this project (the peers' drivers use it)
from werkzeug.test import EnvironBuilder

import asgi_sitemap
from flask_sitemapper import Entry, Sitemapper
from sitemap_core.limits import MAX_URLS_PER_SITEMAP

HERE = Path(__file__).resolve().parent
PEERS_DIR = HERE / "peers"
#: The peers' virtualenvs, created once (git-ignored by benchmarks/.gitignore).
VENVS_DIR = HERE / ".peer-venvs"

# The peers ---------------------------------------------------------------------------

#: The Flask stack the two Flask peers run on: the dev venv's versions, so that the
#: framework's own cost is the same as under this project's Flask contenders.
FLASK_STACK = (
    "Flask==3.1.3",
    "Werkzeug==3.1.9",
    "Jinja2==3.1.6",
    "MarkupSafe==3.0.4",
    "itsdangerous==2.2.0",
    "click==8.5.1",
    "blinker==1.9.0",
)


@dataclass(frozen=True)
class Peer:
    """One peer: its key, its label, its driver script, its pinned requirements."""

    key: str
    label: str
    driver: str
    requirements: tuple[str, ...]
    #: The import name whose module must come from the peer's own venv.
    package: str


PEERS = (
    Peer(
        "flask-sitemapper",
        "flask-sitemapper 1.8.2 (Flask)",
        "drive_flask_sitemapper.py",
        ("flask-sitemapper==1.8.2", *FLASK_STACK),
        "flask_sitemapper",
    ),
    Peer(
        "flask-sitemap",
        "Flask-Sitemap 0.4.0 (Flask)",
        "drive_flask_sitemap.py",
        ("Flask-Sitemap==0.4.0", *FLASK_STACK),
        "flask_sitemap",
    ),
    Peer(
        "django",
        "Django 5.2.19 contrib.sitemaps (WSGI handler)",
        "drive_django.py",
        ("Django==5.2.19", "asgiref==3.13.0", "sqlparse==0.6.1"),
        "django",
    ),
    Peer(
        "asgi-sitemaps",
        "asgi-sitemaps 1.0.0 (Starlette)",
        "drive_asgi_sitemaps.py",
        (
            "asgi-sitemaps==1.0.0",
            "starlette==1.10.0",
            "anyio==4.16.0",
            "idna==3.20",
            "typing_extensions==4.16.0",
        ),
        "asgi_sitemaps",
    ),
)


class PeerError(Exception):
    """A peer could not be installed, started or asked: reported, never fatal."""


def log(message: str) -> None:
    """Progress on stderr (stdout carries the table)."""
    print(message, file=sys.stderr, flush=True)


def venv_python(path: Path) -> Path:
    """The interpreter of the virtualenv at ``path``."""
    return path / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_venv(peer: Peer, rebuild: bool = False) -> Path:
    """Create (once) the peer's virtualenv with its pinned requirements; its python.

    A stamp file holds the requirements and this interpreter's version; the venv is
    reused while both match, recreated otherwise (or with ``rebuild``).
    """
    path = VENVS_DIR / peer.key
    stamp = path / "bench-peers-stamp.txt"
    wanted = "\n".join([f"# python {platform.python_version()}", *peer.requirements]) + "\n"
    python = venv_python(path)
    if not rebuild and python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    if path.exists():
        shutil.rmtree(path)
    log(f"[{peer.key}] creating {path} (pip, once) ...")
    path.parent.mkdir(parents=True, exist_ok=True)
    steps = [
        [sys.executable, "-m", "venv", str(path)],
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
            *peer.requirements,
        ],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=900, env=clean_env())
        if done.returncode != 0:
            tail = (done.stdout + done.stderr).strip().splitlines()[-15:]
            raise PeerError(f"{' '.join(step[:4])} failed:\n" + "\n".join(tail))
    stamp.write_text(wanted)
    return python


def clean_env() -> dict[str, str]:
    """This environment without what would let a peer see the dev venv's packages."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
    }
    env["PYTHONUNBUFFERED"] = "1"
    return env


def freeze(python: Path) -> list[str]:
    """``pip freeze`` of a peer's venv (for the JSON: what exactly was measured)."""
    done = subprocess.run(
        [str(python), "-m", "pip", "freeze", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        env=clean_env(),
    )
    return done.stdout.split()


class PeerProcess:
    """A peer's driver running in its venv, asked one command at a time (JSON lines)."""

    def __init__(self, peer: Peer, python: Path, entries: int, timeout: float) -> None:
        self.peer = peer
        self.timeout = timeout
        # Lives as long as the driver (closed in close()): its stderr, shown on failure.
        self.stderr: IO[str] = tempfile.TemporaryFile("w+")  # noqa: SIM115
        self.process = subprocess.Popen(
            [str(python), str(PEERS_DIR / peer.driver), "--entries", str(entries)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
            bufsize=1,
            cwd=PEERS_DIR,
            env=clean_env(),
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.closed = False
        threading.Thread(target=self._read, daemon=True).start()
        try:
            self.ready = self._answer(timeout)
            where = str(self.ready.get("package_file", ""))
            # The clash this whole set-up avoids: our flask_sitemapper is not the peer's.
            if not where.startswith(str(python.parent.parent)):
                raise PeerError(f"{peer.package} was imported from {where!r}, not its venv")
        except BaseException:
            self.close()
            raise

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        for line in stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _answer(self, timeout: float) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise PeerError(f"no answer within {timeout:.0f} s") from None
        if line is None:
            raise PeerError("the driver exited:\n" + self.stderr_tail())
        answer: dict[str, Any] = json.loads(line)
        if not answer.get("ok"):
            raise PeerError(str(answer.get("error", answer)).strip())
        return answer

    def ask(self, command: str) -> dict[str, Any]:
        """Send ``command`` and return the driver's answer (PeerError if none or failed)."""
        stdin = self.process.stdin
        if stdin is None or self.process.poll() is not None:
            raise PeerError("the driver is not running:\n" + self.stderr_tail())
        stdin.write(json.dumps({"cmd": command}) + "\n")
        stdin.flush()
        return self._answer(self.timeout)

    def stderr_tail(self, lines: int = 15) -> str:
        """The last lines the driver wrote to stderr."""
        if self.stderr.closed:
            return ""
        self.stderr.seek(0)
        return "\n".join(self.stderr.read().strip().splitlines()[-lines:])

    def close(self) -> None:
        """Ask the driver to quit; end it if it does not (once; later calls do nothing)."""
        if self.closed:
            return
        self.closed = True
        try:
            if self.process.poll() is None and self.process.stdin is not None:
                self.process.stdin.write('{"cmd": "quit"}\n')
                self.process.stdin.flush()
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()  # our own child, by its handle
            self.process.wait()
        self.stderr.close()


# This project's contenders ----------------------------------------------------------

#: Request of one of this project's contenders: ``send(sink)``.
Request = Callable[[list[bytes] | None], Fetch]

OURS = {
    "rows": "this project: Flask, tuple rows (count=, fingerprint)",
    "entries": "this project: Flask, Entry per URL (count=, fingerprint)",
    "source": "this project: Flask, Quick start @source generator of Entry",
    "include": "this project: Flask, include(params=...), url_for per URL",
    "asgi_rows_async": "this project: ASGI, tuple rows, async generator",
    "asgi_rows_sync": "this project: ASGI, tuple rows, sync source in a thread",
    "asgi_source": "this project: ASGI, Quick start async generator of Entry",
}


def make_source_app(raw: list[peercommon.Raw]) -> Flask:
    """The Flask Quick start: a ``@sitemapper.source`` generator of ``Entry``.

    No ``count=``, no fingerprint: what a new user writes first. The page cache is
    off, as for every contender here, so that each request renders.
    """
    app = Flask("bench_peers_source")
    app.config["SITEMAP_BASE_URL"] = BASE_URL
    app.config["SITEMAP_CACHE"] = False
    sitemapper = Sitemapper(app)

    @sitemapper.source("posts")
    def posts() -> Iterator[Entry]:
        for loc, lastmod, changefreq, priority in raw:
            yield Entry(loc, lastmod=lastmod, changefreq=changefreq, priority=priority)

    return app


def make_include_app(raw: list[peercommon.Raw]) -> Flask:
    """The Flask Quick start's decorated route: ``include(params=...)``, ``url_for``.

    Each params item is ``(values, fields)``: the route's and the query's URL values
    (``url_for`` puts ``ref`` and ``x`` in the query string) and the URL's lastmod,
    changefreq and priority, as rows read per request would give them.
    """
    app = Flask("bench_peers_include")
    app.config["SITEMAP_BASE_URL"] = BASE_URL
    app.config["SITEMAP_CACHE"] = False
    sitemapper = Sitemapper(app)

    def post_params() -> list[tuple[dict[str, Any], dict[str, Any]]]:
        return [
            (
                {"post_id": i, "ref": "feed", "x": i % 7},
                {"lastmod": lastmod, "changefreq": changefreq, "priority": priority},
            )
            for i, (_, lastmod, changefreq, priority) in enumerate(raw)
        ]

    @app.get("/posts/<int:post_id>")
    @sitemapper.include(params=post_params)
    def post(post_id: int) -> str:
        return str(post_id)

    return app


def make_asgi_source_app(raw: list[peercommon.Raw]) -> asgi_sitemap.SitemapMiddleware:
    """The ASGI Quick start: ``sources={"posts": async generator of Entry}``."""

    async def posts() -> AsyncIterator[Entry]:
        for loc, lastmod, changefreq, priority in raw:
            yield Entry(loc, lastmod=lastmod, changefreq=changefreq, priority=priority)

    async def not_found(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    return asgi_sitemap.SitemapMiddleware(
        not_found, {"posts": posts}, base_url=BASE_URL, cache=False
    )


def our_requests(raw: list[peercommon.Raw], loop: EventLoopThread) -> dict[str, Request]:
    """This project's contenders, each as ``send(sink)`` making one request."""
    include_path = "/sitemap-pages-1.xml"
    flask_apps: dict[str, tuple[Flask, str]] = {
        "rows": (make_app(RowPosts(raw)), PAGE_PATH),
        "entries": (make_app(FingerprintedPosts(raw)), PAGE_PATH),
        "source": (make_source_app(raw), PAGE_PATH),
        "include": (make_include_app(raw), include_path),
    }
    asgi_apps = {
        "asgi_rows_async": make_asgi_app(RowPosts(raw), async_source=True),
        "asgi_rows_sync": make_asgi_app(RowPosts(raw)),
        "asgi_source": make_asgi_source_app(raw),
    }
    requests: dict[str, Request] = {}
    for name, (app, path) in flask_apps.items():
        requests[name] = _flask_request(app, path)
    for name, asgi in asgi_apps.items():
        requests[name] = _asgi_request(loop, asgi)
    return requests


def _flask_request(app: Flask, path: str) -> Request:
    if path == PAGE_PATH:
        return lambda sink: fetch(app, sink)

    def send(sink: list[bytes] | None) -> Fetch:
        # bench_page.fetch asks PAGE_PATH; the include() page has another path.
        environ = EnvironBuilder(path=path, base_url=BASE_URL).get_environ()
        return _fetch_environ(app, environ, sink)

    return send


def _asgi_request(loop: EventLoopThread, app: asgi_sitemap.SitemapMiddleware) -> Request:
    return lambda sink: fetch_asgi(loop, app, sink)


def _fetch_environ(app: Flask, environ: dict[str, Any], sink: list[bytes] | None) -> Fetch:
    """``bench_page.fetch``'s clocks and draining, for an environ of another path."""
    record = Fetch(0.0, 0.0, 0.0, 0, 0, "")

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        record.status, record.headers = status, list(headers)
        return lambda data: None

    cpu_started = time.process_time()
    started = time.perf_counter()
    body = app(environ, start_response)
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


def as_peer_fetch(record: Fetch) -> peercommon.Fetch:
    """``bench_page.Fetch`` as ``peercommon.Fetch``, for the shared checks."""
    return peercommon.Fetch(
        wall=record.total,
        cpu=record.cpu,
        first_byte=record.first_byte,
        chunks=record.chunks,
        size=record.size,
        status=int(record.status.split(" ", 1)[0] or 0),
        headers=list(record.headers),
    )


# The run -----------------------------------------------------------------------------


@dataclass
class Contender:
    """What is measured of one contender across the repeats."""

    key: str
    label: str
    peer: bool
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    first_byte: list[float] = field(default_factory=list)
    chunks: list[int] = field(default_factory=list)
    reference_wall: list[float] = field(default_factory=list)
    reference_cpu: list[float] = field(default_factory=list)
    peak_bytes: int | None = None
    reference_peak_bytes: int | None = None
    check: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    def summary(self) -> dict[str, Any]:
        """Medians and ratios (to the reference of the contender's own process)."""
        if self.error is not None or not self.wall:
            return {"error": self.error or "not measured"}
        wall, cpu = statistics.median(self.wall), statistics.median(self.cpu)
        ref_wall = statistics.median(self.reference_wall)
        ref_cpu = statistics.median(self.reference_cpu)
        first = statistics.median(self.first_byte)
        chunks = statistics.median(self.chunks)
        return {
            "wall_s": wall,
            "cpu_s": cpu,
            "reference_wall_s": ref_wall,
            "reference_cpu_s": ref_cpu,
            "ratio_wall": wall / ref_wall,
            "ratio_cpu": cpu / ref_cpu,
            "ratio_of_minimums": min(self.wall) / min(self.reference_wall),
            "first_byte_s": first,
            "first_byte_pct": 100 * first / wall,
            "chunks": chunks,
            "streamed": chunks > 1 and first < wall / 2,
            "peak_bytes": self.peak_bytes,
            "reference_peak_bytes": self.reference_peak_bytes,
            "valid": self.check.get("valid"),
        }


def timed_reference(raw: list[peercommon.Raw]) -> tuple[float, float]:
    """Wall and CPU seconds of ``bench_page.render_reference`` (after a collection)."""
    gc.collect()
    cpu_started = time.process_time()
    started = time.perf_counter()
    render_reference(raw)
    return time.perf_counter() - started, time.process_time() - cpu_started


def check_same_data(entries: int) -> None:
    """The peers' data and reference are bench_page's, byte for byte (else: stop)."""
    ours, theirs = build_raw(entries), peercommon.build_raw(entries)
    if ours != theirs or render_reference(ours) != peercommon.render_reference(theirs):
        raise SystemExit(
            "benchmarks/peers/peercommon.py no longer builds bench_page.py's data or "
            "reference: make build_raw / render_reference the same again"
        )


def start_peers(
    selected: list[Peer], entries: int, rebuild: bool, timeout: float
) -> tuple[dict[str, PeerProcess], dict[str, Contender]]:
    """Install and start every selected peer; a failing one is recorded, not raised."""
    processes: dict[str, PeerProcess] = {}
    contenders: dict[str, Contender] = {}
    for peer in selected:
        contender = Contender(peer.key, peer.label, peer=True)
        contenders[peer.key] = contender
        try:
            python = ensure_venv(peer, rebuild)
            contender.info["freeze"] = freeze(python)
            log(f"[{peer.key}] starting its driver ...")
            process = PeerProcess(peer, python, entries, timeout)
            processes[peer.key] = process
            contender.info.update(
                versions=process.ready.get("versions", {}), notes=process.ready.get("notes", [])
            )
            contender.check = process.ask("check")
        except (PeerError, OSError, subprocess.SubprocessError, ValueError) as error:
            contender.error = f"{type(error).__name__}: {error}"
            log(f"[{peer.key}] FAILED: {contender.error}")
            if peer.key in processes:
                processes.pop(peer.key).close()
    return processes, contenders


def run(
    entries: int, repeat: int, selected: list[Peer], rebuild: bool, timeout: float
) -> dict[str, Any]:
    """Check every contender, time them interleaved, measure memory; plain data back."""
    load_before = os.getloadavg()
    check_same_data(entries)
    raw = build_raw(entries)
    processes, peers = start_peers(selected, entries, rebuild, timeout)
    loop = EventLoopThread()
    try:
        requests = our_requests(raw, loop)
        ours = {key: Contender(key, label, peer=False) for key, label in OURS.items()}
        for key, send in requests.items():
            sink: list[bytes] = []
            try:
                record = send(sink)
                checked = peercommon.check_document(as_peer_fetch(record), b"".join(sink), raw)
                checked["reference_identical"] = b"".join(sink) == render_reference(raw)
                ours[key].check = checked
                send(None)  # warm-up beyond the checked request
            except Exception as error:  # a broken path is reported, like a broken peer
                ours[key].error = f"{type(error).__name__}: {error}"
                log(f"[{key}] FAILED: {ours[key].error}")
        reference_wall: list[float] = []
        reference_cpu: list[float] = []
        for number in range(1, repeat + 1):
            log(f"repeat {number}/{repeat} (load {os.getloadavg()[0]:.2f})")
            wall, cpu = timed_reference(raw)
            reference_wall.append(wall)
            reference_cpu.append(cpu)
            for key, send in requests.items():
                if ours[key].error is not None:
                    continue
                gc.collect()
                record = send(None)
                ours[key].wall.append(record.total)
                ours[key].cpu.append(record.cpu)
                ours[key].first_byte.append(record.first_byte)
                ours[key].chunks.append(record.chunks)
            for key, process in list(processes.items()):
                try:
                    answer = process.ask("run")
                except PeerError as error:
                    peers[key].error = f"PeerError during the timed runs: {error}"
                    log(f"[{key}] FAILED: {peers[key].error}")
                    processes.pop(key).close()
                    continue
                contender = peers[key]
                contender.wall.append(answer["peer"]["wall"])
                contender.cpu.append(answer["peer"]["cpu"])
                contender.first_byte.append(answer["peer"]["first_byte"])
                contender.chunks.append(answer["peer"]["chunks"])
                contender.reference_wall.append(answer["reference"]["wall"])
                contender.reference_cpu.append(answer["reference"]["cpu"])
        log("peak memory (tracemalloc, not timed) ...")
        reference_peak = peak_memory(lambda: render_reference(raw))
        for key, send in requests.items():
            contender = ours[key]
            contender.reference_wall, contender.reference_cpu = reference_wall, reference_cpu
            contender.reference_peak_bytes = reference_peak
            if contender.error is None:
                contender.peak_bytes = peak_memory(functools.partial(send, None))
        for key, process in list(processes.items()):
            try:
                answer = process.ask("memory")
                peers[key].peak_bytes = answer["peer"]
                peers[key].reference_peak_bytes = answer["reference"]
            except PeerError as error:
                peers[key].info["memory_error"] = str(error)
    finally:
        for process in processes.values():
            process.close()
        loop.close()
    load_after = os.getloadavg()
    contenders = {**ours, **peers}
    return {
        "machine": machine(load_before, load_after),
        "entries": entries,
        "repeat": repeat,
        "reference": {
            "wall_s": statistics.median(reference_wall),
            "cpu_s": statistics.median(reference_cpu),
            "peak_bytes": reference_peak,
            "times_s": reference_wall,
        },
        "contenders": {
            key: {
                "label": c.label,
                "peer": c.peer,
                **c.summary(),
                "check": c.check,
                "info": c.info,
                "times_s": c.wall,
                "cpu_times_s": c.cpu,
                "first_bytes_s": c.first_byte,
                "chunks_each": c.chunks,
                "reference_times_s": c.reference_wall,
                "reference_cpu_times_s": c.reference_cpu,
            }
            for key, c in contenders.items()
        },
    }


def machine(load_before: tuple[float, ...], load_after: tuple[float, ...]) -> dict[str, Any]:
    """What the figures were measured on, and how busy it was."""
    memory = "unknown"
    try:
        with open("/proc/meminfo") as meminfo:
            kib = int(meminfo.readline().split()[1])
        memory = f"{kib / 2**20:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "cpu_count": os.cpu_count(),
        "memory": memory,
        "load_before": list(load_before),
        "load_after": list(load_after),
        "library": library_version(),
    }


# Output ------------------------------------------------------------------------------


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def _mib(size: int | None) -> str:
    return "-" if size is None else f"{size / 2**20:,.1f} MiB"


def table(results: dict[str, Any]) -> str:
    """The results as Markdown: the machine, the table, then the checks' findings."""
    info = results["machine"]
    reference = results["reference"]
    load = "/".join(f"{x:.2f}" for x in info["load_before"])
    load_after = "/".join(f"{x:.2f}" for x in info["load_after"])
    lines = [
        f"Machine: {info['processor']}, {info['cpu_count']} CPUs, {info['memory']}, "
        f"{info['python']}, {info['platform']}; this project at {info['library']}. "
        f"Load average (1/5/15 min) before {load}, after {load_after}.",
        "",
        f"{results['entries']:,} URLs, median of {results['repeat']} interleaved runs; "
        "ratios to the plain reference measured in the same process (for a peer: in its "
        "own process).",
        "",
        "| Contender | Wall | CPU | x reference (wall) | x reference (CPU) | First byte | "
        "Peak memory | Streamed | Valid output |",
        "|---|---:|---:|---:|---:|---:|---:|:---:|:---:|",
        f"| Reference: plain f-strings, whole document, no checks | {_ms(reference['wall_s'])} "
        f"| {_ms(reference['cpu_s'])} | 1.00x | 1.00x | - | {_mib(reference['peak_bytes'])} "
        "| no | yes |",
    ]
    for row in results["contenders"].values():
        if "error" in row:
            lines.append(f"| {row['label']} | failed | | | | | | | |")
            continue
        valid = {True: "yes", False: "**no**", None: "?"}[row["valid"]]
        lines.append(
            f"| {row['label']} | {_ms(row['wall_s'])} | {_ms(row['cpu_s'])} | "
            f"{row['ratio_wall']:.2f}x | {row['ratio_cpu']:.2f}x | "
            f"{_ms(row['first_byte_s'])} ({row['first_byte_pct']:.0f}%) | "
            f"{_mib(row['peak_bytes'])} | {'yes' if row['streamed'] else 'no'} | {valid} |"
        )
    peer_refs = [
        f"{row['label'].split(' ')[0]} {_ms(row['reference_wall_s'])}"
        for row in results["contenders"].values()
        if row["peer"] and "error" not in row
    ]
    if peer_refs:
        lines += [
            "",
            f"The reference's median in this process: {_ms(reference['wall_s'])}; in each "
            f"peer's process: {', '.join(peer_refs)}.",
        ]
    lines += [
        "",
        "Locations: this project's contenders take the absolute URL from the data, except "
        "include(params=...), which builds each with url_for, as both Flask peers must "
        "(they take endpoints); Django and asgi-sitemaps take each row's path and add "
        "scheme and domain. The page cache is off for this project's contenders (every "
        "request renders); no peer caches here (flask-sitemapper's XML cache is off when "
        "url_variables is a function).",
    ]
    findings = []
    for row in results["contenders"].values():
        if "error" in row:
            # The last line says what failed; the JSON keeps the whole message.
            last = row["error"].strip().splitlines()[-1][:300]
            findings.append(f"* **{row['label']}**: failed ({last})")
            continue
        check = row["check"]
        facts = [*check.get("defects", []), *check.get("losses", [])]
        if facts:
            findings.append(f"* **{row['label']}**: " + "; ".join(facts))
    if findings:
        lines += ["", "What the checks found (one checked request each):", "", *findings]
    notes = [
        f"* {row['label']}: " + "; ".join(row["info"]["notes"])
        for row in results["contenders"].values()
        if row["peer"] and row.get("info", {}).get("notes")
    ]
    if notes:
        lines += ["", "How each peer was used:", "", *notes]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run, print the table, write JSON if asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--entries", type=int, default=MAX_URLS_PER_SITEMAP, help="URLs (1-50000)")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs of each (>= 1)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write results here")
    parser.add_argument(
        "--peers",
        default=",".join(peer.key for peer in PEERS),
        help="comma-separated peers to run ('' for none); default: all of "
        + ", ".join(peer.key for peer in PEERS),
    )
    parser.add_argument(
        "--rebuild-venvs", action="store_true", help="recreate the peers' virtualenvs"
    )
    parser.add_argument(
        "--timeout", type=float, default=600.0, help="seconds a peer may take per command"
    )
    args = parser.parse_args(argv)
    if not 1 <= args.entries <= MAX_URLS_PER_SITEMAP:
        parser.error(f"--entries must be between 1 and {MAX_URLS_PER_SITEMAP} (one page)")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    known = {peer.key: peer for peer in PEERS}
    wanted = [key.strip() for key in args.peers.split(",") if key.strip()]
    unknown = [key for key in wanted if key not in known]
    if unknown:
        parser.error(f"unknown peers {unknown}; known: {', '.join(known)}")

    results = run(
        args.entries, args.repeat, [known[key] for key in wanted], args.rebuild_venvs, args.timeout
    )
    results["command"] = " ".join([".venv/bin/python", "benchmarks/bench_peers.py", *sys.argv[1:]])
    print(table(results))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\nResults written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
