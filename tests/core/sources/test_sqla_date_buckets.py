"""Date buckets on a date column through SQLAlchemy: an integer-keyed blog table paged
by the month of its ``published`` column, seen from outside (the index, each page's
ETag and lastmod, the URLs the pages list), on SQLite and PostgreSQL (started by the
tests, ``tests/postgres.py``)."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime
from typing import Any

import pytest
from hypothesis import given
from lxml import etree
from sqlalchemy import (
    Column,
    Date,
    DateTime,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Uuid,
    delete,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.exc import IntegrityError

from sitemap_core import ConfigurationError
from sitemap_core.sources.sql.sqla import SQLAlchemySource, install_page_facts
from tests.core.sources.page_facts_helpers import (
    as_client,
    async_get,
    counted_summary,
    examples,
    install_sqla,
    kept_summary,
    stale_texts,
    write_operations,
)
from tests.core.sources.test_sqla import ASYNC_DRIVERS, ORIGIN, Db
from tests.core.sources.test_sqla_pages import flask_client, snapshot

WIDTH = 4
metadata = MetaData()
posts = Table(
    "posts",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("published", DateTime(timezone=True), nullable=True),
    Column("state", String(10), nullable=False, server_default="live"),
)
Index("posts_published", posts.c.published, posts.c.id)


#: How the tests' sources, sync and async, read the table.
READ: dict[str, Any] = {
    "key": "id",
    "lastmod": "published",
    "build": f"{ORIGIN}/p/{{id}}",
    "page_facts": "posts_pages",
}


def at(month: int, day: int, hour: int = 0) -> datetime:
    return datetime(2026, month, day, hour, tzinfo=UTC)


#: Three months of five posts each, a day apart: ids 1 to 15.
POSTS = [at(m, d) for m in (1, 2, 3) for d in range(1, 6)]


def filled(db: Db, dates: list[datetime], **options: Any) -> Db:
    with db.engine.begin() as conn:
        metadata.create_all(conn)
        conn.execute(insert(posts), [{"published": d} for d in dates])
    install(db, **options)
    return db


def install(db: Db, **options: Any) -> None:
    install_sqla(db, posts, READ, page_width=WIDTH, month_buckets="published", **options)


def source(db: Db) -> SQLAlchemySource:
    return SQLAlchemySource(db.engine, posts, **READ)


def listing(client: Any, paths: Any) -> dict[str, list[int]]:
    """The ids each page lists."""
    out = {}
    for path in paths:
        root = etree.fromstring(client.get(path).data)
        out[path] = [
            int(str(loc.text).removeprefix(f"{ORIGIN}/p/"))
            for loc in root.iterfind("{*}url/{*}loc")
        ]
    return out


def months(db: Db) -> dict[int, str]:
    with db.engine.connect() as conn:
        rows = conn.execute(select(posts.c.id, posts.c.published).where(posts.c.state == "live"))
        return {i: f"{d.year}-{d.month:02d}" for i, d in rows if d is not None}


#: Writes to the pages of POSTS, each with the pages whose ETag and index lastmod it
#: changes (shared with the tests of the MySQL statements, which must page alike).
POSTS_WRITES = [
    (delete(posts).where(posts.c.id == 7), ["/sitemap-posts-3.xml"]),
    (
        update(posts).where(posts.c.id == 4).values(published=at(1, 4, 5)),
        ["/sitemap-posts-2.xml"],
    ),
    (insert(posts).values(published=at(2, 2, 8)), ["/sitemap-posts-3.xml"]),
    # A date moved to another month: exactly its two pages.
    (
        update(posts).where(posts.c.id == 2).values(published=at(3, 2, 9)),
        ["/sitemap-posts-1.xml", "/sitemap-posts-5.xml"],
    ),
]


def test_a_page_per_month_and_one_write_one_page(db: Db) -> None:
    a_page_per_month_and_one_write_one_page(db, flask_client(source(filled(db, POSTS))))


def a_page_per_month_and_one_write_one_page(db: Db, client: Any) -> None:
    """``client`` serves the pages of POSTS on ``db``: two a month, and each write of
    POSTS_WRITES changes its pages only."""
    index, tags = snapshot(client.get)
    pages = listing(client, index)
    assert list(pages.values()) == [[1, 2, 3], [4, 5], [6, 7, 8], [9, 10], [11, 12, 13], [14, 15]]
    for statement, changed in POSTS_WRITES:
        with db.engine.begin() as conn:
            conn.execute(statement)
        after_index, after_tags = snapshot(client.get)
        assert [p for p in tags if tags[p] != after_tags[p]] == changed
        assert [p for p in index if index[p] != after_index[p]] == changed
        index, tags = after_index, after_tags
    pages = listing(client, index)
    assert pages["/sitemap-posts-5.xml"] == [11, 12, 2, 13]
    assert sorted(i for ids in pages.values() for i in ids) == sorted(months(db))


def test_a_new_month_and_a_split_move_no_other_url(db: Db) -> None:
    a_new_month_and_a_split_move_no_other_url(db, flask_client(source(filled(db, POSTS))))


def a_new_month_and_a_split_move_no_other_url(db: Db, client: Any) -> None:
    """On the pages of POSTS: a month filled past the width splits (its page's ETag
    only changes) and a new month starts a page; every row is listed once."""
    index, tags = snapshot(client.get)
    with db.engine.begin() as conn:
        conn.execute(insert(posts), [{"published": at(2, 2, h)} for h in (10, 11, 12)])
        conn.execute(insert(posts).values(id=40, published=at(4, 1)))
    after_index, after_tags = snapshot(client.get)
    assert list(after_index) == [*index, "/sitemap-posts-7.xml", "/sitemap-posts-8.xml"]
    assert [p for p in tags if tags[p] != after_tags[p]] == ["/sitemap-posts-3.xml"]
    pages = listing(client, after_index)
    assert sorted(i for ids in pages.values() for i in ids) == sorted(months(db))
    for ids in pages.values():
        assert len(ids) <= WIDTH
        assert len({months(db)[i] for i in ids}) == 1


def test_a_null_date_is_refused_naming_the_column(db: Db) -> None:
    with pytest.raises(ConfigurationError, match="month_buckets='published'"):
        filled(db, [*POSTS, None])  # type: ignore[list-item]


operations = write_operations(30, 40)


@examples(15)
@given(operations)
def test_random_writes_list_every_row_once(db: Db, ops: list[tuple[str, int, int, int]]) -> None:
    with db.engine.begin() as conn:
        metadata.create_all(conn)
        conn.execute(delete(posts))
        conn.execute(insert(posts), [{"id": i, "published": d} for i, d in enumerate(POSTS, 1)])
    install(db, where=posts.c.state == "live", recount=True)
    random_writes(db, ops)
    every_row_listed_once(db)
    assert stale_texts(db, "posts_pages") == []  # kept by the splits and openings too
    assert kept_summary(db, "posts_pages") == counted_summary(db, "posts_pages")


def random_writes(db: Db, ops: list[tuple[str, int, int, int]]) -> None:
    """The writes ``ops`` of :func:`write_operations`, a transaction each."""
    # Ids given (the rows above were inserted with theirs: PostgreSQL's sequence is behind).
    next_id = select(func.coalesce(func.max(posts.c.id), 0) + 1).scalar_subquery()
    for op, post, month, day in ops:
        statement = {
            "insert": insert(posts).values(id=next_id, published=at(month, day)),
            "delete": delete(posts).where(posts.c.id == post),
            "move": update(posts).where(posts.c.id == post).values(published=at(month, day)),
            "hide": update(posts).where(posts.c.id == post).values(state="hidden"),
        }[op]
        with db.engine.begin() as conn:
            conn.execute(statement)


def every_row_listed_once(db: Db) -> None:
    """The source's pages list each live row of ``db`` once, a month a page, no page
    over the width."""
    src = source(db)
    live = months(db)
    got = []
    for page in list(src.stable_pages(1, 2**31)):
        items = list(src.stable_items(page.start, page.stop))
        ids = [int(str(loc).removeprefix(f"{ORIGIN}/p/")) for loc, _ in items]
        assert len(ids) == page.urls <= WIDTH
        assert len({live[i] for i in ids}) == 1
        got += ids
    assert len(got) == len(set(got))
    assert sorted(got) == sorted(live)


@pytest.mark.parametrize("db", ["postgresql"], indirect=True)
def test_a_page_is_read_by_the_index_on_date_and_key(db: Db) -> None:
    """PostgreSQL's plan of a page's rows, in a month of 3,000 rows: a range of the index
    on (published, id), not a scan of the table or the month."""
    dates = [at(m, 1 + i % 28, i % 24) for m in (1, 2, 3) for i in range(3000)]
    filled(db, dates)
    with db.engine.begin() as conn:
        conn.execute(text("ANALYZE posts"))
    src = source(db)
    page = list(src.stable_pages(1, 2**31))[3]
    assert len(list(src.stable_items(page.start, page.stop))) == page.urls
    window, params = src._window(page.start, page.stop)
    with db.engine.connect() as conn:
        compiled = window.compile(conn)
        values = {**compiled.params, **params}
        plan = "\n".join(conn.exec_driver_sql(f"EXPLAIN {compiled}", values).scalars())
    # The bounds are the boundaries table's (subqueries): the planner reads a range of
    # the index on (published, id), whichever way it then fetches the rows.
    assert "Seq Scan on posts" not in plan, plan
    assert "Index Cond: ((ROW(published, id) >= ROW($0, $1)) AND" in plan, plan
    assert "on posts_published" in plan, plan


def test_one_statement_of_many_rows_over_months_lists_each_once(db: Db) -> None:
    many_rows_over_months_list_each_once(filled(db, POSTS))


def many_rows_over_months_list_each_once(db: Db) -> None:
    """A bulk INSERT into a past month (a page cut into several pieces at once on
    PostgreSQL), a new month and an old one, then a bulk UPDATE across months, on the
    pages of POSTS."""
    with db.engine.begin() as conn:
        rows = [{"published": at(2, 2, h)} for h in range(11)] + [{"published": at(5, 1)}]
        conn.execute(insert(posts), [*rows, {"published": at(1, 3, 5)}])
    with db.engine.begin() as conn:
        conn.execute(update(posts).where(posts.c.id.between(3, 9)).values(published=at(4, 9)))
    client = flask_client(source(db))
    index, _ = snapshot(client.get)
    pages = listing(client, index)
    live = months(db)
    for ids in pages.values():
        assert 0 < len(ids) <= WIDTH
        assert len({live[i] for i in ids}) == 1
    assert sorted(i for ids in pages.values() for i in ids) == sorted(live)


def test_a_write_of_a_null_date_is_refused_naming_the_column(db: Db) -> None:
    filled(db, POSTS)
    with pytest.raises(IntegrityError, match="published"), db.engine.begin() as conn:
        conn.execute(insert(posts).values(published=None))
    with pytest.raises(IntegrityError, match="published"), db.engine.begin() as conn:
        conn.execute(update(posts).where(posts.c.id == 3).values(published=None))
    assert sorted(months(db)) == list(range(1, 16))


@pytest.mark.parametrize("adb", list(ASYNC_DRIVERS), indirect=True)
def test_the_async_source_serves_the_same_documents(adb: Db) -> None:
    filled(adb, POSTS)
    with adb.engine.begin() as conn:
        conn.execute(insert(posts), [{"published": at(2, 2, h)} for h in range(5)])
    sync = flask_client(source(adb))
    expected = snapshot(sync.get)[0]
    with async_get(adb, posts, WIDTH, **READ) as get:
        assert snapshot(get)[0] == expected
        assert listing(as_client(get), expected) == listing(sync, expected)


def test_a_uuid_key_and_a_date_column(db: Db) -> None:
    """A UUID key (the key below every key: the nil UUID) and a DATE column (a post on
    the first of a month is in that month, at its first page's lower bound)."""
    notes = Table(
        "notes",
        MetaData(),
        Column("id", Uuid, primary_key=True),
        Column("day", Date, nullable=False),
        Index("notes_day", "day", "id"),
    )
    rows = [{"id": uuid.UUID(int=i), "day": date(2026, 1 + i % 4, 1 + i % 3)} for i in range(40)]
    with db.engine.begin() as conn:
        notes.metadata.create_all(conn)
        conn.execute(insert(notes), rows)
    options = {"lastmod": "day", "page_width": WIDTH, "month_buckets": "day"}
    install_page_facts(db.engine, "notes", "id", "notes_pages", **options)  # type: ignore[arg-type]
    with db.engine.begin() as conn:
        conn.execute(insert(notes).values(id=uuid.UUID(int=0x7F << 120), day=date(2026, 6, 1)))
        conn.execute(
            update(notes).where(notes.c.id == uuid.UUID(int=1)).values(day=date(2026, 3, 1))
        )
    src = SQLAlchemySource(
        db.engine,
        notes,
        key="id",
        lastmod="day",
        build=f"{ORIGIN}/n/{{id}}",
        page_facts="notes_pages",
    )
    with db.engine.connect() as conn:
        month = {str(i): d.month for i, d in conn.execute(select(notes.c.id, notes.c.day))}
    got = []
    for page in list(src.stable_pages(1, 2**31)):
        ids = [
            str(loc).removeprefix(f"{ORIGIN}/n/")
            for loc, _ in src.stable_items(page.start, page.stop)
        ]
        assert len(ids) == page.urls <= WIDTH
        assert len({month[i] for i in ids}) == 1
        got += ids
    assert sorted(got) == sorted(month)
