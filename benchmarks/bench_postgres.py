"""Benchmark: ten million PostgreSQL rows served through SQLAlchemySource (issue 15).

Starts a throwaway PostgreSQL (``tests/postgres.py``: ``initdb`` / ``pg_ctl`` in a
temporary folder, removed afterwards), creates ``posts (id BIGINT PRIMARY KEY, slug
TEXT, updated_at TIMESTAMPTZ)`` with ``--rows`` rows by ``INSERT ... SELECT
generate_series`` (the primary key added after the load), installs the version
triggers as ``docs/sqlalchemy.md`` says
(:func:`~sitemap_core.sources.sql.sqla.install_version_triggers`, after the bulk load)
and runs ``VACUUM ANALYZE``. This is the rank-paged source; its big-table successor,
page facts, is measured by ``bench_pages.py``. The rows are then served through
:func:`sitemap_core.respond` (what a request costs in-process, any front) by a
:class:`Site` of one :class:`~sitemap_core.sources.sql.sqla.SQLAlchemySource` (psycopg 3, a loc
template), 50,000 URLs a page (so 200 children at ten million rows), page cache off,
identity coding, every body drained. Measured in one process, each repeat running
every contender once in turn after a warm-up, reported as medians:

* the **index** (``/sitemap.xml``) against the first page's full time, while the
  table is unchanged and right after a write (one ``UPDATE`` of a row's
  ``updated_at`` in the middle page, one ``INSERT`` of a new post: untimed, committed
  on another connection just before the timed request); target: under 5% of a page
  while unchanged (right after a write, each page is read once: reported, the
  issue 21 target for that is page facts' in ``bench_pages.py``);
* the **last page** against the first; target: within 1.2x;
* a **304** (``If-None-Match``) for the first, middle and last page: every statement
  is counted with SQLAlchemy's ``before_cursor_execute`` event; target: only the
  version read, no statement that reads the table's rows;
* **memory**: peak bytes traced by ``tracemalloc`` during one full request of the
  first, middle and last page, and of the first page of a table a tenth the size;
  target: flat (no growth with the page number or the table's size); and the bytes
  the source keeps remembered for the whole table;
* a plain **reference**: the first page's 50,000 rows from a psycopg cursor, the same
  bytes written with f-strings and ``"".join`` (checked equal to the library's page).

Not targets, reported so nothing hides: the first index of a fresh process (nothing
remembered: it reads every row once), the index after a write that moves a date
backwards, and after a ``DELETE`` in the first page (every later page shifts).

Run from the repository root (about 2 minutes at ten million rows, 3 GB of disk)::

    .venv/bin/python benchmarks/bench_postgres.py [--rows 10000000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import psycopg  # noqa: E402
from measure import peak_memory, timed  # noqa: E402
from postgres import Unavailable, start_postgres  # noqa: E402
from reference import xml_escape  # noqa: E402
from sqlalchemy import (  # noqa: E402
    BigInteger,
    Column,
    DateTime,
    Engine,
    MetaData,
    Table,
    Text,
    create_engine,
    event,
)

from sitemap_core import BaseURL, Site, UrlSource, respond  # noqa: E402
from sitemap_core.limits import MAX_URLS_PER_SITEMAP  # noqa: E402
from sitemap_core.sources.sql.sqla import SQLAlchemySource, install_version_triggers  # noqa: E402

BASE = "https://example.com"
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
PAGE_SIZE = MAX_URLS_PER_SITEMAP
#: Server settings: a buffer pool that holds the table (1 GB at ten million rows), as a
#: production server's would, and UTC so that dates come back in one zone.
SETTINGS = {"shared_buffers": "1GB", "timezone": "UTC"}


# The tables ----------------------------------------------------------------------------


def posts_table(name: str) -> Table:
    """The SQLAlchemy description of a posts table called ``name``."""
    return Table(
        name,
        MetaData(),
        Column("id", BigInteger, primary_key=True),
        Column("slug", Text, nullable=False),
        Column("updated_at", DateTime(timezone=True), nullable=False),
    )


def build(engine: Engine, name: str, rows: int) -> float:
    """Create and fill ``name`` with ``rows`` posts, its version triggers installed; seconds."""
    started = time.perf_counter()
    with engine.begin() as conn:
        conn.exec_driver_sql(
            f"CREATE TABLE {name} (id BIGINT NOT NULL, slug TEXT NOT NULL,"
            " updated_at TIMESTAMPTZ NOT NULL)"
        )
        # One statement, no round trip per row; the key's index is built after the load.
        conn.exec_driver_sql(
            f"INSERT INTO {name} SELECT i, 'post-number-' || i || '-about-sitemaps',"
            " TIMESTAMPTZ '2020-01-01 00:00:00+00' + i * INTERVAL '97 seconds'"
            f" FROM generate_series(1, {rows:d}) AS i"
        )
        conn.exec_driver_sql(f"ALTER TABLE {name} ADD PRIMARY KEY (id)")
    # As docs/sqlalchemy.md says: once, at deployment (here after the bulk load, so that
    # the load pays no trigger per row).
    install_version_triggers(engine, name, f"{name}_version")
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql(f"VACUUM ANALYZE {name}")
    return time.perf_counter() - started


def make_site(engine: Engine, name: str) -> Site[UrlSource]:
    """A site of one SQLAlchemySource over ``name``: 50,000 a page, no page cache."""
    source = SQLAlchemySource(
        engine,
        posts_table(name),
        key="id",
        lastmod="updated_at",
        columns=["slug", "updated_at"],
        build=f"{BASE}/posts/{{slug}}",
        version_table=f"{name}_version",
    )
    return Site([UrlSource.from_object("posts", source)], page_size=PAGE_SIZE, cache=None)


# Requests --------------------------------------------------------------------------------

_BASE_URL = BaseURL.parse(BASE)


def fetch(
    site: Site[UrlSource], path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """One GET through respond(), identity coding, body drained."""
    reply = respond(site, "GET", path, lambda: _BASE_URL, headers or {})
    assert reply is not None, path
    body = reply.body
    assert isinstance(body, Iterable)
    data = b"".join(body)
    return reply.status, {k.lower(): v for k, v in reply.headers}, data


def get(site: Site[UrlSource], path: str) -> Callable[[], int]:
    """A contender: GET ``path``, check it is a 200, drain the body chunk by chunk
    (nothing kept, so that a traced peak is the request's own)."""

    def run() -> int:
        reply = respond(site, "GET", path, lambda: _BASE_URL)
        assert reply is not None and reply.status == 200, (path, reply)
        assert isinstance(reply.body, Iterable)
        return sum(len(chunk) for chunk in reply.body)

    return run


def remember_etag(
    site: Site[UrlSource], path: str, etags: dict[str, str], name: str
) -> Callable[[], None]:
    """A set-up step: one GET of ``path``, its ETag kept under ``name``."""

    def run() -> None:
        etags[name] = fetch(site, path)[1]["etag"]

    return run


def revalidate(
    site: Site[UrlSource], path: str, etags: dict[str, str], name: str
) -> Callable[[], int]:
    """A contender: a conditional GET of ``path`` with the ETag kept under ``name``."""

    def run() -> int:
        status, _, data = fetch(site, path, {"if-none-match": etags[name]})
        assert status == 304, (path, status)
        return len(data)

    return run


class Statements:
    """Every statement the engine sends, recorded by ``before_cursor_execute``."""

    def __init__(self, engine: Engine) -> None:
        self.log: list[str] = []
        event.listen(engine, "before_cursor_execute", self._record)

    def _record(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        self.log.append(" ".join(statement.split()))

    @contextmanager
    def recording(self) -> Iterator[list[str]]:
        """The statements sent inside the ``with`` block."""
        start = len(self.log)
        got: list[str] = []
        yield got
        got.extend(self.log[start:])


def reads_rows(statement: str, table: str) -> bool:
    """Whether ``statement`` reads ``table`` itself (not its version table)."""
    words = statement.replace(",", " ").split()
    return any(word == table or word.startswith(f"{table}.") for word in words)


# Writes (untimed set-up steps) -----------------------------------------------------------


class Writer:
    """Writes to the table on its own psycopg connection, committed at once."""

    def __init__(self, dsn: str, name: str, rows: int) -> None:
        self.conn = psycopg.connect(dsn, autocommit=True)
        self.name = name
        self.middle = rows // 2 + 7  # a row of the middle page
        self.first = 123  # a row of the first page
        self.step = 0

    def update_and_insert(self) -> None:
        """One UPDATE of a middle row's date (to now) and one INSERT of a new post."""
        self.step += 1
        self.conn.execute(
            f"UPDATE {self.name} SET updated_at = now() WHERE id = %s", (self.middle,)
        )
        self.conn.execute(
            f"INSERT INTO {self.name} SELECT max(id) + 1, 'fresh-post-' || max(id) + 1, now()"
            f" FROM {self.name}"
        )

    def backwards(self) -> None:
        """One UPDATE moving the middle row's date back (the page's newest may fall)."""
        self.conn.execute(
            f"UPDATE {self.name} SET updated_at = TIMESTAMPTZ '2019-01-01 00:00:00+00'"
            " + %s * INTERVAL '1 second' WHERE id = %s",
            (self.step, self.middle),
        )
        self.step += 1

    def delete_early(self) -> None:
        """One DELETE in the first page, then the row back at the end: every page shifts."""
        self.conn.execute(f"DELETE FROM {self.name} WHERE id = %s", (self.first,))
        self.conn.execute(
            f"INSERT INTO {self.name} SELECT max(id) + 1, 'moved-' || max(id) + 1, now()"
            f" FROM {self.name}"
        )
        self.first += 1


# Reference: plain Python over a psycopg cursor, no library code ---------------------------


def reference(dsn: str, name: str) -> Callable[[], bytes]:
    """The first page's rows from a psycopg cursor, rendered with f-strings and join."""
    conn = psycopg.connect(dsn, autocommit=True)

    def run() -> bytes:
        with conn.cursor() as cursor:
            cursor.execute(
                f"SELECT slug, updated_at FROM {name} ORDER BY id LIMIT %s", (PAGE_SIZE,)
            )
            rows = cursor.fetchall()
        head = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}">\n'
        body = "".join(
            [
                f"<url><loc>{xml_escape(f'{BASE}/posts/{slug}')}</loc>"
                f"<lastmod>{updated_at.isoformat()}</lastmod></url>\n"
                for slug, updated_at in rows
            ]
        )
        return (head + body + "</urlset>\n").encode()

    return run


# Running -----------------------------------------------------------------------------------


def retained_memory(func: Callable[[], object]) -> int:
    """Bytes still allocated after one call of ``func``: what it left remembered."""
    gc.collect()
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        func()
        gc.collect()
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return kept - base


def rss_mib() -> float:
    """Peak resident set size of this process so far, MiB (Linux: ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(url: str, rows: int, repeat: int) -> dict[str, Any]:
    """Build the tables, then measure every contender ``repeat`` times in turn."""
    engine = create_engine(url, pool_size=4)
    dsn = url.replace("postgresql+psycopg://", "postgresql://")
    built = {"posts": build(engine, "posts", rows)}
    small_rows = max(PAGE_SIZE + 1, rows // 10)
    built["posts_small"] = build(engine, "posts_small", small_rows)
    statements = Statements(engine)
    pages = -(-rows // PAGE_SIZE)
    middle = pages // 2 + 1
    writer = Writer(dsn, "posts", rows)
    ref = reference(dsn, "posts")

    site = make_site(engine, "posts")
    results: dict[str, Any] = {"rows": rows, "pages": pages, "repeat": repeat, "built_s": built}
    # The first index of a fresh process remembers nothing: it reads every row once.
    with statements.recording() as cold_log:
        results["cold_index_s"] = timed(get(site, "/sitemap.xml"))
    results["cold_index_statements"] = len(cold_log)
    results["remembered_bytes"] = retained_memory(get(make_site(engine, "posts"), "/sitemap.xml"))

    status, headers, page = fetch(site, "/sitemap-posts-1.xml")
    results["page_bytes"] = len(page)
    results["checks"] = {
        "status": status,
        "etag": "etag" in headers,
        "identical_to_reference": page == ref(),
    }
    paths = {"first": 1, "middle": middle, "last": pages}
    etags: dict[str, str] = {}

    contenders: dict[str, Callable[[], object]] = {
        "reference": ref,
        "index": get(site, "/sitemap.xml"),
        "index, right after an UPDATE and an INSERT": get(site, "/sitemap.xml"),
        "first page": get(site, "/sitemap-posts-1.xml"),
        "middle page": get(site, f"/sitemap-posts-{middle}.xml"),
        "last page": get(site, f"/sitemap-posts-{pages}.xml"),
        "index, right after a date moved backwards": get(site, "/sitemap.xml"),
        "index, right after a DELETE in the first page": get(site, "/sitemap.xml"),
    }
    # Untimed steps run just before a contender: the write whose aftermath it measures,
    # or the GET that gives a 304 contender the page's current ETag.
    setups: dict[str, Callable[[], None]] = {
        "index, right after an UPDATE and an INSERT": writer.update_and_insert,
        "index, right after a date moved backwards": writer.backwards,
        "index, right after a DELETE in the first page": writer.delete_early,
    }
    for name, n in paths.items():
        path = f"/sitemap-posts-{n}.xml"
        contenders[f"304, {name} page"] = revalidate(site, path, etags, name)
        setups[f"304, {name} page"] = remember_etag(site, path, etags, name)
    for name, func in contenders.items():  # warm-up: buffers, imports, compiled statements
        setups.get(name, lambda: None)()
        func()
    times: dict[str, list[float]] = {name: [] for name in contenders}
    logs: dict[str, list[str]] = {}
    for _ in range(repeat):
        for name, func in contenders.items():
            setups.get(name, lambda: None)()
            with statements.recording() as log:
                times[name].append(timed(func))
            logs[name] = log
    results["median_s"] = {name: statistics.median(values) for name, values in times.items()}
    results["times_s"] = times
    results["statements"] = {name: len(log) for name, log in logs.items()}
    results["row_reads_on_304"] = {
        name: [s for s in log if reads_rows(s, "posts")]
        for name, log in logs.items()
        if name.startswith("304")
    }
    results["statements_on_304"] = {
        name: log for name, log in logs.items() if name.startswith("304")
    }

    small_site = make_site(engine, "posts_small")
    fetch(small_site, "/sitemap.xml")  # anchors known, as for the big table
    results["memory"] = {
        "first page": peak_memory(get(site, "/sitemap-posts-1.xml")),
        "middle page": peak_memory(get(site, f"/sitemap-posts-{middle}.xml")),
        "last page": peak_memory(get(site, f"/sitemap-posts-{pages}.xml")),
        f"first page, {small_rows:,} rows": peak_memory(get(small_site, "/sitemap-posts-1.xml")),
    }
    results["rss_mib"] = rss_mib()
    # What the long-lived site remembered through every write must be what a fresh
    # process computes from the rows: the index, and the pages the writes shifted.
    fresh = make_site(engine, "posts")
    for path in ("/sitemap.xml", f"/sitemap-posts-{middle}.xml", f"/sitemap-posts-{pages}.xml"):
        name = f"{path} after the writes = a fresh process's"
        results["checks"][name] = fetch(site, path)[2] == fetch(fresh, path)[2]
    engine.dispose()
    writer.conn.close()
    return results


def machine(url: str) -> str:
    """What the figures were measured on."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        commit = "unknown"
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        row = conn.execute("SHOW server_version").fetchone()
    server = row[0] if row else "?"
    return (
        f"{platform.processor() or platform.machine()}, nproc {os.cpu_count()}, "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"PostgreSQL {server} (local, {', '.join(f'{k}={v}' for k, v in SETTINGS.items())}), "
        f"psycopg {psycopg.__version__}, {platform.platform()}; library {commit or 'unknown'}"
    )


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def load() -> str:
    return " / ".join(f"{value:.2f}" for value in os.getloadavg())


def table(results: dict[str, Any]) -> str:
    """The results as Markdown tables."""
    m = results["median_s"]
    ref = m["reference"]
    first = m["first page"]
    n = results["statements"]
    lines = [
        f"{results['rows']:,} rows, {results['pages']} pages of {PAGE_SIZE:,}, median of "
        f"{results['repeat']} runs (first page {results['page_bytes']:,} bytes; checks: "
        + ", ".join(f"{k}={v}" for k, v in results["checks"].items())
        + ")",
        "",
        "| Contender | Time | vs first page | vs reference | Statements |",
        "|---|---:|---:|---:|---:|",
        f"| Reference (psycopg cursor, f-strings, join; first page) | {ms(ref)} | "
        f"{ref / first:.2f}x | 1.00x | 1 |",
    ]
    for name in m:
        if name != "reference":
            share = m[name] / first
            relative = f"{100 * share:.2f}%" if share < 0.2 else f"{share:.2f}x"
            lines.append(
                f"| {name} | {ms(m[name])} | {relative} | {m[name] / ref:.2f}x | {n[name]} |"
            )
    lines.append(
        f"| index of a fresh process (nothing remembered; once) | {ms(results['cold_index_s'])}"
        f" | {results['cold_index_s'] / first:.2f}x | {results['cold_index_s'] / ref:.2f}x"
        f" | {results['cold_index_statements']} |"
    )
    reads = sum(len(v) for v in results["row_reads_on_304"].values())
    lines += [
        "",
        "| Target | Measured | Met |",
        "|---|---:|---|",
        f"| index < 5% of a page | {100 * m['index'] / first:.2f}% | "
        f"{'yes' if m['index'] / first < 0.05 else 'NO'} |",
        f"| last page / first page <= 1.2x | {m['last page'] / first:.2f}x | "
        f"{'yes' if m['last page'] / first <= 1.2 else 'NO'} |",
        f"| 304 (first / middle / last page) reads no rows | "
        f"{' / '.join(str(n[k]) for k in n if k.startswith('304'))} statements, "
        f"{reads} reading rows | {'yes' if reads == 0 else 'NO'} |",
    ]
    memory = results["memory"]
    peaks = list(memory.values())
    flat = max(peaks) <= 1.1 * min(peaks)
    lines.append(
        "| memory flat (peak traced per page request) | "
        + " / ".join(f"{name} {v / 2**20:.2f} MiB" for name, v in memory.items())
        + f" | {'yes' if flat else 'NO'} |"
    )
    lines += [
        "",
        f"Remembered by a site and its source once the index was served: "
        f"{results['remembered_bytes'] / 2**20:.2f} MiB; peak RSS of the process "
        f"{results['rss_mib']:.0f} MiB. The 304s' statements: "
        + "; ".join(f"{k}: {v}" for k, v in results["statements_on_304"].items()),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, start PostgreSQL, build, run, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows in the table")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each (>= 1)")
    args = parser.parse_args(argv)
    if args.rows < 2 * PAGE_SIZE + 1:
        parser.error(f"--rows must exceed two pages ({2 * PAGE_SIZE})")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    try:
        with start_postgres(SETTINGS) as url:
            print(f"Machine: {machine(url)}")
            print(f"Load average before: {load()}")
            results = run(url, args.rows, args.repeat)
            print(f"Load average after: {load()}")
    except Unavailable as exc:
        print(f"PostgreSQL is unavailable: {exc}", file=sys.stderr)
        return 2
    built = ", ".join(f"{k} {v:.1f} s" for k, v in results["built_s"].items())
    print(f"Tables built (load, key, version triggers, VACUUM ANALYZE): {built}")
    print()
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
