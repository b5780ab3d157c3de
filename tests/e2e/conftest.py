"""Fixtures for the end-to-end tests: real gunicorn processes serving real apps."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, closing
from pathlib import Path

import httpx
import pytest

from .servers import (
    EXAMPLE_DIR,
    HTTP_TIMEOUT,
    POST_COUNT,
    GunicornServer,
    StartGunicorn,
    clean_env,
    run_gunicorn,
)

# Fixtures ------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def blog_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example's 120,000-post database, built once in a temporary directory.

    Built by the example itself (its module-level ``create_database``) in a subprocess,
    so that the gunicorn workers of every server find it ready instead of each building
    their own copy at start-up.
    """
    path = tmp_path_factory.mktemp("blog") / "blog.db"
    done = subprocess.run(
        [sys.executable, "-c", "import app"],
        cwd=EXAMPLE_DIR,
        env=clean_env({"BLOG_DATABASE": str(path)}, [EXAMPLE_DIR]),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"creating the blog database failed:\n{done.stderr.decode()}"
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        (count,) = db.execute("SELECT COUNT(*) FROM posts").fetchone()
    assert count == POST_COUNT
    return path


@pytest.fixture(scope="session")
def blog_server(
    blog_database: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GunicornServer]:
    """``gunicorn app:app`` serving the example blog: 2 sync workers, shared by all tests."""
    with run_gunicorn(
        "app:app",
        EXAMPLE_DIR,
        tmp_path_factory.mktemp("gunicorn-blog"),
        workers=2,
        env={"BLOG_DATABASE": str(blog_database)},
    ) as server:
        yield server


@pytest.fixture
def start_gunicorn(tmp_path: Path) -> Iterator[StartGunicorn]:
    """Start extra gunicorn servers (see :func:`run_gunicorn`); all stop after the test."""
    with ExitStack() as stack:

        def start(app: str, chdir: Path, **kwargs: object) -> GunicornServer:
            return stack.enter_context(run_gunicorn(app, chdir, tmp_path / "logs", **kwargs))  # type: ignore[arg-type]

        yield start


@pytest.fixture(scope="session")
def http() -> Iterator[httpx.Client]:
    """An httpx client that never follows redirects nor reads proxy settings."""
    with httpx.Client(timeout=HTTP_TIMEOUT, follow_redirects=False, trust_env=False) as client:
        yield client
