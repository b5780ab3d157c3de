"""What a source may remember for the length of one request, and no longer.

A request asks a source for its fingerprint first, then for counts and newest dates
(one per child page of an index). A source whose fingerprint is a version read from
the database answers the rest for that version, from what it knows of it, rather
than reading the version again for every child: it notes the version here, in the
request's scope, and :func:`respond` / :func:`respond_async` open one scope per
request. Outside a request (app code calling ``len(source)``) there is no scope, and
a source reads the version itself.

The scope is one mutable dict behind a context variable, so it follows the request
into the worker threads the ASGI front runs sync sources in (each thread call runs
in a copy of the context, which refers to the same dict), and ends with it.
"""

from __future__ import annotations

from contextvars import ContextVar, Token

__all__ = ["RequestScope", "enter_request", "leave_request", "request_notes"]

_NOTES: ContextVar[dict[int, object] | None] = ContextVar("sitemap_request_notes", default=None)

#: What :func:`enter_request` returns and :func:`leave_request` takes back.
RequestScope = Token[dict[int, object] | None] | None


def enter_request() -> RequestScope:
    """Open a fresh scope for one request; None when one is open already (a request
    answered inside another keeps the outer scope). Plain functions, not a context
    manager: this runs on every 304, where a generator-based one costs a microsecond."""
    if _NOTES.get() is not None:
        return None
    return _NOTES.set({})


def leave_request(scope: RequestScope) -> None:
    """Close the scope :func:`enter_request` opened (nothing for None)."""
    if scope is not None:
        _NOTES.reset(scope)


def request_notes() -> dict[int, object] | None:
    """The current request's notes, by ``id()`` of the source that wrote them; None
    outside a request. A source keeps only what holds for the whole request."""
    return _NOTES.get()
