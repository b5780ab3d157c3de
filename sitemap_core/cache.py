"""Caches of rendered documents, keyed by ETag (which embeds the data's fingerprint).

A changed fingerprint is a new key, so changed data is served at once and a stale
document never is; old entries simply stop being asked for and age out.

* :class:`MemoryCache`: per process, bounded in bytes (least recently used first out);
* :class:`RedisCache`: shared by workers and machines (``pip install redis``).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import Any, Protocol, runtime_checkable

from .errors import ConfigurationError

logger = logging.getLogger("sitemap_core")

__all__ = ["MemoryCache", "PageCache", "RedisCache", "cache_get", "cache_set", "default_cache"]


@runtime_checkable
class PageCache(Protocol):
    """Where rendered documents are kept; both methods may block (network caches)."""

    #: True when ``get``/``set`` do I/O: async fronts then call them in a thread.
    blocking: bool
    #: Documents larger than this are not stored (they would evict everything else).
    max_item_bytes: int

    def get(self, key: str) -> bytes | None:
        """The document stored under ``key``, or None."""
        ...

    def set(self, key: str, value: bytes) -> None:
        """Store ``value`` under ``key`` (best effort)."""
        ...


class MemoryCache:
    """An in-process cache bounded by the total size of what it holds.

    ``max_bytes`` bounds the sum of the stored documents; each is at most
    ``max_item_bytes`` (a quarter of the total unless given). Thread-safe.
    """

    blocking = False

    def __init__(self, max_bytes: int = 64 * 2**20, max_item_bytes: int | None = None) -> None:
        if max_bytes < 1:
            raise ConfigurationError(f"cache size must be positive, got {max_bytes}")
        self.max_bytes = max_bytes
        self.max_item_bytes = min(max_item_bytes or max_bytes // 4, max_bytes)
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        """Bytes held now."""
        return self._size

    def get(self, key: str) -> bytes | None:
        """The document under ``key``, marked as recently used; or None."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def set(self, key: str, value: bytes) -> None:
        """Store ``value``, evicting the least recently used to stay within bounds."""
        if len(value) > self.max_item_bytes:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._size -= len(old)
            self._items[key] = value
            self._size += len(value)
            while self._size > self.max_bytes:
                _, evicted = self._items.popitem(last=False)
                self._size -= len(evicted)


class RedisCache:
    """A cache in Redis, shared by every worker and machine that uses the same server.

    ``client`` is a ``redis.Redis`` (or anything with its ``get`` / ``set(ex=)``); or
    give ``url`` (``redis://host:6379/0``). Entries expire after ``ttl`` seconds, so
    documents of old fingerprints do not stay forever.
    """

    blocking = True

    def __init__(
        self,
        client: Any | None = None,
        *,
        url: str | None = None,
        prefix: str = "sitemap:",
        ttl: int = 86_400,
        max_item_bytes: int = 64 * 2**20,
    ) -> None:
        if client is None:
            if url is None:
                raise ConfigurationError("RedisCache needs a client or a url")
            try:
                import redis
            except ImportError:  # pragma: no cover - depends on the install
                raise ConfigurationError("RedisCache needs the redis package") from None
            # Timeouts: a Redis that hangs must cost a request a second, not forever
            # (a failing cache is then a miss, see cache_get).
            client = redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)
        self.client = client
        self.prefix = prefix
        self.ttl = ttl
        self.max_item_bytes = max_item_bytes

    def get(self, key: str) -> bytes | None:
        """The document under ``key``, or None."""
        value: Any = self.client.get(self.prefix + key)
        return None if value is None else bytes(value)

    def set(self, key: str, value: bytes) -> None:
        """Store ``value`` with the TTL; too-large documents are skipped."""
        if len(value) <= self.max_item_bytes:
            self.client.set(self.prefix + key, value, ex=self.ttl)


def default_cache(setting: PageCache | str | bool | None) -> PageCache | None:
    """The cache a front uses: the given one; a :class:`RedisCache` for a ``redis://``
    (``rediss://``, ``unix://``) URL; a fresh :class:`MemoryCache` for None or True
    (in-process caching is the default); none at all for False."""
    if setting is None or setting is True:
        return MemoryCache()
    if setting is False:
        return None
    if isinstance(setting, str):
        if setting.split("://", 1)[0] not in ("redis", "rediss", "unix"):
            raise ConfigurationError(
                f"a cache URL must start with redis://, rediss:// or unix://: {setting!r}"
            )
        return RedisCache(url=setting)
    if not isinstance(setting, PageCache):
        raise ConfigurationError(
            f"a cache needs get(), set(), blocking and max_item_bytes: {setting!r}"
        )
    return setting


def cache_get(cache: PageCache, key: str) -> bytes | None:
    """``cache.get``, best effort: a failing cache (Redis down) is a miss, logged."""
    try:
        return cache.get(key)
    except Exception:
        logger.warning("sitemap cache get failed; rendering instead", exc_info=True)
        return None


def cache_set(cache: PageCache, key: str, value: bytes) -> None:
    """``cache.set``, best effort: a failing cache (full, down) is logged, never raised,
    so a document already sent in full is never cut by its caching."""
    try:
        cache.set(key, value)
    except Exception:
        logger.warning("sitemap cache set failed; the document is not cached", exc_info=True)
