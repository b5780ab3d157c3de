"""A ready-made sliceable source over an SQLite table (standard library only).

:class:`SQLiteSource` is what the examples (``examples/flask_blog/app.py``) list their
big tables with: ``len()`` is one ``SELECT COUNT(*)``, ``source[start:stop]`` is one bounded query
whose rows become entries lazily, and ``fingerprint`` / ``newest`` make ETags, 304s,
the page cache and the index's ``<lastmod>`` values cheap::

    import sqlite3
    from contextlib import closing
    from sitemap_core import Entry, UrlSource
    from sitemap_core.sources.sql.sqlite import SQLiteSource, install_version_triggers

    def connect() -> sqlite3.Connection:
        return sqlite3.connect("file:blog.db?mode=ro", uri=True)

    with closing(sqlite3.connect("blog.db")) as db:   # once, at deployment time
        install_version_triggers(db, "posts", "posts_version")

    posts = SQLiteSource(
        connect, "posts", "id",
        lambda row: Entry(f"https://blog.example.com/posts/{row['id']}",
                          lastmod=row["updated_at"]),
        columns=["id", "updated_at"], lastmod="updated_at",
        version_table="posts_version",
    )
    source = UrlSource.from_object("posts", posts)

Paging modes
------------
Rows are listed in ``ORDER BY key`` order; ``key`` must be unique and not NULL (the
primary key is the natural choice), so that the order is total and every page is
well defined.

``mode="offset"`` reads page N with ``ORDER BY key LIMIT ? OFFSET ?``. The database
steps over every row before the page, so the last page of a big table costs more than
the first (in SQLite the skipped rows are not decoded, so the extra cost is modest;
in client/server databases it is usually larger).

``mode="seek"`` (the default, "keyset" paging) reads the rows with ``WHERE key >= ?
ORDER BY key LIMIT ?`` from the page's first key, found by ``SELECT key ... ORDER BY
key LIMIT 1 OFFSET ?`` (a scalar subquery of the same statement, or remembered per
version): the row fetch is a range search on the key and never walks the skipped
rows. The skip itself still
happens, but only over the key: on a separate index on ``key`` it reads narrow index
entries instead of rows. When ``key`` is SQLite's ``INTEGER PRIMARY KEY`` (the rowid)
there is no narrower structure than the table itself, so the skip walks the table's
pages and costs about what offset mode's skip costs (in SQLite, skipped rows are not
decoded); ``benchmarks/bench_big.py`` measures both. A ``where`` filter the key's
index does not cover makes the skip read rows again.

With ``version_table`` the source also remembers, per version of the table, the
count, each page's newest ``lastmod`` and (seek) each page's first key
(:mod:`sitemap_core.sources.sql.ranks`). The version is read first in every call, in
the same snapshot as the facts it guards, so a remembered fact is used only while the
table is exactly as it was when computed. Then the index and later pages skip
nothing: the statement that reads page N's ``newest`` also finds page N+1's first key,
one step on from page N's last. After a write, the next index reads each page once. This
needs the triggers of :func:`install_version_triggers` on every write path, and a
``where`` that depends on the rows only (not on ``datetime('now')``, say, which
changes without a write).

A ``change_log`` (see :func:`install_change_log`) is read as its counter, the same as a
``version_table``: a site that installed one for an earlier version of this package
keeps working. A big table, or one written often, wants ``page_facts`` instead
(:func:`install_page_facts`): pages that keep their URLs, whose facts the database
keeps on every write, so that a write changes one page and the index is one small
query.

Stability of page URLs
----------------------
Page N holds entries ``[(N-1)*size, N*size)`` of the key order. Rows appended with
growing keys (an autoincrement id, a timestamp) land after every existing row, so
earlier pages keep their entries and only the last page(s) change. A row inserted in
the middle, or a row deleted, shifts every later page by one entry. Within one crawl
of an unchanged table the pages partition the rows: none is skipped, none repeated.
A change between two page fetches of the same crawl can skip or repeat an entry at a
page boundary, as with any count-based paging; the next crawl sees it right.

Fingerprints
------------
With ``version_table`` (see :func:`install_version_triggers`) or ``change_log`` the
fingerprint is one number that triggers bump on every insert, update and delete:
exact and O(1).
Without it the fingerprint is ``(COUNT(*), MAX(key), MAX(lastmod))`` of the whole
(filtered) set: cheap, but blind to an edit that leaves all three unchanged, i.e. an
update that moves a ``lastmod`` back (or does not touch it), or a row deleted and
another inserted below the maximum key. Such an edit keeps the old ETag and cached
page until something else changes. Both are whole-table values, so any change
renews every page's ETag; that is correct, only coarser than necessary.

Identifiers and values
----------------------
``table``, ``key``, ``columns``, ``lastmod`` and ``version_table`` are interpolated
into SQL, so they must match ``[A-Za-z_][A-Za-z0-9_]*`` (checked at construction;
:class:`ConfigurationError` otherwise). ``where`` is a trusted SQL fragment written by
the developer, never built from request data; its values go in ``where_params``.
Offsets and limits are always bound as parameters.

SQLAlchemy users
----------------
SQLAlchemy is not a dependency; the same two methods in SQLAlchemy Core (any
database) look like this::

    from sqlalchemy import func, select

    class PostPages:
        def __init__(self, engine, posts):          # posts: a Table
            self.engine, self.posts = engine, posts

        def __len__(self) -> int:
            query = select(func.count()).select_from(self.posts)
            with self.engine.connect() as conn:
                return conn.execute(query).scalar_one()

        def __getitem__(self, window: slice):
            start, stop = window.start or 0, window.stop
            id_ = self.posts.c.id
            first = (select(id_).order_by(id_).offset(start).limit(1)
                     .scalar_subquery())
            query = (select(id_, self.posts.c.updated_at)
                     .where(id_ >= first).order_by(id_).limit(stop - start))
            with self.engine.connect() as conn:
                rows = conn.execution_options(stream_results=True).execute(query)
                for row in rows:
                    yield Entry(f"https://blog.example.com/posts/{row.id}",
                                lastmod=row.updated_at)

(``mode="offset"`` is ``select(...).order_by(id_).offset(start).limit(stop - start)``.)
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any

from sitemap_core.errors import ConfigurationError
from sitemap_core.sources.base import Item
from sitemap_core.sources.pages import Page, Summary
from sitemap_core.sources.sql.bounds import StoredBounds, dated_column, stored_page
from sitemap_core.sources.sql.date_bounds import DateBounds
from sitemap_core.sources.sql.names import IDENTIFIER, quoted
from sitemap_core.sources.sql.page_reads import PageReads, StablePages
from sitemap_core.sources.sql.ranks import Plan, Version
from sitemap_core.sources.sql.sqlite_pages import PageFacts, install_page_facts, silent_deletes
from sitemap_core.sources.sql.sqlite_ranks import Mode, SQLiteStatements, run

__all__ = [
    "IDENTIFIER",
    "SQLiteSource",
    "install_change_log",
    "install_page_facts",
    "install_version_triggers",
]


def install_version_triggers(conn: sqlite3.Connection, table: str, version_table: str) -> None:
    """Create ``version_table`` and triggers that bump it on every change of ``table``.

    The version table holds one row, ``version INTEGER``, starting at 0; AFTER INSERT,
    UPDATE and DELETE triggers on ``table`` add 1 to it. Reading it is then an exact
    O(1) fingerprint for :class:`SQLiteSource` (``version_table=``). Idempotent: run it
    again and nothing is duplicated. Commits.

    Install it after a bulk load if the load should not pay one trigger per row.
    """
    source, version = quoted("table", table), quoted("version_table", version_table)
    # Trigger names are derived from both tables, so two sources can version the same
    # table in different version tables without clashing.
    prefix = f"{table}_{version_table}"
    conn.execute(f"CREATE TABLE IF NOT EXISTS {version} (version INTEGER NOT NULL)")
    conn.execute(
        f"INSERT INTO {version} (version) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM {version})"
    )
    for event in ("INSERT", "UPDATE", "DELETE"):
        trigger = quoted("trigger", f"{prefix}_{event.lower()}")
        conn.execute(
            f"CREATE TRIGGER IF NOT EXISTS {trigger} AFTER {event} ON {source}"
            f" BEGIN UPDATE {version} SET version = version + 1; END"
        )
    conn.commit()


def install_change_log(conn: sqlite3.Connection, table: str, key: str, log_table: str) -> None:
    """Create ``log_table`` and triggers that record the key of every changed row.

    Each insert, update and delete of ``table`` appends the row's ``key`` (old and new
    for an update) to ``log_table`` (``id INTEGER PRIMARY KEY AUTOINCREMENT, key``).
    The largest id ever given is the table's version, an exact O(1) fingerprint like
    :func:`install_version_triggers`', which :class:`SQLiteSource` (``change_log=``)
    reads; the log's rows are for the site's own use (earlier versions of this package
    read them too). Idempotent. Commits. New sites install
    :func:`install_version_triggers`, or for a big table :func:`install_page_facts`.

    Refused (:class:`ConfigurationError`) for a table with a unique index on other
    columns than ``key``, or another ``INTEGER PRIMARY KEY``: a REPLACE that clashes
    there deletes a row without firing a DELETE trigger.

    The log grows by a row per change. Prune it now and then (``DELETE FROM log WHERE
    id < ...``): the counter stays where it was.
    """
    source, log = quoted("table", table), quoted("log_table", log_table)
    column = quoted("key", key)
    prefix = f"{table}_{log_table}"
    reason = silent_deletes(conn, table, key)
    if reason is not None:
        raise ConfigurationError(
            f"table {table!r} has {reason}: INSERT OR REPLACE there deletes rows without a"
            " DELETE trigger, so a change log would miss them; use install_version_triggers()"
            " (version_table=) instead"
        )
    conn.execute(f"CREATE TABLE IF NOT EXISTS {log} (id INTEGER PRIMARY KEY AUTOINCREMENT, key)")
    # The log's counter row, which SQLite would add only at the first change logged:
    # with it, the version is one lookup from the start (SQLiteStatements.version_plan
    # looks for the log table too while there is none).
    conn.execute(
        "INSERT INTO sqlite_sequence (name, seq) SELECT ?, 0 WHERE NOT EXISTS"
        " (SELECT 1 FROM sqlite_sequence WHERE name = ? COLLATE NOCASE)",
        (log_table, log_table),
    )
    rows = {"INSERT": ("NEW",), "UPDATE": ("OLD", "NEW"), "DELETE": ("OLD",)}
    for event, images in rows.items():
        trigger = quoted("trigger", f"{prefix}_{event.lower()}")
        body = " ".join(f"INSERT INTO {log} (key) VALUES ({image}.{column});" for image in images)
        conn.execute(
            f"CREATE TRIGGER IF NOT EXISTS {trigger} AFTER {event} ON {source} BEGIN {body} END"
        )
    conn.commit()


def slice_window(kind: str, window: object) -> tuple[int, int | None]:
    """``(start, limit)`` of a slice of a database source (limit None: open-ended).

    Refused as a sliceable source refuses them: anything but a slice (TypeError), a
    step, and negative indices (ValueError), which would need a count first.
    """
    if not isinstance(window, slice):
        raise TypeError(f"{kind} supports slices only, not {window!r}")
    if window.step not in (None, 1):
        raise ValueError("a step is not supported")
    start = 0 if window.start is None else window.start
    stop = window.stop
    if start < 0 or (stop is not None and stop < 0):
        raise ValueError("negative indices are not supported (they would need a count)")
    return start, None if stop is None else max(0, stop - start)


class SQLiteSource(StablePages):
    """A table (or a filtered part of it) as a sliceable sitemap source.

    ``connect`` opens a connection. Each page reads its rows on a new one, closed when
    its generator finishes or is closed (also when the client goes away midway); the
    small fact queries (count, fingerprint, newest) share one connection per thread
    (and per process), each call ending its read transaction. ``build`` turns one
    row of ``columns`` into an :class:`Entry`, a URL string, or a tuple row
    ``(loc, lastmod, changefreq, priority[, images])`` (the fastest: validated and
    written in one pass, see :mod:`sitemap_core.model.rows`). ``row_factory`` is what
    ``build`` receives: a :class:`sqlite3.Row` by default (columns by name), or with
    ``None`` a plain tuple in ``columns`` order, about half the cost per row on a big
    page. ``lastmod`` names the column whose maximum :meth:`newest` reports. ``where``
    is a trusted SQL filter (``where_params`` its values). See the module documentation
    for ``mode`` and ``version_table``.
    """

    def __init__(
        self,
        connect: Callable[[], sqlite3.Connection],
        table: str,
        key: str,
        build: Callable[[sqlite3.Row], Item],
        *,
        columns: Sequence[str],
        lastmod: str | None = None,
        where: str | None = None,
        where_params: Sequence[Any] = (),
        mode: Mode = "seek",
        version_table: str | None = None,
        change_log: str | None = None,
        row_factory: Callable[[sqlite3.Cursor, tuple[Any, ...]], Any] | None = sqlite3.Row,
        page_facts: str | None = None,
    ) -> None:
        _check_arguments(connect, build, columns, mode, where, row_factory)
        if sum(name is not None for name in (version_table, change_log, page_facts)) > 1:
            raise ConfigurationError("give one of version_table, change_log and page_facts")
        if page_facts is not None and where is not None:
            raise ConfigurationError(
                "with page_facts, give the where condition to install_page_facts(): the"
                " facts count the rows it holds for, and the source lists those"
            )
        self._connect = connect
        self._build = build
        self._row_factory = row_factory
        self.mode: Mode = mode
        self._params = tuple(where_params)
        #: The statements and plans of pages by rank (see sitemap_core.sources.sql.ranks).
        self._sql = SQLiteStatements(
            table, key, columns, lastmod, where, mode, version_table, change_log
        )
        #: What is known of the last version seen (a one-item list: plans replace it).
        self._memo: list[Version | None] = [None]
        #: The stable pages' facts the triggers keep (only with ``page_facts``).
        self._page_facts = None if page_facts is None else PageFacts(page_facts)
        #: How an index reads them: a summary, then the pages as they stream.
        self._page_reads = None if page_facts is None else PageReads(page_facts)
        #: Each thread's connection for fact queries (see _facts_connection).
        self._local = threading.local()
        # A stable page: the rows of a range of keys that the facts' condition holds
        # for (see sqlite_pages), the condition read from the facts.
        t, k = quoted("table", table), quoted("key", key)
        selected = ", ".join(quoted("column", column) for column in columns)
        self._window_sql = f"SELECT {selected} FROM {t} WHERE {k} >= ? AND {k} < ?{{}} ORDER BY {k}"
        # A page of stored boundaries (a window below 0): its range, read from them.
        self._stored_sql = (
            None
            if page_facts is None
            else StoredBounds.of(table, key, page_facts).window_sql(selected, ":page")
        )
        self._bounds_sql = self._stored_sql
        # Date buckets on a column (a kind the layout names): their rows' range.
        self._dated_sql = partial(_dated_sql, table, key, page_facts, selected)
        self._condition: str | None = None

    # -- connections -------------------------------------------------------------------

    @contextmanager
    def _facts_connection(self) -> Iterator[sqlite3.Connection]:
        """A connection for the small fact queries (count, fingerprint, newest).

        An index asks for a fact per child page; opening a connection for each cost
        more than the queries (about 65 us against 10). So each thread keeps one, and
        every call ends its read transaction, so the next one sees the table as it is
        then. A process started by fork() opens its own; a connection that failed is
        dropped. Pages stream on a connection of their own (:meth:`_rows`).
        """
        conn = self._held_connection()
        try:
            yield conn
        except BaseException:
            self._drop_connection(conn)
            raise
        if conn.in_transaction:
            conn.rollback()  # read-only work: ending the snapshot is all this does

    def _fact_rows(self, sql: str, params: Mapping[str, int] | None = None) -> list[Any]:
        """All rows of one small query of the page facts, on this thread's facts
        connection; facts that are not there are a :class:`ConfigurationError`."""
        assert self._page_facts is not None
        with self._facts_connection() as conn:
            try:
                return conn.execute(sql, params or {}).fetchall()
            except sqlite3.OperationalError as exc:
                if "no such table" in str(exc) or "no such column" in str(exc):
                    raise self._page_facts.not_installed() from exc
                raise

    def _held_connection(self) -> sqlite3.Connection:
        """This thread's facts connection (opened on first use, and after a fork)."""
        held = getattr(self._local, "held", None)
        conn = held[1] if held is not None and held[0] == os.getpid() else None
        if conn is None:
            conn = self._connect()
            self._local.held = (os.getpid(), conn)
        return conn

    def _drop_connection(self, conn: sqlite3.Connection) -> None:
        """Forget and close a facts connection that failed."""
        self._local.held = None
        conn.close()

    def _call(self, plan: Plan) -> Any:
        """Run ``plan`` on this thread's facts connection, in one read snapshot."""
        with self._facts_connection() as conn:
            _snapshot(conn)
            return run(conn, plan, self._params)

    # -- the sliceable protocol ------------------------------------------------------

    def __len__(self) -> int:
        """How many rows the (filtered) table holds: one ``SELECT COUNT(*)``.

        With ``version_table`` the count is remembered for the version, so the next
        call costs the one-row version read only; with ``page_facts`` it is the sum of
        the pages' counts.
        """
        if self._page_facts is not None:
            return int(self._fact_rows(self._page_facts.count_sql)[0][0])
        return int(self._call(self._sql.count_plan(self._memo)))

    def __getitem__(self, window: slice, /) -> Iterator[Item]:
        """The entries of rows ``[start, stop)`` in key order, read by one bounded query.

        Rows are built into entries as they are pulled: the query runs at the first
        ``next()`` and the connection is closed when the generator ends or is closed.
        """
        start, limit = slice_window(type(self).__name__, window)
        # LIMIT -1 is SQLite's "no limit", for an open-ended slice.
        return self._rows(start, -1 if limit is None else limit)

    def _stable_summary(self) -> Summary:
        assert self._page_reads is not None
        return self._page_reads.summary(self._fact_rows(self._page_reads.summary_sql)[0])

    def _stable_pages(self, first: int, stop: int) -> Iterable[Page]:
        assert self._page_facts is not None
        facts = self._page_facts
        if stop - first > 1:
            return self._streamed_pages(facts.bounds(first, stop))
        rows = self._fact_rows(facts.pages_sql, facts.bounds(first, stop))
        if rows:
            self._note(str(rows[0][-1]), str(rows[0][-2]))
        return facts.pages(rows)

    def _streamed_pages(self, bounds: Mapping[str, int]) -> Iterator[Page]:
        # The pages of ``bounds`` from a cursor of a connection of their own, read as
        # they are pulled (an index written meanwhile); closed when the pulling ends.
        assert self._page_facts is not None and self._page_reads is not None
        conn = self._connect()
        try:
            try:
                cursor = conn.execute(self._page_reads.pages_sql, bounds)
            except sqlite3.OperationalError as exc:
                if "no such table" in str(exc) or "no such column" in str(exc):
                    raise self._page_facts.not_installed() from exc
                raise
            yield from self._page_reads.pages(cursor)
        finally:
            conn.close()

    def _layout_rows(self) -> list[Any]:
        # The facts' layout row, noting the condition the pages list the rows of.
        assert self._page_facts is not None
        rows = self._fact_rows(self._page_facts.layout_sql)
        self._note(self._page_facts.condition(rows), str(rows[0][4]))
        return rows

    def _note(self, condition: str, kind: str) -> None:
        # The facts' condition, and with date buckets on a column, their pages' rows.
        self._condition = condition
        date = dated_column(kind)
        self._stored_sql = self._bounds_sql if date is None else self._dated_sql(date)

    def stable_items(self, start: int, stop: int) -> Iterator[Item]:
        """The entries of the rows whose keys lie in ``[start, stop)``, in key order:
        a stable page, read by one range search on the key."""
        if self._condition is None:
            self._layout_rows()
        sql, params = self._window(start, stop)
        conn = self._connect()
        try:
            yield from self._built(conn, sql, params)
        finally:
            conn.close()

    def _window(self, start: int, stop: int) -> tuple[str, Any]:
        # A stable page's rows: a range of keys, or of a page's stored boundaries (a
        # window below 0), those the facts' condition holds for.
        condition = f" AND ({self._condition})" if self._condition else ""
        page = stored_page(start, stop)
        if page is None or self._stored_sql is None:
            return self._window_sql.format(condition), (start, stop)
        return self._stored_sql.format(condition), {"page": page}

    def _built(
        self, conn: sqlite3.Connection, sql: str, params: Sequence[Any] | Mapping[str, Any]
    ) -> Iterator[Item]:
        """The items ``build`` makes of the rows of ``sql``, as they are read."""
        cursor = conn.cursor()
        # On the cursor, not the connection: the caller's connection settings stay
        # theirs (the connection may come from a pool-like factory).
        cursor.row_factory = self._row_factory
        cursor.execute(sql, params)
        build = self._build
        for row in cursor:
            yield build(row)

    def _rows(self, start: int, limit: int) -> Iterator[Item]:
        conn = self._connect()
        try:
            if limit == 0:
                return
            _snapshot(conn)  # the first key and the rows from one snapshot
            plan = self._sql.page_plan(self._memo, start, None if limit < 0 else limit)
            step = run(conn, plan, self._params)
            if step is None:
                return
            sql, params = step
            yield from self._built(conn, sql.text, sql.bind(params, self._params))
        finally:
            conn.close()

    def recent(self, limit: int) -> list[Item] | None:
        """The ``limit`` rows with the newest ``lastmod``, newest first, built as the
        pages' rows are: one query (see :mod:`sitemap_core.write.feed`). None without a
        ``lastmod`` column: ``build`` may still date entries, so the source is walked."""
        recent = self._sql.recent
        if recent is None:
            return None
        conn = self._connect()
        try:
            return list(self._built(conn, recent.text, recent.bind({"n": limit}, self._params)))
        finally:
            conn.close()

    # -- cheap facts -------------------------------------------------------------------

    def fingerprint(self, start: int, stop: int) -> object:
        """A value that changes when the rows change (see the module); the whole
        table's, whatever ``start`` and ``stop``.

        The version from ``version_table`` or ``change_log`` (exact, one-row read),
        otherwise ``(COUNT(*), MAX(key), MAX(lastmod))`` of the filtered rows; with
        ``page_facts``, the facts' layout version.
        """
        if self._page_facts is not None:
            return self._page_facts.fingerprint(self._layout_rows())
        known = self._memo[0]
        with self._facts_connection() as conn:
            # The version alone, on what a 304 of the index asks each request: one
            # statement is its own snapshot, so no BEGIN (and no rollback after).
            if known is not None and run(conn, self._sql.version_plan(), ()) == known.version:
                return known.version
            _snapshot(conn)
            value, _ = run(conn, self._sql.fingerprint_plan(self._memo), self._params)
        return value

    def newest(self, start: int, stop: int) -> str | None:
        """The newest ``lastmod`` among rows ``[start, stop)``: one bounded query.

        None when no ``lastmod`` column was named, or a row of the range has no date
        (Last-Modified is only claimed for a range whose every entry is dated). With
        ``version_table`` the answer is remembered for the version, and (seek mode) so
        is the first key of ``stop``: the index asks for consecutive pages, so each
        page's range search then starts from a known key and the whole index reads
        each row once instead of skipping over all the pages before each one.
        """
        value = self._call(self._sql.newest_plan(self._memo, start, stop))
        return None if value is None else str(value)


def _snapshot(conn: sqlite3.Connection) -> None:
    # Python's sqlite3 begins no transaction for a SELECT: a BEGIN holds one snapshot
    # for the statements of a call, so a version and what is read after it agree.
    if not conn.in_transaction:
        conn.execute("BEGIN")


def _check_arguments(
    connect: object, build: object, columns: object, mode: object, where: object, rows: object
) -> None:
    # SQLiteSource's arguments that need no database to check.
    if not callable(connect) or not callable(build):
        raise ConfigurationError("connect and build must be callables")
    if mode not in ("offset", "seek"):
        raise ConfigurationError(f"mode {mode!r} must be 'offset' or 'seek'")
    if isinstance(columns, str) or not columns:
        raise ConfigurationError("columns must be a non-empty sequence of column names")
    if where is not None and (not isinstance(where, str) or not where.strip()):
        raise ConfigurationError("where must be a non-empty SQL condition or None")
    if rows is not None and not callable(rows):
        raise ConfigurationError("row_factory must be a callable, or None for tuples")


def _dated_sql(table: str, key: str, facts: str | None, selected: str, date: str) -> str:
    """The rows of a page of date buckets on ``date`` (see :mod:`.date_bounds`)."""
    return DateBounds.of(table, key, date, str(facts)).window_sql(selected, ":page")
