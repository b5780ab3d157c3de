"""A circuit breaker: stop asking a failing backend for a while, and say so once.

A cache in front of a sitemap is best effort. When its server hangs, every call costs
a full timeout; asked on every request, a frozen Redis makes every request that slow
(and a sync worker serves the next one only after). The breaker turns that into one
timeout per interval: after a failure the backend is not asked for ``retry_after``
seconds; then one caller probes it (the others still skip it) and its answer closes or
re-opens the breaker. Each opening is logged once, as a warning naming the reason,
so a dead backend writes one line per interval instead of a traceback per request.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

__all__ = ["Breaker", "describe"]


def describe(exc: BaseException) -> str:
    """``Type: message``, one line, short: the reason a log line gives."""
    text = " ".join(str(exc).split())
    if len(text) > 200:
        text = text[:197] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Breaker:
    """Whether to ask ``name`` now; thread-safe, cheap when all is well.

    Call :meth:`allow` before each call to the backend: None means skip it (treat it
    as a miss); otherwise it is the call's ticket, to give back with
    :meth:`succeeded` or :meth:`failed` (with what the call raised). The ticket tells
    a call that started before the breaker opened from the probe: a late answer of
    the former neither closes the breaker nor writes a second line.
    """

    def __init__(
        self,
        name: str,
        retry_after: float,
        logger: logging.Logger,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not retry_after > 0:
            raise ValueError(f"retry_after must be positive, got {retry_after!r}")
        self.name = name
        self.retry_after = retry_after
        self.logger = logger
        self.clock = clock
        self._lock = threading.Lock()
        #: None while closed (the backend is asked); else when it may be probed again.
        self._open_until: float | None = None
        #: When the breaker last opened.
        self._opened_at = float("-inf")
        #: The ticket of the probe in flight (None: none in flight).
        self._probe: float | None = None
        #: How many calls were skipped since the breaker last opened (for the log).
        self.skipped = 0

    @property
    def is_open(self) -> bool:
        """True while the backend is not being asked (failed, not yet back)."""
        return self._open_until is not None

    def allow(self) -> float | None:
        """The call's ticket when the caller should ask the backend now, else None."""
        now = self.clock()
        if self._open_until is None:  # the common case, without the lock
            return now
        with self._lock:
            if self._open_until is None:
                return now
            probe = self._probe
            # A probe that never returned (a client without timeouts) must not keep
            # the backend shut forever: after an interval another caller may probe.
            if now >= self._open_until and (probe is None or now - probe >= self.retry_after):
                self._probe = now
                return now
            self.skipped += 1
            return None

    def succeeded(self, ticket: float) -> None:
        """The call of ``ticket`` answered: if it was the probe, everyone asks again."""
        if self._open_until is None:
            return
        with self._lock:
            # An answer to a call made before the breaker opened says nothing of now.
            if self._open_until is None or ticket <= self._opened_at:
                return
            self._open_until = None
            self._probe = None
            skipped, self.skipped = self.skipped, 0
        self.logger.info("%s answers again (%d calls skipped meanwhile)", self.name, skipped)

    def failed(self, exc: BaseException, ticket: float) -> None:
        """The call of ``ticket`` failed or timed out: skip the backend for
        ``retry_after`` seconds (and say so, once)."""
        now = self.clock()
        with self._lock:
            # Several calls in flight when the backend froze fail together: the first
            # opens the breaker and logs; the others (all but the probe) find it open.
            if self._open_until is not None and (self._probe is None or ticket < self._probe):
                return
            self._open_until = now + self.retry_after
            self._opened_at = now
            self._probe = None
        self.logger.warning(
            "%s failed (%s); not asked for %g s, served without it meanwhile",
            self.name,
            describe(exc),
            self.retry_after,
        )
