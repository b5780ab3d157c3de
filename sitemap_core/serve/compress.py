"""Content coding: choosing gzip from ``Accept-Encoding`` and gzipping a stream.

The gzip stream is deterministic (no timestamp, no file name), so the same document
gives the same bytes in every worker, which is what a shared cache and ETags need.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator

from sitemap_core.sources.aio import aclose
from sitemap_core.sources.base import close_now

__all__ = ["GZIP_LEVEL", "GzipStream", "accepts_gzip", "agzip_chunks", "gzip_chunks"]

#: zlib's default: most of the size gain for a fraction of level 9's time.
GZIP_LEVEL = 6


def _codings(header: str) -> dict[str, float]:
    # Each coding named in ``header`` (lower case) with its weight.
    weights: dict[str, float] = {}
    for part in header.split(","):
        name, *params = (piece.strip() for piece in part.split(";"))
        if name:
            weights[name.lower()] = _weight(params)
    return weights


def _weight(params: list[str]) -> float:
    # The q= of a coding's parameters, within 0 to 1; 1 when it has none.
    weight = 1.0
    for param in params:
        key, _, value = param.partition("=")
        if key.strip().lower() == "q":
            try:
                weight = min(max(float(value), 0.0), 1.0)
            except ValueError:
                weight = 0.0  # an unreadable weight is no permission
    return weight


def accepts_gzip(header: str | None) -> bool:
    """Whether to send gzip for this ``Accept-Encoding`` (RFC 9110 12.5.3).

    No header means identity (some clients cannot gunzip). gzip is chosen when its
    weight (named, or through ``*``) is positive and not below identity's; identity
    refused with ``identity;q=0`` makes any permitted gzip the answer. When neither is
    acceptable the answer is identity, as the RFC advises, never an error.
    """
    if header is None:
        return False
    weights = _codings(header)
    star = weights.get("*")
    gzip = weights.get("gzip", weights.get("x-gzip", star if star is not None else 0.0))
    identity = weights.get("identity", star if star is not None and star == 0 else 1.0)
    return gzip > 0 and gzip >= identity


class GzipStream:
    """An incremental gzip encoder: ``feed`` chunks, then ``close``."""

    def __init__(self) -> None:
        # wbits 31: a gzip wrapper with mtime 0 and no name, the same bytes everywhere.
        self._encoder = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)

    def feed(self, chunk: bytes) -> bytes:
        """Compressed bytes for ``chunk``, flushed so they can be sent at once.

        A sync flush per chunk (a few bytes per 32 KiB) keeps a gzipped response
        streaming: otherwise zlib holds output back and the first byte leaves late.
        """
        return self._encoder.compress(chunk) + self._encoder.flush(zlib.Z_SYNC_FLUSH)

    def close(self) -> bytes:
        """The rest of the stream and the gzip trailer."""
        return self._encoder.flush()


def gzip_chunks(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Gzip a stream of chunks as it goes (never holding the whole document)."""
    stream = GzipStream()
    try:
        for chunk in chunks:
            if out := stream.feed(chunk):
                yield out
        yield stream.close()
    finally:
        close_now(chunks)


async def agzip_chunks(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """The asynchronous twin of :func:`gzip_chunks`."""
    stream = GzipStream()
    try:
        async for chunk in chunks:
            if out := stream.feed(chunk):
                yield out
        yield stream.close()
    finally:
        await aclose(chunks)
