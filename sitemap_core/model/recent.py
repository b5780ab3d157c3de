"""Recent changes: the newest dated entries of the sources, for the feed and IndexNow.

How a source lists its recent changes: a ``recent(limit)`` method (or ``recent=``
when the source is registered) returning at most ``limit`` items newest first, as its
entries are (``Entry`` objects or tuple rows); ``SQLiteSource`` answers it with one
query. A source without one is walked once, keeping the newest ``limit`` entries in a
bounded heap (:class:`NewestEntries`).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sitemap_core.model.entries import Entry
from sitemap_core.model.values import lastmod_instant

__all__ = ["NewestEntries", "Recent", "cutoff", "merge_recent", "newest_first"]


@dataclass(frozen=True, order=True)
class Recent:
    """One URL of the feed: its lastmod's instant (for ordering), lastmod and loc."""

    instant: datetime
    lastmod: str
    loc: str


class NewestEntries:
    """The newest ``limit`` dated entries fed to it (changed after ``since``).

    A heap of at most ``limit`` items, so a walk of a whole source takes memory for
    the feed only. Entries of one instant keep a stable order (by loc).
    """

    def __init__(self, limit: int, since: datetime | None = None) -> None:
        self._limit = limit
        self._since = since
        self._heap: list[Recent] = []

    def add(self, entries: Iterable[Entry]) -> None:
        """Take these entries into account (those without a lastmod are left out)."""
        heap, limit, since = self._heap, self._limit, self._since
        for entry in entries:
            lastmod = entry.lastmod
            if lastmod is None:
                continue
            recent = Recent(lastmod_instant(lastmod), lastmod, entry.loc)
            if since is not None and recent.instant <= since:
                continue
            if len(heap) < limit:
                heapq.heappush(heap, recent)
            elif recent > heap[0]:
                heapq.heapreplace(heap, recent)

    def newest_first(self) -> list[Recent]:
        """What was kept, newest first."""
        return sorted(self._heap, reverse=True)


def newest_first(
    entries: Iterable[Entry], limit: int, since: datetime | None = None
) -> list[Recent]:
    """The newest ``limit`` dated entries of ``entries`` changed after ``since``,
    newest first (see :class:`NewestEntries`)."""
    kept = NewestEntries(limit, since)
    kept.add(entries)
    return kept.newest_first()


def merge_recent(groups: Iterable[Sequence[Recent]], limit: int) -> list[Recent]:
    """The newest ``limit`` of several sources' lists, newest first, each URL once
    (a URL listed by two sources keeps its newest lastmod: Atom ids must not repeat)."""
    merged = sorted((item for group in groups for item in group), reverse=True)
    seen: set[str] = set()
    out = []
    for item in merged:
        if item.loc not in seen:
            seen.add(item.loc)
            out.append(item)
            if len(out) == limit:
                break
    return out


def cutoff(max_days: float | None, now: datetime | None = None) -> datetime | None:
    """The instant before which changes are left out, or None."""
    if max_days is None:
        return None
    return (now or datetime.now(UTC)) - timedelta(days=max_days)
