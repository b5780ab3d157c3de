"""Real servers run in a thread of the test process, on 127.0.0.1, for in-process tests.

In-process, so that a test can read what a source did (counters, events) directly; on
a real socket with the server's own HTTP protocol, so that disconnects, flow control and
concurrency are the server's, not a test client's. The socket is bound (port 0) before
the server starts, so no other process can take the port in between, and so the origin
is known before the app is built (apps whose sources list URLs of their own origin).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import uvicorn
from werkzeug.serving import make_server

#: How long a server may take to start, and to stop once asked.
START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0

#: Builds the app to serve from the server's origin (``http://127.0.0.1:<port>``).
Build = Callable[[str], Any]


@dataclass
class ThreadedServer:
    """A uvicorn server running in a background thread of the test process."""

    server: uvicorn.Server
    thread: threading.Thread
    port: int

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        """The absolute URL of ``path`` on this server."""
        return self.base_url + path


@contextmanager
def uvicorn_in_thread(build: Build) -> Iterator[ThreadedServer]:
    """Serve the ASGI app ``build(origin)`` with uvicorn until the block ends."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = build(f"http://127.0.0.1:{port}")
    config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    # uvicorn installs no signal handlers outside the main thread; should_exit stops it.
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="uvicorn", daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                pytest.fail("uvicorn did not start")
            time.sleep(0.01)
        yield ThreadedServer(server, thread, port)
    finally:
        server.should_exit = True
        thread.join(STOP_TIMEOUT)
        if thread.is_alive():
            server.force_exit = True  # a stream that ignored the shutdown: cut it
            thread.join(STOP_TIMEOUT)
        sock.close()
        assert not thread.is_alive(), "uvicorn did not stop"


@contextmanager
def werkzeug_in_thread(build: Build) -> Iterator[str]:
    """Serve the WSGI app ``build(origin)`` with Werkzeug's threaded server; yield origin."""
    holder: dict[str, Any] = {}

    def dispatch(environ: dict[str, Any], start_response: Any) -> Any:
        return holder["app"](environ, start_response)

    server = make_server("127.0.0.1", 0, dispatch, threaded=True)
    origin = f"http://127.0.0.1:{server.server_port}"
    holder["app"] = build(origin)
    thread = threading.Thread(target=server.serve_forever, name="werkzeug", daemon=True)
    thread.start()
    try:
        yield origin
    finally:
        server.shutdown()
        server.server_close()
        thread.join(STOP_TIMEOUT)


@contextmanager
def serve_live(build: Build, *, asgi: bool) -> Iterator[str]:
    """Serve ``build(origin)`` (an ASGI app if ``asgi``, else WSGI); yield the origin."""
    if asgi:
        with uvicorn_in_thread(build) as server:
            yield server.base_url
    else:
        with werkzeug_in_thread(build) as origin:
            yield origin
