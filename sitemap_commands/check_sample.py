"""Which listed URLs ``sitemap check --sample N`` fetches: N, spread over every sitemap.

Each sitemap keeps a reservoir of at most N of its URLs as it is read (so memory is
N per sitemap, whatever its size; all of them for ``--sample 0``); at the end the N
are dealt round-robin across the sitemaps, so a small sitemap is sampled as surely
as a big one. The draw is seeded: two runs on the same site fetch the same URLs.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

__all__ = ["Sample"]


@dataclass
class _Reservoir:
    # Up to ``size`` (position, url, line) of one sitemap, and how many it listed.
    seen: int = 0
    kept: list[tuple[int, str, int]] = field(default_factory=list)


class Sample:
    """The URLs to fetch: ``size`` of them (0: every one), spread over the sitemaps."""

    def __init__(self, size: int, seed: int = 0) -> None:
        self.size = size
        self._random = random.Random(seed)
        self._documents: dict[str, _Reservoir] = {}

    def add(self, url: str, document: str, line: int) -> None:
        """A URL ``document`` lists (at ``line``): kept or not, by reservoir sampling."""
        reservoir = self._documents.setdefault(document, _Reservoir())
        position = reservoir.seen
        reservoir.seen += 1
        if not self.size or len(reservoir.kept) < self.size:
            reservoir.kept.append((position, url, line))
            return
        slot = self._random.randrange(reservoir.seen)
        if slot < self.size:
            reservoir.kept[slot] = (position, url, line)

    def chosen(self) -> list[tuple[str, str, int]]:
        """The (url, document, line) to fetch, each sitemap's in the order it lists them."""
        quotas = self._quotas()
        picked: list[tuple[str, str, int]] = []
        for document, reservoir in self._documents.items():
            kept = reservoir.kept
            take = sorted(self._random.sample(kept, quotas[document]))
            picked += [(url, document, line) for _, url, line in take]
        return picked

    def _quotas(self) -> dict[str, int]:
        # Dealt one at a time to each sitemap that has URLs left, until N are dealt.
        quotas = dict.fromkeys(self._documents, 0)
        if not self.size:
            return {d: len(r.kept) for d, r in self._documents.items()}
        left = self.size
        while left:
            dealt = 0
            for document, reservoir in self._documents.items():
                if left and quotas[document] < len(reservoir.kept):
                    quotas[document] += 1
                    left -= 1
                    dealt += 1
            if not dealt:
                break
        return quotas
