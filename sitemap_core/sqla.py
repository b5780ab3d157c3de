"""The SQLAlchemy sources' public import path (the code: :mod:`sitemap_core.sources.sql.sqla`)."""

from sitemap_core.sources.sql import sqla as _sqla
from sitemap_core.sources.sql.sqla import *  # noqa: F403 (this path names the module's public names)

__all__ = _sqla.__all__
