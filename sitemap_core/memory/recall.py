"""Remembered validators: streaming documents of sources that have no fingerprint.

A source without a fingerprint (a plain generator, a route decorator's ``params``)
offers no cheap way to know a document's ETag: only rendering tells. The first request
for such a document is rendered to a spool (:class:`~sitemap_core.serve.flow.Spool`) before
its first byte, and what that render found is remembered here: the counts its plan was
made from, the SHA-256 of its bytes and its newest lastmod (:class:`Recalled`).

Every later request for the same document reuses them: the plan is made from the
remembered counts (no walk to count), the validators are known at once, and a GET
streams from the first batch. The one walk that streams it checks everything it was
told (:class:`Check`): each slice yields as many entries as counted, a slice that
ended a source still ends it (one entry past the end is asked for), and the bytes hash
to the same digest. If the data changed in between, the transfer is cut before its
last bytes (:class:`StaleValidatorsError`), so that no client or cache ever keeps a
body under validators that are not its own, and the memory is dropped: the next
request is rendered afresh. A HEAD or a conditional request renders to a spool with the
same checks, so its 304 or its headers always describe the current data.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sitemap_core.errors import SitemapError
from sitemap_core.memory.lru import LeastRecent
from sitemap_core.model.entries import Entry
from sitemap_core.model.rows import RowBatch

__all__ = [
    "MAX_REMEMBERED",
    "Check",
    "Recall",
    "Recalled",
    "StaleValidatorsError",
    "hash_dates",
    "head",
    "probed",
]

#: Documents remembered per site (each a few hundred bytes), least recently used dropped.
MAX_REMEMBERED = 4_096


class StaleValidatorsError(SitemapError):
    """The entries of a streamed document changed since its validators were remembered.

    Raised before the document's last bytes, so the server cuts the transfer: a body
    sent under another body's ETag must never look complete. The next request renders
    the document afresh and gets its new validators.
    """


@dataclass(frozen=True)
class Recalled:
    """What rendering a document found, for the next request of it."""

    #: The counts the document's plan was made from, by source name.
    counts: Mapping[str, int]
    #: SHA-256 of the uncompressed bytes.
    digest: bytes
    #: The newest lastmod of its entries (not clamped to now), or None.
    newest: datetime | None
    #: For a text sitemap, whose bytes carry no lastmod: SHA-256 of the lastmods, so a
    #: changed date (a changed Last-Modified) is seen too. None for XML.
    dates: bytes | None
    #: SHA-256 of the first chunk: checked before it is sent, so a change that shows
    #: there (a new entry at the top) costs a fresh render, never a cut transfer.
    first: bytes
    #: Whether a GET may stream on these facts. A document found stale is disarmed
    #: until two renders in a row agree, so one that changes between most requests is
    #: rendered whole each time rather than cut again and again.
    armed: bool = True

    def agrees(self, other: Recalled) -> bool:
        """Whether ``other`` describes the same document (the data did not change)."""
        return (
            self.digest == other.digest
            and self.dates == other.dates
            and dict(self.counts) == dict(other.counts)
        )


def _disarmed(before: Recalled | None) -> Recalled | None:
    # What is remembered of a document found stale: the same, disarmed (or nothing).
    return None if before is None else replace(before, armed=False)


class Recall:
    """A bounded, thread-safe memory of :class:`Recalled`, by document identity."""

    def __init__(self, size: int = MAX_REMEMBERED) -> None:
        self._items: LeastRecent[Recalled] = LeastRecent(size)

    def get(self, key: str) -> Recalled | None:
        """What was remembered of document ``key``, if anything."""
        return self._items.get(key)

    def found(self, key: str, value: Recalled) -> None:
        """A full render of document ``key`` found ``value``: remember it, armed unless
        the document was disarmed and this render disagrees with the last one."""

        def armed(before: Recalled | None) -> Recalled:
            keep = before is None or before.armed or before.agrees(value)
            return replace(value, armed=keep)

        self._items.update(key, armed)

    def disarm(self, key: str) -> None:
        """Document ``key`` was found stale: render it whole until it is stable again."""
        self._items.update(
            key, lambda before: None if before is None else replace(before, armed=False)
        )

    def put(self, key: str, value: Recalled) -> None:
        """Remember ``value`` for document ``key``."""
        self._items.put(key, value)

    def __len__(self) -> int:
        return len(self._items)


class Check:
    """Re-derives, as a document is written, the facts its validators rest on.

    ``counts`` are the counts the plan was made from: a slice ending at its source's
    count is read one entry further (:meth:`probes`), to see that the source did not
    grow. With ``expected`` (the remembered facts of a streamed GET), :meth:`finish`
    raises :class:`StaleValidatorsError` when anything differs; without it (a spooled
    HEAD or conditional request) it only tells, through :attr:`counts_hold`.
    """

    def __init__(
        self, counts: Mapping[str, int], text: bool, expected: Recalled | None = None
    ) -> None:
        self.counts = counts
        self.expected = expected
        self._bytes = hashlib.sha256() if expected is not None else None
        self._dates = hashlib.sha256() if text else None
        self._first = True
        #: False once a slice gave fewer entries than counted, or a source grew.
        self.counts_hold = True

    def probes(self, source: str, stop: int) -> bool:
        """Whether the slice of ``source`` ending at ``stop`` ends the source."""
        return self.counts.get(source) == stop

    def chunk(self, data: bytes) -> None:
        """See one uncompressed chunk of the document, before it is sent.

        The first one is compared at once: a document that already differs there
        raises before any byte left.
        """
        if self._bytes is None or self.expected is None:
            return
        self._bytes.update(data)
        if self._first:
            self._first = False
            if hashlib.sha256(data).digest() != self.expected.first:
                raise StaleValidatorsError("the first entries changed; rendered afresh")

    def observe(self, batch: list[Entry]) -> None:
        """See a batch of entries (a text sitemap's dates are not in its bytes)."""
        if self._dates is not None:
            hash_dates(self._dates, batch)

    def sliced(self, wanted: int, pulled: int, grew: bool) -> None:
        """A slice of ``wanted`` entries gave ``pulled``, and more if ``grew``."""
        if grew or pulled != wanted:
            self.counts_hold = False

    @property
    def dates(self) -> bytes | None:
        """The digest of the lastmods seen (text sitemaps), else None."""
        return None if self._dates is None else self._dates.digest()

    def finish(self) -> None:
        """Raise :class:`StaleValidatorsError` if the document is not the remembered one."""
        expected = self.expected
        if expected is None or self._bytes is None:
            return
        if (
            not self.counts_hold
            or self._bytes.digest() != expected.digest
            or self.dates != expected.dates
        ):
            raise StaleValidatorsError(
                "the entries changed since this document's validators were remembered;"
                " the transfer is cut, and the next request is rendered afresh"
            )


def hash_dates(hasher: Any, batch: list[Entry]) -> None:
    """Feed the lastmods of ``batch`` to ``hasher``, one line each ("" for none)."""
    hasher.update("".join(f"{entry.lastmod or ''}\n" for entry in batch).encode())


def head(batch: list[Entry], n: int) -> list[Entry]:
    """The first ``n`` entries of ``batch``, rows of a :class:`RowBatch` kept unbuilt."""
    if type(batch) is RowBatch and batch.rows is not None:
        return RowBatch(batch.rows[:n], batch.source)
    return batch[:n]


def probed(
    batches: Iterator[list[Entry]], wanted: int, check: Check | None, probe: bool
) -> Iterator[list[Entry]]:
    """``batches`` of a slice of ``wanted`` entries, read one further when ``probe``.

    The entry past the end is never written: seeing it tells ``check`` the source grew.
    """
    pulled = 0
    grew = False
    try:
        for batch in batches:
            if probe and pulled + len(batch) > wanted:
                grew = True
                batch = head(batch, wanted - pulled)
                if not batch:
                    break
            pulled += len(batch)
            yield batch
    finally:
        # Closed now, not by the garbage collector: a source may hold a cursor.
        close = getattr(batches, "close", None)
        if close is not None:
            close()
    if check is not None:
        check.sliced(wanted, pulled, grew)
