"""Pages by rank for the SQLAlchemy sources: statements, what a version knows, plans.

A source without page facts lists its rows in ``ORDER BY key`` order and cuts them
into pages by rank: page N is the rows ``[N * size, (N + 1) * size)``. Its statements
are built once (:class:`RankStatements`); its answers are sans-I/O plans, generators
that yield a statement with its parameters and are sent the statement's rows back,
so that the sync and the async source run the same plans (``sqla._run`` and
``sqla._arun``).

Versioned (``version_table``), the first statement of every call reads the table's
version, and what was learnt under it is remembered until it changes
(:class:`Version`): the count, each page's first key and each page's newest
``lastmod``, all of them per page, so a version of a billion rows holds some 20,000
keys. The index reads each page's newest with one statement that also returns the
next page's first key, so every later page is a range search from a known key.
After a write the next version starts from nothing.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    FromClause,
    Select,
    SelectBase,
    bindparam,
    case,
    column,
    func,
    select,
    table,
)

from sitemap_core.errors import ConfigurationError
from sitemap_core.sources.base import Item
from sitemap_core.sources.sql.names import IDENTIFIER

#: One statement of a plan and its parameters; the plan is sent its rows back (a list).
Step: TypeAlias = tuple[Any, dict[str, Any]]
#: A sans-I/O plan: yields statements, receives each one's rows, returns its answer.
Plan: TypeAlias = Generator[Step, Any, Any]

#: What a page's first key is when the rows end before it.
END: Any = object()

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: Pages (first keys, newest dates) remembered per version at most: a billion rows in
#: pages of 50,000 are 20,000.
_PAGES_LIMIT = 100_000
#: Held while a call publishes the version it read (see RankStatements.begin).
_PUBLISH = threading.Lock()


def plain_name(kind: str, value: object) -> str:
    """``value`` if it is a plain identifier; names in trigger DDL must be."""
    if not isinstance(value, str) or not IDENTIFIER.fullmatch(value):
        raise ConfigurationError(
            f"{kind} {value!r} is not a plain SQL identifier ([A-Za-z_][A-Za-z0-9_]*)"
        )
    return value


def _first(rows: list[Any]) -> Any:
    return rows[0] if rows else None


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

    def learn_range(self, start: int, stop: int, read: RangeRead) -> None:
        """Remember a read of ranks ``[start, stop)``: its newest, the key at ``stop``
        and, when the rows ended within it, the count."""
        with self.lock:
            if len(self.newest) >= _PAGES_LIMIT:
                self.newest.clear()
            self.newest[(start, stop)] = read.newest
            if read.following is not None:
                self.firsts[stop] = read.following
            elif read.rows < stop - start:
                self.count = start + read.rows


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


def builder(build: Callable[[Any], Item] | str, lastmod: ColumnElement[Any] | None) -> Any:
    """``build`` itself, or a function making a tuple row from a ``{column}`` template."""
    if callable(build):
        return build
    if not isinstance(build, str) or not _PLACEHOLDER.search(build):
        raise ConfigurationError(
            "build must be a callable (row -> entry) or a loc template naming columns,"
            " like 'https://example.com/posts/{slug}'"
        )
    template = build
    date = None if lastmod is None else lastmod.key

    def from_template(row: Any) -> Item:
        values = row._mapping
        # A tuple row: validated and written in one pass (sitemap_core.model.rows).
        return (template.format_map(values), None if date is None else values[date])

    return from_template


def _from_clause(source: FromClause | SelectBase) -> FromClause:
    if isinstance(source, SelectBase):
        source = source.subquery("sitemap_rows")
    if not isinstance(source, FromClause):
        raise ConfigurationError("table must be a SQLAlchemy Table, FromClause or Select")
    return source


def _column(frm: FromClause, kind: str, given: str | ColumnElement[Any]) -> ColumnElement[Any]:
    name = given if isinstance(given, str) else getattr(given, "key", None)
    try:
        return frm.c[name]  # type: ignore[index]
    except (KeyError, TypeError):
        raise ConfigurationError(f"{kind} {given!r} is not a column of {frm}") from None


def _version_read(version_table: str | None, change_log: str | None) -> Any:
    """The one-row read of the version, or None (unversioned)."""
    if version_table is not None and change_log is not None:
        raise ConfigurationError("give version_table or change_log, not both")
    if change_log is not None:
        counter = f"{plain_name('change_log', change_log)}_version"
    elif version_table is not None:
        counter = plain_name("version_table", version_table)
    else:
        return None
    return select(column("version")).select_from(table(counter, column("version")))


class RankStatements:
    """The statements and plans of a source paged by rank, built once.

    Offsets and limits are bound parameters, so every statement compiles once
    (SQLAlchemy's compiled cache) and only values travel per call.
    """

    def __init__(
        self,
        source: FromClause | SelectBase,
        key: str | ColumnElement[Any],
        build: Callable[[Any], Item] | str,
        columns: Sequence[str | ColumnElement[Any]] | None,
        lastmod: str | ColumnElement[Any] | None,
        where: ColumnElement[bool] | None,
        version_table: str | None = None,
        change_log: str | None = None,
    ) -> None:
        frm = _from_clause(source)
        self.version = _version_read(version_table, change_log)
        k = _column(frm, "key", key)
        lm = None if lastmod is None else _column(frm, "lastmod", lastmod)
        selected: list[ColumnElement[Any]] = (
            list(frm.c) if columns is None else [_column(frm, "column", c) for c in columns]
        )
        if not selected:
            raise ConfigurationError("columns must name at least one column")
        self.build = builder(build, lm)
        self._where = where
        self._key = k
        # Any: Select's type parameters differ between SQLAlchemy 2.0 and 2.1.
        anchor: Any = bindparam("anchor")
        n, start = bindparam("n", type_=BigInteger), bindparam("start", type_=BigInteger)
        self.count = self._filtered(select(func.count()).select_from(frm))
        self.anchor = self._filtered(select(k)).order_by(k).offset(start).limit(1)
        rows = self._filtered(select(*selected)).order_by(k)
        self.rows, self.rows_open = rows.where(k >= anchor).limit(n), rows.where(k >= anchor)
        # Unversioned: nothing to remember a page's first key in, so it is a scalar
        # subquery of the same statement (one round trip).
        skipped = self._filtered(select(k)).order_by(k).offset(start).limit(1).scalar_subquery()
        self.rows_skip, self.rows_skip_open = (
            rows.where(k >= skipped).limit(n),
            rows.where(k >= skipped),
        )
        # A stable page: the rows of a range of keys (see sqla_pages).
        low, high = bindparam("low", type_=BigInteger), bindparam("high", type_=BigInteger)
        self.window = select(*selected).where(k >= low, k < high).order_by(k)
        self.recent = None if lm is None else self._recent(selected, lm)
        self.newest_skip = None if lm is None else self._newest_skip(lm, skipped)
        self.read = None if lm is None else self._read(lm)
        # Scalar subqueries, not one SELECT of three aggregates: a lone MAX() is an
        # O(log n) index look-up in most databases, a MAX() beside COUNT(*) is not.
        self.fallback = select(
            self.count.scalar_subquery(),
            self._filtered(select(func.max(k))).scalar_subquery(),
            *([] if lm is None else [self._filtered(select(func.max(lm))).scalar_subquery()]),
        )

    def _filtered(self, query: Select[Any]) -> Select[Any]:
        return query if self._where is None else query.where(self._where)

    def _recent(self, selected: list[ColumnElement[Any]], lm: ColumnElement[Any]) -> Any:
        query = self._filtered(select(*selected)).where(lm.is_not(None))
        return query.order_by(lm.desc()).limit(bindparam("n", type_=BigInteger))

    def _newest_skip(self, lm: ColumnElement[Any], skipped: Any) -> Any:
        # No date when a row of the range has none: Last-Modified (and an index
        # child's lastmod) is only claimed when every entry is dated.
        k, n = self._key, bindparam("n", type_=BigInteger)
        inner = (
            self._filtered(select(k.label("k"), lm.label("lm")))
            .where(k >= skipped)
            .order_by(k)
            .limit(n)
            .subquery()
        )
        return select(case((func.count(inner.c.lm) == func.count(), func.max(inner.c.lm))))

    def _read(self, lm: ColumnElement[Any]) -> Any:
        # A range from its first key: its rows, dated rows and newest date, and the key
        # of the row after it (the next page's first), in one statement.
        anchor: Any = bindparam("anchor")
        k, n = self._key, bindparam("n", type_=BigInteger)
        from_anchor = self._filtered(select(k.label("k"), lm.label("lm"))).where(k >= anchor)
        inner = from_anchor.order_by(k).limit(n).subquery()
        following = self._filtered(select(k)).where(k >= anchor).order_by(k).offset(n).limit(1)
        return select(
            func.count(), func.count(inner.c.lm), func.max(inner.c.lm), following.scalar_subquery()
        ).select_from(inner)

    # -- plans (sans-I/O: they yield statements and are sent their rows back) ------

    def begin(self, memo: list[Version | None]) -> Plan:
        """Read the version; return what is known of it (None: unversioned).

        ``memo[0]`` holds the last version seen, replaced (never cleared) on a change,
        so a call still on the old version stays harmless.
        """
        if self.version is None:
            return None
        row = _first((yield self.version, {}))
        if row is None:
            raise ConfigurationError(
                "the version table is empty; create it with install_version_triggers()"
            )
        known = memo[0]
        if known is not None and known.version == row[0]:
            return known
        return _published(memo, row[0])

    def find(self, facts: Version, rank: int) -> Plan:
        """The key of the row at ``rank``, or :data:`END`; remembered."""
        key = facts.first(rank)
        if key is not None:
            return key
        row = _first((yield self.anchor, {"start": rank}))
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
            with facts.lock:
                facts.count = count
        return count

    def fingerprint_plan(self, memo: list[Version | None]) -> Plan:
        """The version (one read) and what is known of it, or ``(COUNT(*), MAX(key)[,
        MAX(lastmod)])`` and None."""
        facts = yield from self.begin(memo)
        if facts is not None:
            return facts.version, facts
        return tuple((yield self.fallback, {})[0]), None

    def page_plan(self, memo: list[Version | None], start: int, limit: int | None) -> Plan:
        """The rows query of ``[start, start + limit)`` (None: empty), after the anchor."""
        facts = yield from self.begin(memo)
        if facts is None:
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
        if self.read is None or self.newest_skip is None:
            return None
        if pinned is not None and (known := pinned.known_newest(start, stop))[0]:
            return known[1]
        facts = yield from self.begin(memo)
        if facts is None:
            if stop <= start:
                return None
            return _first((yield self.newest_skip, {"start": start, "n": stop - start}))[0]
        known, value = facts.known_newest(start, stop)
        if known:
            return value
        first = yield from self.find(facts, start)
        if first is END:
            return None
        read = RangeRead.of((yield self.read, {"anchor": first, "n": stop - start})[0])
        facts.learn_range(start, stop, read)
        return read.newest


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
