"""Typed errors. Each names what was wrong so the message alone is enough to fix it."""

from __future__ import annotations

from typing import Any

__all__ = ["ConfigurationError", "InvalidEntryError", "SitemapError", "SitemapTooLargeError"]

_MAX_SHOWN = 80


def shorten(value: Any) -> str:
    """Return ``repr(value)``, cut to a readable length for error messages."""
    try:
        text = repr(value)
    except Exception:  # an int of over 4,300 digits, a broken __repr__: name the type
        text = f"<{type(value).__name__}>"
    if len(text) > _MAX_SHOWN:
        return text[: _MAX_SHOWN - 5] + "…" + text[-4:]
    return text


class SitemapError(Exception):
    """Base class of every error this project raises on purpose."""


class InvalidEntryError(SitemapError, ValueError):
    """A sitemap entry field holds a value the protocol cannot carry.

    ``field`` names the field (``"loc"``, ``"lastmod"``, ...), ``value`` is the rejected
    value and ``source`` the name of the URL source it came from, when known.
    """

    def __init__(self, field: str, value: Any, reason: str, source: str | None = None) -> None:
        self.field = field
        self.value = value
        self.reason = reason
        self.source = source
        super().__init__(self._message())

    def _message(self) -> str:
        where = f" (from source {self.source!r})" if self.source else ""
        return f"invalid {self.field} {shorten(self.value)}: {self.reason}{where}"

    def with_source(self, source: str) -> InvalidEntryError:
        """Return a copy of this error that also names the source it came from."""
        return InvalidEntryError(self.field, self.value, self.reason, source)


class ConfigurationError(SitemapError, ValueError):
    """A setting, decorator argument or registration is wrong; raised at set-up time."""


class SitemapTooLargeError(SitemapError):
    """A sitemap file would exceed the protocol's byte limit.

    Raised instead of writing an oversized file or silently dropping entries.
    """
