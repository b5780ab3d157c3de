"""Benchmark: a 1,000,000-row SQLite table served through SQLiteSource and respond().

Builds (once; cached) an SQLite table of ``--rows`` posts, ``id INTEGER PRIMARY KEY,
slug TEXT, updated_at TEXT``, with a trigger-bumped version table, and serves it with
:class:`sitemap_core.sources.sql.sqlite.SQLiteSource` through :func:`sitemap_core.respond` on a
:class:`Site` of 50,000-entry pages, with the page cache off (the core's default) and
identity coding, draining every body. Measured in one process, each repeat running
every contender once in turn after a warm-up, reported as medians:

* the index (``/sitemap.xml``: one ``COUNT(*)`` and one ``newest`` per child page)
  against one page's full time; target: the index under 2% of a page. Measured
  three ways: while the table is unchanged (the source remembers its facts per
  version); right after a row is appended, with a change log
  (:func:`~sitemap_core.sources.sql.sqlite.install_change_log`: only the pages at and after the
  change are read again); and with nothing remembered (a new source: the worst case,
  e.g. a write in the first page);
* the first page against the last page, in ``seek`` and in ``offset`` mode; target:
  the last page within 1.2x of the first;
* a **reference**: plain Python that fetches the first page's 50,000 rows with one
  query and renders them with f-strings and ``"".join`` (as ``bench_page.py`` does).

The library's first page is checked first against the reference: 200, an ETag, and
the same bytes.

Run from the repository root::

    .venv/bin/python benchmarks/bench_big.py [--rows 1000000] [--repeat 7] [--db PATH]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from measure import timed
from reference import xml_escape

from sitemap_core import BaseURL, Site, UrlSource, respond
from sitemap_core.limits import MAX_URLS_PER_SITEMAP
from sitemap_core.sources.sql.sqlite import (
    SQLiteSource,
    install_change_log,
    install_version_triggers,
)

BASE = "https://example.com"
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
PAGE_SIZE = MAX_URLS_PER_SITEMAP
#: Rows inserted per executemany call: big enough to amortise the call, small enough
#: to keep the generated tuples out of memory.
CHUNK = 100_000


# The table ---------------------------------------------------------------------------


def build_db(path: Path, rows: int) -> float:
    """Create ``path`` with ``rows`` posts unless it exists; return seconds spent."""
    if path.exists():
        return 0.0
    started = time.perf_counter()
    # Built under a private name and renamed: an interrupted build leaves no half table.
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.unlink(missing_ok=True)
    epoch = datetime(2020, 1, 1, tzinfo=UTC)
    with closing(sqlite3.connect(partial)) as db:
        # A throwaway file: no journal, no fsync, so the load takes seconds.
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        db.execute(
            "CREATE TABLE posts (id INTEGER PRIMARY KEY, slug TEXT NOT NULL,"
            " updated_at TEXT NOT NULL)"
        )
        for first in range(1, rows + 1, CHUNK):
            db.executemany(
                "INSERT INTO posts VALUES (?, ?, ?)",
                (
                    (
                        i,
                        f"post-number-{i}-about-sitemaps",
                        (epoch + timedelta(seconds=97 * i)).isoformat(),
                    )
                    for i in range(first, min(first + CHUNK, rows + 1))
                ),
            )
        db.commit()
        # After the bulk load, so the load pays no trigger per row.
        install_version_triggers(db, "posts", "posts_version")
    os.replace(partial, path)
    return time.perf_counter() - started


def connector(path: Path) -> Callable[[], sqlite3.Connection]:
    """A factory of read-only connections, as a web app would use."""
    uri = f"file:{path}?mode=ro"
    return lambda: sqlite3.connect(uri, uri=True)


def build_entry(row: sqlite3.Row) -> tuple[str, str]:
    """What a user's ``build`` does: a tuple row, validated and written by the library
    in one pass (the fast path of ``sitemap_core.model.rows``)."""
    return (f"{BASE}/posts/{row['slug']}", row["updated_at"])


def make_site(path: Path, mode: str, logged: bool = False) -> Site[UrlSource]:
    """A site of one SQLiteSource, 50,000 entries a page, no page cache; versioned by
    the version table, or by the change log when ``logged``."""
    posts = SQLiteSource(
        connector(path),
        "posts",
        "id",
        build_entry,
        columns=["slug", "updated_at"],
        lastmod="updated_at",
        mode="seek" if mode == "seek" else "offset",
        version_table=None if logged else "posts_version",
        change_log="posts_changes" if logged else None,
    )
    return Site([UrlSource.from_object("posts", posts)], page_size=PAGE_SIZE, cache=None)


# Requests ------------------------------------------------------------------------------

_BASE_URL = BaseURL.parse(BASE)


def fetch(site: Site[UrlSource], path: str) -> tuple[int, dict[str, str], bytes]:
    """One GET through respond(), identity coding, body drained."""
    reply = respond(site, "GET", path, lambda: _BASE_URL)
    assert reply is not None, path
    body = reply.body
    assert isinstance(body, Iterable)
    data = b"".join(body)
    return reply.status, {k.lower(): v for k, v in reply.headers}, data


def drain(site: Site[UrlSource], path: str) -> Callable[[], object]:
    """A contender: fetch ``path`` and check it is a 200."""

    def run() -> object:
        status, _, data = fetch(site, path)
        assert status == 200, (path, status)
        return len(data)

    return run


def cold_index(path: Path, mode: str) -> Callable[[], object]:
    """A contender: the index from a new source, whose memo is empty.

    What the first index request after a change of the table costs (the version
    moved, so nothing remembered applies); later ones cost what ``index`` shows.
    """

    def run() -> object:
        return drain(make_site(path, mode), "/sitemap.xml")()

    return run


def append_row(path: Path) -> Callable[[], None]:
    """A set-up step (not timed): append one post, as a new article would be."""

    def run() -> None:
        with closing(sqlite3.connect(path)) as db:
            db.execute(
                "INSERT INTO posts (slug, updated_at) VALUES ('fresh-post', ?)",
                (datetime.now(UTC).isoformat(timespec="seconds"),),
            )
            db.commit()

    return run


# Reference: plain Python, no library code ---------------------------------------------


def reference(path: Path) -> Callable[[], bytes]:
    """The first page's rows, fetched with one query and rendered at once."""
    connect = connector(path)

    def run() -> bytes:
        with closing(connect()) as db:
            rows = db.execute(
                "SELECT slug, updated_at FROM posts ORDER BY id LIMIT ?", (PAGE_SIZE,)
            ).fetchall()
        head = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}">\n'
        body = "".join(
            [
                f"<url><loc>{xml_escape(f'{BASE}/posts/{slug}')}</loc>"
                f"<lastmod>{updated_at}</lastmod></url>\n"
                for slug, updated_at in rows
            ]
        )
        return (head + body + "</urlset>\n").encode()

    return run


# Running ---------------------------------------------------------------------------------


def run(path: Path, rows: int, repeat: int) -> dict[str, Any]:
    """Measure every contender ``repeat`` times, in turn; return medians and checks."""
    sites = {mode: make_site(path, mode) for mode in ("seek", "offset")}
    last = -(-rows // PAGE_SIZE)
    ref = reference(path)
    status, headers, page = fetch(sites["seek"], "/sitemap-posts-1.xml")
    checks = {
        "status": status,
        "etag": "etag" in headers,
        "identical_to_reference": page == ref(),
        "offset_equals_seek_last_page": fetch(sites["seek"], f"/sitemap-posts-{last}.xml")[2]
        == fetch(sites["offset"], f"/sitemap-posts-{last}.xml")[2],
    }
    # The appends go to a copy, so that the other contenders' table never changes.
    copy = path.with_name(f"{path.stem}-appended{path.suffix}")
    shutil.copyfile(path, copy)
    with closing(sqlite3.connect(copy)) as db:
        install_change_log(db, "posts", "id", "posts_changes")
    logged = make_site(copy, "seek", logged=True)
    contenders: dict[str, Callable[[], object]] = {"reference": ref}
    # Untimed steps run before a contender: here, the write whose aftermath it measures.
    setups: dict[str, Callable[[], None]] = {"seek index, after an append": append_row(copy)}
    for mode, site in sites.items():
        contenders[f"{mode} index"] = drain(site, "/sitemap.xml")
        if mode == "seek":
            contenders["seek index, after an append"] = drain(logged, "/sitemap.xml")
        contenders[f"{mode} index, cold"] = cold_index(path, mode)
        contenders[f"{mode} first page"] = drain(site, "/sitemap-posts-1.xml")
        contenders[f"{mode} last page"] = drain(site, f"/sitemap-posts-{last}.xml")
    for func in contenders.values():  # warm-up: OS file cache, imports, lazy set-up
        func()
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, func in contenders.items():
            setup = setups.get(name)
            if setup is not None:
                setup()
            times[name].append(timed(func))
    median = {name: statistics.median(values) for name, values in times.items()}
    return {
        "rows": rows,
        "pages": last,
        "repeat": repeat,
        "page_bytes": len(page),
        "checks": checks,
        "median_s": median,
        "times_s": times,
    }


def machine() -> str:
    """What the figures were measured on."""
    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        commit = "unknown"
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"SQLite {sqlite3.sqlite_version}, {platform.platform()}; library {commit or 'unknown'}"
    )


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def table(results: dict[str, Any]) -> str:
    """The results as Markdown tables."""
    m = results["median_s"]
    ref = m["reference"]
    lines = [
        f"{results['rows']:,} rows, {results['pages']} pages of {PAGE_SIZE:,}, median of "
        f"{results['repeat']} runs (page {results['page_bytes']:,} bytes; checks: "
        + ", ".join(f"{k}={v}" for k, v in results["checks"].items())
        + ")",
        "",
        "| Contender | Time | vs reference |",
        "|---|---:|---:|",
        f"| Reference (plain Python: one query, f-strings, join; first page) | {ms(ref)} | 1.00x |",
    ]
    for name in m:
        if name != "reference":
            lines.append(f"| {name} | {ms(m[name])} | {m[name] / ref:.2f}x |")
    lines += ["", "| Ratio | seek | offset | Target |", "|---|---:|---:|---:|"]
    index = {mode: m[f"{mode} index"] / m[f"{mode} first page"] for mode in ("seek", "offset")}
    last = {mode: m[f"{mode} last page"] / m[f"{mode} first page"] for mode in ("seek", "offset")}
    lines.append(
        f"| Index / first page | {100 * index['seek']:.2f}% | {100 * index['offset']:.2f}% | < 2% |"
    )
    appended = m["seek index, after an append"] / m["seek first page"]
    lines.append(
        f"| Index right after an append (change log) / first page | {100 * appended:.2f}% "
        "| - | < 2% |"
    )
    cold = {mode: m[f"{mode} index, cold"] / m[f"{mode} first page"] for mode in index}
    lines.append(
        f"| Index after a change (cold memo) / first page | {100 * cold['seek']:.1f}% "
        f"| {100 * cold['offset']:.1f}% | - |"
    )
    lines.append(
        f"| Last page / first page | {last['seek']:.2f}x | {last['offset']:.2f}x | <= 1.20x |"
    )
    lines.append(
        f"| First page / reference | {m['seek first page'] / ref:.2f}x "
        f"| {m['offset first page'] / ref:.2f}x | - |"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, build the table if needed, run, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows in the table")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs of each (>= 1)")
    parser.add_argument(
        "--db", type=Path, help="database file (built if missing; default: a temp dir cache)"
    )
    args = parser.parse_args(argv)
    if args.rows < PAGE_SIZE + 1:
        parser.error(f"--rows must exceed one page ({PAGE_SIZE})")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    path = args.db or Path(tempfile.gettempdir()) / f"sitemap_bench_big_{args.rows}.db"
    built = build_db(path, args.rows)
    print(f"Machine: {machine()}")
    state = f"built in {built:.1f} s" if built else "cached"
    print(f"Database: {path} ({state})")
    print()
    print(table(run(path, args.rows, args.repeat)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
