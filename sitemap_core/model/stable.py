"""Bytes that stand for a value the same way in every process, for digests (ETags,
fingerprints) that every worker must agree on."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from sitemap_core.errors import ConfigurationError

__all__ = ["stable_bytes"]


def stable_bytes(value: object) -> bytes:
    """A type-tagged encoding of ``value`` whose bytes depend on the value only, never
    on the process (hash seeds, object ids): a digest of them agrees across workers.

    Raises :class:`ConfigurationError` for a type it cannot encode alike everywhere.
    """
    if value is None or isinstance(value, bool):
        return f"n{value!r};".encode()
    if isinstance(value, int | float):
        return f"i{value!r};".encode()
    if isinstance(value, Decimal):  # e.g. a SUM from PostgreSQL
        return f"m{value};".encode()
    if isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        return b"s%d:" % len(data) + data
    if isinstance(value, bytes):
        return b"b%d:" % len(value) + value
    if isinstance(value, datetime | date):
        return f"d{value.isoformat()};".encode()
    if isinstance(value, tuple | list):
        return b"(" + b"".join(stable_bytes(item) for item in value) + b")"
    raise ConfigurationError(
        f"a fingerprint must be made of str, bytes, numbers, dates, None and tuples; "
        f"got {type(value).__name__}"
    )
