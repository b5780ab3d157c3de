"""SQLAlchemySource and AsyncSQLAlchemySource on SQLite and on a real PostgreSQL.

PostgreSQL is started by the tests (``tests/postgres.py``); without it those cases skip
(fail under CI). Queries are counted with SQLAlchemy's ``before_cursor_execute`` event.
"""

from __future__ import annotations

import asyncio
import gc
import random
import sqlite3
import threading
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import closing
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    Date,
    Engine,
    Integer,
    MetaData,
    String,
    Table,
    create_engine,
    delete,
    event,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.ext.asyncio import create_async_engine
from xsd import validate

from sitemap_core import ConfigurationError, Entry
from sitemap_core.sources.base import WHOLE
from sitemap_core.sources.scope import enter_request, leave_request, request_notes
from sitemap_core.sources.sql.sqla import (
    AsyncSQLAlchemySource,
    SQLAlchemySource,
    install_change_log,
    install_version_triggers,
)
from sitemap_core.sources.sql.sqlite import SQLiteSource

ORIGIN = "http://www.example.com"
PAGE = 10
VERSIONING = ("none", "version_table", "change_log")

metadata = MetaData()
posts = Table(
    "posts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("slug", String(40), nullable=False),
    Column("updated_at", Date, nullable=True),
)


def day(i: int) -> date:
    return date(2024, 1, 1 + i % 28)


def url(i: int) -> str:
    return f"{ORIGIN}/posts/p{i}"


def build(row: Any) -> Entry:
    return Entry(f"{ORIGIN}/posts/{row.slug}", lastmod=row.updated_at)


class Db:
    """One database of a test: its engine, statement log, and how to reach it async."""

    def __init__(self, engine: Engine, async_url: str) -> None:
        self.engine = engine
        self.async_url = async_url
        self.log: list[str] = []
        self.params: list[Any] = []
        event.listen(engine, "before_cursor_execute", self._record)

    def _record(
        self, conn: Any, cursor: Any, statement: str, _: Any, context: Any, *args: Any
    ) -> None:
        if statement == "BEGIN":  # SQLite: the read transaction a versioned call opens
            return
        self.log.append(statement)
        # By bind parameter name, whatever the driver's own parameter style.
        compiled = getattr(context, "compiled_parameters", None)
        self.params.append(compiled[0] if compiled else {})

    def clear(self) -> None:
        self.log.clear()
        self.params.clear()

    def fill(self, n: int, *, versioning: str = "none", step: int = 1) -> None:
        """``n`` posts with ids ``step, 2 * step, ...`` (gaps leave room for inserts)."""
        with self.engine.begin() as conn:
            metadata.create_all(conn)
            if n:
                conn.execute(
                    insert(posts),
                    [
                        {"id": i, "slug": f"p{i}", "updated_at": day(i)}
                        for i in range(step, step * n + 1, step)
                    ],
                )
        if versioning == "version_table":
            install_version_triggers(self.engine, "posts", "posts_version")
        elif versioning == "change_log":
            install_change_log(self.engine, "posts", "id", "posts_changes")
        self.clear()

    def write(self, statement: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(statement)


#: The async drivers: aiosqlite; psycopg 3 (sync and async under one URL) and asyncpg.
ASYNC_DRIVERS = {
    "sqlite": "sqlite+aiosqlite",
    "postgresql": "postgresql+psycopg",
    "postgresql+asyncpg": "postgresql+asyncpg",
}


def make_db(request: pytest.FixtureRequest, tmp_path: Path, kind: str) -> Iterator[Db]:
    if kind == "sqlite":
        path = tmp_path / "posts.db"
        engine = create_engine(f"sqlite:///{path}")
        yield Db(engine, f"{ASYNC_DRIVERS[kind]}:///{path}")
        engine.dispose()
        return
    url = request.getfixturevalue("postgres_url")
    yield from postgres_db(url, url.replace("postgresql+psycopg", ASYNC_DRIVERS[kind]))


@pytest.fixture
def pg(postgres_url: str) -> Iterator[Db]:
    yield from postgres_db(postgres_url, postgres_url)


def postgres_db(url: str, async_url: str) -> Iterator[Db]:
    engine = create_engine(url)
    with engine.begin() as conn:  # a clean schema per test
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    yield Db(engine, async_url)
    engine.dispose()


def source(db: Db, versioning: str = "none", **options: Any) -> SQLAlchemySource:
    options.setdefault("lastmod", "updated_at")
    options.setdefault("columns", ["slug", "updated_at"])
    return SQLAlchemySource(
        db.engine,
        posts,
        key="id",
        build=options.pop("build", build),
        version_table="posts_version" if versioning == "version_table" else None,
        change_log="posts_changes" if versioning == "change_log" else None,
        **options,
    )


def locs(items: Any) -> list[str]:
    return [item.loc if isinstance(item, Entry) else item for item in items]


def is_version_read(sql: str) -> bool:
    return sql.split()[:4] in (
        ["SELECT", "version", "FROM", "posts_version"],
        ["SELECT", "version", "FROM", "posts_changes_version"],
    )


def request_facts(src: SQLAlchemySource) -> list[Any]:
    """What an index request asks, in a request's scope as the core opens one: the whole
    fingerprint first, then the index's facts."""
    scope = enter_request()
    try:
        src.fingerprint(0, WHOLE)
        return index_facts(src)
    finally:
        leave_request(scope)


def kind(sql: str) -> str:
    """Which of the source's statements ``sql`` is (by its shape)."""
    flat = " ".join(sql.split())
    if is_version_read(flat):
        return "version"
    if flat.startswith("WITH sitemap_range"):
        return "read"
    if flat.startswith("SELECT count(*)"):
        return "count"
    if flat.startswith("SELECT posts.id FROM posts"):
        return "seek"
    return "rows"


def kinds(db: Db) -> dict[str, int]:
    return dict(Counter(kind(sql) for sql in db.log))


def rows_read(db: Db) -> int:
    """Rows the range reads went over."""
    return sum(p["n"] for sql, p in zip(db.log, db.params, strict=True) if kind(sql) == "read")


def check_facts(db: Db, src: SQLAlchemySource, where: Any = None) -> None:
    """What the source remembers of its version is true of the rows: each first key is
    the key at its rank, each range's newest that of its rows, the count theirs."""
    query = select(posts.c.id, posts.c.updated_at).order_by(posts.c.id)
    with db.engine.connect() as conn:
        rows = conn.execute(query if where is None else query.where(where)).all()
    facts = src._memo[0]
    assert facts is not None
    for rank, key in facts.firsts.items():
        assert rows[rank][0] == key
    for (start, stop), newest in facts.newest.items():
        dates = [row[1] for row in rows[start:stop]]
        assert newest == (None if not dates or None in dates else max(dates))
    if facts.count is not None:
        assert facts.count == len(rows)


def index_facts(src: SQLAlchemySource) -> list[Any]:
    """What an index asks of a source: its count, then each page's newest lastmod."""
    count = len(src)
    return [src.newest(start, min(start + PAGE, count)) for start in range(0, count, PAGE)]


# ------------------------------------------------------------------------- paging


@pytest.mark.parametrize("versioning", VERSIONING)
def test_pages_list_every_row_once_in_key_order(db: Db, versioning: str) -> None:
    db.fill(95, versioning=versioning)
    src = source(db, versioning)
    assert len(src) == 95
    index_facts(src)
    pages = [locs(src[start : start + PAGE]) for start in range(0, 100, PAGE)]
    assert [loc for page in pages for loc in page] == [url(i) for i in range(1, 96)]
    assert [len(page) for page in pages] == [10] * 9 + [5]
    assert locs(src[90:]) == [url(i) for i in range(91, 96)]
    assert locs(src[5:5]) == locs(src[200:210]) == []


def test_a_page_closed_early_closes_its_cursor_and_returns_its_connection(db: Db) -> None:
    # A client hanging up closes the page's generator: its streamed result (a server-side
    # cursor on PostgreSQL) is closed then, not left for the garbage collector, which
    # made psycopg warn of a cursor deleted while still open.
    db.fill(3 * PAGE)
    src = source(db)
    pool = db.engine.pool
    # Recorded, not raised: the warning comes from a __del__, where errors are ignored.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        rows = src[0 : 3 * PAGE]
        assert locs([next(rows)]) == [url(1)]
        assert pool.checkedout() == 1
        rows.close()
        assert pool.checkedout() == 0
        del rows
        gc.collect()
    assert [str(w.message) for w in caught if w.category is ResourceWarning] == []
    assert locs(src[0:2]) == [url(1), url(2)]  # and the pool's connection still works


@pytest.mark.parametrize("versioning", VERSIONING)
def test_a_where_filter_pages_the_filtered_rows(db: Db, versioning: str) -> None:
    db.fill(50, versioning=versioning)
    src = source(db, versioning, where=posts.c.id % 2 == 0)
    assert len(src) == 25
    assert locs(src[10:13]) == [url(22), url(24), url(26)]
    assert src.newest(10, 13) == max(day(22), day(24), day(26))
    everything = [item for start in range(0, 25, PAGE) for item in src[start : start + PAGE]]
    assert locs(everything) == [url(i) for i in range(2, 51, 2)]


def test_a_select_is_paged_as_a_subquery(db: Db) -> None:
    db.fill(30)
    query = select(posts.c.id, posts.c.slug, posts.c.updated_at).where(posts.c.id > 10)
    src = SQLAlchemySource(db.engine, query, key="id", lastmod="updated_at", build=build)
    assert len(src) == 20
    assert locs(src[0:3]) == [url(11), url(12), url(13)]


def test_a_loc_template_gives_tuple_rows(db: Db) -> None:
    db.fill(3)
    src = source(db, build=f"{ORIGIN}/posts/{{slug}}")
    assert list(src[0:2]) == [(url(1), day(1)), (url(2), day(2))]
    with pytest.raises(ConfigurationError):
        source(db, build="no placeholder")


def test_bad_configuration_is_refused(db: Db) -> None:
    db.fill(1)
    with pytest.raises(ConfigurationError, match="not a column"):
        SQLAlchemySource(db.engine, posts, key="nope", build=build)
    with pytest.raises(ConfigurationError, match="not both"):
        SQLAlchemySource(db.engine, posts, key="id", build=build, version_table="a", change_log="b")
    with pytest.raises(ConfigurationError, match="plain SQL identifier"):
        install_change_log(db.engine, "posts", "id", "bad name")


# ------------------------------------------------------------------ query counts


def test_page_n_costs_what_page_1_costs_once_anchors_are_known(db: Db) -> None:
    db.fill(20 * PAGE, versioning="change_log")
    src = source(db, "change_log")
    index_facts(src)  # the index: count, each page's newest and next anchor
    costs = []
    for start in (0, 10 * PAGE, 19 * PAGE):
        db.clear()
        assert len(locs(src[start : start + PAGE])) == PAGE
        costs.append(list(db.log))
    assert [len(cost) for cost in costs] == [2, 2, 2]  # the version read, the rows
    # No skip over earlier rows: the rows are a range search from the remembered key
    # (SQLite writes "LIMIT ? OFFSET ?" for any LIMIT; the offset bound is 0).
    assert all(is_version_read(cost[0]) for cost in costs)
    assert not any("SELECT posts.id" in sql for cost in costs for sql in cost)


def test_unversioned_pages_cost_one_statement_each(db: Db) -> None:
    db.fill(20 * PAGE)
    src = source(db)
    for start in (0, 19 * PAGE):
        db.clear()
        assert len(locs(src[start : start + PAGE])) == PAGE
        assert len(db.log) == 1


@pytest.mark.parametrize("versioning", ["version_table", "change_log"])
def test_a_request_costs_one_version_read_while_unchanged(db: Db, versioning: str) -> None:
    db.fill(5 * PAGE, versioning=versioning)
    src = source(db, versioning)
    first = request_facts(src)
    db.clear()
    assert request_facts(src) == first  # the fingerprint, the count and five newest
    assert len(db.log) == 1 and is_version_read(db.log[0])
    # Outside a request (no scope to note the version in), each fact reads it itself.
    src.fingerprint(0, WHOLE)
    db.clear()
    assert index_facts(src) == first
    assert len(db.log) == 6
    assert all(is_version_read(sql) for sql in db.log)


def test_count_and_newest_answer_for_the_version_the_fingerprint_read(db: Db) -> None:
    """A request's facts come from one version, the one its fingerprint answered with,
    in that request only: code outside it, before or after, sees every write."""
    db.fill(3 * PAGE, versioning="change_log")
    src = source(db, "change_log")
    scope = enter_request()
    try:
        before = src.fingerprint(0, WHOLE)
        assert len(src) == 3 * PAGE
        db.write(insert(posts).values(id=3 * PAGE + 1, slug="new", updated_at=date(2025, 1, 1)))
        assert len(src) == 3 * PAGE  # the request's version
        elsewhere: list[int] = []
        thread = threading.Thread(target=lambda: elsewhere.append(len(src)))
        thread.start()
        thread.join()
        assert elsewhere == [3 * PAGE + 1]  # a thread outside the request reads it
    finally:
        leave_request(scope)
    # The same thread after the request (a gunicorn worker's app code, a shell): its
    # own write is there, without a fingerprint first.
    assert len(src) == 3 * PAGE + 1
    assert src.newest(3 * PAGE, 4 * PAGE) == date(2025, 1, 1)
    assert src.fingerprint(0, WHOLE) != before


def test_a_call_that_read_an_older_version_never_puts_the_memo_back(db: Db) -> None:
    """A call whose version read came before a write, finishing after a call that saw
    the write, answers for its own version and leaves the newer facts remembered (they
    were replaced by an empty older version, which the next index read whole)."""
    db.fill(3 * PAGE, versioning="change_log")
    src = source(db, "change_log")
    request_facts(src)
    stale_version = src._memo[0].version  # type: ignore[union-attr]
    db.write(update(posts).where(posts.c.id == 2).values(updated_at=date(2026, 1, 1)))
    request_facts(src)
    newer = src._memo[0]
    assert newer is not None and newer.version > stale_version and newer.firsts
    # The slow call: its version read answers with the old version.
    plan = src._sql.begin(src._memo)
    next(plan)
    with pytest.raises(StopIteration) as done:
        plan.send([(stale_version,)])
    own = done.value.value
    assert own.version == stale_version and not own.firsts
    assert src._memo[0] is newer  # not replaced
    truth = index_facts(source(db))
    db.clear()
    assert request_facts(src) == truth
    assert [kind(sql) for sql in db.log] == ["version"]  # all of it still known


# ------------------------------------------------------------------------ changes


@pytest.mark.parametrize("versioning", ["version_table", "change_log"])
def test_every_change_renews_the_fingerprint_and_the_facts(db: Db, versioning: str) -> None:
    db.fill(3 * PAGE, versioning=versioning)
    src, plain = source(db, versioning), source(db)
    seen = {src.fingerprint(0, PAGE)}
    index_facts(src)
    changes = [
        insert(posts).values(id=3 * PAGE + 1, slug="new", updated_at=date(2025, 1, 1)),
        # A date moved backwards: invisible to (COUNT, MAX(key), MAX(lastmod)).
        update(posts).where(posts.c.id == 5).values(updated_at=date(2000, 1, 1)),
        delete(posts).where(posts.c.id == 7),
        update(posts).where(posts.c.id == 3 * PAGE + 1).values(updated_at=date(2020, 1, 1)),
    ]
    for change in changes:
        db.write(change)
        fingerprint = src.fingerprint(0, PAGE)
        assert fingerprint not in seen
        seen.add(fingerprint)
        assert index_facts(src) == index_facts(plain)
        assert len(src) == len(plain)
        assert locs(src[0:PAGE]) == locs(plain[0:PAGE])


WRITES = {
    "an edit and an append": [
        update(posts).where(posts.c.id == 104).values(updated_at=date(2001, 1, 1)),
        insert(posts).values(id=20 * PAGE + 1, slug="new", updated_at=date(2025, 1, 1)),
    ],
    "a row deleted early": [delete(posts).where(posts.c.id == 3)],
}


@pytest.mark.parametrize("writes", list(WRITES))
def test_after_a_write_the_index_reads_each_row_once(db: Db, writes: str) -> None:
    """A new version starts from nothing: its index counts the rows and reads each page
    once (one statement, which also finds the next page's first key); then every page
    is a range search from a remembered key."""
    db.fill(20 * PAGE, versioning="version_table")
    src, plain = source(db, "version_table"), source(db)
    request_facts(src)
    for write in WRITES[writes]:
        db.write(write)
    expected = index_facts(plain)
    db.clear()
    assert request_facts(src) == expected
    counted = kinds(db)
    # The fingerprint's (twice on PostgreSQL: a quick read outside a transaction
    # first, the 304's path), the count's and each read's.
    assert counted.pop("version") <= 3 + len(expected)
    # The first page's first key, found once; every other one by the read before it.
    assert counted == {"count": 1, "seek": 1, "read": len(expected)}
    assert rows_read(db) == len(plain)  # each row, once
    check_facts(db, src)
    last = (len(expected) - 1) * PAGE
    wanted = locs(plain[last : last + PAGE])
    db.clear()
    assert locs(src[last : last + PAGE]) == wanted
    assert kinds(db) == {"version": 1, "rows": 1}


def test_a_page_asked_first_is_found_once_per_version(db: Db) -> None:
    db.fill(20 * PAGE, versioning="version_table")
    src, plain = source(db, "version_table"), source(db)
    expected = locs(plain[15 * PAGE : 16 * PAGE])
    for cost in ({"version": 1, "seek": 1, "rows": 1}, {"version": 1, "rows": 1}):
        db.clear()
        assert locs(src[15 * PAGE : 16 * PAGE]) == expected
        assert kinds(db) == cost


@pytest.mark.parametrize("filtered", [False, True], ids=["table", "where"])
def test_remembered_facts_follow_every_kind_of_write(db: Db, filtered: bool) -> None:
    """Random writes of every kind, each followed by a request of a random kind; every
    answer is what an unversioned source (every call a query) gives for the rows."""
    db.fill(8 * PAGE, versioning="change_log", step=2)  # even ids: odd ones are free
    where = posts.c.slug.not_like("hidden%") if filtered else None
    src, plain = source(db, "change_log", where=where), source(db, where=where)
    rng = random.Random(15)

    def ids() -> list[int]:
        with db.engine.connect() as conn:
            return list(conn.execute(select(posts.c.id).order_by(posts.c.id)).scalars())

    def free() -> int:
        taken = set(ids())
        return rng.choice([i for i in range(1, max(taken) + 3) if i not in taken])

    moves = ["edit", "undate", "insert", "append", "delete", "rekey", "bulk", "hide"]
    for _ in range(40):
        move, existing = rng.choice(moves), ids()
        one = posts.c.id == rng.choice(existing)
        if move == "edit":
            when = date(rng.choice([1999, 2030]), 1, rng.randint(1, 28))
            db.write(update(posts).where(one).values(updated_at=when))
        elif move == "undate":
            db.write(update(posts).where(one).values(updated_at=rng.choice([None, day(1)])))
        elif move in ("insert", "append"):
            new = free() if move == "insert" else max(existing) + 2
            db.write(insert(posts).values(id=new, slug=f"p{new}", updated_at=day(new)))
        elif move == "delete":
            db.write(delete(posts).where(one))
        elif move == "rekey":
            db.write(update(posts).where(one).values(id=free()))
        elif move == "bulk":
            some = posts.c.id.in_(rng.sample(existing, 6))
            db.write(update(posts).where(some).values(updated_at=date(2031, 2, 3)))
        else:
            db.write(update(posts).where(one).values(slug=rng.choice(["hidden", "shown"])))
        ask = rng.choice(["index", "index", "page", "count"])
        if ask == "index":
            assert request_facts(src) == index_facts(plain)
        elif ask == "page":
            src.fingerprint(0, WHOLE)
            start = rng.randrange(0, len(plain) + PAGE, PAGE)
            assert locs(src[start : start + PAGE]) == locs(plain[start : start + PAGE])
            assert src.newest(start, start + PAGE) == plain.newest(start, start + PAGE)
        else:  # robots.txt: the fingerprint, then the count
            src.fingerprint(0, WHOLE)
            assert len(src) == len(plain)
        check_facts(db, src, where)
    assert request_facts(src) == index_facts(plain)
    check_facts(db, src, where)
    pages = range(0, len(plain) + PAGE, PAGE)
    assert [locs(src[a : a + PAGE]) for a in pages] == [locs(plain[a : a + PAGE]) for a in pages]


def test_requests_and_writes_at_once_leave_true_facts(db: Db) -> None:
    """Threads serving requests while rows change: no call fails, and once the writes
    stop, what the source remembers is true of the rows."""
    db.fill(8 * PAGE, versioning="change_log", step=2)
    src, plain = source(db, "change_log"), source(db)
    failures: list[BaseException] = []
    done = threading.Event()

    def serve(seed: int) -> None:
        rng = random.Random(seed)
        try:
            while not done.is_set():
                request_facts(src)
                start = rng.randrange(0, 9 * PAGE, PAGE)
                list(src[start : start + PAGE])
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    servers = [threading.Thread(target=serve, args=(seed,)) for seed in range(4)]
    for thread in servers:
        thread.start()
    rng = random.Random(1)
    free = rng.sample(range(1, 16 * PAGE, 2), 10)  # odd ids: none is taken
    try:
        for i in range(30):
            key = 2 * rng.randrange(1, 8 * PAGE)
            if i % 3 == 0:
                db.write(delete(posts).where(posts.c.id == key))
            elif i % 3 == 1:
                new = free.pop()
                db.write(insert(posts).values(id=new, slug=f"p{new}", updated_at=day(new)))
            else:
                db.write(update(posts).where(posts.c.id == key).values(updated_at=day(i)))
            time.sleep(0.005)
    finally:
        done.set()
        for thread in servers:
            thread.join()
    assert not failures
    assert request_facts(src) == index_facts(plain)
    check_facts(db, src)


def test_an_sqlite_call_reads_one_snapshot(tmp_path: Path) -> None:
    """Python's sqlite3 begins no transaction for a SELECT: the source does, so a write
    committed between the version read and the count does not get counted under the
    version before it (and then carried over to every later version)."""
    path = tmp_path / "posts.db"
    engine = create_engine(f"sqlite:///{path}")
    with engine.connect() as conn:  # WAL: a writer commits while a reader reads
        conn.exec_driver_sql("PRAGMA journal_mode=WAL")
    db = Db(engine, "")
    db.fill(3 * PAGE, versioning="change_log")
    src = source(db, "change_log")
    src.fingerprint(0, WHOLE)

    def meddle(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.startswith("SELECT count(*)") and not meddled:
            meddled.append(statement)
            with closing(sqlite3.connect(path)) as other, other:
                other.execute("INSERT INTO posts VALUES (999, 'late', '2025-01-01')")

    meddled: list[str] = []
    event.listen(engine, "before_cursor_execute", meddle)
    assert len(src) == 3 * PAGE  # the snapshot the version was read in
    assert meddled
    src.fingerprint(0, WHOLE)
    assert len(src) == 3 * PAGE + 1
    check_facts(db, src)
    engine.dispose()


def test_a_pruned_change_log_changes_nothing(db: Db) -> None:
    """The source reads a change log's counter only: its rows may go."""
    db.fill(3 * PAGE, versioning="change_log")
    src, plain = source(db, "change_log"), source(db)
    request_facts(src)
    # Page 1's newest row moved back; its log entries pruned with the rest.
    db.write(update(posts).where(posts.c.id == PAGE).values(updated_at=date(2000, 1, 1)))
    db.write(text("DELETE FROM posts_changes"))
    db.write(update(posts).where(posts.c.id == 25).values(updated_at=date(2000, 1, 1)))
    assert request_facts(src) == index_facts(plain)
    check_facts(db, src)


def test_a_truncate_on_postgresql_renews_everything(pg: Db) -> None:
    db = pg
    db.fill(2 * PAGE, versioning="change_log")
    src = source(db, "change_log")
    index_facts(src)
    db.write(text("TRUNCATE posts"))
    assert len(src) == 0
    assert index_facts(src) == []


def test_newest_is_none_when_a_row_of_the_range_has_no_date(db: Db) -> None:
    db.fill(2 * PAGE, versioning="change_log")
    db.write(update(posts).where(posts.c.id == 3).values(updated_at=None))
    for src in (source(db, "change_log"), source(db)):
        assert src.newest(0, PAGE) is None
        assert src.newest(PAGE, 2 * PAGE) == max(day(i) for i in range(11, 21))


def test_recent_lists_the_newest_dates_first_in_one_query(db: Db) -> None:
    db.fill(40)
    db.write(update(posts).where(posts.c.id == 2).values(updated_at=None))
    src = source(db)
    db.clear()
    recent = src.recent(5)
    assert len(db.log) == 1
    assert recent is not None
    dates = [item.lastmod for item in recent if isinstance(item, Entry)]
    assert dates == sorted(dates, reverse=True) and len(dates) == 5
    assert dates[0] == "2024-01-28"
    assert source(db, lastmod=None).recent(5) is None


# ------------------------------------------------------------------------- async


def async_source(url: str, versioning: str = "none") -> tuple[Any, AsyncSQLAlchemySource]:
    engine = create_async_engine(url)
    return engine, AsyncSQLAlchemySource(
        engine,
        posts,
        key="id",
        lastmod="updated_at",
        columns=["slug", "updated_at"],
        build=build,
        version_table="posts_version" if versioning == "version_table" else None,
        change_log="posts_changes" if versioning == "change_log" else None,
    )


@pytest.mark.parametrize("versioning", VERSIONING)
def test_the_async_source_gives_what_the_sync_one_gives(adb: Db, versioning: str) -> None:
    db = adb
    db.fill(35, versioning=versioning)
    sync = source(db, versioning)

    async def main() -> None:
        engine, src = async_source(db.async_url, versioning)
        try:
            assert await src.count() == 35
            newest = [await src.newest(s, min(s + PAGE, 35)) for s in range(0, 35, PAGE)]
            assert newest == index_facts(sync)
            got = [[i async for i in src.slice(s, s + PAGE)] for s in range(0, 40, PAGE)]
            assert [locs(page) for page in got] == [
                locs(sync[s : s + PAGE]) for s in range(0, 40, PAGE)
            ]
            before = await src.fingerprint(0, PAGE)
            db.write(update(posts).where(posts.c.id == 4).values(updated_at=date(2001, 1, 1)))
            if versioning != "none":
                assert await src.fingerprint(0, PAGE) != before
            assert await src.newest(0, PAGE) == sync.newest(0, PAGE)
            recent = await src.recent(3)
            assert recent is not None and locs(recent) == locs(sync.recent(3) or [])
        finally:
            await engine.dispose()

    asyncio.run(main())


# ------------------------------------------------------------------ through the fronts


def sqlite_copy(db: Db, path: Path) -> SQLiteSource:
    """The same rows in a plain SQLite file, served by SQLiteSource: the reference."""
    with db.engine.connect() as conn:
        rows = conn.execute(select(posts.c.id, posts.c.slug, posts.c.updated_at)).all()
    with sqlite3.connect(path) as copy:
        copy.execute("CREATE TABLE posts (id INTEGER PRIMARY KEY, slug TEXT, updated_at TEXT)")
        copy.executemany(
            "INSERT INTO posts VALUES (?, ?, ?)",
            [(i, slug, None if d is None else d.isoformat()) for i, slug, d in rows],
        )
    copy.close()
    return SQLiteSource(
        lambda: sqlite3.connect(path),
        "posts",
        "id",
        lambda row: Entry(f"{ORIGIN}/posts/{row['slug']}", lastmod=row["updated_at"]),
        columns=["slug", "updated_at"],
        lastmod="updated_at",
    )


def flask_documents(src: Any) -> dict[str, bytes]:
    from flask import Flask

    from flask_sitemapper import Sitemapper

    app = Flask(__name__)
    app.config["SITEMAP_BASE_URL"] = ORIGIN
    Sitemapper(app).add_source("posts", src, page_size=PAGE)
    client = app.test_client()
    return crawl(lambda path: client.get(path).data)


def asgi_documents(src: Any) -> dict[str, bytes]:
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from asgi_sitemap import SitemapMiddleware

    app = SitemapMiddleware(Starlette(), {"posts": src}, base_url=ORIGIN, page_size=PAGE)
    with TestClient(app, base_url=ORIGIN) as client:
        return crawl(lambda path: client.get(path).content)


def crawl(fetch: Any) -> dict[str, bytes]:
    """The index and every child it lists, each validated against the XSD."""
    from lxml import etree

    index = fetch("/sitemap.xml")
    validate(index)
    documents = {"/sitemap.xml": index}
    for loc in etree.fromstring(index).iterfind(".//{*}loc"):
        path = str(loc.text).removeprefix(ORIGIN)
        documents[path] = fetch(path)
        validate(documents[path])
    return documents


@pytest.mark.parametrize("versioning", ["none", "change_log"])
def test_served_by_both_fronts_as_sqlitesource_serves_the_same_rows(
    adb: Db, tmp_path: Path, versioning: str
) -> None:
    db = adb
    db.fill(3 * PAGE + 4, versioning=versioning)
    db.write(update(posts).where(posts.c.id == 12).values(updated_at=None))
    reference = flask_documents(sqlite_copy(db, tmp_path / "copy.db"))
    assert len(reference) == 5  # the index and four pages
    assert flask_documents(source(db, versioning)) == reference
    engine, async_src = async_source(db.async_url, versioning)
    try:
        assert asgi_documents(async_src) == reference
    finally:
        asyncio.run(engine.dispose())


def after_an_edit_on_both_fronts(
    db: Db, path: str, flask_app: Any, inner_asgi: Any
) -> tuple[bytes, bytes, list[list[str]]]:
    """``path`` served by ``flask_app`` and by ``inner_asgi`` behind the ASGI middleware,
    each over a change-logged source of ``db``'s posts: asked once, then again after an
    edit of one row. The second answers, and the statements each front sent for them
    (the sync source's log, the async engine's statements but BEGIN)."""
    from starlette.testclient import TestClient

    from asgi_sitemap import SitemapMiddleware
    from flask_sitemapper import Sitemapper

    flask_app.config["SITEMAP_BASE_URL"] = ORIGIN
    Sitemapper(flask_app).add_source("posts", source(db, "change_log"), page_size=PAGE)
    flask_client = flask_app.test_client()
    engine, async_src = async_source(db.async_url, "change_log")
    sent: list[str] = []
    event.listen(engine.sync_engine, "before_cursor_execute", lambda *a: sent.append(a[2]))
    asgi = SitemapMiddleware(inner_asgi, {"posts": async_src}, base_url=ORIGIN, page_size=PAGE)
    try:
        with TestClient(asgi, base_url=ORIGIN) as asgi_client:
            assert flask_client.get(path).status_code == 200
            assert asgi_client.get(path).status_code == 200
            db.write(update(posts).where(posts.c.id == 104).values(updated_at=day(3)))
            db.clear()
            sent.clear()
            flask_body = flask_client.get(path).data
            asgi_body = asgi_client.get(path).content
    finally:
        asyncio.run(engine.dispose())
    return flask_body, asgi_body, [db.log, [sql for sql in sent if sql != "BEGIN"]]


def test_an_index_request_after_an_edit_reads_each_page_once_on_both_fronts(adb: Db) -> None:
    """The fronts ask the fingerprint first, in the request's thread (Flask) or task
    (ASGI): the new version's count and each child's newest are read once."""
    from flask import Flask
    from starlette.applications import Starlette

    adb.fill(20 * PAGE, versioning="change_log")
    flask_index, asgi_index, logs = after_an_edit_on_both_fronts(
        adb, "/sitemap.xml", Flask(__name__), Starlette()
    )
    assert flask_index == asgi_index
    assert flask_index.count(b"<sitemap>") == 20
    for log in logs:
        counted = Counter(kind(sql) for sql in log)
        assert counted.pop("version") <= 3 + 20  # the fingerprint's, the count's, each read's
        assert counted == {"count": 1, "seek": 1, "read": 20}, log


def test_a_sync_source_on_the_asgi_front_answers_its_index_for_one_version(db: Db) -> None:
    """On the ASGI front a sync source runs in worker threads, one call each (each in
    a copy of the request's context): the request's scope is shared by them, so the
    twenty children are read once each for the version the fingerprint read."""
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from asgi_sitemap import SitemapMiddleware

    db.fill(20 * PAGE, versioning="change_log")
    src = source(db, "change_log")
    asgi = SitemapMiddleware(Starlette(), {"posts": src}, base_url=ORIGIN, page_size=PAGE)
    with TestClient(asgi, base_url=ORIGIN) as client:
        before = client.get("/sitemap.xml").content
        db.write(update(posts).where(posts.c.id == 104).values(updated_at=day(3)))
        db.clear()
        after = client.get("/sitemap.xml").content
    assert after.count(b"<sitemap>") == before.count(b"<sitemap>") == 20
    counted = kinds(db)
    assert counted.pop("version") <= 3 + 20
    assert counted == {"count": 1, "seek": 1, "read": 20}, db.log
    assert after == asgi_documents(source(db))["/sitemap.xml"]  # what a fresh source says


def test_keys_of_two_types_in_one_column_are_paged_as_the_database_orders_them(
    tmp_path: Path,
) -> None:
    """SQLite's dynamic typing lets one NUMERIC column hold 1 and 'x1': the database
    orders them, and what is remembered of them is keys by rank, never compared."""
    engine = create_engine(f"sqlite:///{tmp_path / 'mixed.db'}")
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE items (k NUMERIC PRIMARY KEY NOT NULL, slug TEXT)")
        conn.exec_driver_sql(
            "INSERT INTO items VALUES (1, 'a'), (2, 'b'), (3, 'c'), ('x1', 'd'), ('x2', 'e')"
        )
    install_version_triggers(engine, "items", "items_version")
    items = Table("items", MetaData(), Column("k", primary_key=True), Column("slug"))
    src = SQLAlchemySource(
        engine,
        items,
        key="k",
        build=lambda row: f"{ORIGIN}/{row.slug}",
        version_table="items_version",
    )
    assert len(src) == 5 and [*src[0:2], *src[4:5]]  # first keys of both types known
    with engine.begin() as conn:
        conn.exec_driver_sql("UPDATE items SET slug = 'z' WHERE k = 2")
    for _ in range(2):
        src.fingerprint(0, WHOLE)
        assert len(src) == 5
        assert list(src[0:5]) == [f"{ORIGIN}/{slug}" for slug in "azcde"]
    engine.dispose()


def test_a_note_is_read_only_by_the_source_that_wrote_it(db: Db) -> None:
    """Notes are keyed by id(): a source freed in a request and another one created at
    its address must not take its version (it answered the other table's count)."""
    db.fill(5, versioning="change_log")
    first, second = source(db, "change_log"), source(db, "change_log", where=posts.c.id < 2)
    scope = enter_request()
    try:
        first.fingerprint(0, WHOLE)
        assert len(first) == 5  # its version's count is known now
        notes = request_notes()
        assert notes is not None
        # What a reused address would look like: first's note under second's id.
        notes[id(second)] = notes.pop(id(first))
        assert second._pinned() is None
        assert len(second) == 1
    finally:
        leave_request(scope)


def test_an_apps_own_robots_txt_counts_its_index_for_one_version_on_both_fronts(
    adb: Db,
) -> None:
    """An app serving robots.txt itself gets its Sitemap line added; the count of index
    files behind it runs outside a sitemap request, in a request scope of its own: after
    an edit, its count is the edited version's, for as few statements as an index."""
    from flask import Flask
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    adb.fill(20 * PAGE, versioning="change_log")
    rules = "User-agent: *\nDisallow: /admin\n"
    app = Flask(__name__)
    app.add_url_rule("/robots.txt", "robots", lambda: (rules, {"Content-Type": "text/plain"}))
    own = Starlette(routes=[Route("/robots.txt", lambda request: PlainTextResponse(rules))])
    flask_robots, asgi_robots, logs = after_an_edit_on_both_fronts(adb, "/robots.txt", app, own)
    for robots in (flask_robots.decode(), asgi_robots.decode()):
        assert robots.startswith(rules), robots
        assert robots.rstrip().endswith(f"Sitemap: {ORIGIN}/sitemap.xml"), robots
    for log in logs:
        # The version (the fingerprint's, twice on PostgreSQL, and the count's) and one
        # count: no more.
        counted = Counter(kind(sql) for sql in log)
        assert counted.pop("version") <= 3 and counted == {"count": 1}, log
