"""Fixtures of the source tests: one throwaway PostgreSQL server for the session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from postgres import postgres_server


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The SQLAlchemy URL of a PostgreSQL server started for the session."""
    with postgres_server() as url:
        yield url
