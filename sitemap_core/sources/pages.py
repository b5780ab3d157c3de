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
(with ``urls > 0``) whose numbers lie in ``[first, stop)``, in ascending order (a list,
or an iterator read as the index is written: a database cursor), and a method
``stable_items(start, stop)`` returning the items of the window ``[page.start,
page.stop)`` that a page gave. Its ``len()`` and slices keep their meaning (ranks), for
code of the user's own.

It may also have ``stable_summary()``, returning a :class:`Summary` of all its pages
(one aggregate query of the facts): the index is then decided, and its validators
known, before any page is read, and its children stream from ``stable_pages`` as they
are written, so a request keeps nothing that grows with the pages. Without it the
summary is one walk of ``stable_pages``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any, NamedTuple, cast

from sitemap_core.errors import ConfigurationError
from sitemap_core.limits import MAX_URLS_PER_SITEMAP
from sitemap_core.model.values import lastmod_instant, normalise_lastmod

__all__ = [
    "NormalisedLastmod",
    "Page",
    "PageCheck",
    "Summary",
    "Summing",
    "checked_pages",
    "made_page",
    "ranked_page",
    "streamed_pages",
    "summarised",
]


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


#: A :class:`Page` of its six fields, in order, as one tuple: for the readers that make
#: one per database row (``Page(...)`` handles keywords and defaults, which costs more
#: than the rest of a row's reading).
made_page = cast(
    Callable[[tuple[int, int, int, int, Any, object]], Page], partial(tuple.__new__, Page)
)


class NormalisedLastmod(str):
    """A page's lastmod that its database wrote in the form :func:`normalise_lastmod`
    gives (see :mod:`sitemap_core.sources.sql.page_reads`): a page's check takes it as
    it is, instead of reading it again. Made by the library's SQL sources only."""

    __slots__ = ()


class Summary(NamedTuple):
    """What an index needs to know of a source's stable pages before it lists them.

    ``pages`` is how many pages list URLs, ``urls`` how many URLs they list in all,
    ``lastmod`` the newest of their lastmods (None when there is no page or when one of
    them has none: Last-Modified is only claimed when every child is dated; normalised
    text once the core has seen it), ``widest`` the widest window among them.
    """

    pages: int
    urls: int
    lastmod: Any = None
    widest: int = 0


def ranked_page(size: int, number: int, count: int) -> Page:
    """Page ``number`` of ``count`` entries split in pages of ``size`` by rank."""
    start = (number - 1) * size
    stop = min(start + size, count)
    return Page(number, start, stop, stop - start)


def checked_pages(pages: Iterable[Page], source: str, first: int, stop: int) -> list[Page]:
    """The stable pages a source gave for numbers ``[first, stop)``, checked (see
    :func:`streamed_pages`), as a list: for a few pages (one page, a site of one file)."""
    return list(streamed_pages(pages, source, first, stop))


def streamed_pages(pages: Iterable[Page], source: str, first: int, stop: int) -> Iterator[Page]:
    """The stable pages a source gives for numbers ``[first, stop)``, each checked by a
    :class:`PageCheck` as it comes."""
    check = PageCheck(source, first, stop)
    for page in pages:
        yield check(page)


class PageCheck:
    """Checks the stable pages a source gives for numbers ``[first, stop)``, one by one
    as they come (a stream is checked as it is written).

    A page outside the numbers asked, out of order, empty, over 50,000 URLs, or with
    a window narrower than its URLs is the source's error, named here
    (:class:`ConfigurationError`) when it is met, never a silently wrong index;
    lastmods are normalised as any lastmod is.
    """

    def __init__(self, source: str, first: int, stop: int) -> None:
        self.source = source
        self.first = first
        self.stop = stop
        self.previous = first - 1

    def __call__(self, page: Page) -> Page:
        """``page`` checked, its lastmod normalised."""
        if not isinstance(page, Page):
            raise ConfigurationError(f"stable_pages() of source {self.source!r} gave {page!r}")
        number, start, end, urls, lastmod, _ = page
        if not self.previous < number < self.stop:
            raise ConfigurationError(
                f"stable_pages({self.first}, {self.stop}) of source {self.source!r} gave"
                f" page {number} out of order or outside the numbers asked"
            )
        if not 0 < urls <= MAX_URLS_PER_SITEMAP or urls > end - start:
            raise ConfigurationError(
                f"page {number} of source {self.source!r} lists {urls} URLs in the"
                f" window [{start}, {end}): a page lists 1 to 50,000, at most"
                " its window's width (a key below 0 or a changed page width is the usual"
                " cause: install the page facts again)"
            )
        self.previous = number
        if lastmod is None or type(lastmod) is NormalisedLastmod:
            return page
        return Page(number, start, end, urls, normalise_lastmod(lastmod), page.version)


class Summing:
    """The :class:`Summary` of checked pages added one by one, keeping none of them."""

    def __init__(self) -> None:
        self.pages = self.urls = self.widest = 0
        self.undated = False
        self.newest: tuple[Any, str] | None = None

    def add(self, page: Page) -> None:
        """Count ``page`` in."""
        self.pages += 1
        self.urls += page.urls
        self.widest = max(self.widest, page.stop - page.start)
        if page.lastmod is None:
            self.undated = True
            return
        instant = lastmod_instant(page.lastmod)
        if self.newest is None or instant > self.newest[0]:
            self.newest = (instant, page.lastmod)

    def summary(self) -> Summary:
        """What was added, summed up."""
        lastmod = None if self.undated or self.newest is None else self.newest[1]
        return Summary(self.pages, self.urls, lastmod, self.widest)


def summarised(pages: Iterable[Page]) -> Summary:
    """The :class:`Summary` of checked ``pages``, in one walk that keeps none of them."""
    summing = Summing()
    for page in pages:
        summing.add(page)
    return summing.summary()
