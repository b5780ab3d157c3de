"""SQLAlchemySource on MySQL / MariaDB, with the statements docs/sqlalchemy.md gives.

``install_version_triggers`` and ``install_page_facts`` refuse MySQL: the documentation
gives the statements an administrator runs once instead. Those blocks (marked
``<!-- file: mysql-....sql -->``) are run here as written, through the ``mariadb``
command-line client on a private MariaDB server (``tests/mariadb.py``), and the source
then serves the table through PyMySQL (``mysql+pymysql://``; the async source through
aiomysql): the documents must be the ones SQLite serves for the same rows, and a write
must change what the facts promise.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from docblocks import PROJECT, file_blocks
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree
from mariadb import MariaDB
from sqlalchemy import create_engine, delete, func, insert, select, text, update
from sqlalchemy.exc import DBAPIError, IntegrityError

from sitemap_core import ConfigurationError
from sitemap_core.sources.sql.sqla import (
    SQLAlchemySource,
    install_page_facts,
    install_version_triggers,
)
from tests.core.sources import test_sqla_bounds as bounds
from tests.core.sources.page_facts_helpers import async_get, differing, examples
from tests.core.sources.test_sqla import Db, day, metadata, posts, source
from tests.core.sources.test_sqla_pages import READ, filled, snapshot
from tests.core.sources.test_sqla_pages import flask_client as pages_client

#: The documentation's MySQL statements, by the file name each block is marked with.
DOCUMENTED = {
    name: block.source for name, block in file_blocks(PROJECT / "docs" / "sqlalchemy.md").items()
}
#: The documented page width, and rows over four of its pages: the first full (a
#: site of one page's URLs or fewer is served as one <urlset>), a few keys on the others.
WIDTH = 50_000
KEYS = [*range(1, WIDTH + 1), *(page * WIDTH + i for page in range(1, 4) for i in range(1, 8))]
#: The child sitemaps of those rows.
PAGES = [f"/sitemap-posts-{n}.xml" for n in (1, 2, 3, 4)]


def mysql_db(mariadb: MariaDB, *, ansi_quotes: bool = False) -> Iterator[Db]:
    """A clean database ``sitemap`` on the session's MariaDB; with ``ansi_quotes`` its
    connections read ``"name"`` as a name (``sql_mode`` ANSI_QUOTES)."""
    mariadb.client("DROP DATABASE IF EXISTS sitemap; CREATE DATABASE sitemap", database="")
    mode = "SET SESSION sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')"
    engine = create_engine(mariadb.url, connect_args={"init_command": mode} if ansi_quotes else {})
    yield Db(engine, "")
    engine.dispose()


def documented_facts(db: Db, mariadb: MariaDB, keys: Any = KEYS) -> Db:
    """``posts`` with the rows ``keys``, and the documented page facts over it."""
    db.fill(0)
    with db.engine.begin() as conn:
        conn.execute(
            insert(posts), [{"id": i, "slug": f"p{i}", "updated_at": day(i)} for i in keys]
        )
    mariadb.client(DOCUMENTED["mysql-page-facts.sql"])
    db.clear()
    return db


def flask_client(src: Any, page_size: int = WIDTH) -> Any:
    from flask import Flask

    from flask_sitemapper import Sitemapper

    app = Flask(__name__)
    app.testing = True  # a source's error reaches the test
    app.config["SITEMAP_BASE_URL"] = "http://www.example.com"
    Sitemapper(app).add_source("posts", src, page_size=page_size)
    return app.test_client()


def documents(client: Any) -> dict[str, bytes]:
    """The index and every child it lists, by path (each validated by snapshot())."""
    index, _ = snapshot(client.get)
    return {path: client.get(path).data for path in ["/sitemap.xml", *index]}


def locs(body: bytes) -> list[str]:
    return [str(loc.text) for loc in etree.fromstring(body).iterfind(".//{*}loc")]


@pytest.mark.parametrize("ansi_quotes", [False, True], ids=["default-mode", "ansi-quotes"])
def test_documented_page_facts_serve_what_sqlite_serves(
    mariadb: MariaDB, lite: Db, ansi_quotes: bool
) -> None:
    filled(lite, KEYS, width=WIDTH)
    expected = documents(flask_client(SQLAlchemySource(lite.engine, posts, **READ)))
    assert list(expected) == ["/sitemap.xml", *PAGES]
    for db in mysql_db(mariadb, ansi_quotes=ansi_quotes):
        documented_facts(db, mariadb)
        with db.engine.connect() as conn:
            mode = conn.exec_driver_sql("SELECT @@SESSION.sql_mode").scalar()
        assert ("ANSI_QUOTES" in str(mode).split(",")) is ansi_quotes
        assert documents(flask_client(SQLAlchemySource(db.engine, posts, **READ))) == expected


def test_the_statements_run_again_with_another_width(my: Db, mariadb: MariaDB, lite: Db) -> None:
    keys = [*range(1, 26), 41, 42]  # pages 1 to 3, and 5: page 4 is empty
    filled(lite, keys, width=10)
    expected = documents(expected_client(lite))
    assert len(expected) == 5
    documented_facts(my, mariadb, keys)
    mariadb.client(DOCUMENTED["mysql-page-facts.sql"].replace("50000", "10"))
    client = flask_client(SQLAlchemySource(my.engine, posts, **READ), 10)
    assert documents(client) == expected
    # And the triggers count at the new width: key 33 fills page 4.
    my.write(insert(posts).values(id=33, slug="new", updated_at=day(1)))
    after = documents(client)
    assert list(after) == ["/sitemap.xml", *(f"/sitemap-posts-{n}.xml" for n in range(1, 6))]
    assert locs(after["/sitemap-posts-4.xml"]) == ["http://www.example.com/posts/new"]
    assert all(after[path] == expected[path] for path in expected if path != "/sitemap.xml")


def expected_client(db: Db) -> Any:
    return flask_client(SQLAlchemySource(db.engine, posts, **READ), 10)


@pytest.mark.parametrize(
    ("statement", "changed"),
    [
        (delete(posts).where(posts.c.id == WIDTH + 3), "/sitemap-posts-2.xml"),
        (
            update(posts).where(posts.c.id == 2 * WIDTH + 2).values(slug="edited"),
            "/sitemap-posts-3.xml",
        ),
        (
            insert(posts).values(id=WIDTH + 9, slug="new", updated_at=day(1)),
            "/sitemap-posts-2.xml",
        ),
        (
            update(posts).where(posts.c.id == 3 * WIDTH + 1).values(updated_at=day(2)),
            "/sitemap-posts-4.xml",
        ),
    ],
    ids=["delete", "update", "insert", "date-moved-back"],
)
def test_one_write_changes_one_page(my: Db, mariadb: MariaDB, statement: Any, changed: str) -> None:
    client = flask_client(SQLAlchemySource(documented_facts(my, mariadb).engine, posts, **READ))
    index, tags = snapshot(client.get)
    my.write(statement)
    index_after, tags_after = snapshot(client.get)
    assert differing(tags, tags_after, tags) == [changed]
    assert differing(index, index_after, index) == [changed]


def test_urls_stay_on_their_page_after_deletes(my: Db, mariadb: MariaDB) -> None:
    client = flask_client(SQLAlchemySource(documented_facts(my, mariadb).engine, posts, **READ))
    before = documents(client)
    my.write(delete(posts).where(posts.c.id == WIDTH + 3))
    after = documents(client)
    assert [path for path in PAGES if before[path] != after[path]] == ["/sitemap-posts-2.xml"]
    assert locs(after["/sitemap-posts-2.xml"]) == [
        loc for loc in locs(before["/sitemap-posts-2.xml"]) if not loc.endswith(f"/p{WIDTH + 3}")
    ]
    # A page emptied answers 404; the pages after it keep their numbers and URLs.
    my.write(delete(posts).where(posts.c.id.between(WIDTH + 1, 2 * WIDTH)))
    emptied = documents(client)
    assert list(emptied) == ["/sitemap.xml", PAGES[0], *PAGES[2:]]
    assert client.get(PAGES[1]).status_code == 404
    assert all(emptied[path] == before[path] for path in (PAGES[0], *PAGES[2:]))


def facts_and_rows(db: Db) -> tuple[dict[int, int], dict[int, int]]:
    """Each page's count as the facts keep it, and as the table has it."""
    with db.engine.connect() as conn:
        kept = conn.execute(text("SELECT page, urls FROM posts_pages WHERE urls > 0")).all()
        page = func.floor((posts.c.id - 1) / WIDTH)
        actual = conn.execute(select(page, func.count()).group_by(page)).all()
    return {int(p): int(n) for p, n in kept}, {int(p): int(n) for p, n in actual}


def test_bulk_writes_keep_every_count_exact(my: Db, mariadb: MariaDB) -> None:
    documented_facts(my, mariadb, [*range(1, 200), *range(WIDTH + 1, WIDTH + 50)])
    my.write(delete(posts).where(posts.c.id % 3 == 0))
    my.write(update(posts).where(posts.c.id < 40).values(id=posts.c.id + 2 * WIDTH))
    with my.engine.begin() as conn:
        conn.execute(
            insert(posts),
            [
                {"id": i, "slug": f"n{i}", "updated_at": day(i)}
                for i in range(3 * WIDTH, 3 * WIDTH + 120)
            ],
        )
    kept, actual = facts_and_rows(my)
    assert kept == actual
    assert sorted(kept) == [0, 1, 2, 3]


def test_concurrent_writers_to_one_page_keep_its_count(my: Db, mariadb: MariaDB) -> None:
    documented_facts(my, mariadb, range(1, 5))
    # Four writers at once, fifty rows each (keys from 100 to 400), a transaction a row.
    at_once(
        my,
        [
            [insert(posts).values(id=i, slug=f"c{i}", updated_at=day(i)) for i in range(w, w + 50)]
            for w in (100, 200, 300, 400)
        ],
    )
    kept, actual = facts_and_rows(my)
    assert kept == actual == {0: 4 + 4 * 50}
    every_row_listed_once(my)
    with my.engine.connect() as conn:
        # Every write moved the layout's version once: none lost to another.
        assert conn.execute(text("SELECT version FROM posts_pages_layout")).scalar() == 200


def test_concurrent_writers_across_pages_never_deadlock(my: Db, mariadb: MariaDB) -> None:
    """Four writers at once, each adding two rows a statement, one on page 0 and one on
    page 2, half of them in the other order: none fails and every count stays exact."""
    documented_facts(my, mariadb, range(1, 5))
    at_once(
        my,
        [
            [
                insert(posts).values(
                    [{"id": k, "slug": f"c{k}"} for k in (w + i, 2 * WIDTH + w + i)][:: (-1) ** w]
                )
                for i in range(25)
            ]
            for w in (100, 201, 300, 401)
        ],
    )
    kept, actual = facts_and_rows(my)
    assert kept == actual == {0: 4 + 4 * 25, 2: 4 * 25}
    every_row_listed_once(my)


#: Random writes: a kind, a page and a slot on it (the key), a day.
WRITES = st.lists(
    st.tuples(
        st.sampled_from(["insert", "delete", "move", "date"]),
        st.integers(0, 3),
        st.integers(1, 5),
        st.integers(0, 27),
    ),
    max_size=25,
)


def random_write(db: Db, kind: str, page: int, slot: int, on: int) -> None:
    """One write of :data:`WRITES`; a key taken already leaves the rows as they were
    (an insert is ``IGNORE``d; a move fails, and its statement is rolled back with
    what its triggers wrote)."""
    key = page * WIDTH + slot
    statement = {
        "insert": insert(posts).prefix_with("IGNORE").values(id=key, slug=f"r{key}"),
        "delete": delete(posts).where(posts.c.id == key),
        # To the same slot of another page.
        "move": update(posts).where(posts.c.id == key).values(id=(3 - page) * WIDTH + slot),
        "date": update(posts).where(posts.c.id == key).values(updated_at=day(on)),
    }[kind]
    try:
        db.write(statement)
    except IntegrityError:
        assert kind == "move"


@examples(12)
@given(writes=WRITES)
def test_random_writes_keep_every_page_exact(
    my: Db, mariadb: MariaDB, writes: list[tuple[str, int, int, int]]
) -> None:
    my.fill(0)
    my.write(delete(posts))  # the example before left its rows
    documented_facts(my, mariadb, [page * WIDTH + slot for page in range(4) for slot in (1, 3)])
    for write in writes:
        random_write(my, *write)
    kept, actual = facts_and_rows(my)
    assert kept == actual
    every_row_listed_once(my)


def every_row_listed_once(db: Db) -> None:
    """The source's pages list every row of ``posts`` once, in key order, each on the
    page of its key, as many as its facts count."""
    src = SQLAlchemySource(db.engine, posts, **{**READ, "build": "http://x.org/{id}"})
    with db.engine.connect() as conn:
        live = conn.execute(select(posts.c.id).order_by(posts.c.id)).scalars().all()
    listed = []
    for page in list(src.stable_pages(1, 2**31)):  # read whole: its connection goes back
        keys = [
            int(str(loc).rsplit("/", 1)[1]) for loc, _ in src.stable_items(page.start, page.stop)
        ]
        assert len(keys) == page.urls and {(k - 1) // WIDTH for k in keys} == {page.number - 1}
        listed += keys
    assert listed == live


def test_a_304_reads_only_the_layout_row(my: Db, mariadb: MariaDB) -> None:
    client = flask_client(SQLAlchemySource(documented_facts(my, mariadb).engine, posts, **READ))
    for path in ("/sitemap.xml", PAGES[2]):
        etag = client.get(path).headers["ETag"]
        my.clear()
        assert client.get(path, headers={"If-None-Match": etag}).status_code == 304
        assert len(my.log) == 1 and "posts_pages_layout" in my.log[0], my.log


def documented_version(db: Db, mariadb: MariaDB, n: int) -> Db:
    """``posts`` with ``n`` rows and the documented version table."""
    db.fill(n)
    mariadb.client(DOCUMENTED["mysql-posts-version.sql"])
    db.clear()
    return db


def test_documented_version_table_serves_what_sqlite_serves(
    my: Db, mariadb: MariaDB, lite: Db
) -> None:
    lite.fill(25, versioning="version_table")
    expected = flask_client(source(lite, "version_table"), page_size=10)
    client = flask_client(source(documented_version(my, mariadb, 25), "version_table"), 10)
    before = snapshot(client.get)
    assert len(before[0]) == 3
    for statement in (
        update(posts).where(posts.c.id == 4).values(updated_at=day(1)),  # a date moved back
        delete(posts).where(posts.c.id == 17),
        insert(posts).values(id=31, slug="new", updated_at=day(3)),
    ):
        for db in (lite, my):
            db.write(statement)
        # The version moved: the documents are read again, the same as SQLite's, and
        # an ETag changed where a document did.
        assert documents(client) == documents(expected)
        after = snapshot(client.get)
        assert differing(before[1], after[1], after[1]) != []
        before = after
        # A 304 then reads the version row only.
        for path, etag in after[1].items():
            my.clear()
            answer = client.get(path, headers={"If-None-Match": etag})
            assert answer.status_code == 304
            assert len(my.log) == 1 and "posts_version" in my.log[0], my.log


def test_the_installers_refuse_mysql_and_name_the_docs(my: Db) -> None:
    with my.engine.begin() as conn:
        metadata.create_all(conn)
    with pytest.raises(ConfigurationError, match=r"docs/sqlalchemy\.md"):
        install_version_triggers(my.engine, "posts", "posts_version")
    with pytest.raises(ConfigurationError, match=r"docs/sqlalchemy\.md"):
        install_page_facts(my.engine, "posts", "id", "posts_pages")


def test_facts_not_installed_is_a_clear_error(my: Db) -> None:
    my.fill(3)
    with pytest.raises(ConfigurationError, match="install_page_facts"):
        flask_client(SQLAlchemySource(my.engine, posts, **READ)).get("/sitemap.xml")


def test_the_async_source_serves_the_same_documents(my: Db, mariadb: MariaDB) -> None:
    documented_facts(my, mariadb)
    expected = documents(flask_client(SQLAlchemySource(my.engine, posts, **READ)))
    my.async_url = mariadb.url.replace("mysql+pymysql", "mysql+aiomysql")
    with async_get(my, posts, WIDTH, **READ) as get:
        got = {path: get(path).data for path in expected}
        assert got == expected


# Stored boundaries: a text key (``articles.slug``), by the documented statements at
# the width of test_sqla_bounds (the documented 50,000 replaced by 10).


def documented_bounds(db: Db, mariadb: MariaDB, keys: Any) -> Db:
    """``articles`` with the slugs of ``keys``, and the documented stored boundaries
    over it, pages at most 10 rows wide."""
    with db.engine.begin() as conn:
        bounds.metadata.create_all(conn)
        rows = [{"slug": bounds.slug(i), "updated_at": day(i)} for i in keys]
        if rows:
            conn.execute(insert(bounds.articles), rows)
    script = DOCUMENTED["mysql-stored-bounds.sql"].replace("50000", str(bounds.WIDTH))
    mariadb.client(script)
    db.clear()
    return db


#: The child sitemaps of ten pages of stored boundaries.
PAGES_OF_TEN = [f"/sitemap-posts-{n}.xml" for n in range(1, 11)]


def bounds_client(db: Db) -> Any:
    return pages_client(bounds.source(db))


@pytest.mark.parametrize("ansi_quotes", [False, True], ids=["default-mode", "ansi-quotes"])
def test_documented_stored_bounds_serve_what_sqlite_serves(
    mariadb: MariaDB, lite: Db, ansi_quotes: bool
) -> None:
    keys = range(0, 100, 2)  # ten pages of five: each takes five inserts before it splits
    expected_client = bounds_client(bounds.filled(lite, keys))
    expected = documents(expected_client)
    assert len(expected) == 11
    for db in mysql_db(mariadb, ansi_quotes=ansi_quotes):
        stored_bounds_match(db, mariadb, lite, expected_client)


def stored_bounds_match(my: Db, mariadb: MariaDB, lite: Db, expected_client: Any) -> None:
    """The documented stored boundaries on ``my`` serve what ``lite`` serves for the
    same rows (those of ``expected_client``), before and after the same writes."""
    expected = documents(expected_client)
    client = bounds_client(documented_bounds(my, mariadb, range(0, 100, 2)))
    assert documents(client) == expected
    assert bounds.page_urls(my) == bounds.page_urls(lite) == dict.fromkeys(range(10), 5)
    # The same writes, on either side, leave the same documents (no page split).
    for statement in (
        insert(bounds.articles).values(slug="a0027b", updated_at=day(1)),
        delete(bounds.articles).where(bounds.articles.c.slug == bounds.slug(12)),
    ):
        for db in (lite, my):
            db.write(statement)
        # The pages alike (the index's lastmods are each database's write times).
        got, want = documents(client), documents(expected_client)
        assert list(got) == list(want)
        assert all(got[path] == want[path] for path in PAGES_OF_TEN)
    assert bounds.served(client) == bounds.stored_slugs(my)


@pytest.mark.parametrize(
    ("statement", "changed"),
    [
        (delete(bounds.articles).where(bounds.articles.c.slug == "a0024"), "/sitemap-posts-3.xml"),
        (
            update(bounds.articles)
            .where(bounds.articles.c.slug == "a0006")
            .values(updated_at=day(9)),
            "/sitemap-posts-1.xml",
        ),
        (
            insert(bounds.articles).values(slug="a0054b", updated_at=day(1)),
            "/sitemap-posts-6.xml",
        ),
    ],
    ids=["delete", "update", "insert"],
)
def test_stored_bounds_one_write_changes_one_page(
    my: Db, mariadb: MariaDB, statement: Any, changed: str
) -> None:
    client = bounds_client(documented_bounds(my, mariadb, range(0, 100, 2)))
    index, tags = snapshot(client.get)
    my.write(statement)
    index_after, tags_after = snapshot(client.get)
    assert differing(tags, tags_after, tags) == [changed]
    assert differing(index, index_after, index) == [changed]
    assert bounds.served(client) == bounds.stored_slugs(my)


def test_stored_bounds_a_full_page_splits(my: Db, mariadb: MariaDB) -> None:
    client = bounds_client(documented_bounds(my, mariadb, range(0, 100, 2)))
    index, tags = snapshot(client.get)
    # Six rows into page 3 (keys a0020 to a0028): the sixth fills it past the width.
    for i in range(6):
        my.write(insert(bounds.articles).values(slug=f"a0022-{i}", updated_at=day(i)))
    index_after, tags_after = snapshot(client.get)
    assert bounds.page_urls(my) == {**dict.fromkeys(range(10), 5), 2: 6, 10: 5}
    new = "/sitemap-posts-11.xml"
    assert differing(tags, tags_after, tags) == ["/sitemap-posts-3.xml"]
    assert set(index_after) - set(index) == {new}
    assert differing(index, index_after, index) == ["/sitemap-posts-3.xml"]
    slugs = bounds.stored_slugs(my)
    assert bounds.served(client) == slugs[:16] + slugs[21:] + slugs[16:21]
    assert locs(client.get(new).data) == [
        f"{bounds.ORIGIN}/a/{s}" for s in ("a0022-4", "a0022-5", "a0024", "a0026", "a0028")
    ]


def stored_counts_exact(
    db: Db,
    listed_where: str = "1 = 1",
    *,
    table: str = "articles",
    key: str = "slug",
    client: Any = None,
) -> list[str]:
    """Every page's kept count (facts ``<table>_pages``) is the number of rows in its
    range of ``key`` that ``listed_where`` (SQL on the rows ``a``) lists, no page is
    over the width, and the pages (served by ``client``, the articles' by default)
    list every such row exactly once; the keys listed."""
    with db.engine.connect() as conn:
        kept = conn.execute(text(f"SELECT page, urls FROM {table}_pages WHERE urls > 0")).all()
        actual = conn.execute(
            text(
                f"SELECT b.page, COUNT(*) FROM {table} AS a JOIN {table}_pages_bounds AS b"
                f" ON (b.low IS NULL OR a.{key} >= b.low) AND (b.high IS NULL OR a.{key} < b.high)"
                f" WHERE {listed_where} GROUP BY b.page"
            )
        ).all()
        live = conn.execute(text(f"SELECT {key} FROM {table} AS a WHERE {listed_where}"))
        expected = sorted(live.scalars())
    counts = {int(p): int(n) for p, n in kept}
    assert counts == {int(p): int(n) for p, n in actual}
    assert max(counts.values()) <= bounds.WIDTH
    listed = bounds.served(client if client is not None else bounds_client(db))
    assert sorted(listed) == expected and len(set(listed)) == len(listed)
    return listed


def test_stored_bounds_bulk_writes_keep_every_count_exact(my: Db, mariadb: MariaDB) -> None:
    documented_bounds(my, mariadb, range(0, 40, 4))  # two pages of five
    articles = bounds.articles
    with my.engine.begin() as conn:
        conn.execute(
            insert(articles),
            [{"slug": f"a0002-{i:03d}", "updated_at": day(i)} for i in range(97)],
        )
    stored_counts_exact(my)
    assert sum(bounds.page_urls(my).values()) == 107
    my.write(delete(articles).where(articles.c.slug.like("a0002-01%")))
    my.write(update(articles).where(articles.c.slug.like("a0002-02%")).values(updated_at=day(3)))
    # Keys moved: each row leaves its page and arrives on the last range, which splits.
    my.write(
        update(articles)
        .where(articles.c.slug.like("a0002-03%"))
        .values(slug=func.concat("z", articles.c.slug))
    )
    stored_counts_exact(my)
    assert sum(bounds.page_urls(my).values()) == len(bounds.stored_slugs(my)) == 97


def test_stored_bounds_from_an_empty_table(my: Db, mariadb: MariaDB, lite: Db) -> None:
    documented_bounds(my, mariadb, [])
    with lite.engine.begin() as conn:
        bounds.metadata.create_all(conn)
    bounds.install(lite)
    for i in range(25):
        for db in (lite, my):
            db.write(insert(bounds.articles).values(slug=bounds.slug(i), updated_at=day(i)))
    stored_counts_exact(my)
    # Each page split as it passed the width, as on SQLite.
    assert bounds.page_urls(my) == bounds.page_urls(lite) == {0: 6, 1: 6, 2: 6, 3: 7}
    assert bounds.served(bounds_client(my)) == bounds.served(bounds_client(lite))


def test_stored_bounds_concurrent_writers_that_split_keep_every_count(
    my: Db, mariadb: MariaDB
) -> None:
    documented_bounds(my, mariadb, range(0, 40, 4))  # two pages of five
    # Four writers, thirty rows each into the first pages.
    at_once(
        my,
        [
            [
                insert(bounds.articles).values(slug=f"a000{prefix}-{i:02d}", updated_at=day(i))
                for i in range(30)
            ]
            for prefix in "0123"
        ],
    )
    stored_counts_exact(my)
    assert sum(bounds.page_urls(my).values()) == 10 + 4 * 30


def test_stored_bounds_writers_that_update_and_delete_never_deadlock(
    my: Db, mariadb: MariaDB
) -> None:
    """Two writers adding rows to the first pages, which split, while two others
    update and delete rows of those pages, each such transaction locking the layout
    row first (as the documentation says): none fails, every count stays exact."""
    documented_bounds(my, mariadb, range(40))  # eight pages of five
    articles, slug = bounds.articles, bounds.slug
    at_once(
        my,
        [
            *(
                [
                    insert(articles).values(slug=f"a000{w}-{i:02d}", updated_at=day(i))
                    for i in range(30)
                ]
                for w in "01"
            ),
            [
                [
                    LAYOUT_FIRST,
                    update(articles).where(articles.c.slug == slug(k)).values(updated_at=day(k)),
                ]
                for k in range(20)
            ],
            [
                [LAYOUT_FIRST, delete(articles).where(articles.c.slug == slug(k))]
                for k in range(20, 40)
            ],
        ],
    )
    stored_counts_exact(my)
    assert sum(bounds.page_urls(my).values()) == 20 + 2 * 30


#: What a transaction that updates or deletes rows of ``articles`` runs first.
LAYOUT_FIRST = text("SELECT version FROM articles_pages_layout FOR UPDATE")


def at_once(db: Db, writers: list[list[Any]]) -> None:
    """A thread per list of ``writers``, all at once, each running its transactions
    (see :func:`each`); none fails (no deadlock, error 1213; no duplicate key, 1062)."""
    failures: list[Exception] = []
    threads = [threading.Thread(target=each, args=(db, w, failures)) for w in writers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == [], [str(exc.statement) for exc in failures]


def after_an_older_snapshot(db: Db, table: Any, others: list[Any], own: list[Any]) -> None:
    """A REPEATABLE READ transaction reads ``table`` (its snapshot, from now), other
    transactions then run and commit the statements ``others`` one by one, and the
    first then runs its statements ``own`` and commits."""
    with db.engine.connect() as older:
        older.execute(select(func.count()).select_from(table))
        for statement in others:
            db.write(statement)
        for statement in own:
            older.execute(statement)
        older.commit()


def test_stored_bounds_a_writer_with_an_older_snapshot_splits_by_the_last_boundaries(
    my: Db, mariadb: MariaDB
) -> None:
    documented_bounds(my, mariadb, range(0, 40, 4))  # two pages of five
    # Another writer splits the first page; then one whose snapshot is older, again.
    after_an_older_snapshot(
        my,
        bounds.articles,
        [insert(bounds.articles).values(slug=f"a0001-{i}", updated_at=day(i)) for i in range(6)],
        [insert(bounds.articles).values(slug=f"a0000-{i}", updated_at=day(i)) for i in range(6)],
    )
    stored_counts_exact(my)
    assert sum(bounds.page_urls(my).values()) == 22


def each(db: Db, transactions: list[Any], failures: list[Exception]) -> None:
    """Each of ``transactions`` (a statement, or a list of statements run together) in
    a transaction of its own; a failure is noted in ``failures`` and the next runs."""
    for transaction in transactions:
        try:
            with db.engine.begin() as conn:
                for statement in transaction if isinstance(transaction, list) else [transaction]:
                    conn.execute(statement)
        except DBAPIError as exc:
            failures.append(exc)


def test_stored_bounds_random_statements_list_every_row_once(my: Db, mariadb: MariaDB) -> None:
    """Seeded random statements of many rows each: after each, every page's count
    right and none over the width; at the end every row listed once."""
    documented_bounds(my, mariadb, range(0, 200, 7))
    articles, slug = bounds.articles, bounds.slug
    rng = random.Random(21)
    for _ in range(25):
        low = rng.randrange(200)
        picked = articles.c.slug.between(slug(low), slug(low + rng.randrange(1, 40)))
        statement = {
            "insert": insert(articles).prefix_with("IGNORE"),
            "delete": delete(articles).where(picked),
            "rename": update(articles).where(picked).values(slug=func.concat(articles.c.slug, "r")),
            "date": update(articles).where(picked).values(updated_at=day(2)),
        }[kind := rng.choice(["insert", "delete", "rename", "date"])]
        with my.engine.begin() as conn:
            if kind == "insert":
                fresh = [f"{slug(rng.randrange(200))}-{rng.randrange(99)}" for _ in range(30)]
                conn.execute(statement, [{"slug": s, "updated_at": day(1)} for s in fresh])
            else:
                conn.execute(statement)
        counts = bounds.page_urls(my)
        assert max(counts.values(), default=0) <= bounds.WIDTH
        assert sum(counts.values()) == len(bounds.stored_slugs(my))
    stored_counts_exact(my)


# Date buckets: a key that begins with its date (``news.path``), by the documented
# statements at the width of test_sqla_bounds.


def same_pages_after(statements: list[Any], dbs: tuple[Db, Db], clients: tuple[Any, Any]) -> None:
    """The same ``statements`` on either database of ``dbs`` (SQLite's, MySQL's) leave
    the same pages on the clients serving them, MySQL's first (the index's lastmods
    are each database's write times)."""
    for statement in statements:
        for db in dbs:
            db.write(statement)
    got, want = (documents(client) for client in clients)
    assert list(got) == list(want)
    assert all(got[path] == want[path] for path in got if path != "/sitemap.xml")


def documented_months(db: Db, mariadb: MariaDB) -> Any:
    """The newsroom of test_sqla_bounds (eight articles a month, January to March
    2026) with the documented date buckets; the client of a site serving them."""
    with db.engine.begin() as conn:
        bounds.news.metadata.create_all(conn)
        conn.execute(insert(bounds.news), NEWSROOM)
    script = DOCUMENTED["mysql-month-buckets.sql"].replace("50000", str(bounds.WIDTH))
    mariadb.client(script)
    db.clear()
    return pages_client(
        SQLAlchemySource(
            db.engine,
            bounds.news,
            key="path",
            lastmod="updated_at",
            build=f"{bounds.ORIGIN}/a/{{path}}",
            page_facts="news_pages",
        )
    )


#: The newsroom's rows (as test_sqla_bounds.newsroom writes them).
NEWSROOM = [
    {"path": f"2026-{m:02d}-{d:02d}/story-{i}", "updated_at": day(d)}
    for m in (1, 2, 3)
    for d in (1, 2, 3, 4)
    for i in (1, 2)
]


def test_documented_month_buckets_serve_what_sqlite_serves(
    my: Db, mariadb: MariaDB, lite: Db
) -> None:
    expected_client = bounds.newsroom(lite)
    client = documented_months(my, mariadb)
    assert documents(client) == documents(expected_client)
    assert bounds.months(client) == {f"/sitemap-posts-{n}.xml": [f"2026-0{n}"] for n in (1, 2, 3)}
    # The same writes (a new month, an earlier one, rows into a month that splits
    # it) leave the same pages on either side.
    statements = [
        insert(bounds.news).values(path="2026-04-01/april", updated_at=day(5)),
        insert(bounds.news).values(path="2025-12-31/old", updated_at=day(5)),
        *(
            insert(bounds.news).values(path=f"2026-02-09/more-{i:02d}", updated_at=day(9))
            for i in range(25)
        ),
        delete(bounds.news).where(bounds.news.c.path == "2026-01-02/story-1"),
    ]
    same_pages_after(statements, (lite, my), (client, expected_client))
    assert all(len(m) == 1 for m in bounds.months(client).values())
    with my.engine.connect() as conn:
        urls = [n for (n,) in conn.execute(text("SELECT urls FROM news_pages WHERE urls > 0"))]
        stored = sorted(conn.execute(select(bounds.news.c.path)).scalars())
    assert max(urls) <= bounds.WIDTH and sum(urls) == len(stored) == 24 + 2 + 25 - 1


def test_documented_month_buckets_concurrent_writers_never_deadlock(
    my: Db, mariadb: MariaDB
) -> None:
    """Four writers at once, a row a transaction, into two months that split and two
    new months that they open: none fails, every count stays exact and every row is
    listed once, a month a page."""
    client = documented_months(my, mariadb)
    at_once(
        my,
        [
            [
                insert(bounds.news).values(
                    path=f"2026-0{2 + (i + w) % 4}-1{w}/w{w}-{i:02d}", updated_at=day(i)
                )
                for i in range(24)
            ]
            for w in range(4)
        ],
    )
    listed = stored_counts_exact(my, table="news", key="path", client=client)
    assert len(listed) == 24 + 4 * 24
    assert all(len(months) == 1 for months in bounds.months(client).values())


@bounds.MONTH_WRITES
def test_documented_month_buckets_one_write_changes_one_page(
    my: Db, mariadb: MariaDB, path: str, changed: list[str]
) -> None:
    client = documented_months(my, mariadb)
    index, tags = snapshot(client.get)
    my.write(insert(bounds.news).values(path=path, updated_at=day(5)))
    index_after, tags_after = snapshot(client.get)
    assert differing(tags, tags_after, tags) == changed
    assert differing(index, index_after, index) == changed
    added = {p: m for p, m in bounds.months(client).items() if p not in index}
    assert list(added.values()) == ([] if changed else [[path[:7]]])


def test_the_async_source_serves_the_same_stored_bounds(my: Db, mariadb: MariaDB) -> None:
    client = bounds_client(documented_bounds(my, mariadb, range(0, 100, 2)))
    for i in range(6):  # and a page split
        my.write(insert(bounds.articles).values(slug=f"a0022-{i}", updated_at=day(i)))
    expected = documents(client)
    assert len(expected) == 12
    my.async_url = mariadb.url.replace("mysql+pymysql", "mysql+aiomysql")
    with async_get(my, bounds.articles, bounds.WIDTH, **bounds.READ) as get:
        assert {path: get(path).data for path in expected} == expected
