"""The examples on PostgreSQL: given a plain URL, they serve what they serve on SQLite.

The shared checks (crawls, documents, HTTP caching, the checker, the feed) run on the
Flask blog and the Starlette news site on PostgreSQL as on SQLite (``SITES``); here is
what is particular to PostgreSQL:

* the example is given ``DATABASE_URL=postgresql://user@host:port/db``, the URL users
  write (no ``+driver``), and its workers, racing at start-up, create and fill the
  table once, before the page facts' triggers exist;
* it serves the documents it serves on SQLite, byte for byte (the stand-in data is the
  same; the database's ``TimeZone`` is the one the example's lastmods are written in),
  the FastAPI shop included, given Heroku's ``postgres://`` spelling;
* an ``UPDATE`` made with SQL, by another client, reaches every gunicorn worker: the
  page's ETag changes and the page shows the new date, and again when the date is put
  back (a date moved backwards).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path

import httpx
import pytest

from .conftest import DatabaseFor
from .postgresql import PostgresServer, connect
from .servers import Server, StartGunicorn, run_uvicorn
from .sites import FASTAPI_SHOP, FLASK_BLOG, POSTGRESQL_SITES, ExampleSite, ServedExample
from .test_cache_workers import PID_WRAPPER
from .wire import Raw, request_raw

ON_POSTGRESQL = pytest.mark.parametrize(
    "example", POSTGRESQL_SITES, indirect=True, ids=str, scope="session"
)
#: What users write: no ``+driver``, which the example picks itself.
PLAIN_URL = re.compile(r"postgresql://postgres@127\.0\.0\.1:\d+/[a-z_]+")
#: A Host header both servers of a comparison are sent, so that their URLs agree.
SAME_HOST = {"Host": "localhost", "Accept-Encoding": "identity"}
IDENTITY = {"Accept-Encoding": "identity"}


def _environment(pid: int) -> dict[str, str]:
    """The environment process ``pid`` was started with."""
    pairs = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(pair.decode().partition("=")[::2] for pair in pairs if pair)


@ON_POSTGRESQL
def test_the_example_is_given_a_plain_postgresql_url(served: ServedExample) -> None:
    assert served.database_url is not None
    assert PLAIN_URL.fullmatch(served.database_url), served.database_url
    # What the server process really got, not only what the test meant to give it.
    given = _environment(served.server.process.pid)
    assert given["DATABASE_URL"] == served.database_url


@ON_POSTGRESQL
def test_racing_workers_create_and_fill_the_table_once(served: ServedExample) -> None:
    site = served.site
    # Every worker ran the creation at once at start-up, and none failed on a table or
    # a row another one made (the advisory lock made them take turns): a failed worker
    # would have been started again, unseen but for its traceback and second start.
    assert "Traceback" not in served.boot_log, served.boot_log[-3000:]
    starts = "Booting worker" if site.server == "gunicorn" else "Started server process"
    assert served.boot_log.count(starts) == site.workers, served.boot_log[-3000:]
    assert served.item_ids == list(range(1, site.item_count + 1))
    assert not served.database.exists(), "a SQLite file was made beside the key"
    # The bulk load came before the triggers, and no second fill happened after them:
    # each example's page facts are untouched since their grouped count (version 0,
    # every page at 1, counting every row). (The facts are named after the table.)
    facts = f"{site.table}_pages"
    assert served.query(f"SELECT version FROM {facts}_layout") == [(0,)]
    assert served.query(f"SELECT max(version), sum(urls) FROM {facts}") == [(1, site.item_count)]


def _documents(site: ExampleSite) -> tuple[str, ...]:
    """What is compared between the two databases: every sitemap document, the feed,
    the HTML view's index and first item page, and the first item's own page."""
    return (
        *site.documents,
        "/sitemap-recent.atom",
        "/sitemap.html",
        site.first_item_page.replace(".xml", ".html"),
        site.item_path.format(1),
    )


def _assert_same_documents(site: ExampleSite, postgresql: Server, sqlite: Server) -> None:
    with httpx.Client(timeout=60, trust_env=False) as http:
        for path in _documents(site):
            got = http.get(postgresql.url(path), headers=SAME_HOST)
            expected = http.get(sqlite.url(path), headers=SAME_HOST)
            assert got.status_code == expected.status_code == 200, path
            assert got.headers["content-type"] == expected.headers["content-type"], path
            last_modified = got.headers.get("last-modified")
            assert last_modified == expected.headers.get("last-modified"), path
            assert got.content == expected.content, path


@ON_POSTGRESQL
def test_the_documents_are_those_served_from_sqlite(
    served: ServedExample, database_for: DatabaseFor, tmp_path_factory: pytest.TempPathFactory
) -> None:
    twin = served.site.on_sqlite
    logs = tmp_path_factory.mktemp(f"logs-{twin.name}-twin")
    with twin.serve(database_for(twin), logs) as sqlite:
        _assert_same_documents(served.site, served.server, sqlite)


def test_fastapi_shop_on_postgresql_from_a_heroku_style_url(
    postgresql: PostgresServer, tmp_path: Path
) -> None:
    # postgres:// is how Heroku and others spell it, and SQLAlchemy refuses it as it is.
    url = postgresql.create_database("fastapi_shop").replace("postgresql://", "postgres://")
    site = FASTAPI_SHOP
    for folder in ("pg", "sqlite"):
        (tmp_path / folder).mkdir()
    env = {site.database_variable: str(tmp_path / "pg" / site.database_file), "DATABASE_URL": url}
    with (
        run_uvicorn("app:app", site.directory, tmp_path / "logs", env=env) as on_postgresql,
        site.serve(tmp_path / "sqlite" / site.database_file, tmp_path / "logs") as on_sqlite,
    ):
        # The shop made its table on PostgreSQL, and no SQLite file.
        with connect(url) as db:
            (count,) = db.execute("SELECT count(*) FROM products").fetchone() or (0,)
        assert count == site.item_count
        assert not (tmp_path / "pg" / site.database_file).exists()
        _assert_same_documents(site, on_postgresql, on_sqlite)


# An edit, seen by every worker -----------------------------------------------------------

WORKERS = 2
#: A post in the middle of the second child sitemap, and the date it is moved to: later
#: than every other post's (the last is of November 2023), so it becomes the page's (and
#: the site's) newest, and in the past (Last-Modified is never later than now).
EDITED = 75_000
EDITED_PAGE = "/sitemap-posts-2.xml"
NEW_DATE = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def edited_blog(
    postgresql: PostgresServer, start_gunicorn: StartGunicorn, tmp_path: Path
) -> Iterator[tuple[Server, str]]:
    """The Flask blog on a database of its own, under gunicorn with two workers that
    name themselves (``X-Worker-Pid``); with the database's URL."""
    url = postgresql.create_database("blog_edits")
    folder = tmp_path / "wrapper"
    folder.mkdir()
    (folder / "pid_blog.py").write_text(PID_WRAPPER)
    started = time.perf_counter()
    server = start_gunicorn(
        "pid_blog:app",
        folder,
        workers=WORKERS,
        # The key file goes beside BLOG_DATABASE, outside examples/.
        env={FLASK_BLOG.database_variable: str(tmp_path / "blog.db"), "DATABASE_URL": url},
        pythonpath=[FLASK_BLOG.directory],
    )
    # The start includes creating and filling 120,000 posts (one worker; the other waits).
    print(f"\nFlask blog on a new PostgreSQL database: up in {time.perf_counter() - started:.2f} s")
    yield server, url


def _from_every_worker(
    server: Server, method: str, path: str, headers: dict[str, str] | None = None
) -> dict[str, Raw]:
    """An answer to ``method path`` (identity-coded) from each worker, by its pid.

    Two requests at a time: a sync worker busy with one cannot accept the other, so
    both workers answer within a few rounds.
    """
    answers: dict[str, Raw] = {}
    limits = httpx.Limits(max_connections=WORKERS)
    with (
        httpx.Client(timeout=60, trust_env=False, limits=limits) as http,
        ThreadPoolExecutor(WORKERS) as pool,
    ):
        for _ in range(20):
            calls = [
                pool.submit(
                    request_raw, http, method, server.url(path), {**IDENTITY, **(headers or {})}
                )
                for _ in range(WORKERS)
            ]
            for call in calls:
                response = call.result()
                answers.setdefault(response.headers["x-worker-pid"], response)
            if len(answers) == WORKERS:
                return answers
    pytest.fail(f"only workers {sorted(answers)} answered {method} {path}")


def _one(answers: dict[str, Raw], header: str, status: int = 200) -> str:
    """The value of ``header`` every worker gave in its ``status`` answer (they agree)."""
    assert {response.status for response in answers.values()} == {status}, header
    values = {response.headers.get(header) for response in answers.values()}
    assert len(values) == 1, (header, values)
    (value,) = values
    assert value is not None, header
    return value


def _lastmod_of(body: bytes, loc_suffix: str) -> str:
    """The ``<lastmod>`` of the ``<url>`` whose ``<loc>`` ends with ``loc_suffix``."""
    found = re.search(
        rf"<loc>[^<]*{re.escape(loc_suffix)}</loc><lastmod>([^<]+)</lastmod>", body.decode()
    )
    assert found is not None, loc_suffix
    return found.group(1)


def test_an_update_reaches_every_worker(edited_blog: tuple[Server, str]) -> None:
    server, url = edited_blog
    with connect(url) as db:
        row = db.execute("SELECT updated_at FROM posts WHERE id = %s", (EDITED,)).fetchone()
    assert row is not None
    (original,) = row
    assert isinstance(original, datetime)
    etags = [_one(_from_every_worker(server, "HEAD", EDITED_PAGE), "etag")]
    assert etags[0].startswith('"'), etags  # identity: a strong tag

    # Forwards, then back to where it was (a date moved backwards): both are writes that
    # every worker sees at its next request, through the page's facts.
    for moment in (NEW_DATE, original):
        written = datetime.now(UTC).replace(microsecond=0)
        with connect(url) as db:
            db.execute("UPDATE posts SET updated_at = %s WHERE id = %s", (moment, EDITED))
        pages = _from_every_worker(server, "GET", EDITED_PAGE)
        etag = _one(pages, "etag")
        assert etag not in etags, (moment, etag, etags)
        etags.append(etag)
        for response in pages.values():
            assert _lastmod_of(response.body, f"/posts/{EDITED}") == moment.isoformat()
        # The page's Last-Modified is when its content last changed (its page facts):
        # the time of the write, whether the post's date moved forwards or back.
        changed = parsedate_to_datetime(_one(pages, "last-modified"))
        assert changed >= written, (changed, written)
        # A client holding the previous ETag gets the page again, and one holding the
        # new one a 304, from either worker.
        stale = _from_every_worker(server, "HEAD", EDITED_PAGE, {"If-None-Match": etags[-2]})
        assert _one(stale, "etag") == etag
        fresh = _from_every_worker(server, "HEAD", EDITED_PAGE, {"If-None-Match": etag})
        assert _one(fresh, "etag", status=304) == etag
