"""A real S3-compatible server for the tests: moto's server mode on 127.0.0.1.

``moto[server]`` (dev extras) answers the S3 REST API over HTTP, as a bucket would;
the builds publish to it through obstore exactly as to AWS, configured by the same
environment variables (:meth:`S3Server.env`), and the tests read the objects back with
boto3, a different client. The server keeps everything in memory and is stopped at
the end.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from http_process import http_process


@dataclass(frozen=True)
class S3Server:
    """A running moto server: its endpoint."""

    port: int

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


@contextmanager
def s3_server() -> Iterator[S3Server]:
    """Start moto's S3 server on 127.0.0.1 and stop it afterwards."""
    pytest.importorskip("moto.server", reason="moto[server] is in the dev extras")

    def command(port: int) -> list[str]:
        return [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]

    with http_process(command, "moto's server") as port:
        yield S3Server(port)
