"""Facts of fingerprinted sources, remembered under their fingerprint.

The index (``/sitemap.xml`` once the site needs one, its parts, robots.txt) needs every
section's count and, for each child page, its newest lastmod: a query each, on every
request, for a site of 200 child pages. A source with a fingerprint says cheaply
whether anything changed, so the index asks it that one thing per section, and while
the answer is the one it remembered, the count and the children's lastmods come from
memory: one query per section per request.

The fingerprint asked is the whole source's, ``fingerprint(0, WHOLE)`` (a range
fingerprint sees every entry; a whole-table one ignores the range anyway).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

__all__ = ["Known", "SourceFacts"]

#: The ``stop`` that asks a range fact about the whole source.

#: Range facts remembered per source (an index part lists at most 50,000 children).
_MAX_RANGES = 100_000


@dataclass
class SourceFacts:
    """What one source said while its whole-source fingerprint was ``fingerprint``."""

    fingerprint: object
    #: None for a source with stable pages, whose pages are remembered instead.
    count: int | None
    #: Range facts asked meanwhile, by ``(kind, start, stop)``: ``"newest"`` lastmods
    #: and ``"fingerprint"`` values (unchanged while the whole source is).
    ranges: dict[tuple[str, int, int], object] = field(default_factory=dict)


class Known:
    """The remembered facts of a site's fingerprinted sources, by source name."""

    def __init__(self) -> None:
        self._facts: dict[str, SourceFacts] = {}
        self._lock = threading.Lock()

    def _current(self, source: str, fingerprint: object) -> SourceFacts | None:
        facts = self._facts.get(source)
        if fingerprint is None or facts is None or facts.fingerprint != fingerprint:
            return None
        return facts

    def count(self, source: str, fingerprint: object) -> int | None:
        """The count remembered under ``fingerprint``, or None (ask the source)."""
        facts = self._current(source, fingerprint)
        return None if facts is None else facts.count

    def counted(self, source: str, fingerprint: object, count: int | None) -> None:
        """``source`` counted ``count`` while its fingerprint was ``fingerprint`` (None:
        it was not counted, but what it says of its ranges is remembered from now on)."""
        if fingerprint is None:
            return
        with self._lock:
            facts = self._facts.get(source)
            # A new version (or a new count under the same fingerprint): replaced, not
            # cleared, so that a request still on the old one cannot mix its facts in.
            fresh = facts is None or facts.fingerprint != fingerprint
            if fresh or (count is not None and facts is not None and facts.count != count):
                self._facts[source] = SourceFacts(fingerprint, count)

    def fact(
        self, source: str, fingerprint: object, kind: str, start: int, stop: int
    ) -> tuple[bool, object]:
        """``(True, value)`` when remembered under ``fingerprint``, else ``(False, None)``."""
        facts = self._current(source, fingerprint)
        key = (kind, start, stop)
        if facts is None or key not in facts.ranges:
            return False, None
        return True, facts.ranges[key]

    def found(
        self, source: str, fingerprint: object, kind: str, start: int, stop: int, value: object
    ) -> None:
        """Remember a range fact of ``source`` under ``fingerprint``."""
        facts = self._current(source, fingerprint)
        if facts is not None and len(facts.ranges) < _MAX_RANGES:
            facts.ranges[(kind, start, stop)] = value
