"""Adapters that run real, third-party sitemap consumers against a live server.

End-to-end tests start a real HTTP server (gunicorn, uvicorn, ``http.server``…)
on ``127.0.0.1`` and then ask an independent implementation to discover the
sitemaps from ``/robots.txt`` and list every page URL it found.  Comparing that
list with the URLs we expect to publish checks what we serve against code we
did not write.

Both adapters are deliberately *strict*: anything the consumer would quietly
skip (an HTTP error, an unparseable or truncated sitemap, a gzip body it could
not unpack) raises :class:`AssertionError` with details instead of returning a
shorter list.  Both return a ``list`` rather than a ``set`` so that duplicate
URLs stay visible to the caller.

* :func:`usp_page_urls` runs ``ultimate-sitemap-parser`` (``usp``) on its own
  terms (its ``requests``-based client, its parsers, its gzip detection).
* :func:`scrapy_page_urls` does what Scrapy's ``SitemapSpider`` does, using
  Scrapy's sitemap utilities with ``httpx`` in place of Scrapy's downloader.

Neither adapter reads proxy settings from the environment, so requests for
``127.0.0.1`` always go straight to the server under test.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import httpx
import requests
from scrapy.http import Headers, XmlResponse
from scrapy.responsetypes import responsetypes
from scrapy.settings.default_settings import DOWNLOAD_MAXSIZE
from scrapy.settings.default_settings import USER_AGENT as SCRAPY_USER_AGENT
from scrapy.utils.gz import gunzip
from scrapy.utils.sitemap import Sitemap, sitemap_urls_from_robots
from usp.objects.sitemap import (
    AbstractSitemap,
    IndexRobotsTxtSitemap,
    InvalidSitemap,
    PagesTextSitemap,
)
from usp.tree import sitemap_tree_for_homepage
from usp.web_client.abstract_client import AbstractWebClientResponse, WebClientErrorResponse
from usp.web_client.requests_client import RequestsWebClient, RequestsWebClientErrorResponse

__all__ = ["scrapy_page_urls", "usp_page_urls"]

#: (connect, read) timeouts in seconds.  Reads are generous because a server
#: may build a 50,000-URL sitemap on the fly.
_CONNECT_TIMEOUT = 10.0
_READ_TIMEOUT = 120.0

#: Longest chain robots.txt -> index -> ... -> urlset that we follow.
_MAX_DEPTH = 10

_GZIP_MAGIC = b"\x1f\x8b\x08"


def _homepage_root(homepage: str) -> str:
    """Return ``scheme://host[:port]/`` for *homepage* (robots.txt lives at the root)."""
    parts = urlsplit(homepage)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"not an absolute http(s) URL: {homepage!r}")
    return urlunsplit((parts.scheme, parts.netloc, "/", "", ""))


# --------------------------------------------------------------------------- usp


class _FailFastRequestsWebClient(RequestsWebClient):
    """usp's own ``requests`` client, but without its retry-and-sleep loop.

    usp retries "retryable" failures (400, 408, 429, 5xx, timeouts) five times
    with a one-second sleep in between; against a local test server an error is
    a bug to report, not a blip to wait out.
    """

    def get(self, url: str) -> AbstractWebClientResponse:
        """Fetch *url* with usp's client and mark any error as not retryable."""
        response = super().get(url)
        if isinstance(response, WebClientErrorResponse) and response.retryable():
            return RequestsWebClientErrorResponse(message=response.message(), retryable=False)
        return response


class _WarningCollector(logging.Handler):
    """Logging handler that keeps every record at WARNING or above."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        """Store *record*."""
        self.records.append(record)


@contextmanager
def _collect_warnings(logger_name: str) -> Iterator[_WarningCollector]:
    """Collect WARNING+ records logged under *logger_name* while the block runs."""
    logger = logging.getLogger(logger_name)
    collector = _WarningCollector()
    old_level = logger.level
    if logger.getEffectiveLevel() > logging.WARNING:
        logger.setLevel(logging.WARNING)
    logger.addHandler(collector)
    try:
        yield collector
    finally:
        logger.removeHandler(collector)
        logger.setLevel(old_level)


def _walk(sitemap: AbstractSitemap, depth: int = 0) -> Iterator[tuple[int, AbstractSitemap]]:
    """Yield ``(depth, sitemap)`` for *sitemap* and all its descendants."""
    yield depth, sitemap
    for child in sitemap.sub_sitemaps:
        yield from _walk(child, depth + 1)


def _describe_tree(root: AbstractSitemap) -> str:
    """Render the sitemap tree, one sitemap per line, for failure messages."""
    lines = []
    for depth, node in _walk(root):
        detail = f" reason={node.reason!r}" if isinstance(node, InvalidSitemap) else ""
        lines.append(f"{'  ' * depth}{type(node).__name__} {node.url}{detail}")
    return "\n".join(lines)


def usp_page_urls(homepage: str, *, use_known_paths: bool = False) -> list[str]:
    """Return every page URL ultimate-sitemap-parser finds for *homepage*.

    Discovery starts at ``<root>/robots.txt`` (any path in *homepage* is
    dropped) and follows its ``Sitemap:`` lines, sitemap indexes included,
    through :func:`usp.tree.sitemap_tree_for_homepage`.

    The URLs come back in tree order.  Duplicates across different sitemaps
    are kept, but usp itself drops repeated ``<loc>`` values *within one*
    ``urlset`` and repeated sitemap references within one robots.txt or index,
    so those duplicates cannot be seen here.

    Args:
        homepage: Any URL on the server, e.g. ``"http://127.0.0.1:8000"``.
        use_known_paths: Also probe usp's 14 well-known sitemap paths
            (``/sitemap.xml``, ``/sitemap_index.xml.gz``, …).  Off by default:
            a sitemap found at such a path is added to the tree *again* next to
            the robots.txt one, so its pages would be counted twice.  When on,
            each probe must answer 404 or serve a valid sitemap.

    Raises:
        AssertionError: robots.txt could not be fetched or lists no sitemaps,
            a sitemap failed to fetch or parse (usp's ``InvalidSitemap``), a
            body was read as an empty plain-text sitemap, or
            usp logged a warning or error while fetching or parsing -- usp logs
            and keeps the partial page list for XML that breaks off half way,
            and logs and drops ``<loc>``/lines that are not http(s) URLs.
    """
    root = _homepage_root(homepage)
    session = requests.Session()
    session.trust_env = False  # never route 127.0.0.1 through an env proxy
    client = _FailFastRequestsWebClient(session=session)
    client.set_timeout((_CONNECT_TIMEOUT, _READ_TIMEOUT))
    try:
        with _collect_warnings("usp") as collector:
            tree = sitemap_tree_for_homepage(
                root,
                web_client=client,
                use_robots=True,
                use_known_paths=use_known_paths,
                normalize_homepage_url=False,
            )
            pages = [page.url for page in tree.all_pages()]
    finally:
        session.close()

    problems: list[str] = []
    robots = [s for s in tree.sub_sitemaps if isinstance(s, IndexRobotsTxtSitemap)]
    if not robots:
        # usp silently leaves an unfetchable robots.txt out of the tree.
        problems.append(f"{root}robots.txt was not fetched or parsed as robots.txt")
    elif not robots[0].sub_sitemaps:
        problems.append(f"{root}robots.txt lists no Sitemap: URLs")
    for _, node in _walk(tree):
        if isinstance(node, InvalidSitemap):
            problems.append(f"invalid sitemap {node.url}: {node.reason}")
        elif isinstance(node, PagesTextSitemap) and not node.pages:
            # usp reads any body not starting with "<" as a plain-text sitemap,
            # so an empty body becomes an empty sitemap without a warning.
            problems.append(f"{node.url} read as an empty plain-text sitemap (empty body?)")
    problems += [
        f"usp logged {record.levelname} ({record.name}): {record.getMessage()}"
        for record in collector.records
    ]
    if problems:
        raise AssertionError(
            "ultimate-sitemap-parser could not read the sitemaps cleanly:\n  - "
            + "\n  - ".join(problems)
            + "\nsitemap tree:\n"
            + _describe_tree(tree)
        )
    return pages


# ------------------------------------------------------------------------ scrapy


def _get_ok(client: httpx.Client, url: str) -> httpx.Response:
    """GET *url* and insist on a 200 (redirects are not followed)."""
    try:
        response = client.get(url)
    except httpx.HTTPError as exc:
        raise AssertionError(f"GET {url} failed: {exc!r}") from exc
    if response.status_code != 200:
        raise AssertionError(
            f"GET {url} returned {response.status_code} {response.reason_phrase}, expected 200"
            f" (location={response.headers.get('location')!r}, body={response.content[:200]!r})"
        )
    return response


def _sitemap_body(url: str, response: httpx.Response) -> bytes:
    """Pick the sitemap bytes out of *response* like ``SitemapSpider._get_sitemap_body``.

    httpx has already undone any ``Content-Encoding`` (as Scrapy's
    HttpCompressionMiddleware would), so the response class is guessed from
    the remaining headers, the URL and the body, exactly as that middleware
    does.  An XML response is used as is; otherwise gzip magic bytes mean
    "gunzip it"; otherwise a URL ending in ``.xml``/``.xml.gz`` is taken as
    XML; anything else is a body the spider would ignore.
    """
    body = response.content
    headers = Headers(
        {
            name: value
            for name, value in response.headers.multi_items()
            if name.lower() != "content-encoding"
        }
    )
    response_class = responsetypes.from_args(headers=headers, url=url, body=body)
    if issubclass(response_class, XmlResponse):
        return body
    if body[:3] == _GZIP_MAGIC:
        try:
            return gunzip(body, max_size=DOWNLOAD_MAXSIZE)
        except Exception as exc:
            raise AssertionError(f"{url}: cannot gunzip the body: {exc!r}") from exc
    if url.endswith((".xml", ".xml.gz")):
        return body
    raise AssertionError(
        f"{url}: Scrapy's SitemapSpider would ignore this response as not a sitemap"
        f" (Content-Type={response.headers.get('content-type')!r},"
        f" guessed {response_class.__name__}, body starts {body[:80]!r})"
    )


def _parse_sitemap(url: str, body: bytes) -> tuple[str, list[str]]:
    """Return ``(root tag, locs)`` of a sitemap; raise if lxml had to recover.

    ``Sitemap`` parses with ``recover=True``, so broken or truncated XML would
    otherwise just yield fewer entries.
    """
    try:
        sitemap = Sitemap(body)
        entries = list(sitemap)
    except Exception as exc:
        raise AssertionError(f"{url}: not parseable as XML: {exc!r}") from exc
    errors = list(sitemap.xmliter.error_log)
    if errors:
        details = "; ".join(f"line {e.line}: {e.level_name} {e.message}" for e in errors)
        raise AssertionError(f"{url}: malformed XML ({len(errors)} problem(s)): {details}")
    # Like scrapy.spiders.sitemap.iterloc without alternates: entries whose
    # <loc> is empty are skipped.
    locs = [entry["loc"] for entry in entries if entry["loc"]]
    return sitemap.type, locs


def scrapy_page_urls(homepage: str) -> list[str]:
    """Return every page URL Scrapy's sitemap machinery finds for *homepage*.

    Walks the way ``SitemapSpider`` does when given ``<root>/robots.txt``:
    :func:`scrapy.utils.sitemap.sitemap_urls_from_robots` on the robots.txt
    body gives the sitemap URLs; each sitemap body is chosen as in
    ``SitemapSpider._get_sitemap_body`` (gunzipped if it starts with the gzip
    magic bytes) and parsed with :class:`scrapy.utils.sitemap.Sitemap`; a
    ``sitemapindex`` is followed into its ``<loc>`` children, a ``urlset``
    contributes its ``<loc>`` values.  No spider or reactor is started: pages
    are fetched with ``httpx``, one after another, in document order.

    Every ``<loc>`` is kept, so duplicates -- within a ``urlset`` too -- show
    up in the returned list.  Unlike the spider this does not de-duplicate
    sitemap requests: a sitemap referenced twice is reported as an error.

    Raises:
        AssertionError: a response other than 200 (redirects included), a
            robots.txt without ``Sitemap:`` lines, a body the spider would
            ignore, malformed XML (which Scrapy would silently recover from),
            a root element other than ``urlset``/``sitemapindex``, a sitemap
            referenced more than once, or nesting deeper than 10 levels.
    """
    robots_url = _homepage_root(homepage) + "robots.txt"
    pages: list[str] = []
    seen: dict[str, str] = {}  # sitemap URL -> where it was referenced from

    with httpx.Client(
        timeout=httpx.Timeout(_READ_TIMEOUT, connect=_CONNECT_TIMEOUT),
        follow_redirects=False,
        trust_env=False,
        headers={"User-Agent": SCRAPY_USER_AGENT},
    ) as client:
        robots = _get_ok(client, robots_url)
        top = list(sitemap_urls_from_robots(robots.content, base_url=robots_url))
        if not top:
            raise AssertionError(f"{robots_url} lists no Sitemap: URLs:\n{robots.text}")

        stack = [(url, robots_url, 1) for url in reversed(top)]
        while stack:
            url, referrer, depth = stack.pop()
            if url in seen:
                raise AssertionError(
                    f"sitemap {url} is referenced by both {seen[url]} and {referrer}"
                )
            seen[url] = referrer
            if depth > _MAX_DEPTH:
                raise AssertionError(f"sitemap {url} is nested more than {_MAX_DEPTH} deep")

            kind, locs = _parse_sitemap(url, _sitemap_body(url, _get_ok(client, url)))
            if kind == "urlset":
                pages.extend(locs)
            elif kind == "sitemapindex":
                stack.extend((loc, url, depth + 1) for loc in reversed(locs))
            elif kind == "feed":
                # An Atom feed listed in robots.txt (a site's feed of recent changes):
                # SitemapSpider reads only urlset and sitemapindex and passes it over.
                continue
            else:
                raise AssertionError(
                    f"{url}: root element is <{kind}>, not <urlset> or <sitemapindex>"
                )
    return pages
