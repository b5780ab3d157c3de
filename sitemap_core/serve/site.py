"""The site: which document a path asks for, and the plan that produces it.

:meth:`Site.match` names the target of a path; :meth:`Site.plan` turns the target and
the sources' counts into a :class:`Plan`. Serving a request around these is
:mod:`sitemap_core.serve.flow`, run by a sync and an async driver.

Paths (relative to where the site is mounted):

* ``/robots.txt``
* ``/sitemap.xml`` (``/sitemap.txt``): every entry in one file while the site fits
  one page, otherwise (XML only) a ``<sitemapindex>`` of the child pages;
* ``/sitemap-<source>-<n>.xml`` (``.txt``): page ``n`` (1-based) of one source (by
  rank, or a stable page the source keeps: see :mod:`sitemap_core.sources.pages`);
* ``/sitemap-index-<n>.xml`` (n >= 2): part ``n`` of an index too long for one file
  (more than 50,000 children); ``/sitemap.xml`` is part 1, and robots.txt lists all;
* each of the ``.xml`` paths with ``.html``: the same document as a web page for
  people (see :mod:`sitemap_core.write.html`), unless the site is built with ``html=False``;
* each of these with ``.gz`` appended: the same document gzipped, as a file.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Generic, Literal, NamedTuple, Protocol, TypeAlias, TypeVar

from sitemap_core.errors import ConfigurationError, InvalidEntryError
from sitemap_core.limits import (
    MAX_NEWS_URLS,
    MAX_SITEMAP_BYTES,
    MAX_SITEMAPS_PER_INDEX,
    MAX_URLS_PER_SITEMAP,
)
from sitemap_core.memory.cache import PageCache
from sitemap_core.memory.known import Known
from sitemap_core.memory.recall import Recall
from sitemap_core.model.entries import Entry, normalise_url
from sitemap_core.model.hosts import BaseURL
from sitemap_core.model.rows import DeferredBatch, not_under
from sitemap_core.model.xmltext import escape_uri
from sitemap_core.serve.answers import Answers
from sitemap_core.serve.http import HTML, TEXT, XML
from sitemap_core.serve.indexnow_key import check_key, key_file_path
from sitemap_core.sources.base import BATCH_SIZE, Limits, check_name
from sitemap_core.sources.pages import Page, Summary, ranked_page
from sitemap_core.write.encoders import DocumentEncoder, IndexEncoder, TextEncoder, UrlsetEncoder
from sitemap_core.write.feed import (
    DEFAULT_FEED_SIZE,
    FEED_PATH,
    check_feed_max_days,
    check_feed_size,
)
from sitemap_core.write.html import HtmlEncoder, HtmlIndexEncoder, HtmlView
from sitemap_core.write.robots import (
    DEFAULT_RULES,
    robots_txt,
    sitemap_urls,
)

__all__ = [
    "BATCH_SIZE",
    "DEFAULT_CACHE_CONTROL",
    "NO_STABLE_PAGES",
    "PAGE_NAME",
    "Named",
    "Plan",
    "Run",
    "Site",
    "Stable",
    "Target",
    "check_complete",
    "check_extra_sitemaps",
    "check_index_size",
    "check_page_size",
    "index_part_path",
]

logger = logging.getLogger("sitemap_core")

Format = Literal["xml", "txt", "html", "atom"]

#: The stable pages of a request's sources, by source name (see :meth:`Site.plan`):
#: the pages themselves, or, for an index, their :class:`Summary` (they stream as the
#: index is written).
Stable: TypeAlias = Mapping[str, Sequence[Page] | Summary]

NO_STABLE_PAGES: Stable = {}


class Counted(NamedTuple):
    """What a request's sources said before its plan: their counts, and the pages of
    those with stable pages."""

    counts: Mapping[str, int]
    stable: Stable


ROBOTS_PATH = "/robots.txt"
_ROOT = re.compile(r"/sitemap\.(xml|txt|html)(\.gz)?")
# Page numbers are canonical (no leading zero) and bounded in length, so '007', '-1',
# 'abc' and a thousand digits are all simply unknown paths: 404, never 500.
_INDEX_PART = re.compile(r"/sitemap-index-([2-9]|[1-9][0-9]{1,17})\.(xml|html)(\.gz)?")
#: What names a child page in ``/sitemap-<page>.xml``: a source's name and a page
#: number (``index`` and a part number for the parts of a split index).
PAGE_NAME = r"[a-z0-9][a-z0-9_-]{0,63}-[1-9][0-9]{0,17}"
_PAGE = re.compile(r"/sitemap-([a-z0-9][a-z0-9_-]{0,63})-([1-9][0-9]{0,17})\.(xml|txt|html)(\.gz)?")

#: The default Cache-Control of sitemap documents: crawlers and CDNs may keep them an
#: hour, then revalidate (answered 304 while the ETag holds).
DEFAULT_CACHE_CONTROL = "public, max-age=3600, s-maxage=3600"

#: Bytes of a document that are not entries: declaration, root tags, namespaces.
DOCUMENT_OVERHEAD = 1_024

# Bytes of one <sitemap> element besides the escaped base URL: the tags, a lastmod of
# 32 characters, and the path (a 64-character source name and an 18-digit page).
_INDEX_ITEM_OVERHEAD = 200


class Named(Protocol):
    """What the site needs of a source: its name and limits. Pulling is the front's."""

    @property
    def name(self) -> str:
        """The source's name, as it appears in page URLs."""
        ...

    @property
    def limits(self) -> Limits:
        """How the source's entries split into pages."""
        ...


S = TypeVar("S", bound=Named)


@dataclass(frozen=True)
class Target:
    """What a path names: robots.txt, the root sitemap, page ``page`` of ``source``,
    (kind "index") part ``page`` of a split index, or the feed of recent changes."""

    kind: Literal["robots", "root", "page", "index", "feed", "indexnow"]
    fmt: Format = "xml"
    source: str = ""
    page: int = 0
    #: The path ends in ``.gz``: the gzipped document, served as a file.
    gz: bool = False

    @property
    def path(self) -> str:
        """The canonical path of the uncompressed document."""
        if self.kind == "robots":
            return ROBOTS_PATH
        if self.kind == "feed":
            return FEED_PATH
        if self.kind == "indexnow":
            return "/indexnow-key.txt"  # the key itself is no part of the path's name
        if self.kind == "root":
            return f"/sitemap.{self.fmt}"
        if self.kind == "index":
            return index_part_path(self.page, self.fmt)
        return f"/sitemap-{self.source}-{self.page}.{self.fmt}"


@dataclass(frozen=True)
class Run(Generic[S]):
    """Children of an index listed from a source's stable pages as they stream.

    The source's pages ``[skip, skip + take)`` (counted from 0 among those that list
    URLs) follow the plan's first ``at`` other children; a page's URL is ``prefix``,
    its number, ``suffix``. ``summary`` is what the source said of all its pages.
    """

    source: S
    skip: int
    take: int
    at: int
    prefix: str
    suffix: str
    summary: Summary


@dataclass
class Plan(Generic[S]):
    """Everything needed to stream one document, decided before the first byte."""

    kind: Literal["urlset", "index", "text"]
    slices: list[tuple[S, int, int]] = field(default_factory=list)
    #: For an index: each child page's range and URL (lastmods come in :meth:`settle`).
    child_ranges: list[tuple[S, int, int, str]] = field(default_factory=list)
    #: The stable pages among the ranges, by ``(source name, start, stop)``: their
    #: version and lastmod are known, and how many entries each lists.
    stable: dict[tuple[str, int, int], Page] = field(default_factory=dict)
    #: For an index: the children streamed from stable pages, among ``child_ranges``.
    runs: list[Run[S]] = field(default_factory=list)
    children: list[Entry] = field(default_factory=list)
    #: Every loc must start with this (the base URL and "/"), or None to allow any.
    origin: str | None = None
    #: For the HTML view of the document: its title and navigation.
    view: HtmlView | None = None

    def ranges(self) -> list[tuple[S, int, int]]:
        """The source ranges the document lists: its slices, or the index's children."""
        if self.kind == "index":
            return [(source, start, stop) for source, start, stop, _ in self.child_ranges]
        return list(self.slices)

    def settle(self, newest: list[str | None]) -> None:
        """Give the index's children their lastmods (the newest of each child page)."""
        if self.kind == "index":
            self.children = [
                Entry.made(loc, lastmod)
                for (_, _, _, loc), lastmod in zip(self.child_ranges, newest, strict=True)
            ]

    @property
    def content_type(self) -> str:
        """The Content-Type of the document."""
        if self.view is not None:
            return HTML
        return TEXT if self.kind == "text" else XML

    def encoder(self) -> DocumentEncoder:
        """A fresh encoder for this document kind."""
        if self.view is not None:
            if self.kind == "index":
                return HtmlIndexEncoder(self.view)
            return HtmlEncoder(self.view)
        if self.kind == "index":
            return IndexEncoder()
        return TextEncoder() if self.kind == "text" else UrlsetEncoder()

    def check(self, batch: list[Entry], source: str) -> None:
        """Refuse entries on another host than the site's (see :class:`Site`).

        A batch whose entries are not built yet (a
        :class:`~sitemap_core.model.rows.DeferredBatch`: tuple rows, an index's children)
        is given the origin instead, and refuses such an entry when it is built or
        written (in the same pass), before any of its bytes.
        """
        origin = self.origin
        if origin is None:
            return
        if isinstance(batch, DeferredBatch) and batch.rows is not None:
            batch.origin = origin
            return
        for entry in batch:
            if not entry.loc.startswith(origin):
                raise not_under(entry.loc, origin, source)


def check_page_size(page_size: object) -> int:
    """Return ``page_size`` if it is a whole number from 1 to 50,000, else raise."""
    return _check_size(page_size, "page size", MAX_URLS_PER_SITEMAP)


def check_index_size(index_size: object) -> int:
    """Return ``index_size`` if it is a whole number from 1 to 50,000, else raise."""
    return _check_size(index_size, "index size", MAX_SITEMAPS_PER_INDEX)


def _check_size(size: object, what: str, maximum: int) -> int:
    if isinstance(size, bool) or not isinstance(size, int):
        raise ConfigurationError(f"{what} must be an int, got {size!r}")
    if not 1 <= size <= maximum:
        raise ConfigurationError(f"{what} {size} must be between 1 and {maximum}")
    return size


def check_extra_sitemaps(urls: object) -> tuple[str, ...]:
    """Return ``urls`` (absolute http(s) sitemap URLs for robots.txt), normalised."""
    if isinstance(urls, str) or not isinstance(urls, Sequence):
        raise ConfigurationError(f"extra sitemaps must be a list of URLs, got {urls!r}")
    try:
        return tuple(normalise_url(url, "extra sitemap") for url in urls)
    except InvalidEntryError as exc:
        raise ConfigurationError(str(exc)) from None


class Site(Generic[S]):
    """The registered sources and the settings that shape the documents.

    ``page_size`` is the number of entries per child page (at most 50,000).
    ``same_host_only`` refuses entries whose URL is not under the site's base URL (same
    origin, and below the path prefix where the sitemap lives), as the protocol
    requires; set it to False only for sites that prove ownership of several hosts
    to the search engines. ``cache_control`` is the Cache-Control of the documents,
    ``cache`` keeps rendered documents (of sources with a fingerprint) and ``gzip``
    offers gzip to clients that accept it. ``index_size`` is how many children one
    index file holds (50,000; above it the index is split into parts, each listed in
    robots.txt). ``extra_sitemaps`` are more sitemap URLs for robots.txt to list.
    ``sitemaps_url`` is where the sitemap files are published, when not under the
    base URL (a CDN): the index lists its children there, robots.txt names it there.
    ``html=False`` leaves the ``.html`` paths (the view for people) to the app.
    ``name`` is the site's name among several served by one front (its host; see
    :mod:`sitemap_core.serve.sites`): it enters every ETag, and so every cache key.
    """

    def __init__(
        self,
        sources: Sequence[S],
        *,
        page_size: int = MAX_URLS_PER_SITEMAP,
        robots_rules: str = DEFAULT_RULES,
        same_host_only: bool = True,
        cache_control: str = DEFAULT_CACHE_CONTROL,
        cache: PageCache | None = None,
        gzip: bool = True,
        index_size: int = MAX_SITEMAPS_PER_INDEX,
        extra_sitemaps: Sequence[str] = (),
        sitemaps_url: BaseURL | str | None = None,
        html: bool = True,
        feed: bool = False,
        feed_size: int = DEFAULT_FEED_SIZE,
        feed_max_days: float | None = None,
        indexnow_key: str | None = None,
        name: str = "",
    ) -> None:
        check_page_size(page_size)
        #: The site's name among several (its host), or "" for the one site of a front.
        self.name = name
        _check_switch(html, "html")
        check_index_size(index_size)
        self.sources = _by_name(sources)
        _check_switch(feed, "feed")
        #: Serve the feed of recent changes (see :mod:`sitemap_core.write.feed`).
        self.feed = feed
        self.feed_size = check_feed_size(feed_size, "feed_size")
        self.feed_max_days = check_feed_max_days(feed_max_days, "feed_max_days")
        #: The IndexNow key served at ``/<key>.txt`` (see
        #: :mod:`sitemap_core.serve.indexnow_key`).
        self.indexnow_key = None if indexnow_key is None else check_key(indexnow_key)
        self._key_path = None if indexnow_key is None else key_file_path(indexnow_key)
        self.page_size = page_size
        self.robots_rules = robots_rules
        self.same_host_only = same_host_only
        self.cache_control = cache_control
        self.cache = cache
        #: What the last render of each document of unfingerprinted sources found, so
        #: the next request streams at once (see :mod:`sitemap_core.memory.recall`).
        self.recall = Recall()
        #: The counts and range facts of fingerprinted sources, remembered under their
        #: whole-source fingerprints (see :mod:`sitemap_core.memory.known`).
        self.known = Known()
        #: The validators of documents whose sources are all fingerprinted, kept while
        #: those fingerprints hold (see :mod:`sitemap_core.serve.answers`).
        self.answers = Answers()
        self.gzip = gzip
        self.index_size = index_size
        self.extra_sitemaps = check_extra_sitemaps(extra_sitemaps)
        #: Where the sitemap files live when not under the base URL (see
        #: :meth:`sitemaps_base`).
        self.sitemaps_url = (
            BaseURL.parse(sitemaps_url) if isinstance(sitemaps_url, str) else sitemaps_url
        )
        self.html = html

    def match(self, path: str) -> Target | None:
        """Return what ``path`` asks for, or None when it is not one of the site's paths."""
        if path == ROBOTS_PATH:
            return Target("robots")
        if path in (FEED_PATH, f"{FEED_PATH}.gz"):
            # The feed, and its gzipped twin as a file (as the documents have theirs).
            return Target("feed", "atom", gz=path != FEED_PATH) if self.feed else None
        if path == self._key_path:
            return Target("indexnow", "txt")
        target = _document_target(path)
        if target is not None and target.fmt == "html" and (target.gz or not self.html):
            # The HTML view is for browsers, which negotiate gzip themselves; with
            # html=False its paths are the app's own.
            return None
        return target

    def sources_to_count(self, target: Target) -> list[S]:
        """The sources whose counts :meth:`plan` needs for ``target``."""
        if target.kind in ("root", "index", "robots", "feed"):
            return list(self.sources.values())
        if target.kind == "page" and target.source in self.sources:
            return [self.sources[target.source]]
        return []

    def entries_per_page(self, source: str) -> int:
        """How many entries one page of ``source`` holds (see :class:`Limits`)."""
        limits = self.sources[source].limits
        size = min(self.page_size, limits.page_size or self.page_size)
        if limits.news:
            size = min(size, MAX_NEWS_URLS)  # Google: 1,000 URLs per news sitemap
        if limits.max_entry_bytes is not None:
            size = min(size, (MAX_SITEMAP_BYTES - DOCUMENT_OVERHEAD) // limits.max_entry_bytes)
        return size

    def check_stable(self, source: str, pages: Sequence[Page] | Summary) -> None:
        """Refuse stable pages wider than a page of ``source`` may be.

        A stable page holds every key of its window, so a window wider than the
        entries one page may list (the site's ``page_size``, 1,000 for news, the bound
        of ``max_entry_bytes``) could pass the limits as rows arrive: a setting to
        change (:class:`ConfigurationError`), never a page over the limits.
        """
        most = self.entries_per_page(source)
        if isinstance(pages, Summary):
            widest = pages.widest
        else:
            widest = max((page.stop - page.start for page in pages), default=0)
        if widest > most:
            raise ConfigurationError(
                f"the stable pages of source {source!r} span {widest:,} keys, but one page"
                f" of it lists at most {most:,} URLs (page_size, news, max_entry_bytes):"
                f" install its page facts again with page_width at most {most:,}"
            )

    def lists_stable_pages(self, target: Target, counts: Mapping[str, int]) -> bool:
        """Whether the plan of ``target`` lists the stable pages of its sources one by
        one (the whole site in one file), rather than their summaries (an index)."""
        return target.kind == "root" and self._fits_one_file(counts)

    def pages(self, count: int, source: str | None = None) -> int:
        """How many child pages hold ``count`` entries (of ``source``)."""
        size = self.page_size if source is None else self.entries_per_page(source)
        return -(-count // size)

    def _fits_one_file(self, counts: Mapping[str, int]) -> bool:
        # Everything in /sitemap.xml: the site's count limit, each source's own page
        # size, and the byte bounds of the sources that declared one.
        if sum(counts.values()) > self.page_size:
            return False
        budget = MAX_SITEMAP_BYTES - DOCUMENT_OVERHEAD
        declared = 0
        for name, count in counts.items():
            if count > self.entries_per_page(name):
                return False
            bound = self.sources[name].limits.max_entry_bytes
            if bound is not None:
                declared += count * bound
        return declared <= budget

    def page_path(self, source: str, number: int, fmt: Format = "xml") -> str:
        """The path of page ``number`` of ``source``."""
        return f"/sitemap-{source}-{number}.{fmt}"

    def robots(self, base: BaseURL, index_parts: int = 1) -> str:
        """The robots.txt body of a site that has none of its own."""
        return robots_txt(self.sitemap_urls(base, index_parts), self.robots_rules)

    def _feed_link(self) -> str | None:
        # The HTML view's link to the feed (relative, as its other links are).
        return _sibling(FEED_PATH) if self.feed else None

    def sitemap_urls(self, base: BaseURL, index_parts: int = 1) -> list[str]:
        """The URLs robots.txt lists: the index (parts), the feed, the extra ones."""
        return sitemap_urls(self.sitemaps_base(base), index_parts, self.extra_sitemaps, self.feed)

    def sitemaps_base(self, base: BaseURL) -> BaseURL:
        """Where the sitemap files of the site at ``base`` are: ``sitemaps_url``, else
        ``base``. The protocol lets an index list only sitemaps on its own host, so the
        index's children and robots.txt's lines move together; the entries stay."""
        return base if self.sitemaps_url is None else self.sitemaps_url

    def index_capacity(self, base: BaseURL) -> int:
        """How many children one ``<sitemapindex>`` file of this site holds.

        ``index_size`` (at most 50,000), and fewer if 50,000 of the longest child
        elements this base URL can give would pass 50 MiB (a base URL of some 900
        characters or more).
        """
        longest = _INDEX_ITEM_OVERHEAD + len(escape_uri(self.sitemaps_base(base).url))
        return min(self.index_size, (MAX_SITEMAP_BYTES - DOCUMENT_OVERHEAD) // longest)

    def index_parts(
        self, counts: Mapping[str, int], base: BaseURL, stable: Stable = NO_STABLE_PAGES
    ) -> int:
        """How many files the index of ``counts`` needs (1 when it fits in one, or when
        the site needs no index at all)."""
        if self._fits_one_file(counts):
            return 1
        children = sum(self._children_of(name, counts, stable) for name in self.sources)
        return max(1, -(-children // self.index_capacity(base)))

    def _children_of(self, name: str, counts: Mapping[str, int], stable: Stable) -> int:
        # How many child pages source ``name`` has.
        known = stable.get(name)
        if isinstance(known, Summary):
            return known.pages
        return self.pages(counts[name], name) if known is None else len(known)

    def layout(self, name: str, counts: Mapping[str, int], stable: Stable) -> Sequence[Page]:
        """Every child page of source ``name``: its stable pages, or its ranks."""
        known = stable.get(name)
        if known is not None:
            assert not isinstance(known, Summary), "a summary has no pages to lay out"
            return known
        size = self.entries_per_page(name)
        return [
            ranked_page(size, number, counts[name])
            for number in range(1, self.pages(counts[name], name) + 1)
        ]

    def plan(
        self,
        target: Target,
        counts: Mapping[str, int],
        base: BaseURL,
        stable: Stable = NO_STABLE_PAGES,
    ) -> Plan[S] | None:
        """Decide the document for ``target``; None means 404 (nothing there).

        ``stable`` holds the pages of the sources with stable pages (all of them, or
        for a page of one such source, that page if it lists anything).
        """
        if target.kind == "page":
            return self._page_plan(target, counts, base, stable)
        if target.kind not in ("root", "index"):
            return None
        total = sum(counts[name] for name in self.sources)
        if total == 0:
            return None  # an empty <urlset> fails the schema: nothing to serve
        if self._fits_one_file(counts):
            if target.kind != "root":
                return None
            return self._single_plan(target, Counted(counts, stable), base, total)
        if target.fmt == "txt":
            return None  # text sitemaps have no index form; the pages are listed in XML
        return self._index_plan(target, Counted(counts, stable), base, total)

    def _origin(self, base: BaseURL) -> str | None:
        # What every loc must start with (see Plan.origin).
        return base.prefix if self.same_host_only else None

    def _page_plan(
        self, target: Target, counts: Mapping[str, int], base: BaseURL, stable: Stable
    ) -> Plan[S] | None:
        # Page N of one source: None past its last page, or a stable page that lists
        # nothing (deleted, or never there).
        source = self.sources.get(target.source)
        if source is None:
            return None
        name = source.name
        if target.fmt == "html":
            layout = self.layout(name, counts, stable)
            at = next((i for i, page in enumerate(layout) if page.number == target.page), None)
            if at is None:
                return None
            page, view = layout[at], self._page_view(name, layout, at, counts[name])
        else:
            found = self._page(name, target.page, counts, stable)
            if found is None:
                return None
            page, view = found, None
        plan = Plan[S](
            _urlset_kind(target),
            [(source, page.start, page.stop)],
            origin=self._origin(base),
            view=view,
        )
        return _with_stable(plan, name, [page], stable)

    def _page(
        self, name: str, number: int, counts: Mapping[str, int], stable: Stable
    ) -> Page | None:
        # Page ``number`` of source ``name``, or None when it lists nothing.
        if name in stable:
            return next((page for page in _listed(stable, name) if page.number == number), None)
        if not 1 <= number <= self.pages(counts[name], name):
            return None
        return ranked_page(self.entries_per_page(name), number, counts[name])

    def _single_plan(self, target: Target, counted: Counted, base: BaseURL, total: int) -> Plan[S]:
        # The whole site in /sitemap.xml: every source's entries, one after the other
        # (a source with stable pages, page after page).
        counts, stable = counted
        slices = []
        for name, count in counts.items():
            if name in stable:
                slices += [(self.sources[name], p.start, p.stop) for p in _listed(stable, name)]
            elif count:
                slices.append((self.sources[name], 0, count))
        view = None
        if target.fmt == "html":
            summary = f"{total:,} URLs in one sitemap"
            links = [("XML", _sibling("/sitemap.xml"))]
            view = HtmlView(f"Sitemap of {base.url}", summary, links, feed=self._feed_link())
        plan = Plan[S](_urlset_kind(target), slices, origin=self._origin(base), view=view)
        for name in stable:
            _with_stable(plan, name, _listed(stable, name), stable)
        return plan

    def _index_plan(
        self, target: Target, counted: Counted, base: BaseURL, total: int
    ) -> Plan[S] | None:
        # Above the capacity the index is split: part 1 at /sitemap.xml, part N at
        # /sitemap-index-N.xml, each a full index file; robots.txt lists them all
        # (indexes of indexes are not part of the protocol).
        stable = counted.stable
        capacity = self.index_capacity(base)
        number = 1 if target.kind == "root" else target.page
        window = ((number - 1) * capacity, number * capacity)
        plan = Plan[S]("index")
        children = self._index_part(plan, counted, base, target.fmt == "html", window)
        if not plan.child_ranges and not plan.runs:
            return None
        if target.fmt == "html":
            parts = -(-children // capacity)
            summary = f"{children:,} sitemaps listing {total:,} URLs"
            plan.view = self._index_view(base, number, parts, summary, window[0] + 1)
        for name, known in stable.items():
            if not isinstance(known, Summary):
                _with_stable(plan, name, known, stable)
        return plan

    def _index_part(
        self, plan: Plan[S], counted: Counted, base: BaseURL, html: bool, window: tuple[int, int]
    ) -> int:
        # The children of the index numbered ``[low, high)`` (from 0) into ``plan``: each
        # child page's source, range and URL, and for a source summarised (its stable
        # pages stream) the run of its children there. Returns how many there are in all.
        counts, stable = counted
        fmt: Format = "html" if html else "xml"
        # The HTML view is the app's, for people: its links stay on the app.
        where = base if html else self.sitemaps_base(base)
        low, high = window
        at = 0
        for name, source in self.sources.items():
            known = stable.get(name)
            if isinstance(known, Summary):
                first, stop = max(low, at), min(high, at + known.pages)
                if first < stop:
                    prefix = where.join(f"/sitemap-{name}-")
                    run = Run(source, first - at, stop - first, len(plan.child_ranges), prefix,
                              f".{fmt}", known)  # fmt: skip
                    plan.runs.append(run)
                at += known.pages
                continue
            for page in self.layout(name, counts, stable):
                if low <= at < high:
                    path = self.page_path(name, page.number, fmt)
                    plan.child_ranges.append((source, page.start, page.stop, where.join(path)))
                at += 1
        return at

    def _index_view(
        self, base: BaseURL, number: int, parts: int, summary: str, first: int
    ) -> HtmlView:
        # The HTML view of index part ``number`` of ``parts``: its title and links.
        title = f"Sitemap index of {base.url}"
        if parts > 1:
            title += f", part {number} of {parts}"
        links = [("XML", _sibling(index_part_path(number)))]
        if number > 1:
            links.append(("Previous part", _sibling(index_part_path(number - 1, "html"))))
        if number < parts:
            links.append(("Next part", _sibling(index_part_path(number + 1, "html"))))
        return HtmlView(title, summary, links, first, self._feed_link())

    def _page_view(self, name: str, layout: Sequence[Page], at: int, total: int) -> HtmlView:
        # The HTML view of page ``layout[at]`` of source ``name``: its title, its place
        # among the source's URLs, and links to its neighbours.
        number = layout[at].number
        links = [
            ("Index", _sibling("/sitemap.html")),
            ("XML", _sibling(self.page_path(name, number))),
        ]
        if at > 0:
            previous = layout[at - 1].number
            links.append(("Previous page", _sibling(self.page_path(name, previous, "html"))))
        if at + 1 < len(layout):
            following = layout[at + 1].number
            links.append(("Next page", _sibling(self.page_path(name, following, "html"))))
        title = f"Sitemap: {name}, page {number} of {layout[-1].number}"
        first = sum(page.urls for page in layout[:at]) + 1
        summary = f"URLs {first:,} to {first + layout[at].urls - 1:,} of {total:,}"
        return HtmlView(title, summary, links, first, self._feed_link())


def _listed(stable: Stable, name: str) -> Sequence[Page]:
    # The stable pages of source ``name``, listed (not summarised: see Site.plan).
    known = stable[name]
    assert not isinstance(known, Summary), "the pages of a summarised source stream"
    return known


def _with_stable(plan: Plan[S], name: str, pages: Sequence[Page], stable: Stable) -> Plan[S]:
    # Note the stable pages of source ``name`` among the plan's ranges.
    if name in stable:
        plan.stable.update({(name, page.start, page.stop): page for page in pages})
    return plan


def _urlset_kind(target: Target) -> Literal["urlset", "text"]:
    # A list of URLs is a text sitemap at a .txt path, else a <urlset> (or its HTML view).
    return "text" if target.fmt == "txt" else "urlset"


def _sibling(path: str) -> str:
    # Links between the HTML pages are relative (all documents are siblings under the
    # mount point), so they work on whatever host the browser reached the site by.
    return path.removeprefix("/")


def index_part_path(number: int, fmt: Format = "xml") -> str:
    """The path of part ``number`` of a split index (part 1 is ``/sitemap.xml``)."""
    return f"/sitemap.{fmt}" if number == 1 else f"/sitemap-index-{number}.{fmt}"


def _document_target(path: str) -> Target | None:
    # The sitemap documents' paths: the root, an index part, a page of a source. Every
    # one starts with /sitemap; other paths (all of an app's, on a middleware) are not
    # matched further, nor remembered.
    return _sitemap_target(path) if path.startswith("/sitemap") else None


# Remembered: every request of a middleware asks this (twice on ASGI: to route it,
# then to answer it), and matching the paths again cost a 304 of the ASGI middleware
# about an eighth more (benchmarks/README.md, bench_hosts.py). A site has a few
# thousand document paths at most; past the bound the least recent are forgotten.
@lru_cache(maxsize=4_096)
def _sitemap_target(path: str) -> Target | None:
    # _document_target of a path that starts with /sitemap.
    if (root := _ROOT.fullmatch(path)) is not None:
        return Target("root", _format(root.group(1)), gz=root.group(2) is not None)
    if (part := _INDEX_PART.fullmatch(path)) is not None:
        fmt, gz = _format(part.group(2)), part.group(3) is not None
        return Target("index", fmt, page=int(part.group(1)), gz=gz)
    if (page := _PAGE.fullmatch(path)) is not None:
        fmt, gz = _format(page.group(3)), page.group(4) is not None
        return Target("page", fmt, page.group(1), int(page.group(2)), gz)
    return None


def _check_switch(value: object, name: str) -> None:
    # A Site's on / off arguments take True or False only (Settings reads the words).
    if not isinstance(value, bool):
        raise ConfigurationError(f"{name} must be True or False, got {value!r}")


def _by_name(sources: Sequence[S]) -> dict[str, S]:
    # The sources by name, each name checked (also for sources built directly,
    # bypassing from_object) and none repeated: page paths name them.
    names = [source.name for source in sources]
    for name in names:
        check_name(name)
    duplicated = sorted({name for name in names if names.count(name) > 1})
    if duplicated:
        raise ConfigurationError(f"source names must be unique; repeated: {duplicated}")
    return {source.name: source for source in sources}


def _format(extension: str) -> Format:
    if extension == "txt":
        return "txt"
    return "html" if extension == "html" else "xml"


def check_complete(source: str, start: int, stop: int, pulled: int, expected: int) -> None:
    """Log a source that gave fewer entries for ``[start, stop)`` than it counted."""
    # A source that yields fewer entries than it counted (rows deleted between the
    # count and the read, a wrong count=) would otherwise end the page early without a
    # word; the document stays valid, so it is logged rather than cut.
    if pulled < expected:
        logger.warning(
            "source %r gave %d entries for [%d, %d) where its count promised %d",
            source,
            pulled,
            start,
            stop,
            expected,
        )
