"""Pages by rank for the SQL sources: what a version knows, and the plans, written once.

A SQL source without page facts lists its rows in ``ORDER BY key`` order and cuts them
into pages by rank: page N is the rows ``[N * size, (N + 1) * size)``. Its answers
(a count, a fingerprint, a page's rows, a page's newest date) are sans-I/O plans:
generators that yield a statement with its named parameters and are sent the
statement's rows back. :class:`RankPlans` holds them; a source's statements class
gives the statements (SQLAlchemy constructs in
:mod:`sitemap_core.sources.sql.sqla_ranks`, SQLite text in
:mod:`sitemap_core.sources.sql.sqlite`), and each source runs the plans on its
connections (sqlite3, a SQLAlchemy ``Connection`` or ``AsyncConnection``).

Versioned (a counter that triggers bump on every write), the first statement of every
call reads the table's version, and what was learnt under it is remembered until it
changes (:class:`Version`): the count, and per page its first key and newest
``lastmod``, so a version of a billion rows holds some 20,000 keys. The index reads
each page's newest with one statement that also returns the next page's first key,
so every later page is a range search from a known key. After a write the next
version starts from nothing; what survives a write is kept by the database itself
(page facts, :mod:`sitemap_core.sources.pages`).
"""

from __future__ import annotations

import threading
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, TypeAlias

from sitemap_core.errors import ConfigurationError

__all__ = ["END", "Plan", "RangeRead", "RankPlans", "Step", "Version"]

#: One statement of a plan and its parameters; the plan is sent its rows back (a list).
Step: TypeAlias = tuple[Any, dict[str, Any]]
#: A sans-I/O plan: yields statements, receives each one's rows, returns its answer.
Plan: TypeAlias = Generator[Step, Any, Any]

#: What a page's first key is when the rows end before it.
END: Any = object()

#: Pages (first keys, newest dates) remembered per version at most: a billion rows in
#: pages of 50,000 are 20,000.
_PAGES_LIMIT = 100_000
#: Held while a call publishes the version it read (see RankPlans.begin).
_PUBLISH = threading.Lock()


def started(plan: Plan) -> tuple[bool, Any]:
    """``(True, answer)`` when ``plan`` needs no statement; else ``(False, first step)``."""
    try:
        return False, next(plan)
    except StopIteration as done:
        return True, done.value


def first_row(rows: list[Any]) -> Any:
    """The first of ``rows``, or None."""
    return rows[0] if rows else None


@dataclass(frozen=True, slots=True)
class RangeRead:
    """One read of a range of ranks: how many rows, their newest, the next key."""

    rows: int
    newest: Any
    following: Any

    @classmethod
    def of(cls, row: Any) -> RangeRead:
        """From ``(COUNT(*), COUNT(lastmod), MAX(lastmod), next key)``: no date is
        claimed when a row of the range has none."""
        rows, dated, top, following = row
        return cls(int(rows), top if rows and dated == rows else None, following)


class Version:
    """What is known of one version of a versioned table (triggers move the version).

    Calls of several threads (or tasks) may add to one version: every change happens
    under ``lock``.
    """

    def __init__(self, version: Any) -> None:
        self.version = version
        self.lock = threading.Lock()
        self.count: int | None = None
        #: rank -> the key of the row at that rank (the first key of a page).
        self.firsts: dict[int, Any] = {}
        #: (start, stop) -> the newest lastmod of those ranks (None: a row is undated).
        self.newest: dict[tuple[int, int], Any] = {}

    def known_newest(self, start: int, stop: int) -> tuple[bool, Any]:
        """``(True, newest)`` of ranks ``[start, stop)`` when known, else ``(False, None)``."""
        with self.lock:
            if (start, stop) in self.newest:
                return True, self.newest[(start, stop)]
            return self.count is not None and start >= self.count, None

    def first(self, rank: int) -> Any:
        """The key at ``rank`` if known, :data:`END` past the rows, else None."""
        with self.lock:
            if self.count is not None and rank >= self.count:
                return END
            return self.firsts.get(rank)

    def learn_first(self, rank: int, key: Any) -> None:
        """Remember that the row at ``rank`` has ``key``."""
        with self.lock:
            if len(self.firsts) >= _PAGES_LIMIT:
                self.firsts.clear()
            self.firsts[rank] = key

    def learn_count(self, count: int) -> None:
        """Remember how many rows there are."""
        with self.lock:
            self.count = count

    def learn_newest(self, start: int, stop: int, newest: Any) -> None:
        """Remember the newest lastmod of ranks ``[start, stop)``."""
        with self.lock:
            if len(self.newest) >= _PAGES_LIMIT:
                self.newest.clear()
            self.newest[(start, stop)] = newest

    def learn_range(self, start: int, stop: int, read: RangeRead) -> None:
        """Remember a read of ranks ``[start, stop)``: its newest, the key at ``stop``
        and, when the rows ended within it, the count."""
        self.learn_newest(start, stop, read.newest)
        if read.following is not None:
            self.learn_first(stop, read.following)
        elif read.rows < stop - start:
            self.learn_count(start + read.rows)


class RankPlans:
    """The plans of a source paged by rank, over the statements of a subclass.

    A subclass sets the statements (any objects its source can run with a dict of
    named parameters): ``version`` (the version read, or None: unversioned),
    ``count``, ``anchor`` (the key at ``:start``), ``rows`` / ``rows_open`` (from the
    key ``:anchor``, ``:n`` rows or all), ``rows_skip`` / ``rows_skip_open`` (from the
    rank ``:start``, without a known key), ``newest_skip`` (the newest of ``:n`` rows
    from the rank ``:start``) and ``read`` (``(COUNT(*), COUNT(lastmod),
    MAX(lastmod), next key)`` of ``:n`` rows from the key ``:anchor``), both None
    without a ``lastmod``; and ``fallback``, the unversioned fingerprint. With
    ``seek`` False, pages and their newest dates are always read by rank (SQLite's
    ``mode="offset"``).
    """

    version: Any = None
    count: Any
    anchor: Any
    rows: Any
    rows_open: Any
    rows_skip: Any
    rows_skip_open: Any
    newest_skip: Any = None
    read: Any = None
    fallback: Any
    seek: bool = True

    def version_plan(self) -> Plan:
        """The table's version: one read of its counter."""
        row = first_row((yield self.version, {}))
        if row is None:
            raise ConfigurationError(
                "the version table is empty; create it with install_version_triggers()"
            )
        return row[0]

    def begin(self, memo: list[Version | None]) -> Plan:
        """Read the version; return what is known of it (None: unversioned).

        ``memo[0]`` holds the last version seen, replaced (never cleared) on a change,
        so a call still on the old version stays harmless.
        """
        if self.version is None:
            return None
        version = yield from self.version_plan()
        known = memo[0]
        if known is not None and known.version == version:
            return known
        return _published(memo, version)

    def find(self, facts: Version, rank: int) -> Plan:
        """The key of the row at ``rank``, or :data:`END`; remembered."""
        key = facts.first(rank)
        if key is not None:
            return key
        row = first_row((yield self.anchor, {"start": rank}))
        if row is None:
            return END
        facts.learn_first(rank, row[0])
        return row[0]

    def count_plan(self, memo: list[Version | None], pinned: Version | None = None) -> Plan:
        """How many rows: remembered per version, else one ``COUNT(*)``."""
        if pinned is not None and pinned.count is not None:
            return pinned.count
        facts = yield from self.begin(memo)
        if facts is not None and facts.count is not None:
            return facts.count
        count = int((yield self.count, {})[0][0])
        if facts is not None:
            facts.learn_count(count)
        return count

    def fingerprint_plan(self, memo: list[Version | None]) -> Plan:
        """The version (one read) and what is known of it, or the unversioned
        ``fallback``'s row and None."""
        facts = yield from self.begin(memo)
        if facts is not None:
            return facts.version, facts
        return tuple((yield self.fallback, {})[0]), None

    def page_plan(self, memo: list[Version | None], start: int, limit: int | None) -> Plan:
        """The rows statement of ``[start, start + limit)`` (None: no rows there)."""
        facts = yield from self.begin(memo)
        if facts is None or not self.seek:
            if limit is None:
                return self.rows_skip_open, {"start": start}
            return self.rows_skip, {"start": start, "n": limit}
        first = yield from self.find(facts, start)
        if first is END:
            return None
        if limit is None:
            return self.rows_open, {"anchor": first}
        return self.rows, {"anchor": first, "n": limit}

    def newest_plan(
        self, memo: list[Version | None], start: int, stop: int, pinned: Version | None = None
    ) -> Plan:
        """The newest ``lastmod`` of ``[start, stop)``, None if a row has none."""
        if self.read is None:
            return None
        if pinned is not None and (known := pinned.known_newest(start, stop))[0]:
            return known[1]
        facts = yield from self.begin(memo)
        if facts is not None and (known := facts.known_newest(start, stop))[0]:
            return known[1]
        if facts is None or not self.seek:
            value = yield from self._newest_by_rank(start, stop)
            if facts is not None:
                facts.learn_newest(start, stop, value)
            return value
        first = yield from self.find(facts, start)
        if first is END:
            return None
        read = RangeRead.of((yield self.read, {"anchor": first, "n": stop - start})[0])
        facts.learn_range(start, stop, read)
        return read.newest

    def _newest_by_rank(self, start: int, stop: int) -> Plan:
        if stop <= start:
            return None
        return first_row((yield self.newest_skip, {"start": start, "n": stop - start}))[0]


def _published(memo: list[Version | None], version: Any) -> Version:
    """A new :class:`Version`, kept in ``memo`` unless a newer one is there.

    A call whose version read came before a write that another call has seen since
    answers for its own version and publishes nothing: the memo never goes back.
    """
    with _PUBLISH:
        latest = memo[0]
        if latest is not None and latest.version == version:
            return latest
        fresh = Version(version)
        if latest is None or latest.version < version:
            memo[0] = fresh
        return fresh
