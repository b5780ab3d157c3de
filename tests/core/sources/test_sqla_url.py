"""engine_url: a plain PostgreSQL URL works as given, with the driver the package ships."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine
from sqlalchemy.ext.asyncio import create_async_engine

from sitemap_core import ConfigurationError
from sitemap_core.sources.sql.url import engine_url


@pytest.mark.parametrize(
    ("given", "driver"),
    [
        ("postgresql://user@db.example:5432/site", "postgresql+psycopg"),
        ("postgres://user:secret@db.example/site", "postgresql+psycopg"),
        ("postgresql+asyncpg://user@db.example/site", "postgresql+asyncpg"),
        ("postgresql+psycopg2://user@db.example/site", "postgresql+psycopg2"),
        ("sqlite:///blog.db", "sqlite"),
    ],
)
def test_a_plain_postgresql_url_gets_psycopg_and_a_named_driver_is_kept(
    given: str, driver: str
) -> None:
    url = engine_url(given)
    assert url.drivername == driver
    # Nothing else of the URL moves: user, password, host, port and database.
    assert url.set(drivername="x") == engine_url(given).set(drivername="x")
    assert url.render_as_string(hide_password=False).split("://", 1)[1] == given.split("://", 1)[1]


def test_the_url_makes_a_sync_and_an_async_engine_with_installed_drivers() -> None:
    # Engines connect lazily: creating them loads the dialect and its driver, which is
    # what a plain URL failed to do with psycopg2 missing.
    url = engine_url("postgresql://user@127.0.0.1:1/site")
    assert create_engine(url).dialect.driver == "psycopg"
    assert create_async_engine(url).dialect.driver == "psycopg"


def test_another_database_than_the_app_runs_on_names_the_setting_and_hides_the_password() -> None:
    with pytest.raises(ConfigurationError) as caught:
        engine_url("mysql://app:hunter2@db/site", backends={"postgresql", "sqlite"})
    message = str(caught.value)
    assert message.startswith("DATABASE_URL names a mysql database")
    assert "hunter2" not in message and "postgresql, sqlite" in message


def test_a_url_that_cannot_be_read_names_the_setting_not_its_text() -> None:
    with pytest.raises(ConfigurationError, match=r"^SITE_DB is not a database URL") as caught:
        engine_url("pg:/user:hunter2@?", setting="SITE_DB")
    assert "hunter2" not in str(caught.value)
