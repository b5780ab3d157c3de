"""The SQLite source's public import path (the code: :mod:`sitemap_core.sources.sql.sqlite`)."""

from sitemap_core.sources.sql.sqlite import (
    SQLiteSource,
    install_change_log,
    install_page_facts,
    install_version_triggers,
)

__all__ = ["SQLiteSource", "install_change_log", "install_page_facts", "install_version_triggers"]
