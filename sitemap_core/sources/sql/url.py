"""A ``DATABASE_URL`` as SQLAlchemy takes it, with the driver this package is tested on.

Hosting platforms and ``docker run -e`` hand an app a plain ``postgresql://user@host/db``
(or Heroku's ``postgres://``). SQLAlchemy 2.0 reads the first with psycopg2, a driver
that needs libpq's headers to build, and no version reads the second. psycopg 3 (the
``postgresql`` extra) is the driver of both the sync and the asyncio engine, so
:func:`engine_url` gives such URLs the ``postgresql+psycopg`` driver; a URL that names
its driver (``postgresql+asyncpg://``) is taken as it is given.
"""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import URL, make_url
from sqlalchemy.exc import ArgumentError

from sitemap_core.errors import ConfigurationError

__all__ = ["engine_url"]

#: How PostgreSQL URLs that name no driver are spelt.
_PLAIN_POSTGRESQL = frozenset({"postgresql", "postgres"})


def engine_url(
    database_url: str,
    *,
    setting: str = "DATABASE_URL",
    backends: Collection[str] | None = None,
) -> URL:
    """``database_url`` as an SQLAlchemy :class:`~sqlalchemy.URL` for ``create_engine``
    and ``create_async_engine`` alike.

    A plain ``postgresql://`` or ``postgres://`` URL gets the psycopg 3 driver; any
    other URL is kept. ``backends`` (``{"postgresql", "sqlite"}``) are the databases
    the caller supports. A URL that cannot be read, or names another database, is a
    :class:`~sitemap_core.ConfigurationError` naming ``setting``, where the URL came
    from; its password is never shown.
    """
    try:
        url = make_url(database_url)
    except ArgumentError:
        # Not echoed: a URL that failed to parse may still hold a password.
        raise ConfigurationError(
            f"{setting} is not a database URL (expected e.g. postgresql://user@host:5432/db)"
        ) from None
    if url.drivername in _PLAIN_POSTGRESQL:
        url = url.set(drivername="postgresql+psycopg")
    if backends is not None and url.get_backend_name() not in backends:
        allowed = ", ".join(sorted(backends))
        raise ConfigurationError(
            f"{setting} names a {url.get_backend_name()} database"
            f" ({url.render_as_string(hide_password=True)}); this app runs on {allowed}"
        )
    return url
