"""Requests that an identical request is already answering wait for its answer (issue 22).

A crowd arriving at once asks a few documents many times each. A request on the full
path holds its own flow, driver, task group and runner while it waits for the first
request's walk or render (some 12 KB each: for 200 requests at once, enough to map new
pymalloc arenas that stay after the crowd; ``benchmarks/README.md``). Here a request
identical to one in flight (see :func:`identical`) holds one event instead: once the
first request (its leader) has its reply, the follower sends the same status and
headers and reads the same body through a claim of its own, at its own pace:

- a small body (an error, a 304, a HEAD, a cached page): the same bytes;
- a relay (a shared render, :mod:`asgi_sitemap.relay`): a reader of its own from the
  first byte; a render that fails cuts the follower's transfer as it cuts the leader's;
- a spool (a shared walk, :mod:`sitemap_core.serve.spool`): a claim on it, when the
  leader's body is a reading of that spool (:class:`~sitemap_core.serve.spool.Chunks`
  names it: what the follower reads is known, never guessed from the headers).

A follower streaming from a relay watches its client as the leader does (the
middleware gives it a task group then, not while it waits). Any other reply (a body
rendered for the leader alone), and a leader that went away before its reply, are not
handed on: the followers take the full path, as before.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from operator import length_hint

import anyio

from sitemap_core.serve.front import Chunks, Reply, Spool

from .relay import Reading, Relay

__all__ = ["Followers", "Lead", "identical"]

#: A follower's reply and how to give its claim back if it is never sent.
Claim = tuple[Reply, Callable[[], object]]


def identical(
    site: object, method: str, path: str, origin: Hashable, request: Mapping[str, str]
) -> Hashable:
    """What makes two requests get the same answer: the site, method and path, the
    ``origin`` they name (scheme, host, root path, protocol), and the request headers
    the flow reads (``request``: Accept-Encoding, the conditions, Range)."""
    return (id(site), method, path, origin, tuple(sorted(request.items())))


class Lead:
    """The request answering a key, what it was handed while it worked, and the
    requests waiting for its reply."""

    def __init__(self) -> None:
        self.ready = anyio.Event()
        self.waiting = 0
        #: One claim for each request waiting when the reply came.
        self.claims: list[Claim] = []
        self._handed: Callable[[], Claim | None] | None = None
        self._relays: list[tuple[AsyncIterator[bytes], Relay]] = []

    def seen(self, body: AsyncIterator[bytes], relay: Relay) -> None:
        """A body the request was handed, read from ``relay``."""
        self._relays.append((body, relay))

    def give(self, reply: Reply | None) -> None:
        """The leader's reply (None: nothing to hand on); wakes the waiting requests,
        each with a claim of its own."""
        if self.ready.is_set():
            return
        self._handed = None if reply is None else self._claimer(reply)
        if self._handed is not None:
            claims = (self._handed() for _ in range(self.waiting))
            self.claims = [claim for claim in claims if claim is not None]
        self.ready.set()

    def claim(self) -> Claim | None:
        """A claim for a request that came after the reply; None: take the full path."""
        return None if self._handed is None else self._handed()

    def _claimer(self, reply: Reply) -> Callable[[], Claim | None] | None:
        body = reply.body
        if isinstance(body, list | tuple) or length_hint(body, -1) == 0:
            # Bytes in memory, or none (a 304, a HEAD: an empty iterator, read once).
            small = Reply(
                reply.status, reply.headers, body if isinstance(body, list | tuple) else ()
            )
            return lambda: (small, _nothing)
        relay = next((relay for seen, relay in self._relays if seen is body), None)
        if relay is not None:
            return lambda: _relayed(reply, relay)
        if isinstance(body, Chunks):
            # The reply's body is a reading of a spool: the followers read that spool.
            return lambda: _spooled(reply, body.spool)
        return None


class Followers:
    """The requests in flight that identical requests may follow, by key."""

    def __init__(self) -> None:
        self._leads: dict[Hashable, Lead] = {}

    def __len__(self) -> int:
        return len(self._leads)

    async def follow(self, key: Hashable) -> Reply | None:
        """The reply for a request identical to one in flight (once that one has it);
        None when there is none to follow, or it had nothing to hand on."""
        lead = self._leads.get(key)
        if lead is None:
            return None
        if lead.ready.is_set():
            claim = lead.claim()
        else:
            claim = await _waited(lead)
        return None if claim is None else claim[0]

    @contextmanager
    def lead(self, key: Hashable) -> Iterator[Lead]:
        """This request answers ``key``: identical ones follow it until it ends."""
        lead = self._leads[key] = Lead()
        try:
            yield lead
        finally:
            lead.give(None)  # no reply given yet: the followers take the full path
            if self._leads.get(key) is lead:
                del self._leads[key]


async def _waited(lead: Lead) -> Claim | None:
    # The claim taken for this waiting request, or, cancelled, none counted or given back.
    lead.waiting += 1
    try:
        await lead.ready.wait()
    except BaseException:
        if not lead.ready.is_set():
            lead.waiting -= 1
        elif lead.claims:
            lead.claims.pop()[1]()
        raise
    return lead.claims.pop() if lead.claims else None


def _relayed(reply: Reply, relay: Relay) -> Claim | None:
    # A reader of the leader's relay, from its first byte, while its file is open.
    if not relay.readable():
        return None
    reading = Reading(relay)
    return Reply(reply.status, reply.headers, reading), reading.close


def _spooled(reply: Reply, spool: Spool) -> Claim | None:
    # A claim on the leader's spool, read from its start, while its file is open.
    if spool.file.closed:
        return None
    chunks = spool.claim().chunks()
    return Reply(reply.status, reply.headers, chunks), chunks.close


def _nothing() -> None:
    # A small body holds nothing to give back.
    return None
