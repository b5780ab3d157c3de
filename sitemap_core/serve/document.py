"""A document's headers and validators, and the answers remembered under them.

:func:`prepare` works the validators out from the sources' facts without rendering;
:func:`answer_known` answers 304 and HEAD once they are known; ``site.answers``
remembers them under the sources' whole fingerprints (:func:`remembered`), so the
next request for the same document needs neither counts nor facts.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Generic

from sitemap_core.model.values import lastmod_instant
from sitemap_core.serve.answers import Answer, Answers
from sitemap_core.serve.body import clamped
from sitemap_core.serve.http import Reply
from sitemap_core.serve.request import Pending
from sitemap_core.serve.site import Plan, S, Site
from sitemap_core.serve.spool import Spool
from sitemap_core.serve.validators import (
    Validators,
    fingerprint_etag,
    is_not_modified,
    not_modified_headers,
)
from sitemap_core.write.html import CONTENT_SECURITY_POLICY

__all__ = [
    "GZIP_TYPE",
    "Facts",
    "Ready",
    "answer_key",
    "answer_known",
    "cache_key_of",
    "cached_reply",
    "document_headers",
    "finish_spooled",
    "prepare",
    "remember_answer",
    "remembered",
    "remembered_reply",
]


GZIP_TYPE = "application/gzip"


@dataclass
class Facts:
    """What the sources said of the plan's ranges (same order as ``Plan.ranges``)."""

    fingerprints: list[object | None]
    newest: list[str | None]
    #: The whole fingerprints of the sources with stable pages among the plan's: they
    #: move with any write to any of their pages (an index's validators from them).
    wholes: list[object] = field(default_factory=list)


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
    #: The newest lastmod of the document before clamping to now (see
    #: :func:`~sitemap_core.serve.body.clamped`).
    newest: datetime | None = None

    def full_headers(self, validators: Validators, length: int | None) -> list[tuple[str, str]]:
        """The headers of a 200: the document's, the validators, the length if known."""
        headers = [*self.headers, *validators.headers()]
        if length is not None:
            headers.append(("Content-Length", str(length)))
        return headers


def document_headers(site: Site[S], pending: Pending[S], plan: Plan[S]) -> list[tuple[str, str]]:
    """The headers of the document ``plan`` makes, validators and length aside."""
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


def _children_parts(plan: Plan[S]) -> list[object]:
    # What an index's children put in its ETag: their locs and lastmods, but for the
    # stable pages', which their sources' whole fingerprints stand for.
    stable = plan.stable
    return [
        (child.loc, child.lastmod)
        for child, (source, start, stop, _) in zip(plan.children, plan.child_ranges, strict=True)
        if not stable or (source.name, start, stop) not in stable
    ]


def _view_parts(plan: Plan[S]) -> list[object]:
    # An HTML page also shows what depends on the totals (page N of M, next / previous
    # links, the summary): they enter its ETag, so a grown source renews the page.
    view = plan.view
    if view is None:
        return []
    parts: list[object] = [(view.title, view.summary, tuple(view.links), view.first)]
    return parts if view.feed is None else [*parts, view.feed]


def _index_validators(
    pending: Pending[S], plan: Plan[S], facts: Facts
) -> tuple[Validators, datetime | None]:
    # The index is fully known without reading an entry: locs and lastmods, and for
    # sources with stable pages their whole fingerprints, which move whenever one of
    # their children does, and the summaries of the children that stream.
    runs = [(run.source.name, run.skip, run.take, tuple(run.summary)) for run in plan.runs]
    parts = [*_children_parts(plan), *facts.wholes, *runs, *_view_parts(plan)]
    etag = fingerprint_etag(pending.identity, parts, pending.coding)
    lastmods = [child.lastmod for child in plan.children]
    newest = _newest_instant(lastmods + [run.summary.lastmod for run in plan.runs])
    return Validators(etag, clamped(newest)), newest


def prepare(site: Site[S], pending: Pending[S], plan: Plan[S], facts: Facts) -> Ready[S]:
    """Work out the document's headers and, when its sources' facts allow, validators."""
    plan.settle(facts.newest)
    headers = document_headers(site, pending, plan)
    validators: Validators | None = None
    newest = None
    if plan.kind == "index":
        validators, newest = _index_validators(pending, plan, facts)
    elif facts.fingerprints and all(f is not None for f in facts.fingerprints):
        ranges = [(s.name, start, stop) for s, start, stop in plan.ranges()]
        parts = [*zip(ranges, facts.fingerprints, strict=True), *_view_parts(plan)]
        etag = fingerprint_etag(pending.identity, parts, pending.coding)
        newest = _newest_instant(facts.newest)
        validators = Validators(etag, clamped(newest))
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
        validators = Validators(answer.etag, clamped(answer.newest))
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
    newest = clamped(answer.newest)
    if newest != answer.newest:
        return Validators(answer.etag, newest).headers()
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
    """304 and HEAD once the validators are known; None: send the body."""
    if is_not_modified(ready.request, validators):
        return Reply(304, not_modified_headers(validators, ready.headers), iter(()))
    if ready.head:
        # An iterator, not an empty tuple: a WSGI stack would take a sized empty body for
        # "Content-Length: 0", a lie about the GET response's length.
        return Reply(200, ready.full_headers(validators, length), iter(()))
    return None


def finish_spooled(ready: Ready[S], spool: Spool) -> Reply:
    """The reply of a spooled document: 304, HEAD or the stored bytes."""
    validators = spool.finish(ready.identity, ready.coding)
    answered = answer_known(ready, validators, spool.length)
    if answered is not None:
        spool.release()
        return answered
    return Reply(200, ready.full_headers(validators, spool.length), spool.chunks())
