"""Stored boundaries on SQLite: the boundaries table and the trigger that splits.

:func:`~sitemap_core.sources.sql.sqlite_pages.install_page_facts` with
``stored_bounds=True`` calls :func:`prepare` for the boundaries table and
:func:`install_split` for the trigger that splits a full page (see
:mod:`sitemap_core.sources.sql.bounds` for the design). The row triggers count a
row on the page :meth:`~sitemap_core.sources.sql.bounds.StoredBounds.page_of` its
key gives; a write adds at most one row to a page, so a split cuts a page of
``width + 1`` rows in two: a new page, numbered after the last, takes the upper half.
"""

from __future__ import annotations

import sqlite3

from sitemap_core.errors import ConfigurationError
from sitemap_core.sources.sql.bounds import StoredBounds
from sitemap_core.sources.sql.date_bounds import DateBounds
from sitemap_core.sources.sql.names import quoted

__all__ = ["NOW", "install_split", "prepare", "prepare_dated"]

#: When a write changed a page, as the triggers write it (UTC, to the millisecond: two
#: writes a second apart or less still move the page's lastmod).
NOW = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"


def prepare(
    conn: sqlite3.Connection, stored: StoredBounds | DateBounds | None
) -> StoredBounds | DateBounds | None:
    """``stored`` (see :func:`~sitemap_core.sources.sql.date_bounds.bounds_of`) with
    its boundaries table created, with the key's type and collation, so that the
    boundaries order keys as the key's index does; None for ranges of integer keys."""
    if stored is None:
        return None
    if isinstance(stored, DateBounds):
        return prepare_dated(conn, stored)
    table, key = unquoted(stored.table), unquoted(stored.key)
    _drop_other(conn, stored.bounds, dated=False)
    column = _typed(conn, table, key, key_collation(conn, table, key))
    _create(conn, stored, f"low {column}, high {column}", ("low", "low"))
    return stored


def _typed(conn: sqlite3.Connection, table: str, column: str, collation: str) -> str:
    # The declared type of ``column`` of ``table`` and the collation ``collation``, as
    # a boundaries column holding its values is declared.
    declared = conn.execute(
        "SELECT type FROM pragma_table_info(?) WHERE name = ?", (table, column)
    ).fetchone()[0]
    typed = f"{declared} " if declared else ""
    return f"{typed}COLLATE {quoted('collation', collation)}"


def _drop_other(conn: sqlite3.Connection, bounds: str, dated: bool) -> None:
    # Boundaries of the other kind (with or without dates) go: a recount follows.
    columns = {row[1] for row in conn.execute(f"PRAGMA table_info({bounds})")}
    if columns and ("low_at" in columns) != dated:
        conn.execute(f"DROP TABLE {bounds}")


def prepare_dated(conn: sqlite3.Connection, dated: DateBounds) -> DateBounds:
    """The boundaries table of the date buckets ``dated`` created (dates and keys
    typed and collated as the index on (date, key) orders them), after checking that
    index and that every listed row has a month; raise naming the column otherwise."""
    table, date = unquoted(dated.table), dated.column
    key = unquoted(dated.key)
    if not conn.execute(
        "SELECT 1 FROM pragma_table_info(?) WHERE name = ?", (table, date)
    ).fetchone():
        raise ConfigurationError(f"month_buckets={date!r}: table {table!r} has no such column")
    key_type = _typed(conn, table, key, key_collation(conn, table, key))
    date_type = _typed(conn, table, date, date_collation(conn, table, date, key))
    bad = conn.execute(
        f"SELECT COUNT(*) FROM {dated.table} AS s WHERE {dated.undated('s')}{dated.listed('s')}"
    ).fetchone()[0]
    if bad:
        raise ConfigurationError(
            f"month_buckets={date!r}: {bad} listed rows of table {table!r} have a {date}"
            " that is NULL or not an ISO date (YYYY-MM-DD...): they have no month to be"
            " listed in (give them one, or a where condition that leaves them out)"
        )
    _drop_other(conn, dated.bounds, dated=True)
    columns = f"low_at {date_type}, low {key_type}, high_at {date_type}, high {key_type}"
    _create(conn, dated, columns, ("at", "low_at, low"))
    return dated


def _create(
    conn: sqlite3.Connection, stored: StoredBounds | DateBounds, columns: str, lows: tuple[str, str]
) -> None:
    # The boundaries table of ``columns`` (besides its page) and the unique index
    # ``<facts>_bounds_<name>`` on its lows, ``lows`` being (name, columns).
    b = stored.bounds
    conn.execute(f"CREATE TABLE IF NOT EXISTS {b} (page INTEGER PRIMARY KEY, {columns})")
    index = quoted("index", f"{unquoted(stored.facts)}_bounds_{lows[0]}")
    conn.execute(f"CREATE UNIQUE INDEX IF NOT EXISTS {index} ON {b} ({lows[1]})")


def unquoted(name: str) -> str:
    """The plain name of a double-quoted SQL name."""
    return name[1:-1].replace('""', '"')


def date_collation(conn: sqlite3.Connection, table: str, date: str, key: str) -> str:
    """The collation of ``date`` in an index of ``table`` on (``date``, ``key``), which
    date buckets read pages by; raise naming month_buckets when there is none."""
    for (index,) in conn.execute("SELECT name FROM pragma_index_list(?)", (table,)):
        columns = conn.execute(
            "SELECT name, coll FROM pragma_index_xinfo(?) WHERE key ORDER BY seqno", (index,)
        ).fetchall()
        if [name for name, _ in columns[:2]] == [date, key]:
            return str(columns[0][1])
    raise ConfigurationError(
        f"month_buckets={date!r}: table {table!r} has no index on ({date}, {key}), which"
        f" each page's rows are read by: CREATE INDEX ... ON {table} ({date}, {key})"
    )


def key_collation(conn: sqlite3.Connection, table: str, key: str) -> str:
    """The collation of the unique index on ``key`` alone (its ``PRIMARY KEY``, say),
    which pages are read by (BINARY for the ``INTEGER PRIMARY KEY``, the rowid);
    raise when there is none."""
    primary = conn.execute("SELECT name, type FROM pragma_table_info(?) WHERE pk", (table,))
    if [(name, kind.upper()) for name, kind in primary] == [(key, "INTEGER")]:
        return "BINARY"
    for index, unique in conn.execute('SELECT name, "unique" FROM pragma_index_list(?)', (table,)):
        columns = conn.execute(
            "SELECT name, coll FROM pragma_index_xinfo(?) WHERE key", (index,)
        ).fetchall()
        if unique and len(columns) == 1 and columns[0][0] == key:
            return str(columns[0][1])
    raise ConfigurationError(
        f"key {key!r} of table {table!r} has no unique index of its own: stored boundaries"
        " read each page as a range of the key (make it the PRIMARY KEY, or UNIQUE)"
    )


def install_split(
    conn: sqlite3.Connection, stored: StoredBounds | DateBounds | None, prefix: str, width: int
) -> None:
    """(Re)create the trigger that splits a page of ``stored`` once it lists more than
    ``width`` rows; drop it for ranges of integer keys."""
    trigger = quoted("trigger", f"{prefix}_split")
    conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    if stored is None:
        return
    f = stored.facts
    body = stored.split_body(NOW) if isinstance(stored, DateBounds) else split_body(stored)
    conn.execute(
        f"CREATE TRIGGER {trigger} AFTER UPDATE OF urls ON {f} WHEN NEW.urls > {width}"
        f" BEGIN {body} END"
    )


def split_body(stored: StoredBounds) -> str:
    """The statements that cut page ``NEW.page`` (of ``NEW.urls`` rows) in two: the
    upper half of its listed rows to a new page after the last."""
    s, b, f, k = stored, stored.bounds, stored.facts, stored.key
    new = f"(SELECT MAX(page) FROM {b})"

    def newest(page: str) -> str:
        if s.lastmod is None:
            return "NULL"
        rows = f"{s.table} AS s WHERE {s.in_page('s', page)}{s.listed('s')}"
        return f"(SELECT MAX(s.{s.lastmod}) FROM {rows})"

    middle = (
        f"(SELECT s.{k} FROM {s.table} AS s WHERE {s.in_page('s', 'NEW.page')}{s.listed('s')}"
        f" ORDER BY s.{k} LIMIT 1 OFFSET (NEW.urls + 1) / 2)"
    )
    return (
        f"INSERT INTO {b} (page, low, high) SELECT {new} + 1, {middle},"
        f" (SELECT high FROM {b} WHERE page = NEW.page);"
        f" UPDATE {b} SET high = (SELECT low FROM {b} WHERE page = {new}) WHERE page = NEW.page;"
        f" INSERT INTO {f} (page, urls, newest, changed, version)"
        f" SELECT {new}, COUNT(*), {s.newest('s')}, {NOW}, 1 FROM {s.table} AS s"
        f" WHERE {s.in_page('s', new)}{s.listed('s')};"
        f" UPDATE {f} SET urls = NEW.urls - (SELECT urls FROM {f} WHERE page = {new}),"
        f" newest = {newest('NEW.page')}, changed = MAX({NOW}, COALESCE(changed, '')),"
        " version = version + 1 WHERE page = NEW.page;"
    )
