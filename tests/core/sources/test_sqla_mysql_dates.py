"""Date buckets on a date column on MySQL / MariaDB: the statements docs/sqlalchemy.md
gives (``mysql-date-buckets.sql``), run as written on the private MariaDB server, and
the source serving them through PyMySQL (the async source through aiomysql). The
checks are the SQLite and PostgreSQL tests' of the same rows (test_sqla_date_buckets):
the documents alike, one write one page, a split moving no other URL, every row listed
once after bulk, random and concurrent writes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from mariadb import MariaDB
from sqlalchemy import func, insert, select, text, update
from sqlalchemy.exc import IntegrityError

from tests.core.sources import test_sqla_date_buckets as dates
from tests.core.sources.page_facts_helpers import async_get, examples
from tests.core.sources.test_sqla import Db
from tests.core.sources.test_sqla_mysql import (
    DOCUMENTED,
    after_an_older_snapshot,
    at_once,
    documents,
    same_pages_after,
)
from tests.core.sources.test_sqla_pages import flask_client, snapshot

posts, at, POSTS = dates.posts, dates.at, dates.POSTS


def documented_dates(db: Db, mariadb: MariaDB, published: list[Any] = POSTS) -> Db:
    """``posts`` with a row of each date of ``published`` (ids from 1), and the
    documented date buckets over it at the width of test_sqla_date_buckets."""
    with db.engine.begin() as conn:
        dates.metadata.create_all(conn)
        conn.execute(insert(posts), [{"id": i, "published": d} for i, d in enumerate(published, 1)])
    mariadb.client(DOCUMENTED["mysql-date-buckets.sql"].replace("50000", str(dates.WIDTH)))
    db.clear()
    return db


def client_of(db: Db) -> Any:
    return flask_client(dates.source(db))


def test_documented_date_buckets_serve_what_sqlite_serves(
    either_my: Db, mariadb: MariaDB, lite: Db
) -> None:
    expected_client = client_of(dates.filled(lite, POSTS))
    client = client_of(documented_dates(either_my, mariadb))
    assert documents(client) == documents(expected_client)
    # The same writes (a new month, an earlier one, a month filled past the width)
    # leave the same pages on either side.
    statements = [
        *(statement for statement, _ in dates.POSTS_WRITES),
        insert(posts).values(id=30, published=at(4, 1)),
        insert(posts).values(id=31, published=at(1, 1)),  # at a month's first instant
        insert(posts).values(id=32, published=at(12, 31, 23).replace(year=2025)),
        *(insert(posts).values(id=40 + h, published=at(2, 3, h)) for h in range(6)),
    ]
    same_pages_after(statements, (lite, either_my), (client, expected_client))
    assert len(documents(client)) == 11


def test_documented_date_buckets_one_write_one_page(my: Db, mariadb: MariaDB) -> None:
    dates.a_page_per_month_and_one_write_one_page(my, client_of(documented_dates(my, mariadb)))


def test_documented_date_buckets_a_new_month_and_a_split_move_no_other_url(
    my: Db, mariadb: MariaDB
) -> None:
    client = client_of(documented_dates(my, mariadb))
    dates.a_new_month_and_a_split_move_no_other_url(my, client)
    facts_match_the_rows(my)


def test_documented_date_buckets_bulk_writes_list_each_row_once(my: Db, mariadb: MariaDB) -> None:
    dates.many_rows_over_months_list_each_once(documented_dates(my, mariadb))
    facts_match_the_rows(my)


def facts_match_the_rows(db: Db) -> None:
    """Every page's kept count and newest date are those of the rows in its range."""
    with db.engine.connect() as conn:
        kept = conn.execute(text("SELECT page, urls FROM posts_pages WHERE urls > 0")).all()
        actual = conn.execute(
            text(
                "SELECT b.page, COUNT(*) FROM posts AS p JOIN posts_pages_bounds AS b"
                " ON (p.published, p.id) >= (b.low_at, b.low) AND (b.high_at IS NULL"
                " OR (p.published, p.id) < (b.high_at, b.high)) GROUP BY b.page"
            )
        ).all()
    assert dict(kept) == dict(actual)


@examples(12)
@given(dates.operations)
def test_documented_date_buckets_random_writes_list_every_row_once(
    my: Db, mariadb: MariaDB, ops: list[tuple[str, int, int, int]]
) -> None:
    mariadb.client("DROP TABLE IF EXISTS posts")  # the example before left its rows
    documented_dates(my, mariadb)
    # No condition is installed here: a post hidden stays listed, as its months say.
    dates.random_writes(my, [op for op in ops if op[0] != "hide"])
    dates.every_row_listed_once(my)
    facts_match_the_rows(my)


def test_documented_date_buckets_concurrent_writers_keep_every_count(
    my: Db, mariadb: MariaDB
) -> None:
    """Four writers adding rows to February at once, a transaction a row: its pages
    split as they fill, no write fails (none deadlocks against a split) and every
    count stays exact."""
    documented_dates(my, mariadb)
    at_once(
        my,
        [
            [insert(posts).values(id=w * 100 + i, published=at(2, 1 + i % 5, w)) for i in range(20)]
            for w in range(1, 5)
        ],
    )
    facts_match_the_rows(my)
    dates.every_row_listed_once(my)
    with my.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(posts)).scalar() == 15 + 80


def test_documented_date_buckets_refuse_a_null_date(my: Db, mariadb: MariaDB) -> None:
    documented_dates(my, mariadb)
    for statement in (
        insert(posts).values(id=50, published=None),
        update(posts).where(posts.c.id == 3).values(published=None),
    ):
        with pytest.raises(IntegrityError, match="month_buckets=published"):
            my.write(statement)
    assert sorted(dates.months(my)) == list(range(1, 16))
    facts_match_the_rows(my)
    mariadb.client("DROP TABLE posts")
    with pytest.raises(RuntimeError, match="'low_at' cannot be null"):
        documented_dates(my, mariadb, [at(1, 1), None])


def test_a_page_is_read_by_a_range_of_the_index(my: Db, mariadb: MariaDB) -> None:
    """MariaDB's plan of a page's rows: a range of the index on (published, id), not a
    scan of the table (which it gives for bounds on (published, id) alone)."""
    documented_dates(my, mariadb, [at(m, 1 + i % 28, i % 24) for m in (1, 2) for i in range(300)])
    src = dates.source(my)
    page = list(src.stable_pages(1, 2**31))[3]
    assert len(list(src.stable_items(page.start, page.stop))) == page.urls
    window, params = src._window(page.start, page.stop)
    with my.engine.connect() as conn:
        conn.exec_driver_sql("ANALYZE TABLE posts")
        compiled = window.compile(conn)
        plan = conn.exec_driver_sql(f"EXPLAIN {compiled}", {**compiled.params, **params})
        first = plan.mappings().first()
    assert first is not None and (first["type"], first["key"]) == ("range", "posts_published")


def test_the_async_source_serves_the_same_documents(my: Db, mariadb: MariaDB) -> None:
    documented_dates(my, mariadb)
    my.write(update(posts).where(posts.c.id == 2).values(published=at(3, 2, 9)))
    expected = documents(client_of(my))
    assert len(expected) == 7
    my.async_url = mariadb.url.replace("mysql+pymysql", "mysql+aiomysql")
    with async_get(my, posts, dates.WIDTH, **dates.READ) as get:
        assert {path: get(path).data for path in expected} == expected
        assert snapshot(get)[0] == snapshot(client_of(my).get)[0]


def test_a_writer_with_an_older_snapshot_splits_by_the_last_boundaries(
    my: Db, mariadb: MariaDB
) -> None:
    """A writer whose snapshot predates another's split of February's first page (ids
    6 to 8, five more) then fills that page: its split and the new month's page take
    the boundaries and page numbers last committed (locking reads), not its
    snapshot's."""
    documented_dates(my, mariadb)
    after_an_older_snapshot(
        my,
        posts,
        [insert(posts).values(id=100 + h, published=at(2, 1, h + 1)) for h in range(5)],
        [insert(posts).values(id=200 + h, published=at(2, 1, 0)) for h in range(6)],
    )
    facts_match_the_rows(my)
    dates.every_row_listed_once(my)
