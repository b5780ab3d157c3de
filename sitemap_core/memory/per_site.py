"""One page cache shared by several sites, each site's documents under its own keys.

A front serving several sites keeps one cache (one memory bound, one Redis
connection) and gives each site a :class:`SiteCache` over it: every key the site reads
or writes starts with the site's name, so no document stored for one site can be
found by another, whatever its ETag. In Redis the keys read
``<prefix><site>|<etag>`` (``sitemap:blog.example.com|"..."``), so a site's documents
can also be found, counted or dropped by pattern.
"""

from __future__ import annotations

from sitemap_core.memory.cache import PageCache

__all__ = ["SiteCache"]


class SiteCache:
    """The part of ``cache`` that belongs to the site ``site`` (its host, say)."""

    def __init__(self, cache: PageCache, site: str) -> None:
        self.cache = cache
        self.site = site
        # The separator cannot occur in a host, so "a.b" never reads as a prefix of
        # another site's keys ("a.b|" vs "a.bc|").
        self._prefix = f"{site}|"
        self.blocking = cache.blocking
        self.max_item_bytes = cache.max_item_bytes

    def get(self, key: str) -> bytes | None:
        """The site's document under ``key``, or None."""
        return self.cache.get(self._prefix + key)

    def set(self, key: str, value: bytes) -> None:
        """Store the site's ``value`` under ``key``."""
        self.cache.set(self._prefix + key, value)
