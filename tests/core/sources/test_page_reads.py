"""How an index reads the page facts (sitemap_core.sources.sql.page_reads): a summary,
then the pages from one cursor, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path

import anyio
import pytest
from sqlalchemy import (
    Column,
    DateTime,
    Engine,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    text,
)
from sqlalchemy.ext.asyncio import create_async_engine

from sitemap_core import Site, UrlSource
from sitemap_core.errors import InvalidEntryError
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
from tests.core.sources.page_facts_helpers import counted_summary, kept_summary, stale_texts
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
    # The layout's version, the summary, the pages' cursor; none reads the table. On
    # PostgreSQL the layout row keeps the summary: one statement fewer.
    assert len(db.log) == (2 if db.engine.dialect.name == "postgresql" else 3), db.log
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


def zoned_source(db: Db, zone: str) -> tuple[UrlSource, Engine]:
    """The ``stamped`` source on an engine whose sessions are in ``zone``."""
    zoned = create_engine(db.engine.url, connect_args={"options": f"-c TimeZone={zone}"})
    source = SQLAlchemySource(
        zoned, stamped, key="id", lastmod="at", build=f"{ORIGIN}/s/{{slug}}",
        page_facts="stamped_pages",
    )  # fmt: skip
    return streamed(source), zoned


def in_utc(values: list[object]) -> list[str | None]:
    """Each lastmod as normalise_lastmod writes its instant as a UTC datetime."""
    return [None if v is None else normalise_lastmod(_utc(v)) for v in values]


def _utc(value: object) -> datetime:
    return lastmod_instant(normalise_lastmod(value)).astimezone(UTC)


@pytest.mark.parametrize(("zone", "offset"), [("UTC", "+00:00"), ("Etc/GMT-2", "+02:00")])
def test_the_index_writes_each_lastmod_as_the_page_does_in_the_session_zone(
    pg: Db, zone: str, offset: str
) -> None:
    # In UTC the index reads the text the facts keep; in another zone it writes each
    # page's text in that zone, as the page's own path (and SQLite's twin) does.
    fill(pg, range(1, 35))
    source, zoned = zoned_source(pg, zone)
    try:
        source.summary()  # learns that the dates are zoned: the facts keep their text
        pages = list(source.stream(1, WHOLE))
        one_by_one = [source.pages(p.number, p.number + 1)[0] for p in pages]
        assert len(pages) == 4
        assert [p.lastmod for p in pages] == [normalise_lastmod(p.lastmod) for p in one_by_one]
        assert all(str(p.lastmod).endswith(offset) for p in pages)
        assert in_utc([p.lastmod for p in pages]) == in_utc([p.lastmod for p in one_by_one])
    finally:
        zoned.dispose()


def test_an_offset_with_seconds_is_the_same_instant_in_utc(pg: Db) -> None:
    # 1900 in Amsterdam was +00:19:32: to_char in the session's zone wrote +00:19.
    fill(pg, range(2, 3))
    with pg.engine.begin() as conn:
        conn.execute(text("UPDATE stamped SET at = '1900-06-01 12:00:00.5+00:19:32'"))
    install_page_facts(
        pg.engine, "stamped", "id", "stamped_pages", lastmod="at", page_width=WIDTH, recount=True
    )
    source, zoned = zoned_source(pg, "Europe/Amsterdam")
    try:
        source.summary()
        [page] = list(source.stream(1, WHOLE))
        assert page.lastmod == "1900-06-01T11:40:28.500000+00:00"
        got = get(Site([source], page_size=WIDTH), "/sitemap.xml")
        assert got is not None
        assert b"<lastmod>1900-06-01T11:40:28.500000+00:00</lastmod>" in got.body
    finally:
        zoned.dispose()


@pytest.mark.parametrize("infinite", ["infinity", "-infinity"])
def test_an_infinite_lastmod_is_refused_by_the_index_as_by_its_page(pg: Db, infinite: str) -> None:
    source = streamed(fill(pg, range(1, 35)))
    with pg.engine.begin() as conn:  # recounted: page 2's newest row is its only date
        conn.execute(text("UPDATE stamped SET at = NULL WHERE id BETWEEN 11 AND 20"))
        conn.execute(text(f"UPDATE stamped SET at = '{infinite}' WHERE id = 12"))
    install_page_facts(
        pg.engine, "stamped", "id", "stamped_pages", lastmod="at", page_width=WIDTH, recount=True
    )
    with pytest.raises(InvalidEntryError, match="infinity"):  # the page's own path
        get(Site([source], page_size=WIDTH), "/sitemap-stamped-2.xml")
    # The index: its summary (infinity is its newest) or its page 2 (a child without
    # its lastmod, before).
    with pytest.raises(InvalidEntryError, match="infinity"):
        source.summary()
        with closing(source.stream(1, WHOLE)) as pages:
            list(pages)


@pytest.mark.parametrize("stored", [False, True], ids=["key-ranges", "stored-bounds"])
def test_every_writer_of_the_facts_keeps_their_lastmod_text(pg: Db, stored: bool) -> None:
    fill(pg, range(1, 35), stored_bounds=stored)
    writes = [
        "INSERT INTO stamped VALUES (40, 's40', now())",
        "UPDATE stamped SET at = at + INTERVAL '1 microsecond' WHERE id = 3",
        "DELETE FROM stamped WHERE id = 21",
        # Many rows in one statement (with stored bounds: a page split in pieces).
        "INSERT INTO stamped SELECT i, 's' || i, now() FROM generate_series(100, 160) AS i",
        "UPDATE stamped SET at = '2001-02-03 04:05:06+00:19:32' WHERE id = 5",
    ]
    for sql in writes:
        with pg.engine.begin() as conn:
            conn.execute(text(sql))
        assert stale_texts(pg, "stamped_pages") == [], sql
        assert kept_summary(pg, "stamped_pages") == counted_summary(pg, "stamped_pages"), sql
    with pg.engine.connect() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM stamped_pages")).scalar() > 4
    install_page_facts(
        pg.engine, "stamped", "id", "stamped_pages", lastmod="at", page_width=WIDTH,
        stored_bounds=stored, recount=True,
    )  # fmt: skip
    assert stale_texts(pg, "stamped_pages") == []
    assert kept_summary(pg, "stamped_pages") == counted_summary(pg, "stamped_pages")
    with pg.engine.begin() as conn:
        conn.execute(text("TRUNCATE stamped"))
    assert stale_texts(pg, "stamped_pages") == []
    assert kept_summary(pg, "stamped_pages") == counted_summary(pg, "stamped_pages")


def test_facts_of_the_previous_version_keep_serving_and_install_upgrades_them(pg: Db) -> None:
    source = streamed(fill(pg, range(1, 95)))
    site = Site([source], page_size=WIDTH)
    before = get(site, "/sitemap.xml")
    with pg.engine.begin() as conn:  # the facts as the previous version made them
        conn.execute(text("ALTER TABLE stamped_pages DROP COLUMN lastmod_text"))
        conn.execute(
            text(
                "ALTER TABLE stamped_pages_layout DROP COLUMN pages, DROP COLUMN urls,"
                " DROP COLUMN newest, DROP COLUMN changed, DROP COLUMN undated"
            )
        )
        conn.execute(text("DROP FUNCTION stamped_stamped_pages_lastmod"))
    old = Site([streamed(fill_again(pg))], page_size=WIDTH)  # a fresh process
    got = get(old, "/sitemap.xml")  # read with their text written per page
    assert got is not None and before is not None and got.body == before.body
    for _ in range(2):  # the upgrade, idempotent: the text kept, the same index
        install_page_facts(
            pg.engine, "stamped", "id", "stamped_pages", lastmod="at", page_width=WIDTH
        )
        assert stale_texts(pg, "stamped_pages") == []
        got = get(Site([streamed(fill_again(pg))], page_size=WIDTH), "/sitemap.xml")
        assert got is not None and before is not None and got.body == before.body


def test_a_layout_that_kept_its_own_lastmod_text_serves_and_install_drops_it(pg: Db) -> None:
    # The version before kept the layout row's text too, a call at every write.
    source = streamed(fill(pg, range(1, 95)))
    with pg.engine.begin() as conn:
        conn.execute(
            text(
                "ALTER TABLE stamped_pages_layout ADD COLUMN lastmod_text TEXT"
                " GENERATED ALWAYS AS (stamped_stamped_pages_lastmod(newest, changed)) STORED"
            )
        )
        conn.execute(text("DELETE FROM stamped WHERE id = 7"))
    before = get(Site([streamed(fill_again(pg))], page_size=WIDTH), "/sitemap.xml")
    install_page_facts(pg.engine, "stamped", "id", "stamped_pages", lastmod="at", page_width=WIDTH)
    with pg.engine.connect() as conn:
        left = conn.execute(text("SELECT to_jsonb(l) FROM stamped_pages_layout AS l")).scalar()
    assert "lastmod_text" not in left and left["pages"] == 10
    after = get(Site([source], page_size=WIDTH), "/sitemap.xml")
    assert before is not None and after is not None and after.body == before.body


def fill_again(db: Db) -> SQLAlchemySource:
    """A new source of ``stamped`` (as :func:`fill` makes), on the same database."""
    return SQLAlchemySource(
        db.engine, stamped, key="id", lastmod="at", build=f"{ORIGIN}/s/{{slug}}",
        page_facts="stamped_pages",
    )  # fmt: skip


def test_emptying_the_newest_page_does_not_move_the_index_lastmod_back(pg: Db) -> None:
    # PostgreSQL's layout keeps the newest date and write of every page, emptied too.
    source = streamed(fill(pg, range(1, 35)))
    with pg.engine.begin() as conn:  # page 3 is the only page written since the count
        conn.execute(text("UPDATE stamped SET slug = 'edited' WHERE id = 25"))

    def last_modified() -> datetime:
        got = get(Site([source], page_size=WIDTH), "/sitemap.xml")
        assert got is not None and got.status == 200
        return parsedate_to_datetime(str(got.header("last-modified")))

    before = last_modified()
    assert before > datetime(2025, 1, 1, tzinfo=UTC)  # the write's time, not a row's date
    with pg.engine.begin() as conn:
        conn.execute(text("DELETE FROM stamped WHERE id BETWEEN 21 AND 30"))
    assert last_modified() >= before
