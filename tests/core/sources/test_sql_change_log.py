"""SQLiteSource with a change log: the log's counter is the table's version (its rows
are not read), and every answer stays what a source remembering nothing would give."""

from __future__ import annotations

import random
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_core import ConfigurationError
from sitemap_core.sources.base import WHOLE
from sitemap_core.sources.sql.sqlite import SQLiteSource, install_change_log
from tests.core.sources.test_sql import PAGE, Tracer, build, make_db, source, write


def make_logged_db(path: Path, n: int) -> Path:
    return make_db(path, n, versioned=False, logged=True)


def logged(connect: Any, mode: str = "seek") -> SQLiteSource:
    return _source(connect, mode=mode, change_log="posts_changes")


def plain(path: Path) -> SQLiteSource:
    """The same rows, remembering nothing: the reference answers."""
    return _source(lambda: sqlite3.connect(path))


def _source(connect: Any, mode: str = "seek", **options: Any) -> SQLiteSource:
    return source(connect, mode, versioned=False, **options)


def index_facts(src: SQLiteSource) -> list[str | None]:
    """What an index asks of a source: its count, then each page's newest lastmod."""
    count = len(src)
    return [src.newest(start, min(start + PAGE, count)) for start in range(0, count, PAGE)]


def range_reads(tracer: Tracer) -> list[str]:
    """The statements that read rows of a page range (not the O(1) look-ups)."""
    return [sql for sql in tracer.log if sql.startswith(("WITH sitemap_range", "SELECT CASE WHEN"))]


def test_the_log_records_every_change_and_versions_the_table(tmp_path: Path) -> None:
    path = make_logged_db(tmp_path / "db", 5)
    src = logged(lambda: sqlite3.connect(path))
    before = src.fingerprint(0, 5)
    write(path, "INSERT INTO posts VALUES (6, 'p6', '2024-02-01')")
    write(path, "UPDATE posts SET updated_at = '2024-03-01' WHERE id = 2")
    write(path, "DELETE FROM posts WHERE id = 4")
    with sqlite3.connect(path) as db:
        keys = [key for (key,) in db.execute("SELECT key FROM posts_changes ORDER BY id")]
    assert keys == [6, 2, 2, 4]
    assert src.fingerprint(0, 5) != before


def test_a_write_renews_the_version_and_the_next_index_reads_each_page_once(
    tmp_path: Path,
) -> None:
    path = make_logged_db(tmp_path / "db", 10 * PAGE)
    tracer = Tracer(path)
    src = logged(tracer)
    first = index_facts(src)
    assert len(range_reads(tracer)) == 10
    tracer.log.clear()
    assert index_facts(src) == first
    assert range_reads(tracer) == []  # unchanged: all of it remembered
    write(path, f"INSERT INTO posts VALUES ({10 * PAGE + 1}, 'new', '2025-01-01')")
    tracer.log.clear()
    second = index_facts(src)
    # A new version: each page read once, each first key found by the read before it
    # (one step on the key), only the first page's by a skip (of nothing).
    assert len(range_reads(tracer)) == 11
    offsets = [sql for sql in tracer.log if "OFFSET" in sql]
    assert offsets == ['SELECT "id" FROM "posts" ORDER BY "id" LIMIT 1 OFFSET 0']
    assert second == [*first, "2025-01-01"]
    assert second == index_facts(plain(path))


def test_a_short_last_page_that_grows_is_read_again(tmp_path: Path) -> None:
    # The last page held 5 rows; an append fills it: its newest must change.
    path = make_logged_db(tmp_path / "db", 3 * PAGE + 5)
    src = logged(lambda: sqlite3.connect(path))
    index_facts(src)
    write(path, "INSERT INTO posts VALUES (?, 'new', '2029-09-09')", [3 * PAGE + 6])
    assert index_facts(src)[-1] == "2029-09-09"
    assert index_facts(src) == index_facts(plain(path))


@pytest.mark.parametrize("mode", ["seek", "offset"])
def test_a_filtered_source_counts_again_after_a_change(tmp_path: Path, mode: str) -> None:
    path = make_logged_db(tmp_path / "db", 3 * PAGE)
    connect = lambda: sqlite3.connect(path)  # noqa: E731
    src = _source(connect, mode, where="id % 2 = 0", change_log="posts_changes")
    index_facts(src)
    assert len(src) == 3 * PAGE // 2
    write(path, "INSERT INTO posts VALUES (?, 'odd', '2024-01-01')", [3 * PAGE + 1])
    assert len(src) == 3 * PAGE // 2  # the new row is filtered out: not counted
    write(path, "INSERT INTO posts VALUES (?, 'even', '2024-01-01')", [3 * PAGE + 2])
    assert len(src) == 3 * PAGE // 2 + 1


def test_a_pruned_log_changes_nothing(tmp_path: Path) -> None:
    path = make_logged_db(tmp_path / "db", 5 * PAGE)
    tracer = Tracer(path)
    src = logged(tracer)
    index_facts(src)
    write(path, "UPDATE posts SET updated_at = '2031-01-01' WHERE id = 2")
    facts = index_facts(src)
    write(path, "DELETE FROM posts_changes")  # the counter stays where it was
    tracer.log.clear()
    assert index_facts(src) == facts
    assert range_reads(tracer) == []
    assert facts[0] == "2031-01-01"
    assert facts == index_facts(plain(path))


def test_version_table_and_change_log_are_exclusive(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="one of version_table, change_log and page_facts"):
        SQLiteSource(
            lambda: sqlite3.connect(tmp_path / "db"),
            "posts",
            "id",
            build,
            columns=["slug"],
            version_table="v",
            change_log="c",
        )


def test_install_change_log_is_idempotent_and_checks_names(tmp_path: Path) -> None:
    path = make_logged_db(tmp_path / "db", 3)
    with sqlite3.connect(path) as db:
        install_change_log(db, "posts", "id", "posts_changes")
        triggers = db.execute("SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger'")
        assert triggers.fetchone() == (3,)
        with pytest.raises(ConfigurationError):
            install_change_log(db, "posts", "id); DROP TABLE posts; --", "log")
    db.close()


_OPS = st.lists(
    st.tuples(
        st.sampled_from(["insert", "update", "delete"]),
        st.integers(min_value=1, max_value=80),
        st.integers(min_value=0, max_value=27),
    ),
    min_size=1,
    max_size=6,
)


@pytest.mark.parametrize("mode", ["seek", "offset"])
@settings(max_examples=80, deadline=None)
@given(rounds=st.lists(_OPS, min_size=1, max_size=4), seed=st.integers(0, 2**16))
def test_after_any_writes_the_answers_are_those_of_a_fresh_source(
    tmp_path_factory: pytest.TempPathFactory, mode: str, rounds: list[Any], seed: int
) -> None:
    # Writes anywhere (middle inserts shift pages, deletes, updates) between index
    # requests: what the log lets the source keep must never differ from the truth.
    path = make_logged_db(tmp_path_factory.mktemp("log") / "db", 35)  # a short last page
    src = logged(lambda: sqlite3.connect(path), mode)
    index_facts(src)
    chance = random.Random(seed)
    for ops in rounds:
        with sqlite3.connect(path) as db:
            for op, key, day in ops:
                stamp = f"2024-05-{1 + day:02d}"
                if op == "insert":
                    db.execute(
                        "INSERT OR IGNORE INTO posts VALUES (?, ?, ?)", (key, f"n{key}", stamp)
                    )
                elif op == "update":
                    db.execute("UPDATE posts SET updated_at = ? WHERE id = ?", (stamp, key))
                else:
                    db.execute("DELETE FROM posts WHERE id = ?", (key,))
        db.close()
        if chance.random() < 0.5:
            index_facts(src)  # sometimes the index is asked between rounds, sometimes not
        assert index_facts(src) == index_facts(plain(path))
        count = len(src)
        pages = [list(src[start : start + PAGE]) for start in range(0, count, PAGE)]
        assert [e for page in pages for e in page] == list(plain(path)[0:count])


def test_insert_or_replace_keeps_the_count_exact(tmp_path: Path) -> None:
    # REPLACE deletes without firing DELETE triggers: the count is read, never derived.
    path = make_logged_db(tmp_path / "db", 10)
    src = logged(lambda: sqlite3.connect(path))
    assert len(src) == 10
    for _ in range(3):
        write(path, "INSERT OR REPLACE INTO posts VALUES (3, 'again', '2025-01-01')")
        assert len(src) == 10
    assert index_facts(src) == index_facts(plain(path))


def test_a_missing_or_misspelt_change_log_table_is_an_error(tmp_path: Path) -> None:
    path = make_logged_db(tmp_path / "db", 5)
    with pytest.raises(ConfigurationError, match="does not exist"):
        len(_source(lambda: sqlite3.connect(path), change_log="posts_chnages"))
    # Table names are case-insensitive in SQL: another spelling finds the same log.
    src = _source(lambda: sqlite3.connect(path), change_log="POSTS_CHANGES")
    assert len(src) == 5
    write(path, "INSERT INTO posts VALUES (6, 'p6', '2024-01-02')")
    assert len(src) == 6


def test_a_change_log_missing_from_a_database_without_autoincrement_is_an_error(
    tmp_path: Path,
) -> None:
    # No AUTOINCREMENT table at all means no sqlite_sequence to read the counter from:
    # still the same typed error naming the table, not SQLite's "no such table".
    path = tmp_path / "db"
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT, updated TEXT)")
        db.execute("INSERT INTO posts VALUES (1, 'p1', '2024-01-01')")
    with pytest.raises(ConfigurationError, match="'posts_changes' does not exist"):
        len(logged(lambda: sqlite3.connect(path)))


def test_a_fresh_change_log_is_read_in_one_statement(tmp_path: Path) -> None:
    # install_change_log seeds the log's AUTOINCREMENT counter: before any change is
    # logged, a revalidation still reads the version in one statement (not the counter,
    # then a look for the log table).
    path = make_logged_db(tmp_path / "db", 5)
    tracer = Tracer(path)
    src = logged(tracer)
    first = src.fingerprint(0, WHOLE)
    tracer.log.clear()
    assert src.fingerprint(0, WHOLE) == first == 0
    assert tracer.log == [
        "SELECT seq FROM sqlite_sequence WHERE name = 'posts_changes' COLLATE NOCASE"
    ]


def test_a_log_with_nothing_logged_yet_is_version_zero_until_a_write(tmp_path: Path) -> None:
    path = make_logged_db(tmp_path / "db", 5)
    write(path, "DELETE FROM sqlite_sequence")  # as just installed: no counter row yet
    src = logged(lambda: sqlite3.connect(path))
    before = src.fingerprint(0, WHOLE)
    assert before == 0 and len(src) == 5
    write(path, "INSERT INTO posts VALUES (6, 'p6', '2024-01-02')")
    assert src.fingerprint(0, WHOLE) != before and len(src) == 6


def test_a_table_with_another_unique_index_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE posts (id INTEGER PRIMARY KEY, slug TEXT UNIQUE, updated_at TEXT)")
        with pytest.raises(ConfigurationError, match="unique index on \\['slug'\\]"):
            install_change_log(db, "posts", "id", "posts_changes")
    db.close()


def test_text_keys_in_another_collation_stay_right_across_a_change(tmp_path: Path) -> None:
    # Ordered by a collation Python cannot see (NOCASE): only the database compares them.
    path = tmp_path / "db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE posts (slug TEXT PRIMARY KEY COLLATE NOCASE, updated_at TEXT)")
        db.executemany("INSERT INTO posts VALUES (?, '2024-01-01')", [(c,) for c in "MNPQRXYZ"])
        install_change_log(db, "posts", "slug", "posts_changes")
    db.close()

    def keyed_by_text(**options: Any) -> SQLiteSource:
        return SQLiteSource(
            lambda: sqlite3.connect(path),
            "posts",
            "slug",
            lambda row: f"https://example.com/{row['slug']}",
            columns=["slug"],
            lastmod="updated_at",
            **options,
        )

    logged_source, fresh = keyed_by_text(change_log="posts_changes"), keyed_by_text()

    def pages(src: SQLiteSource) -> list[list[Any]]:
        count = len(src)
        return [list(src[start : start + 2]) for start in range(0, count, 2)]

    pages(logged_source)
    write(path, "INSERT INTO posts VALUES ('a', '2024-01-01')")
    assert pages(logged_source) == pages(fresh)
    assert len(logged_source) == 9


# -- page fingerprints ------------------------------------------------------------------


def page_fingerprints(src: SQLiteSource) -> list[object]:
    count = len(src)
    return [src.fingerprint(start, min(start + PAGE, count)) for start in range(0, count, PAGE)]


def page_rows(path: Path) -> list[list[Any]]:
    reference = plain(path)
    count = len(reference)
    return [list(reference[start : start + PAGE]) for start in range(0, count, PAGE)]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["insert", "update", "delete"]),
            st.integers(min_value=1, max_value=60),
            st.integers(min_value=0, max_value=27),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_a_page_fingerprint_moves_exactly_when_its_rows_might_have(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, int, int]]
) -> None:
    # Whatever the writes: a page whose rows changed gets a new fingerprint (never a
    # stale one); a page whose rows stayed keeps it; and two sources (two workers, one
    # of them new) agree on every page.
    path = make_logged_db(tmp_path_factory.mktemp("pages") / "db", 45)
    worker = logged(lambda: sqlite3.connect(path))
    before, rows_before = page_fingerprints(worker), page_rows(path)
    with sqlite3.connect(path) as db:
        for op, key, day in ops:
            stamp = f"2024-06-{1 + day:02d}"
            if op == "insert":
                db.execute("INSERT OR IGNORE INTO posts VALUES (?, ?, ?)", (key, f"n{key}", stamp))
            elif op == "update":
                db.execute("UPDATE posts SET updated_at = ? WHERE id = ?", (stamp, key))
            else:
                db.execute("DELETE FROM posts WHERE id = ?", (key,))
    db.close()
    after, rows_after = page_fingerprints(worker), page_rows(path)
    assert after == page_fingerprints(logged(lambda: sqlite3.connect(path)))
    for number, fingerprint in enumerate(after):
        old = before[number] if number < len(before) else None
        same_rows = number < len(rows_before) and rows_before[number] == rows_after[number]
        if not same_rows:
            assert fingerprint != old, (number, ops)


def test_any_write_renews_every_page_fingerprint(tmp_path: Path) -> None:
    """The counter versions the whole table: a page keeps its fingerprint while the
    table is unchanged (page facts are what keep it across writes elsewhere)."""
    path = make_logged_db(tmp_path / "db", 40)  # four full pages
    src = logged(lambda: sqlite3.connect(path))
    before = page_fingerprints(src)
    assert page_fingerprints(src) == before and len(set(before)) == 1
    write(path, "INSERT INTO posts VALUES (41, 'p41', '2024-06-01')")
    after = page_fingerprints(src)
    assert len(after) == 5 and not set(after) & set(before)
    assert after == page_fingerprints(logged(lambda: sqlite3.connect(path)))


def test_a_page_of_text_keys_in_another_collation_moves_with_any_change(tmp_path: Path) -> None:
    # The log's key column compares bytes; a NOCASE key orders 'B' between 'a' and 'c'.
    path = tmp_path / "db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (slug TEXT PRIMARY KEY COLLATE NOCASE, lastmod TEXT)")
        db.executemany("INSERT INTO t VALUES (?, '2024-01-01')", [(s,) for s in "aBcdEf"])
        install_change_log(db, "t", "slug", "t_log")
    db.close()
    src = SQLiteSource(
        lambda: sqlite3.connect(path), "t", "slug",
        lambda row: (f"https://x.test/{row[0]}", row[1], None, None),
        columns=("slug", "lastmod"), lastmod="lastmod", change_log="t_log", row_factory=None,
    )  # fmt: skip
    before = src.fingerprint(0, 3)
    write(path, "UPDATE t SET lastmod = '2025-06-01' WHERE slug = 'B'")
    assert src.fingerprint(0, 3) != before


def test_a_pruned_log_keeps_the_version_and_never_brings_back_an_old_one(tmp_path: Path) -> None:
    path = make_logged_db(tmp_path / "db", 30)
    src = logged(lambda: sqlite3.connect(path))
    first = src.fingerprint(0, 10)
    write(path, "UPDATE posts SET updated_at = '2023-06-01' WHERE id = 3")
    edited = src.fingerprint(0, 10)
    write(path, "DELETE FROM posts_changes")  # pruned: the AUTOINCREMENT counter stays
    assert src.fingerprint(0, 10) == edited != first
    write(path, "UPDATE posts SET updated_at = '2024-06-01' WHERE id = 3")
    assert src.fingerprint(0, 10) not in (first, edited)
    assert src.fingerprint(0, 10) == logged(lambda: sqlite3.connect(path)).fingerprint(0, 10)


def test_an_integer_primary_key_besides_the_key_is_refused(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "db") as db:
        db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, pos INTEGER, lastmod TEXT)")
        with pytest.raises(ConfigurationError, match="INTEGER PRIMARY KEY 'id'"):
            install_change_log(db, "t", "pos", "t_log")
    db.close()
