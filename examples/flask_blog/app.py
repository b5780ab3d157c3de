"""A Flask blog over SQLite whose sitemap lists every post.

Run it (from this folder): ``gunicorn app:app`` or ``flask --app app run``.

* 120,000 posts are created in ``blog.db`` on first run (``BLOG_DATABASE`` moves it).
* Static pages and the tag pages are listed with ``@sitemapper.include``; posts come
  from :class:`PostPages`, a sliceable source, so each child sitemap costs one
  ``LIMIT/OFFSET`` query and the index costs one ``COUNT(*)``; its ``fingerprint``
  and ``newest`` make ETags, 304s, the page cache and the index's lastmods cheap.
* Each post lists its cover picture (``/posts/<id>/cover.svg``, drawn on request) as
  an ``<image:image>``; the welcome page exists in English, German and French
  (``/en/welcome``, ``/de/welcome``, ``/fr/welcome``), declared once with
  ``hreflang="lang"``: each of the three URLs lists all three, plus ``x-default``.
* ``/sitemap.html`` shows the same sitemap to people, page by page;
  ``FLASK_SITEMAP_PAGE_SIZE=1000`` makes the pages (XML and HTML) smaller than the
  protocol's 50,000 URLs.
* The sitemap's URLs use the request's host when it is localhost / 127.0.0.1;
  set ``FLASK_SITEMAP_BASE_URL=https://blog.example.com`` to fix them instead.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

from flask import Flask, Response, abort, url_for

from flask_sitemapper import Entry, Sitemapper

POST_COUNT = 120_000
TAGS = ("flask", "python", "sitemaps", "sqlite", "wsgi", "asgi", "http", "caching")
DATABASE = Path(os.environ.get("BLOG_DATABASE", Path(__file__).with_name("blog.db")))
#: The welcome page in each language the blog speaks (the URL's first segment).
WELCOME = {
    "en": "Welcome to the blog",
    "de": "Willkommen im Blog",
    "fr": "Bienvenue sur le blog",
}


#: A version that triggers bump on every change of the table: an exact, O(1) fingerprint.
VERSIONED = """
CREATE TABLE posts_version (n INTEGER NOT NULL);
INSERT INTO posts_version VALUES (0);
CREATE TRIGGER posts_added AFTER INSERT ON posts
    BEGIN UPDATE posts_version SET n = n + 1; END;
CREATE TRIGGER posts_edited AFTER UPDATE ON posts
    BEGIN UPDATE posts_version SET n = n + 1; END;
CREATE TRIGGER posts_removed AFTER DELETE ON posts
    BEGIN UPDATE posts_version SET n = n + 1; END;
"""


def create_database(path: Path, posts: int = POST_COUNT) -> None:
    """Create the posts table with ``posts`` rows unless it already exists."""
    if path.exists():
        return
    # Build under a private name and rename: several gunicorn workers may start at once,
    # and none of them may see a half-filled database.
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    start = datetime(2020, 1, 1, tzinfo=UTC)
    rows = (
        (
            i,
            f"Post number {i}",
            TAGS[i % len(TAGS)],
            (start + timedelta(minutes=17 * i)).isoformat(),
        )
        for i in range(1, posts + 1)
    )
    with closing(sqlite3.connect(partial)) as db, db:
        db.execute(
            "CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT NOT NULL,"
            " tag TEXT NOT NULL, updated_at TEXT NOT NULL)"
        )
        db.executemany("INSERT INTO posts VALUES (?, ?, ?, ?)", rows)
        # After the bulk load: from now on every change to posts bumps the version.
        db.executescript(VERSIONED)
    os.replace(partial, path)


def connect() -> sqlite3.Connection:
    """Open the blog database read-only."""
    return sqlite3.connect(f"file:{DATABASE}?mode=ro", uri=True)


class PostPages:
    """The posts as a sitemap source: ``len()`` counts, a slice is one query."""

    def __len__(self) -> int:
        with closing(connect()) as db:
            (count,) = db.execute("SELECT COUNT(*) FROM posts").fetchone()
        return int(count)

    def fingerprint(self) -> int:
        """Changes whenever a post is added, removed or edited: one cheap query.

        The version is bumped by triggers on every insert, update and delete, so no
        edit escapes it (``MAX(updated_at)`` and ``COUNT(*)`` would miss an edit that
        moves a date back, or a delete plus an insert). With it, ETags, 304s and the
        page cache cost no rendering.
        """
        with closing(connect()) as db:
            (version,) = db.execute("SELECT n FROM posts_version").fetchone()
        return int(version)

    def newest(self, start: int, stop: int) -> str | None:
        """The newest ``updated_at`` of one child page: its ``<lastmod>`` in the index."""
        with closing(connect()) as db:
            (newest,) = db.execute(
                "SELECT MAX(updated_at) FROM"
                " (SELECT updated_at FROM posts ORDER BY id LIMIT ? OFFSET ?)",
                (stop - start, start),
            ).fetchone()
        return None if newest is None else str(newest)

    def __getitem__(self, window: slice) -> Iterator[Entry]:
        start, stop = window.start or 0, window.stop
        with closing(connect()) as db:
            rows = db.execute(
                "SELECT id, updated_at FROM posts ORDER BY id LIMIT ? OFFSET ?",
                (stop - start, start),
            )
            for post_id, updated_at in rows:
                url = url_for("post", post_id=post_id, _external=True)
                # The cover's URL is the post's plus a suffix (see the cover route): one
                # url_for per row, not two, on pages of 50,000 rows.
                yield Entry(url, lastmod=updated_at, images=[f"{url}/cover.svg"])


create_database(DATABASE)
app = Flask(__name__)
app.config.from_prefixed_env()  # FLASK_SITEMAP_BASE_URL -> SITEMAP_BASE_URL
sitemapper = Sitemapper(app)
sitemapper.add_source("posts", PostPages())


@app.get("/")
@sitemapper.include(changefreq="daily", priority=1.0)
def home() -> str:
    return "<h1>The blog</h1>"


@app.get("/about")
@sitemapper.include(changefreq="yearly", priority=0.3)
def about() -> str:
    return "<h1>About</h1>"


@app.get("/contact")
@sitemapper.include(changefreq="yearly", priority=0.3)
def contact() -> str:
    return "<h1>Contact</h1>"


@app.get("/tags/<tag>")
@sitemapper.include(params=lambda: [{"tag": tag} for tag in TAGS], changefreq="weekly")
def tag(tag: str) -> str:
    if tag not in TAGS:
        abort(404)
    return f"<h1>Posts tagged {tag}</h1>"


@app.get("/posts/<int:post_id>")
def post(post_id: int) -> str:
    with closing(connect()) as db:
        row = db.execute("SELECT title FROM posts WHERE id = ?", (post_id,)).fetchone()
    if row is None:
        abort(404)
    return f"<h1>{row[0]}</h1>"


@app.get("/posts/<int:post_id>/cover.svg")
def cover(post_id: int) -> Response:
    """The post's cover picture, drawn on request (the sitemap lists it as its image)."""
    hue = post_id * 47 % 360
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="320" height="180">'
        f'<rect width="320" height="180" fill="hsl({hue},60%,45%)"/>'
        '<text x="160" y="100" font-size="28" text-anchor="middle" fill="#fff">'
        f"Post {post_id}</text></svg>"
    )
    return Response(svg, mimetype="image/svg+xml")


@app.get("/<lang>/welcome")
@sitemapper.include(
    hreflang="lang", languages=list(WELCOME), x_default="en", changefreq="monthly", priority=0.5
)
def welcome(lang: str) -> str:
    if lang not in WELCOME:
        abort(404)
    return f'<html lang="{lang}"><h1>{WELCOME[lang]}</h1></html>'
