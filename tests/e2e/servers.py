"""Real gunicorn processes for the end-to-end tests, and what the example serves.

Nothing here imports the example app into the test process: ``examples/flask_blog/app.py``
creates its database at import time, so it only ever runs in subprocesses whose
``BLOG_DATABASE`` points into pytest's temporary directory, and :func:`run_gunicorn`
refuses to start the example without such a ``BLOG_DATABASE``: the user's ``blog.db``
is never opened.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_DIR = PROJECT_ROOT / "examples" / "flask_blog"

#: Every HTTP call of the e2e tests uses this: generous reads (a child sitemap is built
#: on the fly), short connects (the server is local).
HTTP_TIMEOUT = httpx.Timeout(60.0, connect=5.0)
#: How long gunicorn may take to listen and boot its workers.
START_TIMEOUT = 60.0
#: How long gunicorn may take to exit after SIGTERM before it is killed.
STOP_TIMEOUT = 15.0

#: What the example serves (kept here, not imported: importing app.py creates a database).
POST_COUNT = 120_000
PAGE_SIZE = 50_000
STATIC_PATHS = ("/", "/about", "/contact")
TAGS = ("flask", "python", "sitemaps", "sqlite", "wsgi", "asgi", "http", "caching")
POST_PAGES = (1, 2, 3)

_LISTENING = re.compile(rb"Listening at: http://127\.0\.0\.1:(\d+)")


def page_urls(base_url: str) -> list[str]:
    """The 11 non-post pages the example lists, in sitemap order."""
    return [base_url + path for path in STATIC_PATHS] + [f"{base_url}/tags/{t}" for t in TAGS]


def post_urls(base_url: str, start: int = 1, stop: int = POST_COUNT + 1) -> list[str]:
    """``/posts/<id>`` URLs for ids in ``[start, stop)``, in sitemap order."""
    return [f"{base_url}/posts/{n}" for n in range(start, stop)]


def expected_page_urls(base_url: str) -> list[str]:
    """Every page URL the example's sitemap must list: 11 pages and 120,000 posts."""
    return page_urls(base_url) + post_urls(base_url)


def proc_children(pid: int) -> list[int]:
    """Direct children of ``pid``, read from ``/proc`` (no psutil)."""
    children: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue  # the thread ended meanwhile
    return sorted(set(children))


def proc_memory_kib(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` (peak RSS) of ``pid`` in KiB, from ``/proc/<pid>/status``."""
    values: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            values[name] = int(rest.split()[0])  # "  12345 kB"
    return values


@dataclass
class GunicornServer:
    """A running gunicorn master, its port and its captured log (stdout + stderr)."""

    process: subprocess.Popen[bytes]
    port: int
    log_path: Path
    workers: int

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``, without a trailing slash."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def homepage(self) -> str:
        """The homepage URL, as the crawler adapters take it."""
        return self.base_url + "/"

    def url(self, path: str) -> str:
        """The absolute URL of ``path`` on this server."""
        return self.base_url + path

    def log(self) -> str:
        """Everything gunicorn (and the app) wrote so far."""
        return self.log_path.read_text(errors="replace")

    def worker_pids(self) -> list[int]:
        """PIDs of the worker processes (children of the master)."""
        return proc_children(self.process.pid)


#: What the ``start_gunicorn`` fixture gives: :func:`run_gunicorn`'s arguments, minus
#: the log directory, returning the running server.
StartGunicorn = Callable[..., GunicornServer]


def clean_env(extra: Mapping[str, str], pythonpath: list[Path]) -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        # FLASK_* would reach app.config through from_prefixed_env (FLASK_SITEMAP_BASE_URL
        # changes every URL); BLOG_DATABASE must only ever be the one given here.
        if not name.startswith("FLASK_") and name not in ("BLOG_DATABASE", "PYTHONPATH")
    }
    # The project first, so flask_sitemapper / sitemap_core are the working-tree
    # packages whatever state the editable install is in.
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in [PROJECT_ROOT, *pythonpath])
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ in examples/ or tmp dirs
    env.update(extra)
    return env


def _tail(text: str, lines: int = 60) -> str:
    return "\n".join(text.splitlines()[-lines:])


@contextmanager
def run_gunicorn(
    app: str,
    chdir: Path,
    log_dir: Path,
    *,
    workers: int = 1,
    env: Mapping[str, str] | None = None,
    pythonpath: list[Path] | None = None,
    ready_path: str = "/robots.txt",
) -> Iterator[GunicornServer]:
    """Run ``gunicorn <app>`` from ``chdir`` on 127.0.0.1 until the block ends.

    The port is picked by the kernel (``--bind 127.0.0.1:0``, read back from gunicorn's
    "Listening at" line), so there is no window in which another process could take
    it. The block starts once every worker is up and ``ready_path`` answers 200.
    """
    if Path(chdir).resolve() == EXAMPLE_DIR:
        # The example creates (and then serves) whatever BLOG_DATABASE names, and
        # examples/flask_blog/blog.db when it is unset: the user's file.
        database = (env or {}).get("BLOG_DATABASE")
        if not database or Path(database).resolve().parent == EXAMPLE_DIR:
            raise ValueError(f"BLOG_DATABASE must point outside {EXAMPLE_DIR}: {database!r}")
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"gunicorn-{app.replace(':', '-')}-{time.monotonic_ns()}.log"
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "--chdir",
        str(chdir),
        "--bind",
        "127.0.0.1:0",
        "--workers",
        str(workers),
        "--worker-class",
        "sync",
        "--timeout",
        "120",
        "--graceful-timeout",
        "5",
        # The default control socket is one per user ($HOME/.gunicorn/gunicorn.ctl):
        # concurrent test runs would fight over it.
        "--no-control-socket",
        "--log-level",
        "info",
        app,
    ]
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            command,
            cwd=PROJECT_ROOT,
            env=clean_env(env or {}, pythonpath or []),
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: killable as a whole
        )
    try:
        server = _wait_until_ready(process, log_path, workers, ready_path)
        yield server
    finally:
        _stop(process)


def _wait_until_ready(
    process: subprocess.Popen[bytes], log_path: Path, workers: int, ready_path: str
) -> GunicornServer:
    deadline = time.monotonic() + START_TIMEOUT
    server: GunicornServer | None = None
    last_error = "no attempt yet"
    with httpx.Client(timeout=httpx.Timeout(5.0), trust_env=False) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(
                    f"gunicorn exited with status {process.returncode} before answering;"
                    f" its output:\n{_tail(log_path.read_text(errors='replace'))}"
                )
            if server is None:
                match = _LISTENING.search(log_path.read_bytes())
                if match is not None:
                    server = GunicornServer(process, int(match.group(1)), log_path, workers)
            if server is not None and len(server.worker_pids()) == workers:
                try:
                    response = client.get(server.url(ready_path))
                    if response.status_code == 200:
                        return server
                    last_error = f"GET {ready_path} -> {response.status_code}"
                except httpx.HTTPError as exc:
                    last_error = repr(exc)
            time.sleep(0.1)
    pytest.fail(
        f"gunicorn did not answer within {START_TIMEOUT:.0f} s (last: {last_error});"
        f" its output:\n{_tail(log_path.read_text(errors='replace'))}"
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)  # graceful: the master stops its workers
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        # Our own process group (start_new_session): master and workers at once.
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=STOP_TIMEOUT)
