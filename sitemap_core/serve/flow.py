"""Serving a request, written once: from method, path and headers to a :class:`Reply`.

The flow is sans-I/O. It is a generator that yields what it needs (a fact of a
source, a page-cache read or write, the recent changes, a rendered feed, a document
written to a spool or opened as a stream) and is sent each answer back; it returns
the :class:`Reply`, or None when the path is not the site's. Two short drivers run
it, one synchronous (:mod:`sitemap_core.serve.drive_sync`) and one asynchronous
(:mod:`sitemap_core.serve.drive_async`); they differ only in how they answer a need.
A need that fails is thrown back into the flow at the ``yield`` that asked for it.

The path is one way::

    begin()      match, method, host, robots.txt, content coding     (no I/O)
    remembered   the answer kept under the sources' whole fingerprints
    counts       source.count() for the sources the target needs (of a source that
                 keeps stable pages, the page asked, or the summary of its pages,
                 which stream as an index is written: see sitemap_core.sources.pages)
    decide()     404, or the Plan of the document                     (no I/O)
    facts        source.fingerprint() / newest() for the plan's ranges
    prepare()    validators; 304 and HEAD answered here               (no I/O)
    body         from the cache, streamed (and kept in the cache), or, for sources
                 without a fingerprint, written to a spool first so the ETag is known
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Generator, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Generic, Literal, TypeAlias

from sitemap_core.memory.cache import PageCache
from sitemap_core.memory.recall import Check, Recalled
from sitemap_core.model.hosts import BaseURL
from sitemap_core.model.recent import Recent, cutoff
from sitemap_core.serve.answers import Answer
from sitemap_core.serve.body import Delivery, DocumentWriter
from sitemap_core.serve.compress import gzip_chunks
from sitemap_core.serve.document import (
    GZIP_TYPE,
    Facts,
    Ready,
    answer_known,
    cache_key_of,
    cached_reply,
    finish_spooled,
    prepare,
    remember_answer,
    remembered,
    remembered_reply,
)
from sitemap_core.serve.http import Reply
from sitemap_core.serve.recalled import (
    recalled_plan,
    recalled_ready,
    remember,
    streams_recalled,
)
from sitemap_core.serve.request import Pending, begin, decide
from sitemap_core.serve.site import Plan, S, Site, Target
from sitemap_core.serve.spool import Spool
from sitemap_core.serve.validators import Validators, digest_etag
from sitemap_core.sources.base import WHOLE
from sitemap_core.sources.pages import Page, Summary
from sitemap_core.write.feed import ATOM_TYPE, render_feed

__all__ = [
    "Body",
    "CacheRead",
    "CacheWrite",
    "Driving",
    "Encode",
    "Fact",
    "Fill",
    "Flow",
    "Need",
    "Open",
    "Opened",
    "RecentChanges",
    "RenderFeed",
    "index_parts",
    "serve",
]

logger = logging.getLogger("sitemap_core")


# -- what the flow asks its driver for ------------------------------------------------


@dataclass(frozen=True)
class Fact(Generic[S]):
    """``source.count()``, or ``source.fingerprint(start, stop)`` / ``newest(...)`` /
    ``pages(first, stop)`` (the stable pages numbered ``[first, stop)``, a list) /
    ``summary()`` (of all its stable pages).

    ``shared``: the key under which concurrent requests asking the same fact may be
    given one answer (a driver may share it or not); None: each asks its own.
    """

    source: S
    kind: Literal["count", "fingerprint", "newest", "pages", "summary"]
    start: int = 0
    stop: int = 0
    shared: str | None = None


@dataclass(frozen=True)
class CacheRead:
    """The bytes under ``key`` in the site's page cache ``cache``, or None."""

    cache: PageCache
    key: str


@dataclass(frozen=True)
class CacheWrite:
    """Store ``data`` under ``key`` in the site's page cache ``cache``; answered with None."""

    cache: PageCache
    key: str
    data: bytes


@dataclass(frozen=True)
class RecentChanges(Generic[S]):
    """The newest ``limit`` changes of ``sources`` after ``since``, newest first."""

    sources: Sequence[S]
    limit: int
    since: datetime | None


@dataclass(frozen=True)
class RenderFeed:
    """The feed's Atom bytes for ``base``, and those bytes as sent in ``coding``."""

    base: BaseURL
    items: Sequence[Recent]
    coding: str

    def render(self) -> tuple[bytes, bytes]:
        """The document, and the bytes to send (gzipped when asked)."""
        document = render_feed(self.base, self.items)
        if self.coding != "gzip":
            return document, document
        return document, b"".join(gzip_chunks(iter([document])))


@dataclass(frozen=True)
class Body(Generic[S]):
    """A document to stream: what a driver needs to write and deliver it.

    ``recalled`` (a document streamed on remembered validators) makes each render
    check itself against what was remembered; ``key`` is where the whole document is
    kept in the page cache (and under which concurrent renders may be shared).
    """

    plan: Plan[S]
    coding: str
    sized: bool = False
    key: str | None = None
    keep: bool = False
    recalled: Recalled | None = None
    identity: str = ""

    def writer(self) -> DocumentWriter[S]:
        """The writer of one render; a recalled document's checks itself as it goes."""
        recalled = self.recalled
        if recalled is None:
            return DocumentWriter(self.plan)
        check = Check(recalled.counts, self.plan.kind == "text", expected=recalled)
        return DocumentWriter(self.plan, check.observe, check)

    def identity_twin(self) -> Body[S] | None:
        """The identity coding of a gzip document streamed on remembered validators,
        under its own key: a driver may gzip the twin's shared render rather than walk
        the sources again. None for any other body."""
        if self.coding != "gzip" or self.recalled is None:
            return None
        etag = digest_etag(self.identity, self.recalled.digest, "identity")
        return replace(self, coding="identity", key=cache_key_of(Validators(etag, None)))

    def delivery(self, site: Site[S]) -> Delivery:
        """What is done with the chunks on their way out (see :class:`Delivery`)."""
        cache = site.cache if self.keep else None
        recall = site.recall if self.recalled is not None else None
        return Delivery(cache, self.key, recall, self.identity)


@dataclass(frozen=True)
class Fill(Generic[S]):
    """Write the whole document of ``plan`` into ``spool`` (with the spool's check).

    Answered with the spool that holds the document: this one, or, when ``shared`` is
    a key and the driver shares, the spool of another request's identical fill, with
    a claim on it for this request (see :mod:`sitemap_core.serve.spool`).
    """

    plan: Plan[S]
    spool: Spool
    shared: str | None = None

    def writer(self) -> DocumentWriter[S]:
        """The writer of the document, showing each batch to the spool."""
        return DocumentWriter(self.plan, self.spool.observe, self.spool.check)


@dataclass(frozen=True)
class Encode:
    """The gzip coding of the document in the identity ``spool``: answered with a
    spool of its own (see :meth:`Spool.gzipped`), or, ``shared`` as for :class:`Fill`,
    with the one another request's identical encoding wrote, claimed for this one."""

    spool: Spool
    shared: str | None = None


@dataclass(frozen=True)
class Open(Generic[S]):
    """Start streaming ``body``: answered with :class:`Opened`, or None when a
    remembered document turned out stale before its first byte."""

    body: Body[S]


@dataclass(frozen=True)
class Opened:
    """A started body (its first chunk already read) and its length, if known.

    ``chunks`` is an iterator for the sync driver and an async iterator for the async
    one: the flow only hands it on, in the :class:`Reply`.
    """

    chunks: Any
    length: int | None = None


#: What the flow may yield.
Need: TypeAlias = (
    Fact[Any]
    | CacheRead
    | CacheWrite
    | RecentChanges[Any]
    | RenderFeed
    | Fill[Any]
    | Encode
    | Open[Any]
)
#: The flow, or a step of it: yields needs, is sent their answers, returns its result.
Flow: TypeAlias = Generator[Need, Any, Any]


class Driving:
    """A flow being run by a driver, which only answers needs.

    Iterating gives the flow's needs; the driver answers each with :meth:`answer`, or
    :meth:`fail` to throw the error back into the flow where the need was asked. When
    the iteration ends, :attr:`result` holds what the flow returned.
    """

    def __init__(self, steps: Flow) -> None:
        self._steps = steps
        self._answer: Any = None
        self._error: Exception | None = None
        #: What the flow returned, once the iteration has ended.
        self.result: Any = None

    def __iter__(self) -> Iterator[Need]:
        while True:
            answer, error = self._answer, self._error
            self._answer, self._error = None, None
            try:
                need = self._steps.send(answer) if error is None else self._steps.throw(error)
            except StopIteration as done:
                self.result = done.value
                return
            yield need

    def answer(self, value: Any) -> None:
        """Send ``value`` to the flow as the answer to its last need."""
        self._answer = value

    def fail(self, error: Exception) -> None:
        """Throw ``error`` into the flow, at the need it failed to answer."""
        self._error = error


# -- the flow -------------------------------------------------------------------------


def serve(
    site: Site[S],
    method: str,
    path: str,
    base_url: Callable[[], BaseURL],
    request: Mapping[str, str],
    protocol: str,
) -> Flow:
    """The flow of one request; returns its :class:`Reply`, or None for another path."""
    step = begin(site, method, path, base_url, request, protocol)
    if not isinstance(step, Pending):
        return step
    whole: dict[str, object] = {}
    if step.target.kind != "robots":
        # robots.txt is never remembered: its counts may fail and it is small.
        yield from _whole_fingerprints(step.sources, whole)
    memo, answer, reply = remembered(site, step, whole)
    if reply is None:
        reply = yield from _cached_answer(site, answer)
    if reply is not None:
        return reply
    if step.target.kind == "feed":
        return (yield from _feed(site, step, memo))
    recalled = recalled_plan(site, step)
    if recalled is not None:
        answered = yield from _recalled(site, step, *recalled)
        if answered is not None:
            return answered
    return (yield from _document(site, step, whole, memo, answer))


def _cached_answer(site: Site[S], answer: Answer | None) -> Flow:
    # The page cache's copy of a remembered answer's document, if it holds one.
    if answer is None or site.cache is None or answer.cache_key is None:
        return None
    hit = yield CacheRead(site.cache, answer.cache_key)
    return None if hit is None else cached_reply(answer, hit)


def _document(
    site: Site[S],
    step: Pending[S],
    whole: dict[str, object],
    memo: Hashable | None,
    answer: Answer | None,
) -> Flow:
    # After what was remembered: count, plan, facts, validators, then the body.
    stable: dict[str, Sequence[Page] | Summary] = {}
    counts = yield from _counted(site, step, whole, stable)
    plan = decide(site, step, counts, stable)
    if isinstance(plan, Reply):
        return plan
    facts = yield from _facts(site, whole, plan)
    ready = prepare(site, step, plan, facts)
    remember_answer(site, memo, ready)
    if ready.validators is None:
        return (yield from _spooled(site, ready, counts))
    answered = answer_known(ready, ready.validators, None)
    if answered is not None:
        return answered
    key = ready.cache_key
    if site.cache is not None and key is not None and (answer is None or answer.cache_key != key):
        hit = yield CacheRead(site.cache, key)
        if hit is not None:
            return Reply(200, ready.full_headers(ready.validators, len(hit)), [hit])
    body = Body(plan, ready.coding, ready.sized, key, keep=site.cache is not None)
    opened = yield Open(body)
    return Reply(200, ready.full_headers(ready.validators, opened.length), opened.chunks)


def _counted(
    site: Site[S],
    step: Pending[S],
    whole: dict[str, object],
    stable: dict[str, Sequence[Page] | Summary],
) -> Flow:
    # The counts of the request's sources, and what their stable pages say (into
    # ``stable``): listed when the whole site fits one file.
    if step.target.kind == "robots":
        return (yield from _robots_counts(site, step.sources, stable, step.base))
    numbers = _numbers(step.target)
    counts = yield from _counts(site, step.sources, whole, stable, step.base, numbers)
    if site.lists_stable_pages(step.target, counts):
        yield from _listed(step.sources, stable)
    return counts


def _whole_fingerprints(sources: Sequence[S], whole: dict[str, object]) -> Flow:
    # The whole-source fingerprints, by name, into ``whole``: the key of the answers
    # and of the known counts and facts.
    for source in sources:
        if source.name not in whole:
            whole[source.name] = yield Fact(source, "fingerprint", 0, WHOLE)


def _numbers(target: Target) -> tuple[int, int] | None:
    # The stable page numbers a target needs: its own for a page, all for its HTML
    # view (which links to its neighbours), else (None) their summary.
    if target.kind != "page":
        return None
    return (target.page, target.page + 1) if target.fmt != "html" else (1, WHOLE)


def _listed(sources: Sequence[S], stable: dict[str, Sequence[Page] | Summary]) -> Flow:
    # The pages of the summarised sources, listed: the whole site fits one file, so
    # they are few (no more than its URLs).
    for source in sources:
        if isinstance(stable.get(source.name), Summary):
            stable[source.name] = yield Fact(source, "pages", 1, WHOLE)


def _counts(
    site: Site[S],
    sources: Sequence[S],
    whole: dict[str, object],
    stable: dict[str, Sequence[Page] | Summary],
    base: BaseURL,
    numbers: tuple[int, int] | None = None,
) -> Flow:
    # The sources' counts, remembered under their whole-source fingerprints (see
    # sitemap_core.memory.known). A source with stable pages gives its pages numbered
    # ``numbers`` instead, or with None the summary of them all (into ``stable``), and
    # counts what they list. A count that nothing remembers (a walk of a plain
    # generator) may be shared by the concurrent requests of one site: a crowd asking
    # the index costs one walk.
    yield from _whole_fingerprints(sources, whole)
    counts: dict[str, int] = {}
    for source in sources:
        if source.limits.stable:
            known = yield from _stable(site, whole, source, numbers)
            site.check_stable(source.name, known)
            stable[source.name] = known
            counts[source.name] = (
                known.urls if isinstance(known, Summary) else sum(page.urls for page in known)
            )
            continue
        fingerprint = whole[source.name]
        count = site.known.count(source.name, fingerprint)
        if count is None:
            # The site's name too: sites of one front may list sources of one name.
            shared = (
                None if fingerprint is not None else f"count|{site.name}|{base.url}|{source.name}"
            )
            count = yield Fact(source, "count", shared=shared)
            site.known.counted(source.name, fingerprint, count)
        counts[source.name] = count
    return counts


def _stable(
    site: Site[S], whole: dict[str, object], source: S, numbers: tuple[int, int] | None
) -> Flow:
    # What a source with stable pages says for a request: the pages numbered
    # ``numbers``, or (None) the summary of them all, each remembered while its whole
    # fingerprint holds, but for the list of all its pages (a query of the database's
    # facts each time, so that a process keeps nothing that grows with the table).
    site.known.counted(source.name, whole[source.name], None)
    if numbers is None:
        return (yield from _known(site, whole, source, "summary", 1, WHOLE))
    if numbers[1] == WHOLE:
        return (yield Fact(source, "pages", *numbers))
    return (yield from _known(site, whole, source, "pages", *numbers))


def _robots_counts(
    site: Site[S], sources: Sequence[S], stable: dict[str, Sequence[Page] | Summary], base: BaseURL
) -> Flow:
    # The counts robots.txt needs, or None (logged) when a source fails to count:
    # crawlers read a failing robots.txt as "disallow everything", which costs far
    # more than a missing index part.
    try:
        return (yield from _counts(site, sources, {}, stable, base))
    except Exception:
        logger.exception("counting the sources for robots.txt failed; listing /sitemap.xml only")
        return None


def index_parts(site: Site[S], base: BaseURL) -> Flow:
    """How many index files robots.txt lists for ``base``: one if a count fails.

    Asked of an app's own robots.txt, outside :func:`serve` (each driver runs it in a
    request scope of its own).
    """
    stable: dict[str, Sequence[Page] | Summary] = {}
    counts = yield from _robots_counts(site, list(site.sources.values()), stable, base)
    return 1 if counts is None else site.index_parts(counts, base, stable)


def _facts(site: Site[S], whole: Mapping[str, object], plan: Plan[S]) -> Flow:
    # What the sources say of the plan's ranges, remembered while a source is unchanged.
    fingerprints: list[object | None] = []
    newest: list[str | None] = []
    for source, start, stop in plan.ranges():
        page = plan.stable.get((source.name, start, stop))
        if page is not None:  # the database keeps a stable page's facts
            fingerprints.append(page.version)
            newest.append(page.lastmod)
            continue
        if plan.kind != "index":  # an index is known from its children alone
            fingerprints.append(
                (yield from _known(site, whole, source, "fingerprint", start, stop))
            )
        newest.append((yield from _known(site, whole, source, "newest", start, stop)))
    stable = sorted({name for name, _, _ in plan.stable} | {run.source.name for run in plan.runs})
    return Facts(fingerprints, newest, [(name, whole.get(name)) for name in stable])


def _known(
    site: Site[S],
    whole: Mapping[str, object],
    source: S,
    kind: Literal["fingerprint", "newest", "pages", "summary"],
    start: int,
    stop: int,
) -> Flow:
    # ``source``'s fact of ``[start, stop)``, or its answer remembered while the
    # source's whole fingerprint holds.
    fingerprint = whole.get(source.name)
    hit, value = site.known.fact(source.name, fingerprint, kind, start, stop)
    if hit:
        return value
    value = yield Fact(source, kind, start, stop)
    site.known.found(source.name, fingerprint, kind, start, stop, value)
    return value


def _spooled(
    site: Site[S], ready: Ready[S], counts: Mapping[str, int], check: Check | None = None
) -> Flow:
    # Write the document whole before its first byte (its ETag is the digest of its
    # bytes) and remember what it found; None when ``check`` saw that the counts the
    # plan was made from no longer hold. Concurrent requests for the same document,
    # made from the same counts, may share one spool, and its gzip coding is written
    # from that spool: one walk for the crowd, whatever the codings it asks.
    shared = f"fill|{site.name}|{ready.identity}|{sorted(counts.items())}|{check is not None}"
    fill = Fill(ready.plan, Spool("identity", ready.plan.kind == "text", check), shared)
    spool: Spool = yield fill
    if spool.check is not None and not spool.check.counts_hold:
        spool.release()
        return None
    if ready.coding == "gzip":
        spool = yield from _gzipped(spool, f"{shared}|gzip")
    reply = finish_spooled(ready, spool)
    remember(site, ready, counts, spool)
    return reply


def _gzipped(identity: Spool, shared: str) -> Flow:
    # The gzip coding of the document in ``identity``, whose claim is then let go.
    try:
        coded: Spool = yield Encode(identity, shared)
    finally:
        identity.release()
    return coded


def _recalled(site: Site[S], pending: Pending[S], plan: Plan[S], recalled: Recalled) -> Flow:
    # A document of sources without a fingerprint, on remembered validators. None:
    # what was remembered no longer holds (counts changed); count afresh.
    ready = recalled_ready(site, pending, plan, recalled)
    if not streams_recalled(pending):
        reply = yield from _spooled(site, ready, recalled.counts, Check(recalled.counts, False))
        if reply is None:
            site.recall.disarm(ready.identity)
        return reply
    assert ready.validators is not None
    key = cache_key_of(ready.validators)
    body = Body(plan, ready.coding, key=key, recalled=recalled, identity=ready.identity)
    opened = yield Open(body)
    if opened is None:
        return None  # nothing was sent: count and render afresh (already disarmed)
    return Reply(200, ready.full_headers(ready.validators, None), opened.chunks)


def _feed(site: Site[S], pending: Pending[S], memo: Hashable | None) -> Flow:
    # The feed is small (feed_size entries), so it is rendered whole: its ETag is the
    # digest of its bytes, its Last-Modified the newest change, and it is sent with
    # its length. With ``memo`` (every source fingerprinted) the answer is remembered
    # and the bytes cached, so that the next requests cost what a page's do.
    since = cutoff(site.feed_max_days)
    items = yield RecentChanges(pending.sources, site.feed_size, since)
    document, data = yield RenderFeed(pending.base, items, pending.coding)
    answer = _feed_answer(site, pending, items, document)
    if memo is not None:
        site.answers.put(memo, answer)
        if site.cache is not None and answer.cache_key is not None:
            yield CacheWrite(site.cache, answer.cache_key, data)
    reply = remembered_reply(pending, answer)
    return cached_reply(answer, data) if reply is None else reply


def _feed_answer(
    site: Site[S], pending: Pending[S], items: Sequence[Recent], document: bytes
) -> Answer:
    if pending.target.gz:
        # sitemap-recent.atom.gz names the gzipped file itself: nothing to negotiate.
        headers = [("Content-Type", GZIP_TYPE)]
    else:
        headers = [("Content-Type", ATOM_TYPE)]
        if site.gzip:
            headers.append(("Vary", "Accept-Encoding"))
        if pending.coding == "gzip":
            headers.append(("Content-Encoding", "gzip"))
    headers.append(("Cache-Control", site.cache_control))
    etag = digest_etag(pending.identity, hashlib.sha256(document).digest(), pending.coding)
    newest = items[0].instant if items else None
    return Answer(headers, etag, newest, cache_key_of(Validators(etag, None)))
