"""What ``sitemap check`` finds in a sitemap's entries that search engines distrust.

Rules read from the document alone, without fetching a listed URL: a ``<lastmod>`` in
the future (``lastmod-future``), news older than Google News reads
(``news-old``) or more news entries than one sitemap may hold (``news-count``), and
the image and video tags Google retired in 2022 (``image-retired``,
``video-retired``). :class:`EntryAudit` is fed by the document reader, element by
element, and forgets each entry when it ends.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Final

from sitemap_core.limits import MAX_NEWS_URLS
from sitemap_core.model.namespaces import IMAGE_NS, NEWS_NS, VIDEO_NS
from sitemap_core.sources.newsroom import NEWS_WINDOW

__all__ = ["EntryAudit", "parse_w3c"]

# Tags and attributes Google stopped reading on 2022-08-06 ("Spring cleaning: some
# sitemap extension tags are going away", Google Search Central, May 2022). Harmless,
# but dead weight in every entry: a warning, never an error.
_RETIRED_TAGS: Final = {
    f"{IMAGE_NS} caption": "image-retired",
    f"{IMAGE_NS} title": "image-retired",
    f"{IMAGE_NS} geo_location": "image-retired",
    f"{IMAGE_NS} license": "image-retired",
    f"{VIDEO_NS} category": "video-retired",
    f"{VIDEO_NS} gallery_loc": "video-retired",
    f"{VIDEO_NS} price": "video-retired",
    f"{VIDEO_NS} tvshow": "video-retired",
}
_PLAYER_LOC: Final = f"{VIDEO_NS} player_loc"
_RETIRED_PLAYER_ATTRIBUTES: Final = ("allow_embed", "autoplay")
_NEWS: Final = f"{NEWS_NS} news"
_PUBLICATION_DATE: Final = f"{NEWS_NS} publication_date"

# A clock a little ahead of the checker's is not a lie about the page: a date-time is
# in the future only past this slack; a date alone only once no zone on Earth has
# reached it (UTC+14).
_CLOCK_SLACK: Final = timedelta(minutes=5)
_EARLIEST_ZONE: Final = timedelta(hours=14)

#: Called with (rule, line, value, message) for each finding about the current entry.
Add = Callable[[str, int, str, str], None]


def parse_w3c(text: str) -> datetime | date | None:
    """A W3C datetime as an aware ``datetime``, a ``date`` when it has no time, or None."""
    try:
        found = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if "T" not in text:
        return found.date()
    return found if found.tzinfo is not None else None


class EntryAudit:
    """The no-fetch rules of one document, fed by the reader as its elements arrive.

    ``now`` is fixed for the run, so one document's entries are judged by one clock.
    """

    def __init__(self, add: Add, now: datetime | None = None) -> None:
        self._add = add
        self.now = now or datetime.now(UTC)
        self._news = 0
        self._collect = False
        self._text: list[str] = []
        self._line = 0

    def start(self, tag: str, attributes: dict[str, str], line: int) -> None:
        """An element inside an entry (an extension's, at any depth) starts."""
        rule = _RETIRED_TAGS.get(tag)
        if rule is not None:
            name = tag.rpartition(" ")[2]
            self._add(rule, line, name, f"<{name}> is ignored by Google since 2022")
        elif tag == _PLAYER_LOC:
            for attribute in _RETIRED_PLAYER_ATTRIBUTES:
                if attribute in attributes:
                    self._add(
                        "video-retired", line, attribute,
                        f"player_loc's {attribute} attribute is ignored by Google since 2022",
                    )  # fmt: skip
        elif tag == _NEWS:
            self._news += 1
            if self._news == MAX_NEWS_URLS + 1:
                self._add(
                    "news-count", line, str(MAX_NEWS_URLS),
                    f"more than {MAX_NEWS_URLS:,} news entries in one sitemap",
                )  # fmt: skip
        elif tag == _PUBLICATION_DATE:
            self._collect, self._line = True, line
            self._text.clear()

    def text(self, data: str) -> None:
        """Character data inside an entry."""
        if self._collect:
            self._text.append(data)

    def end(self, tag: str) -> None:
        """An element inside an entry ends."""
        if self._collect and tag == _PUBLICATION_DATE:
            self._collect = False
            self._published("".join(self._text), self._line)

    def lastmod(self, text: str, line: int) -> None:
        """A well-formed ``<lastmod>``: reported when it is in the future."""
        when = parse_w3c(text)
        if self._future(when):
            self._add("lastmod-future", line, text.strip(), "in the future")

    def _future(self, when: datetime | date | None) -> bool:
        if isinstance(when, datetime):
            return when > self.now + _CLOCK_SLACK
        if isinstance(when, date):
            return when > (self.now + _EARLIEST_ZONE).date()
        return False

    def _published(self, text: str, line: int) -> None:
        when = parse_w3c(text)
        if isinstance(when, date) and not isinstance(when, datetime):
            when = datetime(when.year, when.month, when.day, tzinfo=UTC)  # midnight UTC
        if when is not None and when < self.now - NEWS_WINDOW:
            self._add(
                "news-old", line, text.strip(),
                "published more than two days ago: Google News reads the last two days",
            )  # fmt: skip
