"""SQLiteSource with stored boundaries: stable pages for a text key on SQLite, and a
property test of random writes (every row listed once, every count right)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_core import ConfigurationError, Site, UrlSource
from sitemap_core.sources.sql.sqlite import SQLiteSource, install_page_facts
from tests.core.helpers import ORIGIN, get, locs
from tests.core.sources.page_facts_helpers import (
    differing,
    examples,
    install_posts,
    posts_source,
    written,
)
from tests.core.sources.test_sql import write
from tests.core.sources.test_sqlite_pages import etags, index, page_paths

WIDTH = 4


def make_db(path: Path, slugs: Iterable[str], **options: object) -> Path:
    with closing(sqlite3.connect(path)) as db:
        db.execute(
            "CREATE TABLE posts (slug TEXT PRIMARY KEY, updated_at TEXT, state TEXT NOT NULL"
            " DEFAULT 'live')"
        )
        db.executemany(
            "INSERT INTO posts (slug, updated_at) VALUES (?, '2024-01-01')",
            [(slug,) for slug in slugs],
        )
        db.commit()
        install(db, **options)
    return path


def install(db: sqlite3.Connection, **options: object) -> None:
    install_posts(db, "slug", "updated_at", page_width=WIDTH, stored_bounds=True, **options)


def source(path: Path) -> SQLiteSource:
    return posts_source(path, "slug", "updated_at")


def site(path: Path) -> Site:
    return Site([UrlSource.from_object("posts", source(path))], page_size=WIDTH)


def listed(path: Path) -> list[str]:
    """Every URL of every page the source has, in page order; each page's count
    checked against what it lists and against the width."""
    src = source(path)
    out: list[str] = []
    for page in src.stable_pages(1, 2**31):
        items = [loc for loc, _ in src.stable_items(page.start, page.stop)]
        assert len(items) == page.urls <= WIDTH
        out += items
    return out


def rows(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as db:
        return [f"{ORIGIN}/{slug}" for (slug,) in db.execute("SELECT slug FROM posts")]


SLUGS = [f"s{i:02d}" for i in range(0, 40, 2)]  # 20 rows: 8 pages of 2 or 3


def pages(served: Site) -> dict[str, list[str]]:
    """Each page the index lists: its path and the slugs it lists."""
    out = {}
    for path in page_paths(index(served)):
        got = get(served, path)
        assert got is not None and got.status == 200
        out[path] = [loc.removeprefix(f"{ORIGIN}/") for loc in locs(got.body)]
    return out


def holding(listing: dict[str, list[str]], slug: str) -> str:
    """The page whose range holds ``slug``: the page of the greatest slug at or below it."""
    below = max(s for slugs in listing.values() for s in slugs if s <= slug)
    return next(path for path, slugs in listing.items() if below in slugs)


@pytest.mark.parametrize(
    ("sql", "slug"),
    [
        ("DELETE FROM posts WHERE slug = ?", "s12"),
        ("UPDATE posts SET updated_at = '2024-02-01' WHERE slug = ?", "s02"),
        ("INSERT INTO posts (slug, updated_at) VALUES (?, '2024-01-02')", "s21"),
    ],
    ids=["delete", "update", "insert"],
)
def test_one_write_changes_one_page(tmp_path: Path, sql: str, slug: str) -> None:
    path = make_db(tmp_path / "blog.db", SLUGS)
    served = site(path)
    before_index = index(served)
    listing = pages(served)
    assert len(listing) == 8
    changed = holding(listing, slug)
    before = etags(served, listing)
    write(path, sql, (slug,))
    after_index = index(served)
    after = etags(served, listing)
    assert differing(before, after, listing) == [changed]
    moved = differing(before_index, after_index, before_index, ORIGIN)
    assert moved == [changed]


def test_a_split_keeps_every_url_once_and_moves_the_full_page_only(tmp_path: Path) -> None:
    path = make_db(tmp_path / "blog.db", SLUGS)
    served = site(path)
    listing = pages(served)
    full = holding(listing, "s04")
    before = etags(served, listing)
    added = [f"s04{c}" for c in "abc"]  # the page takes 2 or 3 more: past the width of 4
    for slug in added:
        write(path, "INSERT INTO posts (slug, updated_at) VALUES (?, '2024-01-03')", (slug,))
    after_listing = pages(served)
    new = "/sitemap-posts-9.xml"
    assert list(after_listing) == [*listing, new]
    after = etags(served, listing)
    assert differing(before, after, listing) == [full]
    rows_of_page = sorted([*listing[full], *added])
    half = (len(rows_of_page) + 1) // 2
    assert after_listing[full] == rows_of_page[:half]
    assert after_listing[new] == rows_of_page[half:]
    assert sorted(listed(path)) == sorted(rows(path))


def test_a_key_moved_to_another_page_changes_both(tmp_path: Path) -> None:
    path = make_db(tmp_path / "blog.db", SLUGS)
    served = site(path)
    listing = pages(served)
    before = etags(served, listing)
    write(path, "UPDATE posts SET slug = 's31' WHERE slug = ?", ("s02",))
    after = etags(served, listing)
    assert differing(before, after, listing) == sorted(
        {holding(listing, "s02"), holding(listing, "s31")}, key=list(listing).index
    )


def test_the_key_needs_a_unique_index_and_install_is_idempotent(tmp_path: Path) -> None:
    path = make_db(tmp_path / "blog.db", SLUGS)
    with closing(sqlite3.connect(path)) as db:
        with pytest.raises(ConfigurationError, match="unique index"):
            install_page_facts(db, "posts", "state", "state_pages", stored_bounds=True)
        assert not db.in_transaction
        epoch = db.execute("SELECT epoch FROM posts_pages_layout").fetchone()
        install(db)
        assert db.execute("SELECT epoch FROM posts_pages_layout").fetchone() == epoch
        with pytest.raises(ConfigurationError, match="stored_bounds=True"):
            install_page_facts(db, "posts", "slug", "posts_pages", page_width=WIDTH)


def test_a_nocase_key_keeps_its_collation(tmp_path: Path) -> None:
    path = tmp_path / "blog.db"
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE posts (slug TEXT COLLATE NOCASE PRIMARY KEY, updated_at TEXT)")
        db.executemany("INSERT INTO posts VALUES (?, NULL)", [(s,) for s in "aBcDeFgHiJ"])
        db.commit()
        install(db)
        db.executemany("INSERT INTO posts VALUES (?, NULL)", [(s,) for s in "kLmNoPqR"])
        db.commit()
    assert sorted(listed(path)) == sorted(rows(path))


operations = st.lists(
    st.tuples(st.sampled_from(["insert", "delete", "rename", "hide"]), st.integers(0, 60)),
    max_size=60,
)


#: The SQL of each kind of random write, on the key ``:key``.
WRITES = {
    "insert": "INSERT OR IGNORE INTO posts (slug) VALUES (:key)",
    "delete": "DELETE FROM posts WHERE slug = :key",
    "rename": "UPDATE OR IGNORE posts SET slug = :key || 'x' WHERE slug = :key",
    "hide": "UPDATE posts SET state = 'hidden' WHERE slug = :key",
}


@examples(40)
@given(operations)
def test_random_writes_list_every_row_once(tmp_path: Path, ops: list[tuple[str, int]]) -> None:
    path = tmp_path / "random.db"
    path.unlink(missing_ok=True)
    make_db(path, [f"k{i:02d}" for i in range(0, 60, 5)], where="state = 'live'")
    live = {
        f"{ORIGIN}/{s}"
        for s in written(path, [(WRITES[op], {"key": f"k{n:02d}"}) for op, n in ops], "slug")
    }
    got = listed(path)
    assert len(got) == len(set(got))
    assert set(got) == live


def test_a_layout_from_before_stored_bounds_is_upgraded_by_one_install(tmp_path: Path) -> None:
    """Facts installed before the layout had its kind: a source names the call to make,
    and one install call adds it and keeps the epoch, so every page's ETag (the pages
    were ranges of integer keys, and still are)."""
    path = tmp_path / "old.db"
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE posts (id INTEGER PRIMARY KEY, updated_at TEXT)")
        db.executemany("INSERT INTO posts VALUES (?, '2024-01-01')", [(i,) for i in range(1, 20)])
        db.commit()
        facts = {"lastmod": "updated_at", "page_width": WIDTH}
        install_page_facts(db, "posts", "id", "posts_pages", **facts)  # type: ignore[arg-type]
        epoch = db.execute("SELECT epoch FROM posts_pages_layout").fetchone()
        db.execute("ALTER TABLE posts_pages_layout DROP COLUMN kind")
        db.commit()
        with pytest.raises(ConfigurationError, match="install_page_facts"):
            list(
                SQLiteSource(
                    lambda: sqlite3.connect(path),
                    "posts",
                    "id",
                    str,
                    columns=("id",),
                    page_facts="posts_pages",
                ).stable_pages(1, 10)
            )
        install_page_facts(db, "posts", "id", "posts_pages", **facts)  # type: ignore[arg-type]
        assert db.execute("SELECT epoch, kind FROM posts_pages_layout").fetchone() == (*epoch, "")


@examples(30)
@given(st.lists(st.tuples(st.booleans(), st.integers(1, 9), st.integers(0, 9)), max_size=80))
def test_random_writes_in_date_buckets(tmp_path: Path, ops: list[tuple[bool, int, int]]) -> None:
    """Month buckets under random inserts and deletes of keys that begin with their
    date: every row listed once, and no page holds two months."""
    path = tmp_path / "months.db"
    path.unlink(missing_ok=True)
    make_db(path, [f"2026-0{m}-0{d}" for m in (2, 5) for d in range(1, 6)], month_buckets=True)
    with closing(sqlite3.connect(path)) as db:
        for insert, month, n in ops:
            key = f"2026-0{month}-{n:02d}"
            if insert:
                db.execute("INSERT OR IGNORE INTO posts (slug) VALUES (?)", (key,))
            else:
                db.execute("DELETE FROM posts WHERE slug = ?", (key,))
            db.commit()
    src = source(path)
    got = []
    for page in src.stable_pages(1, 2**31):
        items = [loc for loc, _ in src.stable_items(page.start, page.stop)]
        assert len(items) == page.urls <= WIDTH
        assert len({loc.removeprefix(f"{ORIGIN}/")[:7] for loc in items}) == 1
        got += items
    assert sorted(got) == sorted(rows(path))
