"""A real S3-compatible server for the tests: moto's server mode on 127.0.0.1.

``moto[server]`` (dev extras) answers the S3 REST API over HTTP, as a bucket would;
the builds publish to it through obstore exactly as to AWS, configured by the same
environment variables (:meth:`S3Server.env`), and the tests read the objects back with
boto3, a different client. The server keeps everything in memory and is stopped at
the end.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class S3Server:
    """A running moto server: its endpoint and its process."""

    port: int
    process: subprocess.Popen[bytes]

    @property
    def endpoint(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """The variables the AWS tools (and obstore) read: endpoint, keys, region."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "us-east-1",
            "AWS_DEFAULT_REGION": "us-east-1",
        }

    def client(self) -> Any:
        """A boto3 S3 client of this server."""
        import boto3

        env = self.env()
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
            region_name=env["AWS_REGION"],
        )


def _wait(process: subprocess.Popen[bytes], port: int) -> bool:
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
    pytest.fail("moto's server did not answer within 60 s")


@contextmanager
def s3_server() -> Iterator[S3Server]:
    """Start moto's S3 server on 127.0.0.1 and stop it afterwards."""
    pytest.importorskip("moto.server", reason="moto[server] is in the dev extras")
    for _ in range(5):  # a port picked free may be taken before the server binds it
        port = _free_port()
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if _wait(process, port):
            break
    else:
        pytest.fail("moto's server could not bind a port in 5 tries")
    try:
        yield S3Server(port, process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
