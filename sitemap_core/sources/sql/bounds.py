"""Stored boundaries: stable pages for a key that is not an integer (SQL text).

For a text or UUID key (a slug, say) pages cannot be ranges of numbers, so the
database stores each page's range of keys: the table ``<facts>_bounds`` holds, per
page, its lowest key ``low`` (NULL: no lower bound) and the lowest key of the range
above it, ``high`` (NULL: no upper bound). The ranges cover every key, once. A row's
page is the page of the greatest ``low`` at or below its key, so a row stays in its
page until it is deleted, and a write changes that one page's facts.

A page that would list more than its width (at most 50,000, and no more than the
site's page size) **splits**: the rows above the middle of its listed rows move to a
new page, numbered after the last, whose range is the upper part of the full
page's. A split is the one event that moves URLs, and it moves the full page's rows
only. The installation cuts the table the same way: pages of about half the width,
so that a page takes as many inserts again before it splits.

**Date buckets** (``month_buckets=True``, for news and blog sites): a key that begins
with its date (``2026-03-01/a-title``) names its month in its first seven characters,
and every month with rows starts a page at the month's name, so a page never holds
two months: the first row of a new month starts a page after the last (cut from a
range that holds no row of that month or after it, so no row moves), a full month
splits within itself, and at installation a month of no more than the width is one
page. The page without a lower bound is then an empty one below the first month.

A page's window (see :class:`~sitemap_core.sources.pages.Page`) cannot be its keys,
so it is its slot: page *p* (numbered *p* + 1 in its URL) has the window
``[-(p + 1) * width, -p * width)``, as wide as a page of integer keys, and below 0,
where no page of integer keys is served. A source reads the page's range from the
boundaries by :func:`stored_page` of the window.

This module writes the SQL the two dialects share (SQLite's triggers and
PostgreSQL's functions are in :mod:`.sqlite_bounds` and :mod:`.sqla_bounds`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sitemap_core.errors import ConfigurationError
from sitemap_core.sources.sql.names import double_quoted, quoted

__all__ = [
    "BUCKETS",
    "DATED",
    "MONTHS",
    "RANGES",
    "STORED",
    "StoredBounds",
    "bounds_table",
    "dated_column",
    "dated_kind",
    "kind_of",
    "pieces_sql",
    "stored_page",
]

#: The kind of pages a layout records: ranges of integer keys, stored boundaries, or
#: stored boundaries in date buckets (a page per month at least).
RANGES, STORED, MONTHS = "", "stored", "stored-month"
#: How many characters of a key name its bucket, per kind of stored boundaries.
BUCKETS = {STORED: 0, MONTHS: len("2026-03")}


#: The prefix of the kind of pages of date buckets on a column (``month-of:published``).
DATED = "month-of:"


def dated_kind(column: str) -> str:
    """The kind of pages that date buckets on ``column`` record in the layout."""
    return f"{DATED}{column}"


def dated_column(kind: str) -> str | None:
    """The date column of a kind of pages of date buckets, else None."""
    return kind.removeprefix(DATED) if kind.startswith(DATED) else None


def kind_of(stored_bounds: bool, month_buckets: bool | str, key: str) -> str:
    """The kind of pages an installation asks for: ``month_buckets`` True for a key
    that begins with its date, a column's name for date buckets on that column (see
    :mod:`.date_bounds`); raise on any other value, naming the argument."""
    if isinstance(month_buckets, str):
        if not month_buckets or month_buckets == key:
            raise ConfigurationError(
                f"month_buckets={month_buckets!r}: give the name of the date column the"
                " months are read from (not the key), or True for a text key that begins"
                " with its date"
            )
        return dated_kind(month_buckets)
    if not isinstance(month_buckets, bool):
        raise ConfigurationError(
            f"month_buckets must be True, False or a date column's name, got {month_buckets!r}"
        )
    if month_buckets:
        return MONTHS
    return STORED if stored_bounds else RANGES


def bounds_table(facts: str, quote: Callable[[str], str] = double_quoted) -> str:
    """The name of the boundaries table of the page facts ``facts``, quoted by
    ``quote`` (the dialect's: backticks on MySQL)."""
    return quoted("facts", f"{facts}_bounds", quote)


def stored_page(start: int, stop: int) -> int | None:
    """The page whose window is ``[start, stop)`` if it is a page of stored
    boundaries (a window below 0), else None (a range of integer keys)."""
    if start >= 0:
        return None
    return -stop // (stop - start)


def pieces_sql(columns: str, rows: str, order: str, width: int, bucketed: bool) -> str:
    """``rows`` (an SQL query of ``columns``, among them ``part``, in no order) with
    the ``piece`` of each, numbered from 0 in the order ``order`` within its bucket
    (``part``, when ``bucketed``), when they are cut into pieces of about half
    ``width``: ``n`` rows make ``(2n + width) // (width + 1)`` pieces (at least 1), so
    a page one row over ``width`` makes two halves; ``first`` marks each piece's first
    row (whose key is its lower bound)."""
    within = "PARTITION BY part " if bucketed else ""
    ranked = (
        f"SELECT {columns}, ROW_NUMBER() OVER ({within}ORDER BY {order}) - 1 AS r,"
        f" COUNT(*) OVER ({within.strip()}) AS n FROM ({rows}) AS rows_"
    )
    # A bucket of no more than ``width`` rows stays one page (a month, say): past
    # buckets take few writes, so their pages need no room to grow.
    count = f"(n * 2 + {width}) / {width + 1}"
    least = f"n <= {width}" if bucketed else f"{count} < 1"
    share = f"(CASE WHEN {least} THEN 1 ELSE {count} END)"
    return (
        f"SELECT {columns}, r * {share} / n AS piece,"
        f" CASE WHEN r = 0 OR r * {share} / n <> (r - 1) * {share} / n THEN 1 ELSE 0 END"
        f" AS first FROM ({ranked}) AS ranked_"
    )


@dataclass(frozen=True)
class StoredBounds:
    """The names of one installation of stored boundaries, and the SQL it shares.

    ``table``, ``key``, ``facts``, ``layout`` and ``bounds`` are quoted names;
    ``lastmod`` the quoted date column (None: none); ``condition`` the SQL condition
    on the table's columns the listed rows hold for (``""``: all).
    """

    table: str
    key: str
    facts: str
    layout: str
    bounds: str
    lastmod: str | None
    condition: str
    #: Date buckets: how many characters of the key name its bucket (7: the month of a
    #: key that begins with its date, ``2026-03-...``); 0: no buckets.
    bucket: int = 0

    @classmethod
    def of(
        cls,
        table: str,
        key: str,
        facts: str,
        lastmod: str | None = None,
        condition: str = "",
        bucket: int = 0,
        quote: Callable[[str], str] = double_quoted,
    ) -> StoredBounds:
        """The stored boundaries of the page facts ``facts`` of ``table`` by ``key``
        (plain names, quoted here by ``quote``, the dialect's)."""
        return cls(
            quoted("table", table, quote),
            quoted("key", key, quote),
            quoted("facts", facts, quote),
            quoted("facts", f"{facts}_layout", quote),
            bounds_table(facts, quote),
            None if lastmod is None else quoted("lastmod", lastmod, quote),
            condition,
            bucket,
        )

    @property
    def kind(self) -> str:
        """The kind of pages these boundaries make (see :data:`BUCKETS`)."""
        return MONTHS if self.bucket else STORED

    def position(self, alias: str) -> str:
        """The row ``alias``'s position in the pages' order: its key."""
        return f"{alias}.{self.key}"

    def opening(self, image: str) -> list[str]:
        """With date buckets, the statements that give the bucket of the row image
        ``image`` its first page (see :meth:`bucket_statements`); else none."""
        if not self.bucket:
            return []
        return self.bucket_statements(self.part(f"{image}.{self.key}"))

    def part(self, key: str) -> str:
        """The bucket of the key ``key`` (an SQL expression): its first characters."""
        return f"substr({key}, 1, {self.bucket})" if self.bucket else "CAST('' AS TEXT)"

    def rows(self, alias: str, where: str) -> str:
        """The rows of ``alias`` (the table) that ``where`` keeps and the condition
        lists, as ``k``, ``lm`` and ``part`` (their bucket)."""
        lm = "CAST(NULL AS TEXT)" if self.lastmod is None else f"{alias}.{self.lastmod}"
        key = f"{alias}.{self.key}"
        return (
            f"SELECT {key} AS k, {lm} AS lm, {self.part(key)} AS part"
            f" FROM {self.table} AS {alias} WHERE {where}{self.listed(alias)}"
        )

    def bucket_statements(self, prefix: str) -> list[str]:
        """Date buckets: the statements that give the bucket ``prefix`` (an SQL
        expression) its first page when it has none, cut from the range that holds
        it. Every bucket with rows starts a page, so the range cut holds no row of it
        or after it, and no row moves."""
        b = self.bounds
        holder = (
            f"COALESCE((SELECT page FROM {b} WHERE low < {prefix} ORDER BY low DESC LIMIT 1),"
            f" (SELECT page FROM {b} WHERE low IS NULL))"
        )
        return [
            f"INSERT INTO {b} (page, low, high) SELECT (SELECT MAX(page) FROM {b}) + 1,"
            f" {prefix}, (SELECT high FROM {b} WHERE page = {holder})"
            f" WHERE NOT EXISTS (SELECT 1 FROM {b} WHERE low = {prefix})",
            f"UPDATE {b} SET high = {prefix} WHERE page = {holder}"
            f" AND (high IS NULL OR high > {prefix})",
        ]

    def listed(self, alias: str) -> str:
        """`` AND (condition)`` for the rows of ``alias`` (``""`` without one)."""
        del alias  # the condition's columns are unqualified: they read on any alias
        return f" AND ({self.condition})" if self.condition else ""

    def where(self, alias: str) -> str:
        """`` WHERE (condition)`` for the rows of ``alias`` (``""`` without one)."""
        del alias
        return f" WHERE ({self.condition})" if self.condition else ""

    def newest(self, alias: str) -> str:
        """The newest date of the rows of ``alias`` (SQL aggregate)."""
        return "NULL" if self.lastmod is None else f"MAX({alias}.{self.lastmod})"

    def page_of(self, key: str) -> str:
        """The page of the row whose key is ``key`` (an SQL expression): the page of
        the greatest lower bound at or below it, else the page without one."""
        b = self.bounds
        return (
            f"COALESCE((SELECT page FROM {b} WHERE low <= {key} ORDER BY low DESC LIMIT 1),"
            f" (SELECT page FROM {b} WHERE low IS NULL))"
        )

    def low_of(self, page: str) -> str:
        """The lowest key of page ``page`` (an SQL expression): its lower bound, or
        the table's lowest key when it has none (so that the key's index reads it
        as a range)."""
        t, k = self.table, self.key
        return (
            f"(SELECT CASE WHEN w.low IS NULL THEN (SELECT m.{k} FROM {t} AS m ORDER BY m.{k}"
            " LIMIT 1)"
            f" ELSE w.low END FROM {self.bounds} AS w WHERE w.page = {page})"
        )

    def high_of(self, page: str) -> str:
        """The highest key of page ``page`` (inclusive): the last key below its upper
        bound, or the table's highest key when it has none."""
        t, k = self.table, self.key
        return (
            f"(SELECT CASE WHEN w.high IS NULL THEN (SELECT m.{k} FROM {t} AS m ORDER BY"
            f" m.{k} DESC LIMIT 1) ELSE (SELECT m.{k} FROM {t} AS m WHERE m.{k} < w.high"
            f" ORDER BY m.{k} DESC LIMIT 1) END"
            f" FROM {self.bounds} AS w WHERE w.page = {page})"
        )

    def in_page(self, alias: str, page: str) -> str:
        """Whether the row ``alias`` lies in the range of page ``page``."""
        key = f"{alias}.{self.key}"
        return f"{key} >= {self.low_of(page)} AND {key} <= {self.high_of(page)}"

    def window_sql(self, selected: str, page: str) -> str:
        """The rows of page ``page`` (an SQL expression), ``selected``, in key order;
        ``{}`` stands for the condition a source appends (`` AND (...)``)."""
        return (
            f"SELECT {selected} FROM {self.table} AS s WHERE {self.in_page('s', page)}{{}}"
            f" ORDER BY s.{self.key}"
        )

    def pieces(self, rows: str, width: int) -> str:
        """``rows`` (an SQL query of ``k``, ``lm`` and ``part``, in no order) with the
        piece of each, in key order within its bucket (see :func:`pieces_sql`)."""
        return pieces_sql("k, lm, part", rows, "k", width, bool(self.bucket))

    def recount(self, width: int) -> list[str]:
        """Statements that cut the listed rows into pages of about half ``width``,
        in key order (page 0 without a lower bound; with date buckets, each bucket's
        first page from the bucket's name), and count their facts."""
        pieces = self.pieces(self.rows("s", "1 = 1"), width)
        cut = (
            f"(SELECT k, lm, part, piece, first, DENSE_RANK() OVER (ORDER BY part, piece) - 1"
            f" AS page FROM ({pieces}) AS pieces_) AS z"
        )
        b, f = self.bounds, self.facts
        # A bucket's first page starts at the bucket's name; without buckets, the
        # first page has no lower bound. Either way one page has none (with buckets,
        # an empty one below the first bucket, numbered last).
        opening = "part" if self.bucket else "NULL"
        lowest = f"(SELECT n.low FROM {b} AS n WHERE n.low IS NOT NULL ORDER BY n.low LIMIT 1)"
        return [
            f"DELETE FROM {f}",
            f"DELETE FROM {b}",
            f"INSERT INTO {b} (page, low, high) SELECT page, CASE WHEN piece = 0 THEN"
            f" {opening} ELSE k END, NULL FROM {cut} WHERE first = 1",
            f"INSERT INTO {b} (page, low, high) SELECT next_, NULL, NULL FROM (SELECT"
            f" COALESCE(MAX(page), -1) + 1 AS next_ FROM {b}) AS last_"
            f" WHERE NOT EXISTS (SELECT 1 FROM {b} WHERE low IS NULL)",
            f"UPDATE {b} SET high = (SELECT n.low FROM {b} AS n WHERE n.page = {b}.page + 1)",
            f"UPDATE {b} SET high = {lowest} WHERE low IS NULL",
            f"INSERT INTO {f} (page, urls, newest, changed, version)"
            f" SELECT page, COUNT(*), MAX(lm), NULL, 1 FROM {cut} GROUP BY page",
        ]
