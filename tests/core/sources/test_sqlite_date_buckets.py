"""SQLiteSource with date buckets on a date column: an integer-keyed blog table paged by
the month of its ``published`` column (a page per month, split when full), and a
property test of random writes (every row listed once, no page holds two months)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from sitemap_core import ConfigurationError, Site, UrlSource
from sitemap_core.sources.sql.sqlite import SQLiteSource, install_page_facts
from tests.core.helpers import ORIGIN, get, locs
from tests.core.sources.page_facts_helpers import (
    differing,
    examples,
    install_posts,
    posts_source,
    write_operations,
    written,
)
from tests.core.sources.test_sql import write
from tests.core.sources.test_sqlite_pages import etags, index, page_paths

WIDTH = 4
#: Three months of five posts each, a day apart: ids 1 to 15.
POSTS = [f"2026-0{m}-{d:02d}" for m in (1, 2, 3) for d in range(1, 6)]


def make_db(path: Path, dates: Iterable[str | None], **options: object) -> Path:
    with closing(sqlite3.connect(path)) as db:
        db.execute(
            "CREATE TABLE posts (id INTEGER PRIMARY KEY, published TEXT, state TEXT NOT NULL"
            " DEFAULT 'live')"
        )
        db.execute("CREATE INDEX posts_published ON posts (published, id)")
        db.executemany("INSERT INTO posts (published) VALUES (?)", [(d,) for d in dates])
        db.commit()
        install(db, **options)
    return path


def install(db: sqlite3.Connection, **options: object) -> None:
    install_posts(db, "id", "published", page_width=WIDTH, month_buckets="published", **options)


def source(path: Path) -> SQLiteSource:
    return posts_source(path, "id", "published")


def site(path: Path) -> Site:
    return Site([UrlSource.from_object("posts", source(path))], page_size=WIDTH)


def pages(served: Site) -> dict[str, list[int]]:
    """Each page the index lists: its path and the ids it lists."""
    out = {}
    for path in page_paths(index(served)):
        got = get(served, path)
        assert got is not None and got.status == 200
        out[path] = [int(loc.removeprefix(f"{ORIGIN}/")) for loc in locs(got.body)]
    return out


def holding(listing: dict[str, list[int]], post: int) -> str:
    return next(path for path, ids in listing.items() if post in ids)


def months(path: Path) -> dict[int, str]:
    with closing(sqlite3.connect(path)) as db:
        rows = db.execute("SELECT id, published FROM posts WHERE published IS NOT NULL")
        return {i: d[:7] for i, d in rows}


def checked(path: Path) -> list[int]:
    """Every id every page lists, in page order; each page's count checked against
    what it lists and the width, and its rows of one month, in (date, id) order."""
    src = source(path)
    dates = dict(months(path))
    out: list[int] = []
    for page in src.stable_pages(1, 2**31):
        items = [
            (int(loc.removeprefix(f"{ORIGIN}/")), lm)
            for loc, lm in src.stable_items(page.start, page.stop)
        ]
        assert len(items) == page.urls <= WIDTH
        assert len({dates[i] for i, _ in items}) == 1
        assert [(lm, i) for i, lm in items] == sorted((lm, i) for i, lm in items)
        out += [i for i, _ in items]
    return out


def test_a_page_per_month_split_when_full(tmp_path: Path) -> None:
    path = make_db(tmp_path / "blog.db", POSTS)
    # A month of five is two pages (about half the width each); no page holds two.
    assert list(pages(site(path)).values()) == [
        [1, 2, 3],
        [4, 5],
        [6, 7, 8],
        [9, 10],
        [11, 12, 13],
        [14, 15],
    ]


@pytest.mark.parametrize(
    ("sql", "post"),
    [
        ("DELETE FROM posts WHERE id = ?", 7),
        ("UPDATE posts SET published = '2026-02-01T12:00:00' WHERE id = ?", 7),
        ("INSERT INTO posts (id, published) VALUES (?, '2026-02-02T08:00:00')", 16),
        ("INSERT INTO posts (id, published) VALUES (?, '2026-01-05T08:00:00')", 17),
    ],
    ids=["delete", "update", "insert", "insert-in-a-past-month"],
)
def test_one_write_changes_one_page(tmp_path: Path, sql: str, post: int) -> None:
    path = make_db(tmp_path / "blog.db", POSTS)
    served = site(path)
    before_index = index(served)
    listing = pages(served)
    before = etags(served, listing)
    write(path, sql, (post,))
    after_listing = pages(served)
    changed = holding(after_listing if post > 15 else listing, post)
    after_index = index(served)
    after = etags(served, listing)
    assert differing(before, after, listing) == [changed]
    moved = differing(before_index, after_index, before_index, ORIGIN)
    assert moved == [changed]
    assert sorted(checked(path)) == sorted(months(path))


def blog(tmp_path: Path) -> tuple[Path, Site, dict[str, list[int]], dict[str, str | None], Any]:
    """The blog of POSTS, served, before a write: its path, its site, the ids each page
    lists, the index and each page's ETag."""
    path = make_db(tmp_path / "blog.db", POSTS)
    served = site(path)
    listing = pages(served)
    return path, served, listing, index(served), etags(served, listing)


def test_a_new_month_starts_a_page_after_the_last_and_changes_no_other(tmp_path: Path) -> None:
    path, served, listing, before_index, before = blog(tmp_path)
    write(path, "INSERT INTO posts (id, published) VALUES (20, '2025-12-24')")
    write(path, "INSERT INTO posts (id, published) VALUES (21, '2026-04-01')")
    after_listing = pages(served)
    assert list(after_listing) == [*listing, "/sitemap-posts-7.xml", "/sitemap-posts-8.xml"]
    assert after_listing["/sitemap-posts-7.xml"] == [20]
    assert after_listing["/sitemap-posts-8.xml"] == [21]
    assert etags(served, listing) == before
    after_index = index(served)
    assert {loc: after_index[loc] for loc in before_index} == before_index


def test_a_date_moved_to_another_month_changes_exactly_its_two_pages(tmp_path: Path) -> None:
    path, served, listing, before_index, before = blog(tmp_path)
    write(path, "UPDATE posts SET published = '2026-03-02T09:00:00' WHERE id = 2")
    after = etags(served, listing)
    after_index = index(served)
    both = [holding(listing, 2), holding(listing, 12)]
    assert differing(before, after, listing) == both
    assert differing(before_index, after_index, before_index, ORIGIN) == both
    assert pages(served)[both[1]] == [11, 12, 2, 13]


def test_a_month_split_keeps_every_url_once(tmp_path: Path) -> None:
    path = make_db(tmp_path / "blog.db", POSTS)
    served = site(path)
    listing = pages(served)
    before = etags(served, listing)
    for hour in range(10, 13):  # the page of ids 6, 7, 8 takes 3 more: past the width
        write(path, f"INSERT INTO posts (published) VALUES ('2026-02-02T{hour}:00:00')")
    after_listing = pages(served)
    assert list(after_listing) == [*listing, "/sitemap-posts-7.xml"]
    after = etags(served, listing)
    assert differing(before, after, listing) == [holding(listing, 7)]
    assert after_listing[holding(listing, 7)] == [6, 7, 16]
    assert after_listing["/sitemap-posts-7.xml"] == [17, 18, 8]
    got = [i for ids in after_listing.values() for i in ids]
    assert sorted(got) == sorted(months(path))


def test_a_page_is_read_by_the_index_on_date_and_key(tmp_path: Path) -> None:
    path = make_db(tmp_path / "blog.db", POSTS)
    src = source(path)
    page = next(iter(src.stable_pages(1, 2)))
    assert [loc for loc, _ in src.stable_items(page.start, page.stop)] == [
        f"{ORIGIN}/{i}" for i in (1, 2, 3)
    ]
    sql, params = src._window(page.start, page.stop)
    with closing(sqlite3.connect(path)) as db:
        plan = " ".join(row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {sql}", params))
    assert "USING COVERING INDEX posts_published (published>? AND published<?)" in plan
    assert "SCAN" not in plan


def test_undated_rows_and_wrong_settings_are_refused_naming_them(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="month_buckets='published': 1 listed rows"):
        make_db(tmp_path / "null.db", [*POSTS, None])
    # Left out by the condition, a draft without a date is allowed, and stays out.
    path = make_db(tmp_path / "drafts.db", POSTS, where="published IS NOT NULL")
    write(path, "INSERT INTO posts (published) VALUES (NULL)")
    with pytest.raises(sqlite3.IntegrityError, match=r"ISO date .* in published"):
        write(path, "INSERT INTO posts (published) VALUES ('yesterday')")
    assert sorted(checked(path)) == list(range(1, 16))
    with closing(sqlite3.connect(path)) as db:
        for value, message in [
            ("id", "not the key"),
            ("", "date column"),
            ("nope", "no such column"),
            ("state", r"no index on \(state, id\)"),
        ]:
            with pytest.raises(ConfigurationError, match=message):
                install_page_facts(db, "posts", "id", "posts_pages", month_buckets=value)
            assert not db.in_transaction
        with pytest.raises(ConfigurationError, match="month_buckets must be"):
            install_page_facts(db, "posts", "id", "f", month_buckets=1)  # type: ignore[arg-type]


def test_install_is_idempotent_and_another_kind_recounts(tmp_path: Path) -> None:
    path = make_db(tmp_path / "blog.db", POSTS)
    with closing(sqlite3.connect(path)) as db:
        epoch = db.execute("SELECT epoch FROM posts_pages_layout").fetchone()
        install(db)
        assert db.execute("SELECT epoch FROM posts_pages_layout").fetchone() == epoch
        install_page_facts(db, "posts", "id", "posts_pages", page_width=WIDTH)
        assert db.execute("SELECT kind FROM posts_pages_layout").fetchone() == ("",)
        install(db)
    assert checked(path) == list(range(1, 16))


operations = write_operations(40, 60)


#: The SQL of each kind of random write, on the post ``:post`` or the date ``:date``.
WRITES = {
    "insert": "INSERT INTO posts (published) VALUES (:date)",
    "delete": "DELETE FROM posts WHERE id = :post",
    "move": "UPDATE posts SET published = :date WHERE id = :post",
    "hide": "UPDATE posts SET state = 'hidden' WHERE id = :post",
}


@examples(40)
@given(operations)
def test_random_writes_list_every_row_once(
    tmp_path: Path, ops: list[tuple[str, int, int, int]]
) -> None:
    path = tmp_path / "random.db"
    path.unlink(missing_ok=True)
    make_db(path, POSTS, where="state = 'live'")
    writes = [
        (WRITES[op], {"post": post, "date": f"2026-0{month}-0{day}"})
        for op, post, month, day in ops
    ]
    live = written(path, writes, "id")
    with closing(sqlite3.connect(path)) as db:
        counted = db.execute("SELECT SUM(urls) FROM posts_pages").fetchone()[0]
    got = checked(path)
    assert len(got) == len(set(got))
    assert sorted(got) == sorted(live)
    assert counted == len(live)


def test_a_running_source_follows_the_kind_of_pages_installed(tmp_path: Path) -> None:
    """One source while the installation changes from date buckets to stored
    boundaries on the key and back: each page read lists the rows of its kind."""
    path = make_db(tmp_path / "blog.db", POSTS)
    src = source(path)

    def ids() -> list[int]:
        got = []
        for page in list(src.stable_pages(1, 2**31)):
            one = next(iter(src.stable_pages(page.number, page.number + 1)))
            got += [
                int(loc.removeprefix(f"{ORIGIN}/"))
                for loc, _ in src.stable_items(one.start, one.stop)
            ]
        return got

    assert ids() == list(range(1, 16))
    with closing(sqlite3.connect(path)) as db:
        install_page_facts(db, "posts", "id", "posts_pages", page_width=WIDTH, stored_bounds=True)
    assert sorted(ids()) == list(range(1, 16))
    with closing(sqlite3.connect(path)) as db:
        install(db)
    assert ids() == list(range(1, 16))
