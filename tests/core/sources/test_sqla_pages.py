"""The SQLAlchemy sources with page facts: stable pages on SQLite and PostgreSQL.

PostgreSQL is started by the tests (``tests/postgres.py``), as for ``test_sqla.py``.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from sqlalchemy import delete, func, insert, select, text, update
from xsd import validate

from sitemap_core import ConfigurationError
from sitemap_core.sources.sql.sqla import SQLAlchemySource, install_page_facts
from tests.core.sources.page_facts_helpers import async_get, counted_summary, kept_summary
from tests.core.sources.test_sqla import (
    ORIGIN,
    Db,
    day,
    make_db,
    posts,
)

WIDTH = 10


#: How the tests' sources, sync and async, read the table.
READ: dict[str, Any] = {
    "key": "id",
    "lastmod": "updated_at",
    "build": f"{ORIGIN}/posts/{{slug}}",
    "page_facts": "posts_pages",
}


def filled(db: Db, keys: Any, width: int = WIDTH) -> Db:
    db.fill(0)
    with db.engine.begin() as conn:
        conn.execute(
            insert(posts), [{"id": i, "slug": f"p{i}", "updated_at": day(i)} for i in keys]
        )
    install_page_facts(
        db.engine, "posts", "id", "posts_pages", lastmod="updated_at", page_width=width
    )
    return db


def source(db: Db) -> SQLAlchemySource:
    return SQLAlchemySource(db.engine, posts, **READ)


def flask_client(src: Any) -> Any:
    from flask import Flask

    from flask_sitemapper import Sitemapper

    app = Flask(__name__)
    app.testing = True  # a source's error reaches the test
    app.config["SITEMAP_BASE_URL"] = ORIGIN
    Sitemapper(app).add_source("posts", src, page_size=WIDTH)
    return app.test_client()


def index_of(body: bytes) -> dict[str, str | None]:
    validate(body)
    ns = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    return {
        str(child.findtext("sm:loc", namespaces=ns)).removeprefix(ORIGIN): child.findtext(
            "sm:lastmod", namespaces=ns
        )
        for child in etree.fromstring(body).iterfind("sm:sitemap", ns)
    }


def snapshot(get: Any) -> tuple[dict[str, str | None], dict[str, str]]:
    """The index (path -> lastmod) and each page's ETag, every document validated."""
    index = index_of(get("/sitemap.xml").data)
    tags = {}
    for path in index:
        page = get(path)
        assert page.status_code == 200, path
        validate(page.data)
        tags[path] = page.headers["ETag"]
    return index, tags


@pytest.mark.parametrize(
    ("statement", "changed"),
    [
        (delete(posts).where(posts.c.id == 12), "/sitemap-posts-2.xml"),
        (update(posts).where(posts.c.id == 3).values(slug="edited"), "/sitemap-posts-1.xml"),
        (insert(posts).values(id=28, slug="new", updated_at=day(1)), "/sitemap-posts-3.xml"),
    ],
    ids=["delete", "update", "insert"],
)
def test_one_write_changes_one_page(db: Db, statement: Any, changed: str) -> None:
    filled(db, [k for k in range(1, 50) if k != 28])
    client = flask_client(source(db))
    index, tags = snapshot(client.get)
    db.write(statement)
    index_after, tags_after = snapshot(client.get)
    assert [path for path in tags if tags[path] != tags_after[path]] == [changed]
    assert [path for path in index if index[path] != index_after[path]] == [changed]


def test_a_bulk_write_keeps_every_count_exact(db: Db) -> None:
    filled(db, range(1, 200))
    db.write(delete(posts).where(posts.c.id % 3 == 0))
    db.write(update(posts).where(posts.c.id < 40).values(id=posts.c.id + 1000))
    with db.engine.begin() as conn:
        conn.execute(
            insert(posts),
            [{"id": i, "slug": f"n{i}", "updated_at": day(i)} for i in range(500, 620)],
        )
        kept = dict(conn.execute(text("SELECT page, urls FROM posts_pages WHERE urls > 0")).all())
        page = (posts.c.id - 1) // WIDTH
        actual = {int(p): n for p, n in conn.execute(select(page, func.count()).group_by(page))}
    assert kept == actual
    assert kept_summary(db, "posts_pages") == counted_summary(db, "posts_pages")


def test_concurrent_writers_to_one_page_keep_its_count(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    for db in make_db(request, tmp_path, "postgresql"):
        filled(db, range(1, 5), width=1000)
        add_rows_at_once(db)
        with db.engine.connect() as conn:
            urls = conn.execute(text("SELECT urls FROM posts_pages WHERE page = 0")).scalar()
        assert urls == 4 + 4 * 50
        assert kept_summary(db, "posts_pages") == counted_summary(db, "posts_pages")


def test_concurrent_writers_to_many_pages_keep_the_layouts_summary(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    for db in make_db(request, tmp_path, "postgresql"):
        filled(db, range(1, 5), width=10)  # each writer's fifty rows cross six pages
        add_rows_at_once(db)
        db.write(delete(posts).where(posts.c.id.between(200, 209)))  # page 19 emptied
        kept = kept_summary(db, "posts_pages")
        assert kept is not None and kept == counted_summary(db, "posts_pages")
        assert kept[0] == 1 + 4 * 6 - 1  # pages


def test_dates_that_are_never_missing_keep_the_layouts_summary(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    # A NOT NULL date column: the triggers skip the read of the pages' old rows.
    for db in make_db(request, tmp_path, "postgresql"):
        db.fill(0)
        with db.engine.begin() as conn:
            conn.execute(text("ALTER TABLE posts ALTER COLUMN updated_at SET NOT NULL"))
        filled(db, range(1, 100))  # the writers below add keys from 100 on
        db.write(delete(posts).where(posts.c.id % 3 == 0))
        db.write(update(posts).where(posts.c.id < 40).values(id=posts.c.id + 1000))
        add_rows_at_once(db)
        db.write(delete(posts).where(posts.c.id.between(200, 209)))
        kept = kept_summary(db, "posts_pages")
        assert kept is not None and kept == counted_summary(db, "posts_pages")
        with db.engine.connect() as conn:
            listed = conn.execute(text("SELECT COUNT(*) FROM posts_pages WHERE urls > 0")).scalar()
        assert kept[0] == listed > 20  # pages


def test_pages_left_undated_before_the_dates_became_not_null_are_dated_by_writes(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    for db in make_db(request, tmp_path, "postgresql"):
        db.fill(0)
        with db.engine.begin() as conn:
            conn.execute(insert(posts), [{"id": i, "slug": f"p{i}"} for i in range(1, 30)])
        install_page_facts(
            db.engine, "posts", "id", "posts_pages", lastmod="updated_at", page_width=WIDTH
        )
        with db.engine.begin() as conn:  # dated in bulk (triggers off), then NOT NULL
            conn.execute(text("ALTER TABLE posts DISABLE TRIGGER USER"))
            conn.execute(text("UPDATE posts SET updated_at = DATE '2026-01-02'"))
            conn.execute(text("ALTER TABLE posts ENABLE TRIGGER USER"))
            conn.execute(text("ALTER TABLE posts ALTER COLUMN updated_at SET NOT NULL"))
        install_page_facts(
            db.engine, "posts", "id", "posts_pages", lastmod="updated_at", page_width=WIDTH
        )
        assert kept_summary(db, "posts_pages")[-1] == 3  # three pages still undated
        db.write(update(posts).where(posts.c.id == 12).values(slug="edited"))
        assert kept_summary(db, "posts_pages") == counted_summary(db, "posts_pages")
        assert kept_summary(db, "posts_pages")[-1] == 2


def add_rows(db: Db, first: int) -> None:
    """Fifty rows from key ``first``, each in a transaction of its own."""
    for i in range(first, first + 50):
        db.write(insert(posts).values(id=i, slug=f"c{i}", updated_at=day(i)))


def add_rows_at_once(db: Db) -> None:
    """Four writers at once, each adding fifty rows to page 0 (keys from 100, 200, 300
    and 400), a transaction a row."""
    failures: list[BaseException] = []

    def writer(start: int) -> None:
        try:
            add_rows(db, start)
        except BaseException as exc:  # the test fails on it, not the thread alone
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(start,)) for start in (100, 200, 300, 400)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_an_emptied_page_answers_404_and_a_truncate_empties_all(db: Db) -> None:
    filled(db, range(1, 30))
    client = flask_client(source(db))
    db.write(delete(posts).where(posts.c.id.between(11, 20)))
    assert client.get("/sitemap-posts-2.xml").status_code == 404
    assert list(index_of(client.get("/sitemap.xml").data)) == [
        "/sitemap-posts-1.xml",
        "/sitemap-posts-3.xml",
    ]
    if db.engine.dialect.name == "postgresql":
        db.write(text("TRUNCATE posts"))
        assert client.get("/sitemap.xml").status_code == 404
        assert client.get("/sitemap-posts-1.xml").status_code == 404


def test_a_304_reads_only_the_page_facts(db: Db) -> None:
    filled(db, range(1, 30))
    client = flask_client(source(db))
    etag = client.get("/sitemap-posts-2.xml").headers["ETag"]
    db.clear()
    assert client.get("/sitemap-posts-2.xml", headers={"If-None-Match": etag}).status_code == 304
    assert db.log and all("posts_pages" in sql for sql in db.log)


def test_install_is_idempotent(db: Db) -> None:
    filled(db, range(1, 30))
    client = flask_client(source(db))
    before = snapshot(client.get)
    install_page_facts(
        db.engine, "posts", "id", "posts_pages", lastmod="updated_at", page_width=WIDTH
    )
    assert snapshot(client.get) == before


def test_facts_not_installed_and_bad_arguments_are_clear_errors(db: Db) -> None:
    db.fill(3)
    client = flask_client(source(db))
    with pytest.raises(ConfigurationError, match="install_page_facts"):
        client.get("/sitemap.xml")
    with pytest.raises(ConfigurationError, match="install_page_facts"):
        SQLAlchemySource(
            db.engine, posts, key="id", build=str, where=posts.c.id > 1, page_facts="p"
        )
    with pytest.raises(ConfigurationError, match="integer"):
        install_page_facts(db.engine, "posts", "slug", "slug_pages")


def test_the_async_source_serves_the_same_documents(adb: Db) -> None:
    filled(adb, [*range(1, 25), *range(41, 47)])
    expected = snapshot(flask_client(source(adb)).get)
    with async_get(adb, posts, WIDTH, **READ) as get:
        got = snapshot(get)
        assert list(got[0]) == list(expected[0])
        assert got[0] == expected[0]
        assert get("/sitemap-posts-4.xml").status_code == 404


def drafts(db: Db) -> Db:
    """Posts 1-30, every third one a draft (its slug starts with 'draft'), their page
    facts counting the others."""
    db.fill(0)
    with db.engine.begin() as conn:
        conn.execute(
            insert(posts),
            [
                {"id": i, "slug": f"draft{i}" if i % 3 == 0 else f"p{i}", "updated_at": day(i)}
                for i in range(1, 31)
            ],
        )
    install_page_facts(
        db.engine,
        "posts",
        "id",
        "posts_pages",
        lastmod="updated_at",
        page_width=WIDTH,
        where=posts.c.slug.not_like("draft%"),
    )
    return db


def listed_slugs(db: Db) -> list[str]:
    with db.engine.connect() as conn:
        query = select(posts.c.slug).where(posts.c.slug.not_like("draft%")).order_by(posts.c.id)
        return [f"{ORIGIN}/posts/{slug}" for slug in conn.execute(query).scalars()]


@pytest.mark.parametrize(
    ("statement", "changed"),
    [
        (update(posts).where(posts.c.id == 14).values(slug="draft14"), ["/sitemap-posts-2.xml"]),
        (update(posts).where(posts.c.id == 15).values(slug="p15"), ["/sitemap-posts-2.xml"]),
        (update(posts).where(posts.c.id == 15).values(slug="draft-b"), []),
        (delete(posts).where(posts.c.id == 21), []),
        (delete(posts).where(posts.c.id == 22), ["/sitemap-posts-3.xml"]),
        (insert(posts).values(id=29 + 2, slug="draft31", updated_at=day(1)), []),
    ],
    ids=[
        "unpublished",
        "published",
        "draft-edited",
        "draft-deleted",
        "live-deleted",
        "draft-added",
    ],
)
def test_a_condition_limits_pages_and_writes(db: Db, statement: Any, changed: list[str]) -> None:
    client = flask_client(source(drafts(db)))
    index, tags = snapshot(client.get)
    assert len(index) == 3
    db.write(statement)
    index_after, tags_after = snapshot(client.get)
    assert [path for path in tags if tags[path] != tags_after.get(path)] == changed
    served = [
        str(loc.text)
        for path in index_after
        for loc in etree.fromstring(client.get(path).data).iterfind(".//{*}loc")
    ]
    assert served == listed_slugs(db)
