"""The ASGI scope of a plain GET, for tests that call an ASGI app in-process."""

from __future__ import annotations

from typing import Any

__all__ = ["get_scope"]


def get_scope(path: str, *headers: tuple[bytes, bytes]) -> dict[str, Any]:
    """The HTTP scope of ``GET path`` on ``http://localhost`` (no query, no root path),
    with the ``host`` header followed by ``headers``."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"localhost"), *headers],
        "server": ("localhost", 80),
        "client": ("127.0.0.1", 12345),
    }
