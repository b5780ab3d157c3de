"""The site: which document a path asks for, and the plan that produces it.

A request travels one way: the front hands over method, path and a way to get the
base URL; :meth:`Site.match` names the target; the front counts the sources the
target needs (sync or async, the only I/O before the body); :meth:`Site.plan` turns
target and counts into a :class:`Plan`; the body is the plan's slices pulled through
an encoder. :func:`respond` is that whole path for synchronous fronts.

Paths (relative to where the site is mounted):

* ``/robots.txt``
* ``/sitemap.xml`` (``/sitemap.txt``): every entry in one file while the site fits
  one page, otherwise (XML only) a ``<sitemapindex>`` of the child pages;
* ``/sitemap-<source>-<n>.xml`` (``.txt``): page ``n`` (1-based) of one source.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, Protocol, TypeVar

from .entries import Entry
from .errors import ConfigurationError, InvalidEntryError, SitemapTooLargeError
from .hosts import BaseURL, UntrustedHostError
from .http import (
    ALLOWED_METHODS,
    TEXT,
    XML,
    Reply,
    bad_request,
    method_not_allowed,
    not_found,
    plain_text,
)
from .limits import MAX_SITEMAPS_PER_INDEX, MAX_URLS_PER_SITEMAP
from .render import DocumentEncoder, IndexEncoder, TextEncoder, UrlsetEncoder
from .robots import (
    DEFAULT_RULES,
    REPLACED_HEADERS,
    is_mergeable,
    merge_robots_bytes,
    robots_txt,
    sitemap_urls,
)
from .sources import UrlSource

__all__ = [
    "Pending",
    "Plan",
    "Site",
    "Target",
    "answer_robots",
    "begin",
    "check_page_size",
    "classify",
    "decide",
    "iter_body",
    "prime",
    "refuse_host",
    "respond",
]

logger = logging.getLogger("sitemap_core")

Format = Literal["xml", "txt"]

ROBOTS_PATH = "/robots.txt"
_ROOT = re.compile(r"/sitemap\.(xml|txt)")
# Page numbers are canonical (no leading zero) and bounded in length, so '007', '-1',
# 'abc' and a thousand digits are all simply unknown paths: 404, never 500.
_PAGE = re.compile(r"/sitemap-([a-z0-9][a-z0-9_-]{0,63})-([1-9][0-9]{0,17})\.(xml|txt)")

#: How many entries are pulled from a source and rendered at a time.
BATCH_SIZE = 256


class Named(Protocol):
    """What the site needs of a source: its name. Pulling is the front's business."""

    @property
    def name(self) -> str:
        """The source's name, as it appears in page URLs."""
        ...


S = TypeVar("S", bound=Named)


@dataclass(frozen=True)
class Target:
    """What a path names: robots.txt, the root sitemap, or page ``page`` of ``source``."""

    kind: Literal["robots", "root", "page"]
    fmt: Format = "xml"
    source: str = ""
    page: int = 0


@dataclass
class Plan(Generic[S]):
    """Everything needed to stream one document, decided before the first byte."""

    kind: Literal["urlset", "index", "text"]
    slices: list[tuple[S, int, int]] = field(default_factory=list)
    children: list[Entry] = field(default_factory=list)
    #: Every loc must start with this (the base URL and "/"), or None to allow any.
    origin: str | None = None

    @property
    def content_type(self) -> str:
        """The Content-Type of the document."""
        return TEXT if self.kind == "text" else XML

    def headers(self) -> list[tuple[str, str]]:
        """The response headers of the document (no length: it is streamed)."""
        return [("Content-Type", self.content_type)]

    def encoder(self) -> DocumentEncoder:
        """A fresh encoder for this document kind."""
        if self.kind == "index":
            return IndexEncoder()
        return TextEncoder() if self.kind == "text" else UrlsetEncoder()

    def check(self, batch: list[Entry], source: str) -> None:
        """Refuse entries on another host than the site's (see :class:`Site`)."""
        origin = self.origin
        if origin is None:
            return
        for entry in batch:
            if not entry.loc.startswith(origin):
                raise InvalidEntryError(
                    "loc", entry.loc, f"is not under this site's base URL {origin!r}", source
                )


def check_page_size(page_size: object) -> int:
    """Return ``page_size`` if it is a whole number from 1 to 50,000, else raise."""
    if isinstance(page_size, bool) or not isinstance(page_size, int):
        raise ConfigurationError(f"page size must be an int, got {page_size!r}")
    if not 1 <= page_size <= MAX_URLS_PER_SITEMAP:
        raise ConfigurationError(
            f"page size {page_size} must be between 1 and {MAX_URLS_PER_SITEMAP}"
        )
    return page_size


class Site(Generic[S]):
    """The registered sources and the settings that shape the documents.

    ``page_size`` is the number of entries per child page (at most 50,000).
    ``same_host_only`` refuses entries whose URL is not under the site's base URL (same
    origin, and below the path prefix where the sitemap lives), as the protocol
    requires; set it to False only for sites that prove ownership of several hosts
    to the search engines.
    """

    def __init__(
        self,
        sources: Sequence[S],
        *,
        page_size: int = MAX_URLS_PER_SITEMAP,
        robots_rules: str = DEFAULT_RULES,
        same_host_only: bool = True,
    ) -> None:
        check_page_size(page_size)
        names = [source.name for source in sources]
        duplicated = sorted({name for name in names if names.count(name) > 1})
        if duplicated:
            raise ConfigurationError(f"source names must be unique; repeated: {duplicated}")
        self.sources = {source.name: source for source in sources}
        self.page_size = page_size
        self.robots_rules = robots_rules
        self.same_host_only = same_host_only

    def match(self, path: str) -> Target | None:
        """Return what ``path`` asks for, or None when it is not one of the site's paths."""
        if path == ROBOTS_PATH:
            return Target("robots")
        root = _ROOT.fullmatch(path)
        if root is not None:
            return Target("root", _format(root.group(1)))
        page = _PAGE.fullmatch(path)
        if page is not None:
            return Target("page", _format(page.group(3)), page.group(1), int(page.group(2)))
        return None

    def sources_to_count(self, target: Target) -> list[S]:
        """The sources whose counts :meth:`plan` needs for ``target``."""
        if target.kind == "root":
            return list(self.sources.values())
        if target.kind == "page" and target.source in self.sources:
            return [self.sources[target.source]]
        return []

    def pages(self, count: int) -> int:
        """How many child pages hold ``count`` entries."""
        return -(-count // self.page_size)

    def page_path(self, source: str, number: int, fmt: Format = "xml") -> str:
        """The path of page ``number`` of ``source``."""
        return f"/sitemap-{source}-{number}.{fmt}"

    def robots(self, base: BaseURL) -> str:
        """The robots.txt body of a site that has none of its own."""
        return robots_txt(sitemap_urls(base), self.robots_rules)

    def plan(self, target: Target, counts: Mapping[str, int], base: BaseURL) -> Plan[S] | None:
        """Decide the document for ``target``; None means 404 (nothing there)."""
        origin = base.prefix if self.same_host_only else None
        kind: Literal["urlset", "text"] = "text" if target.fmt == "txt" else "urlset"
        if target.kind == "page":
            source = self.sources.get(target.source)
            if source is None or not 1 <= target.page <= self.pages(counts[source.name]):
                return None
            start = (target.page - 1) * self.page_size
            stop = min(start + self.page_size, counts[source.name])
            return Plan[S](kind, [(source, start, stop)], origin=origin)
        if target.kind != "root":
            return None
        total = sum(counts[name] for name in self.sources)
        if total == 0:
            return None  # an empty <urlset> fails the schema: nothing to serve
        if total <= self.page_size:
            slices = [(self.sources[name], 0, n) for name, n in counts.items() if n]
            return Plan[S](kind, slices, origin=origin)
        if target.fmt == "txt":
            return None  # text sitemaps have no index form; the pages are listed in XML
        children = [
            Entry(base.join(self.page_path(name, number)))
            for name in self.sources
            for number in range(1, self.pages(counts[name]) + 1)
        ]
        if len(children) > MAX_SITEMAPS_PER_INDEX:
            raise SitemapTooLargeError(
                f"{len(children)} child sitemaps exceed the index limit of "
                f"{MAX_SITEMAPS_PER_INDEX}; raise the page size"
            )
        return Plan[S]("index", children=children)


def _format(extension: str) -> Format:
    return "txt" if extension == "txt" else "xml"


def iter_body(plan: Plan[UrlSource], batch_size: int = BATCH_SIZE) -> Iterator[bytes]:
    """Stream the plan's document as chunks, pulling sources synchronously."""
    encoder = plan.encoder()
    if plan.children:
        chunk = encoder.feed(plan.children)
        if chunk:
            yield chunk
    for source, start, stop in plan.slices:
        pulled = 0
        for batch in source.batches(start, stop, batch_size):
            plan.check(batch, source.name)
            pulled += len(batch)
            chunk = encoder.feed(batch)
            if chunk:
                yield chunk
        check_complete(source.name, start, stop, pulled)
    yield encoder.close()


def check_complete(source: str, start: int, stop: int, pulled: int) -> None:
    """Log a source that gave fewer entries for ``[start, stop)`` than it counted."""
    # A source that yields fewer entries than it counted (rows deleted between the
    # count and the read, a wrong count=) would otherwise end the page early without a
    # word; the document stays valid, so it is logged rather than cut.
    if pulled < stop - start:
        logger.warning(
            "source %r gave %d entries for [%d, %d) where its count promised %d",
            source,
            pulled,
            start,
            stop,
            stop - start,
        )


def prime(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Pull the first chunk now, so that a failing source fails before any byte is sent.

    The front can then answer 500 instead of a truncated 200. A failure after the
    first byte is logged and re-raised, so the server cuts the transfer.
    """
    first = next(chunks)
    return _logged(first, chunks)


def _logged(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    try:
        yield from rest
    except Exception:
        logger.exception("sitemap source failed mid-response; the transfer is cut")
        raise


def refuse_host(error: UntrustedHostError, head: bool = False) -> Reply:
    """The 400 for a request whose host may not define the site's URLs.

    The host is logged, not echoed: the body must not carry attacker-chosen text.
    """
    logger.warning("sitemap request refused: %s", error)
    return bad_request("the Host header is not an allowed host of this site", head)


def classify(
    site: Site[S], path: str, method: str, serve_robots: bool
) -> Literal["app", "robots", "sitemap"]:
    """What a middleware does with a request.

    ``"app"``: not the site's path (or robots.txt left to the app), pass it on;
    ``"robots"``: ask the app for its robots.txt and :func:`answer_robots`;
    ``"sitemap"``: answer it (including 405 for a wrong method on robots.txt).
    """
    target = site.match(path)
    if target is None or (target.kind == "robots" and not serve_robots):
        return "app"
    if target.kind == "robots" and method in ALLOWED_METHODS:
        return "robots"
    return "sitemap"


def answer_robots(
    status: int,
    headers: Sequence[tuple[str, str]],
    read_body: Callable[[], bytes],
    base_url: Callable[[], BaseURL],
    rules: str,
    head: bool,
) -> Reply | None:
    """Decide robots.txt from the app's own answer to ``GET /robots.txt``.

    * 404 (the app has none): our robots.txt with ``rules`` and the Sitemap line, or a
      400 when the host is not trusted;
    * a 200 ``text/plain`` file: the same bytes with the Sitemap line added once, the
      app's headers kept but for those that described the original bytes;
    * anything else, or an untrusted host, or a file too large: None, meaning "send
      the app's response as it is".

    ``read_body`` is called only when the body is needed.
    """
    content_type = next((v for k, v in headers if k.lower() == "content-type"), "")
    if status != 404 and not is_mergeable(status, content_type):
        return None
    try:
        base = base_url()
    except UntrustedHostError as exc:
        return refuse_host(exc, head) if status == 404 else None
    if status == 404:
        return plain_text(200, robots_txt(sitemap_urls(base), rules), head)
    merged = merge_robots_bytes(read_body(), sitemap_urls(base))
    if merged is None:
        logger.warning("the app's robots.txt is too large; Sitemap line not added")
        return None
    reply = plain_text(200, merged, head)
    reply.headers += [(k, v) for k, v in headers if k.lower() not in REPLACED_HEADERS]
    return reply


@dataclass(frozen=True)
class Pending(Generic[S]):
    """A request for a document, waiting for the counts of ``sources``."""

    target: Target
    base: BaseURL
    head: bool
    sources: list[S]


def begin(
    site: Site[S], method: str, path: str, base_url: Callable[[], BaseURL]
) -> Reply | Pending[S] | None:
    """Everything before a source is touched: match, method, host, robots.

    Returns None when ``path`` is not the site's, a finished :class:`Reply`, or a
    :class:`Pending` whose sources the front counts (synchronously or not) before
    calling :func:`decide`. ``base_url`` is called only for the site's paths and may
    raise :class:`UntrustedHostError` (answered 400).
    """
    target = site.match(path)
    if target is None:
        return None
    if method not in ALLOWED_METHODS:
        return method_not_allowed()
    head = method == "HEAD"
    try:
        base = base_url()
    except UntrustedHostError as exc:
        return refuse_host(exc, head)
    if target.kind == "robots":
        return plain_text(200, site.robots(base), head)
    return Pending(target, base, head, site.sources_to_count(target))


def decide(site: Site[S], pending: Pending[S], counts: Mapping[str, int]) -> Reply | Plan[S]:
    """After counting: a 404, the headers-only answer to HEAD, or the plan to stream."""
    plan = site.plan(pending.target, counts, pending.base)
    if plan is None:
        return not_found(pending.head)
    if pending.head:
        # An iterator, not an empty tuple: a WSGI stack would take a sized empty body for
        # "Content-Length: 0", a lie about the GET response's length.
        return Reply(200, plan.headers(), iter(()))
    return plan


def respond(
    site: Site[UrlSource], method: str, path: str, base_url: Callable[[], BaseURL]
) -> Reply | None:
    """Answer a request synchronously; None when ``path`` is not the site's.

    A source error before the first byte propagates to the caller, which answers 500;
    after it, the body raises mid-stream and the server cuts the transfer, so no
    truncated document looks complete.
    """
    step = begin(site, method, path, base_url)
    if not isinstance(step, Pending):
        return step
    counts = {source.name: source.count() for source in step.sources}
    plan = decide(site, step, counts)
    if isinstance(plan, Reply):
        return plan
    return Reply(200, plan.headers(), prime(iter_body(plan)))
