"""Stored boundaries on PostgreSQL: the boundaries table and the function that splits.

:func:`~sitemap_core.sources.sql.sqla_pages.install_page_facts` with
``stored_bounds=True`` calls :func:`prepare` for the boundaries table, and its
statement triggers call the function :func:`split_function` creates for each page a
statement filled past its width (see :mod:`sitemap_core.sources.sql.bounds`). A
statement may add any number of rows to a page (a bulk load), so a split cuts the
page into pieces of about half the width, in one pass over its rows: the first stays
the page, the others are new pages numbered after the last.

Every write locks the layout row first (its version bump), so writers take page
numbers and boundaries one at a time, and each sees the boundaries the last one
left (a ``REPEATABLE READ`` writer that began before them gets a serialization
error, to retry, rather than a miscounted page).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from sqlalchemy import BigInteger, Connection, Select, bindparam, inspect, select, text

from sitemap_core.errors import ConfigurationError
from sitemap_core.sources.sql.bounds import StoredBounds, dated_column
from sitemap_core.sources.sql.date_bounds import DateBounds, split_facts
from sitemap_core.sources.sql.names import IDENTIFIER, double_quoted, quoted
from sitemap_core.sources.sql.sqlite_bounds import unquoted

__all__ = [
    "opening",
    "prepare",
    "prepare_dated",
    "reader",
    "split_function",
    "stored_body",
    "stored_window",
]


def prepare(
    conn: Connection, stored: StoredBounds | DateBounds | None, columns: dict[str, Any]
) -> StoredBounds | DateBounds | None:
    """``stored`` (see :func:`~sitemap_core.sources.sql.date_bounds.bounds_of`) with
    its boundaries table created, for the table's ``columns`` by name (as SQLAlchemy's
    inspector gives them); None for ranges of integer keys."""
    if stored is None:
        return None
    if isinstance(stored, DateBounds):
        return prepare_dated(conn, stored, columns)
    table, key = unquoted(stored.table), unquoted(stored.key)
    if not _unique(conn, table, key):
        raise ConfigurationError(
            f"key {key!r} of table {table!r} has no unique index of its own: stored"
            " boundaries read each page as a range of the key (make it the PRIMARY KEY,"
            " or UNIQUE)"
        )
    # The key's type and collation, so that the boundaries order keys as its index does.
    column = _collated(conn, table, key, columns[key]["type"].compile(dialect=conn.dialect))
    index = quoted("index", f"{unquoted(stored.facts)}_bounds_low")
    conn.exec_driver_sql(
        f"CREATE TABLE IF NOT EXISTS {stored.bounds} (page BIGINT PRIMARY KEY,"
        f" low {column}, high {column})"
    )
    conn.exec_driver_sql(f"CREATE UNIQUE INDEX IF NOT EXISTS {index} ON {stored.bounds} (low)")
    return stored


def _unique(conn: Connection, table: str, key: str) -> bool:
    # Whether ``key`` alone is the table's primary key, a unique constraint or index.
    found = inspect(conn)
    keys: list[list[str | None]] = [list(found.get_pk_constraint(table)["constrained_columns"])]
    keys += [list(c["column_names"]) for c in found.get_unique_constraints(table)]
    keys += [list(i["column_names"]) for i in found.get_indexes(table) if i["unique"]]
    return [key] in keys


def split_function(stored: StoredBounds, function: str, width: int) -> str:
    """The function ``function(page)`` that cuts a page over ``width`` rows into pieces
    of about half ``width``: its facts counted again, the new pages after the last."""
    s, b, f = stored, stored.bounds, stored.facts
    rows = s.rows("s", s.in_page("s", "split_page"))
    return (
        f"CREATE OR REPLACE FUNCTION {function}(split_page BIGINT) RETURNS void"
        " LANGUAGE plpgsql AS $$ DECLARE top BIGINT; BEGIN"
        f" top := (SELECT MAX(page) FROM {b});"
        f" WITH z AS ({s.pieces(rows, width)}), cut AS (INSERT INTO {b} (page, low, high)"
        " SELECT top + piece, k, NULL FROM z WHERE piece > 0 AND first = 1),"
        f"{split_facts(f, stored.layout)};"
        f" UPDATE {b} SET high = COALESCE((SELECT nx.low FROM {b} AS nx"
        f" WHERE nx.page = {b}.page + 1), (SELECT o.high FROM {b} AS o WHERE o.page = split_page))"
        " WHERE page > top;"
        f" UPDATE {b} SET high = (SELECT nx.low FROM {b} AS nx WHERE nx.page = top + 1)"
        " WHERE page = split_page; END $$"
    )


def stored_body(lock: str, opening: str, counted: str, split: str) -> str:
    """A trigger function's body: the layout locked first (``lock``; see the module),
    the ``opening`` statements (date buckets: each new bucket's first page), the
    pages' facts counted (``counted``, which gathers the pages over the width in
    ``full_``), each such page split (``split``)."""
    return (
        f"DECLARE touched BIGINT; full_ BIGINT[]; part_ text; BEGIN {lock} {opening}"
        f" {counted} FOREACH touched IN ARRAY full_ LOOP PERFORM {split}(touched);"
        " END LOOP;"
    )


def opening(stored: StoredBounds | DateBounds, arrived: str) -> str:
    """Date buckets: the loop that gives each bucket the rows of ``arrived`` (an SQL
    query whose rows are ``r``) fall in its first page; ``""`` without buckets."""
    if isinstance(stored, DateBounds):
        return stored.pg_opening(arrived)
    if not stored.bucket:
        return ""
    statements = stored.bucket_statements("part_")
    buckets = f"SELECT DISTINCT {stored.part(f'r.{stored.key}')} FROM {arrived}"
    body = " ".join(f"{statement};" for statement in statements)
    return f"FOR part_ IN {buckets} LOOP {body} END LOOP;"


#: The key below every key, per Python type of the key and its SQL type's name.
_LOWEST = {
    ("int", "SMALLINT"): "-32768",
    ("int", "INTEGER"): "-2147483648",
    ("int", "BIGINT"): "-9223372036854775808",
    ("str", ""): "''",
    ("UUID", ""): "'00000000-0000-0000-0000-000000000000'",
}


def prepare_dated(conn: Connection, dated: DateBounds, columns: dict[str, Any]) -> DateBounds:
    """The date buckets ``dated`` on PostgreSQL: its calendar for the SQL types of the
    date column and key among the table's ``columns`` (a month's start, the key below
    every key), after checking the index on (date, key) and that no listed row has a
    NULL date; its boundaries table created. Raise naming month_buckets otherwise."""
    table, key, date = unquoted(dated.table), unquoted(dated.key), dated.column
    if date not in columns:
        raise ConfigurationError(f"month_buckets={date!r}: table {table!r} has no such column")
    types = (columns[date]["type"], columns[key]["type"])
    date_type, key_type = types
    lowest = _LOWEST.get((key_type.python_type.__name__, _int_name(key_type, conn)))
    if lowest is None or date_type.python_type not in (dt.date, dt.datetime):
        raise ConfigurationError(
            f"month_buckets={date!r}: date buckets need a date or timestamp column and an"
            " integer, text or UUID key"
        )
    found = [i["column_names"][:2] for i in inspect(conn).get_indexes(table)]
    if [date, key] not in found:
        raise ConfigurationError(
            f"month_buckets={date!r}: table {table!r} has no index on ({date}, {key}), which"
            f" each page's rows are read by: CREATE INDEX ... ON {table} ({date}, {key})"
        )
    date_sql, key_sql = (t.compile(dialect=conn.dialect) for t in types)
    utc = " AT TIME ZONE 'UTC'" if getattr(date_type, "timezone", False) else ""
    dated = replace(
        dated,
        month_sql=f"to_char({{d}}{utc}, 'YYYY-MM')",
        start_sql=f"CAST({{m}} || '-01 00:00:00+00' AS {date_sql})",
        first_key=f"CAST({lowest} AS {key_sql})",
        top=f"CAST('infinity' AS {date_sql})",
        undated_sql="{d} IS NULL",
    )
    _refuse_undated(conn, dated)
    _create_dated(conn, dated, date_sql, _collated(conn, table, key, key_sql))
    return dated


def _int_name(key_type: Any, conn: Connection) -> str:
    # The SQL type's name of an integer key (which lowest key it has), else "".
    if key_type.python_type is not int:
        return ""
    return str(key_type.compile(dialect=conn.dialect)).upper()


def _refuse_undated(conn: Connection, dated: DateBounds) -> None:
    # No listed row may have a NULL date: it has no month to be listed in.
    bad = conn.exec_driver_sql(
        f"SELECT COUNT(*) FROM {dated.table} AS s WHERE {dated.undated('s')}{dated.listed('s')}"
    ).scalar()
    if bad:
        raise ConfigurationError(
            f"month_buckets={dated.column!r}: {bad} listed rows have a NULL {dated.column}:"
            " they have no month to be listed in (give them one, or a where condition that"
            " leaves them out)"
        )


def _create_dated(conn: Connection, dated: DateBounds, date_sql: str, key_sql: str) -> None:
    # The boundaries table of date buckets (one of another kind dropped: a recount
    # follows), and its index on the lows.
    columns = conn.exec_driver_sql(
        "SELECT column_name FROM information_schema.columns WHERE table_schema ="
        f" current_schema() AND table_name = '{unquoted(dated.bounds)}'"
    ).scalars()
    if "low" in (names := set(columns)) and "low_at" not in names:
        conn.exec_driver_sql(f"DROP TABLE {dated.bounds}")
    conn.exec_driver_sql(
        f"CREATE TABLE IF NOT EXISTS {dated.bounds} (page BIGINT PRIMARY KEY,"
        f" low_at {date_sql}, low {key_sql}, high_at {date_sql}, high {key_sql})"
    )
    index = quoted("index", f"{unquoted(dated.facts)}_bounds_at")
    conn.exec_driver_sql(
        f"CREATE UNIQUE INDEX IF NOT EXISTS {index} ON {dated.bounds} (low_at, low)"
    )


def _collated(conn: Connection, table: str, key: str, key_sql: str) -> str:
    # The key's SQL type with its collation, if it has one.
    collation = conn.execute(
        text(
            "SELECT collation_name FROM information_schema.columns WHERE table_schema ="
            " current_schema() AND table_name = :t AND column_name = :c"
        ),
        {"t": table, "c": key},
    ).scalar()
    return key_sql if collation is None else f"{key_sql} COLLATE {quoted('collation', collation)}"


def reader(
    table: object, key: object, facts: str | None, quote: Callable[[str], str]
) -> StoredBounds | None:
    """The stored boundaries a source of ``table`` by ``key`` reads its pages of
    stored boundaries with, names quoted by ``quote`` (the dialect's: backticks on
    MySQL); None without page facts, or when ``table`` is not a named table and
    ``key`` a named column of it: such pages are then refused."""
    name = getattr(table, "name", None)
    column = key if isinstance(key, str) else getattr(key, "name", None)
    if facts is None or not isinstance(name, str) or not isinstance(column, str):
        return None
    if not (IDENTIFIER.fullmatch(name) and IDENTIFIER.fullmatch(column)):
        return None
    return StoredBounds.of(name, column, facts, quote=quote)


#: What a dialect's date buckets read pages with: PostgreSQL's dates all have an
#: infinity above them (its type is the bound's); MySQL takes a valid DATETIME (a text
#: such as ``'~'`` is no date to it) and bounds on the date alone as well (its
#: optimizer reads a range of the index on (date, key) only from those).
_READING: dict[str, dict[str, Any]] = {
    "postgresql": {"top": "'infinity'"},
    "mysql": {"top": "CAST('9999-12-31 23:59:59.999999' AS DATETIME(6))", "date_range": True},
}


def dated_reader(
    stored: StoredBounds | None,
    kind: str,
    dialect: str,
    quote: Callable[[str], str] = double_quoted,
) -> DateBounds | None:
    """The date buckets a source reads its pages with when the facts' layout records
    the kind ``kind`` of date buckets on a column (see :mod:`.date_bounds`), names
    quoted by ``quote`` (the dialect's), else None."""
    date = dated_column(kind)
    if stored is None or date is None:
        return None
    table, key, facts = unquoted(stored.table), unquoted(stored.key), unquoted(stored.facts)
    dated = DateBounds.of(table, key, date, facts, quote=quote)
    return replace(dated, **_READING.get(dialect, {}))


def stored_window(window: Select[Any], stored: StoredBounds | DateBounds | None) -> Select[Any]:
    """``window`` (the rows of a range of integer keys) as the rows of the page of
    stored boundaries ``:page`` instead; raise when the source cannot name them."""
    if stored is None:
        raise ConfigurationError(
            "pages of stored boundaries are read from a named table by a named key column:"
            " give the source the Table and the key's name"
        )
    page = bindparam("page", type_=BigInteger)
    return (
        select(*window.selected_columns)
        .where(text(stored.in_page(stored.table, ":page")).bindparams(page))
        .order_by(*(text(column) for column in stored.position(stored.table).split(", ")))
    )
