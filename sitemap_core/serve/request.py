"""What a request asks for: its headers, its method, its host, its coding; robots.txt.

Everything here runs before any source is touched (:func:`begin`) or right after the
counts (:func:`decide`), and does no I/O.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal

from sitemap_core.model.hosts import BaseURL, UntrustedHostError
from sitemap_core.serve.compress import accepts_gzip
from sitemap_core.serve.http import (
    ALLOWED_METHODS,
    Reply,
    bad_request,
    method_not_allowed,
    not_found,
    plain_text,
)
from sitemap_core.serve.indexnow_key import key_file_body
from sitemap_core.serve.site import NO_STABLE_PAGES, Plan, S, Site, Stable, Target
from sitemap_core.serve.validators import (
    Validators,
    digest_etag,
    is_not_modified,
    not_modified_headers,
)
from sitemap_core.write.robots import (
    REPLACED_HEADERS,
    is_mergeable,
    merge_robots_bytes,
    robots_txt,
    sitemap_urls,
)

__all__ = [
    "NO_HEADERS",
    "REQUEST_HEADERS",
    "Pending",
    "answer_robots",
    "begin",
    "classify",
    "decide",
    "environ_headers",
    "is_sized",
    "refuse_host",
    "request_headers",
    "text_reply",
]

logger = logging.getLogger("sitemap_core")


#: Request headers as the core reads them: lower-case names. Fronts pass only
#: ``if-none-match``, ``if-modified-since`` and ``accept-encoding``.
NO_HEADERS: Mapping[str, str] = {}


#: The request headers the core reads.
REQUEST_HEADERS = ("accept-encoding", "if-modified-since", "if-none-match")


def request_headers(lookup: Callable[[str], str | None]) -> dict[str, str]:
    """The headers of :data:`REQUEST_HEADERS` a request has, by lower-case name.

    ``lookup(name)`` is the front's own case-insensitive header access.
    """
    found = {name: lookup(name) for name in REQUEST_HEADERS}
    return {name: value for name, value in found.items() if value is not None}


#: The WSGI environ keys of :data:`REQUEST_HEADERS` (PEP 3333: HTTP_ and the name
#: upper-cased, dashes as underscores), each with its header name.
_ENVIRON_KEYS = tuple(("HTTP_" + name.upper().replace("-", "_"), name) for name in REQUEST_HEADERS)


def environ_headers(environ: Mapping[str, object]) -> dict[str, str]:
    """:func:`request_headers` of a WSGI request, read from its environ directly."""
    return {name: value for key, name in _ENVIRON_KEYS if type(value := environ.get(key)) is str}


@dataclass(frozen=True)
class Pending(Generic[S]):
    """A request for a document, waiting for the counts of ``sources``."""

    target: Target
    base: BaseURL
    head: bool
    sources: list[S]
    #: "gzip" or "identity": negotiated, or forced to gzip by a ``.gz`` path.
    coding: str = "identity"
    request: Mapping[str, str] = field(default_factory=dict)
    #: Every 200 must carry its length: the client's protocol (HTTP/1.0) has no chunked
    #: coding, so a transfer cut mid-way would look complete (see :func:`is_sized`).
    sized: bool = False
    #: The name of the site of several that answers (see :class:`Site`), or "".
    site: str = ""
    #: Where the sitemap files are, when not under ``base`` (``sitemaps_url``).
    sitemaps_url: str = ""

    @property
    def identity(self) -> str:
        """What, besides content, distinguishes this document (it enters the ETag, and
        so every cache key): its base URL, its path, where its sitemap files are when
        ``sitemaps_url`` moves them (it changes an index's ``<loc>``s), and the site of
        several that answers it, so two sites never share an ETag even on one base URL.
        Each is left out when unset, so that other sites' ETags stay as they are."""
        where = f"|{self.sitemaps_url}" if self.sitemaps_url else ""
        site = f"|{self.site}" if self.site else ""
        return f"{self.base.url}|{self.target.path}{where}{site}"


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


def text_reply(
    body: str | bytes,
    request: Mapping[str, str],
    head: bool,
    cache_control: str,
    extra: Sequence[tuple[str, str]] = (),
) -> Reply:
    """The answer for a text known whole (robots.txt, the IndexNow key): its ETag is
    the digest of its bytes; 304 when the request's validators match."""
    data = body.encode() if isinstance(body, str) else body
    validators = Validators(digest_etag("robots", hashlib.sha256(data).digest(), "identity"))
    if is_not_modified(request, validators):
        return Reply(
            304, not_modified_headers(validators, [("Cache-Control", cache_control)]), iter(())
        )
    reply = plain_text(200, data, head)
    reply.headers += [*validators.headers(), ("Cache-Control", cache_control), *extra]
    return reply


def answer_robots(
    status: int,
    headers: Sequence[tuple[str, str]],
    read_body: Callable[[], bytes],
    base_url: Callable[[], BaseURL],
    rules: str,
    head: bool,
    request: Mapping[str, str] = NO_HEADERS,
    cache_control: str = "no-cache",
    index_parts: Callable[[BaseURL], int] | None = None,
    extra_sitemaps: Sequence[str] = (),
    feed: bool = False,
    sitemaps_url: BaseURL | None = None,
) -> Reply | None:
    """Decide robots.txt from the app's own answer to ``GET /robots.txt``.

    * 404 (the app has none): our robots.txt with ``rules`` and the Sitemap line, or a
      400 when the host is not trusted;
    * a 200 ``text/plain`` file: the same bytes with the Sitemap line added once, the
      app's headers kept but for those that described the original bytes;
    * anything else, or an untrusted host, or a file too large: None, meaning "send
      the app's response as it is".

    ``read_body`` is called only when the body is needed; ``index_parts(base)`` (see
    :func:`count_index_parts`) says how many index files to list, one if not given;
    ``extra_sitemaps`` are listed after them, and the feed of recent changes first
    when ``feed`` (the site serves it). With ``sitemaps_url`` (the site's setting) the
    lines name the files there instead of under the base URL.
    """
    if status != 404 and not _appendable(status, headers):
        return None
    try:
        base = base_url()
    except UntrustedHostError as exc:
        return refuse_host(exc, head) if status == 404 else None
    parts = 1 if index_parts is None else index_parts(base)
    urls = sitemap_urls(sitemaps_url or base, parts, extra_sitemaps, feed)
    if status == 404:
        return text_reply(robots_txt(urls, rules), request, head, cache_control)
    return _merged_reply(headers, read_body(), urls, request, head, cache_control)


def _header(headers: Sequence[tuple[str, str]], name: str, default: str) -> str:
    # The value of header ``name`` (lower case) in a response's list, or ``default``.
    return next((value for key, value in headers if key.lower() == name), default)


def _appendable(status: int, headers: Sequence[tuple[str, str]]) -> bool:
    # Whether the app's robots.txt is a text file the Sitemap lines can be added to. A
    # compressed (or otherwise coded) file cannot take a plain line appended.
    coding = _header(headers, "content-encoding", "identity")
    return is_mergeable(status, _header(headers, "content-type", "")) and (
        coding.strip().lower() == "identity"
    )


def _merged_reply(
    headers: Sequence[tuple[str, str]],
    body: bytes,
    urls: list[str],
    request: Mapping[str, str],
    head: bool,
    cache_control: str,
) -> Reply | None:
    # The app's robots.txt with the Sitemap lines added, with its own headers but for
    # those that described the original bytes; None when it is too large to merge.
    merged = merge_robots_bytes(body, urls)
    if merged is None:
        logger.warning("the app's robots.txt is too large; Sitemap line not added")
        return None
    kept = [(k, v) for k, v in headers if k.lower() not in REPLACED_HEADERS]
    # The app's own caching policy, if it has one, wins over ours.
    policy = _header(kept, "cache-control", cache_control)
    kept = [(k, v) for k, v in kept if k.lower() != "cache-control"]
    return text_reply(merged, request, head, policy, kept)


def is_sized(protocol: str) -> bool:
    """Whether a response over ``protocol`` must carry a Content-Length.

    ``protocol`` is the request's version as the front knows it (``"HTTP/1.0"`` from
    WSGI's ``SERVER_PROTOCOL``, ``"1.0"`` from ASGI's ``http_version``). Without chunked
    coding (HTTP/1.0 and before) a body without a length ends when the connection
    closes, so a transfer cut by a failing source would look complete: such bodies are
    rendered whole before the first byte, and a failure is a 500.
    """
    return protocol.upper().removeprefix("HTTP/") in ("1.0", "0.9")


def begin(
    site: Site[S],
    method: str,
    path: str,
    base_url: Callable[[], BaseURL],
    request: Mapping[str, str] = NO_HEADERS,
    protocol: str = "HTTP/1.1",
) -> Reply | Pending[S] | None:
    """Everything before a source is touched: match, method, host, robots, coding.

    Returns None when ``path`` is not the site's, a finished :class:`Reply`, or a
    :class:`Pending` whose sources the front counts before calling :func:`decide`.
    ``base_url`` is called only for the site's paths and may raise
    :class:`UntrustedHostError` (answered 400). ``protocol`` is the request's HTTP
    version (see :func:`is_sized`).
    """
    target = site.match(path)
    if target is None:
        return None
    if method not in ALLOWED_METHODS:
        return method_not_allowed()
    head = method == "HEAD"
    if target.kind == "indexnow" and site.indexnow_key is not None:
        # The IndexNow key file: the key, as the protocol asks, on any host (it proves
        # nothing but that whoever runs this site chose the key).
        return text_reply(key_file_body(site.indexnow_key), request, head, site.cache_control)
    try:
        base = base_url()
    except UntrustedHostError as exc:
        return refuse_host(exc, head)
    if target.kind == "robots":
        # Counted like the root: an index split into parts lists each in robots.txt.
        return Pending(
            target, base, head, site.sources_to_count(target), "identity", request,
            site=site.name, sitemaps_url=_sitemaps_url(site),
        )  # fmt: skip
    if target.gz or (site.gzip and accepts_gzip(request.get("accept-encoding"))):
        coding = "gzip"
    else:
        coding = "identity"
    sized = is_sized(protocol)
    return Pending(
        target, base, head, site.sources_to_count(target), coding, request, sized,
        site=site.name, sitemaps_url=_sitemaps_url(site),
    )  # fmt: skip


def _sitemaps_url(site: Site[S]) -> str:
    return "" if site.sitemaps_url is None else site.sitemaps_url.url


def decide(
    site: Site[S],
    pending: Pending[S],
    counts: Mapping[str, int] | None,
    stable: Stable = NO_STABLE_PAGES,
) -> Reply | Plan[S]:
    """After counting: robots.txt, a 404, or the plan of the document.

    ``counts`` is None only for robots.txt when counting failed (see
    :func:`robots_counts`): it then lists ``/sitemap.xml`` alone. ``stable`` holds the
    pages of the sources that keep stable pages (see :meth:`Site.plan`).
    """
    if pending.target.kind == "robots":
        parts = 1 if counts is None else site.index_parts(counts, pending.base, stable)
        return text_reply(
            site.robots(pending.base, parts), pending.request, pending.head, site.cache_control
        )
    assert counts is not None
    plan = site.plan(pending.target, counts, pending.base, stable)
    if plan is None:
        return not_found(pending.head)
    return plan
