"""SQLAlchemySource and AsyncSQLAlchemySource on SQLite and on a real PostgreSQL.

PostgreSQL is started by the tests (``tests/postgres.py``); without it those cases skip
(fail under CI). Queries are counted with SQLAlchemy's ``before_cursor_execute`` event.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from postgres import postgres_server
from sqlalchemy import (
    Column,
    Date,
    Engine,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    delete,
    event,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.ext.asyncio import create_async_engine
from xsd import validate

from sitemap_core import ConfigurationError, Entry
from sitemap_core.sql import SQLiteSource
from sitemap_core.sqla import (
    AsyncSQLAlchemySource,
    SQLAlchemySource,
    install_change_log,
    install_version_triggers,
)

ORIGIN = "http://www.example.com"
PAGE = 10
VERSIONING = ("none", "version_table", "change_log")

metadata = MetaData()
posts = Table(
    "posts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("slug", String(40), nullable=False),
    Column("updated_at", Date, nullable=True),
)


def day(i: int) -> date:
    return date(2024, 1, 1 + i % 28)


def url(i: int) -> str:
    return f"{ORIGIN}/posts/p{i}"


def build(row: Any) -> Entry:
    return Entry(f"{ORIGIN}/posts/{row.slug}", lastmod=row.updated_at)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


class Db:
    """One database of a test: its engine, statement log, and how to reach it async."""

    def __init__(self, engine: Engine, async_url: str) -> None:
        self.engine = engine
        self.async_url = async_url
        self.log: list[str] = []
        event.listen(engine, "before_cursor_execute", self._record)

    def _record(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        self.log.append(statement)

    def fill(self, n: int, *, versioning: str = "none") -> None:
        with self.engine.begin() as conn:
            metadata.create_all(conn)
            if n:
                conn.execute(
                    insert(posts),
                    [{"id": i, "slug": f"p{i}", "updated_at": day(i)} for i in range(1, n + 1)],
                )
        if versioning == "version_table":
            install_version_triggers(self.engine, "posts", "posts_version")
        elif versioning == "change_log":
            install_change_log(self.engine, "posts", "id", "posts_changes")
        self.log.clear()

    def write(self, statement: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(statement)


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Db]:
    if request.param == "sqlite":
        path = tmp_path / "posts.db"
        engine = create_engine(f"sqlite:///{path}")
        yield Db(engine, f"sqlite+aiosqlite:///{path}")
        engine.dispose()
        return
    yield from postgres_db(request.getfixturevalue("postgres_url"))


@pytest.fixture
def pg(postgres_url: str) -> Iterator[Db]:
    yield from postgres_db(postgres_url)


def postgres_db(url: str) -> Iterator[Db]:
    engine = create_engine(url)
    with engine.begin() as conn:  # a clean schema per test
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    yield Db(engine, url)  # psycopg 3 is sync and async under one URL
    engine.dispose()


def source(db: Db, versioning: str = "none", **options: Any) -> SQLAlchemySource:
    options.setdefault("lastmod", "updated_at")
    options.setdefault("columns", ["slug", "updated_at"])
    return SQLAlchemySource(
        db.engine,
        posts,
        key="id",
        build=options.pop("build", build),
        version_table="posts_version" if versioning == "version_table" else None,
        change_log="posts_changes" if versioning == "change_log" else None,
        **options,
    )


def locs(items: Any) -> list[str]:
    return [item.loc if isinstance(item, Entry) else item for item in items]


def is_version_read(sql: str) -> bool:
    return sql.split()[:4] in (
        ["SELECT", "version", "FROM", "posts_version"],
        ["SELECT", "version", "FROM", "posts_changes_version"],
    )


def index_facts(src: SQLAlchemySource) -> list[Any]:
    """What an index asks of a source: its count, then each page's newest lastmod."""
    count = len(src)
    return [src.newest(start, min(start + PAGE, count)) for start in range(0, count, PAGE)]


# ------------------------------------------------------------------------- paging


@pytest.mark.parametrize("versioning", VERSIONING)
def test_pages_list_every_row_once_in_key_order(db: Db, versioning: str) -> None:
    db.fill(95, versioning=versioning)
    src = source(db, versioning)
    assert len(src) == 95
    index_facts(src)
    pages = [locs(src[start : start + PAGE]) for start in range(0, 100, PAGE)]
    assert [loc for page in pages for loc in page] == [url(i) for i in range(1, 96)]
    assert [len(page) for page in pages] == [10] * 9 + [5]
    assert locs(src[90:]) == [url(i) for i in range(91, 96)]
    assert locs(src[5:5]) == locs(src[200:210]) == []


@pytest.mark.parametrize("versioning", VERSIONING)
def test_a_where_filter_pages_the_filtered_rows(db: Db, versioning: str) -> None:
    db.fill(50, versioning=versioning)
    src = source(db, versioning, where=posts.c.id % 2 == 0)
    assert len(src) == 25
    assert locs(src[10:13]) == [url(22), url(24), url(26)]
    assert src.newest(10, 13) == max(day(22), day(24), day(26))
    everything = [item for start in range(0, 25, PAGE) for item in src[start : start + PAGE]]
    assert locs(everything) == [url(i) for i in range(2, 51, 2)]


def test_a_select_is_paged_as_a_subquery(db: Db) -> None:
    db.fill(30)
    query = select(posts.c.id, posts.c.slug, posts.c.updated_at).where(posts.c.id > 10)
    src = SQLAlchemySource(db.engine, query, key="id", lastmod="updated_at", build=build)
    assert len(src) == 20
    assert locs(src[0:3]) == [url(11), url(12), url(13)]


def test_a_loc_template_gives_tuple_rows(db: Db) -> None:
    db.fill(3)
    src = source(db, build=f"{ORIGIN}/posts/{{slug}}")
    assert list(src[0:2]) == [(url(1), day(1)), (url(2), day(2))]
    with pytest.raises(ConfigurationError):
        source(db, build="no placeholder")


def test_bad_configuration_is_refused(db: Db) -> None:
    db.fill(1)
    with pytest.raises(ConfigurationError, match="not a column"):
        SQLAlchemySource(db.engine, posts, key="nope", build=build)
    with pytest.raises(ConfigurationError, match="not both"):
        SQLAlchemySource(db.engine, posts, key="id", build=build, version_table="a", change_log="b")
    with pytest.raises(ConfigurationError, match="plain SQL identifier"):
        install_change_log(db.engine, "posts", "id", "bad name")


# ------------------------------------------------------------------ query counts


def test_page_n_costs_what_page_1_costs_once_anchors_are_known(db: Db) -> None:
    db.fill(20 * PAGE, versioning="change_log")
    src = source(db, "change_log")
    index_facts(src)  # the index: count, each page's newest and next anchor
    costs = []
    for start in (0, 10 * PAGE, 19 * PAGE):
        db.log.clear()
        assert len(locs(src[start : start + PAGE])) == PAGE
        costs.append(list(db.log))
    assert [len(cost) for cost in costs] == [2, 2, 2]  # the version read, the rows
    # No skip over earlier rows: the rows are a range search from the remembered key
    # (SQLite writes "LIMIT ? OFFSET ?" for any LIMIT; the offset bound is 0).
    assert all(is_version_read(cost[0]) for cost in costs)
    assert not any("SELECT posts.id" in sql for cost in costs for sql in cost)


def test_unversioned_pages_cost_one_statement_each(db: Db) -> None:
    db.fill(20 * PAGE)
    src = source(db)
    for start in (0, 19 * PAGE):
        db.log.clear()
        assert len(locs(src[start : start + PAGE])) == PAGE
        assert len(db.log) == 1


@pytest.mark.parametrize("versioning", ["version_table", "change_log"])
def test_facts_cost_one_version_read_while_unchanged(db: Db, versioning: str) -> None:
    db.fill(5 * PAGE, versioning=versioning)
    src = source(db, versioning)
    first = index_facts(src)
    src.fingerprint(0, PAGE)
    db.log.clear()
    assert index_facts(src) == first  # count + five newest: six calls
    src.fingerprint(0, PAGE)
    assert len(db.log) == 7
    assert all(is_version_read(sql) for sql in db.log)


# ------------------------------------------------------------------------ changes


@pytest.mark.parametrize("versioning", ["version_table", "change_log"])
def test_every_change_renews_the_fingerprint_and_the_facts(db: Db, versioning: str) -> None:
    db.fill(3 * PAGE, versioning=versioning)
    src, plain = source(db, versioning), source(db)
    seen = {src.fingerprint(0, PAGE)}
    index_facts(src)
    changes = [
        insert(posts).values(id=3 * PAGE + 1, slug="new", updated_at=date(2025, 1, 1)),
        # A date moved backwards: invisible to (COUNT, MAX(key), MAX(lastmod)).
        update(posts).where(posts.c.id == 5).values(updated_at=date(2000, 1, 1)),
        delete(posts).where(posts.c.id == 7),
        update(posts).where(posts.c.id == 3 * PAGE + 1).values(updated_at=date(2020, 1, 1)),
    ]
    for change in changes:
        db.write(change)
        fingerprint = src.fingerprint(0, PAGE)
        assert fingerprint not in seen
        seen.add(fingerprint)
        assert index_facts(src) == index_facts(plain)
        assert len(src) == len(plain)
        assert locs(src[0:PAGE]) == locs(plain[0:PAGE])


def test_an_append_reads_only_the_last_page_again(db: Db) -> None:
    db.fill(10 * PAGE, versioning="change_log")
    src = source(db, "change_log")
    first = index_facts(src)
    db.write(insert(posts).values(id=10 * PAGE + 1, slug="new", updated_at=date(2025, 1, 1)))
    db.log.clear()
    assert index_facts(src) == [*first, date(2025, 1, 1)]
    ranges = [sql for sql in db.log if "CASE WHEN" in sql]
    assert len(ranges) == 1


def test_a_truncate_on_postgresql_renews_everything(pg: Db) -> None:
    db = pg
    db.fill(2 * PAGE, versioning="change_log")
    src = source(db, "change_log")
    index_facts(src)
    db.write(text("TRUNCATE posts"))
    assert len(src) == 0
    assert index_facts(src) == []


def test_newest_is_none_when_a_row_of_the_range_has_no_date(db: Db) -> None:
    db.fill(2 * PAGE, versioning="change_log")
    db.write(update(posts).where(posts.c.id == 3).values(updated_at=None))
    for src in (source(db, "change_log"), source(db)):
        assert src.newest(0, PAGE) is None
        assert src.newest(PAGE, 2 * PAGE) == max(day(i) for i in range(11, 21))


def test_recent_lists_the_newest_dates_first_in_one_query(db: Db) -> None:
    db.fill(40)
    db.write(update(posts).where(posts.c.id == 2).values(updated_at=None))
    src = source(db)
    db.log.clear()
    recent = src.recent(5)
    assert len(db.log) == 1
    assert recent is not None
    dates = [item.lastmod for item in recent if isinstance(item, Entry)]
    assert dates == sorted(dates, reverse=True) and len(dates) == 5
    assert dates[0] == "2024-01-28"
    assert source(db, lastmod=None).recent(5) is None


# ------------------------------------------------------------------------- async


def async_source(url: str, versioning: str = "none") -> tuple[Any, AsyncSQLAlchemySource]:
    engine = create_async_engine(url)
    return engine, AsyncSQLAlchemySource(
        engine,
        posts,
        key="id",
        lastmod="updated_at",
        columns=["slug", "updated_at"],
        build=build,
        version_table="posts_version" if versioning == "version_table" else None,
        change_log="posts_changes" if versioning == "change_log" else None,
    )


@pytest.mark.parametrize("versioning", VERSIONING)
def test_the_async_source_gives_what_the_sync_one_gives(db: Db, versioning: str) -> None:
    db.fill(35, versioning=versioning)
    sync = source(db, versioning)

    async def main() -> None:
        engine, src = async_source(db.async_url, versioning)
        try:
            assert await src.count() == 35
            newest = [await src.newest(s, min(s + PAGE, 35)) for s in range(0, 35, PAGE)]
            assert newest == index_facts(sync)
            got = [[i async for i in src.slice(s, s + PAGE)] for s in range(0, 40, PAGE)]
            assert [locs(page) for page in got] == [
                locs(sync[s : s + PAGE]) for s in range(0, 40, PAGE)
            ]
            before = await src.fingerprint(0, PAGE)
            db.write(update(posts).where(posts.c.id == 4).values(updated_at=date(2001, 1, 1)))
            if versioning != "none":
                assert await src.fingerprint(0, PAGE) != before
            assert await src.newest(0, PAGE) == sync.newest(0, PAGE)
            recent = await src.recent(3)
            assert recent is not None and locs(recent) == locs(sync.recent(3) or [])
        finally:
            await engine.dispose()

    asyncio.run(main())


# ------------------------------------------------------------------ through the fronts


def sqlite_copy(db: Db, path: Path) -> SQLiteSource:
    """The same rows in a plain SQLite file, served by SQLiteSource: the reference."""
    with db.engine.connect() as conn:
        rows = conn.execute(select(posts.c.id, posts.c.slug, posts.c.updated_at)).all()
    with sqlite3.connect(path) as copy:
        copy.execute("CREATE TABLE posts (id INTEGER PRIMARY KEY, slug TEXT, updated_at TEXT)")
        copy.executemany(
            "INSERT INTO posts VALUES (?, ?, ?)",
            [(i, slug, None if d is None else d.isoformat()) for i, slug, d in rows],
        )
    copy.close()
    return SQLiteSource(
        lambda: sqlite3.connect(path),
        "posts",
        "id",
        lambda row: Entry(f"{ORIGIN}/posts/{row['slug']}", lastmod=row["updated_at"]),
        columns=["slug", "updated_at"],
        lastmod="updated_at",
    )


def flask_documents(src: Any) -> dict[str, bytes]:
    from flask import Flask

    from flask_sitemapper import Sitemapper

    app = Flask(__name__)
    app.config["SITEMAP_BASE_URL"] = ORIGIN
    Sitemapper(app).add_source("posts", src, page_size=PAGE)
    client = app.test_client()
    return crawl(lambda path: client.get(path).data)


def asgi_documents(src: Any) -> dict[str, bytes]:
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from asgi_sitemap import SitemapMiddleware

    app = SitemapMiddleware(Starlette(), {"posts": src}, base_url=ORIGIN, page_size=PAGE)
    with TestClient(app, base_url=ORIGIN) as client:
        return crawl(lambda path: client.get(path).content)


def crawl(fetch: Any) -> dict[str, bytes]:
    """The index and every child it lists, each validated against the XSD."""
    from lxml import etree

    index = fetch("/sitemap.xml")
    validate(index)
    documents = {"/sitemap.xml": index}
    for loc in etree.fromstring(index).iterfind(".//{*}loc"):
        path = str(loc.text).removeprefix(ORIGIN)
        documents[path] = fetch(path)
        validate(documents[path])
    return documents


@pytest.mark.parametrize("versioning", ["none", "change_log"])
def test_served_by_both_fronts_as_sqlitesource_serves_the_same_rows(
    db: Db, tmp_path: Path, versioning: str
) -> None:
    db.fill(3 * PAGE + 4, versioning=versioning)
    db.write(update(posts).where(posts.c.id == 12).values(updated_at=None))
    reference = flask_documents(sqlite_copy(db, tmp_path / "copy.db"))
    assert len(reference) == 5  # the index and four pages
    assert flask_documents(source(db, versioning)) == reference
    engine, async_src = async_source(db.async_url, versioning)
    try:
        assert asgi_documents(async_src) == reference
    finally:
        asyncio.run(engine.dispose())
