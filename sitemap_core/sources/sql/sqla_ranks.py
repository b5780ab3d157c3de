"""The statements of the SQLAlchemy sources' pages by rank.

:class:`RankStatements` builds, once per source, the SQLAlchemy statements that the
plans of :class:`~sitemap_core.sources.sql.ranks.RankPlans` run (see
:mod:`sitemap_core.sources.sql.ranks` for what a version remembers), and the
function that makes an item of a row.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    FromClause,
    Select,
    SelectBase,
    bindparam,
    case,
    column,
    func,
    select,
    table,
)

from sitemap_core.errors import ConfigurationError
from sitemap_core.sources.base import Item
from sitemap_core.sources.sql.names import IDENTIFIER
from sitemap_core.sources.sql.ranks import RankPlans

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def plain_name(kind: str, value: object) -> str:
    """``value`` if it is a plain identifier; names in trigger DDL must be."""
    if not isinstance(value, str) or not IDENTIFIER.fullmatch(value):
        raise ConfigurationError(
            f"{kind} {value!r} is not a plain SQL identifier ([A-Za-z_][A-Za-z0-9_]*)"
        )
    return value


def builder(build: Callable[[Any], Item] | str, lastmod: ColumnElement[Any] | None) -> Any:
    """``build`` itself, or a function making a tuple row from a ``{column}`` template."""
    if callable(build):
        return build
    if not isinstance(build, str) or not _PLACEHOLDER.search(build):
        raise ConfigurationError(
            "build must be a callable (row -> entry) or a loc template naming columns,"
            " like 'https://example.com/posts/{slug}'"
        )
    template = build
    date = None if lastmod is None else lastmod.key

    def from_template(row: Any) -> Item:
        values = row._mapping
        # A tuple row: validated and written in one pass (sitemap_core.model.rows).
        return (template.format_map(values), None if date is None else values[date])

    return from_template


def _from_clause(source: FromClause | SelectBase) -> FromClause:
    if isinstance(source, SelectBase):
        source = source.subquery("sitemap_rows")
    if not isinstance(source, FromClause):
        raise ConfigurationError("table must be a SQLAlchemy Table, FromClause or Select")
    return source


def _column(frm: FromClause, kind: str, given: str | ColumnElement[Any]) -> ColumnElement[Any]:
    name = given if isinstance(given, str) else getattr(given, "key", None)
    try:
        return frm.c[name]  # type: ignore[index]
    except (KeyError, TypeError):
        raise ConfigurationError(f"{kind} {given!r} is not a column of {frm}") from None


def _version_read(version_table: str | None, change_log: str | None) -> Any:
    """The one-row read of the version, or None (unversioned)."""
    if version_table is not None and change_log is not None:
        raise ConfigurationError("give version_table or change_log, not both")
    if change_log is not None:
        counter = f"{plain_name('change_log', change_log)}_version"
    elif version_table is not None:
        counter = plain_name("version_table", version_table)
    else:
        return None
    return select(column("version")).select_from(table(counter, column("version")))


class RankStatements(RankPlans):
    """The statements of a source paged by rank, built once (its plans: RankPlans).

    Offsets and limits are bound parameters, so every statement compiles once
    (SQLAlchemy's compiled cache) and only values travel per call.
    """

    def __init__(
        self,
        source: FromClause | SelectBase,
        key: str | ColumnElement[Any],
        build: Callable[[Any], Item] | str,
        columns: Sequence[str | ColumnElement[Any]] | None,
        lastmod: str | ColumnElement[Any] | None,
        where: ColumnElement[bool] | None,
        version_table: str | None = None,
        change_log: str | None = None,
    ) -> None:
        frm = _from_clause(source)
        self.version = _version_read(version_table, change_log)
        k = _column(frm, "key", key)
        lm = None if lastmod is None else _column(frm, "lastmod", lastmod)
        selected: list[ColumnElement[Any]] = (
            list(frm.c) if columns is None else [_column(frm, "column", c) for c in columns]
        )
        if not selected:
            raise ConfigurationError("columns must name at least one column")
        self.build = builder(build, lm)
        self._where = where
        self._key = k
        # Any: Select's type parameters differ between SQLAlchemy 2.0 and 2.1.
        anchor: Any = bindparam("anchor")
        n, start = bindparam("n", type_=BigInteger), bindparam("start", type_=BigInteger)
        self.count = self._filtered(select(func.count()).select_from(frm))
        self.anchor = self._filtered(select(k)).order_by(k).offset(start).limit(1)
        rows = self._filtered(select(*selected)).order_by(k)
        self.rows, self.rows_open = rows.where(k >= anchor).limit(n), rows.where(k >= anchor)
        # Unversioned: nothing to remember a page's first key in, so it is a scalar
        # subquery of the same statement (one round trip).
        skipped = self._filtered(select(k)).order_by(k).offset(start).limit(1).scalar_subquery()
        self.rows_skip, self.rows_skip_open = (
            rows.where(k >= skipped).limit(n),
            rows.where(k >= skipped),
        )
        # A stable page: the rows of a range of keys (see sqla_pages).
        low, high = bindparam("low", type_=BigInteger), bindparam("high", type_=BigInteger)
        self.window = select(*selected).where(k >= low, k < high).order_by(k)
        self.recent = None if lm is None else self._recent(selected, lm)
        self.newest_skip = None if lm is None else self._newest_skip(lm, skipped)
        self.read = None if lm is None else self._read(lm)
        # Scalar subqueries, not one SELECT of three aggregates: a lone MAX() is an
        # O(log n) index look-up in most databases, a MAX() beside COUNT(*) is not.
        self.fallback = select(
            self.count.scalar_subquery(),
            self._filtered(select(func.max(k))).scalar_subquery(),
            *([] if lm is None else [self._filtered(select(func.max(lm))).scalar_subquery()]),
        )

    def _filtered(self, query: Select[Any]) -> Select[Any]:
        return query if self._where is None else query.where(self._where)

    def _recent(self, selected: list[ColumnElement[Any]], lm: ColumnElement[Any]) -> Any:
        query = self._filtered(select(*selected)).where(lm.is_not(None))
        return query.order_by(lm.desc()).limit(bindparam("n", type_=BigInteger))

    def _newest_skip(self, lm: ColumnElement[Any], skipped: Any) -> Any:
        # No date when a row of the range has none: Last-Modified (and an index
        # child's lastmod) is only claimed when every entry is dated.
        k, n = self._key, bindparam("n", type_=BigInteger)
        inner = (
            self._filtered(select(k.label("k"), lm.label("lm")))
            .where(k >= skipped)
            .order_by(k)
            .limit(n)
            .subquery()
        )
        return select(case((func.count(inner.c.lm) == func.count(), func.max(inner.c.lm))))

    def _read(self, lm: ColumnElement[Any]) -> Any:
        # A range from its first key: its rows, dated rows, newest date and last key,
        # then the key after that one (the next page's first: one step on the key).
        anchor: Any = bindparam("anchor")
        k, n = self._key, bindparam("n", type_=BigInteger)
        from_anchor = self._filtered(select(k.label("k"), lm.label("lm"))).where(k >= anchor)
        inner = from_anchor.order_by(k).limit(n).subquery()
        facts = select(
            func.count().label("sitemap_rows"),
            func.count(inner.c.lm).label("sitemap_dated"),
            func.max(inner.c.lm).label("sitemap_top"),
            func.max(inner.c.k).label("sitemap_last"),
        ).cte("sitemap_range")
        following = self._filtered(select(k)).where(k > facts.c.sitemap_last)
        return select(
            facts.c.sitemap_rows,
            facts.c.sitemap_dated,
            facts.c.sitemap_top,
            following.order_by(k).limit(1).scalar_subquery(),
        )
