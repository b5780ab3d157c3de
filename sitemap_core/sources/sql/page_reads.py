"""How an index reads the page facts: one aggregate, then one cursor over the pages.

The index of a source with page facts (see :mod:`.sqlite_pages`) is decided from a
:class:`~sitemap_core.sources.pages.Summary` of its pages, one aggregate query of the
facts (how many pages list rows, how many rows, the newest lastmod and last write, the
width), and its children stream from one query of the pages in order, read in batches
as the index is written: a request keeps nothing that grows with the table. Shared by
the SQL sources, which run the statements (named parameters, names quoted as the
dialect quotes them). On PostgreSQL the layout row keeps that summary itself (see
:func:`summary_sql`), read with the layout's version in one statement: the aggregate
is then read only from facts of an earlier version.

On PostgreSQL, when the dates are ``timestamp with time zone`` (the type the
documentation's tables use), each page's facts row keeps its lastmod as the text the
sitemap carries, in UTC (the later of its newest row and its last write; see
:func:`utc_text`), written with the row by the database, so an index reads a plain
text column: no datetime read or formatted per page, no text made per request. A
session in another time zone has each page's text written in its zone instead, per
page, as the page's own path writes its dates (see :func:`session_text`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from sitemap_core.sources.pages import NormalisedLastmod, Page, Summary, made_page
from sitemap_core.sources.sql.bounds import RANGES
from sitemap_core.sources.sql.names import double_quoted, quoted
from sitemap_core.sources.sql.sqlite_pages import PageFacts, later

__all__ = ["LASTMOD_TEXT", "PageReads", "StablePages", "session_text", "summary_sql", "utc_text"]

#: The type of the facts' dates for which PostgreSQL keeps the lastmod text.
_ZONED = "timestamp with time zone"
#: The facts' column of that text (PostgreSQL, zoned dates; see sqla_pages).
LASTMOD_TEXT = "lastmod_text"


def utc_text(newest: str, changed: str) -> str:
    """PostgreSQL: a page's lastmod text from its facts' ``newest`` and ``changed``
    (timestamptz, SQL): the later one as :func:`normalise_lastmod` writes it as a UTC
    datetime (the fraction only when there is one, ``+00:00``); an infinite newest as
    its name (``infinity``), which no sitemap date is, so that a page's check refuses
    it (see :func:`_page_of_text`) as the page's own path does."""
    in_utc = _iso(f"GREATEST({newest}, {changed}) AT TIME ZONE 'UTC'", "")
    return f"CASE WHEN NOT isfinite({newest}) THEN {newest}::text ELSE {in_utc} || '+00:00' END"


def session_text(newest: str, changed: str) -> str:
    """PostgreSQL: a page's lastmod text written per page, for facts without the kept
    text or a session not in UTC: what the page's own path writes of the datetime the
    driver reads, in the session's zone; an offset with seconds (a zone's local mean
    time before about 1940) in UTC, as :func:`normalise_lastmod` writes such a
    datetime, and an infinite newest as its name (see :func:`utc_text`)."""
    moment = f"GREATEST({newest}, {changed})"
    return (
        f"CASE WHEN NOT isfinite({newest}) OR extract(timezone FROM {moment})::int % 60 <> 0"
        f" THEN {utc_text(newest, changed)} ELSE {_iso(moment, 'TZH:TZM')} END"
    )


def _iso(moment: str, offset: str) -> str:
    # to_char of a moment (SQL) as isoformat() writes it: whole seconds, or six digits
    # of a fraction that is not zero, then ``offset``'s pattern.
    return f"replace(to_char({moment}, 'YYYY-MM-DD\"T\"HH24:MI:SS.US{offset}'), '.000000', '')"


#: The names of a session time zone that is UTC at every instant (lower case): the
#: kept text is then what the session's own text would be.
_UTC_ZONES = frozenset(
    f"{area}{name}"
    for area in ("", "etc/")
    for name in ("utc", "uct", "gmt", "gmt0", "gmt+0", "gmt-0", "universal", "zulu", "greenwich")
)


def _in_utc(zone: object) -> bool:
    # Whether current_setting('TimeZone') names a zone that is always UTC.
    return str(zone).lower() in _UTC_ZONES


def summary_sql(facts: str) -> str:
    """PostgreSQL: what the layout row keeps of the facts ``facts`` (see sqla_pages),
    counted from them: the pages that list rows, their rows, the newest date and write
    of every page (an emptied page's too: the index's lastmod never goes back), the
    listed pages without either."""
    return (
        "SELECT COUNT(*) FILTER (WHERE urls > 0), COALESCE(SUM(urls), 0), MAX(newest),"
        " MAX(changed), COUNT(*) FILTER (WHERE urls > 0 AND newest IS NULL AND changed IS NULL)"
        f" FROM {facts}"
    )


class StablePages:
    """What the core asks of a sync SQL source with page facts (see
    :mod:`sitemap_core.sources.pages`), answered by the source's own reads
    (``_stable_pages`` and ``_stable_summary``); without page facts, nothing, so that
    the core pages the source by rank."""

    _page_facts: PageFacts | None

    @property
    def stable_pages(self) -> Callable[[int, int], Iterable[Page]] | None:
        """With ``page_facts``: the stable pages numbered ``[first, stop)``, one page
        read at once, more streamed from a cursor; None without."""
        return None if self._page_facts is None else self._stable_pages

    @property
    def stable_summary(self) -> Callable[[], Summary] | None:
        """With ``page_facts``: the summary of every stable page, one aggregate query;
        None without."""
        return None if self._page_facts is None else self._stable_summary

    def _stable_pages(self, first: int, stop: int) -> Iterable[Page]:
        raise NotImplementedError

    def _stable_summary(self) -> Summary:
        raise NotImplementedError


class PageReads:
    """The statements that read the page facts ``facts`` for an index on ``dialect``,
    and what their rows mean."""

    def __init__(
        self, facts: str, dialect: str = "sqlite", quote: Callable[[str], str] = double_quoted
    ) -> None:
        # quote: the dialect's (backticks on MySQL).
        f, layout = (quoted("page_facts", name, quote) for name in (facts, f"{facts}_layout"))
        self._names = (f, layout)
        self._dialect = dialect
        # The type of the dates, asked with the summary (PostgreSQL only): the type of
        # the aggregate's value, which needs no look-up in the catalogue.
        # With it, whether the facts keep the lastmod text (facts of an earlier version
        # do not until install_page_facts() runs again; read from one row's JSON, which
        # needs no catalogue either).
        self._kept_text = (
            f"(SELECT (to_jsonb(k) -> '{LASTMOD_TEXT}') IS NOT NULL FROM {f} AS k LIMIT 1)"
        )
        zoned = (
            f", pg_typeof(MAX(newest))::text, {self._kept_text}, current_setting('TimeZone')"
            if dialect == "postgresql"
            else ""
        )
        #: The summary of the pages that list rows. The newest lastmod is the greater
        #: of the largest date and the latest write, as a page's own is; dates kept as
        #: text compare as text, exact while they share one form (as a column does).
        self.summary_sql = (
            "SELECT COUNT(*), COALESCE(SUM(urls), 0), MAX(newest), MAX(changed),"
            " COALESCE(SUM(CASE WHEN newest IS NULL AND changed IS NULL THEN 1 ELSE 0 END), 0),"
            f" (SELECT MAX(width) FROM {layout}){zoned} FROM {f} WHERE urls > 0"
        )
        #: The pages numbered [first, stop) that list rows, in order (parameters: see
        #: PageFacts.bounds), each with the layout's epoch, width and kind of pages.
        self.pages_sql = self._pages_sql(
            "l.epoch, l.width, l.kind, f.page, f.urls, f.newest, f.changed, f.version"
        )
        #: How a row of :attr:`pages_sql` becomes a page.
        self.page: Callable[[Any], Page] = _page
        #: PostgreSQL: the layout row as JSON, whatever columns the installed version
        #: gave it (the summary it keeps), with the session's zone and whether the
        #: facts keep each page's lastmod text, so that an index reads its validators
        #: and its summary in one statement; None elsewhere.
        self.layout_sql = (
            f"SELECT to_jsonb(l), current_setting('TimeZone'), {self._kept_text} FROM {layout} AS l"
            if dialect == "postgresql"
            else None
        )

    def layout(self, rows: list[Any]) -> tuple[list[Any], Summary | None]:
        """The rows of :attr:`layout_sql` as ``PageFacts.layout_sql`` gives them, and
        the summary the layout keeps (None: facts of an earlier version)."""
        if not rows:
            return rows, None
        fields, zone, kept_text = rows[0][:3]
        names = ("epoch", "version", "width", "condition", "kind")
        row = tuple(fields.get(name, "") for name in names)
        if fields.get("pages") is None:  # facts of an earlier version
            return [row], None
        if kept_text:  # zoned dates (facts of this version keep their text)
            self._zoned(_in_utc(zone))
        return [row], self._kept(fields)

    def _kept(self, fields: dict[str, Any]) -> Summary:
        # The layout's summary; its lastmod from JSON's texts of the dates (in the
        # session's zone), which the core normalises.
        lastmod = later(fields["newest"], fields["changed"])
        if not fields["pages"]:
            return Summary(0, 0)
        dated = None if fields["undated"] else lastmod
        return Summary(int(fields["pages"]), int(fields["urls"]), dated, int(fields["width"]))

    def _pages_sql(self, columns: str) -> str:
        f, layout = self._names
        return (
            f"SELECT {columns} FROM {f} AS f CROSS JOIN {layout} AS l"
            " WHERE f.page >= :low AND f.page < :high AND f.urls > 0 ORDER BY f.page"
        )

    def summary(self, row: Any) -> Summary:
        """The :class:`Summary` of the row of :attr:`summary_sql`; on PostgreSQL with
        zoned dates, the pages are read with their lastmod text from then on."""
        pages, urls, newest, changed, undated, width = row[:6]
        if row[6:7] == (_ZONED,):
            self._zoned(bool(row[7]) and _in_utc(row[8]))
        if not pages:
            return Summary(0, 0)
        lastmod = None if undated else later(newest, changed)
        return Summary(int(pages), int(urls), lastmod, int(width))

    def _zoned(self, kept: bool) -> None:
        # The dates are zoned: each page's lastmod is read as text from now on, in a
        # row of the page's own columns first, then the layout's (no column the page
        # does not need: each costs the driver a value per page). The kept text, in a
        # UTC session; else (facts of an earlier version, another zone) PostgreSQL
        # writes it per page in the session's zone, as the page's own path does.
        lastmod = f"f.{LASTMOD_TEXT}" if kept else session_text("f.newest", "f.changed")
        self.pages_sql = self._pages_sql(
            f"f.page, f.urls, {lastmod}, f.version, l.epoch, l.width, l.kind"
        )
        self.page = _page_of_text

    def pages(self, rows: Iterable[Any]) -> Iterator[Page]:
        """The pages of the rows of :attr:`pages_sql`, as the rows are read."""
        return map(self.page, rows)


def _page(row: Any) -> Page:
    # The page of a row of the dates themselves (the same page as PageFacts.pages
    # makes of its row).
    epoch, width, kind, page, urls, newest, changed, version = row
    start = _start(kind, page, width)
    version = (str(epoch), page, int(version))
    return made_page((page + 1, start, start + width, urls, later(newest, changed), version))


def _page_of_text(row: Any) -> Page:
    # The page of a row whose lastmod PostgreSQL wrote as the sitemap's text; its
    # driver gives the epoch as str and the numbers as int already. As _start, inline:
    # this runs once per child of an index.
    page, urls, lastmod, version, epoch, width, kind = row
    start = page * width + 1 if kind == RANGES else -(page + 1) * width
    return made_page(
        (
            page + 1,
            start,
            start + width,
            urls,
            # A kept text is in its normal form, unless its newest was infinite (its
            # name then, which the page's check refuses: every finite one ends in 0).
            lastmod if lastmod is None or lastmod[-1] != "0" else NormalisedLastmod(lastmod),
            (epoch, page, version),
        )
    )


def _start(kind: str, page: int, width: int) -> int:
    # The first key of page ``page``'s window, which is ``width`` keys wide (as
    # PageFacts.pages): page p of integer keys holds the keys p * width + 1 to
    # (p + 1) * width; a page of stored boundaries has a slot as wide, below 0 (see
    # sitemap_core.sources.sql.bounds).
    return page * width + 1 if kind == RANGES else -(page + 1) * width
