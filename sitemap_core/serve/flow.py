"""Serving a request: from method, path and headers to a :class:`Reply`.

The path is one way, and every step but the I/O is shared by the sync and the async
fronts::

    begin()      match, method, host, robots.txt, content coding     (no I/O)
    counts       source.count() for the sources the target needs       (I/O)
    decide()     404, or the Plan of the document                      (no I/O)
    facts        source.fingerprint() / newest() for the plan's ranges (I/O)
    conclude()   validators; 304 and HEAD answered here                (no I/O)
    body         from the cache, streamed (and kept in the cache), or, for sources
                 without a fingerprint, rendered to a spool first so the ETag is known

:func:`respond` is that path for synchronous fronts; :mod:`sitemap_core.serve.aio` has the
asynchronous one.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from tempfile import SpooledTemporaryFile
from typing import IO, Generic, Literal, TypeVar

from sitemap_core.errors import InvalidEntryError
from sitemap_core.limits import CHUNK_BYTES
from sitemap_core.memory.cache import PageCache, cache_get, cache_set
from sitemap_core.memory.recall import Check, Recalled, StaleValidatorsError, hash_dates, probed
from sitemap_core.model.entries import Entry
from sitemap_core.model.hosts import BaseURL, UntrustedHostError
from sitemap_core.model.recent import Recent, cutoff
from sitemap_core.serve.answers import Answer, Answers
from sitemap_core.serve.compress import GzipStream, accepts_gzip, gzip_chunks
from sitemap_core.serve.http import (
    ALLOWED_METHODS,
    Reply,
    bad_request,
    method_not_allowed,
    not_found,
    plain_text,
)
from sitemap_core.serve.indexnow_key import key_file_body
from sitemap_core.serve.site import BATCH_SIZE, Plan, S, Site, Target, check_complete
from sitemap_core.serve.validators import (
    Validators,
    digest_etag,
    fingerprint_etag,
    is_not_modified,
    lastmod_instant,
    not_modified_headers,
)
from sitemap_core.sources.base import WHOLE, UrlSource, recent_changes
from sitemap_core.sources.newsroom import check_news
from sitemap_core.sources.scope import enter_request, leave_request
from sitemap_core.write.encoders import DocumentEncoder
from sitemap_core.write.feed import ATOM_TYPE, render_feed
from sitemap_core.write.html import CONTENT_SECURITY_POLICY
from sitemap_core.write.robots import (
    REPLACED_HEADERS,
    is_mergeable,
    merge_robots_bytes,
    robots_txt,
    sitemap_urls,
)

__all__ = [
    "NO_HEADERS",
    "Facts",
    "Pending",
    "Ready",
    "answer_robots",
    "begin",
    "cache_key_of",
    "classify",
    "conclude",
    "count_index_parts",
    "decide",
    "environ_headers",
    "feed_reply",
    "finish_spooled",
    "is_sized",
    "iter_body",
    "known_counts",
    "known_fact",
    "named",
    "prime",
    "refuse_host",
    "remembered",
    "request_headers",
    "respond",
    "robots_counts",
    "sized_body",
    "write_batch",
]

logger = logging.getLogger("sitemap_core")

T = TypeVar("T")

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


#: A spool keeps this much in memory before it moves to a temporary file.
SPOOL_MEMORY = 256 * 2**10

GZIP_TYPE = "application/gzip"


# -- before any source is touched ------------------------------------------------------


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

    @property
    def identity(self) -> str:
        """What, besides content, distinguishes this document (it enters the ETag)."""
        return f"{self.base.url}|{self.target.path}"


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


def _small(
    body: str | bytes,
    request: Mapping[str, str],
    head: bool,
    cache_control: str,
    extra: Sequence[tuple[str, str]] = (),
) -> Reply:
    # A fully known text (robots.txt): its ETag is the digest of its bytes.
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
    when ``feed`` (the site serves it).
    """
    content_type = next((v for k, v in headers if k.lower() == "content-type"), "")
    coding = next((v for k, v in headers if k.lower() == "content-encoding"), "identity")
    if status != 404 and (
        not is_mergeable(status, content_type) or coding.strip().lower() != "identity"
    ):
        # A compressed (or otherwise coded) file cannot take a plain line appended.
        return None
    try:
        base = base_url()
    except UntrustedHostError as exc:
        return refuse_host(exc, head) if status == 404 else None
    parts = 1 if index_parts is None else index_parts(base)
    urls = sitemap_urls(base, parts, extra_sitemaps, feed)
    if status == 404:
        return _small(robots_txt(urls, rules), request, head, cache_control)
    merged = merge_robots_bytes(read_body(), urls)
    if merged is None:
        logger.warning("the app's robots.txt is too large; Sitemap line not added")
        return None
    kept = [(k, v) for k, v in headers if k.lower() not in REPLACED_HEADERS]
    # The app's own caching policy, if it has one, wins over ours.
    policy = next((v for k, v in kept if k.lower() == "cache-control"), cache_control)
    kept = [(k, v) for k, v in kept if k.lower() != "cache-control"]
    return _small(merged, request, head, policy, kept)


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
        return _small(key_file_body(site.indexnow_key), request, head, site.cache_control)
    try:
        base = base_url()
    except UntrustedHostError as exc:
        return refuse_host(exc, head)
    if target.kind == "robots":
        # Counted like the root: an index split into parts lists each in robots.txt.
        return Pending(target, base, head, site.sources_to_count(target), "identity", request)
    if target.gz or (site.gzip and accepts_gzip(request.get("accept-encoding"))):
        coding = "gzip"
    else:
        coding = "identity"
    sized = is_sized(protocol)
    return Pending(target, base, head, site.sources_to_count(target), coding, request, sized)


def decide(site: Site[S], pending: Pending[S], counts: Mapping[str, int] | None) -> Reply | Plan[S]:
    """After counting: robots.txt, a 404, or the plan of the document.

    ``counts`` is None only for robots.txt when counting failed (see
    :func:`robots_counts`): it then lists ``/sitemap.xml`` alone.
    """
    if pending.target.kind == "robots":
        parts = 1 if counts is None else site.index_parts(counts, pending.base)
        return _small(
            site.robots(pending.base, parts), pending.request, pending.head, site.cache_control
        )
    assert counts is not None
    plan = site.plan(pending.target, counts, pending.base)
    if plan is None:
        return not_found(pending.head)
    return plan


def robots_counts(count: Callable[[], dict[str, int]]) -> dict[str, int] | None:
    """The counts robots.txt needs, or None (logged) when a source fails to count.

    robots.txt must not fail because of a source: crawlers read a failing robots.txt
    as "disallow everything", which costs far more than a missing index part.
    """
    try:
        return count()
    except Exception:
        logger.exception("counting the sources for robots.txt failed; listing /sitemap.xml only")
        return None


def count_index_parts(site: Site[UrlSource], base: BaseURL) -> int:
    """How many index files robots.txt lists for ``base``: one if a count fails.

    Asked of an app's own robots.txt, outside :func:`respond`: in a request scope of
    its own, so each source's count answers for the version its fingerprint read.
    """
    scope = enter_request()
    try:
        counts = robots_counts(lambda: known_counts(site, site.sources.values(), {}))
    finally:
        leave_request(scope)
    return 1 if counts is None else site.index_parts(counts, base)


def known_counts(
    site: Site[UrlSource], sources: Iterable[UrlSource], whole: dict[str, object]
) -> dict[str, int]:
    """The sources' counts, remembered under their whole-source fingerprints (see
    :mod:`sitemap_core.memory.known`); ``whole`` receives those fingerprints by name."""
    counts = {}
    for source in sources:
        if source.name in whole:  # asked already in this request
            fingerprint = whole[source.name]
        else:
            fingerprint = whole[source.name] = source.fingerprint(0, WHOLE)
        count = site.known.count(source.name, fingerprint)
        if count is None:
            count = source.count()
            site.known.counted(source.name, fingerprint, count)
        counts[source.name] = count
    return counts


def known_fact(
    site: Site[S],
    whole: Mapping[str, object],
    source: S,
    kind: str,
    start: int,
    stop: int,
    ask: Callable[[int, int], T],
) -> T:
    """``ask(start, stop)``, or its answer remembered while ``source`` is unchanged."""
    fingerprint = whole.get(source.name)
    hit, value = site.known.fact(source.name, fingerprint, kind, start, stop)
    if hit:
        return value  # type: ignore[return-value]  # stored from ask() of this kind
    answer = ask(start, stop)
    site.known.found(source.name, fingerprint, kind, start, stop, answer)
    return answer


# -- after the sources' cheap facts ------------------------------------------------------


@dataclass
class Facts:
    """What the sources said of the plan's ranges (same order as ``Plan.ranges``)."""

    fingerprints: list[object | None]
    newest: list[str | None]


@dataclass
class Ready(Generic[S]):
    """A document to send: its headers, its validators if known, its cache key."""

    plan: Plan[S]
    headers: list[tuple[str, str]]
    #: None when some source has no fingerprint: render first, then the ETag is known.
    validators: Validators | None
    cache_key: str | None
    coding: str
    identity: str
    head: bool
    request: Mapping[str, str]
    #: As :attr:`Pending.sized`.
    sized: bool = False
    #: The newest lastmod of the document before clamping to now (see :func:`_clamped`).
    newest: datetime | None = None

    def full_headers(self, validators: Validators, length: int | None) -> list[tuple[str, str]]:
        """The headers of a 200: the document's, the validators, the length if known."""
        headers = [*self.headers, *validators.headers()]
        if length is not None:
            headers.append(("Content-Length", str(length)))
        return headers


def _document_headers(site: Site[S], pending: Pending[S], plan: Plan[S]) -> list[tuple[str, str]]:
    if pending.target.gz:
        # A .gz URL names the compressed file itself: no coding to negotiate.
        return [("Content-Type", GZIP_TYPE), ("Cache-Control", site.cache_control)]
    headers = [("Content-Type", plan.content_type)]
    if plan.view is not None:
        headers += [
            ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
            ("X-Content-Type-Options", "nosniff"),
        ]
    if site.gzip:
        headers.append(("Vary", "Accept-Encoding"))
    if pending.coding == "gzip":
        headers.append(("Content-Encoding", "gzip"))
    headers.append(("Cache-Control", site.cache_control))
    return headers


def _newest_instant(values: Sequence[str | None]) -> datetime | None:
    # The instant of the newest of ``values``; None unless every one is dated.
    if not values or any(value is None for value in values):
        return None
    return max(lastmod_instant(value) for value in values if value is not None)


def _clamped(newest: datetime | None) -> datetime | None:
    # A lastmod in the future must not become a future Last-Modified (RFC 9110 8.8.2.1).
    return None if newest is None else min(newest, datetime.now(UTC))


def _view_parts(plan: Plan[S]) -> list[object]:
    # An HTML page also shows what depends on the totals (page N of M, next / previous
    # links, the summary): they enter its ETag, so a grown source renews the page.
    view = plan.view
    if view is None:
        return []
    parts: list[object] = [(view.title, view.summary, tuple(view.links), view.first)]
    return parts if view.feed is None else [*parts, view.feed]


def conclude(site: Site[S], pending: Pending[S], plan: Plan[S], facts: Facts) -> Reply | Ready[S]:
    """Work out the validators; answer 304 and HEAD when they are known."""
    ready = prepare(site, pending, plan, facts)
    if ready.validators is None:
        return ready
    answered = answer_known(ready, ready.validators, None)
    return ready if answered is None else answered


def prepare(site: Site[S], pending: Pending[S], plan: Plan[S], facts: Facts) -> Ready[S]:
    """Work out the document's headers and, when its sources' facts allow, validators."""
    plan.settle(facts.newest)
    headers = _document_headers(site, pending, plan)
    validators: Validators | None = None
    newest = None
    if plan.kind == "index":
        # The index is fully known without reading an entry: locs and lastmods.
        parts: list[object] = [(child.loc, child.lastmod) for child in plan.children]
        parts += _view_parts(plan)
        etag = fingerprint_etag(pending.identity, parts, pending.coding)
        newest = _newest_instant([c.lastmod for c in plan.children])
        validators = Validators(etag, _clamped(newest))
    elif facts.fingerprints and all(f is not None for f in facts.fingerprints):
        ranges = [(s.name, start, stop) for s, start, stop in plan.ranges()]
        parts = [*zip(ranges, facts.fingerprints, strict=True), *_view_parts(plan)]
        etag = fingerprint_etag(pending.identity, parts, pending.coding)
        newest = _newest_instant(facts.newest)
        validators = Validators(etag, _clamped(newest))
    ready = Ready(
        plan,
        headers,
        validators,
        None if validators is None else cache_key_of(validators),
        pending.coding,
        pending.identity,
        pending.head,
        pending.request,
        pending.sized,
        newest,
    )
    return ready


# -- remembered answers: 304s and cache hits without working the plan out again ---------


def whole_fingerprints(pending: Pending[UrlSource]) -> dict[str, object]:
    """The whole-source fingerprints of the document's sources, by name (none for
    robots.txt, which is never remembered: its counts may fail and it is small)."""
    if pending.target.kind == "robots":
        return {}
    return {source.name: source.fingerprint(0, WHOLE) for source in pending.sources}


def answer_key(pending: Pending[S], whole: Mapping[str, object], site: Site[S]) -> Hashable | None:
    """The key of the request's document in ``site.answers``, or None (not remembered:
    robots.txt, and a feed with an age limit, which changes with time alone)."""
    if pending.target.kind == "robots":
        return None
    if pending.target.kind == "feed" and site.feed_max_days is not None:
        return None
    document = (pending.target, pending.base.url, pending.coding, pending.sized)
    return Answers.key(document, [source.name for source in pending.sources], whole)


def remembered(
    site: Site[S], pending: Pending[S], whole: Mapping[str, object]
) -> tuple[Hashable | None, Answer | None, Reply | None]:
    """The request's key in ``site.answers``, the answer kept there, and the 304 or
    HEAD it gives (None when the body is needed, or nothing is remembered)."""
    memo = answer_key(pending, whole, site)
    answer = None if memo is None else site.answers.get(memo)
    return memo, answer, None if answer is None else remembered_reply(pending, answer)


def remembered_reply(pending: Pending[S], answer: Answer) -> Reply | None:
    """A 304 or a HEAD answered from a remembered answer; None: the body is needed."""
    if_none_match = pending.request.get("if-none-match")
    if if_none_match == answer.etag:
        # What crawlers and caches send: the tag they were given, as it was. The 304
        # needs neither the clamped Last-Modified nor a parse of the header.
        return Reply(304, list(answer.not_modified), iter(()))
    if if_none_match is not None or "if-modified-since" in pending.request:
        validators = Validators(answer.etag, _clamped(answer.newest))
        if is_not_modified(pending.request, validators):
            return Reply(304, list(answer.not_modified), iter(()))
    if pending.head:
        return Reply(200, [*answer.headers, *_validator_headers(answer)], iter(()))
    return None


def cached_reply(answer: Answer, hit: bytes) -> Reply:
    """The 200 of a remembered answer whose document was in the page cache."""
    headers = [*answer.headers, *_validator_headers(answer), ("Content-Length", str(len(hit)))]
    return Reply(200, headers, [hit])


def _validator_headers(answer: Answer) -> Sequence[tuple[str, str]]:
    # Made once with the answer, unless its newest lastmod is still in the future.
    newest = answer.newest
    if newest is not None and newest > datetime.now(UTC):
        return Validators(answer.etag, _clamped(newest)).headers()
    return answer.validator_headers


def remember_answer(site: Site[S], key: Hashable | None, ready: Ready[S]) -> None:
    """Keep ``ready``'s validators under ``key`` (when it has both)."""
    validators = ready.validators
    if key is not None and validators is not None and validators.etag is not None:
        site.answers.put(key, Answer(ready.headers, validators.etag, ready.newest, ready.cache_key))


def cache_key_of(validators: Validators) -> str | None:
    """The key of a document in the page cache (and of its shared render): its ETag."""
    etag = validators.etag
    return None if etag is None else etag.removeprefix("W/").strip('"')


def answer_known(ready: Ready[S], validators: Validators, length: int | None) -> Reply | None:
    # 304 and HEAD once the validators are known; None: send the body.
    if is_not_modified(ready.request, validators):
        return Reply(304, not_modified_headers(validators, ready.headers), iter(()))
    if ready.head:
        # An iterator, not an empty tuple: a WSGI stack would take a sized empty body for
        # "Content-Length: 0", a lie about the GET response's length.
        return Reply(200, ready.full_headers(validators, length), iter(()))
    return None


# -- spooling: validators for sources without a fingerprint ----------------------------


class Spool:
    """A rendered document on its way to the client: bytes, digest, newest lastmod."""

    def __init__(self, coding: str, text: bool = False) -> None:
        self.file: IO[bytes] = SpooledTemporaryFile(max_size=SPOOL_MEMORY)  # noqa: SIM115
        self._hasher = hashlib.sha256()
        # A text sitemap's bytes carry no lastmod: its dates are digested apart, so a
        # remembered Last-Modified can be checked (see sitemap_core.memory.recall).
        self._dates = hashlib.sha256() if text else None
        self._gzip = GzipStream() if coding == "gzip" else None
        self.newest: datetime | None = None
        #: Every entry seen so far had a lastmod (else no Last-Modified).
        self.all_dated = True
        self.length = 0
        #: SHA-256 of the uncompressed document, once :meth:`finish` ran.
        self.digest = b""
        #: SHA-256 of the first uncompressed chunk (see :class:`.recall.Recalled`).
        self.first = b""

    @property
    def dates(self) -> bytes | None:
        """The digest of a text sitemap's lastmods (see :func:`.recall.hash_dates`)."""
        return None if self._dates is None else self._dates.digest()

    def observe(self, batch: list[Entry]) -> None:
        """Track the newest lastmod of what is written (for Last-Modified).

        One rule for every document: Last-Modified is sent only when every entry has a
        lastmod (an undated entry may have changed at any time); it is then the newest.
        """
        if self._dates is not None:
            hash_dates(self._dates, batch)
        if not self.all_dated:
            return
        for entry in batch:
            if entry.lastmod is None:
                self.all_dated = False
                self.newest = None
                return
            instant = lastmod_instant(entry.lastmod)
            if self.newest is None or instant > self.newest:
                self.newest = instant

    def write(self, chunk: bytes) -> None:
        """Add an uncompressed chunk of the document."""
        if not self.first:
            self.first = hashlib.sha256(chunk).digest()
        self._hasher.update(chunk)
        self._put(self._gzip.feed(chunk) if self._gzip is not None else chunk)

    def finish(self, identity: str, coding: str) -> Validators:
        """Close the document; return its validators."""
        if self._gzip is not None:
            self._put(self._gzip.close())
        self.file.seek(0)
        self.digest = self._hasher.digest()
        return Validators(digest_etag(identity, self.digest, coding), _clamped(self.newest))

    def chunks(self) -> Iterator[bytes]:
        """The stored bytes, in chunks, closing the file at the end."""
        return read_chunks(self.file)

    def _put(self, data: bytes) -> None:
        if data:
            self.file.write(data)
            self.length += len(data)


def read_chunks(file: IO[bytes]) -> Iterator[bytes]:
    """The bytes of ``file`` from where it stands, in chunks, closing it at the end."""
    try:
        while chunk := file.read(CHUNK_BYTES):
            yield chunk
    finally:
        file.close()


def sized_body(chunks: Iterator[bytes]) -> tuple[int, Iterator[bytes]]:
    """Read ``chunks`` whole into a spool: their length, and the bytes to send.

    For a client that cannot be told of a cut transfer (see :func:`is_sized`): a failure
    raises here, before the first byte, and becomes a 500.
    """
    file: IO[bytes] = SpooledTemporaryFile(max_size=SPOOL_MEMORY)  # noqa: SIM115
    length = 0
    try:
        for chunk in chunks:
            file.write(chunk)
            length += len(chunk)
    except BaseException:
        file.close()
        raise
    file.seek(0)
    return length, read_chunks(file)


def finish_spooled(ready: Ready[S], spool: Spool) -> Reply:
    """The reply of a spooled document: 304, HEAD or the stored bytes."""
    validators = spool.finish(ready.identity, ready.coding)
    answered = answer_known(ready, validators, spool.length)
    if answered is not None:
        spool.file.close()
        return answered
    return Reply(200, ready.full_headers(validators, spool.length), spool.chunks())


# -- remembered validators: sources without a fingerprint -----------------------------


def recallable(plan: Plan[S]) -> bool:
    """Whether the validators of ``plan`` may be remembered (see :mod:`.recall`).

    Urlsets and text sitemaps only: an index is known without rendering, an HTML page
    shows totals that no slice check covers, and a news page changes as time passes.
    """
    return (
        plan.kind != "index"
        and plan.view is None
        and not any(source.limits.news for source, _, _ in plan.slices)
    )


def recalled_plan(site: Site[S], pending: Pending[S]) -> tuple[Plan[S], Recalled] | None:
    """The plan of a remembered document, made from its remembered counts, or None."""
    if pending.target.kind not in ("root", "page") or pending.target.fmt == "html":
        return None
    recalled = site.recall.get(pending.identity)
    if (
        recalled is None
        or not recalled.armed
        or set(recalled.counts) != {s.name for s in pending.sources}
    ):
        return None
    plan = site.plan(pending.target, recalled.counts, pending.base)
    if plan is None or not recallable(plan):
        return None
    return plan, recalled


def recalled_ready(
    site: Site[S], pending: Pending[S], plan: Plan[S], recalled: Recalled
) -> Ready[S]:
    """The headers and remembered validators of a document to stream at once."""
    validators = Validators(
        digest_etag(pending.identity, recalled.digest, pending.coding), _clamped(recalled.newest)
    )
    return Ready(
        plan,
        _document_headers(site, pending, plan),
        validators,
        None,  # never cached: only the walk that streams it can tell it is current
        pending.coding,
        pending.identity,
        pending.head,
        pending.request,
        pending.sized,
    )


def streams_recalled(pending: Pending[S]) -> bool:
    """A plain GET streams on remembered validators; HEAD and conditional requests are
    answered from a checked render instead, so a 304 always describes current data, and
    so is a request that cannot be streamed (HTTP/1.0: see :func:`is_sized`)."""
    request = pending.request
    conditional = "if-none-match" in request or "if-modified-since" in request
    return not (pending.head or conditional or pending.sized)


def remember(site: Site[S], ready: Ready[S], counts: Mapping[str, int], spool: Spool) -> None:
    """Remember what a spooled render of a recallable document found.

    Not when a source counted no entry: it has no slice in the plan, so no walk would
    read it again, and its growth would go unseen (the document served stale, 304s too).
    """
    if recallable(ready.plan) and all(counts.values()):
        found = Recalled(dict(counts), spool.digest, spool.newest, spool.dates, spool.first)
        site.recall.found(ready.identity, found)


def _respond_recalled(
    site: Site[UrlSource], pending: Pending[UrlSource], plan: Plan[UrlSource], recalled: Recalled
) -> Reply | None:
    # None: what was remembered no longer holds (counts changed); count afresh.
    ready = recalled_ready(site, pending, plan, recalled)
    text = plan.kind == "text"
    if not streams_recalled(pending):
        spooled = _spooled(site, ready, recalled.counts, Check(recalled.counts, text=False))
        if spooled is None:
            site.recall.disarm(ready.identity)
        return spooled
    check = Check(recalled.counts, text, expected=recalled)
    chunks = iter_body(plan, observe=check.observe if text else None, check=check)
    try:
        if ready.coding == "gzip":
            chunks = gzip_chunks(chunks)
        body = prime(chunks)
    except StaleValidatorsError:
        # Nothing was sent: this request counts and renders afresh.
        site.recall.disarm(ready.identity)
        return None
    assert ready.validators is not None
    return Reply(200, ready.full_headers(ready.validators, None), _disarming(body, site, ready))


def _disarming(body: Iterator[bytes], site: Site[S], ready: Ready[S]) -> Iterator[bytes]:
    # A streamed document found stale is cut (the error goes on to the server) and
    # disarmed, so the next request renders it afresh.
    try:
        yield from body
    except StaleValidatorsError:
        site.recall.disarm(ready.identity)
        raise


def _spooled(
    site: Site[UrlSource],
    ready: Ready[UrlSource],
    counts: Mapping[str, int],
    check: Check | None = None,
) -> Reply | None:
    """Render ``ready``'s document whole before its first byte (its ETag is the digest
    of its bytes) and remember what it found; None when ``check`` saw that the counts
    the plan was made from no longer hold."""
    spool = Spool(ready.coding, text=ready.plan.kind == "text")
    try:
        for chunk in iter_body(ready.plan, observe=spool.observe, check=check):
            spool.write(chunk)
    except BaseException:
        spool.file.close()  # the temporary file goes now, not with the traceback
        raise
    if check is not None and not check.counts_hold:
        spool.file.close()
        return None
    reply = finish_spooled(ready, spool)
    remember(site, ready, counts, spool)
    return reply


# -- the synchronous loop ------------------------------------------------------------------


def iter_body(
    plan: Plan[UrlSource],
    batch_size: int = BATCH_SIZE,
    observe: Callable[[list[Entry]], None] | None = None,
    check: Check | None = None,
) -> Iterator[bytes]:
    """Stream the plan's uncompressed document as chunks, pulling sources synchronously.

    With ``check`` (a plan made from remembered counts), each slice is verified as it
    is read, and :meth:`Check.finish` runs before the last chunk.
    """
    encoder = plan.encoder()
    if plan.children:
        chunk = encoder.feed(plan.children)
        if chunk:
            yield chunk
    for source, start, stop in plan.slices:
        pulled = 0
        probe = check is not None and check.probes(source.name, stop)
        try:
            batches = source.batches(start, stop + probe, batch_size)
            for batch in probed(batches, stop - start, check, probe):
                pulled += len(batch)
                chunk = write_batch(plan, encoder, source, batch, observe)
                if chunk:
                    if check is not None:
                        check.chunk(chunk)
                    yield chunk
        except InvalidEntryError as exc:
            raise named(exc, source.name) from exc
        if check is None:
            check_complete(source.name, start, stop, pulled)
    last = encoder.close()
    if check is not None:
        check.chunk(last)
        check.finish()
    yield last


def write_batch(
    plan: Plan[S],
    encoder: DocumentEncoder,
    source: S,
    batch: list[Entry],
    observe: Callable[[list[Entry]], None] | None,
) -> bytes:
    """Check one batch of ``source`` (origin, news rules), show it to ``observe``, and
    feed it to ``encoder``; the sync and async loops differ only in how they pull."""
    plan.check(batch, source.name)
    if source.limits.news:
        check_news(batch, source.name)
    if observe is not None:
        observe(batch)
    # max_entry_bytes bounds the XML element; the HTML view has its own, looser cap.
    bound = None if plan.view is not None else source.limits.max_entry_bytes
    return encoder.feed(batch, bound, source.name)


def named(error: InvalidEntryError, source: str) -> InvalidEntryError:
    """``error`` naming ``source``: an ``Entry`` built in the source's own code could not
    say where it came from."""
    return error if error.source is not None else error.with_source(source)


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
    except StaleValidatorsError as exc:
        log_stale(exc)
        raise
    except Exception:
        logger.exception("sitemap source failed mid-response; the transfer is cut")
        raise


def log_stale(error: StaleValidatorsError) -> None:
    """Log a document cut because its data changed (expected now and then: no traceback)."""
    logger.warning("sitemap document cut: %s", error)


def _kept(chunks: Iterator[bytes], cache: PageCache, key: str) -> Iterator[bytes]:
    # Stored only once the whole document went out: a cut transfer caches nothing.
    parts: list[bytes] | None = []
    size = 0
    for chunk in chunks:
        if parts is not None:
            size += len(chunk)
            if size <= cache.max_item_bytes:
                parts.append(chunk)
            else:
                parts = None  # too large to keep: stop holding it
        yield chunk
    if parts is not None:
        cache_set(cache, key, b"".join(parts))


def feed_reply(
    site: Site[S], pending: Pending[S], memo: Hashable | None, items: Sequence[Recent]
) -> Reply:
    """The answer to a request for the feed of recent changes, ``items`` found.

    The feed is small (``feed_size`` entries), so it is rendered whole: its ETag is the
    digest of its bytes, its Last-Modified the newest change, and it is sent with its
    length. With ``memo`` (every source fingerprinted) the answer is remembered and
    the bytes cached, so that the next requests cost what a page's do.
    """
    document = render_feed(pending.base, items)
    headers = [("Content-Type", ATOM_TYPE)]
    if site.gzip:
        headers.append(("Vary", "Accept-Encoding"))
    data = document
    if pending.coding == "gzip":
        headers.append(("Content-Encoding", "gzip"))
        data = b"".join(gzip_chunks(iter([document])))
    headers.append(("Cache-Control", site.cache_control))
    etag = digest_etag(pending.identity, hashlib.sha256(document).digest(), pending.coding)
    newest = items[0].instant if items else None
    answer = Answer(headers, etag, newest, cache_key_of(Validators(etag, None)))
    if memo is not None:
        site.answers.put(memo, answer)
        if site.cache is not None and answer.cache_key is not None:
            cache_set(site.cache, answer.cache_key, data)
    reply = remembered_reply(pending, answer)
    return cached_reply(answer, data) if reply is None else reply


def respond(
    site: Site[UrlSource],
    method: str,
    path: str,
    base_url: Callable[[], BaseURL],
    request: Mapping[str, str] = NO_HEADERS,
    protocol: str = "HTTP/1.1",
) -> Reply | None:
    """Answer a request synchronously; None when ``path`` is not the site's.

    ``request`` holds the lower-cased request headers the core reads, ``protocol`` the
    request's HTTP version (see :func:`is_sized`). A source error before the first byte
    propagates to the caller, which answers 500; after it, the body raises mid-stream
    and the server cuts the transfer. The sources' facts are asked in one request scope
    (see :mod:`sitemap_core.sources.scope`).
    """
    scope = enter_request()
    try:
        return _respond(site, method, path, base_url, request, protocol)
    finally:
        leave_request(scope)


def _respond(
    site: Site[UrlSource],
    method: str,
    path: str,
    base_url: Callable[[], BaseURL],
    request: Mapping[str, str],
    protocol: str,
) -> Reply | None:
    step = begin(site, method, path, base_url, request, protocol)
    if not isinstance(step, Pending):
        return step
    whole = whole_fingerprints(step)
    memo, answer, reply = remembered(site, step, whole)
    if reply is not None:
        return reply
    if answer is not None and site.cache is not None and answer.cache_key is not None:
        hit = cache_get(site.cache, answer.cache_key)
        if hit is not None:
            return cached_reply(answer, hit)
    if step.target.kind == "feed":
        since = cutoff(site.feed_max_days)
        items = recent_changes(step.sources, site.feed_size, since)
        return feed_reply(site, step, memo, items)
    recalled = recalled_plan(site, step)
    if recalled is not None:
        answered = _respond_recalled(site, step, *recalled)
        if answered is not None:
            return answered
    if step.target.kind == "robots":
        counts = robots_counts(lambda: known_counts(site, step.sources, whole))
    else:
        counts = known_counts(site, step.sources, whole)
    plan = decide(site, step, counts)
    if isinstance(plan, Reply):
        return plan
    ranges = plan.ranges()
    facts = Facts(
        []
        if plan.kind == "index"
        else [known_fact(site, whole, s, "fingerprint", a, b, s.fingerprint) for s, a, b in ranges],
        [known_fact(site, whole, s, "newest", a, b, s.newest) for s, a, b in ranges],
    )
    ready = prepare(site, step, plan, facts)
    remember_answer(site, memo, ready)
    if ready.validators is not None:
        answered = answer_known(ready, ready.validators, None)
        if answered is not None:
            return answered
    if ready.validators is None:
        assert counts is not None  # only robots.txt goes without counts
        spooled = _spooled(site, ready, counts)
        assert spooled is not None  # no check: the counts were just taken
        return spooled
    cache, key = site.cache, ready.cache_key
    if cache is not None and key is not None and (answer is None or answer.cache_key != key):
        hit = cache_get(cache, key)
        if hit is not None:
            headers = ready.full_headers(ready.validators, len(hit))
            return Reply(200, headers, [hit])
    chunks = iter_body(plan)
    if ready.coding == "gzip":
        chunks = gzip_chunks(chunks)
    length = None
    if ready.sized:
        length, body = sized_body(chunks)
    else:
        body = prime(chunks)
    if cache is not None and key is not None:
        body = _kept(body, cache, key)
    return Reply(200, ready.full_headers(ready.validators, length), body)
