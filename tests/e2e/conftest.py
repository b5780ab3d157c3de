"""Fixtures for the end-to-end tests: the example sites on real servers.

``example`` is parametrized over :data:`~.sites.SITES` (session scope), so every test
that asks for ``served`` runs once per example, against a server started once per
example; tests that also need a path per site parametrize ``(example, path)``
themselves with :func:`~.sites.per_site_document`. The sites on PostgreSQL are served
from databases of one PostgreSQL server (``postgresql``), started only when one of
them is tested.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from postgres import postgres_server

from .postgresql import PostgresServer, plain_url
from .servers import (
    EXAMPLES_ROOT,
    HTTP_TIMEOUT,
    GunicornServer,
    StartGunicorn,
    clean_env,
    run_gunicorn,
)
from .sites import FLASK_BLOG, SITES, ExampleSite, ServedExample, read_only

#: Gives the database file of a site: built once per session for sites that build it
#: on import, or a path in a fresh folder that the site's server will create.
DatabaseFor = Callable[[ExampleSite], Path]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run each example's tests together, so that each server starts once.

    pytest groups session-scoped parameters itself, but ``(example, path)``
    parametrizations make ``path`` session-scoped too, and the same path
    (``/robots.txt``) of different sites then pulls the sites' tests together. A stable
    sort of the tests that use an example (by site, then module), in their own slots,
    undoes that; the order within a module, and every other test, stay where pytest
    put them.
    """
    slots = [i for i, item in enumerate(items) if _site_of(item) is not None]
    modules = list(dict.fromkeys(items[i].nodeid.partition("::")[0] for i in slots))

    def key(item: pytest.Item) -> tuple[int, int]:
        site = _site_of(item)
        assert site is not None
        # By module too, so each module-scoped fixture (`fetch`) is set up once per site.
        return SITES.index(site), modules.index(item.nodeid.partition("::")[0])

    ordered = sorted((items[i] for i in slots), key=key)
    for slot, item in zip(slots, ordered, strict=True):
        items[slot] = item


def _site_of(item: pytest.Item) -> ExampleSite | None:
    callspec = getattr(item, "callspec", None)
    site = callspec.params.get("example") if callspec is not None else None
    return site if isinstance(site, ExampleSite) else None


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(path.relative_to(root)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="session", autouse=True)
def examples_stay_untouched() -> Iterator[None]:
    """Fail the session if any test wrote into ``examples/`` (a database, a cache)."""
    before = _tree(EXAMPLES_ROOT)
    yield
    after = _tree(EXAMPLES_ROOT)
    assert after == before, f"files in {EXAMPLES_ROOT} changed: {set(after) ^ set(before)}"


@pytest.fixture(scope="session")
def database_for(tmp_path_factory: pytest.TempPathFactory) -> DatabaseFor:
    """See :data:`DatabaseFor`."""
    paths: dict[ExampleSite, Path] = {}

    def database(site: ExampleSite) -> Path:
        if site not in paths:
            path = tmp_path_factory.mktemp(f"db-{site.name}") / site.database_file
            # On PostgreSQL, the path only names the folder of the site's IndexNow key.
            if site.builds_on_import and site.backend == "sqlite":
                # Built by the example itself in a subprocess, so that the gunicorn workers
                # of every server find it ready instead of each building its own copy.
                done = subprocess.run(
                    [sys.executable, "-c", "import app"],
                    cwd=site.directory,
                    env=clean_env({site.database_variable: str(path)}, [site.directory]),
                    capture_output=True,
                    timeout=120,
                    check=False,
                )
                assert done.returncode == 0, f"building {path} failed:\n{done.stderr.decode()}"
            paths[site] = path
        return paths[site]

    return database


@pytest.fixture(scope="session")
def blog_database(database_for: DatabaseFor) -> Path:
    """The Flask blog's 120,000-post database, built once in a temporary directory."""
    path = database_for(FLASK_BLOG)
    with read_only(path) as db:
        (count,) = db.execute("SELECT COUNT(*) FROM posts").fetchone()
    assert count == FLASK_BLOG.item_count
    return path


@pytest.fixture(scope="session", params=SITES, ids=str)
def example(request: pytest.FixtureRequest) -> ExampleSite:
    """The example site under test (every one, in turn)."""
    site: ExampleSite = request.param
    return site


@pytest.fixture(scope="session")
def postgresql() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the session (skipped without PostgreSQL, failed under CI)."""
    with postgres_server() as url:
        yield PostgresServer(plain_url(url))


@pytest.fixture(scope="session")
def served(
    example: ExampleSite,
    database_for: DatabaseFor,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> Iterator[ServedExample]:
    """``example`` running on its real server (gunicorn or uvicorn), shared by its tests.

    One example runs at a time: pytest finishes this fixture before serving the next.
    A site on PostgreSQL gets a new, empty database, which its workers create and fill
    as they start.
    """
    database = database_for(example)
    database_url = None
    if example.backend == "postgresql":
        # Asked for here, not as an argument: the SQLite sites need no PostgreSQL.
        server: PostgresServer = request.getfixturevalue("postgresql")
        database_url = server.create_database(example.database_name, example.timezone)
    logs = tmp_path_factory.mktemp(f"logs-{example.name}")
    with example.serve(database, logs, database_url) as running:
        described = ServedExample.read(example, running, database, database_url)
        assert len(described.item_ids) == example.item_count, described.database
        yield described


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
