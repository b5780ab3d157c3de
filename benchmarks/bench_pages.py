"""Benchmark: stable pages over PostgreSQL page facts, at ten and a hundred million rows
(issue 21).

Starts a throwaway PostgreSQL (``tests/postgres.py``), and for each ``--rows`` count
creates ``posts (id BIGINT PRIMARY KEY, slug TEXT, updated_at TIMESTAMPTZ)`` by one
``INSERT ... SELECT generate_series``, installs the page facts as docs/sqlalchemy.md
says (:func:`~sitemap_core.sources.sql.sqla_pages.install_page_facts`, after the load:
one grouped pass) and runs ``VACUUM ANALYZE``. It serves the rows through
:func:`sitemap_core.respond` with a :class:`Site` of one ``SQLAlchemySource(...,
page_facts=...)``, 50,000 keys a page, page cache off, identity coding, bodies drained;
medians of ``--repeat`` runs, contenders in turn:

* the index (``/sitemap.xml``) of a **fresh process** (a new engine and site: nothing
  remembered) against the first page's time, with its statement count; the same right
  after writes (an UPDATE, an INSERT and a DELETE, committed on another connection);
  target: at most 5% of a page, statements not growing with the table;
* the middle and the last page against the first; target: within 1.1x;
* a 304 of a page: its statements, none reading the table's rows;
* memory: the peak (tracemalloc) of a fresh process's index, and what the process
  keeps after it; target: the same at ten and a hundred million rows;
* what the triggers add to writes: single-row INSERT, UPDATE and DELETE (each its own
  transaction) with the triggers and with them disabled, in alternating rounds, and a
  1,000,000-row bulk INSERT and DELETE; target: single rows within 2x of the bare write.

Run from the repository root (about 1 minute at ten million rows; a hundred million
rows take about 6 minutes and 20 GB of disk on two cores)::

    .venv/bin/python benchmarks/bench_pages.py [--rows 10000000 100000000] [--repeat 5]

``--url postgresql+psycopg://user@host:port/db`` runs on a server of your own instead
(started with the settings of :func:`main`), in one database per row count
(``bench_pages_10000000``...), created when missing; with ``--reuse`` the table an
earlier run left there is measured again instead of being built (its page facts say
how many rows it holds), so that a hundred million rows are loaded once. A run's
writes leave as many rows as they found. ``--cpu N`` (with ``--url``, on tables built
before) measures only what a fresh index costs in CPU, which a loaded machine moves
less than the wall time: ``N`` fresh indexes, each on a new engine and site, the
client's ``time.process_time`` and the server's backends' ``/proc/PID/schedstat`` (a
local server's processes for the database), medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import psycopg  # noqa: E402
from bench_postgres import (  # noqa: E402
    BASE,
    SETTINGS,
    Statements,
    fetch,
    get,
    load,
    machine,
    ms,
    posts_table,
    reads_rows,
    retained_memory,
)
from measure import peak_memory, timed  # noqa: E402
from postgres import Unavailable, start_postgres  # noqa: E402
from sqlalchemy import Engine, create_engine, make_url  # noqa: E402

from sitemap_core import Site, UrlSource  # noqa: E402
from sitemap_core.limits import MAX_URLS_PER_SITEMAP  # noqa: E402
from sitemap_core.sources.sql.sqla import SQLAlchemySource, install_page_facts  # noqa: E402

WIDTH = MAX_URLS_PER_SITEMAP
#: Single-row writes timed per kind, with and without the triggers.
SINGLE_WRITES = 300
#: Alternating rounds those writes are measured in, with and without the triggers.
SINGLE_ROUNDS = 3
BULK_ROWS = 1_000_000


def build(engine: Engine, rows: int) -> dict[str, float]:
    """Create ``posts`` with ``rows`` rows and its page facts; seconds of each step."""
    took: dict[str, float] = {}
    started = time.perf_counter()
    with engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE IF EXISTS posts CASCADE")
        conn.exec_driver_sql("DROP TABLE IF EXISTS posts_pages, posts_pages_layout")
        conn.exec_driver_sql(
            "CREATE TABLE posts (id BIGINT NOT NULL, slug TEXT NOT NULL,"
            " updated_at TIMESTAMPTZ NOT NULL)"
        )
        conn.exec_driver_sql(
            "INSERT INTO posts SELECT i, 'post-number-' || i || '-about-sitemaps',"
            " TIMESTAMPTZ '2020-01-01 00:00:00+00' + i * INTERVAL '3 seconds'"
            f" FROM generate_series(1, {rows:d}) AS i"
        )
        conn.exec_driver_sql("ALTER TABLE posts ADD PRIMARY KEY (id)")
    took["load_s"] = time.perf_counter() - started
    started = time.perf_counter()
    install_page_facts(engine, "posts", "id", "posts_pages", lastmod="updated_at", page_width=WIDTH)
    took["install_s"] = time.perf_counter() - started
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("VACUUM ANALYZE posts")
        conn.exec_driver_sql("VACUUM ANALYZE posts_pages")
    return took


def make_site(url: str) -> tuple[Engine, Site[UrlSource]]:
    """A fresh engine and site: what a new worker process starts with, its pool's
    first connection made (connecting is the server's cost, not the index's)."""
    engine = create_engine(url, pool_size=4)
    engine.connect().close()
    source = SQLAlchemySource(
        engine,
        posts_table("posts"),
        key="id",
        lastmod="updated_at",
        columns=["slug", "updated_at"],
        build=f"{BASE}/posts/{{slug}}",
        page_facts="posts_pages",
    )
    return engine, Site([UrlSource.from_object("posts", source)], page_size=WIDTH, cache=None)


def cold_index(url: str) -> tuple[float, int, int, int]:
    """A fresh process's index: seconds, statements, peak bytes, bytes kept after."""
    engine, site = make_site(url)
    statements = Statements(engine)
    with statements.recording() as sent:
        seconds = timed(get(site, "/sitemap.xml"))
    engine.dispose()
    engine, site = make_site(url)
    peak = peak_memory(get(site, "/sitemap.xml"))
    engine.dispose()
    engine, site = make_site(url)
    kept = retained_memory(get(site, "/sitemap.xml"))
    engine.dispose()
    return seconds, len(sent), peak, kept


class Writer:
    """Writes on a psycopg connection of its own, each committed at once."""

    def __init__(self, dsn: str, rows: int, next_key: int) -> None:
        self.conn = psycopg.connect(dsn, autocommit=True)
        self.rows = rows
        #: The first key after the table's (an earlier run's writes may have taken some).
        self.next_key = next_key

    def mixed(self) -> None:
        """An UPDATE in the middle, an INSERT at the end, a DELETE near the start."""
        middle = self.rows // 2 + 7
        self.conn.execute("UPDATE posts SET updated_at = now() WHERE id = %s", (middle,))
        self.conn.execute(
            "INSERT INTO posts VALUES (%s, 'fresh-' || %s, now())", (self.next_key, self.next_key)
        )
        # One row near the start goes: the first key from 100 on still there.
        self.conn.execute("DELETE FROM posts WHERE id = %s", (self._early(),))
        self.next_key += 1

    def _early(self) -> int:
        # The first key at or after 100 still in the table (earlier runs took some).
        row = self.conn.execute("SELECT MIN(id) FROM posts WHERE id >= 100").fetchone()
        return int(row[0]) if row and row[0] is not None else 100

    def singles(self) -> dict[str, dict[str, float]]:
        """Median seconds of one INSERT, UPDATE and DELETE with the triggers and without
        them (``"with"`` and ``"bare"``), the two measured in alternating rounds of
        :data:`SINGLE_ROUNDS`, so that the machine's drift weighs on both alike."""
        times: dict[str, dict[str, list[float]]] = {
            side: {"insert": [], "update": [], "delete": []} for side in ("with", "bare")
        }
        for _ in range(SINGLE_ROUNDS):
            for side in ("with", "bare"):
                self._single_round(side == "with", times[side])
        return {
            side: {kind: statistics.median(values) for kind, values in kinds.items()}
            for side, kinds in times.items()
        }

    def _single_round(self, triggers: bool, times: dict[str, list[float]]) -> None:
        # SINGLE_WRITES / SINGLE_ROUNDS rows inserted and updated, then deleted, one
        # statement (and transaction) each.
        self.conn.execute(f"ALTER TABLE posts {'ENABLE' if triggers else 'DISABLE'} TRIGGER USER")
        first = self.next_key
        keys = range(first, first + SINGLE_WRITES // SINGLE_ROUNDS)
        for key in keys:
            times["insert"].append(
                _clock(
                    lambda k=key: self.conn.execute(
                        "INSERT INTO posts VALUES (%s, 's', now())", (k,)
                    )
                )
            )
            times["update"].append(
                _clock(
                    lambda k=key: self.conn.execute(
                        "UPDATE posts SET slug = 'u' WHERE id = %s", (k,)
                    )
                )
            )
        for key in keys:
            times["delete"].append(
                _clock(lambda k=key: self.conn.execute("DELETE FROM posts WHERE id = %s", (k,)))
            )
        self.conn.execute("ALTER TABLE posts ENABLE TRIGGER USER")

    def bulk(self, triggers: bool) -> dict[str, float]:
        """Seconds of a 1,000,000-row INSERT ... SELECT and of its DELETE."""
        self.conn.execute(f"ALTER TABLE posts {'ENABLE' if triggers else 'DISABLE'} TRIGGER USER")
        low, high = self.rows * 2, self.rows * 2 + BULK_ROWS
        insert = _clock(
            lambda: self.conn.execute(
                "INSERT INTO posts SELECT i, 'bulk-' || i, now() FROM generate_series(%s, %s) AS i",
                (low, high - 1),
            )
        )
        remove = _clock(
            lambda: self.conn.execute("DELETE FROM posts WHERE id >= %s AND id < %s", (low, high))
        )
        self.conn.execute("ALTER TABLE posts ENABLE TRIGGER USER")
        # The million dead rows vacuumed now, untimed: else autovacuum and autoanalyze
        # of the table run into the next run's timed writes (a DELETE at 2.5x once).
        self.conn.execute("VACUUM (ANALYZE) posts")
        return {"insert": insert, "delete": remove}


def _clock(func: Callable[[], object]) -> float:
    started = time.perf_counter()
    func()
    return time.perf_counter() - started


def backends_cpu(database: str) -> float:
    """Seconds of CPU the local server's processes of ``database`` ran so far (Linux)."""
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if f" {database} ".encode() not in cmdline.read().replace(b"\0", b" ") + b" ":
                    continue
            with open(f"/proc/{pid}/schedstat") as schedstat:
                total += int(schedstat.read().split()[0])
        except OSError:  # a process that ended meanwhile
            continue
    return total / 1e9


def index_cpu(url: str, count: int) -> dict[str, float]:
    """Medians over ``count`` fresh indexes (a new engine and site each) of the wall
    time, the client's CPU and the server's, in seconds."""
    database = str(make_url(url).database)
    runs: dict[str, list[float]] = {"wall": [], "client": [], "server": []}
    for _ in range(count):
        engine, site = make_site(url)
        request = get(site, "/sitemap.xml")
        server, client, wall = backends_cpu(database), time.process_time(), time.perf_counter()
        request()
        runs["wall"].append(time.perf_counter() - wall)
        runs["client"].append(time.process_time() - client)
        runs["server"].append(backends_cpu(database) - server)
        engine.dispose()
    return {name: statistics.median(values) for name, values in runs.items()}


def built_rows(engine: Engine) -> int | None:
    """How many rows the page facts of an earlier run's ``posts`` count, or None."""
    with engine.connect() as conn:
        if conn.exec_driver_sql("SELECT to_regclass('posts_pages')").scalar() is None:
            return None
        return int(conn.exec_driver_sql("SELECT COALESCE(SUM(urls), 0) FROM posts_pages").scalar())


def measure(url: str, rows: int, repeat: int, reuse: bool = False) -> dict[str, Any]:
    """Build the table of ``rows`` rows (unless ``reuse`` finds it built), then every
    figure, medians of ``repeat``."""
    engine = create_engine(url, pool_size=4)
    if reuse and built_rows(engine) == rows:
        built = {"load_s": 0.0, "install_s": 0.0, "reused": 1.0}
    else:
        built = build(engine, rows)
    with engine.connect() as conn:
        last_key = int(conn.exec_driver_sql("SELECT MAX(id) FROM posts").scalar() or 0)
    results: dict[str, Any] = {"rows": rows, "built": built}
    engine.dispose()
    dsn = url.replace("postgresql+psycopg://", "postgresql://")
    writer = Writer(dsn, rows, last_key + 1)
    pages = -(-rows // WIDTH)
    middle, last = pages // 2 + 1, pages
    warm_engine, warm = make_site(url)
    statements = Statements(warm_engine)
    runs: dict[str, list[float]] = {}
    counts: dict[str, int] = {}
    peaks: list[int] = []
    kept: list[int] = []
    for _ in range(repeat):
        seconds, sent, peak, held = cold_index(url)
        runs.setdefault("cold_index", []).append(seconds)
        counts["cold_index"] = sent
        peaks.append(peak)
        kept.append(held)
        for name, number in (("first", 1), ("middle", middle), ("last", last)):
            runs.setdefault(name, []).append(timed(get(warm, f"/sitemap-posts-{number}.xml")))
        writer.mixed()
        seconds, sent, _, _ = cold_index(url)
        runs.setdefault("cold_index_after_writes", []).append(seconds)
        counts["cold_index_after_writes"] = sent
        writer.mixed()
        with statements.recording() as sent_warm:
            runs.setdefault("warm_index_after_writes", []).append(timed(get(warm, "/sitemap.xml")))
        counts["warm_index_after_writes"] = len(sent_warm)
    etag = fetch(warm, f"/sitemap-posts-{middle}.xml")[1]["etag"]
    with statements.recording() as revalidated:
        status, _, _ = fetch(warm, f"/sitemap-posts-{middle}.xml", {"if-none-match": etag})
    assert status == 304
    results["medians_s"] = {name: statistics.median(values) for name, values in runs.items()}
    results["statements"] = counts
    results["not_modified"] = {
        "statements": len(revalidated),
        "reads_table_rows": any(reads_rows(sql, "posts") for sql in revalidated),
    }
    results["index_peak_bytes"] = statistics.median(peaks)
    results["index_kept_bytes"] = statistics.median(kept)
    singles = writer.singles()
    results["writes_s"] = {
        "single_with_triggers": singles["with"],
        "single_bare": singles["bare"],
        "bulk_with_triggers": writer.bulk(True),
        "bulk_bare": writer.bulk(False),
    }
    with writer.conn.cursor() as cursor:
        cursor.execute(
            "SELECT pg_total_relation_size('posts_pages'), count(*) FILTER (WHERE urls > 0)"
            " FROM posts_pages"
        )
        size, facts = cursor.fetchone() or (0, 0)
    results["facts"] = {"rows": facts, "bytes": size}
    writer.conn.close()
    warm_engine.dispose()
    return results


def report(results: list[dict[str, Any]], url: str, repeat: int) -> str:
    """The figures as markdown, for benchmarks/README.md."""
    lines = [
        f"Machine: {machine(url)}; load {load()}; medians of {repeat}.",
        "",
        "| Rows | Pages | Fresh index | Statements | x first page | After writes (fresh / warm) |"
        " Middle / last page x first | 304 statements (table rows read) | Index peak / kept |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        m = r["medians_s"]
        lines.append(
            f"| {r['rows']:,} | {r['facts']['rows']:,} | {ms(m['cold_index'])} |"
            f" {r['statements']['cold_index']} | {m['cold_index'] / m['first']:.1%} |"
            f" {ms(m['cold_index_after_writes'])} / {ms(m['warm_index_after_writes'])} |"
            f" {m['middle'] / m['first']:.2f}x / {m['last'] / m['first']:.2f}x |"
            f" {r['not_modified']['statements']} ({r['not_modified']['reads_table_rows']}) |"
            f" {r['index_peak_bytes'] / 2**20:.2f} / {r['index_kept_bytes'] / 2**20:.2f} MiB |"
        )
    lines += [
        "",
        "| Rows | Single INSERT / UPDATE / DELETE with triggers (bare) |"
        " 1,000,000-row INSERT / DELETE with triggers (bare) | Install (grouped pass) |",
        "|---:|---:|---:|---:|",
    ]
    for r in results:
        w = r["writes_s"]
        single = " / ".join(
            f"{w['single_with_triggers'][k] * 1e3:.2f} ({w['single_bare'][k] * 1e3:.2f}) ms"
            for k in ("insert", "update", "delete")
        )
        bulk = " / ".join(
            f"{w['bulk_with_triggers'][k]:.1f} ({w['bulk_bare'][k]:.1f}) s"
            for k in ("insert", "delete")
        )
        install = "reused" if r["built"].get("reused") else f"{r['built']['install_s']:.1f} s"
        lines.append(f"| {r['rows']:,} | {single} | {bulk} | {install} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--url", help="a PostgreSQL server of your own (see above)")
    parser.add_argument(
        "--reuse", action="store_true", help="with --url: measure a table built before"
    )
    parser.add_argument("--cpu", type=int, help="with --url: only N fresh indexes' CPU")
    args = parser.parse_args(argv)
    if args.url is not None and args.cpu:
        for rows in args.rows:
            cpu = index_cpu(database(args.url, rows), args.cpu)
            print(
                f"{rows:,} rows, fresh index (median of {args.cpu}): wall {ms(cpu['wall'])},"
                f" CPU {ms(cpu['client'] + cpu['server'])} (client {ms(cpu['client'])},"
                f" server {ms(cpu['server'])}); load {load()}"
            )
        return 0
    if args.url is not None:
        results = [
            measure(database(args.url, rows), rows, args.repeat, args.reuse) for rows in args.rows
        ]
        print(report(results, args.url, args.repeat))
        return _written(results, args.json)
    # Durable, as production runs (tests/postgres.py turns fsync off for the tests): a
    # bare write then costs what it costs a user, and the triggers' share is honest.
    settings = {
        **SETTINGS,
        "max_wal_size": "8GB",
        "fsync": "on",
        "synchronous_commit": "on",
        "full_page_writes": "on",
    }
    try:
        with start_postgres(settings) as url:
            results = [measure(url, rows, args.repeat) for rows in args.rows]
            print(report(results, url, args.repeat))
    except Unavailable as exc:
        print(f"PostgreSQL is not available: {exc}", file=sys.stderr)
        return 2
    return _written(results, args.json)


def database(url: str, rows: int) -> str:
    """The URL of the database for ``rows`` rows on the server of ``url``, created
    when missing."""
    name = f"bench_pages_{rows:d}"
    server = make_url(url)
    dsn = server.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as admin:
        found = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
        if found.fetchone() is None:
            admin.execute(f'CREATE DATABASE "{name}"')
    return server.set(database=name).render_as_string(hide_password=False)


def _written(results: list[dict[str, Any]], path: Path | None) -> int:
    # The figures also as JSON, when asked.
    if path is not None:
        path.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
