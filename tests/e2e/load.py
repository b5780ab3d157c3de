"""Load and slow-client machinery for the e2e suite and ``benchmarks/bench_load.py``.

Everything runs against real servers on 127.0.0.1 (see :mod:`servers`), bounded in
count and time. A *slow reader* is a raw socket that reads a few KiB, sleeps, and reads
again, as a crawler on a thin line does; *verified clients* fetch documents as fast as
they can and check every body (parsed, gunzipped, counted). The server's memory is read
from ``/proc``.
"""

from __future__ import annotations

import gzip
import random
import socket
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from lxml import etree

from .servers import HTTP_TIMEOUT, proc_children, proc_memory_kib

#: The app every load test serves: a plain generator source (the Quick start's shape)
#: and a fingerprinted sliceable, on Starlette (uvicorn) and Flask (gunicorn).
LOAD_APP = '''
"""Apps for the load tests: ENTRIES posts from a plain generator, and PAGES pages."""
import os

from flask import Flask
from starlette.applications import Starlette
from starlette.middleware import Middleware

from asgi_sitemap import SitemapMiddleware
from flask_sitemapper import Entry, Sitemapper

ENTRIES = int(os.environ.get("LOAD_ENTRIES", "20000"))
BASE = "https://load.example.com"


def posts():
    for i in range(ENTRIES):
        yield Entry(f"{BASE}/posts/{i}", lastmod="2024-05-01T10:00:00+00:00")


class Pages:
    def __len__(self):
        return ENTRIES

    def __getitem__(self, window):
        return [f"{BASE}/pages/{i}" for i in range(*window.indices(ENTRIES))]

    def fingerprint(self):
        return "v1"


asgi_app = Starlette(
    middleware=[
        Middleware(
            SitemapMiddleware,
            sources={"posts": posts, "pages": Pages()},
            base_url=BASE,
            page_size=ENTRIES,
        )
    ]
)

flask_app = Flask(__name__)
flask_app.config.update(SITEMAP_BASE_URL=BASE, SITEMAP_PAGE_SIZE=ENTRIES)
sitemapper = Sitemapper(flask_app)
sitemapper.add_source("posts", posts)
sitemapper.add_source("pages", Pages())
'''

NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"

#: Entries per source of the load app, and what each document it serves must hold.
LOAD_ENTRIES = 20_000
LOAD_EXPECTED = {
    "/sitemap.xml": 2,
    "/sitemap-posts-1.xml": LOAD_ENTRIES,
    "/sitemap-pages-1.xml": LOAD_ENTRIES,
    "/sitemap-posts-1.xml.gz": LOAD_ENTRIES,
}
#: The environment the load app's servers run with.
LOAD_ENV = {"LOAD_ENTRIES": str(LOAD_ENTRIES)}


def write_load_app(folder: Path) -> None:
    """Write the load app module into ``folder``."""
    (folder / "load_app.py").write_text(LOAD_APP)


def server_rss_kib(pid: int) -> int:
    """Resident memory of a server: the process and its direct children (workers)."""
    total = 0
    for each in (pid, *proc_children(pid)):
        try:
            total += proc_memory_kib(each).get("VmRSS", 0)
        except OSError:
            continue
    return total


@dataclass
class MemorySampler:
    """Samples a server's RSS in a thread until stopped."""

    pid: int
    every: float = 0.1
    samples: list[int] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> MemorySampler:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append(server_rss_kib(self.pid))
            self._stop.wait(self.every)

    @property
    def peak(self) -> int:
        """The highest sample, in KiB."""
        return max(self.samples, default=0)


@dataclass
class SlowRead:
    """What one slow reader got."""

    status: int = 0
    received: int = 0
    complete: bool = False
    error: str = ""
    #: Seconds from connecting to the end of the response's head.
    waited: float = 0.0
    #: What it asked.
    path: str = ""


def slow_reader(
    port: int, path: str, *, rate: int, seconds: float, result: SlowRead, gzip_ok: bool = False
) -> None:
    """Read ``path`` at about ``rate`` bytes/s for at most ``seconds``, then leave."""
    request = (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n"
        + ("Accept-Encoding: gzip\r\n" if gzip_ok else "")
        + "\r\n"
    ).encode()
    step = 4096
    started = time.monotonic()
    deadline = started + seconds
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            # A small receive buffer, so the server really has to wait for this reader.
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
            conn.sendall(request)
            head = b""
            while b"\r\n\r\n" not in head:
                part = conn.recv(step)
                if not part:
                    break
                head += part
            result.status = int(head.split(b" ", 2)[1]) if head else 0
            result.waited = time.monotonic() - started
            result.received = len(head)
            while time.monotonic() < deadline:
                part = conn.recv(step)
                if not part:
                    result.complete = True
                    break
                result.received += len(part)
                time.sleep(step / rate)
    except OSError as exc:
        result.error = repr(exc)


def slow_readers(
    port: int, path: str, count: int, *, rate: int, seconds: float
) -> tuple[list[SlowRead], list[threading.Thread]]:
    """Start ``count`` slow readers of ``path`` (threads); join them yourself."""
    results = [SlowRead() for _ in range(count)]
    threads = [
        threading.Thread(
            target=slow_reader,
            args=(port, path),
            kwargs={"rate": rate, "seconds": seconds, "result": result},
            daemon=True,
        )
        for result in results
    ]
    for thread in threads:
        thread.start()
    return results, threads


def url_count(body: bytes) -> int:
    """How many ``<url>`` (or ``<sitemap>``) elements a document has; raises if malformed."""
    root = etree.fromstring(body, etree.XMLParser(resolve_entities=False, no_network=True))
    return sum(1 for child in root if child.tag in (f"{NS}url", f"{NS}sitemap"))


@dataclass
class Verified:
    """What verified clients did: every answer checked, latencies in seconds."""

    checked: int = 0
    errors: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    #: The same latencies, by path asked.
    by_path: dict[str, list[float]] = field(default_factory=dict)

    def percentile(self, share: float) -> float:
        """The latency at ``share`` (0-1) of the sorted answers, in seconds."""
        if not self.latencies:
            return 0.0
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))]

    @property
    def median(self) -> float:
        """The median latency, in seconds."""
        return statistics.median(self.latencies) if self.latencies else 0.0


#: What a load client asks, and how many ``<url>`` each answer must hold (None: a
#: page of the app, which must only answer 200).
Expectations = dict[str, int | None]


def verified_clients(
    base_url: str,
    expected: Expectations,
    *,
    clients: int,
    seconds: float,
    check: Callable[[str, httpx.Response, bytes], str | None] | None = None,
) -> Verified:
    """``clients`` threads fetching the paths of ``expected`` for ``seconds``, each body
    checked: 200, gunzipped when gzip was sent, well-formed, the expected count (a
    path expecting None: 200 only)."""
    result = Verified()
    lock = threading.Lock()
    deadline = time.monotonic() + seconds
    paths = sorted(expected)

    def run(seed: int) -> None:
        pick = random.Random(seed)
        with httpx.Client(timeout=HTTP_TIMEOUT, trust_env=False) as client:
            while time.monotonic() < deadline:
                path = pick.choice(paths)
                coding = pick.choice(["gzip", "identity"])
                started = time.monotonic()
                error = None
                try:
                    with client.stream(
                        "GET", base_url + path, headers={"Accept-Encoding": coding}
                    ) as response:
                        raw = b"".join(response.iter_raw())
                    body = raw
                    if response.headers.get("content-encoding") == "gzip":
                        body = gzip.decompress(raw)
                    if path.endswith(".gz"):
                        body = gzip.decompress(body)
                    if response.status_code != 200:
                        error = f"{path}: status {response.status_code}"
                    elif expected[path] is None:
                        pass
                    elif (found := url_count(body)) != expected[path]:
                        error = f"{path}: {found} elements, expected {expected[path]}"
                    elif check is not None:
                        error = check(path, response, body)
                except Exception as exc:
                    error = f"{path}: {exc!r}"
                with lock:
                    took = time.monotonic() - started
                    result.latencies.append(took)
                    result.by_path.setdefault(path, []).append(took)
                    result.checked += 1
                    if error:
                        result.errors.append(error)

    threads = [threading.Thread(target=run, args=(seed,), daemon=True) for seed in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds + 120)
    return result
