"""A test server in a process of its own, on a free port of 127.0.0.1 (moto, Azurite).

:func:`http_process` picks a port, starts the command made for it, waits until the
server answers HTTP there, and stops it afterwards; a port taken between the pick
and the bind is tried again.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

__all__ = ["free_port", "http_process"]


def free_port() -> int:
    """A port of 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(process: subprocess.Popen[bytes], port: int, name: str) -> bool:
    # True once the server answers; False if it exited (its port was taken).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=2, trust_env=False)
            return True
        except httpx.HTTPError:
            time.sleep(0.2)
    pytest.fail(f"{name} did not answer within 60 s")


@contextmanager
def http_process(
    command: Callable[[int], list[str]], name: str, cwd: Path | None = None
) -> Iterator[int]:
    """Run ``command(port)`` until it answers on ``port``; the port, then stop it."""
    for _ in range(5):  # a port picked free may be taken before the server binds it
        port = free_port()
        process = subprocess.Popen(
            command(port),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if _answers(process, port, name):
            break
    else:
        pytest.fail(f"{name} could not bind a port in 5 tries")
    try:
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
