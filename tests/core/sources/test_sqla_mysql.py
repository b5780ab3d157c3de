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

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from docblocks import PROJECT, file_blocks
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree
from mariadb import MariaDB
from sqlalchemy import create_engine, delete, func, insert, select, text, update
from sqlalchemy.exc import IntegrityError

from sitemap_core import ConfigurationError
from sitemap_core.sources.sql.sqla import (
    SQLAlchemySource,
    install_page_facts,
    install_version_triggers,
)
from tests.core.sources.page_facts_helpers import async_get, differing, examples
from tests.core.sources.test_sqla import Db, day, make_db, metadata, posts, source
from tests.core.sources.test_sqla_pages import READ, add_rows_at_once, filled, snapshot

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


@pytest.fixture
def my(mariadb: MariaDB) -> Iterator[Db]:
    """A clean MariaDB database."""
    yield from mysql_db(mariadb)


@pytest.fixture
def lite(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Db]:
    """A SQLite database: what MySQL's documents are compared with."""
    yield from make_db(request, tmp_path, "sqlite")


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
    add_rows_at_once(my)
    kept, actual = facts_and_rows(my)
    assert kept == actual == {0: 4 + 4 * 50}
    with my.engine.connect() as conn:
        # Every write moved the layout's version once: none lost to another.
        assert conn.execute(text("SELECT version FROM posts_pages_layout")).scalar() == 200


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
    src = SQLAlchemySource(my.engine, posts, **{**READ, "build": "http://x.org/{id}"})
    with my.engine.connect() as conn:
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
