"""Fixtures of the source tests: one throwaway PostgreSQL server for the session, and
the ``db`` / ``adb`` databases (SQLite and PostgreSQL; each async driver) on it; one
throwaway MariaDB server for the session, and the ``my`` database on it, for the MySQL
tests (``lite``: the SQLite database their documents are compared with)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mariadb import MariaDB, mariadb_server
from postgres import postgres_server

from tests.core.sources.test_sqla import ASYNC_DRIVERS, Db, make_db
from tests.core.sources.test_sqla_mysql import mysql_db


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The SQLAlchemy URL of a PostgreSQL server started for the session."""
    with postgres_server() as url:
        yield url


@pytest.fixture(scope="session")
def mariadb() -> Iterator[MariaDB]:
    """A MariaDB server started for the session (its URL and its ``mariadb`` client)."""
    with mariadb_server() as server:
        yield server


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Db]:
    """A database on SQLite, then on the session's PostgreSQL server."""
    yield from make_db(request, tmp_path, request.param)


@pytest.fixture(params=list(ASYNC_DRIVERS))
def adb(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Db]:
    """A database whose ``async_url`` names each async driver in turn."""
    yield from make_db(request, tmp_path, request.param)


@pytest.fixture
def my(mariadb: MariaDB) -> Iterator[Db]:
    """A clean MariaDB database (the MySQL tests')."""
    yield from mysql_db(mariadb)


@pytest.fixture(params=[False, True], ids=["default-mode", "ansi-quotes"])
def either_my(request: pytest.FixtureRequest, mariadb: MariaDB) -> Iterator[Db]:
    """A clean MariaDB database whose connections read ``"name"`` as a string (the
    default ``sql_mode``), then one whose connections read it as a name (ANSI_QUOTES)."""
    yield from mysql_db(mariadb, ansi_quotes=request.param)


@pytest.fixture
def lite(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Db]:
    """A SQLite database: what MySQL's documents are compared with."""
    yield from make_db(request, tmp_path, "sqlite")
