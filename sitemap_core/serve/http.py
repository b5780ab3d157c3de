"""HTTP replies the fronts translate to their framework: status, headers, body.

Nothing here performs I/O; a :class:`Reply` body is an iterable of ``bytes`` that the
front writes out (WSGI) or iterates asynchronously (ASGI).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "ALLOWED_METHODS",
    "HTML",
    "TEXT",
    "XML",
    "Reply",
    "bad_request",
    "method_not_allowed",
    "not_found",
    "plain_text",
]

XML: Final = "application/xml; charset=utf-8"
HTML: Final = "text/html; charset=utf-8"
TEXT: Final = "text/plain; charset=utf-8"
ALLOWED_METHODS: Final = ("GET", "HEAD")


@dataclass
class Reply:
    """A complete answer: status code, header list and a (possibly lazy) body."""

    status: int
    headers: list[tuple[str, str]]
    body: Iterable[bytes] | AsyncIterable[bytes] = field(default=())

    def header(self, name: str) -> str | None:
        """Return the first header called ``name`` (case-insensitive), if any."""
        lowered = name.lower()
        return next((v for k, v in self.headers if k.lower() == lowered), None)


def plain_text(status: int, text: str | bytes, head: bool = False) -> Reply:
    """A small fully-known ``text/plain`` reply (robots.txt, errors)."""
    data = text if isinstance(text, bytes) else text.encode()
    headers = [("Content-Type", TEXT), ("Content-Length", str(len(data)))]
    return Reply(status, headers, () if head else (data,))


def not_found(head: bool = False) -> Reply:
    """404: unknown path, section or page number."""
    return plain_text(404, "Not Found\n", head)


def bad_request(reason: str, head: bool = False) -> Reply:
    """400 with a one-line reason; never put request data in it (it is echoed)."""
    return plain_text(400, f"Bad Request: {reason}\n", head)


def method_not_allowed() -> Reply:
    """405 listing the methods that are allowed."""
    reply = plain_text(405, "Method Not Allowed\n")
    reply.headers.append(("Allow", ", ".join(ALLOWED_METHODS)))
    return reply
