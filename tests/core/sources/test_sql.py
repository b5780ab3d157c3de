"""SQLiteSource: paging modes, one bounded query per page, stability, fingerprints."""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from xsd import validate

from sitemap_core import ConfigurationError, Entry, Site, UrlSource, respond
from sitemap_core.sources.sql.sqlite import (
    SQLiteSource,
    install_change_log,
    install_version_triggers,
)
from tests.core.helpers import BASE, ORIGIN, get, locs

PAGE = 10
MODES = ("seek", "offset")


def date(i: int) -> str:
    return f"2024-01-{1 + i % 28:02d}"


def make_db(path: Path, n: int, *, versioned: bool = True, logged: bool = False) -> Path:
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE posts (id INTEGER PRIMARY KEY, slug TEXT NOT NULL,"
            " updated_at TEXT NOT NULL)"
        )
        db.executemany(
            "INSERT INTO posts VALUES (?, ?, ?)", [(i, f"p{i}", date(i)) for i in range(1, n + 1)]
        )
        if versioned:
            install_version_triggers(db, "posts", "posts_version")
        if logged:
            install_change_log(db, "posts", "id", "posts_changes")
    db.close()
    return path


def write(path: Path, sql: str, params: Iterable[Any] = ()) -> None:
    with sqlite3.connect(path) as db:
        db.execute(sql, tuple(params))
    db.close()


class Tracer:
    """A connection factory recording every statement and every connection."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.log: list[str] = []
        self.connections: list[sqlite3.Connection] = []

    def __call__(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path)
        conn.set_trace_callback(self.log.append)
        self.connections.append(conn)
        return conn


def build(row: sqlite3.Row) -> Entry:
    return Entry(f"{ORIGIN}/posts/{row['slug']}", lastmod=row["updated_at"])


def source(connect: Any, mode: str = "seek", versioned: bool = True, **kw: Any) -> SQLiteSource:
    kw.setdefault("lastmod", "updated_at")
    return SQLiteSource(
        connect,
        "posts",
        "id",
        build,
        columns=["slug", "updated_at"],
        mode="seek" if mode == "seek" else "offset",
        version_table="posts_version" if versioned else None,
        **kw,
    )


def site_of(src: SQLiteSource, page_size: int = PAGE) -> Site[UrlSource]:
    return Site([UrlSource.from_object("posts", src)], page_size=page_size)


def crawl(site: Site[UrlSource]) -> list[list[str]]:
    """Every page's locs, following the index."""
    index = get(site, "/sitemap.xml")
    assert index is not None and index.status == 200
    pages = []
    for child in locs(index.body):
        got = get(site, child.removeprefix(ORIGIN))
        assert got is not None and got.status == 200
        pages.append(locs(got.body))
    return pages


def url(i: int) -> str:
    return f"{ORIGIN}/posts/p{i}"


def rows_read(log: list[str]) -> list[str]:
    """The statements that read the page's rows (its selected columns)."""
    return [sql for sql in log if sql.startswith('SELECT "slug", "updated_at"')]


# ------------------------------------------------------------------------- paging


@pytest.mark.parametrize("versioned", [True, False])
def test_both_modes_give_identical_pages(tmp_path: Path, versioned: bool) -> None:
    path = make_db(tmp_path / "db.sqlite", 95, versioned=versioned)
    seek, offset = (source(Tracer(path), mode, versioned) for mode in MODES)
    assert len(seek) == len(offset) == 95
    for start in range(0, 100, PAGE):
        expected = [url(i) for i in range(start + 1, min(start + PAGE, 95) + 1)]
        got_seek = [e.loc for e in seek[start : start + PAGE] if isinstance(e, Entry)]
        got_offset = [e.loc for e in offset[start : start + PAGE] if isinstance(e, Entry)]
        assert got_seek == got_offset == expected
    assert len(list(seek[90:])) == len(list(offset[90:])) == 5
    assert list(seek[5:5]) == list(offset[200:210]) == []


@pytest.mark.parametrize("mode", MODES)
def test_where_filter_pages_the_filtered_rows(tmp_path: Path, mode: str) -> None:
    path = make_db(tmp_path / "db.sqlite", 50)
    src = source(Tracer(path), mode, where="id % 2 = ?", where_params=[0])
    assert len(src) == 25
    assert [e.loc for e in src[10:13] if isinstance(e, Entry)] == [url(22), url(24), url(26)]
    assert src.newest(10, 13) == max(date(22), date(24), date(26))


@pytest.mark.parametrize("versioned", [True, False])
@pytest.mark.parametrize("mode", MODES)
def test_a_page_reads_its_rows_with_one_bounded_query(
    tmp_path: Path, mode: str, versioned: bool
) -> None:
    tracer = Tracer(make_db(tmp_path / "db.sqlite", 95, versioned=versioned))
    site = site_of(source(tracer, mode, versioned))
    for _ in range(2):  # the second time, a versioned source uses what it remembers
        tracer.log.clear()
        got = get(site, "/sitemap-posts-5.xml")
        assert got is not None and got.status == 200
        assert locs(got.body) == [url(i) for i in range(41, 51)]
        (query,) = rows_read(tracer.log)
        assert re.search(r"LIMIT 10\b", query)
        if mode == "offset":
            assert query.endswith("LIMIT 10 OFFSET 40")
        elif versioned:
            # The row fetch is a range search from the page's first key (found once,
            # then remembered for the version): no OFFSET.
            assert "OFFSET" not in query and '"id" >= 41' in query
        else:
            # Nothing remembered: a range search from the key at rank 40, which a
            # scalar subquery finds by skipping over the key alone.
            assert query.endswith(
                '"id" >= (SELECT "id" FROM "posts" ORDER BY "id" LIMIT 1 OFFSET 40)'
                ' ORDER BY "id" LIMIT 10'
            ), query
        # Nothing else reads rows unbounded: every other statement is an aggregate,
        # a version read, an anchor lookup (LIMIT 1) or a transaction control.
        for sql in tracer.log:
            if (
                sql == query
                or sql in ("BEGIN", "ROLLBACK")
                or "version" in sql
                or "COUNT(*)" in sql
            ):
                continue
            assert "LIMIT" in sql, sql


def test_seek_row_query_is_a_range_search(tmp_path: Path) -> None:
    path = make_db(tmp_path / "db.sqlite", 95)
    src = source(Tracer(path), "seek")
    with sqlite3.connect(path) as db:
        rows = src._sql.rows
        plan = db.execute(
            "EXPLAIN QUERY PLAN " + rows.text, rows.bind({"anchor": 41, "n": 10}, ())
        ).fetchall()
    db.close()
    assert "OFFSET" not in rows.text
    assert any("SEARCH" in step[-1] and "rowid>" in step[-1] for step in plan), plan


def test_the_index_remembers_page_anchors_when_versioned(tmp_path: Path) -> None:
    tracer = Tracer(make_db(tmp_path / "db.sqlite", 95))
    site = site_of(source(tracer, "seek"))
    crawl(site)  # the index computes each page's newest, and with it the next anchor
    offsets = [sql for sql in tracer.log if "OFFSET" in sql]
    assert offsets == ['SELECT "id" FROM "posts" ORDER BY "id" LIMIT 1 OFFSET 0']
    tracer.log.clear()
    crawl(site)  # unchanged table: counts, newest and anchors are all remembered
    assert not any("COUNT" in sql or "MAX" in sql or "OFFSET" in sql for sql in tracer.log)


# ----------------------------------------------------------------------- stability


@pytest.mark.parametrize("versioned", [True, False])
@pytest.mark.parametrize("mode", MODES)
def test_appended_rows_leave_earlier_pages_unchanged(
    tmp_path: Path, mode: str, versioned: bool
) -> None:
    path = make_db(tmp_path / "db.sqlite", 95, versioned=versioned)
    site = site_of(source(Tracer(path), mode, versioned))
    first = crawl(site)
    union = [loc for page in first for loc in page]
    assert union == [url(i) for i in range(1, 96)]  # all rows, none twice, in order
    for i in range(96, 103):
        write(path, "INSERT INTO posts VALUES (?, ?, ?)", (i, f"p{i}", date(i)))
    second = crawl(site)
    assert second[:9] == first[:9]  # the full pages did not move
    assert second[9] == [url(i) for i in range(91, 101)]
    assert second[10] == [url(101), url(102)]


@pytest.mark.parametrize("mode", MODES)
def test_a_row_inserted_in_the_middle_shifts_later_pages(tmp_path: Path, mode: str) -> None:
    # Documented: keys that do not grow shift every later page by one entry.
    path = make_db(tmp_path / "db.sqlite", 20)
    write(path, "DELETE FROM posts WHERE id = 5")
    site = site_of(source(Tracer(path), mode))
    before = crawl(site)
    write(path, "INSERT INTO posts VALUES (5, 'p5', '2024-01-05')")
    after = crawl(site)
    assert after[0] == [url(i) for i in range(1, 11)] != before[0]
    assert after[1][0] == before[0][-1]


# ----------------------------------------------------------------------- fingerprints


def test_version_triggers_catch_every_change(tmp_path: Path) -> None:
    path = make_db(tmp_path / "db.sqlite", 30)
    src = source(Tracer(path), "seek")
    seen = [src.fingerprint(0, PAGE)]
    assert src.fingerprint(0, PAGE) == seen[-1]  # stable while nothing changes
    assert len(src) == 30 and src.newest(0, PAGE) == max(date(i) for i in range(1, 11))
    changes = [
        ("INSERT INTO posts VALUES (31, 'p31', '2024-02-01')", ()),
        ("UPDATE posts SET slug = 'renamed' WHERE id = 3", ()),
        # An edit that moves a date back: invisible to MAX(updated_at) and COUNT(*).
        ("UPDATE posts SET updated_at = '2023-01-01' WHERE id = ?", (src_max_id(path, 10),)),
        ("DELETE FROM posts WHERE id = 7", ()),
    ]
    for sql, params in changes:
        write(path, sql, params)
        seen.append(src.fingerprint(0, PAGE))
        assert seen[-1] != seen[-2], sql
    # What the source remembered for older versions is not used any more.
    assert len(src) == 30
    assert src.newest(0, PAGE) == max(
        date(i) for i in (1, 2, 3, 4, 5, 6, 8, 9, 10, 11) if i != src_max_id(path, 10)
    )
    assert [e.loc for e in src[0:3] if isinstance(e, Entry)] == [
        url(1),
        url(2),
        f"{ORIGIN}/posts/renamed",
    ]


def src_max_id(path: Path, within: int) -> int:
    """The id holding the newest date among the first ``within`` original ids."""
    return max(range(1, within + 1), key=date)


def test_install_version_triggers_is_idempotent(tmp_path: Path) -> None:
    path = make_db(tmp_path / "db.sqlite", 3)
    with sqlite3.connect(path) as db:
        install_version_triggers(db, "posts", "posts_version")
        assert db.execute("SELECT COUNT(*) FROM posts_version").fetchone() == (1,)
        triggers = db.execute("SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger'")
        assert triggers.fetchone() == (3,)
    db.close()


def test_fallback_fingerprint_and_its_documented_blind_spot(tmp_path: Path) -> None:
    path = make_db(tmp_path / "db.sqlite", 30, versioned=False)
    src = source(Tracer(path), "offset", versioned=False)
    before = src.fingerprint(0, PAGE)
    assert before == (30, 30, max(date(i) for i in range(1, 31)))
    write(path, "INSERT INTO posts VALUES (31, 'p31', '2024-02-01')")
    assert src.fingerprint(0, PAGE) != before
    before = src.fingerprint(0, PAGE)
    write(path, "DELETE FROM posts WHERE id = 31")
    assert src.fingerprint(0, PAGE) != before
    before = src.fingerprint(0, PAGE)
    # The caveat: moving an older row's date back (or editing another column) leaves
    # COUNT(*), MAX(key) and MAX(lastmod) as they were, so the fingerprint misses it.
    write(path, "UPDATE posts SET updated_at = '2020-01-01', slug = 'x' WHERE id = 2")
    assert src.fingerprint(0, PAGE) == before


def test_fingerprint_without_lastmod(tmp_path: Path) -> None:
    path = make_db(tmp_path / "db.sqlite", 5, versioned=False)
    src = source(Tracer(path), "seek", versioned=False, lastmod=None)
    assert src.fingerprint(0, 5) == (5, 5, None)
    assert src.newest(0, 5) is None


# ------------------------------------------------------------------------- newest


@pytest.mark.parametrize("versioned", [True, False])
@pytest.mark.parametrize("mode", MODES)
def test_newest_is_per_page(tmp_path: Path, mode: str, versioned: bool) -> None:
    path = make_db(tmp_path / "db.sqlite", 95, versioned=versioned)
    src = source(Tracer(path), mode, versioned)
    for _ in range(2):
        for start in range(0, 95, PAGE):
            stop = min(start + PAGE, 95)
            assert src.newest(start, stop) == max(date(i) for i in range(start + 1, stop + 1))
    assert src.newest(95, 105) is None


# --------------------------------------------------------------------- identifiers


@pytest.mark.parametrize(
    "override",
    [
        {"table": "posts; DROP TABLE posts"},
        {"key": "id)"},
        {"columns": ["slug", "updated_at--"]},
        {"columns": []},
        {"columns": "slug"},
        {"lastmod": "updated at"},
        {"version_table": "main.posts_version"},
        {"table": "1posts"},
        {"key": 'id"'},
        {"mode": "cursor"},
        {"where": " "},
    ],
)
def test_bad_settings_are_refused(tmp_path: Path, override: dict[str, Any]) -> None:
    args: dict[str, Any] = {"table": "posts", "key": "id", "columns": ["slug", "updated_at"]}
    args.update(override)
    table, key = args.pop("table"), args.pop("key")
    with pytest.raises(ConfigurationError):
        SQLiteSource(Tracer(tmp_path / "none.sqlite"), table, key, build, **args)


def test_bad_identifiers_are_refused_by_the_trigger_helper(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "db.sqlite") as db, pytest.raises(ConfigurationError):
        install_version_triggers(db, "posts", "v; DROP TABLE posts")
    db.close()


# ------------------------------------------------------------------- end to end


@pytest.mark.parametrize("mode", MODES)
def test_served_end_to_end(tmp_path: Path, mode: str) -> None:
    site = site_of(source(Tracer(make_db(tmp_path / "db.sqlite", 95)), mode))
    index = get(site, "/sitemap.xml")
    assert index is not None and index.status == 200
    validate(index.body)
    children = locs(index.body)
    assert len(children) == 10
    for child in children:
        got = get(site, child.removeprefix(ORIGIN))
        assert got is not None and got.status == 200
        validate(got.body)
        etag = got.header("ETag")
        assert etag is not None and got.header("Last-Modified") is not None
        again = respond(
            site, "GET", child.removeprefix(ORIGIN), lambda: BASE, {"if-none-match": etag}
        )
        assert again is not None and again.status == 304


def test_an_abandoned_page_closes_its_connection(tmp_path: Path) -> None:
    tracer = Tracer(make_db(tmp_path / "db.sqlite", 3000))
    src = source(tracer, "seek")
    site = site_of(src, page_size=3000)
    reply = respond(site, "GET", "/sitemap-posts-1.xml", lambda: BASE)
    assert reply is not None and reply.status == 200
    body = iter(reply.body)
    next(body)  # the client reads a little and goes away
    reading = tracer.connections[-1]
    reading.execute("SELECT 1")  # still open mid-page
    close = getattr(body, "close", None)
    assert close is not None
    close()
    with pytest.raises(sqlite3.ProgrammingError):
        reading.execute("SELECT 1")
    # Every connection of the request is closed but the thread's one for small fact
    # queries, which is kept for the next call, outside any transaction.
    kept = src._local.held[1]
    assert not kept.in_transaction
    for conn in tracer.connections:
        if conn is not kept:
            with pytest.raises(sqlite3.ProgrammingError):
                conn.execute("SELECT 1")


def test_fact_queries_reuse_one_connection_per_thread_and_see_new_rows(tmp_path: Path) -> None:
    path = make_db(tmp_path / "db.sqlite", 30)
    tracer = Tracer(path)
    src = source(tracer, "seek")
    assert len(src) == 30
    write(path, "INSERT INTO posts VALUES (31, 'p31', '2024-02-01')")
    assert len(src) == 31  # the read transaction ended: the new row is seen
    assert src.newest(0, 31) is not None
    assert len(tracer.connections) == 1
    found: list[int] = []
    worker = threading.Thread(target=lambda: found.append(len(src)))
    worker.start()
    worker.join()
    assert found == [31] and len(tracer.connections) == 2  # another thread, its own


def test_a_slice_generator_closes_its_connection(tmp_path: Path) -> None:
    tracer = Tracer(make_db(tmp_path / "db.sqlite", 50))
    entries = source(tracer, "offset")[0:50]
    assert tracer.connections == []  # lazy: nothing runs before the first next()
    next(iter(entries))
    close = getattr(entries, "close", None)
    assert close is not None
    close()
    with pytest.raises(sqlite3.ProgrammingError):
        tracer.connections[-1].execute("SELECT 1")
