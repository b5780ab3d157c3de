"""News sections: the rules Google sets for news sitemaps, kept where a user asks.

A source registered with ``news=True`` is a news section:

* at most 1,000 ``<url>`` per sitemap file (:data:`~sitemap_core.limits.MAX_NEWS_URLS`):
  its pages hold 1,000 entries (or fewer, if asked), so more articles become more
  news sitemaps, all listed in the index;
* every entry carries ``news=`` (:class:`~sitemap_core.model.news.News`): a plain URL in a
  news sitemap is a mistake, and an error names it;
* only articles of the last two days (:data:`NEWS_WINDOW`): the source selects them,
  with :func:`news_cutoff` in its query, and an older one is an error naming it. An
  article that ages out between the count and the read, or while a page is cached,
  is not: :data:`NEWS_GRACE` is allowed on top of the window, and a news section's
  fingerprint changes every hour so that no cached page outlives it for long. (Its
  Last-Modified does not change as articles age out: a client revalidating with
  ``If-Modified-Since`` alone may keep a page an hour longer; ETags are exact.)
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Final

from sitemap_core.errors import InvalidEntryError
from sitemap_core.model.entries import Entry

__all__ = ["NEWS_GRACE", "NEWS_WINDOW", "check_news", "news_cutoff", "news_epoch"]

#: How old an article of a news sitemap may be (Google: published in the last 2 days).
NEWS_WINDOW: Final = timedelta(days=2)

#: Tolerated on top of the window: the time between a source's query and the check,
#: and the life of a cached page (see :func:`news_epoch`).
NEWS_GRACE: Final = timedelta(hours=1)


def news_cutoff(now: datetime | None = None) -> datetime:
    """The oldest publication time a news section should select (aware, UTC).

    Use it in the source's query, formatted as the column stores dates so that the
    comparison is right: SQLite's ``CURRENT_TIMESTAMP`` text is
    ``news_cutoff().strftime("%Y-%m-%d %H:%M:%S")`` (``isoformat()`` would put a
    ``T`` where the column has a space, and text comparison would then drop the
    articles of the cutoff day).
    """
    return (now or datetime.now(UTC)) - NEWS_WINDOW


def news_epoch(now: datetime | None = None) -> int:
    """The current hour, as a number: part of a news section's fingerprint, so that a
    cached page or an ETag is renewed at least hourly as articles age out."""
    moment = now or datetime.now(UTC)
    return int(moment.timestamp()) // 3600


def check_news(batch: Iterable[Entry], source: str, now: datetime | None = None) -> None:
    """Refuse an entry of a news section without ``news=`` or older than the window."""
    oldest = (now or datetime.now(UTC)) - NEWS_WINDOW - NEWS_GRACE
    for entry in batch:
        news = entry.news
        if news is None:
            raise InvalidEntryError(
                "news",
                entry.loc,
                "is in a news section, whose entries need news=News(...)",
                source,
            )
        published = news.published
        if len(news.publication_date) == 10:
            # A date alone: the article may be from any time of that day (UTC).
            published += timedelta(days=1)
        if published < oldest:
            raise InvalidEntryError(
                "news.publication_date",
                news.publication_date,
                f"is older than the two days a news sitemap may list (entry {entry.loc});"
                " select articles published since news_cutoff()",
                source,
            )
