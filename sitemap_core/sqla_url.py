"""``engine_url``'s public import path (the code: :mod:`sitemap_core.sources.sql.url`)."""

from sitemap_core.sources.sql.url import engine_url

__all__ = ["engine_url"]
