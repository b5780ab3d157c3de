"""Sitemap sources over SQLAlchemy Core: any database SQLAlchemy speaks to.

:class:`SQLAlchemySource` (an :class:`~sqlalchemy.engine.Engine`, for the sync fronts)
and :class:`AsyncSQLAlchemySource` (an :class:`~sqlalchemy.ext.asyncio.AsyncEngine`,
for the ASGI front) are what :class:`~sitemap_core.sources.sql.sqlite.SQLiteSource` is for SQLite,
with the same contract: rows listed in ``ORDER BY key`` order (``key`` unique and not
NULL), page N read by keyset ("seek") paging ``WHERE key >= :anchor ORDER BY key
LIMIT :n``, and cheap facts (count, fingerprint, each page's newest ``lastmod``) for
ETags, 304s and the index::

    from sqlalchemy import create_engine
    from sitemap_core import UrlSource
    from sitemap_core.sources.sql.sqla import SQLAlchemySource, install_change_log

    engine = create_engine("postgresql+psycopg://app@db/blog")
    install_change_log(engine, "posts", "id", "posts_changes")   # once, at deployment
    posts = SQLAlchemySource(
        engine, posts_table, key="id", lastmod="updated_at",
        build="https://blog.example.com/posts/{slug}",
        change_log="posts_changes",
    )
    source = UrlSource.from_object("posts", posts)

This module imports SQLAlchemy (the ``sqlalchemy`` extra); ``import sitemap_core``
does not.

What each call costs
--------------------
Unversioned (neither ``version_table`` nor ``change_log``), every call asks the
database: ``len()`` is one ``COUNT(*)``, a page one statement (its first key found by a
scalar subquery ``... ORDER BY key LIMIT 1 OFFSET :start``, which skips over the key
only), the fingerprint one statement ``(COUNT(*), MAX(key), MAX(lastmod))``, blind to
an edit that moves a date backwards or a delete below the largest key.

Versioned, the first statement of every call reads the table's version (one row),
and what was computed under that version is remembered until it changes, as
landmarks: keys of rows with their ranks, one every 1,000 rows of what was read, each
with the newest ``lastmod`` of the rows up to the next. The count, each page's first
key and each page's newest come from them. A 304 costs the version read (one
statement outside a transaction); a page, the version read and its rows, whatever its
number (a page's first key is a landmark once the index was served; before, it is
found from the nearest landmark, or by skipping over the key's index from the start).
The first index of a process reads every row once (a grouped read per page).

One request, one version: :meth:`~SQLAlchemySource.fingerprint` (which every request
of the core asks first) notes the version it answered with in the request's scope
(:mod:`sitemap_core.sources.scope`), and ``count()`` and ``newest()`` answer what they know of
that version without a query, so the index's 200 children cost no round trip each.
Outside a request they read the version themselves.

After a write: :func:`install_version_triggers` gives a counter bumped by every
write, and everything is computed again; :func:`install_change_log` the counter plus
the key of every changed row, and then only the segments (between two landmarks) a
changed key fell in are counted again (``COUNT(*)``, the newest date and the first
key of those rows: a thousand rows each); every other segment keeps its newest and
every landmark its key, its rank moved by the rows the segments before it gained or
lost. So an edit anywhere (a date moved forward or back, a row hidden by ``where``)
or an append costs the next index a few small statements and leaves the count exact
without counting the table. A row inserted or deleted before the last page shifts
every later page by a row: their first keys are found again from the landmarks (a
few rows each) and their newest read again at their edges (a segment each). More
than 1,000 changed keys keep only what lies before the smallest changed key; past
200,000 rows to count again, what lies before the first segment left uncounted.

Snapshots: each call runs in one snapshot, so the version and the facts remembered
under it agree: a ``REPEATABLE READ`` transaction on PostgreSQL and MySQL, a
``BEGIN`` on SQLite (whose Python driver begins none for a ``SELECT``).

``table`` is a :class:`~sqlalchemy.schema.Table` (or any ``FromClause``) or a
``Select`` (used as a subquery, e.g. a join); ``where`` an optional SQLAlchemy
condition. A ``where`` must depend on the rows only (not on ``now()``), since a
remembered fact lives until the next write.

Change logs per dialect
-----------------------
:func:`install_change_log` and :func:`install_version_triggers` write trigger DDL for
PostgreSQL (a PL/pgSQL function, ``FOR EACH ROW`` for the log, ``FOR EACH STATEMENT``
for the counter, and TRUNCATE handled) and SQLite. MySQL / MariaDB need the same
tables and three ``AFTER INSERT / UPDATE / DELETE ... FOR EACH ROW`` triggers, which
creating needs privileges most applications do not have; ``docs/sqlalchemy.md`` gives
the statements to run once::

    CREATE TABLE posts_changes_version (version BIGINT NOT NULL);
    INSERT INTO posts_changes_version VALUES (0);
    CREATE TABLE posts_changes (id BIGINT PRIMARY KEY, `key` BIGINT);
    CREATE TRIGGER posts_changes_insert AFTER INSERT ON posts FOR EACH ROW BEGIN
      UPDATE posts_changes_version SET version = version + 1;
      INSERT INTO posts_changes SELECT version, NEW.id FROM posts_changes_version;
    END;
    -- UPDATE: the same for OLD.id, then NEW.id; DELETE: for OLD.id.

The counter is one row that every writing transaction updates: the row lock orders
writers by commit, so versions (and log ids) appear in commit order without gaps,
which a sequence or an auto-increment column does not promise under concurrency.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_left, bisect_right
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator, Sequence
from typing import Any, TypeAlias, TypeVar

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Connection,
    Engine,
    FromClause,
    Select,
    SelectBase,
    bindparam,
    case,
    column,
    func,
    inspect,
    null,
    select,
    table,
    text,
)
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from sitemap_core.errors import ConfigurationError
from sitemap_core.sources.base import Item
from sitemap_core.sources.pages import Page
from sitemap_core.sources.scope import request_notes
from sitemap_core.sources.sql.sqla_pages import install_page_facts
from sitemap_core.sources.sql.sqlite import _END, IDENTIFIER, _number, slice_window
from sitemap_core.sources.sql.sqlite_pages import PageFacts

__all__ = [
    "AsyncSQLAlchemySource",
    "SQLAlchemySource",
    "install_change_log",
    "install_page_facts",
    "install_version_triggers",
]

#: One statement of a plan and its parameters; the plan is sent its rows back (a list).
Step: TypeAlias = tuple[Any, dict[str, Any]]
#: A sans-I/O plan: yields statements, receives each one's rows, returns its answer.
#: The sync and the async source run the same plans.
Plan: TypeAlias = Generator[Step, Any, Any]

#: Dialects whose default isolation lets a write land between two statements of a call
#: while ``REPEATABLE READ`` gives the call one snapshot.
_SNAPSHOT_DIALECTS = frozenset({"postgresql", "mysql", "mariadb"})

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")

#: Rows per segment: what a versioned source remembers of the rows it read is, per
#: segment, its first key, its rank and its newest lastmod, so that a write costs
#: reading its segment again (a thousand rows), not its page (fifty thousand). A
#: 50,000-row page is 50 segments; ten million rows, 10,000 landmarks (about 1 MiB).
_SEGMENT = 1000
#: Distinct changed keys read from the change log for a new version; beyond, or beyond
#: :data:`_RECOUNT_ROWS` rows to count again, only what lies before the smallest
#: changed key is kept (a bulk write costs what a first request costs from there on).
_CHANGED_KEYS = 1000
_RECOUNT_ROWS = 200_000
#: Landmarks (and ranges' newest) remembered per version at most: a billion rows.
_MARKS_LIMIT = 1_000_000
#: Held while a call publishes the facts of a version it read (see _Statements.begin).
_PUBLISH = threading.Lock()

#: The newest lastmod of no rows (the identity of :func:`_later`).
_NOTHING: Any = object()
#: The newest lastmod of rows one of which has none: the range is undated.
_UNDATED: Any = object()


def _name(kind: str, value: object) -> str:
    """``value`` if it is a plain identifier; names in trigger DDL must be."""
    if not isinstance(value, str) or not IDENTIFIER.fullmatch(value):
        raise ConfigurationError(
            f"{kind} {value!r} is not a plain SQL identifier ([A-Za-z_][A-Za-z0-9_]*)"
        )
    return value


def _later(a: Any, b: Any) -> Any:
    """The newest lastmod of two ranges of rows together."""
    if a is _NOTHING:
        return b
    if b is _NOTHING:
        return a
    if a is _UNDATED or b is _UNDATED:
        return _UNDATED
    return a if a >= b else b


def _answer(value: Any) -> Any:
    """What ``newest()`` says of a combined value: a date, or None."""
    return None if value is _NOTHING or value is _UNDATED else value


def _first(rows: list[Any]) -> Any:
    return rows[0] if rows else None


class _Version:
    """What is known of one version of a versioned table (exact: triggers move it).

    Landmarks are keys of rows with their ranks (how many rows sort before them):
    ``keys`` and ``ranks`` ascend together. ``spans[i]`` is the newest lastmod of the
    rows from landmark ``i`` to the next one (for the last, to the end of the table,
    once ``count`` is known), None while unknown. Reading a range leaves a landmark
    every :data:`_SEGMENT` ranks; finding a page's first key leaves one at the page.
    Calls of several threads (or tasks) may add to one version: every change happens
    under ``lock``, and no list position is kept across a query.
    """

    def __init__(self, version: Any) -> None:
        self.version = version
        self.lock = threading.Lock()
        self.keys: list[Any] = []
        self.ranks: list[int] = []
        self.spans: list[Any] = []
        self.count: int | None = None
        #: (start, stop) -> (newest, its first key, the key at ``stop`` or _END).
        self.newest: dict[tuple[int, int], tuple[Any, Any, Any]] = {}
        #: Ranges the last version was asked that a write left unknown, in order.
        self.pending: list[tuple[int, int]] = []

    def at(self, rank: int) -> Any:
        """The key of the row at ``rank`` if it is a landmark, else None."""
        i = bisect_left(self.ranks, rank)
        return self.keys[i] if i < len(self.ranks) and self.ranks[i] == rank else None

    def near(self, rank: int) -> tuple[tuple[Any, int] | None, tuple[Any, int] | None]:
        """The landmarks just below and just above ``rank`` (None where there is none)."""
        i = bisect_left(self.ranks, rank)
        below = (self.keys[i - 1], self.ranks[i - 1]) if i > 0 else None
        above = (self.keys[i], self.ranks[i]) if i < len(self.ranks) else None
        return below, above

    def mark(self, key: Any, rank: int) -> None:
        """Remember that the row at ``rank`` has ``key``; the span it splits is unknown."""
        i = bisect_left(self.ranks, rank)
        if i < len(self.ranks) and self.ranks[i] == rank:
            return
        if len(self.keys) >= _MARKS_LIMIT:
            self.keys, self.ranks, self.spans, self.newest = [], [], [], {}
            i = 0
        if i > 0:
            self.spans[i - 1] = None
        self.keys.insert(i, key)
        self.ranks.insert(i, rank)
        self.spans.insert(i, None)

    def settle(self, rank: int, end: int, value: Any) -> None:
        """``value`` is the newest of ranks ``[rank, end)``: kept if that is a span."""
        i = bisect_left(self.ranks, rank)
        if i == len(self.ranks) or self.ranks[i] != rank:
            return
        following = self.ranks[i + 1] if i + 1 < len(self.ranks) else self.count
        if following == end:
            self.spans[i] = value

    def step(self, rank: int, stop: int) -> tuple[bool, Any, int | None] | None:
        """From the landmark at ``rank`` towards ``stop``: ``(True, newest, next
        rank)`` when its span is known and ends by ``stop``, else ``(False, key, next
        rank or None)``: the rows to read from its key, up to the next landmark (None:
        unknown). None when ``rank`` is no landmark."""
        i = bisect_left(self.ranks, rank)
        if i == len(self.ranks) or self.ranks[i] != rank:
            return None
        following = self.ranks[i + 1] if i + 1 < len(self.ranks) else self.count
        if self.spans[i] is not None and following is not None and following <= stop:
            return True, self.spans[i], following
        return False, self.keys[i], following

    def known_newest(self, start: int, stop: int) -> tuple[bool, Any]:
        """``(True, newest)`` of ranks ``[start, stop)`` from what is known, no query."""
        if (start, stop) in self.newest:
            return True, self.newest[(start, stop)][0]
        if self.count is not None and start >= self.count:
            return True, None
        value, rank = _NOTHING, start
        while rank < stop and (self.count is None or rank < self.count):
            known = self.step(rank, stop)
            if known is None or not known[0] or known[2] is None:
                return False, None
            value, rank = _later(value, known[1]), known[2]
        return True, _answer(value)

    def absorb(self, rank: int, asked: int, segments: list[Any]) -> None:
        """Remember a read of ``asked`` rows from the landmark at ``rank``: its
        segments ``(first key, rows, newest)``, each a landmark and, if it reaches
        the next landmark (or the table's end: fewer rows than asked), a span."""
        marks, at = [], rank
        for key, rows, value in segments:
            marks.append((key, at, rows, value))
            at += rows
        with self.lock:
            for key, start, _, _ in marks:
                self.mark(key, start)
            if at - rank < asked and self.count is None:
                self.count = at
            for _, start, rows, value in marks:
                self.settle(start, start + rows, value)


class _Statements:
    """The statements of a source, built once; the sync and async sources share them.

    Offsets and limits are bound parameters, so every statement compiles once
    (SQLAlchemy's compiled cache) and only values travel per call.
    """

    def __init__(
        self,
        dialect: str,
        source: FromClause | SelectBase,
        key: str | ColumnElement[Any],
        build: Callable[[Any], Item] | str,
        columns: Sequence[str | ColumnElement[Any]] | None,
        lastmod: str | ColumnElement[Any] | None,
        where: ColumnElement[bool] | None,
        version_table: str | None,
        change_log: str | None,
    ) -> None:
        if version_table is not None and change_log is not None:
            raise ConfigurationError("give version_table or change_log, not both")
        if isinstance(source, SelectBase):
            source = source.subquery("sitemap_rows")
        if not isinstance(source, FromClause):
            raise ConfigurationError("table must be a SQLAlchemy Table, FromClause or Select")
        frm = source

        def col(kind: str, given: str | ColumnElement[Any]) -> ColumnElement[Any]:
            name = given if isinstance(given, str) else getattr(given, "key", None)
            try:
                return frm.c[name]  # type: ignore[index]
            except (KeyError, TypeError):
                raise ConfigurationError(f"{kind} {given!r} is not a column of {frm}") from None

        k = col("key", key)
        lm = None if lastmod is None else col("lastmod", lastmod)
        selected = list(frm.c) if columns is None else [col("column", c) for c in columns]
        if not selected:
            raise ConfigurationError("columns must name at least one column")
        self.build = _builder(build, lm)
        #: Whether what a version knew is carried to the next: only where every call
        #: reads one snapshot (REPEATABLE READ, or SQLite's BEGIN). Elsewhere a write
        #: between two statements could leave a wrong rank, which carrying would keep
        #: across versions; there each version starts from nothing.
        self.carries = dialect in _SNAPSHOT_DIALECTS or dialect == "sqlite"

        def filtered(query: Select[Any]) -> Select[Any]:
            return query if where is None else query.where(where)

        # Any: Select's type parameters differ between SQLAlchemy 2.0 and 2.1.
        anchor: Any = bindparam("anchor")
        n = bindparam("n", type_=BigInteger)
        start = bindparam("start", type_=BigInteger)
        skip = bindparam("skip", type_=BigInteger)
        self.count = filtered(select(func.count()).select_from(frm))
        self.count_from = self.count.where(k >= anchor)
        # A page's first key: from the start (nothing known), or a few rows on from a
        # landmark below it, or back from one above it (``DESC``: the key's index is
        # read backwards), whichever is nearer.
        self.anchor = filtered(select(k)).order_by(k).offset(start).limit(1)
        self.seek_up = filtered(select(k)).where(k >= anchor).order_by(k).offset(skip).limit(1)
        self.seek_down = (
            filtered(select(k)).where(k < anchor).order_by(k.desc()).offset(skip).limit(1)
        )
        self.rows = filtered(select(*selected)).where(k >= anchor).order_by(k).limit(n)
        self.rows_open = filtered(select(*selected)).where(k >= anchor).order_by(k)
        # A stable page: the rows of a range of keys (see sqla_pages).
        low_key, high_key = bindparam("low", type_=BigInteger), bindparam("high", type_=BigInteger)
        self.window = select(*selected).where(k >= low_key, k < high_key).order_by(k)
        # Unversioned: nothing to remember an anchor in, so the page's first key is a
        # scalar subquery of the same statement (one round trip).
        skipped = filtered(select(k)).order_by(k).offset(start).limit(1).scalar_subquery()
        self.rows_skip = filtered(select(*selected)).where(k >= skipped).order_by(k).limit(n)
        self.rows_skip_open = filtered(select(*selected)).where(k >= skipped).order_by(k)
        self.recent: Any = None
        self.newest_skip: Any = None
        self.read: Any = None
        newest_of: ColumnElement[Any] | None = None
        # Count again the rows between two landmarks (either bound may be open), with
        # their newest lastmod and first key: what a write costs per changed segment.
        self.recount: dict[tuple[bool, bool], Any] = {}
        for low in (False, True):
            for high in (False, True):
                query = filtered(
                    select(
                        func.count(),
                        func.count() if lm is None else func.count(lm),
                        null() if lm is None else func.max(lm),
                        func.min(k),
                    ).select_from(frm)
                )
                if low:
                    query = query.where(k >= bindparam("low"))
                if high:
                    query = query.where(k < bindparam("high"))
                self.recount[(low, high)] = query
        if lm is not None:
            self.recent = filtered(select(*selected)).where(lm.is_not(None))
            self.recent = self.recent.order_by(lm.desc()).limit(n)
            newest_of = filtered(select(func.max(lm))).scalar_subquery()
            inner = (
                filtered(select(k.label("k"), lm.label("lm")))
                .where(k >= skipped)
                .order_by(k)
                .limit(n)
                .subquery()
            )
            # No date when a row of the range has none: Last-Modified (and an index
            # child's lastmod) is only claimed when every entry is dated.
            self.newest_skip = select(
                case((func.count(inner.c.lm) == func.count(), func.max(inner.c.lm)))
            )
            # Versioned: a range is read once per version, in segments of _SEGMENT
            # ranks (aligned on the whole table's ranks, so that the segments of a
            # page are a page's), each its first key, rows and newest lastmod.
            # A segment never straddles ``cut`` either: a read through a page's end
            # (to the landmark after it) gives the newest of the page's last rows, and
            # the next page's first key and first rows', in one statement.
            number = func.row_number().over(order_by=k) - 1 + bindparam("base", type_=BigInteger)
            ranked = (
                filtered(
                    select(
                        k.label("k"),
                        lm.label("lm"),
                        (number // bindparam("segment", type_=BigInteger)).label("segment"),
                        case((number >= bindparam("cut", type_=BigInteger), 1), else_=0).label(
                            "side"
                        ),
                    )
                )
                .where(k >= anchor)
                .order_by(k)
                .limit(n)
                .subquery()
            )
            self.read = (
                select(
                    func.min(ranked.c.k),
                    func.count(),
                    func.count(ranked.c.lm),
                    func.max(ranked.c.lm),
                )
                .group_by(ranked.c.segment, ranked.c.side)
                .order_by(ranked.c.segment, ranked.c.side)
            )
        # Scalar subqueries, not one SELECT of three aggregates: a lone MAX() is an
        # O(log n) index look-up in most databases, a MAX() beside COUNT(*) is not.
        self.fallback = select(
            filtered(select(func.count()).select_from(frm)).scalar_subquery(),
            filtered(select(func.max(k))).scalar_subquery(),
            *([] if newest_of is None else [newest_of]),
        )
        self.version: Any = None
        self.changes: Any = None
        counter = version_table if change_log is None else f"{change_log}_version"
        if counter is not None:
            self.version = select(column("version")).select_from(
                table(_name("version_table", counter), column("version"))
            )
        if change_log is not None:
            log = table(_name("change_log", change_log), column("id"), column("key"))
            # The changed keys since a version, each once, with two totals over all of
            # them (window sums, taken before the LIMIT): the log's rows, and those
            # without a key (a TRUNCATE). One round trip per write.
            self.changes = (
                select(
                    log.c.key,
                    func.sum(func.count()).over(),
                    func.sum(func.count() - func.count(log.c.key)).over(),
                )
                .where(log.c.id > bindparam("version", type_=BigInteger))
                .group_by(log.c.key)
                .order_by(log.c.key)
                .limit(bindparam("n", type_=BigInteger))
            )

    # -- plans (sans-I/O: they yield statements and are sent their rows back) ------

    def begin(self, memo: list[_Version | None]) -> Plan:
        """Read the version; return its facts (None: unversioned). ``memo[0]`` holds
        the facts of the last version seen, replaced (never cleared) on a change so a
        call still on the old version stays harmless."""
        if self.version is None:
            return None
        row = _first((yield self.version, {}))
        if row is None:
            raise ConfigurationError(
                "the version table is empty; create it with install_version_triggers()"
                " or install_change_log()"
            )
        version = row[0]
        facts = memo[0]
        if facts is not None and facts.version == version:
            return facts
        if facts is not None and version < facts.version:
            # Read before a write that another call has seen since: this call answers
            # for its own version, from nothing remembered, and publishes nothing (the
            # memo never goes back to an older version, emptier than the newer one).
            return _Version(version)
        fresh = _Version(version)
        if (
            facts is not None
            and self.changes is not None
            and self.carries
            and version > facts.version
        ):
            rows = yield self.changes, {"version": facts.version, "n": _CHANGED_KEYS + 1}
            # Ids run without gaps (the counter), one per bump: fewer rows than the
            # versions between means the log was pruned past what we knew, so nothing
            # can be carried over; nor past a TRUNCATE (a NULL key).
            if rows and rows[0][1] == version - facts.version and not rows[0][2]:
                changed = [row[0] for row in rows if row[0] is not None]
                yield from self.carry(facts, fresh, changed)
        with _PUBLISH:
            # Another call may have published this version, or a newer one, meanwhile.
            latest = memo[0]
            if latest is None or latest.version < version:
                memo[0] = fresh
            elif latest.version == version:
                return latest
        return fresh

    # Paging by rank, which the stable pages of the SQL sources replace (issue 21):
    # left as it is until then, so its complexity alone is waived.
    def carry(self, old: _Version, fresh: _Version, changed: list[Any]) -> Plan:  # noqa: C901
        """Keep in ``fresh`` what ``old`` knew that the ``changed`` keys (ascending)
        left standing, counting again each segment a changed key fell in.

        A write at a key changes only its segment (the rows between the landmarks
        around it): every other segment keeps its rows and newest lastmod, and every
        landmark keeps its key with its rank moved by the rows the segments before it
        gained or lost. So the count, the landmarks and the newest of every page that
        no change reached or shifted survive a write; an edit (or an append) costs
        its segment(s), a row added or removed in the middle also shifts the later
        pages, whose newest are read again (at each page's edges) when asked. Numeric keys
        only: Python need not order text as the database's collation does.
        """
        with old.lock:
            keys, ranks, spans = list(old.keys), list(old.ranks), list(old.spans)
            count, newest = old.count, dict(old.newest)
        # Numeric keys only. A column's keys are of one type but under SQLite's dynamic
        # typing, where 1 and 'x1' may share one: then the bisection cannot order them,
        # and nothing is carried (the next calls start over, as after any write).
        if not all(_number(key) for key in (*changed, *keys[:1])):
            return
        try:
            dirty = sorted({bisect_right(keys, key) - 1 for key in changed})
        except TypeError:
            return
        cut: int | None = None  # the first dirty span not counted again: nothing after
        if len(changed) > _CHANGED_KEYS:
            cut = dirty[0]
        recounts: dict[int, tuple[int, int, Any, Any]] = {}
        budget = _RECOUNT_ROWS
        for i in dirty:
            if cut is not None and i >= cut:
                break
            low = keys[i] if i >= 0 else None
            high = keys[i + 1] if i + 1 < len(keys) else None
            end = ranks[i + 1] if high is not None else count
            if end is None:  # the table's tail, never counted: it stays unknown
                cut = i
                break
            before = end - (ranks[i] if i >= 0 else 0)
            budget -= before
            if budget < 0:
                cut = i
                break
            params = {
                name: value for name, value in (("low", low), ("high", high)) if value is not None
            }
            rows, dated, value, first = (
                yield self.recount[(low is not None, high is not None)], params
            )[0]
            value = _NOTHING if not rows else (value if dated == rows else _UNDATED)
            recounts[i] = (int(rows) - before, int(rows), value, first)
        # The landmarks again: the runs no change reached are copied whole (ten
        # thousand at ten million rows), their ranks moved by what the segments
        # before them gained or lost.
        new_keys: list[Any] = []
        new_ranks: list[int] = []
        new_spans: list[Any] = []
        shift, copied = 0, 0

        def copy(stop: int) -> None:
            new_keys.extend(keys[copied:stop])
            new_spans.extend(spans[copied:stop])
            run = ranks[copied:stop]
            new_ranks.extend([rank + shift for rank in run] if shift else run)

        for i in sorted(recounts):
            copy(max(i, 0))
            delta, rows, value, first = recounts[i]
            if rows:  # its first row may be a later one; none left: merged before
                new_keys.append(first)
                new_ranks.append((ranks[i] if i >= 0 else 0) + shift)
                new_spans.append(value)
            shift += delta
            copied = i + 1
        if cut is None:
            copy(len(keys))
        else:
            copy(max(cut, 0))
            if cut >= 0 and keys[cut] not in changed:  # its rank is known, its span not
                new_keys.append(keys[cut])
                new_ranks.append(ranks[cut] + shift)
                new_spans.append(None)
            if new_spans:
                new_spans[-1] = None  # the next landmark is gone: its extent is unknown
        with fresh.lock:
            fresh.keys, fresh.ranks, fresh.spans = new_keys, new_ranks, new_spans
            if cut is None and count is not None:
                fresh.count = count + shift
            # A remembered range stands if no change reached it and none shifted it.
            deltas = [0]
            for i in dirty:
                deltas.append(deltas[-1] + (recounts[i][0] if i in recounts else 0))
            for window, (value, first, stop_key) in newest.items():
                if not (_number(first) and (stop_key is _END or _number(stop_key))):
                    continue
                a = bisect_right(keys, first) - 1
                b = len(keys) - 1 if stop_key is _END else bisect_right(keys, stop_key) - 1
                if stop_key is not _END and b >= 0 and keys[b] == stop_key:
                    b -= 1  # the range ends where span b begins
                if cut is not None and b >= cut:
                    continue
                j = bisect_left(dirty, a)
                if j < len(dirty) and dirty[j] <= b:
                    continue
                if deltas[j] != 0:
                    continue
                fresh.newest[window] = (value, first, stop_key)
            fresh.pending = sorted(set(newest) - set(fresh.newest))

    def find(self, facts: _Version, rank: int) -> Plan:
        """The key of the row at ``rank``, or ``_END``; left as a landmark."""
        with facts.lock:
            key = facts.at(rank)
            below, above = facts.near(rank)
            count = facts.count
        if key is not None:
            return key
        if count is not None and rank >= count:
            return _END
        if above is not None and (below is None or above[1] - rank <= rank - below[1]):
            row = _first((yield self.seek_down, {"anchor": above[0], "skip": above[1] - rank - 1}))
        elif below is not None:
            row = _first((yield self.seek_up, {"anchor": below[0], "skip": rank - below[1]}))
        else:
            row = _first((yield self.anchor, {"start": rank}))
        if row is None:
            return _END
        with facts.lock:
            facts.mark(row[0], rank)
        return row[0]

    def count_plan(self, memo: list[_Version | None], pinned: _Version | None = None) -> Plan:
        """How many rows: remembered per version, else counted from the last landmark
        (from the start when there is none)."""
        if pinned is not None and pinned.count is not None:
            return pinned.count
        facts = yield from self.begin(memo)
        if facts is not None and facts.count is not None:
            return facts.count
        last = None
        if facts is not None:
            with facts.lock:
                last = (facts.keys[-1], facts.ranks[-1]) if facts.keys else None
        if last is not None:
            (rest,) = (yield self.count_from, {"anchor": last[0]})[0]
            count = last[1] + int(rest)
        else:
            (count,) = (yield self.count, {})[0]
        if facts is not None:
            with facts.lock:
                facts.count = int(count)
        return int(count)

    def fingerprint_plan(self, memo: list[_Version | None]) -> Plan:
        """The version (one read) and its facts, or ``(COUNT(*), MAX(key)[,
        MAX(lastmod)])`` and None."""
        facts = yield from self.begin(memo)
        if facts is not None:
            return facts.version, facts
        return tuple((yield self.fallback, {})[0]), None

    def page_plan(self, memo: list[_Version | None], start: int, limit: int | None) -> Plan:
        """The rows query of ``[start, start + limit)`` (None: empty), after the anchor."""
        facts = yield from self.begin(memo)
        if facts is None:
            if limit is None:
                return self.rows_skip_open, {"start": start}
            return self.rows_skip, {"start": start, "n": limit}
        first = yield from self.find(facts, start)
        if first is _END:
            return None
        if limit is None:
            return self.rows_open, {"anchor": first}
        return self.rows, {"anchor": first, "n": limit}

    def newest_plan(
        self, memo: list[_Version | None], start: int, stop: int, pinned: _Version | None = None
    ) -> Plan:
        """The newest ``lastmod`` of ``[start, stop)``, None if a row has none.

        The first call that must read (the first index after a write) also reads, in
        the same transaction, every range the last version was asked that the write
        left unknown (the pages a row inserted or deleted shifted): one version read
        for them all, not one per page.
        """
        if self.read is None or self.newest_skip is None:
            return None
        if pinned is not None:
            with pinned.lock:
                known, value = pinned.known_newest(start, stop)
            if known:
                return value
        facts = yield from self.begin(memo)
        if facts is None:
            if stop <= start:
                return None
            return _first((yield self.newest_skip, {"start": start, "n": stop - start}))[0]
        with facts.lock:
            pending, facts.pending = facts.pending, []
        for window in pending:
            yield from self.range_plan(facts, *window)
        return (yield from self.range_plan(facts, start, stop))

    def range_plan(self, facts: _Version, start: int, stop: int) -> Plan:
        """The newest of ``[start, stop)`` under ``facts``: from the spans known, reading
        the rows of those unknown (a segment's rows each, or the range's)."""
        with facts.lock:
            known, value = facts.known_newest(start, stop)
        if known:
            return value
        first = yield from self.find(facts, start)
        value, rank = _NOTHING, start
        while first is not _END and rank < stop:
            with facts.lock:
                step = facts.step(rank, stop)
                count = facts.count
            if count is not None and rank >= count:
                break
            if step is None:  # no landmark here (forgotten at the limit): find it again
                if (yield from self.find(facts, rank)) is _END:
                    break
                continue
            if step[0] and step[2] is not None:  # a known span: the next rank is known
                value, rank = _later(value, step[1]), step[2]
                continue
            _, key, following = step
            # To the next landmark when it is at or near past ``stop`` (a span a shift
            # split: this page's end and the next page's start in one read), else one
            # row past ``stop``: the next page's first key, a landmark.
            if following is not None and following - stop <= 2 * _SEGMENT:
                asked = following - rank
            else:
                asked = stop - rank + 1
            params = {"anchor": key, "base": rank, "segment": _SEGMENT, "cut": stop, "n": asked}
            rows = yield self.read, params
            segments = [
                (low, int(n), _NOTHING if not n else (top if dated == n else _UNDATED))
                for low, n, dated, top in rows
            ]
            got = 0
            for _, n, top in segments:
                if rank + got < stop:  # a segment never straddles stop (see self.read)
                    value = _later(value, top)
                got += n
            facts.absorb(rank, asked, segments)
            if got < asked:
                break
            rank += got
        with facts.lock:
            stop_key = facts.at(stop)
            if len(facts.newest) >= _MARKS_LIMIT:
                facts.newest.clear()
            facts.newest[(start, stop)] = (
                _answer(value),
                first,
                _END if stop_key is None else stop_key,
            )
        return _answer(value)


def _builder(build: Callable[[Any], Item] | str, lastmod: ColumnElement[Any] | None) -> Any:
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


def _run(conn: Connection, plan: Plan, step: Step) -> Any:
    """Drive ``plan``, whose first statement is ``step``, on a sync connection."""
    try:
        while True:
            step = plan.send(conn.execute(step[0], step[1]).all())
    except StopIteration as done:
        return done.value


async def _arun(conn: AsyncConnection, plan: Plan, step: Step) -> Any:
    """Drive ``plan``, whose first statement is ``step``, on an async connection."""
    try:
        while True:
            result = await conn.execute(step[0], step[1])
            step = plan.send(result.all())
    except StopIteration as done:
        return done.value


def _sqlite_snapshot(conn: Connection) -> None:
    """Open a read transaction on an SQLite connection, unless one is open.

    Python's sqlite3 begins no transaction for a ``SELECT``, so each statement of a
    call would see the latest commit: a write between the version read and a count
    would leave a fact of the next version remembered under this one, and a change
    log carries facts over from version to version. A ``BEGIN`` holds one snapshot
    for the call; the pool's rollback ends it when the connection goes back.
    """
    if getattr(conn.connection.dbapi_connection, "in_transaction", False):
        return
    try:
        conn.exec_driver_sql("BEGIN")
    except OperationalError as exc:
        # aiosqlite's adapter does not tell whether a transaction is open: the engine
        # may have begun one already, which SQLite refuses to begin again.
        if "within a transaction" not in str(exc):
            raise


def _started(plan: Plan) -> tuple[bool, Any]:
    """``(True, answer)`` when ``plan`` needs no statement; else ``(False, first step)``."""
    try:
        return False, next(plan)
    except StopIteration as done:
        return True, done.value


class _Base:
    """What the sync and the async source share: statements, memo and the version
    noted for a request."""

    def _setup(
        self,
        dialect: str,
        table: FromClause | SelectBase,
        key: str | ColumnElement[Any],
        build: Callable[[Any], Item] | str,
        columns: Sequence[str | ColumnElement[Any]] | None,
        lastmod: str | ColumnElement[Any] | None,
        where: ColumnElement[bool] | None,
        version_table: str | None,
        change_log: str | None,
        page_facts: str | None = None,
    ) -> None:
        if page_facts is not None and any(
            given is not None for given in (version_table, change_log, where)
        ):
            raise ConfigurationError(
                "page_facts are the source's version and count the rows their condition"
                " holds for: give neither version_table nor change_log with them, and the"
                " where condition to install_page_facts()"
            )
        self._sql = _Statements(
            dialect, table, key, build, columns, lastmod, where, version_table, change_log
        )
        #: The stable pages' facts (only with ``page_facts``; see sqla_pages).
        self._page_facts = None if page_facts is None else PageFacts(page_facts)
        #: The facts' condition, as last read with them (None: not read yet).
        self._condition: str | None = None
        #: The facts of the last version seen (a one-item list: plans replace it).
        self._memo: list[_Version | None] = [None]
        #: SQLite: each call opens a read transaction itself (see _sqlite_snapshot).
        self._begin = dialect == "sqlite" and self._sql.version is not None

    def _window(self) -> Any:
        # A stable page's rows: a range of keys, those the facts' condition holds for.
        condition = self._condition
        return self._sql.window.where(text(condition)) if condition else self._sql.window

    def _noted(self, rows: list[Any], layout: bool) -> list[Any]:
        # Rows of a facts query, the condition they carry noted (see _window).
        if layout:
            assert self._page_facts is not None
            self._condition = self._page_facts.condition(rows)
        elif rows:
            self._condition = str(rows[0][-1])
        return rows

    def _still(self, known: _Version, row: Any) -> bool:
        """Whether the version ``row`` read outside a transaction is still ``known``'s
        (then noted for the request, as the facts' own version read would be)."""
        if row is None or row[0] != known.version:
            return False
        self._pin(known)
        return True

    def _pin(self, facts: _Version | None) -> None:
        """Note in the request's scope (see :mod:`sitemap_core.sources.scope`) the version
        :meth:`fingerprint` answered with, so that the request's counts and newest
        dates answer for it, from what is known of it, without reading it again."""
        notes = request_notes()
        if notes is not None and facts is not None:
            # The source itself is kept with its note: alive for the request, its id
            # cannot be another source's (a freed object's address is reused).
            notes[id(self)] = (self, facts)

    def _facts_query(self, kind: str, params: dict[str, int] | None = None) -> Any:
        """The statement of one page facts query (see :class:`PageFacts`)."""
        assert self._page_facts is not None
        statement = text(getattr(self._page_facts, f"{kind}_sql"))
        return statement, params or {}

    def _pinned(self) -> _Version | None:
        """The version the current request's fingerprint answered with; None outside
        a request (or before its fingerprint), when calls read the version themselves."""
        notes = request_notes()
        note = None if notes is None else notes.get(id(self))
        if isinstance(note, tuple) and note[0] is self and isinstance(note[1], _Version):
            return note[1]
        return None


_E = TypeVar("_E", Engine, AsyncEngine)


def _isolated(engine: _E) -> tuple[_E | None, _E]:
    """The engine for the version read alone, and the one for every other call.

    On the dialects of :data:`_SNAPSHOT_DIALECTS` a call's statements run in one
    ``REPEATABLE READ`` snapshot, while the version read alone goes in ``AUTOCOMMIT``
    (one statement is its own snapshot: no BEGIN, no ROLLBACK, a 304 costs one round
    trip). Elsewhere there is no quick engine, and the engine is as given.
    """
    if engine.dialect.name not in _SNAPSHOT_DIALECTS:
        return None, engine
    return (
        engine.execution_options(isolation_level="AUTOCOMMIT"),
        engine.execution_options(isolation_level="REPEATABLE READ"),
    )


class SQLAlchemySource(_Base):
    """A table or query as a sliceable sitemap source, read through a sync ``Engine``.

    ``table`` is a ``Table`` (or ``FromClause``) or a ``Select``; ``key`` the unique,
    not-NULL column rows are ordered and paged by; ``lastmod`` the date column whose
    maximum :meth:`newest` reports and that :meth:`recent` orders by; ``columns`` what
    is selected (all of the table's by default); ``where`` a SQLAlchemy condition.
    ``build`` turns one SQLAlchemy ``Row`` into an :class:`~sitemap_core.Entry`, a URL
    string or a tuple row, or is a loc template (``"https://x.org/p/{slug}"``) filled
    from the row, with ``lastmod``'s value as the date. ``version_table`` or
    ``change_log`` name what :func:`install_version_triggers` or
    :func:`install_change_log` installed; see the module documentation for costs.
    """

    def __init__(
        self,
        engine: Engine,
        table: FromClause | SelectBase,
        *,
        key: str | ColumnElement[Any],
        build: Callable[[Any], Item] | str,
        lastmod: str | ColumnElement[Any] | None = None,
        columns: Sequence[str | ColumnElement[Any]] | None = None,
        where: ColumnElement[bool] | None = None,
        version_table: str | None = None,
        change_log: str | None = None,
        page_facts: str | None = None,
    ) -> None:
        if not isinstance(engine, Engine):
            raise ConfigurationError(
                "engine must be a SQLAlchemy Engine (AsyncSQLAlchemySource takes an AsyncEngine)"
            )
        self._setup(
            engine.dialect.name, table, key, build, columns, lastmod, where, version_table,
            change_log, page_facts,
        )  # fmt: skip
        self._quick, self._engine = _isolated(engine)

    def _call(self, plan: Plan) -> Any:
        done, value = _started(plan)
        if done:
            return value
        with self._engine.connect() as conn:
            if self._begin:
                _sqlite_snapshot(conn)
            return _run(conn, plan, value)

    def _facts_rows(self, kind: str, params: dict[str, int] | None = None) -> list[Any]:
        # One small page facts query, on the quick engine where there is one.
        engine = self._quick or self._engine
        with engine.connect() as conn:
            try:
                rows = list(conn.execute(*self._facts_query(kind, params)).all())
            except DBAPIError as exc:
                raise _missing(self._page_facts, exc) from exc
        return self._noted(rows, kind == "layout")

    def __len__(self) -> int:
        """How many rows the (filtered) source holds; remembered per version (in a
        request, of the version its :meth:`fingerprint` answered with). With
        ``page_facts``, the sum of the pages' counts."""
        if self._page_facts is not None:
            return int(self._facts_rows("count")[0][0])
        return int(self._call(self._sql.count_plan(self._memo, self._pinned())))

    @property
    def stable_pages(self) -> Callable[[int, int], list[Page]] | None:
        """With ``page_facts``: the stable pages numbered ``[first, stop)`` (see
        :mod:`sitemap_core.sources.sql.sqla_pages`); None without."""
        return None if self._page_facts is None else self._stable_pages

    def _stable_pages(self, first: int, stop: int) -> list[Page]:
        return PageFacts.pages(self._facts_rows("pages", PageFacts.bounds(first, stop)))

    def stable_items(self, start: int, stop: int) -> Iterator[Item]:
        """The items of the rows whose keys lie in ``[start, stop)``: a stable page."""
        if self._condition is None:
            self._facts_rows("layout")
        with self._engine.connect() as conn:
            yield from self._streamed(conn, self._window(), {"low": start, "high": stop})

    def _streamed(self, conn: Connection, statement: Any, params: Any) -> Iterator[Item]:
        """The items ``build`` makes of the rows of ``statement``, streamed (a
        server-side cursor where the driver has one)."""
        result = conn.execution_options(stream_results=True).execute(statement, params)
        build = self._sql.build
        try:
            for row in result:
                yield build(row)
        finally:
            # A page closed early (a client hanging up) closes its server-side
            # cursor now, not when the garbage collector finds it still open.
            result.close()

    def __getitem__(self, window: slice, /) -> Iterator[Item]:
        """The items of rows ``[start, stop)`` in key order, read by one bounded query.

        Lazy: the query runs at the first ``next()``; rows stream (a server-side cursor
        where the driver has one) and the connection returns to the pool when the
        generator ends or is closed.
        """
        start, limit = slice_window(type(self).__name__, window)
        return self._rows(start, limit)

    def _rows(self, start: int, limit: int | None) -> Iterator[Item]:
        if limit == 0:
            return
        with self._engine.connect() as conn:
            plan = self._sql.page_plan(self._memo, start, limit)
            done, value = _started(plan)
            if not done and self._begin:
                _sqlite_snapshot(conn)
            query = value if done else _run(conn, plan, value)
            if query is None:
                return
            yield from self._streamed(conn, *query)

    def fingerprint(self, start: int, stop: int) -> object:
        """The version (one-row read) when versioned, else ``(COUNT(*), MAX(key),
        MAX(lastmod))`` of the whole filtered set; ``start``/``stop`` are not used.

        Versioned, the version is noted in the request's scope: the request's ``len()``
        and :meth:`newest` answer for it from what is known, without a query. With
        ``page_facts``, the layout's version (one row).
        """
        if self._page_facts is not None:
            return self._page_facts.fingerprint(self._facts_rows("layout"))
        known = self._memo[0]
        if self._quick is not None and known is not None:
            with self._quick.connect() as conn:
                row = conn.execute(self._sql.version).first()
            if self._still(known, row):
                return known.version
        value, facts = self._call(self._sql.fingerprint_plan(self._memo))
        self._pin(facts)
        return value

    def newest(self, start: int, stop: int) -> Any:
        """The newest ``lastmod`` of rows ``[start, stop)``; None without a ``lastmod``
        column or when a row of the range has no date. Remembered per version (in a
        request, of the version its :meth:`fingerprint` answered with)."""
        return self._call(self._sql.newest_plan(self._memo, start, stop, self._pinned()))

    def recent(self, limit: int) -> list[Item] | None:
        """The ``limit`` rows with the newest ``lastmod``, newest first, in one query;
        None without a ``lastmod`` column (the source is then walked)."""
        if self._sql.recent is None:
            return None
        with self._engine.connect() as conn:
            build = self._sql.build
            return [build(row) for row in conn.execute(self._sql.recent, {"n": limit})]


class AsyncSQLAlchemySource(_Base):
    """:class:`SQLAlchemySource` for an ``AsyncEngine`` (``asyncpg``, ``psycopg``,
    ``aiosqlite``): async :meth:`count`, :meth:`slice`, :meth:`fingerprint`,
    :meth:`newest` and :meth:`recent`, the shape
    :meth:`AsyncUrlSource.from_object <sitemap_core.sources.aio.AsyncUrlSource.from_object>`
    serves without a worker thread. Same arguments and costs.
    """

    def __init__(
        self,
        engine: AsyncEngine,
        table: FromClause | SelectBase,
        *,
        key: str | ColumnElement[Any],
        build: Callable[[Any], Item] | str,
        lastmod: str | ColumnElement[Any] | None = None,
        columns: Sequence[str | ColumnElement[Any]] | None = None,
        where: ColumnElement[bool] | None = None,
        version_table: str | None = None,
        change_log: str | None = None,
        page_facts: str | None = None,
    ) -> None:
        if not isinstance(engine, AsyncEngine):
            raise ConfigurationError(
                "engine must be a SQLAlchemy AsyncEngine (SQLAlchemySource takes an Engine)"
            )
        self._setup(
            engine.dialect.name, table, key, build, columns, lastmod, where, version_table,
            change_log, page_facts,
        )  # fmt: skip
        self._quick, self._engine = _isolated(engine)

    async def _call(self, plan: Plan) -> Any:
        done, value = _started(plan)
        if done:
            return value
        async with self._engine.connect() as conn:
            if self._begin:
                await conn.run_sync(_sqlite_snapshot)
            return await _arun(conn, plan, value)

    async def _facts_rows(self, kind: str, params: dict[str, int] | None = None) -> list[Any]:
        # As SQLAlchemySource._facts_rows.
        engine = self._quick or self._engine
        async with engine.connect() as conn:
            try:
                rows = list((await conn.execute(*self._facts_query(kind, params))).all())
            except DBAPIError as exc:
                raise _missing(self._page_facts, exc) from exc
        return self._noted(rows, kind == "layout")

    async def count(self) -> int:
        """How many rows the (filtered) source holds; remembered per version."""
        if self._page_facts is not None:
            return int((await self._facts_rows("count"))[0][0])
        return int(await self._call(self._sql.count_plan(self._memo, self._pinned())))

    @property
    def stable_pages(self) -> Callable[[int, int], Awaitable[list[Page]]] | None:
        """As :attr:`SQLAlchemySource.stable_pages`, a coroutine function."""
        return None if self._page_facts is None else self._stable_pages

    async def _stable_pages(self, first: int, stop: int) -> list[Page]:
        return PageFacts.pages(await self._facts_rows("pages", PageFacts.bounds(first, stop)))

    async def stable_items(self, start: int, stop: int) -> AsyncIterator[Item]:
        """As :meth:`SQLAlchemySource.stable_items`, streamed."""
        if self._condition is None:
            await self._facts_rows("layout")
        async with self._engine.connect() as conn:
            result = await conn.stream(self._window(), {"low": start, "high": stop})
            build = self._sql.build
            try:
                async for row in result:
                    yield build(row)
            finally:
                await result.close()

    async def slice(self, start: int, stop: int | None) -> AsyncIterator[Item]:
        """The items of rows ``[start, stop)`` in key order, streamed."""
        start, limit = slice_window(type(self).__name__, slice(start, stop))
        if limit == 0:
            return
        async with self._engine.connect() as conn:
            plan = self._sql.page_plan(self._memo, start, limit)
            done, value = _started(plan)
            if not done and self._begin:
                await conn.run_sync(_sqlite_snapshot)
            query = value if done else await _arun(conn, plan, value)
            if query is None:
                return
            result = await conn.stream(*query)
            build = self._sql.build
            try:
                async for row in result:
                    yield build(row)
            finally:
                await result.close()

    async def fingerprint(self, start: int, stop: int) -> object:
        """As :meth:`SQLAlchemySource.fingerprint`."""
        if self._page_facts is not None:
            return self._page_facts.fingerprint(await self._facts_rows("layout"))
        known = self._memo[0]
        if self._quick is not None and known is not None:
            async with self._quick.connect() as conn:
                row = (await conn.execute(self._sql.version)).first()
            if self._still(known, row):
                return known.version
        value, facts = await self._call(self._sql.fingerprint_plan(self._memo))
        self._pin(facts)
        return value

    async def newest(self, start: int, stop: int) -> Any:
        """As :meth:`SQLAlchemySource.newest`."""
        return await self._call(self._sql.newest_plan(self._memo, start, stop, self._pinned()))

    async def recent(self, limit: int) -> list[Item] | None:
        """As :meth:`SQLAlchemySource.recent`."""
        if self._sql.recent is None:
            return None
        async with self._engine.connect() as conn:
            result = await conn.execute(self._sql.recent, {"n": limit})
            build = self._sql.build
            return [build(row) for row in result]


def _missing(facts: PageFacts | None, error: DBAPIError) -> Exception:
    # A page facts query that failed: facts not installed, or another database error.
    message = str(error.orig).lower()
    if facts is not None and ("does not exist" in message or "no such table" in message):
        return facts.not_installed()
    return error


# -- triggers -------------------------------------------------------------------------


def _ddl(target: Connection | Engine, statements: Callable[[Connection], list[str]]) -> None:
    """Run the DDL ``statements(conn)`` gives, in one transaction, committed."""
    if isinstance(target, Engine):
        with target.begin() as conn:
            for statement in statements(conn):
                conn.exec_driver_sql(statement)
        return
    began = not target.in_transaction()
    for statement in statements(target):
        target.exec_driver_sql(statement)
    if began:
        target.commit()


def _counter_ddl(quote: Callable[[str], str], counter: str) -> list[str]:
    c = quote(counter)
    return [
        f"CREATE TABLE IF NOT EXISTS {c} (version BIGINT NOT NULL)",
        f"INSERT INTO {c} (version) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM {c})",
    ]


def _unsupported(dialect: str) -> ConfigurationError:
    return ConfigurationError(
        f"no trigger DDL for the {dialect!r} dialect here (PostgreSQL and SQLite);"
        " docs/sqlalchemy.md gives the MySQL statements to run once"
    )


def install_version_triggers(target: Connection | Engine, table: str, version_table: str) -> None:
    """Create ``version_table`` (one row, ``version``) and triggers bumping it on every
    insert, update and delete of ``table`` (and TRUNCATE on PostgreSQL).

    Its value is then an exact O(1) fingerprint for ``version_table=``. PostgreSQL
    bumps it once per statement, SQLite once per row. Idempotent; commits (on a
    Connection already in a transaction, the caller commits). PostgreSQL and SQLite.
    """
    _name("table", table)
    _name("version_table", version_table)

    def statements(conn: Connection) -> list[str]:
        quote = conn.dialect.identifier_preparer.quote
        t, v = quote(table), quote(version_table)
        done = _counter_ddl(quote, version_table)
        prefix = f"{table}_{version_table}"
        if conn.dialect.name == "postgresql":
            function, trigger = quote(f"{prefix}_bump"), quote(f"{prefix}_trigger")
            return [
                *done,
                f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql"
                f" AS $$ BEGIN UPDATE {v} SET version = version + 1; RETURN NULL; END $$",
                f"DROP TRIGGER IF EXISTS {trigger} ON {t}",
                f"CREATE TRIGGER {trigger} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE"
                f" ON {t} FOR EACH STATEMENT EXECUTE FUNCTION {function}()",
            ]
        if conn.dialect.name == "sqlite":
            return [
                *done,
                *(
                    f"CREATE TRIGGER IF NOT EXISTS {quote(f'{prefix}_{event.lower()}')}"
                    f" AFTER {event} ON {t} BEGIN UPDATE {v} SET version = version + 1; END"
                    for event in ("INSERT", "UPDATE", "DELETE")
                ),
            ]
        raise _unsupported(conn.dialect.name)

    _ddl(target, statements)


def install_change_log(target: Connection | Engine, table: str, key: str, log: str) -> None:
    """Create the change log ``log`` (``id``, ``key``), its counter ``<log>_version``
    and triggers recording the key of every row of ``table`` inserted, updated (old
    and new key) or deleted.

    Each change takes the next counter value as its log id, so the counter is the
    table's version (``change_log=log``) and the log tells which keys changed since a
    version: the source keeps what it knew of pages before the smallest. A TRUNCATE
    (PostgreSQL) logs a NULL key: everything is recomputed. The log grows by a row per
    change: prune it now and then (``DELETE FROM log WHERE id < ...``); a source that
    remembered a pruned version recomputes everything. Idempotent; commits (on a
    Connection already in a transaction, the caller commits). PostgreSQL and SQLite;
    refused on SQLite for a table with another unique index (``INSERT OR REPLACE``
    deletes there without a DELETE trigger).
    """
    for kind, value in (("table", table), ("key", key), ("change_log", log)):
        _name(kind, value)
    counter = f"{log}_version"

    def statements(conn: Connection) -> list[str]:
        quote = conn.dialect.identifier_preparer.quote
        t, k, lg, v = quote(table), quote(key), quote(log), quote(counter)
        dialect = conn.dialect.name
        columns = {c["name"]: c for c in inspect(conn).get_columns(table)}
        if key not in columns:
            raise ConfigurationError(f"table {table!r} has no column {key!r}")
        key_type = columns[key]["type"].compile(dialect=conn.dialect)
        done = [
            *_counter_ddl(quote, counter),
            f"CREATE TABLE IF NOT EXISTS {lg} (id BIGINT PRIMARY KEY, key {key_type})",
        ]
        if dialect == "postgresql":
            function, trigger = quote(f"{table}_{log}_record"), quote(f"{table}_{log}_trigger")
            cleared = quote(f"{table}_{log}_truncate")

            def record(image: str) -> str:
                return (
                    f"UPDATE {v} SET version = version + 1;"
                    f" INSERT INTO {lg} (id, key) SELECT version, {image} FROM {v};"
                )

            return [
                *done,
                f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql"
                " AS $$ BEGIN"
                f" IF TG_OP = 'TRUNCATE' THEN {record('NULL')} RETURN NULL; END IF;"
                f" IF TG_OP IN ('UPDATE', 'DELETE') THEN {record(f'OLD.{k}')} END IF;"
                f" IF TG_OP IN ('INSERT', 'UPDATE') THEN {record(f'NEW.{k}')} END IF;"
                " RETURN NULL; END $$",
                f"DROP TRIGGER IF EXISTS {trigger} ON {t}",
                f"CREATE TRIGGER {trigger} AFTER INSERT OR UPDATE OR DELETE ON {t}"
                f" FOR EACH ROW EXECUTE FUNCTION {function}()",
                f"DROP TRIGGER IF EXISTS {cleared} ON {t}",
                f"CREATE TRIGGER {cleared} AFTER TRUNCATE ON {t}"
                f" FOR EACH STATEMENT EXECUTE FUNCTION {function}()",
            ]
        if dialect == "sqlite":
            for index in inspect(conn).get_indexes(table):
                if index.get("unique") and index["column_names"] != [key]:
                    raise ConfigurationError(
                        f"table {table!r} has a unique index on {index['column_names']}:"
                        " INSERT OR REPLACE there deletes rows without a DELETE trigger, so"
                        " a change log would miss them; use install_version_triggers()"
                    )
            images = {"INSERT": ("NEW",), "UPDATE": ("OLD", "NEW"), "DELETE": ("OLD",)}
            return [
                *done,
                *(
                    f"CREATE TRIGGER IF NOT EXISTS {quote(f'{table}_{log}_{event.lower()}')}"
                    f" AFTER {event} ON {t} BEGIN "
                    + " ".join(
                        f"UPDATE {v} SET version = version + 1;"
                        f" INSERT INTO {lg} (id, key) SELECT version, {image}.{k} FROM {v};"
                        for image in rows
                    )
                    + " END"
                    for event, rows in images.items()
                ),
            ]
        raise _unsupported(dialect)

    _ddl(target, statements)
