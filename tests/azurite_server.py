"""Azurite, Microsoft's Azure Storage emulator, for the ``az://`` tests of the build.

``scripts/_azurite.sh`` installs it from npm into ``.azurite/``. It runs on 127.0.0.1
on a free port, in memory, with its telemetry off (by default it reports to Azure);
the build reaches it through obstore with the emulator's variables
(:meth:`Azurite.env`), and :meth:`Azurite.request` signs the requests the tests make
themselves (creating the container, reading the blobs back) with the emulator's
well-known account key, as Azure's SharedKey scheme asks: another client than the
build's.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path

import httpx
import pytest
from http_process import http_process

ROOT = Path(__file__).resolve().parents[1]
BINARY = ROOT / ".azurite" / "node_modules" / ".bin" / "azurite-blob"
#: The emulator's account and key, published by Microsoft for every Azurite.
ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
_VERSION = "2021-08-06"
# The headers of the string to sign, in order (Azure's SharedKey for Blob storage).
_SIGNED = (
    "content-encoding", "content-language", "content-length", "content-md5", "content-type",
    "date", "if-modified-since", "if-match", "if-none-match", "if-unmodified-since", "range",
)  # fmt: skip


@dataclass(frozen=True)
class Azurite:
    """A running Azurite blob service."""

    port: int

    @property
    def endpoint(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """What obstore reads to use the emulator (its account, key and endpoint)."""
        return {"AZURE_STORAGE_USE_EMULATOR": "true", "AZURITE_BLOB_STORAGE_URL": self.endpoint}

    def request(
        self, method: str, path: str, query: Mapping[str, str] | None = None
    ) -> httpx.Response:
        """``method`` on ``/<container>[/<blob>]`` of the emulator's account, signed."""
        query = dict(query or {})
        headers = {
            "x-ms-date": format_datetime(datetime.now(UTC), usegmt=True),
            "x-ms-version": _VERSION,
        }
        signed = [method, *("" for _ in _SIGNED)]
        signed += [f"{name}:{value}" for name, value in sorted(headers.items())]
        resource = f"/{ACCOUNT}/{ACCOUNT}{path}"
        signed.append(resource + "".join(f"\n{k}:{v}" for k, v in sorted(query.items())))
        digest = hmac.new(base64.b64decode(KEY), "\n".join(signed).encode(), hashlib.sha256)
        signature = base64.b64encode(digest.digest()).decode()
        headers["Authorization"] = f"SharedKey {ACCOUNT}:{signature}"
        url = f"{self.endpoint}/{ACCOUNT}{path}"
        return httpx.request(method, url, params=query, headers=headers, trust_env=False)


@contextmanager
def azurite() -> Iterator[Azurite]:
    """Start Azurite's blob service on 127.0.0.1 and stop it afterwards."""
    if not os.access(BINARY, os.X_OK):
        reason = f"Azurite is not installed at {BINARY} (scripts/_azurite.sh installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    # Its working folder (debug log and the like) is the current one: a fresh one.
    with tempfile.TemporaryDirectory(prefix="azurite-") as workspace:

        def command(port: int) -> list[str]:
            return [
                str(BINARY),
                "--blobHost",
                "127.0.0.1",
                "--blobPort",
                str(port),
                "--inMemoryPersistence",
                "--disableTelemetry",
                "--skipApiVersionCheck",
                "--silent",
            ]

        with http_process(command, "Azurite", Path(workspace)) as port:
            yield Azurite(port)
