"""Remembered validators in the flow: documents of sources without a fingerprint.

See :mod:`sitemap_core.memory.recall` for what is remembered and checked.
"""

from __future__ import annotations

from collections.abc import Mapping

from sitemap_core.memory.recall import Recalled
from sitemap_core.serve.body import clamped
from sitemap_core.serve.document import Ready, document_headers
from sitemap_core.serve.request import Pending
from sitemap_core.serve.site import Plan, S, Site
from sitemap_core.serve.spool import Spool
from sitemap_core.serve.validators import Validators, digest_etag

__all__ = ["recallable", "recalled_plan", "recalled_ready", "remember", "streams_recalled"]


def recallable(plan: Plan[S]) -> bool:
    """Whether the validators of ``plan`` may be remembered (see :mod:`.recall`).

    Urlsets and text sitemaps only: an index is known without rendering, an HTML page
    shows totals that no slice check covers, and a news page changes as time passes.
    """
    return (
        plan.kind != "index"
        and plan.view is None
        and not plan.stable  # known from the database, and absent from remembered counts
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
        digest_etag(pending.identity, recalled.digest, pending.coding), clamped(recalled.newest)
    )
    return Ready(
        plan,
        document_headers(site, pending, plan),
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
