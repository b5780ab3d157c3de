"""Date buckets on a date column: a page per month of a table's date, split when full.

``install_page_facts(..., month_buckets="published")`` pages a table by the month of
its date column (a blog's ``published``, say) whatever its key (an integer id, a
UUID): rows are ordered by **(date, key)**, the order of the index on ``(published,
id)`` that the documentation asks for, so a page's rows are one contiguous range of
that index, read by one range search, however large its month. Stored boundaries
(see :mod:`sitemap_core.sources.sql.bounds`) cut that order: the table
``<facts>_bounds`` holds, per page, its lowest position ``(low_at, low)`` and the
lowest position above it ``(high_at, high)`` (NULL ``high_at``: no upper bound). A
month's first page starts below every row of the month and above every row before
it (see below), so:

* the first row of a new month starts a page numbered after the last, cut from the
  range that holds the month's start, which holds no row of that month or after it:
  no row moves, no other page changes;
* a full month splits within itself, at the middle of the full page's rows;
* an ``UPDATE`` that moves a row's date to another month moves it from its page to a
  page of that month: exactly those two pages change;
* a listed row needs a date: a NULL (on SQLite, also a date that is not ISO text,
  ``YYYY-MM-DD...``) is refused, at installation (naming the column) and by the
  triggers (an integrity error naming it), since it has no month to be listed in; a
  ``where`` condition may leave such rows out (drafts).

On SQLite dates are ISO text, a month is its first seven characters and a month's
first page starts at the month's name with no key (``('2026-03', NULL)``), below every
date of the month. On PostgreSQL (``date``, ``timestamp`` or ``timestamptz``, whose
months are UTC's) it starts at the month's first instant and the key below every key
(``(2026-03-01 00:00+00, -2147483648)``), so a row at that instant is in its month;
the trigger functions loop over the months a statement's rows arrive in, and a full
page is cut in one pass (see :meth:`DateBounds.pg_split_function`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sitemap_core.sources.sql.bounds import (
    BUCKETS,
    RANGES,
    StoredBounds,
    bounds_table,
    dated_column,
    dated_kind,
    pieces_sql,
)
from sitemap_core.sources.sql.names import double_quoted, quoted


def split_facts(facts: str, layout: str) -> str:
    """The end of a split's statement (after its pieces ``z``): each piece's facts
    counted, the first the page split (its newest kept from going back, as the
    layout's summary keeps it), and the layout's summary told of the new pages."""
    return (
        f" up AS (INSERT INTO {facts} AS x (page, urls, newest, changed, version)"
        " SELECT CASE WHEN piece = 0 THEN split_page ELSE top + piece END, COUNT(*),"
        " MAX(lm), clock_timestamp(), 1 FROM z GROUP BY piece"
        " ON CONFLICT (page) DO UPDATE SET urls = excluded.urls,"
        " newest = GREATEST(x.newest, excluded.newest),"
        " changed = GREATEST(x.changed, excluded.changed), version = x.version + 1"
        " RETURNING x.changed)"
        f" UPDATE {layout} SET pages = pages + (SELECT COUNT(*) - 1 FROM up),"
        " changed = GREATEST(changed, (SELECT MAX(changed) FROM up))"
    )


__all__ = ["ISO", "DateBounds", "bounds_of"]

#: An ISO date's form as a GLOB: a listed row's date must have it.
ISO = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*"


def quoted_text(value: str) -> str:
    """``value`` as an SQL string literal."""
    return "'" + value.replace("'", "''") + "'"


def bounds_of(
    kind: str, table: str, key: str, facts: str, lastmod: str | None, condition: str
) -> StoredBounds | DateBounds | None:
    """The stored boundaries (or date buckets) of the kind of pages ``kind`` of the
    page facts ``facts`` of ``table`` by ``key`` (plain names); None for ranges of
    integer keys, which need none."""
    if kind == RANGES:
        return None
    date = dated_column(kind)
    if date is not None:
        return DateBounds.of(table, key, date, facts, lastmod, condition)
    return StoredBounds.of(table, key, facts, lastmod, condition, BUCKETS[kind])


@dataclass(frozen=True)
class DateBounds:
    """The names of one installation of date buckets on a column, and its SQL.

    ``table``, ``key``, ``date``, ``facts``, ``layout`` and ``bounds`` are quoted names;
    ``column`` the plain name of the date column; ``lastmod`` the quoted lastmod column
    (None: none); ``condition`` the SQL condition the listed rows hold for (``""``:
    all).
    """

    table: str
    key: str
    date: str
    column: str
    facts: str
    layout: str
    bounds: str
    lastmod: str | None = None
    condition: str = ""
    #: The dialect's calendar, as SQL templates: a date ``{d}``'s month (``YYYY-MM``
    #: text), a month ``{m}``'s start, the key below every key, a date above every
    #: date, whether a date ``{d}`` has no month. SQLite's by default: ISO text dates,
    #: whose month's name sorts below its dates (so no key is needed below them).
    month_sql: str = "substr({d}, 1, 7)"
    start_sql: str = "{m}"
    first_key: str = "NULL"
    top: str = "'~'"
    undated_sql: str = f"({{d}} IS NULL OR typeof({{d}}) <> 'text' OR {{d}} NOT GLOB '{ISO}')"
    #: Whether a page's range is also bounded on the date alone (MySQL, whose optimizer
    #: reads a range of the index on (date, key) only from bounds on its first column:
    #: without them each page scanned the table).
    date_range: bool = False

    @classmethod
    def of(
        cls,
        table: str,
        key: str,
        column: str,
        facts: str,
        lastmod: str | None = None,
        condition: str = "",
        quote: Callable[[str], str] = double_quoted,
    ) -> DateBounds:
        """The date buckets on ``column`` of the page facts ``facts`` of ``table`` by
        ``key`` (plain names, quoted here by ``quote``, the dialect's)."""
        return cls(
            quoted("table", table, quote),
            quoted("key", key, quote),
            quoted("month_buckets", column, quote),
            column,
            quoted("facts", facts, quote),
            quoted("facts", f"{facts}_layout", quote),
            bounds_table(facts, quote),
            None if lastmod is None else quoted("lastmod", lastmod, quote),
            condition,
        )

    @property
    def kind(self) -> str:
        """The kind of pages these buckets make (see :func:`dated_kind`)."""
        return dated_kind(self.column)

    def position(self, alias: str) -> str:
        """The row ``alias``'s position in the pages' order: its date, then its key."""
        return f"{alias}.{self.date}, {alias}.{self.key}"

    def month(self, date: str) -> str:
        """The month of the date ``date`` (an SQL expression), as ``YYYY-MM`` text."""
        return self.month_sql.format(d=date)

    def first_low(self, month: str) -> tuple[str, str]:
        """The low of the first page of the month ``month`` (``YYYY-MM`` text, SQL):
        below every row of the month, above every row before it."""
        return self.start_sql.format(m=month), self.first_key

    def listed(self, alias: str) -> str:
        """`` AND (condition)`` for the rows of ``alias`` (``""`` without one)."""
        del alias  # the condition's columns are unqualified: they read on any alias
        return f" AND ({self.condition})" if self.condition else ""

    def undated(self, alias: str) -> str:
        """Whether the row ``alias`` has no month: a NULL date (on SQLite, also a date
        that is not ISO text)."""
        return self.undated_sql.format(d=f"{alias}.{self.date}")

    def refusal(self) -> str:
        """The message that refuses a listed row without a month."""
        return (
            f"month_buckets={self.column}: a listed row needs an ISO date"
            f" (YYYY-MM-DD...) in {self.column}, not NULL"
        )

    def guard(self, image: str, listed: str) -> str:
        """The trigger statement that refuses the row image ``image`` when it is
        listed (``listed``, SQL) and has no month."""
        return (
            f"SELECT RAISE(ABORT, {quoted_text(self.refusal())}) WHERE {listed}"
            f" AND {self.undated(image)}; "
        )

    def opening(self, image: str, listed: str) -> str:
        """SQLite: the trigger statements that refuse the row image ``image`` without
        a month and give its month its first page (see :meth:`opening_statements`),
        when it is listed (``listed``, SQL)."""
        statements = self.opening_statements(self.month(f"{image}.{self.date}"), listed)
        return self.guard(image, listed) + "".join(f"{statement}; " for statement in statements)

    def opening_statements(self, month: str, listed: str = "1 = 1") -> list[str]:
        """The statements that give the month ``month`` (SQL) its first page when it
        has none: numbered after the last, from the month's start up to the next
        page's low; the page below the month's start ends there (it holds no row of
        the month or after it, so no row moves)."""
        b = self.bounds
        at, key = self.first_low(month)
        low = f"({at}, {key})"
        nxt = f"FROM {b} AS n WHERE (n.low_at, n.low) > {low} ORDER BY n.low_at, n.low LIMIT 1"
        return [
            f"INSERT INTO {b} (page, low_at, low, high_at, high)"
            f" SELECT (SELECT COALESCE(MAX(page), -1) + 1 FROM {b}), {at}, {key},"
            f" (SELECT n.low_at {nxt}), (SELECT n.low {nxt}) WHERE {listed}"
            f" AND NOT EXISTS (SELECT 1 FROM {b} WHERE low_at = {at}"
            f" AND {self.is_key('low', key)})",
            f"UPDATE {b} SET high_at = {at}, high = {key} WHERE {listed} AND (high_at IS NULL"
            f" OR high_at <> {at} OR NOT {self.is_key('high', key)}) AND page ="
            f" (SELECT page FROM {b} WHERE (low_at, low) < {low}"
            " ORDER BY low_at DESC, low DESC LIMIT 1)",
        ]

    @staticmethod
    def is_key(column: str, key: str) -> str:
        """Whether the bound ``column`` is the key ``key`` (SQL; NULL on SQLite)."""
        return f"({column} IS NULL)" if key == "NULL" else f"({column} = {key})"

    def page_of(self, image: str) -> str:
        """The page of the row image ``image``: the page of the greatest low at or
        below its position (its month's first page at least)."""
        return (
            f"(SELECT page FROM {self.bounds} WHERE (low_at, low) <= ({self.position(image)})"
            " ORDER BY low_at DESC, low DESC LIMIT 1)"
        )

    def in_page(self, alias: str, page: str) -> str:
        """Whether the row ``alias`` lies in page ``page``'s range (a range of the
        index on (date, key); :attr:`top` above every date: no upper bound)."""
        at, b = self.position(alias), self.bounds
        low, high = "w.low_at", f"COALESCE(w.high_at, {self.top})"
        # Each bound is a subquery of the page's boundaries row, closed here.
        bound = f" FROM {b} AS w WHERE w.page = {page})"
        within = f"({at}) >= (SELECT {low}, w.low{bound} AND ({at}) < (SELECT {high}, w.high{bound}"
        if not self.date_range:
            return within
        date = f"{alias}.{self.date}"
        return f"{within} AND {date} >= (SELECT {low}{bound} AND {date} <= (SELECT {high}{bound}"

    def window_sql(self, selected: str, page: str) -> str:
        """The rows of page ``page`` (an SQL expression), ``selected``, in (date, key)
        order; ``{}`` stands for the condition a source appends (`` AND (...)``)."""
        return (
            f"SELECT {selected} FROM {self.table} AS s WHERE {self.in_page('s', page)}{{}}"
            f" ORDER BY {self.position('s')}"
        )

    def newest(self, alias: str) -> str:
        """The newest date of the rows of ``alias`` (SQL aggregate)."""
        return "NULL" if self.lastmod is None else f"MAX({alias}.{self.lastmod})"

    def pieces(self, width: int, where: str = "1 = 1") -> str:
        """The listed rows as ``d``, ``k``, ``lm``, ``part`` (their month) and the
        ``piece`` of their month each is in, numbered from 0 in (date, key) order: a
        month of no more than ``width`` rows is one piece (past months take few writes),
        a larger one pieces of about half ``width``; ``first`` marks each piece's
        first row."""
        lm = "NULL" if self.lastmod is None else f"s.{self.lastmod}"
        rows = (
            f"SELECT s.{self.date} AS d, s.{self.key} AS k, {lm} AS lm,"
            f" {self.month(f's.{self.date}')} AS part FROM {self.table} AS s"
            f" WHERE {where}{self.listed('s')}"
        )
        return pieces_sql("d, k, lm, part", rows, "d, k", width, bucketed=True)

    def recount(self, width: int) -> list[str]:
        """Statements that cut the listed rows into pages, months in order, and count
        their facts: each month's first page from the month's name."""
        cut = (
            f"(SELECT d, k, lm, part, piece, first, DENSE_RANK() OVER (ORDER BY part, piece)"
            f" - 1 AS page FROM ({self.pieces(width)}) AS pieces_) AS z"
        )
        b, f = self.bounds, self.facts
        at, key = self.first_low("part")
        return [
            f"DELETE FROM {f}",
            f"DELETE FROM {b}",
            f"INSERT INTO {b} (page, low_at, low, high_at, high) SELECT page,"
            f" CASE WHEN piece = 0 THEN {at} ELSE d END, CASE WHEN piece = 0 THEN {key} ELSE k"
            f" END, NULL, NULL FROM {cut} WHERE first = 1",
            f"UPDATE {b} SET (high_at, high) = (SELECT n.low_at, n.low FROM {b} AS n"
            f" WHERE n.page = {b}.page + 1)",
            f"INSERT INTO {f} (page, urls, newest, changed, version)"
            f" SELECT page, COUNT(*), MAX(lm), NULL, 1 FROM {cut} GROUP BY page",
        ]

    def split_body(self, now: str) -> str:
        """The trigger statements that cut page ``NEW.page`` (of ``NEW.urls`` rows, all
        of one month) in two: the upper half of its rows, in (date, key) order, to a
        new page after the last; ``now`` is the time of the write (SQL)."""
        b, f, t = self.bounds, self.facts, self.table
        new = f"(SELECT MAX(page) FROM {b})"
        rows = f"{t} AS s WHERE {self.in_page('s', 'NEW.page')}{self.listed('s')}"
        middle = (
            f"SELECT s.{self.date} AS d, s.{self.key} AS k FROM {rows}"
            f" ORDER BY {self.position('s')} LIMIT 1 OFFSET (NEW.urls + 1) / 2"
        )
        newest = "NULL" if self.lastmod is None else f"(SELECT MAX(s.{self.lastmod}) FROM {rows})"
        return (
            f"INSERT INTO {b} (page, low_at, low, high_at, high) SELECT {new} + 1, m.d, m.k,"
            f" o.high_at, o.high FROM ({middle}) AS m,"
            f" (SELECT high_at, high FROM {b} WHERE page = NEW.page) AS o;"
            f" UPDATE {b} SET (high_at, high) = (SELECT low_at, low FROM {b} WHERE page = {new})"
            " WHERE page = NEW.page;"
            f" INSERT INTO {f} (page, urls, newest, changed, version)"
            f" SELECT {new}, COUNT(*), {self.newest('s')}, {now}, 1 FROM {t} AS s"
            f" WHERE {self.in_page('s', new)}{self.listed('s')};"
            f" UPDATE {f} SET urls = NEW.urls - (SELECT urls FROM {f} WHERE page = {new}),"
            f" newest = {newest}, changed = MAX({now}, COALESCE(changed, '')),"
            " version = version + 1 WHERE page = NEW.page;"
        )

    def pg_opening(self, arrived: str) -> str:
        """PostgreSQL: the trigger function's statements that refuse arrived rows
        (``arrived``: a FROM clause of rows ``r``) without a month, then give each of
        their months its first page (see :meth:`opening_statements`)."""
        rows = f"(SELECT r.* FROM {arrived}) AS r"
        statements = " ".join(f"{s};" for s in self.opening_statements("part_"))
        return (
            f"IF EXISTS (SELECT 1 FROM {rows} WHERE {self.undated('r')}) THEN RAISE EXCEPTION"
            f" USING ERRCODE = 'not_null_violation', MESSAGE = {quoted_text(self.refusal())};"
            f" END IF; FOR part_ IN SELECT DISTINCT {self.month(f'r.{self.date}')} FROM {rows}"
            f" LOOP {statements} END LOOP;"
        )

    def pg_split_function(self, function: str, width: int) -> str:
        """PostgreSQL: the function ``function(page)`` that cuts a page of one month
        over ``width`` rows into pieces of about half ``width``, in (date, key) order:
        the first stays the page, the others are new pages after the last."""
        b, f = self.bounds, self.facts
        last = f"(SELECT MAX(page) FROM {b})"
        return (
            f"CREATE OR REPLACE FUNCTION {function}(split_page BIGINT) RETURNS void"
            " LANGUAGE plpgsql AS $$ DECLARE top BIGINT; BEGIN"
            f" top := {last};"
            f" WITH z AS ({self.pieces(width, self.in_page('s', 'split_page'))}),"
            f" cut AS (INSERT INTO {b} (page, low_at, low, high_at, high)"
            " SELECT top + piece, d, k, NULL, NULL FROM z WHERE piece > 0 AND first = 1),"
            f"{split_facts(f, self.layout)};"
            f" UPDATE {b} SET (high_at, high) = (SELECT o.high_at, o.high FROM {b} AS o"
            f" WHERE o.page = split_page) WHERE page = {last} AND page > top;"
            f" UPDATE {b} SET (high_at, high) = (SELECT nx.low_at, nx.low FROM {b} AS nx"
            f" WHERE nx.page = {b}.page + 1) WHERE page > top AND page < {last};"
            f" UPDATE {b} SET (high_at, high) = (SELECT nx.low_at, nx.low FROM {b} AS nx"
            " WHERE nx.page = top + 1) WHERE page = split_page; END $$"
        )
