"""Stable pages for an SQLite table: page facts kept by triggers (standard library only).

:func:`install_page_facts` creates, beside a table with an integer key, a table of
**page facts**: for each page of ``page_width`` keys (page *p*, numbered *p* + 1 in
its URL, holds the keys ``p * width + 1`` to ``(p + 1) * width``), how many rows it
holds, the newest ``lastmod`` among them, when a write last changed it and a version
that every such write bumps. ``AFTER INSERT / UPDATE / DELETE`` triggers keep them
current in the writing transaction itself, so every process, cold or warm, reads the
index as one query of one row per page, and a page's validators (ETag,
Last-Modified) as one query of one row, without reading the table. A row stays in its
page until it is deleted, so a write changes that one page only.

:class:`PageFacts` reads them for :class:`~sitemap_core.sources.sql.sqlite.SQLiteSource`
(``page_facts=``); see :mod:`sitemap_core.sources.pages` for what the core asks.

What the triggers see: every ``INSERT``, ``UPDATE``, ``DELETE`` and upsert. ``INSERT
OR REPLACE`` (``REPLACE``) of a key that exists deletes the old row without a
``DELETE`` trigger (unless the connection turned ``PRAGMA recursive_triggers`` on),
so the page would count the row twice: write such changes as an upsert (``INSERT
... ON CONFLICT (id) DO UPDATE``), or call :func:`install_page_facts` with
``recount=True`` after them.
"""

from __future__ import annotations

import re
import secrets
import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sitemap_core.errors import ConfigurationError
from sitemap_core.limits import MAX_URLS_PER_SITEMAP
from sitemap_core.model.values import lastmod_instant, normalise_lastmod
from sitemap_core.sources.pages import Page
from sitemap_core.sources.sql import sqlite_bounds
from sitemap_core.sources.sql.bounds import MONTHS, RANGES, StoredBounds, bounds_table, kind_of
from sitemap_core.sources.sql.date_bounds import DateBounds, bounds_of
from sitemap_core.sources.sql.names import double_quoted, quoted
from sitemap_core.sources.sql.sqlite_bounds import NOW as _NOW

__all__ = [
    "PageFacts",
    "checked_width",
    "inline_condition",
    "install_page_facts",
    "later",
    "page_of",
    "silent_deletes",
]

#: A page's last write, never moved back (one text format: its order is time's).
_LATER_CHANGE = (
    "changed = CASE WHEN changed IS NULL OR excluded.changed > changed"
    " THEN excluded.changed ELSE changed END"
)


def page_of(key: str, width: int) -> str:
    """The SQL of the page that the row whose key is ``key`` (an SQL expression) is on.

    Page *p* holds the keys ``p * width + 1`` to ``(p + 1) * width``, so that the pages of
    an id counted from 1 without gaps are the pages by rank (an upgrade keeps them).
    Rounded down also below 1: a key below 1 lands on a page below 0, which the index
    refuses, never on page 1.
    """
    # Integer division truncates toward zero, which is rounding down from key 1 on;
    # below, (key - width) / width rounds (key - 1) / width down.
    return f"(CASE WHEN {key} >= 1 THEN ({key} - 1) / {width} ELSE ({key} - {width}) / {width} END)"


def install_page_facts(
    conn: sqlite3.Connection,
    table: str,
    key: str,
    facts: str,
    *,
    lastmod: str | None = None,
    page_width: int = MAX_URLS_PER_SITEMAP,
    where: str | None = None,
    where_params: Sequence[Any] = (),
    recount: bool = False,
    stored_bounds: bool = False,
    month_buckets: bool | str = False,
) -> None:
    """Create the page facts ``facts`` of ``table`` and the triggers that keep them.

    ``key`` is the table's integer key (its ``INTEGER PRIMARY KEY``, say), ``lastmod``
    the column of each row's date, ``page_width`` how many keys a page spans (1 to
    50,000, and no more than the site's page size: a page lists at most that many
    URLs). ``where`` (a trusted SQL condition on the table's columns, its values in
    ``where_params``) limits the listed rows to those it holds for (published posts,
    say): the facts count those only, and the source lists those only. Creates
    ``facts`` (one row per page) and ``<facts>_layout`` (the width, the condition, a
    version bumped by every write, and an epoch that makes each installation's
    validators its own), fills them from the table in one pass, and commits.

    ``stored_bounds=True`` pages a key of any type (text, a UUID) by boundaries the
    database stores, and splits a page that outgrows ``page_width`` (see
    :mod:`sitemap_core.sources.sql.bounds`); the key needs a unique index (its
    ``PRIMARY KEY``), which its pages are read by. ``month_buckets=True`` (stored
    boundaries too) also starts a page at each month, for a text key that begins with
    its date (``2026-03-01/a-title``): a page never holds two months.
    ``month_buckets="published"`` (a column's name) pages any key by the month of
    that date column instead, in (date, key) order (see
    :mod:`sitemap_core.sources.sql.date_bounds`): the table needs an index on
    ``(published, key)``, and every listed row an ISO date in that column.

    Idempotent: run again with the same width, condition and kind of pages, it
    changes nothing (the upgrade of a site: one call at deployment time). Another
    width, condition or kind, or ``recount=True``, counts the pages again from the
    table under a new epoch, so no old ETag matches.
    """
    width = checked_width(page_width)
    t, k, f = quoted("table", table), quoted("key", key), quoted("facts", facts)
    layout = quoted("facts", f"{facts}_layout")
    lm = "NULL" if lastmod is None else f"NEW.{quoted('lastmod', lastmod)}"
    kind = kind_of(stored_bounds, month_buckets, key)
    _refuse_replace_holes(conn, table, key, kind)
    condition = inline_condition(conn, where, where_params)
    if not conn.in_transaction:
        # One write transaction from the width read to the triggers: workers starting
        # together install in turn, and no write falls between a recount and its
        # triggers.
        conn.execute("BEGIN IMMEDIATE")
    _create_tables(conn, f, layout)
    try:
        stored = sqlite_bounds.prepare(conn, bounds_of(kind, table, key, facts, lastmod, condition))
    except ConfigurationError:
        conn.rollback()  # a refused date column: nothing installed, no write held
        raise
    row = conn.execute(f"SELECT width, condition, kind FROM {layout}").fetchone()
    if row is None or tuple(row) != (width, condition, kind) or recount:
        _recount(conn, (t, k, f, layout, bounds_table(facts)), lastmod, width, condition, stored)
    member = _membership(conn, table, condition)
    prefix = f"{table}_{facts}"
    page, opening = _row_pages(stored, k, width, member("NEW"))
    for event, (when, body) in _trigger_bodies(k, f, layout, lm, page, member, opening).items():
        trigger = quoted("trigger", f"{prefix}_{event.lower()}")
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        conn.execute(f"CREATE TRIGGER {trigger} AFTER {event} ON {t} WHEN {when} BEGIN {body} END")
    sqlite_bounds.install_split(conn, stored, prefix, width)
    conn.commit()


def _row_pages(
    stored: StoredBounds | DateBounds | None, k: str, width: int, listed: str
) -> tuple[Callable[[str], str], str]:
    # The page of a row image (NEW, OLD), as SQL: its range of keys, or its boundaries;
    # and what runs before a row arrives (date buckets: its bucket's first page; on a
    # date column, when the new row image is ``listed``).
    if stored is None:
        return (lambda image: page_of(f"{image}.{k}", width)), ""
    if isinstance(stored, DateBounds):
        return stored.page_of, stored.opening("NEW", listed)
    opening = "".join(f"{statement}; " for statement in stored.opening("NEW"))
    return (lambda image: stored.page_of(f"{image}.{k}")), opening


def _create_tables(conn: sqlite3.Connection, f: str, layout: str) -> None:
    # The facts and their layout; a layout from before stored boundaries gains the
    # kind of its pages (ranges of integer keys).
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {f} (page INTEGER PRIMARY KEY, urls INTEGER NOT NULL,"
        " newest, changed TEXT, version INTEGER NOT NULL)"
    )
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {layout} (width INTEGER NOT NULL, epoch TEXT NOT NULL,"
        " version INTEGER NOT NULL, condition TEXT NOT NULL, kind TEXT NOT NULL DEFAULT '')"
    )
    columns = {row[1] for row in conn.execute(f"PRAGMA table_info({layout})")}
    if "kind" not in columns:
        conn.execute(f"ALTER TABLE {layout} ADD COLUMN kind TEXT NOT NULL DEFAULT ''")


def inline_condition(conn: sqlite3.Connection, where: str | None, params: Sequence[Any]) -> str:
    """``where`` with its ``?`` placeholders replaced by SQLite's literals of ``params``
    (``quote()``), for the triggers, which take no parameters; ``""`` for none."""
    if where is None:
        if params:
            raise ConfigurationError("where_params were given without a where condition")
        return ""
    if not isinstance(where, str) or not where.strip():
        raise ConfigurationError("where must be a non-empty SQL condition or None")
    literals = iter([conn.execute("SELECT quote(?)", (value,)).fetchone()[0] for value in params])
    pieces = []
    # Placeholders outside quoted text and names only.
    for piece in re.split(r"""('(?:[^']|'')*'|"(?:[^"]|"")*")""", where):
        if piece.startswith(("'", '"')):
            pieces.append(piece)
            continue
        try:
            pieces.append(re.sub(r"\?", lambda _: next(literals), piece))
        except StopIteration:
            raise ConfigurationError("where has more placeholders than where_params") from None
    if next(literals, None) is not None:
        raise ConfigurationError("where_params has more values than where has placeholders")
    return "".join(pieces)


def _membership(conn: sqlite3.Connection, table: str, condition: str) -> Callable[[str], str]:
    # Whether the row image (NEW, OLD) is listed: the condition over a one-row table of
    # the image's columns, named as the table's, so that it reads as it does on it.
    if not condition:
        return lambda image: "1"
    info = conn.execute("SELECT name FROM pragma_table_info(?)", (table,))
    names = [quoted("column", row[0]) for row in info]

    def member(image: str) -> str:
        columns = ", ".join(f"{image}.{name} AS {name}" for name in names)
        return f"EXISTS (SELECT 1 FROM (SELECT {columns}) WHERE ({condition}))"

    return member


def checked_width(page_width: object) -> int:
    """``page_width`` if it is a whole number from 1 to 50,000, else raise."""
    if isinstance(page_width, bool) or not isinstance(page_width, int):
        raise ConfigurationError(f"page_width must be an int, got {page_width!r}")
    if not 1 <= page_width <= MAX_URLS_PER_SITEMAP:
        raise ConfigurationError(
            f"page_width {page_width} must be between 1 and {MAX_URLS_PER_SITEMAP}"
        )
    return page_width


def silent_deletes(conn: sqlite3.Connection, table: str, key: str) -> str | None:
    """What lets ``INSERT OR REPLACE`` delete a row of ``table`` without firing a
    ``DELETE`` trigger (which the change log and the page facts would both miss):
    a unique index on other columns than ``key``, or an ``INTEGER PRIMARY KEY`` (the
    rowid, unique without an index) other than ``key``; None when nothing does."""
    indexes = conn.execute('SELECT name, "unique" FROM pragma_index_list(?)', (table,))
    for index, unique in indexes.fetchall():
        info = conn.execute("SELECT name FROM pragma_index_info(?)", (index,))
        columns = [row[0] for row in info]
        if unique and columns != [key]:
            return f"a unique index on {columns}"
    primary = conn.execute("SELECT name, type FROM pragma_table_info(?) WHERE pk", (table,))
    keys = primary.fetchall()
    if len(keys) == 1 and keys[0][1].upper() == "INTEGER" and keys[0][0] != key:
        return f"the INTEGER PRIMARY KEY {keys[0][0]!r} besides the key {key!r}"
    return None


#: What each kind of pages asks of the key's declared type (a pattern), and why.
_KEY_TYPES = {
    RANGES: (
        "INT",
        "page facts need an integer key (pages are ranges of keys), or stored_bounds=True"
        " (pages of stored boundaries, for any key)",
    ),
    MONTHS: (
        "CHAR|CLOB|TEXT",
        "month_buckets read the month from the first characters of a text key",
    ),
}


def _refuse_replace_holes(conn: sqlite3.Connection, table: str, key: str, kind: str) -> None:
    # The key's type for the kind of pages, its unique index for stored boundaries;
    # see silent_deletes.
    declared = {
        name: decl.upper()
        for name, decl in conn.execute("SELECT name, type FROM pragma_table_info(?)", (table,))
    }
    if key not in declared:
        raise ConfigurationError(f"table {table!r} has no column {key!r}")
    pattern, why = _KEY_TYPES.get(kind, ("", ""))
    if not re.search(pattern, declared[key]):
        raise ConfigurationError(
            f"key {key!r} of table {table!r} is declared {declared[key] or 'without a type'}: {why}"
        )
    if kind != RANGES:
        sqlite_bounds.key_collation(conn, table, key)  # raises without a unique index
    reason = silent_deletes(conn, table, key)
    if reason is not None:
        raise ConfigurationError(
            f"table {table!r} has {reason}: INSERT OR REPLACE there deletes rows without"
            " a DELETE trigger, so page facts would miss them"
        )


def _recount(
    conn: sqlite3.Connection,
    names: tuple[str, str, str, str, str],
    lastmod: str | None,
    width: int,
    condition: str,
    stored: StoredBounds | DateBounds | None,
) -> None:
    # Every page's facts from the table, in one grouped pass, under a new epoch.
    t, k, f, layout, bounds = names
    newest = "NULL" if lastmod is None else f"MAX({quoted('lastmod', lastmod)})"
    page = page_of(f"{t}.{k}", width)
    listed = f" WHERE ({condition})" if condition else ""
    statements = [
        f"DELETE FROM {f}",
        f"DROP TABLE IF EXISTS {bounds}",  # boundaries of another kind of pages
        f"INSERT INTO {f} (page, urls, newest, changed, version)"
        f" SELECT {page}, COUNT(*), {newest}, NULL, 1 FROM {t}{listed} GROUP BY 1",
    ]
    for statement in statements if stored is None else stored.recount(width):
        conn.execute(statement)
    conn.execute(f"DELETE FROM {layout}")
    conn.execute(
        f"INSERT INTO {layout} (width, epoch, version, condition, kind) VALUES (?, ?, 0, ?, ?)",
        (width, secrets.token_hex(8), condition, RANGES if stored is None else stored.kind),
    )


def _trigger_bodies(
    k: str,
    f: str,
    layout: str,
    lm: str,
    page: Callable[[str], str],
    member: Callable[[str], str],
    opening: str = "",
) -> dict[str, tuple[str, str]]:
    # What each write does to the facts, when it fires (WHEN) and what (the body): a
    # listed row's page (``page`` of a row image) counts it in or out, takes its date,
    # notes the time and bumps its version; the layout's version moves too. A row the
    # condition leaves out is on no page. ``opening`` runs before a row arrives (date
    # buckets: its bucket's first page).
    new_page, old_page = page("NEW"), page("OLD")
    was, now = member("OLD"), member("NEW")
    bump = f"UPDATE {layout} SET version = version + 1;"

    def arrive(urls: str) -> str:
        return (
            f"INSERT INTO {f} (page, urls, newest, changed, version)"
            f" SELECT {new_page}, {urls}, {lm}, {_NOW}, 1 WHERE {now}"
            " ON CONFLICT (page) DO UPDATE SET urls = urls + excluded.urls,"
            " newest = CASE WHEN excluded.newest IS NULL THEN newest WHEN newest IS NULL"
            " OR excluded.newest > newest THEN excluded.newest ELSE newest END,"
            f" {_LATER_CHANGE}, version = version + 1;"
        )

    leave = (
        f"UPDATE {f} SET urls = urls - 1, changed = MAX({_NOW}, COALESCE(changed, '')),"
        " version = version + 1"
        f" WHERE page = {old_page}"
    )
    # An update moves its row out of its page when its key moves to another page, or
    # the condition no longer holds; in when it holds (again, or on another page).
    stays = f"{was} AND {old_page} = {new_page}"
    return {
        "INSERT": (now, opening + arrive("1") + bump),
        "UPDATE": (
            f"({was} OR {now})",
            f"{opening}{leave} AND {was} AND NOT ({stays} AND {now}); "
            + arrive(f"CASE WHEN {stays} THEN 0 ELSE 1 END")
            + bump,
        ),
        "DELETE": (was, f"{leave}; " + bump),
    }


def later(newest: Any, changed: Any) -> Any:
    """The later of a page's newest row date and its last write (None when neither is
    known), as the database gave it when it can tell without parsing (one of them, or
    two datetimes), else normalised: the core normalises a page's lastmod once."""
    if changed is None or newest is None:
        return newest if changed is None else changed
    if isinstance(newest, datetime) and isinstance(changed, datetime):
        return max(newest, changed)
    return max(normalise_lastmod(newest), normalise_lastmod(changed), key=lastmod_instant)


class PageFacts:
    """The statements that read the page facts of ``facts``, and what their rows mean.

    Shared by the SQL sources, which run the statements (sync or async, on SQLite or
    through SQLAlchemy: named parameters, names quoted by ``quote``, the dialect's) and
    hand the rows back.
    """

    def __init__(self, facts: str, quote: Callable[[str], str] = double_quoted) -> None:
        f, layout = (quoted("page_facts", name, quote) for name in (facts, f"{facts}_layout"))
        # A reserved word on MySQL.
        condition = quote("condition")
        self.name = facts
        #: The whole source's version: one row.
        self.layout_sql = f"SELECT epoch, version, width, {condition}, kind FROM {layout}"
        #: The pages numbered [first, stop) that hold rows, with the layout.
        self.pages_sql = (
            f"SELECT l.epoch, l.width, f.page, f.urls, f.newest, f.changed, f.version,"
            f" l.kind, l.{condition}"
            f" FROM {f} AS f CROSS JOIN {layout} AS l"
            " WHERE f.page >= :low AND f.page < :high AND f.urls > 0 ORDER BY f.page"
        )
        #: How many rows the pages hold.
        self.count_sql = f"SELECT COALESCE(SUM(urls), 0) FROM {f}"

    def not_installed(self) -> ConfigurationError:
        """The error of a source whose page facts are not there."""
        return ConfigurationError(
            f"page facts {self.name!r} are not installed; create them with install_page_facts()"
        )

    def fingerprint(self, rows: Sequence[Any]) -> object:
        """The whole source's fingerprint from the rows of :attr:`layout_sql`."""
        if not rows:
            raise self.not_installed()
        epoch, version = rows[0][:2]
        return ("pages", str(epoch), int(version))

    def condition(self, rows: Sequence[Any]) -> str:
        """The condition the facts count the rows of (``""``: all), from the rows of
        :attr:`layout_sql`: a stable page lists the rows of its keys it holds for."""
        if not rows:
            raise self.not_installed()
        return str(rows[0][3])

    @staticmethod
    def bounds(first: int, stop: int) -> dict[str, int]:
        """The parameters of :attr:`pages_sql` for the page numbers ``[first, stop)``."""
        # Numbers are pages + 1; SQL integers stop at 2**63 - 1. Asked from the first
        # page, pages below 0 (negative keys) come too, for the core to refuse: their
        # rows are on no page a URL can name.
        low = first - 1 if first > 1 else -(2**63)
        return {"low": low, "high": min(stop - 1, 2**63 - 1)}

    @staticmethod
    def pages(rows: Sequence[Any]) -> list[Page]:
        """The :class:`Page` objects of the rows of :attr:`pages_sql`: a page of
        integer keys has its keys' range as its window, a page of stored boundaries
        its slot below 0 (see :mod:`sitemap_core.sources.sql.bounds`)."""
        return [
            Page(
                page + 1,
                *(_keys(page, width) if kind == RANGES else _slot(page, width)),
                int(urls),
                later(newest, changed),
                (str(epoch), page, int(version)),
            )
            for epoch, width, page, urls, newest, changed, version, kind, _ in rows
        ]


def _keys(page: int, width: int) -> tuple[int, int]:
    # Page p holds the keys p * width + 1 to (p + 1) * width.
    return page * width + 1, (page + 1) * width + 1


def _slot(page: int, width: int) -> tuple[int, int]:
    # A page of stored boundaries: a window as wide as its width, below 0 (see bounds).
    return -(page + 1) * width, -page * width
