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

    Call :meth:`allow` before each call to the backend (False: skip it, as a miss),
    then :meth:`succeeded` or :meth:`failed` with what it raised.
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
        #: When the probe in flight started (None: none in flight).
        self._probe_started: float | None = None
        #: How many calls were skipped since the breaker last opened (for the log).
        self.skipped = 0

    @property
    def is_open(self) -> bool:
        """True while the backend is not being asked (failed, not yet back)."""
        return self._open_until is not None

    def allow(self) -> bool:
        """True when the caller should ask the backend now."""
        if self._open_until is None:  # the common case, without the lock
            return True
        now = self.clock()
        with self._lock:
            if self._open_until is None:
                return True
            started = self._probe_started
            # A probe that never returned (a client without timeouts) must not keep
            # the backend shut forever: after an interval another caller may probe.
            if now >= self._open_until and (started is None or now - started >= self.retry_after):
                self._probe_started = now
                return True
            self.skipped += 1
            return False

    def succeeded(self) -> None:
        """The call answered: the backend is asked again by everyone."""
        if self._open_until is None:
            return
        with self._lock:
            if self._open_until is None:
                return
            self._open_until = None
            self._probe_started = None
            skipped, self.skipped = self.skipped, 0
        self.logger.info("%s answers again (%d calls skipped meanwhile)", self.name, skipped)

    def failed(self, exc: BaseException) -> None:
        """The call failed or timed out: skip the backend for ``retry_after`` seconds."""
        now = self.clock()
        with self._lock:
            # Several calls in flight when the backend froze fail together: the first
            # opens the breaker and logs; the others find it open (no second line).
            if self._open_until is not None and self._probe_started is None:
                return
            self._open_until = now + self.retry_after
            self._probe_started = None
        self.logger.warning(
            "%s failed (%s); not asked for %g s, served without it meanwhile",
            self.name,
            describe(exc),
            self.retry_after,
        )
