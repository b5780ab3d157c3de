"""Stored boundaries with a condition on the listed rows on MySQL / MariaDB: the
statements docs/sqlalchemy.md gives (``mysql-stored-bounds-where.sql``: the rows of
``articles`` whose ``state`` is ``'live'``), run as written on the private MariaDB
server, against SQLite's ``install_page_facts(..., stored_bounds=True, where=...)`` over
the same rows: the documents alike, one write one page (none for a row not listed),
a split moving listed rows only, counts exact after bulk, random and concurrent
writes, the async source serving the same documents."""

from __future__ import annotations

import random
from typing import Any

import pytest
from mariadb import MariaDB
from sqlalchemy import delete, func, insert, update

from tests.core.sources import test_sqla_bounds as bounds
from tests.core.sources.page_facts_helpers import async_get, differing
from tests.core.sources.test_sqla import Db, day
from tests.core.sources.test_sqla_mysql import (
    DOCUMENTED,
    LAYOUT_FIRST,
    PAGES_OF_TEN,
    at_once,
    bounds_client,
    documents,
    locs,
    same_pages_after,
    stored_counts_exact,
)
from tests.core.sources.test_sqla_pages import snapshot

articles, slug = bounds.articles, bounds.slug
#: The condition, as the tests' SQL on the rows ``a`` reads it.
LIVE = "a.state = 'live'"


def rows(keys: Any) -> list[dict[str, Any]]:
    """The rows of ``keys``: every third one a draft, not listed."""
    return [
        {"slug": slug(i), "updated_at": day(i), "state": "draft" if i % 3 == 0 else "live"}
        for i in keys
    ]


#: Sixty rows of which forty are listed: eight pages of five at installation, each
#: taking six listed rows before it splits (drafts among them count for nothing).
KEYS = range(0, 120, 2)


def documented(db: Db, mariadb: MariaDB, keys: Any = KEYS) -> Db:
    """``articles`` with the rows of ``keys`` and the documented stored boundaries with
    the condition over it, pages at most 10 rows wide."""
    with db.engine.begin() as conn:
        bounds.metadata.create_all(conn)
        if keys:
            conn.execute(insert(articles), rows(keys))
    script = DOCUMENTED["mysql-stored-bounds-where.sql"].replace("50000", str(bounds.WIDTH))
    mariadb.client(script)
    db.clear()
    return db


def installed_on_sqlite(lite: Db, keys: Any = KEYS) -> Db:
    """The same rows on SQLite, with the library's page facts and the same condition."""
    with lite.engine.begin() as conn:
        bounds.metadata.create_all(conn)
        if keys:
            conn.execute(insert(articles), rows(keys))
    bounds.install(lite, where=articles.c.state == "live")
    return lite


#: Writes each side makes: a draft added, a draft published, a row unpublished, a draft
#: deleted, a listed row's date moved (none of them a split).
WRITES = [
    insert(articles).values(slug="a0031x", updated_at=day(1), state="draft"),
    update(articles).where(articles.c.slug == slug(36)).values(state="live"),
    update(articles).where(articles.c.slug == slug(44)).values(state="draft"),
    delete(articles).where(articles.c.slug == slug(60)),
    update(articles).where(articles.c.slug == slug(10)).values(updated_at=day(20)),
]


def test_documented_condition_serves_what_sqlite_serves(
    either_my: Db, mariadb: MariaDB, lite: Db
) -> None:
    expected_client = bounds_client(installed_on_sqlite(lite))
    expected = documents(expected_client)
    assert len(expected) == 9
    client = bounds_client(documented(either_my, mariadb))
    assert documents(client) == expected
    assert bounds.page_urls(either_my) == bounds.page_urls(lite) == dict.fromkeys(range(8), 5)
    same_pages_after(WRITES, (lite, either_my), (client, expected_client))
    stored_counts_exact(either_my, LIVE)


@pytest.mark.parametrize(
    ("statement", "changed"),
    [
        (WRITES[0], []),  # a draft added: no page lists it
        (WRITES[1], ["/sitemap-posts-3.xml"]),  # a36 published, onto page 3
        (WRITES[2], ["/sitemap-posts-3.xml"]),  # a44 unpublished, off page 3
        (WRITES[3], []),  # a draft deleted
        (update(articles).where(articles.c.slug == slug(30)).values(updated_at=day(2)), []),
        (WRITES[4], ["/sitemap-posts-1.xml"]),
        (delete(articles).where(articles.c.slug == slug(92)), ["/sitemap-posts-7.xml"]),
    ],
    ids=["insert-draft", "publish", "unpublish", "delete-draft", "date-of-draft", "date", "delete"],
)
def test_one_write_changes_one_page_or_none(
    my: Db, mariadb: MariaDB, statement: Any, changed: list[str]
) -> None:
    client = bounds_client(documented(my, mariadb))
    index, tags = snapshot(client.get)
    my.write(statement)
    index_after, tags_after = snapshot(client.get)
    assert differing(tags, tags_after, tags) == changed
    assert differing(index, index_after, index) == changed
    stored_counts_exact(my, LIVE)


def test_a_full_page_splits_at_its_middle_listed_row(my: Db, mariadb: MariaDB) -> None:
    client = bounds_client(documented(my, mariadb))
    before = snapshot(client.get)
    # Page 3 (a0032 to a0044 listed): drafts, which change nothing, then five listed
    # rows, then a sixth over the width.
    for i in range(4):
        my.write(insert(articles).values(slug=f"a0042-{i}", updated_at=day(i), state="draft"))
    assert snapshot(client.get) == before
    for suffix in "abcde":
        my.write(insert(articles).values(slug=f"a0041-{suffix}", updated_at=day(5)))
    index, tags = snapshot(client.get)
    my.write(insert(articles).values(slug="a0041-f", updated_at=day(5)))
    index_after, tags_after = snapshot(client.get)
    new = "/sitemap-posts-9.xml"
    assert differing(tags, tags_after, tags) == ["/sitemap-posts-3.xml"]
    assert set(index_after) - set(index) == {new}
    assert differing(index, index_after, index) == ["/sitemap-posts-3.xml"]
    assert bounds.page_urls(my) == {**dict.fromkeys(range(8), 5), 2: 6, 8: 5}
    # The listed rows of the upper half moved, the drafts among them not listed.
    assert [loc.rsplit("/", 1)[1] for loc in locs(client.get(new).data)] == [
        "a0041-c",
        "a0041-d",
        "a0041-e",
        "a0041-f",
        "a0044",
    ]
    stored_counts_exact(my, LIVE)


def test_bulk_writes_keep_every_count_exact(my: Db, mariadb: MariaDB) -> None:
    documented(my, mariadb, range(0, 40, 4))
    with my.engine.begin() as conn:
        conn.execute(
            insert(articles),
            [
                {"slug": f"a0002-{i:03d}", "updated_at": day(i), "state": ("draft", "live")[i % 2]}
                for i in range(97)
            ],
        )
    stored_counts_exact(my, LIVE)
    my.write(update(articles).where(articles.c.slug.like("a0002-01%")).values(state="live"))
    my.write(update(articles).where(articles.c.slug.like("a0002-02%")).values(state="draft"))
    my.write(delete(articles).where(articles.c.slug.like("a0002-03%")))
    my.write(
        update(articles)
        .where(articles.c.slug.like("a0002-04%"))
        .values(slug=func.concat("z", articles.c.slug))
    )
    stored_counts_exact(my, LIVE)


def test_random_statements_list_every_listed_row_once(my: Db, mariadb: MariaDB) -> None:
    """Seeded random statements of many rows each, listing and unlisting rows too:
    after each, every page's count right and none over the width."""
    documented(my, mariadb, range(0, 200, 7))
    rng = random.Random(21)
    for _ in range(30):
        low = rng.randrange(200)
        picked = articles.c.slug.between(slug(low), slug(low + rng.randrange(1, 40)))
        kind = rng.choice(["insert", "delete", "rename", "publish", "unpublish"])
        with my.engine.begin() as conn:
            if kind == "insert":
                fresh = [f"{slug(rng.randrange(200))}-{rng.randrange(99)}" for _ in range(30)]
                conn.execute(
                    insert(articles).prefix_with("IGNORE"),
                    [
                        {"slug": s, "updated_at": day(1), "state": rng.choice(["live", "draft"])}
                        for s in fresh
                    ],
                )
            else:
                conn.execute(
                    {
                        "delete": delete(articles).where(picked),
                        "rename": update(articles)
                        .where(picked)
                        .values(slug=func.concat(articles.c.slug, "r")),
                        "publish": update(articles).where(picked).values(state="live"),
                        "unpublish": update(articles).where(picked).values(state="draft"),
                    }[kind]
                )
        counts = bounds.page_urls(my)
        assert max(counts.values(), default=0) <= bounds.WIDTH
    stored_counts_exact(my, LIVE)


def test_concurrent_writers_keep_every_count(my: Db, mariadb: MariaDB) -> None:
    """Four writers into the first pages at once, listed rows and drafts, and
    publishing drafts: pages split as they fill, and every count stays exact."""
    documented(my, mariadb, range(0, 40, 4))
    statements = [
        [
            insert(articles).values(
                slug=f"a000{w}-{i:02d}", updated_at=day(i), state=("live", "draft")[i % 3 == 0]
            )
            if i % 4
            # An UPDATE locks its row before any trigger: it locks the layout first.
            else [
                LAYOUT_FIRST,
                update(articles).where(articles.c.slug == slug(w * 4)).values(state="live"),
            ]
            for i in range(30)
        ]
        for w in range(4)
    ]
    at_once(my, statements)
    stored_counts_exact(my, LIVE)


def test_the_async_source_serves_the_same_documents(my: Db, mariadb: MariaDB) -> None:
    client = bounds_client(documented(my, mariadb))
    for i in range(6):  # and a page split
        my.write(insert(articles).values(slug=f"a0042-{i}", updated_at=day(i)))
    expected = documents(client)
    assert list(expected) == ["/sitemap.xml", *PAGES_OF_TEN[:9]]
    my.async_url = mariadb.url.replace("mysql+pymysql", "mysql+aiomysql")
    with async_get(my, articles, bounds.WIDTH, **bounds.READ) as get:
        assert {path: get(path).data for path in expected} == expected
