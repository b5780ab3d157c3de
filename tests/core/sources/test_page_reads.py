"""How an index reads the page facts (sitemap_core.sources.sql.page_reads): a summary,
then the pages from one cursor, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, create_engine, text
from sqlalchemy.ext.asyncio import create_async_engine

from sitemap_core import Site, UrlSource
from sitemap_core.model.values import lastmod_instant, normalise_lastmod
from sitemap_core.serve.drive_async import respond_async
from sitemap_core.sources.aio import AsyncUrlSource
from sitemap_core.sources.base import WHOLE
from sitemap_core.sources.pages import NormalisedLastmod, Summary, checked_pages, summarised
from sitemap_core.sources.sql.sqla import (
    AsyncSQLAlchemySource,
    SQLAlchemySource,
    install_page_facts,
)
from tests.core.helpers import BASE, ORIGIN, get
from tests.core.memory.test_cache import InlineRunner
from tests.core.sources.test_sqla import ASYNC_DRIVERS, Db, make_db

WIDTH = 10
stamped = Table(
    "stamped",
    MetaData(),
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("slug", String(40), nullable=False),
    Column("at", DateTime(timezone=True), nullable=True),
)


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Db]:
    yield from make_db(request, tmp_path, request.param)


def moment(i: int) -> datetime | None:
    """Row ``i``'s date: whole seconds, fractions, and none for a few."""
    if i % 17 == 0:
        return None
    return datetime(2024, 3, 1, tzinfo=UTC) + timedelta(days=i, microseconds=(i % 3) * 250_001)


def fill(db: Db, keys: range, **options: bool) -> SQLAlchemySource:
    """``stamped`` with rows ``keys`` and its page facts, and a source of them."""
    with db.engine.begin() as conn:
        stamped.create(conn)
        conn.execute(stamped.insert(), [{"id": i, "slug": f"s{i}", "at": moment(i)} for i in keys])
    install_page_facts(
        db.engine, "stamped", "id", "stamped_pages", lastmod="at", page_width=WIDTH, **options
    )
    return SQLAlchemySource(
        db.engine,
        stamped,
        key="id",
        lastmod="at",
        build=f"{ORIGIN}/s/{{slug}}",
        page_facts="stamped_pages",
    )


def streamed(src: SQLAlchemySource) -> UrlSource:
    return UrlSource.from_object("stamped", src)


def instants(values: list[object]) -> list[datetime | None]:
    return [None if v is None else lastmod_instant(normalise_lastmod(v)) for v in values]


@pytest.mark.parametrize("stored", [False, True], ids=["key-ranges", "stored-bounds"])
def test_the_stream_gives_the_pages_one_by_one_reads_give(db: Db, stored: bool) -> None:
    source = streamed(fill(db, range(1, 95), stored_bounds=stored))
    with db.engine.begin() as conn:  # a write: page 3's last change is now
        conn.execute(text("UPDATE stamped SET slug = 'edited' WHERE id = 25"))
    summary = source.summary()  # on PostgreSQL, learns that the dates are zoned
    pages = list(source.stream(1, WHOLE))
    one_by_one = [source.pages(p.number, p.number + 1)[0] for p in pages]
    assert stored or [p.number for p in pages] == list(range(1, 11))
    assert [p[:4] for p in pages] == [p[:4] for p in one_by_one]
    assert [p.version for p in pages] == [p.version for p in one_by_one]
    assert instants([p.lastmod for p in pages]) == instants([p.lastmod for p in one_by_one])
    # Each lastmod is in the normal form (the database's text on PostgreSQL).
    assert all(normalise_lastmod(p.lastmod) == p.lastmod for p in pages)
    kinds = {type(p.lastmod) for p in pages}
    assert kinds == ({NormalisedLastmod} if db.engine.dialect.name == "postgresql" else {str})
    walked = summarised(checked_pages(one_by_one, "stamped", 1, WHOLE))
    assert summary[:2] == walked[:2] == (len(pages), 94)
    assert summary.widest == WIDTH
    assert instants([summary.lastmod]) == instants([walked.lastmod])


def test_a_page_of_undated_rows_leaves_the_summary_undated(db: Db) -> None:
    source = streamed(fill(db, range(1, 95)))
    assert source.summary().lastmod is not None
    with db.engine.begin() as conn:  # rows 11-20 go; 17 (undated) alone is put back
        conn.execute(text("DELETE FROM stamped WHERE id BETWEEN 11 AND 20"))
    install_page_facts(
        db.engine, "stamped", "id", "stamped_pages", lastmod="at", page_width=WIDTH, recount=True
    )
    with db.engine.begin() as conn:
        conn.execute(text("INSERT INTO stamped VALUES (17, 's17', NULL)"))
    assert source.summary().lastmod is not None  # page 2 was written: its change dates it
    install_page_facts(
        db.engine, "stamped", "id", "stamped_pages", lastmod="at", page_width=WIDTH, recount=True
    )
    assert source.summary() == Summary(10, 85, None, WIDTH)


@pytest.mark.parametrize("rows", [95, 495])
def test_an_index_costs_three_statements_whatever_its_pages(db: Db, rows: int) -> None:
    source = fill(db, range(1, rows))
    site = Site([UrlSource.from_object("stamped", source)], page_size=WIDTH)
    db.clear()
    got = get(site, "/sitemap.xml")
    assert got is not None and got.status == 200
    assert got.body.count(b"<sitemap>") == -(-(rows - 1) // WIDTH)
    # The layout's version, the summary, the pages' cursor; none reads the table.
    assert len(db.log) == 3, db.log
    assert all("stamped_pages" in sql for sql in db.log)


@pytest.fixture(params=list(ASYNC_DRIVERS))
def adb(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Db]:
    yield from make_db(request, tmp_path, request.param)


def test_an_async_source_streams_the_same_index(adb: Db) -> None:
    sync = streamed(fill(adb, range(1, 95)))
    expected = get(Site([sync], page_size=WIDTH), "/sitemap.xml")
    assert expected is not None and expected.status == 200
    engine = create_async_engine(adb.async_url)
    source = AsyncSQLAlchemySource(
        engine, stamped, key="id", lastmod="at", build=f"{ORIGIN}/s/{{slug}}",
        page_facts="stamped_pages",
    )  # fmt: skip
    site = Site([AsyncUrlSource.from_object("stamped", source)], page_size=WIDTH)

    async def run() -> bytes:
        try:
            reply = await respond_async(site, "GET", "/sitemap.xml", lambda: BASE, InlineRunner())
            assert reply is not None and reply.status == 200
            return b"".join([chunk async for chunk in reply.body])  # type: ignore[union-attr]
        finally:
            await engine.dispose()

    assert anyio.run(run) == expected.body


@pytest.fixture
def pg(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Db]:
    """PostgreSQL alone: a session time zone of its own is PostgreSQL's."""
    yield from make_db(request, tmp_path, "postgresql")


def test_a_session_time_zone_writes_the_same_text_streamed_and_one_by_one(pg: Db) -> None:
    db = pg
    fill(db, range(1, 35))
    zoned = create_engine(db.engine.url, connect_args={"options": "-c TimeZone=Etc/GMT-2"})
    try:
        source = streamed(
            SQLAlchemySource(
                zoned,
                stamped,
                key="id",
                lastmod="at",
                build=f"{ORIGIN}/s/{{slug}}",
                page_facts="stamped_pages",
            )
        )
        source.summary()  # learns that the dates are zoned: the database writes them
        pages = list(source.stream(1, WHOLE))
        one_by_one = [source.pages(p.number, p.number + 1)[0] for p in pages]
        assert len(pages) == 4
        # The index says what each page's own path says, in the session's offset.
        assert [p.lastmod for p in pages] == [normalise_lastmod(p.lastmod) for p in one_by_one]
        assert all(str(p.lastmod).endswith("+02:00") for p in pages)
    finally:
        zoned.dispose()
