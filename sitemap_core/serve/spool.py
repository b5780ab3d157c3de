"""A document rendered whole before its first byte, for every request that asked it.

A document whose sources have no fingerprint is written to a :class:`Spool` before
it is sent: only its bytes give its ETag. Concurrent requests for the same document
may share one spool (the ASGI front does, so that a crowd asking a plain generator's
page costs one walk of it, not one each): each holds a claim on it, reads it from
the start at its own pace, and the last one to let go closes its file. A document's
gzip coding is written from its identity spool (:meth:`Spool.gzipped`), so the two
codings of a document cost one walk of its sources.
"""

from __future__ import annotations

import hashlib
import threading
from datetime import datetime
from tempfile import SpooledTemporaryFile
from typing import IO

from sitemap_core.limits import CHUNK_BYTES
from sitemap_core.memory.recall import Check, hash_dates
from sitemap_core.model.entries import Entry
from sitemap_core.model.values import lastmod_instant
from sitemap_core.serve.body import clamped
from sitemap_core.serve.compress import GzipStream
from sitemap_core.serve.validators import Validators, digest_etag

__all__ = ["SPOOL_MEMORY", "Chunks", "Spool"]

#: A spool keeps this much in memory before it moves to a temporary file.
SPOOL_MEMORY = 256 * 2**10


class Spool:
    """A rendered document on its way to its clients: bytes, digest, newest lastmod.

    ``check`` (a plan made from remembered counts) is the check its render ran, read
    after it by every request the spool answers. The spool is written once, then
    :meth:`finish` seals it; each holder of a claim (its maker holds the first, and
    :meth:`claim` adds one) gives it back by reading :meth:`chunks` to the end or by
    :meth:`release`.
    """

    def __init__(self, coding: str, text: bool = False, check: Check | None = None) -> None:
        self.file: IO[bytes] = SpooledTemporaryFile(max_size=SPOOL_MEMORY)  # noqa: SIM115
        self.check = check
        self._hasher = hashlib.sha256()
        # A text sitemap's bytes carry no lastmod: its dates are digested apart, so a
        # remembered Last-Modified can be checked (see sitemap_core.memory.recall).
        self._dates = hashlib.sha256() if text else None
        self._gzip = GzipStream() if coding == "gzip" else None
        self._validators: Validators | None = None
        self._claims = 1
        self.newest: datetime | None = None
        #: Every entry seen so far had a lastmod (else no Last-Modified).
        self.all_dated = True
        self.length = 0
        # The size of each chunk written, so that a gzip coding of the document is
        # fed the chunks a render gave (its bytes depend on where they were flushed).
        self._sizes: list[int] = []
        # A seek and its read are one step, and so are a claim and the seal: the
        # holders of a shared spool may be threads.
        self._lock = threading.Lock()
        #: SHA-256 of the uncompressed document, once :meth:`finish` ran.
        self.digest = b""
        #: SHA-256 of the first uncompressed chunk (see :class:`.recall.Recalled`).
        self.first = b""

    @property
    def dates(self) -> bytes | None:
        """The digest of a text sitemap's lastmods (see :func:`.recall.hash_dates`)."""
        return None if self._dates is None else self._dates.digest()

    def observe(self, batch: list[Entry]) -> None:
        """Track the newest lastmod of what is written (for Last-Modified).

        One rule for every document: Last-Modified is sent only when every entry has a
        lastmod (an undated entry may have changed at any time); it is then the newest.
        """
        if self._dates is not None:
            hash_dates(self._dates, batch)
        if not self.all_dated:
            return
        for entry in batch:
            if entry.lastmod is None:
                self.all_dated = False
                self.newest = None
                return
            instant = lastmod_instant(entry.lastmod)
            if self.newest is None or instant > self.newest:
                self.newest = instant

    def write(self, chunk: bytes) -> None:
        """Add an uncompressed chunk of the document."""
        if not self.first:
            self.first = hashlib.sha256(chunk).digest()
        self._hasher.update(chunk)
        self._code(chunk)

    def finish(self, identity: str, coding: str) -> Validators:
        """Seal the document and return its validators; a spool shared by several
        requests (the same ``identity`` and ``coding``) is sealed by the first."""
        with self._lock:
            if self._validators is None:
                if self._gzip is not None:
                    self._put(self._gzip.close())
                self.digest = self._hasher.digest()
                newest = clamped(self.newest)
                self._validators = Validators(digest_etag(identity, self.digest, coding), newest)
            return self._validators

    def gzipped(self) -> Spool:
        """This document in gzip: a spool of its own (with one claim), written from
        these bytes chunk by chunk as they were written, so the same bytes as a gzip
        render's, with the same digests, dates and check."""
        coded = Spool("gzip", check=self.check)
        coded._hasher = self._hasher.copy()
        coded._dates = None if self._dates is None else self._dates.copy()
        coded.newest, coded.all_dated, coded.first = self.newest, self.all_dated, self.first
        offset = 0
        for size in self._sizes:
            coded._code(self._read(offset, size))
            offset += size
        return coded

    def _code(self, chunk: bytes) -> None:
        # An uncompressed chunk, digested already, stored in the spool's coding.
        self._sizes.append(len(chunk))
        self._put(self._gzip.feed(chunk) if self._gzip is not None else chunk)

    def claim(self) -> Spool:
        """One more holder: the file stays open until it, too, lets go."""
        with self._lock:
            self._claims += 1
        return self

    def release(self) -> None:
        """A holder lets go without reading; the last one closes the file."""
        with self._lock:
            self._claims -= 1
            if self._claims <= 0:
                self.file.close()

    def chunks(self) -> Chunks:
        """The stored bytes from the first, in chunks, letting go at the end.

        Each reader keeps its own offset, so holders read one spool at their own
        pace, in one thread or several.
        """
        return Chunks(self)

    def _read(self, offset: int, size: int) -> bytes:
        with self._lock:
            self.file.seek(offset)
            return self.file.read(size)

    def _put(self, data: bytes) -> None:
        if data:
            self.file.write(data)
            self.length += len(data)


class Chunks:
    """One holder's reading of a :class:`Spool`: its bytes from the first, in chunks.

    It names the spool it reads (:attr:`spool`), so that a reply whose body it is can
    be told to come from that spool, whatever its headers say; the holder's claim is
    given back at the end, on :meth:`close`, or when it is collected unread.
    """

    def __init__(self, spool: Spool) -> None:
        #: The spool read.
        self.spool = spool
        self._offset = 0
        self._holding = True

    def __iter__(self) -> Chunks:
        return self

    def __next__(self) -> bytes:
        try:
            chunk = self.spool._read(self._offset, CHUNK_BYTES) if self._holding else b""
        except BaseException:
            self.close()
            raise
        if not chunk:
            self.close()
            raise StopIteration
        self._offset += len(chunk)
        return chunk

    def close(self) -> None:
        """Stop reading and give the claim back (again: nothing)."""
        if self._holding:
            self._holding = False
            self.spool.release()

    def __del__(self) -> None:
        self.close()
