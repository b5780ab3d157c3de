"""Fixtures for the ASGI front tests: a real uvicorn, run in a thread of this process.

In-process, so that a test can read what a source did (counters, events) directly; on
a real socket with uvicorn's own HTTP protocol, so that disconnects, flow control and
concurrency are the server's, not a test client's. The socket is bound (port 0) before
uvicorn starts, so no other process can take the port in between.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
import uvicorn

#: How long uvicorn may take to start, and to stop once asked.
START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0


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
def serve_in_thread(app: Any) -> Iterator[ThreadedServer]:
    """Serve the ASGI ``app`` with uvicorn on 127.0.0.1 until the block ends."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
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


#: What the ``uvicorn_thread`` fixture gives: start a server for an app.
ServeApp = Callable[[Any], ThreadedServer]


@pytest.fixture
def uvicorn_thread() -> Iterator[ServeApp]:
    """Start in-process uvicorn servers (:func:`serve_in_thread`); all stop after the test."""
    with ExitStack() as stack:

        def start(app: Any) -> ThreadedServer:
            return stack.enter_context(serve_in_thread(app))

        yield start
