"""The statements of :class:`~sitemap_core.sources.sql.sqlite.SQLiteSource`'s pages by rank.

:class:`SQLiteStatements` writes, once per source, the SQL text that the plans of
:class:`~sitemap_core.sources.sql.ranks.RankPlans` run on sqlite3 (see
:mod:`sitemap_core.sources.sql.ranks` for what a version remembers), and
:func:`run` drives a plan on a connection.

A ``where`` filter is a trusted SQL fragment with ``?`` placeholders, its values in
``where_params``; sqlite3 binds either names or positions in one statement, not both,
so each statement is written with positional placeholders and keeps the order of the
values it binds (:class:`Sql`).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

from sitemap_core.errors import ConfigurationError
from sitemap_core.sources.sql.names import quoted
from sitemap_core.sources.sql.ranks import Plan, RankPlans, first_row, started

__all__ = ["Mode", "SQLiteStatements", "Sql", "run"]

Mode = Literal["offset", "seek"]

#: A slot of a statement template: ``{where}`` (" WHERE (condition)", or nothing),
#: ``{and}`` ("(condition) AND ", or nothing) or ``{name}``, a named parameter.
_SLOT = re.compile(r"\{([a-z]+)\}")


class Sql(NamedTuple):
    """One statement: its text, with ``?`` placeholders, and what each one binds in
    order: a named parameter of the plan, or ``"where"`` for the filter's values."""

    text: str
    slots: tuple[str, ...]

    @classmethod
    def of(cls, template: str, where: str | None) -> Sql:
        """The statement of ``template``, its slots filled for the filter ``where``."""
        slots: list[str] = []

        def fill(match: re.Match[str]) -> str:
            slot = match.group(1)
            if slot in ("where", "and"):
                if where is None:
                    return ""
                slots.append("where")
                return f" WHERE ({where})" if slot == "where" else f"({where}) AND "
            slots.append(slot)
            return "?"

        return cls(_SLOT.sub(fill, template), tuple(slots))

    def bind(self, params: dict[str, Any], where_params: Sequence[Any]) -> tuple[Any, ...]:
        """The values of the placeholders, in order."""
        values: list[Any] = []
        for slot in self.slots:
            if slot == "where":
                values.extend(where_params)
            else:
                values.append(params[slot])
        return tuple(values)


def run(conn: sqlite3.Connection, plan: Plan, where_params: Sequence[Any]) -> Any:
    """Drive ``plan`` on ``conn``; a failed statement is thrown back into the plan."""
    done, step = started(plan)
    while not done:
        sql, params = step
        try:
            rows = conn.execute(sql.text, sql.bind(params, where_params)).fetchall()
        except sqlite3.Error as exc:
            done, step = _thrown(plan, exc)
            continue
        done, step = _sent(plan, rows)
    return step


def _sent(plan: Plan, rows: list[Any]) -> tuple[bool, Any]:
    try:
        return False, plan.send(rows)
    except StopIteration as finished:
        return True, finished.value


def _thrown(plan: Plan, error: Exception) -> tuple[bool, Any]:
    try:
        return False, plan.throw(error)
    except StopIteration as finished:
        return True, finished.value


class SQLiteStatements(RankPlans):
    """The statements of one :class:`SQLiteSource`, written once.

    ``mode="seek"`` finds a page's first key (skipping over the key alone, or
    remembered per version) and reads the rows by a range search from it;
    ``mode="offset"`` reads them with ``LIMIT ? OFFSET ?``.
    """

    def __init__(
        self,
        table: str,
        key: str,
        columns: Sequence[str],
        lastmod: str | None,
        where: str | None,
        mode: Mode,
        version_table: str | None = None,
        change_log: str | None = None,
    ) -> None:
        t, k = quoted("table", table), quoted("key", key)
        selected = ", ".join(quoted("column", column) for column in columns)
        self.seek = mode == "seek"
        self.log = change_log

        def sql(template: str) -> Sql:
            return Sql.of(template, where)

        self.count = sql(f"SELECT COUNT(*) FROM {t}{{where}}")
        self.anchor = sql(f"SELECT {k} FROM {t}{{where}} ORDER BY {k} LIMIT 1 OFFSET {{start}}")
        from_anchor = f"FROM {t} WHERE {{and}}{k} >= {{anchor}} ORDER BY {k}"
        self.rows = sql(f"SELECT {selected} {from_anchor} LIMIT {{n}}")
        self.rows_open = sql(f"SELECT {selected} {from_anchor}")
        skipped = self._skipped(t, k, selected)
        self.rows_skip = sql(f"{skipped} LIMIT {{n}}" + ("" if self.seek else " OFFSET {start}"))
        # LIMIT -1 is SQLite's "no limit".
        self.rows_skip_open = sql(skipped + ("" if self.seek else " LIMIT -1 OFFSET {start}"))
        # Three scalar subqueries rather than one SELECT of three aggregates: SQLite
        # answers a lone MAX() from an index in O(log n), which it cannot do for a MAX()
        # sharing its SELECT with COUNT(*).
        newest = "NULL"
        if lastmod is not None:
            newest = f"(SELECT MAX({quoted('lastmod', lastmod)}) FROM {t}{{where}})"
        self.fallback = sql(
            f"SELECT (SELECT COUNT(*) FROM {t}{{where}}), (SELECT MAX({k}) FROM {t}{{where}}),"
            f" {newest}"
        )
        self.version, self.log_exists = _version_reads(version_table, change_log)
        self.recent: Sql | None = None
        if lastmod is not None:
            self._dated(t, k, selected, quoted("lastmod", lastmod), where)

    def _skipped(self, t: str, k: str, selected: str) -> str:
        # The rows from a rank without a known key: from the key at that rank (a scalar
        # subquery that skips over the key alone), or by OFFSET.
        if not self.seek:
            return f"SELECT {selected} FROM {t}{{where}} ORDER BY {k}"
        first = f"(SELECT {k} FROM {t}{{where}} ORDER BY {k} LIMIT 1 OFFSET {{start}})"
        return f"SELECT {selected} FROM {t} WHERE {{and}}{k} >= {first} ORDER BY {k}"

    def _dated(self, t: str, k: str, selected: str, lm: str, where: str | None) -> None:
        # The statements that need a lastmod column.
        def sql(template: str) -> Sql:
            return Sql.of(template, where)

        # The feed's most recent changes: one query, served by an index on the lastmod
        # column when there is one (ISO text and SQLite's own date texts sort as their
        # instants when they share an offset, as one column's values do).
        self.recent = sql(
            f"SELECT {selected} FROM {t} WHERE {{and}}{lm} IS NOT NULL ORDER BY {lm} DESC"
            " LIMIT {n}"
        )
        # No date when a row of the range has none: Last-Modified (and an index child's
        # lastmod) is only claimed when every entry is dated.
        dated = f"CASE WHEN COUNT({lm}) = COUNT(*) THEN MAX({lm}) END"
        ranked = self._skipped(t, k, f"{lm}") + " LIMIT {n}"
        self.newest_skip = sql(
            f"SELECT {dated} FROM ({ranked}{'' if self.seek else ' OFFSET {start}'})"
        )
        # A range from its first key: its rows, dated rows, newest date and last key,
        # then the key after that one (the next page's first: one step on the key).
        self.read = sql(
            "WITH sitemap_range AS (SELECT COUNT(*) AS sitemap_rows,"
            " COUNT(sitemap_lastmod) AS sitemap_dated, MAX(sitemap_lastmod) AS sitemap_top,"
            " MAX(sitemap_key) AS sitemap_last"
            f" FROM (SELECT {k} AS sitemap_key, {lm} AS sitemap_lastmod FROM {t}"
            f" WHERE {{and}}{k} >= {{anchor}} ORDER BY {k} LIMIT {{n}}))"
            " SELECT sitemap_rows, sitemap_dated, sitemap_top,"
            f" (SELECT {k} FROM {t} WHERE {{and}}{k} > sitemap_last ORDER BY {k} LIMIT 1)"
            " FROM sitemap_range"
        )

    def version_plan(self) -> Plan:
        """The table's version: its version table's, or its change log's counter."""
        if self.log is None:
            return (yield from super().version_plan())
        try:
            row = first_row((yield self.version, {"log": self.log}))
        except sqlite3.OperationalError as exc:
            # No AUTOINCREMENT table at all: no sqlite_sequence either.
            if "sqlite_sequence" not in str(exc):
                raise
            row = None
        if row is not None:
            return row[0]
        # Nothing logged yet: a log table that is not there is an error, not a version
        # 0 that never moves.
        if not (yield self.log_exists, {"log": self.log}):
            raise ConfigurationError(
                f"change log table {self.log!r} does not exist; create it with install_change_log()"
            )
        return 0


def _version_reads(version_table: str | None, change_log: str | None) -> tuple[Any, Any]:
    # The version read, and (change log) the look for the log table.
    if change_log is not None:
        quoted("change_log", change_log)
        # The AUTOINCREMENT counter: monotonic, and still there once the log is pruned
        # (names compare case-insensitively in SQL).
        return (
            Sql.of("SELECT seq FROM sqlite_sequence WHERE name = {log} COLLATE NOCASE", None),
            Sql.of(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = {log} COLLATE NOCASE",
                None,
            ),
        )
    if version_table is not None:
        return Sql.of(f"SELECT version FROM {quoted('version_table', version_table)}", None), None
    return None, None
