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
from sitemap_core.sources.sql.bounds import BUCKETS, RANGES, StoredBounds
from sitemap_core.sources.sql.names import quoted

__all__ = ["NOW", "install_split", "prepare"]

#: When a write changed a page, as the triggers write it (UTC, to the millisecond: two
#: writes a second apart or less still move the page's lastmod).
NOW = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"


def prepare(
    conn: sqlite3.Connection,
    table: str,
    key: str,
    facts: str,
    lastmod: str | None,
    condition: str,
    kind: str,
) -> StoredBounds | None:
    """The stored boundaries of ``facts`` (their table created, with the key's type
    and collation, so that the boundaries order keys as the key's index does); None
    for ``kind`` :data:`~sitemap_core.sources.sql.bounds.RANGES` (integer keys)."""
    if kind == RANGES:
        return None
    collation = key_collation(conn, table, key)
    declared = conn.execute(
        "SELECT type FROM pragma_table_info(?) WHERE name = ?", (table, key)
    ).fetchone()[0]
    typed = f"{declared} " if declared else ""
    names = StoredBounds.of(table, key, facts, lastmod, condition, BUCKETS[kind])
    column = f"{typed}COLLATE {quoted('collation', collation)}"
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {names.bounds} (page INTEGER PRIMARY KEY,"
        f" low {column}, high {column})"
    )
    index = quoted("index", f"{facts}_bounds_low")
    conn.execute(f"CREATE UNIQUE INDEX IF NOT EXISTS {index} ON {names.bounds} (low)")
    return names


def key_collation(conn: sqlite3.Connection, table: str, key: str) -> str:
    """The collation of the unique index on ``key`` alone (its ``PRIMARY KEY``, say),
    which pages are read by; raise when there is none."""
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
    conn: sqlite3.Connection, stored: StoredBounds | None, prefix: str, width: int
) -> None:
    """(Re)create the trigger that splits a page of ``stored`` once it lists more than
    ``width`` rows; drop it for ranges of integer keys."""
    trigger = quoted("trigger", f"{prefix}_split")
    conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    if stored is None:
        return
    f = stored.facts
    conn.execute(
        f"CREATE TRIGGER {trigger} AFTER UPDATE OF urls ON {f} WHEN NEW.urls > {width}"
        f" BEGIN {split_body(stored)} END"
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
