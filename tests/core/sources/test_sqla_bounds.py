"""Stored boundaries through SQLAlchemy: stable pages for a text or UUID key, on SQLite
and on PostgreSQL (started by the tests, ``tests/postgres.py``), seen from outside:
the index, each page's ETag and the URLs the pages list."""

from __future__ import annotations

import random
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from sqlalchemy import (
    Column,
    Date,
    Integer,
    MetaData,
    String,
    Table,
    Uuid,
    delete,
    insert,
    select,
    text,
    update,
)

from sitemap_core import ConfigurationError
from sitemap_core.sources.sql.sqla import SQLAlchemySource, install_page_facts
from tests.core.sources.page_facts_helpers import as_client, async_get, install_sqla
from tests.core.sources.test_sqla import ORIGIN, Db, day, make_db
from tests.core.sources.test_sqla_pages import flask_client, index_of, snapshot

WIDTH = 10
metadata = MetaData()
articles = Table(
    "articles",
    metadata,
    Column("slug", String(40), primary_key=True),
    Column("updated_at", Date, nullable=True),
    Column("state", String(10), nullable=False, server_default="live"),
)
things = Table("things", MetaData(), Column("id", Uuid, primary_key=True), Column("n", Integer))


#: How the tests' sources, sync and async, read the table.
READ: dict[str, Any] = {
    "key": "slug",
    "lastmod": "updated_at",
    "build": f"{ORIGIN}/a/{{slug}}",
    "page_facts": "articles_pages",
}


def slug(i: int) -> str:
    return f"a{i:04d}"


def filled(db: Db, keys: Any, **options: Any) -> Db:
    with db.engine.begin() as conn:
        metadata.create_all(conn)
        conn.execute(insert(articles), [{"slug": slug(i), "updated_at": day(i)} for i in keys])
    install(db, **options)
    return db


def install(db: Db, **options: Any) -> None:
    install_sqla(db, articles, READ, page_width=WIDTH, stored_bounds=True, **options)


def source(db: Db) -> SQLAlchemySource:
    return SQLAlchemySource(db.engine, articles, **READ)


def served(client: Any) -> list[str]:
    """Every loc the sitemap lists, in the order served: of every page of the index,
    or of the one file a site of one page serves."""
    root = etree.fromstring(client.get("/sitemap.xml").data)
    paths = [] if root.tag.endswith("urlset") else list(index_of(client.get("/sitemap.xml").data))
    pages = [root] if not paths else [etree.fromstring(client.get(p).data) for p in paths]
    return [
        str(loc.text).removeprefix(f"{ORIGIN}/a/")
        for page in pages
        for loc in page.iterfind("{*}url/{*}loc")
    ]


def stored_slugs(db: Db) -> list[str]:
    with db.engine.connect() as conn:
        return sorted(conn.execute(select(articles.c.slug)).scalars())


def page_urls(db: Db) -> dict[int, int]:
    with db.engine.connect() as conn:
        rows = conn.execute(text("SELECT page, urls FROM articles_pages WHERE urls > 0"))
        return {int(page): int(urls) for page, urls in rows}


def test_installation_cuts_pages_of_half_the_width_in_key_order(db: Db) -> None:
    client = flask_client(source(filled(db, range(50))))
    index = index_of(client.get("/sitemap.xml").data)
    assert list(index) == [f"/sitemap-posts-{n}.xml" for n in range(1, 11)]
    assert page_urls(db) == dict.fromkeys(range(10), 5)
    assert served(client) == [slug(i) for i in range(50)]


@pytest.mark.parametrize(
    ("statement", "changed"),
    [
        (delete(articles).where(articles.c.slug == slug(12)), "/sitemap-posts-3.xml"),
        (
            update(articles).where(articles.c.slug == slug(3)).values(updated_at=day(9)),
            "/sitemap-posts-1.xml",
        ),
        (insert(articles).values(slug="a0027b", updated_at=day(1)), "/sitemap-posts-6.xml"),
    ],
    ids=["delete", "update", "insert"],
)
def test_one_write_changes_one_page(db: Db, statement: Any, changed: str) -> None:
    client = flask_client(source(filled(db, range(50))))
    index, tags = snapshot(client.get)
    db.write(statement)
    index_after, tags_after = snapshot(client.get)
    assert [path for path in tags if tags[path] != tags_after[path]] == [changed]
    assert [path for path in index if index[path] != index_after[path]] == [changed]
    assert served(client) == stored_slugs(db)


def test_a_split_moves_the_full_page_s_upper_half_to_a_new_last_page(db: Db) -> None:
    client = flask_client(source(filled(db, range(0, 100, 2))))  # 10 pages of 5
    index, tags = snapshot(client.get)
    # Six rows into page 3 (keys a0020 to a0028): the sixth fills it past the width.
    for i in range(6):
        db.write(insert(articles).values(slug=f"a0022-{i}", updated_at=day(i)))
    index_after, tags_after = snapshot(client.get)
    assert page_urls(db) == {**dict.fromkeys(range(10), 5), 2: 6, 10: 5}
    new = "/sitemap-posts-11.xml"
    assert [path for path in tags if tags[path] != tags_after[path]] == ["/sitemap-posts-3.xml"]
    assert set(index_after) - set(index) == {new}
    assert [path for path in index if index[path] != index_after[path]] == ["/sitemap-posts-3.xml"]
    slugs = stored_slugs(db)
    assert served(client) == slugs[:16] + slugs[21:] + slugs[16:21]
    page = etree.fromstring(client.get(new).data)
    moved = [str(loc.text).removeprefix(f"{ORIGIN}/a/") for loc in page.iterfind(".//{*}loc")]
    assert moved == ["a0022-4", "a0022-5", "a0024", "a0026", "a0028"]


def test_a_bulk_write_splits_into_pieces_within_the_width(db: Db) -> None:
    filled(db, range(0, 40, 4))  # 2 pages of 5
    with db.engine.begin() as conn:
        conn.execute(
            insert(articles),
            [{"slug": f"a0002-{i:03d}", "updated_at": day(i)} for i in range(97)],
        )
    client = flask_client(source(db))
    counts = page_urls(db)
    assert sum(counts.values()) == 107
    assert max(counts.values()) <= WIDTH
    listed = served(client)
    assert sorted(listed) == stored_slugs(db) and len(set(listed)) == len(listed)
    with db.engine.begin() as conn:
        conn.execute(delete(articles).where(articles.c.slug.like("a0002-0%")))
    assert sorted(served(client)) == stored_slugs(db)
    assert sum(page_urls(db).values()) == len(stored_slugs(db))


def test_a_uuid_key(db: Db) -> None:
    keys = [uuid.UUID(int=(i * 2**120 + 7) % 2**128) for i in range(30)]
    with db.engine.begin() as conn:
        things.metadata.create_all(conn)
        conn.execute(insert(things), [{"id": key, "n": i} for i, key in enumerate(keys)])
    install_page_facts(
        db.engine, "things", "id", "things_pages", page_width=WIDTH, stored_bounds=True
    )
    src = SQLAlchemySource(
        db.engine, things, key="id", build=f"{ORIGIN}/t/{{n}}", page_facts="things_pages"
    )
    client = flask_client(src)
    index, tags = snapshot(client.get)
    db.write(insert(things).values(id=uuid.UUID(int=5 * 2**120 + 9), n=99))
    index_after, tags_after = snapshot(client.get)
    changed = [path for path in tags if tags[path] != tags_after[path]]
    assert len(changed) == 1
    assert [path for path in index if index[path] != index_after[path]] == changed
    locs = [
        str(loc.text)
        for path in index_after
        for loc in etree.fromstring(client.get(path).data).iterfind(".//{*}loc")
    ]
    assert sorted(locs) == sorted(f"{ORIGIN}/t/{n}" for n in [*range(30), 99])


def test_a_condition_lists_the_rows_it_holds_for(db: Db) -> None:
    filled(db, range(30), where=articles.c.state == "live")
    client = flask_client(source(db))
    db.write(update(articles).where(articles.c.slug == slug(7)).values(state="draft"))
    db.write(insert(articles).values(slug="a0007x", state="draft"))
    assert served(client) == [slug(i) for i in range(30) if i != 7]


def test_install_is_idempotent_and_a_change_of_kind_counts_again(db: Db) -> None:
    client = flask_client(source(filled(db, range(30))))
    before = snapshot(client.get)
    install(db)
    assert snapshot(client.get) == before
    install(db, recount=True)
    assert snapshot(client.get)[1] != before[1]


def test_a_text_key_without_stored_bounds_or_an_index_is_refused(db: Db) -> None:
    filled(db, range(3))
    with pytest.raises(ConfigurationError, match="stored_bounds=True"):
        install_page_facts(db.engine, "articles", "slug", "slug_pages")
    with pytest.raises(ConfigurationError, match="unique index"):
        install_page_facts(db.engine, "articles", "state", "state_pages", stored_bounds=True)
    with db.engine.begin() as conn:
        conn.execute(text("CREATE TABLE numbered (n INTEGER PRIMARY KEY)"))
    with pytest.raises(ConfigurationError, match="month_buckets"):
        install_page_facts(db.engine, "numbered", "n", "n_pages", month_buckets=True)


def test_the_async_source_serves_the_same_documents(adb: Db) -> None:
    filled(adb, range(0, 100, 2))
    for i in range(6):
        adb.write(insert(articles).values(slug=f"a0022-{i}", updated_at=day(i)))
    sync = flask_client(source(adb))
    expected = index_of(sync.get("/sitemap.xml").data)
    with async_get(adb, articles, WIDTH, **READ) as get:
        assert snapshot(get)[0] == expected
        assert served(as_client(get)) == served(sync)


def test_random_statements_list_every_row_once(db: Db) -> None:
    """Seeded random statements of many rows each (PostgreSQL's statement triggers see
    them whole): every row listed once, every page's count right, none over the width."""
    filled(db, range(0, 200, 7))
    rng = random.Random(21)
    for _ in range(25):
        low = rng.randrange(200)
        picked = articles.c.slug.between(slug(low), slug(low + rng.randrange(1, 40)))
        kind = rng.choice(["insert", "delete", "rename", "date"])
        with db.engine.begin() as conn:
            if kind == "insert":
                fresh = {f"{slug(rng.randrange(200))}-{rng.randrange(99)}" for _ in range(30)}
                conn.execute(insert(articles), [{"slug": s, "updated_at": day(1)} for s in fresh])
            elif kind == "delete":
                conn.execute(delete(articles).where(picked))
            elif kind == "rename":
                conn.execute(update(articles).where(picked).values(slug=articles.c.slug + "r"))
            else:
                conn.execute(update(articles).where(picked).values(updated_at=day(2)))
        counts = page_urls(db)
        assert max(counts.values(), default=0) <= WIDTH
        assert sum(counts.values()) == len(stored_slugs(db))
    listed = served(flask_client(source(db)))
    assert sorted(listed) == stored_slugs(db)


def test_concurrent_writers_that_split_keep_every_count(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    for db in make_db(request, tmp_path, "postgresql"):
        filled(db, range(0, 40, 4))
        threads = [threading.Thread(target=add_articles, args=(db, prefix)) for prefix in "0123"]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        counts = page_urls(db)
        assert max(counts.values()) <= WIDTH
        assert sum(counts.values()) == 10 + 4 * 30
        assert sorted(served(flask_client(source(db)))) == stored_slugs(db)


def add_articles(db: Db, prefix: str) -> None:
    """Thirty rows into the first pages, each in a transaction of its own."""
    for i in range(30):
        db.write(insert(articles).values(slug=f"a000{prefix}-{i:02d}", updated_at=day(i)))


news = Table(
    "news",
    MetaData(),
    Column("path", String(60), primary_key=True),
    Column("updated_at", Date, nullable=True),
)


def newsroom(db: Db) -> Any:
    """Eight articles a month from January to March 2026 (keys that begin with their
    date), in date buckets of 10: a page per month; the client of a site serving them."""
    with db.engine.begin() as conn:
        news.metadata.create_all(conn)
        conn.execute(
            insert(news),
            [
                {"path": f"2026-{m:02d}-{d:02d}/story-{i}", "updated_at": day(d)}
                for m in (1, 2, 3)
                for d in (1, 2, 3, 4)
                for i in (1, 2)
            ],
        )
    install_page_facts(
        db.engine,
        "news",
        "path",
        "news_pages",
        lastmod="updated_at",
        page_width=WIDTH,
        month_buckets=True,
    )
    src = SQLAlchemySource(
        db.engine,
        news,
        key="path",
        lastmod="updated_at",
        build=f"{ORIGIN}/a/{{path}}",
        page_facts="news_pages",
    )
    return flask_client(src)


def months(client: Any) -> dict[str, list[str]]:
    """Each page of the index: the months of the articles it lists."""
    return {
        path: sorted(
            {str(loc.text).removeprefix(f"{ORIGIN}/a/")[:7] for loc in page.iterfind(".//{*}loc")}
        )
        for path in index_of(client.get("/sitemap.xml").data)
        for page in [etree.fromstring(client.get(path).data)]
    }


#: One row written into the newsroom of months 1 to 3 of 2026 (its path), and the pages
#: whose ETag that changes: a month's own page; a new month's (or an earlier month's)
#: first page is a new page, so no known ETag changes. Shared with the MySQL statements'
#: tests, which must page alike.
MONTH_WRITES = pytest.mark.parametrize(
    ("path", "changed"),
    [
        ("2026-03-05/new", ["/sitemap-posts-3.xml"]),
        ("2026-02-05/late", ["/sitemap-posts-2.xml"]),
        ("2026-04-01/april", []),
        ("2025-12-31/old", []),
    ],
    ids=["this-month", "past-month", "new-month", "earlier-month"],
)


@MONTH_WRITES
def test_date_buckets_keep_a_page_per_month(db: Db, path: str, changed: list[str]) -> None:
    client = newsroom(db)
    assert months(client) == {f"/sitemap-posts-{n}.xml": [f"2026-0{n}"] for n in (1, 2, 3)}
    index, tags = snapshot(client.get)
    db.write(insert(news).values(path=path, updated_at=day(5)))
    index_after, tags_after = snapshot(client.get)
    assert [p for p in tags if tags[p] != tags_after[p]] == changed
    assert [p for p in index if index[p] != index_after[p]] == changed
    added = {p: m for p, m in months(client).items() if p not in index}
    assert list(added.values()) == ([] if changed else [[path[:7]]])


def test_a_full_month_splits_within_the_month(db: Db) -> None:
    client = newsroom(db)
    with db.engine.begin() as conn:  # one statement: PostgreSQL's trigger sees 25 rows
        conn.execute(
            insert(news),
            [{"path": f"2026-02-09/more-{i:02d}", "updated_at": day(9)} for i in range(25)],
        )
    for i in range(5):
        db.write(insert(news).values(path=f"2026-04-0{i + 1}/a", updated_at=day(i)))
    pages = months(client)
    assert all(len(m) == 1 for m in pages.values())
    listed = [m[0] for m in pages.values()]
    assert sorted(set(listed)) == ["2026-01", "2026-02", "2026-03", "2026-04"]
    assert listed.count("2026-02") >= 4  # 33 articles, no page over 10
    with db.engine.connect() as conn:
        urls = [n for (n,) in conn.execute(text("SELECT urls FROM news_pages WHERE urls > 0"))]
        stored = sorted(conn.execute(select(news.c.path)).scalars())
    assert max(urls) <= WIDTH and sum(urls) == len(stored) == 24 + 25 + 5
    locs = [
        str(loc.text).removeprefix(f"{ORIGIN}/a/")
        for path in index_of(client.get("/sitemap.xml").data)
        for loc in etree.fromstring(client.get(path).data).iterfind(".//{*}loc")
    ]
    assert sorted(locs) == stored
