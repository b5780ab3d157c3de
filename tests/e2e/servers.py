"""Real gunicorn and uvicorn processes for the end-to-end tests.

Nothing here imports an example app into the test process: the examples create their
databases on first run (the Flask blog at import time, the ASGI ones at start-up), so
they only ever run in subprocesses whose database variable (:data:`DATABASE_VARIABLES`)
points into pytest's temporary directory. :func:`run_gunicorn` and :func:`run_uvicorn`
refuse to start an example without it: the user's own database files in ``examples/``
are never opened, nor created.
"""

from __future__ import annotations

import os
import re
import signal
import socket
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
EXAMPLES_ROOT = PROJECT_ROOT / "examples"

#: The environment variable naming each example's database file (by folder name).
#: Unset, an example creates its database next to its ``app.py``.
DATABASE_VARIABLES = {
    "flask_blog": "BLOG_DATABASE",
    "starlette_app": "STARLETTE_DATABASE",
    "fastapi_app": "FASTAPI_DATABASE",
    "multisite": "MULTISITE_DATABASE",
}

#: Every HTTP call of the e2e tests uses this: generous reads (a child sitemap is built
#: on the fly), short connects (the server is local).
HTTP_TIMEOUT = httpx.Timeout(60.0, connect=5.0)
#: How long a server may take to listen and boot its workers.
START_TIMEOUT = 60.0
#: How long a server may take to exit after SIGTERM before it is killed.
STOP_TIMEOUT = 15.0
#: How often a free port is picked again when uvicorn finds it taken meanwhile.
PORT_ATTEMPTS = 3

_GUNICORN_LISTENING = re.compile(rb"Listening at: http://127\.0\.0\.1:(\d+)")
_ADDRESS_IN_USE = re.compile(rb"address already in use", re.IGNORECASE)


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
class Server:
    """A running server process, its port and its captured log (stdout + stderr)."""

    process: subprocess.Popen[bytes]
    port: int
    log_path: Path

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
        """Everything the server (and the app) wrote so far."""
        return self.log_path.read_text(errors="replace")


@dataclass
class GunicornServer(Server):
    """A gunicorn master and the number of sync workers it runs."""

    workers: int

    def worker_pids(self) -> list[int]:
        """PIDs of the worker processes (children of the master)."""
        return proc_children(self.process.pid)


@dataclass
class UvicornServer(Server):
    """A uvicorn process (with ``workers > 1``, the supervisor of its workers)."""


#: What the ``start_gunicorn`` fixture gives: :func:`run_gunicorn`'s arguments, minus
#: the log directory, returning the running server.
StartGunicorn = Callable[..., GunicornServer]


def clean_env(extra: Mapping[str, str], pythonpath: list[Path]) -> dict[str, str]:
    """The test process's environment without what would change an example, plus ``extra``."""
    dropped = {*DATABASE_VARIABLES.values(), "PYTHONPATH", "SITEMAP_BASE_URL"}
    env = {
        name: value
        for name, value in os.environ.items()
        # FLASK_* would reach app.config through from_prefixed_env (FLASK_SITEMAP_BASE_URL
        # changes every URL), SITEMAP_* does the same for the ASGI examples (base URL,
        # page size, cache), and a database variable must only ever be the one given here.
        if not name.startswith(("FLASK_", "SITEMAP_")) and name not in dropped
    }
    # The project first, so the sitemap packages are the working-tree ones whatever
    # state the editable install is in.
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in [PROJECT_ROOT, *pythonpath])
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ in examples/ or tmp dirs
    env.update(extra)
    return env


def refuse_example_database(chdir: Path, env: Mapping[str, str] | None) -> None:
    """Raise unless an example started from ``chdir`` gets a database outside ``examples/``."""
    folder = Path(chdir).resolve()
    if folder.parent != EXAMPLES_ROOT:
        return
    variable = DATABASE_VARIABLES.get(folder.name)
    if variable is None:
        raise ValueError(f"unknown example {folder}: add its database variable")
    database = (env or {}).get(variable)
    if not database or Path(database).resolve().is_relative_to(EXAMPLES_ROOT):
        # Unset, the example creates (and then serves) a file in its own folder.
        raise ValueError(f"{variable} must point outside {EXAMPLES_ROOT}: {database!r}")


def _tail(text: str, lines: int = 60) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _log_path(log_dir: Path, kind: str, app: str) -> Path:
    log_dir.mkdir(parents=True, exist_ok=True)
    return log_dir / f"{kind}-{app.replace(':', '-')}-{time.monotonic_ns()}.log"


def _spawn(
    command: list[str], cwd: Path, env: dict[str, str], log_path: Path
) -> subprocess.Popen[bytes]:
    with log_path.open("wb") as log_file:
        return subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: killable as a whole
        )


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
    any_status: bool = False,
    worker_class: str = "sync",
    threads: int = 1,
) -> Iterator[GunicornServer]:
    """Run ``gunicorn <app>`` from ``chdir`` on 127.0.0.1 until the block ends.

    ``worker_class`` and ``threads`` are gunicorn's own (``gthread`` with ``threads``,
    or ``uvicorn.workers.UvicornWorker`` for an ASGI app).

    The port is picked by the kernel (``--bind 127.0.0.1:0``, read back from gunicorn's
    "Listening at" line), so there is no window in which another process could take
    it. The block starts once every worker is up and ``ready_path`` answers 200 (any
    HTTP answer with ``any_status``: for tests of apps that may answer errors).
    """
    refuse_example_database(chdir, env)
    log_path = _log_path(log_dir, "gunicorn", app)
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
        worker_class,
        "--threads",
        str(threads),
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
    process = _spawn(command, PROJECT_ROOT, clean_env(env or {}, pythonpath or []), log_path)
    try:
        yield _wait_for_gunicorn(process, log_path, workers, ready_path, any_status)
    finally:
        stop_process(process)


def _wait_for_gunicorn(
    process: subprocess.Popen[bytes],
    log_path: Path,
    workers: int,
    ready_path: str,
    any_status: bool,
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
                match = _GUNICORN_LISTENING.search(log_path.read_bytes())
                if match is not None:
                    server = GunicornServer(process, int(match.group(1)), log_path, workers)
            if server is not None and len(server.worker_pids()) == workers:
                last_error = _probe(client, server, ready_path, any_status)
                if not last_error:
                    return server
            time.sleep(0.1)
    pytest.fail(
        f"gunicorn did not answer within {START_TIMEOUT:.0f} s (last: {last_error});"
        f" its output:\n{_tail(log_path.read_text(errors='replace'))}"
    )


def free_port() -> int:
    """A port that was free a moment ago (the kernel's pick for a socket bound to port 0).

    uvicorn takes a port number, not a bound socket, so there is a window between this
    and uvicorn's own bind; :func:`run_uvicorn` tries again when the port got taken.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@contextmanager
def run_uvicorn(
    app: str,
    chdir: Path,
    log_dir: Path,
    *,
    workers: int = 1,
    env: Mapping[str, str] | None = None,
    pythonpath: list[Path] | None = None,
    ready_path: str = "/robots.txt",
    any_status: bool = False,
) -> Iterator[UvicornServer]:
    """Run ``python -m uvicorn <app>`` from ``chdir`` on 127.0.0.1 until the block ends.

    uvicorn binds only after the app's lifespan start-up has finished, so the block
    starts once ``ready_path`` answers 200 (any HTTP answer with ``any_status``): the
    examples' databases exist by then.
    """
    refuse_example_database(chdir, env)
    for _attempt in range(PORT_ATTEMPTS):
        port = free_port()
        log_path = _log_path(log_dir, "uvicorn", app)
        command = [
            sys.executable,
            "-m",
            "uvicorn",
            app,
            "--app-dir",
            str(chdir),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--timeout-graceful-shutdown",
            "5",
            "--log-level",
            "info",
        ]
        process = _spawn(command, Path(chdir), clean_env(env or {}, pythonpath or []), log_path)
        try:
            server = _wait_for_uvicorn(process, port, log_path, ready_path, any_status)
            if server is None:
                continue  # the port was taken between free_port() and uvicorn's bind
            yield server
            return
        finally:
            stop_process(process)
    pytest.fail(f"uvicorn found its port taken {PORT_ATTEMPTS} times in a row")


def _wait_for_uvicorn(
    process: subprocess.Popen[bytes], port: int, log_path: Path, ready_path: str, any_status: bool
) -> UvicornServer | None:
    deadline = time.monotonic() + START_TIMEOUT
    server = UvicornServer(process, port, log_path)
    last_error = "no attempt yet"
    with httpx.Client(timeout=httpx.Timeout(5.0), trust_env=False) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                if _ADDRESS_IN_USE.search(log_path.read_bytes()):
                    return None
                pytest.fail(
                    f"uvicorn exited with status {process.returncode} before answering;"
                    f" its output:\n{_tail(server.log())}"
                )
            last_error = _probe(client, server, ready_path, any_status)
            if not last_error:
                return server
            time.sleep(0.1)
    pytest.fail(
        f"uvicorn did not answer within {START_TIMEOUT:.0f} s (last: {last_error});"
        f" its output:\n{_tail(server.log())}"
    )


def _probe(client: httpx.Client, server: Server, path: str, any_status: bool = False) -> str:
    """'' when ``path`` answers 200 (or anything, with ``any_status``), else what went wrong."""
    try:
        response = client.get(server.url(path))
    except httpx.HTTPError as exc:
        return repr(exc)
    if any_status or response.status_code == 200:
        return ""
    return f"GET {path} -> {response.status_code}"


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM a server started by this module; SIGKILL its process group if it hangs."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)  # graceful: the master stops its workers
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        # The master is alive (not reaped), so its process group (start_new_session)
        # is still exactly the master and its workers.
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=STOP_TIMEOUT)
