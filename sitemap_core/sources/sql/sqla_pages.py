"""Stable pages through SQLAlchemy: page facts on PostgreSQL (and SQLite).

The same facts as :mod:`sitemap_core.sources.sql.sqlite_pages` (one row per page of
``page_width`` keys: its count, newest ``lastmod``, last write and version; one layout
row: the width, a version bumped by every write, an epoch, and on PostgreSQL the
pages' summary, moved with the version), kept on PostgreSQL by
``FOR EACH STATEMENT`` triggers that read the statement's transition tables: a write
of one row or of a million updates each touched page once, grouped, in the writing
transaction. ``TRUNCATE`` empties every page. Two transactions writing to one page
queue on its facts row, so counts stay exact under concurrency.

MySQL and MariaDB: the facts need triggers the application's user seldom may create,
and MySQL has no statement triggers; ``docs/sqlalchemy.md`` gives the row triggers to
run once as an administrator.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Connection, Dialect, Engine, inspect, text

from sitemap_core.errors import ConfigurationError
from sitemap_core.limits import MAX_URLS_PER_SITEMAP
from sitemap_core.sources.sql import sqla_bounds, sqlite_pages
from sitemap_core.sources.sql.bounds import (
    MONTHS,
    RANGES,
    bounds_table,
    dated_column,
    kind_of,
)
from sitemap_core.sources.sql.date_bounds import DateBounds, bounds_of
from sitemap_core.sources.sql.names import quoted
from sitemap_core.sources.sql.page_reads import LASTMOD_TEXT, summary_sql, utc_text

__all__ = ["condition_sql", "install_page_facts"]


def install_page_facts(
    target: Connection | Engine,
    table: str,
    key: str,
    facts: str,
    *,
    lastmod: str | None = None,
    page_width: int = MAX_URLS_PER_SITEMAP,
    where: ColumnElement[bool] | None = None,
    recount: bool = False,
    stored_bounds: bool = False,
    month_buckets: bool | str = False,
) -> None:
    """Create the page facts ``facts`` of ``table`` and the triggers that keep them.

    As :func:`sitemap_core.sources.sql.sqlite_pages.install_page_facts`, for a SQLAlchemy
    ``Engine`` or ``Connection`` on PostgreSQL or SQLite: idempotent (the upgrade of a
    site is this one call at deployment time), another width or condition, or
    ``recount=True``, counts the pages again under a new epoch. ``where`` is a
    SQLAlchemy condition on the table's columns (``posts.c.published``): the facts
    count, and the source lists, the rows it holds for. ``stored_bounds=True`` pages
    a key of any type (text, a UUID) by stored boundaries that split a full page (see
    :mod:`sitemap_core.sources.sql.bounds`), ``month_buckets=True`` with a page per
    month at least, for a text key that begins with its date; ``month_buckets="published"``
    (a column's name) with a page per month of that date column, for any key (see
    :mod:`sitemap_core.sources.sql.date_bounds`). Commits (on a
    Connection already in a transaction, the caller commits).
    """
    options = _Options(
        lastmod, page_width, where, recount, kind_of(stored_bounds, month_buckets, key)
    )
    if isinstance(target, Engine):
        with target.begin() as conn:
            _install(conn, table, key, facts, options)
        return
    began = not target.in_transaction()
    _install(target, table, key, facts, options)
    if began:
        target.commit()


@dataclass(frozen=True)
class _Options:
    """What an installation was asked for besides the names."""

    lastmod: str | None
    page_width: int
    where: ColumnElement[bool] | None
    recount: bool
    #: The kind of pages (see sitemap_core.sources.sql.bounds).
    kind: str


def condition_sql(where: ColumnElement[bool] | None, dialect: Dialect) -> str:
    """``where`` as SQL text with its values written in and its columns unqualified, so
    that it reads the same on the table, in a trigger's row table and in a page's
    query; ``""`` for none."""
    if where is None:
        return ""
    compiled = where.compile(
        dialect=dialect, compile_kwargs={"literal_binds": True, "include_table": False}
    )
    return str(compiled)


def _install(conn: Connection, table: str, key: str, facts: str, options: _Options) -> None:
    dialect = conn.dialect.name
    condition = condition_sql(options.where, conn.dialect)
    if dialect == "sqlite":
        _install_sqlite(conn, table, key, facts, options, condition)
        return
    if dialect != "postgresql":
        raise ConfigurationError(
            f"no page facts DDL for the {dialect!r} dialect here (PostgreSQL and SQLite);"
            " docs/sqlalchemy.md gives the MySQL statements to run once"
        )
    names = _Names(conn, table, key, facts, options.lastmod, condition, options.kind)
    _install_postgresql(conn, names, options, condition)


def _install_sqlite(
    conn: Connection, table: str, key: str, facts: str, options: _Options, condition: str
) -> None:
    # SQLite's installation, on the connection's own sqlite3 connection.
    sqlite_pages.install_page_facts(
        conn.connection.driver_connection,  # type: ignore[arg-type]
        table,
        key,
        facts,
        lastmod=options.lastmod,
        page_width=options.page_width,
        where=condition or None,
        recount=options.recount,
        stored_bounds=options.kind != RANGES,
        month_buckets=dated_column(options.kind) or options.kind == MONTHS,
    )


def _install_postgresql(conn: Connection, names: _Names, options: _Options, condition: str) -> None:
    # The tables (and what an earlier version's lack), a recount when the layout is
    # new or another, the layout's summary counted, the triggers.
    width = sqlite_pages.checked_width(options.page_width)
    for statement in names.tables():
        conn.exec_driver_sql(statement)
    kind = options.kind
    known = conn.exec_driver_sql(f"SELECT width, condition, kind FROM {names.layout}").first()
    if known is None or tuple(known) != (width, condition, kind) or options.recount:
        for statement in names.recount(width):
            conn.exec_driver_sql(statement)
        conn.execute(
            text(
                f"INSERT INTO {names.layout} (width, epoch, version, condition, kind)"
                " VALUES (:width, :epoch, 0, :condition, :kind)"
            ),
            {"width": width, "epoch": secrets.token_hex(8), "condition": condition, "kind": kind},
        )
    for statement in names.summed():
        conn.exec_driver_sql(statement)
    # Pages counted undated before the date column became NOT NULL: their first
    # writes must still be counted as dating them.
    undated = conn.exec_driver_sql(f"SELECT undated FROM {names.layout}").scalar()
    names.undated_pages = names.undated_pages or bool(undated)
    for statement in names.triggers(width):
        conn.exec_driver_sql(statement)


#: What each kind of pages asks of the key's Python type, and why.
_KEY_TYPES: dict[str, tuple[type, str]] = {
    RANGES: (
        int,
        "is not an integer column: page facts need an integer key (pages are ranges of"
        " keys), or stored_bounds=True (pages of stored boundaries, for any key)",
    ),
    MONTHS: (
        str,
        "is not a text column: month_buckets read the month from the key's first"
        " characters (2026-03-...)",
    ),
}


def _checked_columns(
    conn: Connection, table: str, key: str, lastmod: str | None, kind: str
) -> dict[str, Any]:
    """The columns of ``table`` by name, once ``key`` and ``lastmod`` are found there
    and the key's type suits the kind of pages."""
    columns = {c["name"]: c for c in inspect(conn).get_columns(table)}
    for name in (key, lastmod):
        if name is not None and name not in columns:
            raise ConfigurationError(f"table {table!r} has no column {name!r}")
    wanted, why = _KEY_TYPES.get(kind, (object, ""))
    if wanted is not object and columns[key]["type"].python_type is not wanted:
        raise ConfigurationError(f"key {key!r} of table {table!r} {why}")
    return columns


class _Names:
    """The quoted names and column types of one installation, and its DDL."""

    def __init__(
        self,
        conn: Connection,
        table: str,
        key: str,
        facts: str,
        lastmod: str | None,
        condition: str,
        kind: str,
    ) -> None:
        columns = _checked_columns(conn, table, key, lastmod, kind)
        self.table, self.key = quoted("table", table), quoted("key", key)
        self.facts = quoted("facts", facts)
        self.layout = quoted("facts", f"{facts}_layout")
        self.prefix = f"{table}_{facts}"
        self.lastmod = None if lastmod is None else quoted("lastmod", lastmod)
        #: Rows the condition leaves out are on no page.
        self.listed = f" WHERE ({condition})" if condition else ""
        self.date_type = (
            "TEXT" if lastmod is None else columns[lastmod]["type"].compile(dialect=conn.dialect)
        )
        #: Whether the dates are zoned (PostgreSQL then keeps each page's lastmod text).
        self.zoned = "WITH TIME ZONE" in self.date_type.upper()
        #: Whether a write can date a page that a recount left undated: rows can lack a
        #: date (or, found at installation, some page is undated already).
        self.undated_pages = lastmod is None or bool(columns[lastmod]["nullable"])
        #: The stored boundaries (None: ranges of integer keys).
        self.stored = sqla_bounds.prepare(
            conn, bounds_of(kind, table, key, facts, lastmod, condition), columns
        )
        self.bounds = bounds_table(facts)

    def page_of(self, image: str, width: int) -> str:
        # See sqlite_pages.page_of: the same arithmetic in PostgreSQL; or the page of
        # the key's stored boundaries, or of its date and key.
        if isinstance(self.stored, DateBounds):
            return self.stored.page_of(image)
        if self.stored is not None:
            return self.stored.page_of(f"{image}.{self.key}")
        return sqlite_pages.page_of(f"{image}.{self.key}", width)

    def tables(self) -> list[str]:
        return [
            f"CREATE TABLE IF NOT EXISTS {self.facts} (page BIGINT PRIMARY KEY,"
            f" urls BIGINT NOT NULL, newest {self.date_type}, changed TIMESTAMPTZ,"
            " version BIGINT NOT NULL)",
            f"CREATE TABLE IF NOT EXISTS {self.layout} (width BIGINT NOT NULL,"
            " epoch TEXT NOT NULL, version BIGINT NOT NULL, condition TEXT NOT NULL)",
            # The kind of pages (a layout from before stored boundaries: ranges).
            f"ALTER TABLE {self.layout} ADD COLUMN IF NOT EXISTS kind TEXT NOT NULL DEFAULT ''",
            *self._lastmod_text(),
            # The summary of the pages, kept with the layout's version (see _counted).
            f"ALTER TABLE {self.layout} ADD COLUMN IF NOT EXISTS pages BIGINT,"
            " ADD COLUMN IF NOT EXISTS urls BIGINT,"
            f" ADD COLUMN IF NOT EXISTS newest {self.date_type},"
            " ADD COLUMN IF NOT EXISTS changed TIMESTAMPTZ,"
            " ADD COLUMN IF NOT EXISTS undated BIGINT",
            # The layout's lastmod text of an earlier version: its one row's text is
            # written when it is read, which spares every write a call.
            f"ALTER TABLE {self.layout} DROP COLUMN IF EXISTS {LASTMOD_TEXT}",
        ]

    def summed(self) -> list[str]:
        """The layout's summary counted from the facts (after a recount, and at every
        installation: facts of an earlier version get theirs), the layout locked
        first so that no write comes between."""
        return [
            f"SELECT 1 FROM {self.layout} FOR UPDATE",
            f"UPDATE {self.layout} SET (pages, urls, newest, changed, undated) ="
            f" ({summary_sql(self.facts)})",
        ]

    def _lastmod_text(self) -> list[str]:
        # Zoned dates: each page's lastmod as the sitemap's text, kept in its facts row
        # (a generated column, so that every statement writing a row keeps it: the
        # triggers' upsert, the recount, TRUNCATE's, a split), which an index reads as
        # it is. Facts of an earlier version get it added and filled here.
        if not self.zoned:
            return []
        function = quoted("function", f"{self.prefix}_lastmod")
        return [
            # IMMUTABLE, as a generated column needs: its text depends on no setting.
            # PL/pgSQL keeps its plan for the session; an SQL function that is not
            # inlined (to_char is only STABLE) is planned again at every write.
            f"CREATE OR REPLACE FUNCTION {function}(n TIMESTAMPTZ, c TIMESTAMPTZ)"
            f" RETURNS TEXT LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS"
            f" $$ BEGIN RETURN {utc_text('n', 'c')}; END $$",
            f"ALTER TABLE {self.facts} ADD COLUMN IF NOT EXISTS {LASTMOD_TEXT} TEXT"
            f" GENERATED ALWAYS AS ({function}(newest, changed)) STORED",
        ]

    def recount(self, width: int) -> list[str]:
        # Every page's facts from the table, in one grouped pass (the layout row
        # follows, under a new epoch).
        newest = "NULL" if self.lastmod is None else f"MAX(t.{self.lastmod})"
        if self.stored is not None:
            return [*self.stored.recount(width), f"DELETE FROM {self.layout}"]
        return [
            f"DROP TABLE IF EXISTS {self.bounds}",  # boundaries of another kind of pages
            f"DELETE FROM {self.facts}",
            f"INSERT INTO {self.facts} (page, urls, newest, changed, version)"
            f" SELECT {self.page_of('t', width)}, COUNT(*), {newest}, NULL, 1"
            f" FROM {self.table} AS t{self.listed} GROUP BY 1",
            f"DELETE FROM {self.layout}",
        ]

    def _upsert(self, changes: str) -> str:
        # Each page a statement touched, once: rows in (+1, dated) and out (-1). Its
        # last change is the clock's time (not now(), the transaction's start, which a
        # transaction begun before another's commit would leave behind it), and never
        # moves back.
        return (
            f"INSERT INTO {self.facts} AS x (page, urls, newest, changed, version)"
            f" SELECT page, n, lm, clock_timestamp(), 1 FROM c"
            " ON CONFLICT (page) DO UPDATE SET urls = x.urls + excluded.urls,"
            " newest = GREATEST(x.newest, excluded.newest),"
            " changed = GREATEST(x.changed, excluded.changed),"
            " version = x.version + 1 RETURNING x.page, x.urls, x.newest, x.changed"
        )

    def _counted(self, changes: str) -> str:
        # The pages' facts counted and the layout's summary moved by as much, with its
        # version, in one statement: a page's listing changes when its count crosses 0.
        # Where a row can lack a date, a page a recount left undated is dated by its
        # first write: the old rows are read (o), and the layout row is locked first
        # (see _body), so they are those the upsert replaces. Dates that are never
        # missing leave no page undated, and the writes skip that read.
        old, undated, joined = "", "0", ""
        if self.undated_pages:
            old = (
                " o AS (SELECT f.page, f.urls > 0 AND f.newest IS NULL AND f.changed IS NULL"
                f" AS undated FROM {self.facts} AS f JOIN c USING (page)),"
            )
            undated, joined = "COUNT(*) FILTER (WHERE o.undated)", " LEFT JOIN o USING (page)"
        return (
            f"WITH c AS (SELECT page, SUM(n) AS n, MAX(lm) AS lm FROM ({changes}) AS c0"
            f" GROUP BY page),{old} up AS ({self._upsert(changes)}),"
            f" d AS (SELECT COALESCE(SUM((up.urls > 0)::int - (up.urls - c.n > 0)::int), 0)"
            " AS pages, COALESCE(SUM(c.n), 0) AS urls, MAX(up.newest) AS newest,"
            f" MAX(up.changed) AS changed, {undated} AS undated"
            f" FROM up JOIN c USING (page){joined})"
        )

    def _body(self, changes: str, width: int, arrived: str | None = None) -> str:
        # A trigger function's statements up to its RETURN: the layout locked, the
        # pages counted and the layout's summary and version moved; with stored
        # boundaries, each bucket's first page opened before and a full page split
        # after (see sqla_bounds).
        lock = f"PERFORM 1 FROM {self.layout} FOR UPDATE;"
        bump = (
            f"UPDATE {self.layout} AS l SET version = l.version + 1, pages = l.pages + d.pages,"
            " urls = l.urls + d.urls, newest = GREATEST(l.newest, d.newest),"
            " changed = GREATEST(l.changed, d.changed), undated = l.undated - d.undated FROM d"
        )
        if self.stored is None:
            return f"BEGIN {lock} {self._counted(changes)} {bump};"
        split = quoted("function", f"{self.prefix}_split")
        opening = "" if arrived is None else sqla_bounds.opening(self.stored, arrived)
        counted = (
            f"{self._counted(changes)}, b AS ({bump} RETURNING 1)"
            f" SELECT COALESCE(array_agg(up.page) FILTER (WHERE up.urls > {width}), '{{}}')"
            " FROM up INTO full_;"
        )
        return sqla_bounds.stored_body(lock, opening, counted, split)

    def _split(self, width: int) -> list[str]:
        # The function that splits a full page (stored boundaries only).
        function = quoted("function", f"{self.prefix}_split")
        if self.stored is None:
            return [f"DROP FUNCTION IF EXISTS {function}(BIGINT)"]
        if isinstance(self.stored, DateBounds):
            return [self.stored.pg_split_function(function, width)]
        return [sqla_bounds.split_function(self.stored, function, width)]

    def triggers(self, width: int) -> list[str]:
        date = "NULL" if self.lastmod is None else f"r.{self.lastmod}"
        arrived = (
            f"SELECT {self.page_of('r', width)} AS page, 1 AS n, {date} AS lm"
            f" FROM new_rows r{self.listed}"
        )
        left = (
            f"SELECT {self.page_of('r', width)} AS page, -1 AS n,"
            f" NULL::{self.date_type} AS lm FROM old_rows r{self.listed}"
        )
        bodies = {
            "INSERT": self._body(arrived, width, f"new_rows r{self.listed}"),
            "UPDATE": self._body(f"{left} UNION ALL {arrived}", width, f"new_rows r{self.listed}"),
            "DELETE": self._body(left, width),
        }
        statements = self._split(width)
        for event, body in bodies.items():
            function = quoted("function", f"{self.prefix}_{event.lower()}")
            trigger = quoted("trigger", f"{self.prefix}_{event.lower()}")
            images = {
                "INSERT": "NEW TABLE AS new_rows",
                "UPDATE": "OLD TABLE AS old_rows NEW TABLE AS new_rows",
                "DELETE": "OLD TABLE AS old_rows",
            }[event]
            statements += [
                f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql"
                f" AS $$ {body} RETURN NULL; END $$",
                f"DROP TRIGGER IF EXISTS {trigger} ON {self.table}",
                f"CREATE TRIGGER {trigger} AFTER {event} ON {self.table}"
                f" REFERENCING {images} FOR EACH STATEMENT EXECUTE FUNCTION {function}()",
            ]
        function = quoted("function", f"{self.prefix}_truncate")
        trigger = quoted("trigger", f"{self.prefix}_truncate")
        return [
            *statements,
            f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$"
            f" BEGIN PERFORM 1 FROM {self.layout} FOR UPDATE; WITH up AS (UPDATE {self.facts}"
            " SET urls = 0, changed = GREATEST(changed, clock_timestamp()),"
            " version = version + 1 RETURNING changed)"
            f" UPDATE {self.layout} SET version = version + 1, pages = 0, urls = 0,"
            " undated = 0, changed = GREATEST(changed, (SELECT MAX(changed) FROM up));"
            " RETURN NULL; END $$",
            f"DROP TRIGGER IF EXISTS {trigger} ON {self.table}",
            f"CREATE TRIGGER {trigger} AFTER TRUNCATE ON {self.table}"
            f" FOR EACH STATEMENT EXECUTE FUNCTION {function}()",
        ]
