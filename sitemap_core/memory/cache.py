"""Caches of rendered documents, keyed by ETag (which embeds the data's fingerprint).

A changed fingerprint is a new key, so changed data is served at once and a stale
document never is; old entries simply stop being asked for and age out.

* :class:`MemoryCache`: per process, bounded in bytes (least recently used first out);
* :class:`RedisCache`: shared by workers and machines (``pip install redis``).

Every cache is best effort (:func:`cache_get`, :func:`cache_set`): a cache that fails
is a miss, logged at most once per interval, never a failed response. A Redis that
hangs or is down costs at most one timeout per interval (see
:mod:`sitemap_core.memory.breaker`), not one per request.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
import time
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlsplit

from sitemap_core.errors import ConfigurationError, shorten
from sitemap_core.memory.breaker import Breaker, describe
from sitemap_core.memory.lru import LeastRecent

logger = logging.getLogger("sitemap_core")

__all__ = [
    "REDIS_RETRY_AFTER",
    "REDIS_TIMEOUT",
    "MemoryCache",
    "PageCache",
    "RedisCache",
    "cache_get",
    "cache_set",
    "check_cache_url",
    "default_cache",
]

#: Seconds a Redis call may take (connecting, and each read or write) before it is a miss.
REDIS_TIMEOUT = 1.0
#: Seconds a failing cache is left alone (and between two log lines about it).
REDIS_RETRY_AFTER = 10.0

_CACHE_SCHEMES = ("redis", "rediss", "unix")
_URL_FORMS = "redis://HOST[:PORT][/DB], rediss://HOST[:PORT][/DB] or unix:///PATH/TO/SOCKET"


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
        self._items: LeastRecent[bytes] = LeastRecent(max_bytes, len)

    @property
    def size(self) -> int:
        """Bytes held now."""
        return self._items.held

    def get(self, key: str) -> bytes | None:
        """The document under ``key``, marked as recently used; or None."""
        return self._items.get(key)

    def set(self, key: str, value: bytes) -> None:
        """Store ``value``, evicting the least recently used to stay within bounds."""
        if len(value) <= self.max_item_bytes:
            self._items.put(key, value)


class RedisCache:
    """A cache in Redis, shared by every worker and machine that uses the same server.

    ``client`` is a ``redis.Redis`` (or anything with its ``get`` / ``set(ex=)``); or
    give ``url`` (``redis://host:6379/0``, ``rediss://...``, ``unix:///path``). Entries
    expire after ``ttl`` seconds, so documents of old fingerprints do not stay forever.

    Best effort, and bounded: a client made from ``url`` gives up after ``timeout``
    seconds (connecting, and each command) and never retries; a call that fails or
    times out makes the cache stop asking Redis for ``retry_after`` seconds (a miss
    meanwhile: pages are rendered), after which one request probes it again. So a
    Redis that hangs costs one timeout per interval, not one per request, and a dead
    one writes one warning per interval, not a traceback per request. ``get`` and
    ``set`` never raise. A ``client`` you build keeps its own timeouts: give it
    ``socket_timeout`` and ``socket_connect_timeout``.
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
        timeout: float = REDIS_TIMEOUT,
        retry_after: float = REDIS_RETRY_AFTER,
    ) -> None:
        for name, seconds in (("timeout", timeout), ("retry_after", retry_after)):
            if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0:
                raise ConfigurationError(
                    f"RedisCache {name}={shorten(seconds)}: give a positive number of seconds"
                )
        if client is None:
            if url is None:
                raise ConfigurationError("RedisCache needs a client or a url")
            client = _redis_client(check_cache_url(url, "RedisCache url"), timeout)
        elif _timeout_of(client) is None:
            logger.warning(
                "RedisCache: the given Redis client has no socket_timeout, so a Redis that"
                " hangs holds a request until it answers; give the client socket_timeout"
                " and socket_connect_timeout, or give RedisCache a url"
            )
        self.client = client
        self.prefix = prefix
        self.ttl = ttl
        self.max_item_bytes = max_item_bytes
        self.breaker = Breaker(f"sitemap cache {_where(client)}", retry_after, logger)

    def get(self, key: str) -> bytes | None:
        """The document under ``key``, or None (also when Redis fails or is skipped)."""
        ticket = self.breaker.allow()
        if ticket is None:
            return None
        try:
            value: Any = self.client.get(self.prefix + key)
        except Exception as exc:
            if not _refused(exc):
                self.breaker.failed(exc, ticket)
                return None
            # Answered with an error (a key of another type under our prefix): a miss.
            _FAILURES.log(self, "get", exc, "rendering instead")
            value = None
        self.breaker.succeeded(ticket)
        return None if value is None else bytes(value)

    def set(self, key: str, value: bytes) -> None:
        """Store ``value`` with the TTL; too-large documents are skipped, and so is
        everything while Redis is failing."""
        if len(value) > self.max_item_bytes:
            return
        ticket = self.breaker.allow()
        if ticket is None:
            return
        try:
            self.client.set(self.prefix + key, value, ex=self.ttl)
        except Exception as exc:
            if not _refused(exc):
                self.breaker.failed(exc, ticket)
                return
            # The server answered, refusing the write (out of memory under a noeviction
            # policy, a read-only replica): reads still work, so the breaker stays shut
            # and only the write is given up, with a warning per interval.
            _FAILURES.log(self, "set", exc, "the document is not cached")
        self.breaker.succeeded(ticket)


def _refused(exc: Exception) -> bool:
    """Whether ``exc`` is a reachable Redis refusing the command: out of memory under
    ``noeviction``, a read-only replica, or a plain error answer (a key of another
    type). Not a cluster's errors (down, moved, try again), which redis-py also makes
    ``ResponseError`` subclasses: those are a Redis that cannot serve, for the breaker.
    """
    # Looked up, not imported: a client of another library never raises redis-py's.
    errors = sys.modules.get("redis.exceptions")
    if errors is None:
        return False
    refusals = tuple(
        kind
        for kind in (getattr(errors, name, None) for name in ("OutOfMemoryError", "ReadOnlyError"))
        if isinstance(kind, type)
    )
    return isinstance(exc, refusals) or type(exc) is getattr(errors, "ResponseError", None)


def check_cache_url(url: object, setting: str = "cache") -> str:
    """Return ``url`` if it is a usable Redis URL, else raise :class:`ConfigurationError`
    naming ``setting``, the URL (password hidden) and the accepted forms.

    Checked without connecting: the scheme (``redis``, ``rediss``, ``unix``), a host
    and a port from 1 to 65535, a database number as the path, a socket path for
    ``unix``, then redis-py's own parser (query options); the ``redis`` package must
    be installed.
    """
    if not isinstance(url, str):
        raise ConfigurationError(f"{setting}={shorten(url)} is not a URL; use {_URL_FORMS}")
    shown = shorten(re.sub(r"//[^/@]*@", "//***@", url))

    def refuse(reason: str) -> ConfigurationError:
        return ConfigurationError(f"{setting}={shown} {reason}; use {_URL_FORMS}")

    scheme, sep, _ = url.partition("://")
    if not sep or scheme.lower() not in _CACHE_SCHEMES:
        raise refuse("is not a Redis URL")
    problem = _url_problem(url, unix=scheme.lower() == "unix")
    if problem is not None:
        raise refuse(problem)
    try:
        from redis.connection import parse_url
    except ImportError:
        raise ConfigurationError(
            f"{setting}={shown} needs the redis package: pip install 'dynamic-sitemaps[redis]'"
        ) from None
    try:
        parse_url(url)  # type: ignore[no-untyped-call]  # redis-py leaves it untyped
    except ValueError as exc:
        raise refuse(f"is not accepted by redis ({exc})") from None
    return url


def _url_problem(url: str, *, unix: bool) -> str | None:
    # What is wrong with the parts of a Redis URL (a socket's, with ``unix``), if anything.
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"is not a valid URL ({exc})"
    if unix:
        return "names no socket path" if not parts.path or parts.path == "/" else None
    if not parts.hostname:
        return "names no host"
    if port == 0:
        return "has port 0"
    if not re.fullmatch(r"/?(?:[0-9]{1,5})?", parts.path):
        return "has a path that is not a database number"
    return None


def _redis_client(url: str, timeout: float) -> Any:
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    # Each call is bounded by the timeouts and never retried: a retry (redis-py retries
    # connection errors with backoff by default) would multiply the wait a request pays
    # for a cache that is only an optimisation.
    client = redis.Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
    )
    # Options in the URL (?socket_timeout=5) win over keyword arguments in redis-py:
    # the documented bound is kept all the same (no connection exists yet to change).
    kwargs = _connection_kwargs(client)
    for name in ("socket_timeout", "socket_connect_timeout"):
        given = kwargs.get(name)
        if given is None or given > timeout:
            kwargs[name] = timeout
    return client


def _connection_kwargs(client: Any) -> dict[str, Any]:
    pool = getattr(client, "connection_pool", None)
    kwargs = getattr(pool, "connection_kwargs", None)
    return kwargs if isinstance(kwargs, dict) else {}


def _timeout_of(client: Any) -> float | None:
    kwargs = _connection_kwargs(client)
    if not kwargs:
        return 0.0  # not a redis-py client: nothing to tell
    timeout = kwargs.get("socket_timeout")
    return float(timeout) if isinstance(timeout, int | float) else None


def _where(client: Any) -> str:
    # For log lines: where the server is, never its password.
    kwargs = _connection_kwargs(client)
    if "path" in kwargs:
        return f"Redis at unix:{kwargs['path']}"
    if "host" in kwargs:
        return f"Redis at {kwargs['host']}:{kwargs.get('port', 6379)}/{kwargs.get('db', 0)}"
    return f"Redis ({type(client).__name__})"


def default_cache(setting: PageCache | str | bool | None) -> PageCache | None:
    """The cache a front uses: the given one; a :class:`RedisCache` for a ``redis://``
    (``rediss://``, ``unix://``) URL; a fresh :class:`MemoryCache` for None or True
    (in-process caching is the default); none at all for False."""
    if setting is None or setting is True:
        return MemoryCache()
    if setting is False:
        return None
    if isinstance(setting, str):
        return RedisCache(url=check_cache_url(setting))
    if not isinstance(setting, PageCache):
        raise ConfigurationError(
            f"a cache needs get(), set(), blocking and max_item_bytes: {setting!r}"
        )
    return setting


def cache_get(cache: PageCache, key: str) -> bytes | None:
    """``cache.get``, best effort: a failing cache (Redis down) is a miss, logged."""
    try:
        return cache.get(key)
    except Exception as exc:
        _FAILURES.log(cache, "get", exc, "rendering instead")
        return None


def cache_set(cache: PageCache, key: str, value: bytes) -> None:
    """``cache.set``, best effort: a failing cache (full, down) is logged, never raised,
    so a document already sent in full is never cut by its caching."""
    try:
        cache.set(key, value)
    except Exception as exc:
        _FAILURES.log(cache, "set", exc, "the document is not cached")


class _FailureLog:
    """Warnings about a failing cache, at most one per cache and call per interval.

    A cache that fails fails for every request; a traceback per request would bury
    the log. The first failure of an interval is a warning with its reason; the
    others are counted in the next one (tracebacks go to DEBUG).
    """

    def __init__(self, interval: float = REDIS_RETRY_AFTER) -> None:
        self.interval = interval
        self._lock = threading.Lock()
        self._last: dict[tuple[int, str], tuple[float, int]] = {}

    def log(self, cache: object, call: str, exc: Exception, outcome: str) -> None:
        logger.debug("sitemap cache %s failed", call, exc_info=exc)
        now = time.monotonic()
        key = (id(cache), call)
        with self._lock:
            last, quiet = self._last.get(key, (float("-inf"), 0))
            if now - last < self.interval:
                self._last[key] = (last, quiet + 1)
                return
            self._last[key] = (now, 0)
        more = f" ({quiet} more failures since the last warning)" if quiet else ""
        logger.warning("sitemap cache %s failed (%s); %s%s", call, describe(exc), outcome, more)


_FAILURES = _FailureLog()
