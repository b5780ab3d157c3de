"""Sitemap sources over SQLAlchemy Core: any database SQLAlchemy speaks to.

:class:`SQLAlchemySource` (an :class:`~sqlalchemy.engine.Engine`, for the sync fronts)
and :class:`AsyncSQLAlchemySource` (an :class:`~sqlalchemy.ext.asyncio.AsyncEngine`,
for the ASGI front) are what :class:`~sitemap_core.sql.SQLiteSource` is for SQLite,
with the same contract: rows listed in ``ORDER BY key`` order (``key`` unique and not
NULL), page N read by keyset ("seek") paging ``WHERE key >= :anchor ORDER BY key
LIMIT :n``, and cheap facts (count, fingerprint, each page's newest ``lastmod``) for
ETags, 304s and the index::

    from sqlalchemy import create_engine
    from sitemap_core import UrlSource
    from sitemap_core.sqla import SQLAlchemySource, install_change_log

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
and what was computed under that version is remembered until it changes: the count,
each page's newest ``lastmod`` and each page's first key (its "anchor"). A 304 then
costs the version read; ``len()`` and a known page's ``newest`` too; a page, the
version read and its rows, whatever its number, once the index has been served (the
index finds page N+1's first key from page N's last key, one O(log n) step). The
version comes from triggers installed by :func:`install_version_triggers` (a counter
bumped by every write) or :func:`install_change_log` (the counter, plus the key of
every changed row: after a write, what was known of the pages entirely before the
smallest changed key is kept, so an append costs the index its last page again).

Snapshots: on PostgreSQL and MySQL each call runs in a ``REPEATABLE READ``
transaction, so the version and the facts remembered under it come from one
snapshot. SQLite's Python driver does not begin a transaction for a ``SELECT``: there
a write between two statements of one call can have a fact remembered under the
version before it, until the next write (the same window as any count-based paging).

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
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Sequence
from typing import Any, TypeAlias

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    FromClause,
    Integer,
    Select,
    SelectBase,
    bindparam,
    case,
    column,
    func,
    inspect,
    select,
    table,
)
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from .errors import ConfigurationError
from .sources import Item
from .sql import _END, IDENTIFIER, _Facts

__all__ = [
    "AsyncSQLAlchemySource",
    "SQLAlchemySource",
    "install_change_log",
    "install_version_triggers",
]

#: One statement of a plan and its parameters; the plan is sent the first row back.
Step: TypeAlias = tuple[Any, dict[str, Any]]
#: A sans-I/O plan: yields statements, receives each one's first row (or None),
#: returns its answer. The sync and the async source run the same plans.
Plan: TypeAlias = Generator[Step, Any, Any]

#: Dialects whose default isolation lets a write land between two statements of a call
#: while ``REPEATABLE READ`` gives the call one snapshot.
_SNAPSHOT_DIALECTS = frozenset({"postgresql", "mysql", "mariadb"})

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _name(kind: str, value: object) -> str:
    """``value`` if it is a plain identifier; names in trigger DDL must be."""
    if not isinstance(value, str) or not IDENTIFIER.fullmatch(value):
        raise ConfigurationError(
            f"{kind} {value!r} is not a plain SQL identifier ([A-Za-z_][A-Za-z0-9_]*)"
        )
    return value


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
        self.dialect = dialect

        def filtered(query: Select[Any]) -> Select[Any]:
            return query if where is None else query.where(where)

        anchor: Any = bindparam("anchor")
        n = bindparam("n", type_=Integer)
        start = bindparam("start", type_=Integer)
        self.count = filtered(select(func.count()).select_from(frm))
        self.count_from = self.count.where(k >= anchor)
        self.anchor = filtered(select(k)).order_by(k).offset(start).limit(1)
        self.after = filtered(select(k)).where(k > bindparam("last")).order_by(k).limit(1)
        self.rows = filtered(select(*selected)).where(k >= anchor).order_by(k).limit(n)
        self.rows_open = filtered(select(*selected)).where(k >= anchor).order_by(k)
        # Unversioned: nothing to remember an anchor in, so the page's first key is a
        # scalar subquery of the same statement (one round trip).
        skipped = filtered(select(k)).order_by(k).offset(start).limit(1).scalar_subquery()
        self.rows_skip = filtered(select(*selected)).where(k >= skipped).order_by(k).limit(n)
        self.rows_skip_open = filtered(select(*selected)).where(k >= skipped).order_by(k)
        # Any: Select's type parameters differ between SQLAlchemy 2.0 and 2.1.
        self.recent: Any = None
        self.newest: Any = None
        self.newest_skip: Any = None
        newest_of: ColumnElement[Any] | None = None
        if lm is not None:
            self.recent = filtered(select(*selected)).where(lm.is_not(None))
            self.recent = self.recent.order_by(lm.desc()).limit(n)
            newest_of = filtered(select(func.max(lm))).scalar_subquery()
            for first, attribute in ((anchor, "newest"), (skipped, "newest_skip")):
                inner = (
                    filtered(select(k.label("k"), lm.label("lm")))
                    .where(k >= first)
                    .order_by(k)
                    .limit(n)
                    .subquery()
                )
                # No date when a row of the range has none: Last-Modified (and an index
                # child's lastmod) is only claimed when every entry is dated. MAX(k) is
                # the range's last key, from which the next anchor is one step on.
                setattr(
                    self,
                    attribute,
                    select(
                        case((func.count(inner.c.lm) == func.count(), func.max(inner.c.lm))),
                        func.max(inner.c.k),
                        func.count(),
                    ),
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
            self.changes = select(
                func.min(log.c.id),
                func.min(log.c.key),
                func.count() - func.count(log.c.key),  # NULL keys: a TRUNCATE
            ).where(log.c.id > bindparam("version"))

    # -- plans (sans-I/O: they yield statements and are sent the first row back) ------

    def begin(self, memo: list[_Facts | None]) -> Plan:
        """Read the version; return its facts (None: unversioned). ``memo[0]`` holds
        the facts of the last version seen, replaced (never cleared) on a change so a
        call still on the old version stays harmless."""
        if self.version is None:
            return None
        row = yield self.version, {}
        if row is None:
            raise ConfigurationError(
                "the version table is empty; create it with install_version_triggers()"
                " or install_change_log()"
            )
        version = row[0]
        facts = memo[0]
        if facts is not None and facts.version == version:
            return facts
        fresh = _Facts(version)
        if facts is not None and self.changes is not None and version > facts.version:
            first_id, lowest, unkeyed = yield self.changes, {"version": facts.version}
            # Ids run without gaps (the counter); a first id past version + 1 means the
            # log was pruned past what we knew, so nothing can be carried over.
            if first_id == facts.version + 1 and not unkeyed:
                fresh.carry(facts, lowest)
        memo[0] = fresh
        return fresh

    def anchor_of(self, facts: _Facts, offset: int) -> Plan:
        """The key of the row at ``offset``, or ``_END``; remembered for the version."""
        if offset in facts.anchors:
            return facts.anchors[offset]
        last = facts.ends.get(offset)
        if last is not None:
            row = yield self.after, {"last": last}
        else:
            row = yield self.anchor, {"start": offset}
        key = _END if row is None else row[0]
        facts.remember(facts.anchors, offset, key)
        return key

    def count_plan(self, memo: list[_Facts | None]) -> Plan:
        """How many rows: remembered per version, else one ``COUNT(*)``."""
        facts = yield from self.begin(memo)
        if facts is not None and facts.count is not None:
            return facts.count
        if facts is not None and facts.count_from is not None:
            offset, key = facts.count_from
            (rest,) = yield self.count_from, {"anchor": key}
            count = offset + int(rest)
        else:
            (count,) = yield self.count, {}
        if facts is not None:
            facts.count = int(count)
        return int(count)

    def fingerprint_plan(self, memo: list[_Facts | None]) -> Plan:
        """The version (one read), or ``(COUNT(*), MAX(key)[, MAX(lastmod)])``."""
        facts = yield from self.begin(memo)
        if facts is not None:
            return facts.version
        row = yield self.fallback, {}
        return tuple(row)

    def page_plan(self, memo: list[_Facts | None], start: int, limit: int | None) -> Plan:
        """The rows query of ``[start, start + limit)`` (None: empty), after the anchor."""
        facts = yield from self.begin(memo)
        if facts is None:
            if limit is None:
                return self.rows_skip_open, {"start": start}
            return self.rows_skip, {"start": start, "n": limit}
        first = yield from self.anchor_of(facts, start)
        if first is _END:
            return None
        if limit is None:
            return self.rows_open, {"anchor": first}
        return self.rows, {"anchor": first, "n": limit}

    def newest_plan(self, memo: list[_Facts | None], start: int, stop: int) -> Plan:
        """The newest ``lastmod`` of ``[start, stop)``, None if a row has none."""
        if self.newest is None or self.newest_skip is None:
            return None
        limit = max(0, stop - start)
        facts = yield from self.begin(memo)
        if facts is None:
            if limit == 0:
                return None
            value, _, _ = yield self.newest_skip, {"start": start, "n": limit}
            return value
        if (start, stop) in facts.newest:
            return facts.newest[(start, stop)][0]
        first = yield from self.anchor_of(facts, start)
        if first is _END or limit == 0:
            value, last, rows = None, None, 0
        else:
            value, last, rows = yield self.newest, {"anchor": first, "n": limit}
        if last is not None and stop not in facts.anchors:
            # The next page starts at the first key after this page's last one.
            row = yield self.after, {"last": last}
            facts.remember(facts.anchors, stop, _END if row is None else row[0])
        # Only a full range keeps its largest key: a short one (the table's end) grows
        # when rows are appended, so it must not outlive a change.
        end = last if rows == limit else None
        facts.remember(facts.newest, (start, stop), (value, end))
        if end is not None:
            facts.remember(facts.ends, stop, end)
        return value


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
        # A tuple row: validated and written in one pass (sitemap_core.rows).
        return (template.format_map(values), None if date is None else values[date])

    return from_template


def _window(kind: str, window: object) -> tuple[int, int | None]:
    """``(start, limit)`` of a slice (limit None: open-ended); raises as SQLiteSource."""
    if not isinstance(window, slice):
        raise TypeError(f"{kind} supports slices only, not {window!r}")
    if window.step not in (None, 1):
        raise ValueError("a step is not supported")
    start = 0 if window.start is None else window.start
    stop = window.stop
    if start < 0 or (stop is not None and stop < 0):
        raise ValueError("negative indices are not supported (they would need a count)")
    return start, None if stop is None else max(0, stop - start)


def _run(conn: Connection, plan: Plan) -> Any:
    """Drive ``plan`` on a sync connection."""
    try:
        step = next(plan)
        while True:
            step = plan.send(conn.execute(step[0], step[1]).first())
    except StopIteration as done:
        return done.value


async def _arun(conn: AsyncConnection, plan: Plan) -> Any:
    """Drive ``plan`` on an async connection."""
    try:
        step = next(plan)
        while True:
            result = await conn.execute(step[0], step[1])
            step = plan.send(result.first())
    except StopIteration as done:
        return done.value


class SQLAlchemySource:
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
    ) -> None:
        if not isinstance(engine, Engine):
            raise ConfigurationError(
                "engine must be a SQLAlchemy Engine (AsyncSQLAlchemySource takes an AsyncEngine)"
            )
        self._sql = _Statements(
            engine.dialect.name, table, key, build, columns, lastmod, where, version_table,
            change_log,
        )  # fmt: skip
        if engine.dialect.name in _SNAPSHOT_DIALECTS:
            engine = engine.execution_options(isolation_level="REPEATABLE READ")
        self._engine = engine
        #: The facts of the last version seen (a one-item list: plans replace it).
        self._memo: list[_Facts | None] = [None]

    def _call(self, plan: Plan) -> Any:
        with self._engine.connect() as conn:
            return _run(conn, plan)

    def __len__(self) -> int:
        """How many rows the (filtered) source holds; remembered per version."""
        return int(self._call(self._sql.count_plan(self._memo)))

    def __getitem__(self, window: slice, /) -> Iterator[Item]:
        """The items of rows ``[start, stop)`` in key order, read by one bounded query.

        Lazy: the query runs at the first ``next()``; rows stream (a server-side cursor
        where the driver has one) and the connection returns to the pool when the
        generator ends or is closed.
        """
        start, limit = _window(type(self).__name__, window)
        return self._rows(start, limit)

    def _rows(self, start: int, limit: int | None) -> Iterator[Item]:
        if limit == 0:
            return
        with self._engine.connect() as conn:
            query = _run(conn, self._sql.page_plan(self._memo, start, limit))
            if query is None:
                return
            result = conn.execution_options(stream_results=True).execute(*query)
            build = self._sql.build
            for row in result:
                yield build(row)

    def fingerprint(self, start: int, stop: int) -> object:
        """The version (one-row read) when versioned, else ``(COUNT(*), MAX(key),
        MAX(lastmod))`` of the whole filtered set; ``start``/``stop`` are not used."""
        return self._call(self._sql.fingerprint_plan(self._memo))

    def newest(self, start: int, stop: int) -> Any:
        """The newest ``lastmod`` of rows ``[start, stop)``; None without a ``lastmod``
        column or when a row of the range has no date. Remembered per version, with
        the next page's first key."""
        return self._call(self._sql.newest_plan(self._memo, start, stop))

    def recent(self, limit: int) -> list[Item] | None:
        """The ``limit`` rows with the newest ``lastmod``, newest first, in one query;
        None without a ``lastmod`` column (the source is then walked)."""
        if self._sql.recent is None:
            return None
        with self._engine.connect() as conn:
            build = self._sql.build
            return [build(row) for row in conn.execute(self._sql.recent, {"n": limit})]


class AsyncSQLAlchemySource:
    """:class:`SQLAlchemySource` for an ``AsyncEngine`` (``asyncpg``, ``psycopg``,
    ``aiosqlite``): async :meth:`count`, :meth:`slice`, :meth:`fingerprint`,
    :meth:`newest` and :meth:`recent`, the shape
    :meth:`AsyncUrlSource.from_object <sitemap_core.aio.AsyncUrlSource.from_object>`
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
    ) -> None:
        if not isinstance(engine, AsyncEngine):
            raise ConfigurationError(
                "engine must be a SQLAlchemy AsyncEngine (SQLAlchemySource takes an Engine)"
            )
        self._sql = _Statements(
            engine.dialect.name, table, key, build, columns, lastmod, where, version_table,
            change_log,
        )  # fmt: skip
        if engine.dialect.name in _SNAPSHOT_DIALECTS:
            engine = engine.execution_options(isolation_level="REPEATABLE READ")
        self._engine = engine
        self._memo: list[_Facts | None] = [None]

    async def _call(self, plan: Plan) -> Any:
        async with self._engine.connect() as conn:
            return await _arun(conn, plan)

    async def count(self) -> int:
        """How many rows the (filtered) source holds; remembered per version."""
        return int(await self._call(self._sql.count_plan(self._memo)))

    async def slice(self, start: int, stop: int | None) -> AsyncIterator[Item]:
        """The items of rows ``[start, stop)`` in key order, streamed."""
        start, limit = _window(type(self).__name__, slice(start, stop))
        if limit == 0:
            return
        async with self._engine.connect() as conn:
            query = await _arun(conn, self._sql.page_plan(self._memo, start, limit))
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
        return await self._call(self._sql.fingerprint_plan(self._memo))

    async def newest(self, start: int, stop: int) -> Any:
        """As :meth:`SQLAlchemySource.newest`."""
        return await self._call(self._sql.newest_plan(self._memo, start, stop))

    async def recent(self, limit: int) -> list[Item] | None:
        """As :meth:`SQLAlchemySource.recent`."""
        if self._sql.recent is None:
            return None
        async with self._engine.connect() as conn:
            result = await conn.execute(self._sql.recent, {"n": limit})
            build = self._sql.build
            return [build(row) for row in result]


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
