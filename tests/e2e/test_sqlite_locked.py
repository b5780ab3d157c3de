"""Issue 11: a locked SQLite database, under a real gunicorn.

Another connection holds the database in ``BEGIN EXCLUSIVE`` (a rollback-journal
database: readers wait for it, then give up after SQLite's busy timeout). While it is
held, a sitemap page is a 500 (never a short 200 that looks complete) and robots.txt
still answers; once it is released, pages are whole again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .load import url_count
from .servers import HTTP_TIMEOUT, Server, run_gunicorn

ROWS = 3_000

APP = """
import os
import sqlite3

from flask import Flask

from flask_sitemapper import Sitemapper
from sitemap_core.sources.sql.sqlite import SQLiteSource

DATABASE = os.environ["LOCKED_DATABASE"]


def connect():
    # A short busy timeout, so the test waits one second, not five, for the lock.
    return sqlite3.connect(DATABASE, timeout=1.0)


app = Flask(__name__)
app.config["SITEMAP_BASE_URL"] = "https://locked.example.com"
app.config["SITEMAP_CACHE"] = False  # every answer reads the database
sitemapper = Sitemapper(app)
sitemapper.add_source(
    "items",
    SQLiteSource(
        connect,
        "items",
        "id",
        lambda row: (f"https://locked.example.com/items/{row[0]}", row[1]),
        columns=("id", "updated_at"),
        lastmod="updated_at",
        version_table="items_version",
    ),
)
"""


@pytest.fixture(scope="module")
def locked_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    folder = tmp_path_factory.mktemp("locked")
    database = folder / "items.db"
    with sqlite3.connect(database) as db:
        db.execute("PRAGMA journal_mode=DELETE")
        db.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, updated_at TEXT NOT NULL)")
        db.executemany(
            "INSERT INTO items VALUES (?, ?)",
            ((i, "2024-05-01T10:00:00+00:00") for i in range(1, ROWS + 1)),
        )
        from sitemap_core.sources.sql.sqlite import install_version_triggers

        install_version_triggers(db, "items", "items_version")
    db.close()
    (folder / "locked_app.py").write_text(APP)
    env = {"LOCKED_DATABASE": str(database)}
    with run_gunicorn("locked_app:app", folder, folder / "logs", env=env) as server:
        yield server, database


def test_a_locked_database_is_a_500_then_whole_pages_again(
    locked_app: tuple[Server, Path],
) -> None:
    server, database = locked_app
    with httpx.Client(timeout=HTTP_TIMEOUT, trust_env=False) as client:
        page = client.get(server.url("/sitemap-items-1.xml"))
        assert page.status_code == 200 and url_count(page.content) == ROWS
        holder = sqlite3.connect(database, isolation_level=None)
        try:
            holder.execute("BEGIN EXCLUSIVE")
            for path in ("/sitemap-items-1.xml", "/sitemap.xml", "/sitemap-items-1.txt"):
                locked = client.get(server.url(path))
                # The version read fails before any byte: an error status, no document.
                assert locked.status_code == 500, (path, locked.status_code)
                assert b"<urlset" not in locked.content and b"/items/" not in locked.content
            # robots.txt never fails: it lists /sitemap.xml when counting fails.
            robots = client.get(server.url("/robots.txt"))
            assert robots.status_code == 200
            assert "Sitemap: https://locked.example.com/sitemap.xml" in robots.text
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        again = client.get(server.url("/sitemap-items-1.xml"), headers={"Accept-Encoding": "gzip"})
        assert again.status_code == 200 and url_count(again.content) == ROWS
    assert "database is locked" in server.log()
