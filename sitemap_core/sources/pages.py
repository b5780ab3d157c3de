"""Child pages, and the sources whose pages keep their URLs.

A source's entries are split into child pages, each served at
``/sitemap-<source>-<number>.xml``. By default the pages are ranks: page N holds
entries ``(N-1)*size`` to ``N*size`` of the source's order, which costs nothing to
know but moves every later page by one entry when a row is inserted or deleted
before the last page.

A source with **stable pages** decides its pages itself, from facts its database
keeps (see :func:`sitemap_core.sources.sql.sqlite.install_page_facts`): an entry stays
in its page until it is deleted, so a write changes that one page only, and the
index, a page's validators and a page's existence are each one small query. Such a
source has a method ``stable_pages(first, stop)`` returning the :class:`Page` objects
(with ``urls > 0``) whose numbers lie in ``[first, stop)``, in ascending order, and
a method ``stable_items(start, stop)`` returning the items of the window
``[page.start, page.stop)`` that a page gave. Its ``len()`` and slices keep their
meaning (ranks), for code of the user's own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from sitemap_core.errors import ConfigurationError
from sitemap_core.limits import MAX_URLS_PER_SITEMAP
from sitemap_core.model.values import normalise_lastmod

__all__ = ["Page", "checked_pages", "ranked_page"]


class Page(NamedTuple):
    """One child page of a source.

    ``number`` is its number in its URL (from 1); ``[start, stop)`` the window its
    items are read from (ranks for ranked pages, the source's own window, a range of
    keys say, for stable pages); ``urls`` how many entries it lists. A stable page
    also carries its ``lastmod`` (when its content last changed: a date, datetime or
    ISO text as the source gives it, normalised text once :func:`checked_pages` has
    seen it) and its ``version`` (a value that changes with every write to it), both
    from the database.
    """

    number: int
    start: int
    stop: int
    urls: int
    lastmod: Any = None
    version: object = None


def ranked_page(size: int, number: int, count: int) -> Page:
    """Page ``number`` of ``count`` entries split in pages of ``size`` by rank."""
    start = (number - 1) * size
    stop = min(start + size, count)
    return Page(number, start, stop, stop - start)


def checked_pages(pages: Iterable[Page], source: str, first: int, stop: int) -> list[Page]:
    """The stable pages a source gave for numbers ``[first, stop)``, checked.

    A page outside the numbers asked, out of order, empty, over 50,000 URLs, or with
    a window narrower than its URLs is the source's error, named here
    (:class:`ConfigurationError`), never a silently wrong index; lastmods are
    normalised as any lastmod is.
    """
    checked: list[Page] = []
    previous = first - 1
    for page in pages:
        if not isinstance(page, Page):
            raise ConfigurationError(f"stable_pages() of source {source!r} gave {page!r}")
        if not previous < page.number < stop:
            raise ConfigurationError(
                f"stable_pages({first}, {stop}) of source {source!r} gave page"
                f" {page.number} out of order or outside the numbers asked"
            )
        if not 0 < page.urls <= min(MAX_URLS_PER_SITEMAP, page.stop - page.start):
            raise ConfigurationError(
                f"page {page.number} of source {source!r} lists {page.urls} URLs in the"
                f" window [{page.start}, {page.stop}): a page lists 1 to 50,000, at most"
                " its window's width (a key below 0 or a changed page width is the usual"
                " cause: install the page facts again)"
            )
        if page.lastmod is not None:
            lastmod = normalise_lastmod(page.lastmod)
            page = Page(page.number, page.start, page.stop, page.urls, lastmod, page.version)
        checked.append(page)
        previous = page.number
    return checked
