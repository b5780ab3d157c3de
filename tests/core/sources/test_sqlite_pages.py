"""SQLiteSource with page facts: pages that keep their URLs, facts kept by triggers."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from xsd import validate

from sitemap_core import ConfigurationError, Site, UrlSource
from sitemap_core.model.values import lastmod_instant
from sitemap_core.sources.sql.sqlite import SQLiteSource, install_page_facts
from tests.core.helpers import BASE, ORIGIN, get, locs, parse
from tests.core.sources.test_sql import write

WIDTH = 10
SM = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}


def make_db(path: Path, keys: Iterable[int], width: int = WIDTH) -> Path:
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE posts (id INTEGER PRIMARY KEY, slug TEXT NOT NULL, updated_at TEXT)"
        )
        db.executemany(
            "INSERT INTO posts VALUES (?, ?, ?)",
            [(i, f"p{i}", f"2024-01-{1 + i % 28:02d}") for i in keys],
        )
        install_page_facts(db, "posts", "id", "posts_pages", lastmod="updated_at", page_width=width)
    db.close()
    return path


def source(path: Path) -> SQLiteSource:
    return SQLiteSource(
        lambda: sqlite3.connect(path),
        "posts",
        "id",
        lambda row: (f"{ORIGIN}/posts/{row['slug']}", row["updated_at"]),
        columns=("id", "slug", "updated_at"),
        lastmod="updated_at",
        page_facts="posts_pages",
    )


def site(path: Path, page_size: int = WIDTH) -> Site:
    return Site([UrlSource.from_object("posts", source(path))], page_size=page_size)


def index(site: Site) -> dict[str, str | None]:
    """The index's children: loc -> lastmod."""
    got = get(site, "/sitemap.xml")
    assert got is not None and got.status == 200
    validate(got.body)
    tree = parse(got.body)
    return {
        str(child.findtext("sm:loc", namespaces=SM)): child.findtext("sm:lastmod", namespaces=SM)
        for child in tree.iterfind("sm:sitemap", SM)
    }


def etags(site: Site, paths: Iterable[str]) -> dict[str, str | None]:
    out = {}
    for path in paths:
        got = get(site, path)
        assert got is not None and got.status == 200, path
        out[path] = got.header("ETag")
    return out


def page_paths(listed: dict[str, str | None]) -> list[str]:
    return [loc.removeprefix(ORIGIN) for loc in listed]


def test_pages_are_ranges_of_keys_and_skip_empty_ones(tmp_path: Path) -> None:
    # Keys 1-25 and 41-45: pages 1 (keys 1-10), 2, 3 and 5; page 4 (keys 31-40) is empty.
    path = make_db(tmp_path / "blog.db", [*range(1, 26), *range(41, 46)])
    served = site(path)
    listed = index(served)
    assert page_paths(listed) == [f"/sitemap-posts-{n}.xml" for n in (1, 2, 3, 5)]
    page = get(served, "/sitemap-posts-5.xml")
    assert page is not None and page.status == 200
    validate(page.body)
    assert locs(page.body) == [f"{ORIGIN}/posts/p{i}" for i in range(41, 46)]
    first = get(served, "/sitemap-posts-1.xml")
    assert first is not None
    assert locs(first.body) == [f"{ORIGIN}/posts/p{i}" for i in range(1, 11)]
    missing = get(served, "/sitemap-posts-4.xml")
    assert missing is not None and missing.status == 404


@pytest.mark.parametrize(
    ("sql", "params", "changed"),
    [
        ("DELETE FROM posts WHERE id = ?", (12,), 2),
        ("UPDATE posts SET slug = 'edited' WHERE id = ?", (3,), 1),
        ("INSERT INTO posts VALUES (?, 'new', '2024-01-02')", (28,), 3),
    ],
    ids=["delete", "update", "insert"],
)
def test_one_write_changes_one_page(
    tmp_path: Path, sql: str, params: tuple[int], changed: int
) -> None:
    path = make_db(tmp_path / "blog.db", [k for k in range(1, 50) if k != 28])
    served = site(path)
    before_index = index(served)
    paths = page_paths(before_index)
    before = etags(served, paths)
    write(path, sql, params)
    after_index = index(served)
    after = etags(served, paths)
    moved = [p for p in paths if before[p] != after[p]]
    assert moved == [f"/sitemap-posts-{changed}.xml"]
    moved_lastmods = [loc for loc in before_index if before_index[loc] != after_index[loc]]
    assert [loc.removeprefix(ORIGIN) for loc in moved_lastmods] == moved


def test_a_delete_moves_the_page_lastmod_forward(tmp_path: Path) -> None:
    # The page's file changed: its lastmod in the index and its Last-Modified move to
    # the time of the write, though the newest row left is older.
    path = make_db(tmp_path / "blog.db", range(1, 30))
    served = site(path)
    loc = f"{ORIGIN}/sitemap-posts-2.xml"
    before = index(served)[loc]
    assert before is not None
    write(path, "DELETE FROM posts WHERE id = 15")
    after = index(served)[loc]
    assert after is not None and lastmod_instant(after) > lastmod_instant(before)
    page = get(served, "/sitemap-posts-2.xml")
    assert page is not None and page.header("Last-Modified") is not None
    assert f"{ORIGIN}/posts/p15" not in locs(page.body)


def test_a_page_emptied_answers_404_and_leaves_the_index(tmp_path: Path) -> None:
    path = make_db(tmp_path / "blog.db", range(1, 30))
    served = site(path)
    write(path, "DELETE FROM posts WHERE id BETWEEN 11 AND 20")
    gone = get(served, "/sitemap-posts-2.xml")
    assert gone is not None and gone.status == 404
    assert page_paths(index(served)) == ["/sitemap-posts-1.xml", "/sitemap-posts-3.xml"]


def test_a_key_moved_to_another_page_changes_both(tmp_path: Path) -> None:
    path = make_db(tmp_path / "blog.db", range(1, 25))
    served = site(path)
    paths = page_paths(index(served))
    before = etags(served, paths)
    write(path, "UPDATE posts SET id = 27 WHERE id = 5")
    after = etags(served, paths)
    assert [p for p in paths if before[p] != after[p]] == [
        "/sitemap-posts-1.xml",
        "/sitemap-posts-3.xml",
    ]
    page = get(served, "/sitemap-posts-3.xml")
    assert page is not None and f"{ORIGIN}/posts/p5" in locs(page.body)


def test_a_304_reads_no_row_of_the_table(tmp_path: Path) -> None:
    path = make_db(tmp_path / "blog.db", range(1, 30))
    statements: list[str] = []

    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(path)
        conn.set_trace_callback(statements.append)
        return conn

    traced = SQLiteSource(
        connect,
        "posts",
        "id",
        lambda row: f"{ORIGIN}/posts/{row['slug']}",
        columns=("id", "slug"),
        page_facts="posts_pages",
    )
    served = Site([UrlSource.from_object("posts", traced)], page_size=WIDTH)
    first = get(served, "/sitemap-posts-2.xml")
    assert first is not None and first.header("ETag") is not None
    statements.clear()
    from sitemap_core import respond

    reply = respond(
        served,
        "GET",
        "/sitemap-posts-2.xml",
        lambda: BASE,
        {"if-none-match": first.header("ETag") or ""},
    )
    assert reply is not None and reply.status == 304
    assert statements and not any('"posts"' in s or " posts " in s for s in statements)


def test_every_process_reads_the_same_facts(tmp_path: Path) -> None:
    # A cold site (a new worker) gives the same index and validators as a warm one.
    path = make_db(tmp_path / "blog.db", range(1, 40))
    warm = site(path)
    index(warm)
    write(path, "DELETE FROM posts WHERE id = 7")
    cold = site(path)
    assert index(warm) == index(cold)
    paths = page_paths(index(cold))
    assert etags(warm, paths) == etags(cold, paths)


def test_install_is_idempotent_and_a_new_width_renews_every_etag(tmp_path: Path) -> None:
    path = make_db(tmp_path / "blog.db", range(1, 40))
    served = site(path)
    paths = page_paths(index(served))
    before = etags(served, paths)
    with sqlite3.connect(path) as db:
        install_page_facts(db, "posts", "id", "posts_pages", lastmod="updated_at", page_width=WIDTH)
    db.close()
    assert etags(served, paths) == before
    with sqlite3.connect(path) as db:
        install_page_facts(db, "posts", "id", "posts_pages", lastmod="updated_at", page_width=5)
    db.close()
    narrow = site(path, page_size=5)
    assert len(index(narrow)) == 8
    assert etags(narrow, ["/sitemap-posts-1.xml"]) != {"/sitemap-posts-1.xml": before[paths[0]]}


def test_a_page_wider_than_the_site_page_size_is_refused(tmp_path: Path) -> None:
    path = make_db(tmp_path / "blog.db", range(1, 40))
    with pytest.raises(ConfigurationError, match="page_width"):
        get(site(path, page_size=5), "/sitemap.xml")


def test_the_whole_site_in_one_file_lists_every_page(tmp_path: Path) -> None:
    path = make_db(tmp_path / "blog.db", [1, 2, 15, 33])
    served = Site([UrlSource.from_object("posts", source(path))], page_size=50_000)
    got = get(served, "/sitemap.xml")
    assert got is not None and got.status == 200
    validate(got.body)
    assert locs(got.body) == [f"{ORIGIN}/posts/p{i}" for i in (1, 2, 15, 33)]


def test_the_html_view_links_the_neighbouring_pages(tmp_path: Path) -> None:
    path = make_db(tmp_path / "blog.db", [*range(1, 15), *range(41, 45)])
    got = get(site(path), "/sitemap-posts-2.html")
    assert got is not None and got.status == 200
    text = got.body.decode()
    assert "sitemap-posts-1.html" in text and "sitemap-posts-5.html" in text
    assert "URLs 11 to 14 of 18" in text


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"page_width": 0}, "page_width"),
        ({"page_width": 50_001}, "page_width"),
        ({"page_width": True}, "page_width"),
    ],
)
def test_install_refuses_bad_settings(tmp_path: Path, kwargs: dict[str, Any], message: str) -> None:
    path = make_db(tmp_path / "blog.db", range(1, 5))
    with sqlite3.connect(path) as db, pytest.raises(ConfigurationError, match=message):
        install_page_facts(db, "posts", "id", "posts_pages", **kwargs)
    db.close()


def test_install_refuses_a_text_key(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "tags.db") as db:
        db.execute("CREATE TABLE tags (name TEXT PRIMARY KEY)")
        with pytest.raises(ConfigurationError, match="integer key"):
            install_page_facts(db, "tags", "name", "tags_pages")
    db.close()


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ("id INTEGER PRIMARY KEY, pos INTEGER, lastmod TEXT", "INTEGER PRIMARY KEY 'id'"),
        ("pos INTEGER, slug TEXT UNIQUE, lastmod TEXT", "unique index on \\['slug'\\]"),
    ],
)
def test_install_refuses_a_table_that_replaces_rows_without_a_delete(
    tmp_path: Path, schema: str, message: str
) -> None:
    """INSERT OR REPLACE clashing on another unique column (the rowid included) deletes
    a row without a DELETE trigger: page facts would miss it, as a change log would."""
    with sqlite3.connect(tmp_path / "t.db") as db:
        db.execute(f"CREATE TABLE t ({schema})")
        with pytest.raises(ConfigurationError, match=message):
            install_page_facts(db, "t", "pos", "t_pages", lastmod="lastmod")
    db.close()


def test_facts_not_installed_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "blog.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE posts (id INTEGER PRIMARY KEY, slug TEXT, updated_at TEXT)")
    db.close()
    with pytest.raises(ConfigurationError, match="install_page_facts"):
        get(site(path), "/sitemap.xml")


def test_page_facts_refuse_where_and_other_signals(tmp_path: Path) -> None:
    path = make_db(tmp_path / "blog.db", range(1, 5))
    common: dict[str, Any] = {"columns": ("id",), "page_facts": "posts_pages"}
    with pytest.raises(ConfigurationError, match="where"):
        SQLiteSource(lambda: sqlite3.connect(path), "posts", "id", str, where="id > 1", **common)
    with pytest.raises(ConfigurationError, match="one of"):
        SQLiteSource(lambda: sqlite3.connect(path), "posts", "id", str, change_log="x", **common)


def test_a_negative_key_is_an_error_naming_the_source(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = make_db(tmp_path / "blog.db", range(1, 5))
    write(path, "INSERT INTO posts VALUES (-3, 'neg', NULL)")
    with caplog.at_level(logging.ERROR), pytest.raises(ConfigurationError, match="'posts'"):
        get(site(path), "/sitemap-posts-1.xml")


def draft_db(path: Path) -> Path:
    """Posts 1-30, every third one a draft; page facts of the published ones."""
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE posts (id INTEGER PRIMARY KEY, slug TEXT NOT NULL, updated_at TEXT,"
            " state TEXT NOT NULL)"
        )
        db.executemany(
            "INSERT INTO posts VALUES (?, ?, '2024-01-02', ?)",
            [(i, f"p{i}", "draft" if i % 3 == 0 else "live") for i in range(1, 31)],
        )
        install_page_facts(
            db,
            "posts",
            "id",
            "posts_pages",
            lastmod="updated_at",
            page_width=WIDTH,
            where="state = ? AND slug <> '?'",
            where_params=("live",),
        )
    db.close()
    return path


def test_a_condition_lists_the_rows_it_holds_for(tmp_path: Path) -> None:
    served = site(draft_db(tmp_path / "blog.db"))
    page = get(served, "/sitemap-posts-1.xml")
    assert page is not None
    assert locs(page.body) == [f"{ORIGIN}/posts/p{i}" for i in range(1, 11) if i % 3]
    listed = index(served)
    assert len(listed) == 3
    total = sum(len(locs(get_ok(served, path))) for path in page_paths(listed))
    assert total == 20


def get_ok(served: Site, path: str) -> bytes:
    got = get(served, path)
    assert got is not None and got.status == 200, path
    return got.body


@pytest.mark.parametrize(
    ("sql", "changed"),
    [
        ("UPDATE posts SET state = 'draft' WHERE id = 14", ["/sitemap-posts-2.xml"]),
        ("UPDATE posts SET state = 'live' WHERE id = 15", ["/sitemap-posts-2.xml"]),
        ("UPDATE posts SET slug = 'still-a-draft' WHERE id = 15", []),
        ("INSERT INTO posts VALUES (31, 'p31', NULL, 'draft')", []),
        ("DELETE FROM posts WHERE id = 21", []),
        ("DELETE FROM posts WHERE id = 22", ["/sitemap-posts-3.xml"]),
        ("UPDATE posts SET id = 35, state = 'live' WHERE id = 12", []),
    ],
    ids=[
        "unpublished",
        "published",
        "draft-edited",
        "draft-added",
        "draft-deleted",
        "live-deleted",
        "published-and-moved",
    ],
)
def test_only_writes_to_listed_rows_change_a_page(
    tmp_path: Path, sql: str, changed: list[str]
) -> None:
    path = draft_db(tmp_path / "blog.db")
    served = site(path)
    paths = page_paths(index(served))
    before = etags(served, paths)
    write(path, sql)
    after_paths = page_paths(index(served))
    after = etags(served, after_paths)
    moved = [p for p in paths if before[p] != after.get(p)]
    assert moved == changed
    if "id = 35" in sql:  # a draft published on a new page: the pages before unchanged
        assert after_paths[-1] == "/sitemap-posts-4.xml"
    served_locs = [loc for p in after_paths for loc in locs(get_ok(served, p))]
    with closing(sqlite3.connect(path)) as db:
        live = db.execute(
            "SELECT slug FROM posts WHERE state = 'live' AND slug <> '?' ORDER BY id"
        ).fetchall()
    assert served_locs == [f"{ORIGIN}/posts/{slug}" for (slug,) in live]


def test_a_new_condition_counts_the_pages_again(tmp_path: Path) -> None:
    path = draft_db(tmp_path / "blog.db")
    with closing(sqlite3.connect(path)) as db:
        install_page_facts(db, "posts", "id", "posts_pages", page_width=WIDTH)
    served = site(path)
    assert len(locs(get_ok(served, "/sitemap-posts-1.xml"))) == 10


def test_placeholders_and_values_must_match(tmp_path: Path) -> None:
    path = make_db(tmp_path / "blog.db", range(1, 5))
    with closing(sqlite3.connect(path)) as db:
        for where, params in (("id > ?", ()), ("id > ?", (1, 2)), (None, (1,))):
            with pytest.raises(ConfigurationError, match="where"):
                install_page_facts(db, "posts", "id", "f", where=where, where_params=params)


def test_writes_within_a_second_each_move_the_page_lastmod(tmp_path: Path) -> None:
    path = make_db(tmp_path / "blog.db", range(1, 30))
    served = site(path)
    loc = f"{ORIGIN}/sitemap-posts-2.xml"
    seen = [index(served)[loc]]
    for sql in ("DELETE FROM posts WHERE id = 12", "INSERT INTO posts VALUES (12, 'x', NULL)"):
        write(path, sql)
        seen.append(index(served)[loc])
    instants = [lastmod_instant(value or "") for value in seen]
    assert instants[0] < instants[1] < instants[2], seen
