"""The SQLAlchemy sources' public import path (the code: :mod:`sitemap_core.sources.sql.sqla`)."""

from sitemap_core.sources.sql.sqla import (
    AsyncSQLAlchemySource,
    SQLAlchemySource,
    install_change_log,
    install_page_facts,
    install_version_triggers,
)

__all__ = [
    "AsyncSQLAlchemySource",
    "SQLAlchemySource",
    "install_change_log",
    "install_page_facts",
    "install_version_triggers",
]
