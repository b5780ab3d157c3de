"""Sitemap sources over SQLAlchemy Core: any database SQLAlchemy speaks to.

:class:`SQLAlchemySource` (an :class:`~sqlalchemy.engine.Engine`, for the sync fronts)
and :class:`AsyncSQLAlchemySource` (an :class:`~sqlalchemy.ext.asyncio.AsyncEngine`,
for the ASGI front) are what :class:`~sitemap_core.sources.sql.sqlite.SQLiteSource` is for SQLite,
with the same contract: rows listed in ``ORDER BY key`` order (``key`` unique and not
NULL), and cheap facts (count, fingerprint, each page's newest ``lastmod``) for ETags,
304s and the index::

    from sqlalchemy import create_engine
    from sitemap_core import UrlSource
    from sitemap_core.sources.sql.sqla import SQLAlchemySource, install_version_triggers

    engine = create_engine("postgresql+psycopg://app@db/blog")
    install_version_triggers(engine, "posts", "posts_version")   # once, at deployment
    posts = SQLAlchemySource(
        engine, posts_table, key="id", lastmod="updated_at",
        build="https://blog.example.com/posts/{slug}",
        version_table="posts_version",
    )
    source = UrlSource.from_object("posts", posts)

This module imports SQLAlchemy (the ``sqlalchemy`` extra); ``import sitemap_core``
does not.

Two ways to page
----------------
With ``page_facts`` (:func:`install_page_facts`, :mod:`.sqla_pages`), pages are
ranges of keys whose facts the database keeps: a page keeps its URLs until they are
deleted, and any process answers the index with one aggregate of the facts and then
one query of the pages, streamed as the index is written (:mod:`.page_reads`,
:mod:`.sqla_stream`). That is the way for big tables.

Without, pages are ranks (:mod:`.ranks`; the statements: :mod:`.sqla_ranks`).
Unversioned (neither ``version_table`` nor ``change_log``), every call asks the
database: ``len()`` is one ``COUNT(*)``, a page one statement (its first key found
by a scalar subquery ``... ORDER BY key LIMIT 1 OFFSET :start``, which skips over the
key only), the fingerprint one statement
``(COUNT(*), MAX(key), MAX(lastmod))``, blind to an edit that moves a date backwards
or a delete below the largest key. Versioned, the first statement of every call reads
the table's version (one row), and the count, each page's first key and newest
``lastmod`` learnt under it are remembered until it changes: a 304 costs the version
read, a page the version read and its rows, whatever its number once the index was
served. After a write, the next index reads every row once (a statement per page).

A ``change_log`` that :func:`install_change_log` installed (earlier versions read its
rows to carry remembered facts over a write) is read as its version counter, the same
as ``version_table``: sites that have one keep working; big tables move to
``page_facts``.

One request, one version: :meth:`~SQLAlchemySource.fingerprint` (which every request
of the core asks first) notes the version it answered with in the request's scope
(:mod:`sitemap_core.sources.scope`), and ``count()`` and ``newest()`` answer what they know of
that version without a query, so the index's 200 children cost no round trip each.
Outside a request they read the version themselves.

Snapshots: each call runs in one snapshot, so the version and the facts remembered
under it agree: a ``REPEATABLE READ`` transaction on PostgreSQL and MySQL, a
``BEGIN`` on SQLite (whose Python driver begins none for a ``SELECT``).

``table`` is a :class:`~sqlalchemy.schema.Table` (or any ``FromClause``) or a
``Select`` (used as a subquery, e.g. a join); ``where`` an optional SQLAlchemy
condition. A ``where`` must depend on the rows only (not on ``now()``), since a
remembered fact lives until the next write.

Version counters per dialect
----------------------------
:func:`install_version_triggers` writes trigger DDL for PostgreSQL (a PL/pgSQL
function ``FOR EACH STATEMENT``, TRUNCATE handled) and SQLite. MySQL / MariaDB need
the same table and three ``AFTER INSERT / UPDATE / DELETE ... FOR EACH ROW``
triggers, which creating needs privileges most applications do not have;
``docs/sqlalchemy.md`` gives the statements to run once (and those of page facts),
tested as written on MariaDB. The sources quote the names they interpolate as the
dialect does (backticks on MySQL, with or without ``ANSI_QUOTES``).

The counter is one row that every writing transaction updates: the row lock orders
writers by commit, so versions appear in commit order without gaps, which a sequence
or an auto-increment column does not promise under concurrency.
"""

from __future__ import annotations

import re
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Sequence,
)
from contextlib import aclosing
from typing import Any, ClassVar, Generic, TypeVar

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    FromClause,
    SelectBase,
    inspect,
    text,
)
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from sitemap_core.errors import ConfigurationError, InvalidEntryError
from sitemap_core.sources.base import Item
from sitemap_core.sources.pages import Page, Summary
from sitemap_core.sources.scope import request_notes
from sitemap_core.sources.sql import sqla_bounds
from sitemap_core.sources.sql.bounds import stored_page
from sitemap_core.sources.sql.date_bounds import DateBounds
from sitemap_core.sources.sql.page_reads import PageReads, StablePages
from sitemap_core.sources.sql.ranks import Plan, Step, Version, started
from sitemap_core.sources.sql.sqla_pages import install_page_facts
from sitemap_core.sources.sql.sqla_ranks import RankStatements, plain_name
from sitemap_core.sources.sql.sqla_stream import astreamed_rows, chunks, streamed_rows
from sitemap_core.sources.sql.sqlite import slice_window
from sitemap_core.sources.sql.sqlite_pages import PageFacts

__all__ = [
    "AsyncSQLAlchemySource",
    "SQLAlchemySource",
    "install_change_log",
    "install_page_facts",
    "install_version_triggers",
]

#: Dialects whose default isolation lets a write land between two statements of a call
#: while ``REPEATABLE READ`` gives the call one snapshot.
_SNAPSHOT_DIALECTS = frozenset({"postgresql", "mysql", "mariadb"})


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


_E = TypeVar("_E", Engine, AsyncEngine)
#: What a request's note on a source holds (see _Base._note).
_N = TypeVar("_N", Version, Summary)


class _Base(Generic[_E]):
    """What the sync and the async source share: their arguments, statements, memo
    and the version noted for a request."""

    #: The engine class a source takes, and what to say of another.
    _engine_class: ClassVar[type]
    _other_engine: ClassVar[str]

    def __init__(
        self,
        engine: _E,
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
        if not isinstance(engine, self._engine_class):
            raise ConfigurationError(
                f"engine must be a SQLAlchemy {self._engine_class.__name__} ({self._other_engine})"
            )
        quick, main = _isolated(engine)
        #: The engine of the version read alone (None: none), and of every other call.
        self._quick: _E | None = quick
        self._engine: _E = main
        if page_facts is not None and any(
            given is not None for given in (version_table, change_log, where)
        ):
            raise ConfigurationError(
                "page_facts are the source's version and count the rows their condition"
                " holds for: give neither version_table nor change_log with them, and the"
                " where condition to install_page_facts()"
            )
        self._sql = RankStatements(
            table, key, build, columns, lastmod, where, version_table, change_log
        )
        #: The stable pages' facts (only with ``page_facts``; see sqla_pages).
        quote = engine.dialect.identifier_preparer.quote_identifier
        self._page_facts = None if page_facts is None else PageFacts(page_facts, quote)
        #: What reads a page of stored boundaries (see sqla_bounds).
        self._stored = sqla_bounds.reader(table, key, page_facts, quote)
        #: Date buckets on a column, when the facts' layout names them (see _noted).
        self._dated: DateBounds | None = None
        self._engine_dialect = engine.dialect.name
        self._quote = quote
        #: How an index reads them: a summary, then the pages as they stream.
        self._page_reads = (
            None if page_facts is None else PageReads(page_facts, engine.dialect.name, quote)
        )
        #: The facts' condition, as last read with them (None: not read yet).
        self._condition: str | None = None
        #: The facts of the last version seen (a one-item list: plans replace it).
        self._memo: list[Version | None] = [None]
        #: SQLite: each call opens a read transaction itself (see _sqlite_snapshot).
        self._begin = engine.dialect.name == "sqlite" and self._sql.version is not None

    def _window(self, start: int, stop: int) -> tuple[Any, dict[str, int]]:
        # A stable page's rows: a range of keys, or of a page's stored boundaries
        # (a window below 0), those the facts' condition holds for.
        page = stored_page(start, stop)
        if page is None:
            window, params = self._sql.window, {"low": start, "high": stop}
        else:
            window, params = (
                sqla_bounds.stored_window(self._sql.window, self._dated or self._stored),
                {"page": page},
            )
        condition = self._condition
        return (window.where(text(condition)) if condition else window), params

    def _noted(self, rows: list[Any], layout: bool) -> list[Any]:
        # Rows of a facts query, the condition they carry noted (see _window).
        if layout:
            assert self._page_facts is not None
            self._condition = self._page_facts.condition(rows)
            self._dated = sqla_bounds.dated_reader(
                self._stored, str(rows[0][4]), self._engine_dialect, self._quote
            )
        elif rows:
            self._condition = str(rows[0][-1])
            self._dated = sqla_bounds.dated_reader(
                self._stored, str(rows[0][-2]), self._engine_dialect, self._quote
            )
        return rows

    def _still(self, known: Version, row: Any) -> bool:
        """Whether the version ``row`` read outside a transaction is still ``known``'s
        (then noted for the request, as the facts' own version read would be)."""
        if row is None or row[0] != known.version:
            return False
        self._pin(known)
        return True

    def _pin(self, facts: Version | None) -> None:
        """Note in the request's scope (see :mod:`sitemap_core.sources.scope`) the version
        :meth:`fingerprint` answered with, so that the request's counts and newest
        dates answer for it, from what is known of it, without reading it again."""
        if facts is not None:
            self._note(facts)

    def _note(self, value: Version | Summary) -> None:
        """Note ``value`` for the current request (nothing outside a request): the
        version its fingerprint answered with, or the summary its layout read kept."""
        notes = request_notes()
        if notes is not None:
            # The source itself is kept with its note: alive for the request, its id
            # cannot be another source's (a freed object's address is reused).
            notes[id(self)] = (self, value)

    def _noted_as(self, kind: type[_N]) -> _N | None:
        """What the current request noted (see :meth:`_note`), if it is a ``kind``."""
        notes = request_notes()
        note = None if notes is None else notes.get(id(self))
        if isinstance(note, tuple) and note[0] is self and isinstance(note[1], kind):
            return note[1]
        return None

    def _facts_query(self, kind: str, params: dict[str, int] | None = None) -> Any:
        """The statement of one page facts query (see :class:`PageFacts`; PostgreSQL's
        layout row: :attr:`PageReads.layout_sql`)."""
        assert self._page_facts is not None and self._page_reads is not None
        sql = getattr(self._page_facts, f"{kind}_sql")
        if kind == "layout":
            sql = self._page_reads.layout_sql or sql
        return text(sql), params or {}

    def _layout(self, rows: list[Any]) -> list[Any]:
        # The layout's rows; on PostgreSQL, the summary it keeps noted for the
        # request, which an index then reads without a statement of its own.
        assert self._page_reads is not None
        if self._page_reads.layout_sql is None:
            return rows
        rows, summary = self._page_reads.layout(rows)
        if summary is not None:
            self._note(summary)
        return rows

    def _streaming_engine(self) -> _E:
        """The engine an index's pages stream on: without a transaction where the
        driver streams them itself, else in one (a server-side cursor needs it)."""
        if self._quick is not None and chunks(self._engine.dialect):
            return self._quick
        return self._engine

    def _pinned(self) -> Version | None:
        """The version the current request's fingerprint answered with; None outside
        a request (or before its fingerprint), when calls read the version themselves."""
        return self._noted_as(Version)


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


class SQLAlchemySource(_Base[Engine], StablePages):
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

    _engine_class = Engine
    _other_engine = "AsyncSQLAlchemySource takes an AsyncEngine"

    def _call(self, plan: Plan) -> Any:
        done, value = started(plan)
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
        return self._noted(self._layout(rows) if kind == "layout" else rows, kind == "layout")

    def __len__(self) -> int:
        """How many rows the (filtered) source holds; remembered per version (in a
        request, of the version its :meth:`fingerprint` answered with). With
        ``page_facts``, the sum of the pages' counts."""
        if self._page_facts is not None:
            return int(self._facts_rows("count")[0][0])
        return int(self._call(self._sql.count_plan(self._memo, self._pinned())))

    def _stable_summary(self) -> Summary:
        assert self._page_reads is not None
        kept = self._noted_as(Summary)
        if kept is not None:
            return kept
        with (self._quick or self._engine).connect() as conn:
            try:
                row = conn.execute(text(self._page_reads.summary_sql)).one()
            except DBAPIError as exc:
                raise _missing(self._page_facts, exc) from exc
        return self._page_reads.summary(row)

    def _stable_pages(self, first: int, stop: int) -> Iterable[Page]:
        bounds = PageFacts.bounds(first, stop)
        if stop - first > 1:
            return self._streamed_pages(bounds)
        return PageFacts.pages(self._facts_rows("pages", bounds))

    def _streamed_pages(self, bounds: dict[str, int]) -> Iterator[Page]:
        # The pages of ``bounds``, read as they are pulled (see sqla_stream); the
        # connection goes back to the pool when the pulling ends.
        assert self._page_reads is not None
        reads = self._page_reads
        with self._streaming_engine().connect() as conn:
            try:
                yield from reads.pages(streamed_rows(conn, text(reads.pages_sql), bounds))
            except DBAPIError as exc:
                raise _missing(self._page_facts, exc) from exc

    def stable_items(self, start: int, stop: int) -> Iterator[Item]:
        """The items of the rows whose keys lie in ``[start, stop)``: a stable page."""
        if self._condition is None:
            self._facts_rows("layout")
        with self._engine.connect() as conn:
            yield from self._streamed(conn, *self._window(start, stop))

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
            done, value = started(plan)
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


class AsyncSQLAlchemySource(_Base[AsyncEngine]):
    """:class:`SQLAlchemySource` for an ``AsyncEngine`` (``asyncpg``, ``psycopg``,
    ``aiosqlite``): async :meth:`count`, :meth:`slice`, :meth:`fingerprint`,
    :meth:`newest` and :meth:`recent`, the shape
    :meth:`AsyncUrlSource.from_object <sitemap_core.sources.aio.AsyncUrlSource.from_object>`
    serves without a worker thread. Same arguments and costs.
    """

    _engine_class = AsyncEngine
    _other_engine = "SQLAlchemySource takes an Engine"

    async def _call(self, plan: Plan) -> Any:
        done, value = started(plan)
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
        return self._noted(self._layout(rows) if kind == "layout" else rows, kind == "layout")

    async def count(self) -> int:
        """How many rows the (filtered) source holds; remembered per version."""
        if self._page_facts is not None:
            return int((await self._facts_rows("count"))[0][0])
        return int(await self._call(self._sql.count_plan(self._memo, self._pinned())))

    @property
    def stable_pages(
        self,
    ) -> Callable[[int, int], Awaitable[Iterable[Page] | AsyncIterator[Page]]] | None:
        """As :attr:`SQLAlchemySource.stable_pages`, a coroutine function (more than one
        page: an async iterator of them)."""
        return None if self._page_facts is None else self._stable_pages

    @property
    def stable_summary(self) -> Callable[[], Awaitable[Summary]] | None:
        """As :attr:`SQLAlchemySource.stable_summary`, a coroutine function."""
        return None if self._page_facts is None else self._stable_summary

    async def _stable_summary(self) -> Summary:
        assert self._page_reads is not None
        kept = self._noted_as(Summary)
        if kept is not None:
            return kept
        async with (self._quick or self._engine).connect() as conn:
            try:
                row = (await conn.execute(text(self._page_reads.summary_sql))).one()
            except DBAPIError as exc:
                raise _missing(self._page_facts, exc) from exc
        return self._page_reads.summary(row)

    async def _stable_pages(self, first: int, stop: int) -> Iterable[Page] | AsyncIterator[Page]:
        bounds = PageFacts.bounds(first, stop)
        if stop - first > 1:
            return self._streamed_pages(bounds)
        return PageFacts.pages(await self._facts_rows("pages", bounds))

    async def _streamed_pages(self, bounds: dict[str, int]) -> AsyncIterator[Page]:
        # As SQLAlchemySource._streamed_pages, awaited.
        assert self._page_reads is not None
        reads = self._page_reads
        async with self._streaming_engine().connect() as conn:
            rows = astreamed_rows(conn, text(reads.pages_sql), bounds)
            try:
                async for row in rows:
                    yield reads.page(row)
            except DBAPIError as exc:
                raise _missing(self._page_facts, exc) from exc
            finally:
                await rows.aclose()

    async def stable_items(self, start: int, stop: int) -> AsyncIterator[Item]:
        """As :meth:`SQLAlchemySource.stable_items`, streamed."""
        if self._condition is None:
            await self._facts_rows("layout")
        async with (
            self._engine.connect() as conn,
            aclosing(self._streamed(conn, *self._window(start, stop))) as items,
        ):
            async for item in items:
                yield item

    async def _streamed(
        self, conn: AsyncConnection, statement: Any, params: Any
    ) -> AsyncGenerator[Item, None]:
        """The items ``build`` makes of the rows of ``statement``, streamed; its
        callers close it (``aclosing``): an async generator does not close the one it
        iterates when it is closed itself."""
        result = await conn.stream(statement, params)
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
            done, value = started(plan)
            if not done and self._begin:
                await conn.run_sync(_sqlite_snapshot)
            query = value if done else await _arun(conn, plan, value)
            if query is None:
                return
            async with aclosing(self._streamed(conn, *query)) as items:
                async for item in items:
                    yield item

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


#: How a failed page facts query says why: the facts are not there (PostgreSQL's
#: words, SQLite's, MySQL's), or a date is infinite (psycopg's), which no sitemap
#: date is.
_FACTS_FAILED = re.compile(r"does not exist|no such table|doesn't exist|'(-?infinity)'")


def _missing(facts: PageFacts | None, error: DBAPIError) -> Exception:
    # A page facts query that failed: facts not installed, a date the driver cannot
    # read, or another database error (as it is).
    found = _FACTS_FAILED.search(str(error.orig).lower())
    if facts is None or found is None:
        return error
    if found[1] is None:
        return facts.not_installed()
    return _infinite(facts, found[1])


def _infinite(facts: PageFacts, date: str) -> InvalidEntryError:
    # PostgreSQL's infinity in the facts (a row's date): the index and the page refuse
    # it alike, naming it.
    return InvalidEntryError(
        "lastmod",
        date,
        f"page facts {facts.name!r} count a row dated {date}, which no sitemap date is:"
        " give it a date, or a where condition that leaves it out",
    )


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
    plain_name("table", table)
    plain_name("version_table", version_table)

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
    table's version. The SQLAlchemy sources (``change_log=log``) read that counter
    only, as they read a ``version_table``: a site that installed a log keeps working,
    and a new one installs :func:`install_version_triggers` (or, for a big table,
    :func:`install_page_facts`). :class:`~sitemap_core.sources.sql.sqlite.SQLiteSource`
    also reads which keys changed. A TRUNCATE (PostgreSQL) logs a NULL key. The log
    grows by a row per change: prune it now and then (``DELETE FROM log WHERE id <
    ...``). Idempotent; commits (on a
    Connection already in a transaction, the caller commits). PostgreSQL and SQLite;
    refused on SQLite for a table with another unique index (``INSERT OR REPLACE``
    deletes there without a DELETE trigger).
    """
    for kind, value in (("table", table), ("key", key), ("change_log", log)):
        plain_name(kind, value)
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
