"""Benchmark: what stored boundaries' triggers add to writes with a text key (issue 21).

For PostgreSQL (a throwaway durable server, ``tests/postgres.py``, as
``bench_pages.py`` starts it) and for SQLite (a file in a temporary folder, default
settings), it creates ``articles (slug TEXT PRIMARY KEY, updated_at)`` with ``--rows``
rows of random-looking slugs (``--month-buckets``: after a date in one of twelve
months), installs the page facts with ``stored_bounds=True`` (``month_buckets=True``) and
50,000 URLs a page (:func:`~sitemap_core.sources.sql.sqla_pages.install_page_facts`),
and times, as medians of ``--writes`` writes each committed alone:

* a single-row INSERT (a new random slug), UPDATE (of a random row's date) and DELETE
  (of a row inserted before), with the triggers, and on ``bare``, a copy of the table
  without them, in turn (so that both see the same load on a shared machine);
* the one write that splits a full page: a page filled to 50,000 rows first, then one
  INSERT into it (with the triggers only: bare, nothing splits).

``--date-column``: date buckets on a date column instead (an integer-keyed blog table,
``articles (id INTEGER PRIMARY KEY, updated_at)`` with an index on ``(updated_at,
id)``, dates spread over twelve months, ``month_buckets="updated_at"``): an INSERT of a
new id dated now (this month), an UPDATE that dates a random row now (most often a
move to another month: two pages), a DELETE of a row inserted before; and the one
INSERT that splits a page filled to the width (rows dated at its lower bound).

Run from the repository root (about a minute at the default million rows)::

    .venv/bin/python benchmarks/bench_bound_writes.py [--rows N] [--writes N]
        [--month-buckets | --date-column]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import psycopg  # noqa: E402
from bench_postgres import SETTINGS  # noqa: E402
from postgres import Unavailable, start_postgres  # noqa: E402
from sqlalchemy import create_engine  # noqa: E402

from sitemap_core.limits import MAX_URLS_PER_SITEMAP  # noqa: E402
from sitemap_core.sources.sql import sqla_pages, sqlite_pages  # noqa: E402

WIDTH = MAX_URLS_PER_SITEMAP
DURABLE = {
    **SETTINGS,
    "fsync": "on",
    "synchronous_commit": "on",
    "full_page_writes": "on",
}


def slug(i: int, months: bool = False) -> str:
    """A random-looking slug: inserts land on every page, as a UUID key's do; with
    ``months``, after a date in one of twelve months (the keys of date buckets)."""
    digest = hashlib.md5(str(i).encode()).hexdigest()
    return f"2026-{1 + i % 12:02d}-{digest}" if months else f"a{digest}"


def slug_sql(months: bool) -> str:
    """:func:`slug` of ``i`` in PostgreSQL."""
    if months:
        return "'2026-' || lpad((1 + i %% 12)::text, 2, '0') || '-' || md5(i::text)"
    return "'a' || md5(i::text)"


def _clock(func: Callable[[], object]) -> float:
    started = time.perf_counter()
    func()
    return time.perf_counter() - started


class Writes:
    """Single-row writes on one connection, each committed alone (``execute`` and
    ``commit`` as the driver has them)."""

    def __init__(
        self,
        execute: Callable[[str, tuple[object, ...]], object],
        rows: int,
        months: bool,
        dated: bool = False,
    ) -> None:
        self.execute = execute
        self.rows = rows
        self.months = months
        self.fresh = rows * 10
        #: The key column, and the key of row ``i`` (an id with a date column).
        self.k = "id" if dated else "slug"
        self.key: Callable[[int], object] = (lambda i: i) if dated else self.slug

    def slug(self, i: int) -> str:
        """The slug of row ``i``."""
        return slug(i, self.months)

    def singles(self, count: int, mark: str) -> dict[str, dict[str, float]]:
        """Median seconds of ``count`` INSERTs, UPDATEs and DELETEs, each on
        ``articles`` (the triggers) and then on ``bare`` (its copy without them), in
        turn, so that the two see the same load."""
        times: dict[str, dict[str, list[float]]] = {
            table: {"insert": [], "update": [], "delete": []} for table in ("articles", "bare")
        }
        first = self.fresh
        self.fresh += count
        pick = random.Random(count)
        for i in range(first, first + count):
            new, old = self.key(i), self.key(pick.randrange(self.rows))
            for table, kinds in times.items():
                kinds["insert"].append(
                    self.timed(f"INSERT INTO {table} VALUES ({mark}, now_())", new)
                )
                kinds["update"].append(
                    self.timed(
                        f"UPDATE {table} SET updated_at = now_() WHERE {self.k} = {mark}", old
                    )
                )
        for i in range(first, first + count):
            for table, kinds in times.items():
                kinds["delete"].append(
                    self.timed(f"DELETE FROM {table} WHERE {self.k} = {mark}", self.key(i))
                )
        return {
            table: {kind: statistics.median(values) for kind, values in kinds.items()}
            for table, kinds in times.items()
        }

    def timed(self, sql: str, key: object) -> float:
        """Seconds of one statement of one key."""
        return _clock(lambda: self.execute(sql, (key,)))


def postgres(rows: int, writes: int, months: bool) -> dict[str, object]:
    with start_postgres(DURABLE) as url:
        dsn = url.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE articles (slug TEXT PRIMARY KEY, updated_at TIMESTAMPTZ)")
            conn.execute(
                f"INSERT INTO articles SELECT {slug_sql(months)}, now()"
                " FROM generate_series(0, %s) i",
                (rows - 1,),
            )
            engine = create_engine(url)
            install = _clock(
                lambda: sqla_pages.install_page_facts(
                    engine,
                    "articles",
                    "slug",
                    "articles_pages",
                    lastmod="updated_at",
                    stored_bounds=True,
                    month_buckets=months,
                )
            )
            engine.dispose()
            conn.execute("CREATE TABLE bare (LIKE articles INCLUDING ALL)")
            conn.execute("INSERT INTO bare SELECT * FROM articles")
            conn.execute("VACUUM ANALYZE")
            run = Writes(
                lambda sql, params: conn.execute(sql.replace("now_()", "now()"), params),
                rows,
                months,
            )
            run.singles(50, "%s")  # warm-up
            timed = run.singles(writes, "%s")
            split = pg_split(conn)
            version = conn.execute("SHOW server_version").fetchone()
    return {
        "install": install,
        "with": timed["articles"],
        "bare": timed["bare"],
        "split": split,
        "server": f"PostgreSQL {version[0] if version else '?'}",
    }


def timed_split(
    conn: Any, mark: str, found: str, fill: Callable[[Any, int], object], insert: str
) -> float:
    """Seconds of the INSERT ``insert`` (its one parameter: the page's lower bound) that
    splits the page that ``found`` names (page, URLs, lower bound) once ``fill(bound,
    rows)`` has filled it to the width; ``mark`` is the driver's parameter mark."""
    page, urls, low = conn.execute(found).fetchone()
    fill(low, WIDTH - urls)
    got = conn.execute(f"SELECT urls FROM articles_pages WHERE page = {mark}", (page,)).fetchone()
    assert got[0] == WIDTH
    return _clock(lambda: conn.execute(insert, (low,)))


#: A page of stored boundaries with both bounds, and its lowest key.
BOUNDED_PAGE = (
    "SELECT f.page, f.urls, b.low FROM articles_pages f JOIN articles_pages_bounds b"
    " USING (page) WHERE b.low IS NOT NULL AND b.high IS NOT NULL ORDER BY f.page LIMIT 1"
)


def pg_split(conn: psycopg.Connection) -> float:
    """Seconds of the INSERT that splits a page filled to the width."""

    def fill(low: str, rows: int) -> None:
        conn.execute(
            "INSERT INTO articles SELECT %s || '-' || lpad(i::text, 6, '0'), now()"
            " FROM generate_series(1, %s) i",
            (low, rows),
        )

    # Just above the page's lowest key: in the page, whatever its neighbours.
    return timed_split(
        conn, "%s", BOUNDED_PAGE, fill, "INSERT INTO articles VALUES (%s || '-0', now())"
    )


def sqlite(rows: int, writes: int, months: bool) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as folder:
        conn = sqlite3.connect(Path(folder) / "bench.db", isolation_level=None)
        conn.create_function("now_", 0, lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ"))
        conn.execute("CREATE TABLE articles (slug TEXT PRIMARY KEY, updated_at TEXT)")
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO articles VALUES (?, '2026-01-01T00:00:00Z')",
            ((slug(i, months),) for i in range(rows)),
        )
        conn.execute("CREATE TABLE bare (slug TEXT PRIMARY KEY, updated_at TEXT)")
        conn.execute("INSERT INTO bare SELECT * FROM articles")
        conn.execute("COMMIT")

        def install() -> None:
            sqlite_pages.install_page_facts(
                conn,
                "articles",
                "slug",
                "articles_pages",
                lastmod="updated_at",
                stored_bounds=True,
                month_buckets=months,
            )

        seconds = _clock(install)
        run = Writes(conn.execute, rows, months)
        run.singles(50, "?")
        timed = run.singles(writes, "?")
        split = sqlite_split(conn)
        conn.close()
    return {
        "install": seconds,
        "with": timed["articles"],
        "bare": timed["bare"],
        "split": split,
        "server": f"SQLite {sqlite3.sqlite_version}",
    }


def sqlite_split(conn: sqlite3.Connection) -> float:
    """Seconds of the INSERT that splits a page filled to the width."""

    def fill(low: str, rows: int) -> None:
        sqlite_load(
            conn,
            "INSERT INTO articles VALUES (?, '2026-01-02T00:00:00Z')",
            ((f"{low}-{i:06d}",) for i in range(rows)),
        )

    return timed_split(
        conn, "?", BOUNDED_PAGE, fill, "INSERT INTO articles VALUES (? || '-0', now_())"
    )


def sqlite_load(conn: sqlite3.Connection, sql: str, rows: Iterable[tuple[Any, ...]]) -> None:
    """``rows`` written by ``sql`` in one transaction."""
    conn.execute("BEGIN")
    conn.executemany(sql, rows)
    conn.execute("COMMIT")


#: A page of date buckets with an upper bound, and its earliest date: rows of that date
#: with ids above every id fall in it.
DATED_PAGE = (
    "SELECT f.page, f.urls, (SELECT MIN(a.updated_at) FROM articles a WHERE a.updated_at"
    " >= b.low_at AND a.updated_at < b.high_at) FROM articles_pages f"
    " JOIN articles_pages_bounds b USING (page) WHERE b.high_at IS NOT NULL"
    " ORDER BY f.page LIMIT 1"
)


def pg_dated_split(conn: psycopg.Connection) -> float:
    """Seconds of the INSERT that splits a page of date buckets filled to the width."""

    def fill(low_at: object, rows: int) -> None:
        conn.execute(
            "INSERT INTO articles SELECT 100000000 + i, %s FROM generate_series(1, %s) i",
            (low_at, rows),
        )

    return timed_split(conn, "%s", DATED_PAGE, fill, "INSERT INTO articles VALUES (1000000000, %s)")


def sqlite_dated_split(conn: sqlite3.Connection) -> float:
    """Seconds of the INSERT that splits a page of date buckets filled to the width."""

    def fill(low_at: object, rows: int) -> None:
        sqlite_load(
            conn,
            "INSERT INTO articles VALUES (?, ?)",
            ((100_000_000 + i, low_at) for i in range(rows)),
        )

    return timed_split(conn, "?", DATED_PAGE, fill, "INSERT INTO articles VALUES (1000000000, ?)")


def postgres_dated(rows: int, writes: int) -> dict[str, object]:
    """As :func:`postgres`, for date buckets on a date column (see the module)."""
    with start_postgres(DURABLE) as url:
        dsn = url.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE articles (id BIGINT PRIMARY KEY, updated_at TIMESTAMPTZ)")
            conn.execute(
                "INSERT INTO articles SELECT i, make_timestamptz(2026, 1 + i %% 12,"
                " 1 + i %% 28, i %% 24, 0, 0, 'UTC') FROM generate_series(0, %s) i",
                (rows - 1,),
            )
            conn.execute("CREATE INDEX articles_dated ON articles (updated_at, id)")
            engine = create_engine(url)
            install = _clock(
                lambda: sqla_pages.install_page_facts(
                    engine,
                    "articles",
                    "id",
                    "articles_pages",
                    lastmod="updated_at",
                    month_buckets="updated_at",
                )
            )
            engine.dispose()
            conn.execute("CREATE TABLE bare (LIKE articles INCLUDING ALL)")
            conn.execute("INSERT INTO bare SELECT * FROM articles")
            conn.execute("VACUUM ANALYZE")
            run = Writes(
                lambda sql, params: conn.execute(sql.replace("now_()", "now()"), params),
                rows,
                False,
                dated=True,
            )
            run.singles(50, "%s")  # warm-up
            timed = run.singles(writes, "%s")
            split = pg_dated_split(conn)
            version = conn.execute("SHOW server_version").fetchone()
    server = f"PostgreSQL {version[0] if version else '?'}, date column"
    return {
        "install": install,
        "with": timed["articles"],
        "bare": timed["bare"],
        "split": split,
        "server": server,
    }


def sqlite_dated(rows: int, writes: int) -> dict[str, object]:
    """As :func:`sqlite`, for date buckets on a date column (see the module)."""
    with tempfile.TemporaryDirectory() as folder:
        conn = sqlite3.connect(Path(folder) / "bench.db", isolation_level=None)
        conn.create_function("now_", 0, lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ"))
        for table in ("articles", "bare"):
            conn.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, updated_at TEXT)")
            conn.execute(f"CREATE INDEX {table}_dated ON {table} (updated_at, id)")
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO articles VALUES (?, ?)",
            (
                (i, f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00Z")
                for i in range(rows)
            ),
        )
        conn.execute("INSERT INTO bare SELECT * FROM articles")
        conn.execute("COMMIT")

        def install() -> None:
            sqlite_pages.install_page_facts(
                conn,
                "articles",
                "id",
                "articles_pages",
                lastmod="updated_at",
                month_buckets="updated_at",
            )

        seconds = _clock(install)
        run = Writes(conn.execute, rows, False, dated=True)
        run.singles(50, "?")
        timed = run.singles(writes, "?")
        split = sqlite_dated_split(conn)
        conn.close()
    return {
        "install": seconds,
        "with": timed["articles"],
        "bare": timed["bare"],
        "split": split,
        "server": f"SQLite {sqlite3.sqlite_version}, date column",
    }


def machine() -> str:
    """What the figures were measured on: the commit, CPUs, Python and the load."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"At {commit}, {platform.machine()}, {os.cpu_count()} cores, CPython"
        f" {platform.python_version()}, load {load} (at the end of the run)"
    )


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}"


def report(results: dict[str, dict[str, object]], rows: int, writes: int) -> str:
    lines = [
        f"{machine()}; {rows:,} rows, medians of {writes} single-row writes",
        "| Database | Single INSERT / UPDATE / DELETE, with the triggers (bare), ms"
        " | The INSERT that splits a full page | Install |",
        "|---|---:|---:|---:|",
    ]
    for got in results.values():
        with_, bare = got["with"], got["bare"]
        assert isinstance(with_, dict) and isinstance(bare, dict)
        cells = " / ".join(
            f"{ms(with_[k])} ({ms(bare[k])})" for k in ("insert", "update", "delete")
        )
        ratios = ", ".join(f"{with_[k] / bare[k]:.2f}x" for k in ("insert", "update", "delete"))
        split, install = got["split"], got["install"]
        assert isinstance(install, float)
        cut = "not timed" if not isinstance(split, float) else f"{ms(split)} ms"
        lines.append(f"| {got['server']} | {cells} ({ratios}) | {cut} | {install:.1f} s |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument(
        "--month-buckets", action="store_true", help="keys after a date, in date buckets"
    )
    parser.add_argument(
        "--date-column",
        action="store_true",
        help="an integer-keyed table in date buckets on its date column",
    )
    args = parser.parse_args(argv)
    if args.date_column:
        results = {"sqlite": sqlite_dated(args.rows, args.writes)}
    else:
        results = {"sqlite": sqlite(args.rows, args.writes, args.month_buckets)}
    try:
        results["postgresql"] = (
            postgres_dated(args.rows, args.writes)
            if args.date_column
            else postgres(args.rows, args.writes, args.month_buckets)
        )
    except Unavailable as exc:
        print(f"PostgreSQL is not available: {exc}", file=sys.stderr)
    print(report(results, args.rows, args.writes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
