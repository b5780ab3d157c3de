"""Fixtures for the ASGI front tests: a real uvicorn, run in a thread of this process
(see :mod:`live`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest
from live import ThreadedServer, uvicorn_in_thread


@contextmanager
def serve_in_thread(app: Any) -> Iterator[ThreadedServer]:
    """Serve the ASGI ``app`` with uvicorn on 127.0.0.1 until the block ends."""
    with uvicorn_in_thread(lambda origin: app) as server:
        yield server


#: What the ``uvicorn_thread`` fixture gives: start a server for an app.
ServeApp = Callable[[Any], ThreadedServer]


@pytest.fixture
def uvicorn_thread() -> Iterator[ServeApp]:
    """Start in-process uvicorn servers (:func:`serve_in_thread`); all stop after the test."""
    with ExitStack() as stack:

        def start(app: Any) -> ThreadedServer:
            return stack.enter_context(serve_in_thread(app))

        yield start
