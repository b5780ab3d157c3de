"""One bounded memory that forgets the least recently used: the page cache's and the
remembered renders' (see :mod:`sitemap_core.memory.cache` and
:mod:`sitemap_core.memory.recall`)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["LeastRecent"]

V = TypeVar("V")


def _one(value: object) -> int:
    return 1


class LeastRecent(Generic[V]):
    """A thread-safe mapping of at most ``limit`` in weight (``weight(value)`` each, one
    by default): storing past it forgets the least recently used values first."""

    def __init__(self, limit: int, weight: Callable[[V], int] = _one) -> None:
        self.limit = limit
        self._weight = weight
        self._items: OrderedDict[str, V] = OrderedDict()
        #: The weight held now.
        self.held = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> V | None:
        """The value under ``key``, marked as recently used; or None."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: str, value: V) -> None:
        """Store ``value`` under ``key`` as the most recently used."""
        with self._lock:
            self._store(key, value)

    def update(self, key: str, change: Callable[[V | None], V | None]) -> None:
        """Store ``change(current value or None)`` under ``key`` in one step (None:
        store nothing), so that no other thread's write falls in between."""
        with self._lock:
            value = change(self._items.get(key))
            if value is not None:
                self._store(key, value)

    def _store(self, key: str, value: V) -> None:
        old = self._items.pop(key, None)
        if old is not None:
            self.held -= self._weight(old)
        self._items[key] = value
        self.held += self._weight(value)
        while self.held > self.limit:
            _, evicted = self._items.popitem(last=False)
            self.held -= self._weight(evicted)

    def __len__(self) -> int:
        return len(self._items)
