"""A Flask blog over SQLite or PostgreSQL whose sitemap lists every post.

Run it (from this folder): ``gunicorn app:app`` or ``flask --app app run``.

* 120,000 posts are created in ``blog.db`` on first run (``BLOG_DATABASE`` moves it).
* ``DATABASE_URL=postgresql://user@host:port/db gunicorn app:app`` serves the same posts
  from PostgreSQL instead (``pip install "dynamic-sitemaps[flask,postgresql]"``): the
  first worker to start creates and fills the ``posts`` table and its page facts, under
  an advisory lock, so the others wait for it and find it filled. A plain
  ``postgresql://`` (or ``postgres://``) URL is read with the psycopg 3 driver
  (``sitemap_core.sqla_url.engine_url``); a URL naming its driver
  (``postgresql+psycopg2://``) is taken as given, and ``sqlite:///path/to/blog.db``
  names the SQLite file.
* Static pages and the tag pages are listed with ``@sitemapper.include``; the posts
  come from the library's :class:`~sitemap_core.sql.SQLiteSource` (on PostgreSQL,
  :class:`~sitemap_core.sqla.SQLAlchemySource`), the fast way to list a big table:
  each child sitemap is one range of post ids read by one query, whose rows are
  written out as they are read, never held as a list. Each becomes a tuple row ``(loc, lastmod,
  changefreq, priority, images)``, checked as an ``Entry`` would be but written in
  one pass. Their URLs come from ``url_builder("post")``: exactly what
  ``url_for("post", ..., _external=True)`` gives, at a fraction of its cost.
* Page facts (:func:`~sitemap_core.sql.install_page_facts`; on PostgreSQL
  :func:`~sitemap_core.sqla.install_page_facts`): triggers keep, for each page of
  post ids, its count, its newest ``updated_at``, when a write last changed it and a
  version. The index is one query of a row per page, a page's ETag and
  Last-Modified one query of one row, in every worker, cold or warm: a 304, a cached
  page and ``/sitemap.xml`` never count or scan the posts. A post stays on its page
  until it is deleted, so a new, edited or deleted post changes that one page (its
  ETag, and its ``<lastmod>`` in the index) and no other.
* Each post lists its cover picture (``/posts/<id>/cover.svg``, drawn on request) as
  an ``<image:image>``; the welcome page exists in English, German and French
  (``/en/welcome``, ``/de/welcome``, ``/fr/welcome``), declared once with
  ``hreflang="lang"``: each of the three URLs lists all three, plus ``x-default``.
* ``/sitemap.html`` shows the same sitemap to people, page by page;
  ``FLASK_SITEMAP_PAGE_SIZE=1000`` makes the pages (XML and HTML) smaller than the
  protocol's 50,000 URLs (the page facts are then counted again for pages of 1,000
  post ids, once, at start).
* The sitemap's URLs use the request's host when it is localhost / 127.0.0.1;
  set ``FLASK_SITEMAP_BASE_URL=https://blog.example.com`` to fix them instead.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from itertools import islice
from pathlib import Path
from typing import Any

from flask import Flask, Response, abort
from sqlalchemy import (
    Column,
    Connection,
    DateTime,
    Engine,
    Integer,
    MetaData,
    Table,
    Text,
    create_engine,
    func,
    insert,
    inspect,
    select,
)

from flask_sitemapper import Sitemapper, url_builder
from sitemap_core import sqla
from sitemap_core.sql import SQLiteSource, install_page_facts
from sitemap_core.sqla_url import engine_url

POST_COUNT = 120_000
TAGS = ("flask", "python", "sitemaps", "sqlite", "wsgi", "asgi", "http", "caching")
#: The URL values of the tag pages: a list made once from the constant the tag page
#: checks (a function is for values that change, and is called on every request).
TAG_PARAMS = [{"tag": tag} for tag in TAGS]
DATABASE = Path(os.environ.get("BLOG_DATABASE", Path(__file__).with_name("blog.db")))
#: ``postgresql://user@host:port/db``: the posts are on PostgreSQL. Unset or empty,
#: they are in the SQLite file DATABASE, which ``sqlite:///path/to/blog.db`` names too.
DATABASE_URL = os.environ.get("DATABASE_URL", "")
if DATABASE_URL.startswith("sqlite:///"):
    DATABASE, DATABASE_URL = Path(DATABASE_URL.removeprefix("sqlite:///")), ""
#: The table of page facts the triggers keep (see install_page_facts).
PAGE_FACTS = "posts_pages"
#: Post ids per page: the site's page size (FLASK_SITEMAP_PAGE_SIZE, else 50,000), so
#: that no page lists more URLs than the setting allows.
PAGE_WIDTH = int(os.environ.get("FLASK_SITEMAP_PAGE_SIZE") or 50_000)
#: The welcome page in each language the blog speaks (the URL's first segment).
WELCOME = {
    "en": "Welcome to the blog",
    "de": "Willkommen im Blog",
    "fr": "Bienvenue sur le blog",
}


def stand_in_posts(count: int = POST_COUNT) -> Iterator[tuple[int, str, str, datetime]]:
    """The blog's made-up posts ``(id, title, tag, updated_at)``, the same on either database."""
    start = datetime(2020, 1, 1, tzinfo=UTC)
    for i in range(1, count + 1):
        yield i, f"Post number {i}", TAGS[i % len(TAGS)], start + timedelta(minutes=17 * i)


# -- SQLite (the default) ----------------------------------------------------------------


def install_facts(db: sqlite3.Connection) -> None:
    """The page facts of the posts, for pages of PAGE_WIDTH ids (idempotent)."""
    install_page_facts(db, "posts", "id", PAGE_FACTS, lastmod="updated_at", page_width=PAGE_WIDTH)


def create_database(path: Path, posts: int = POST_COUNT) -> None:
    """Create the posts table with ``posts`` rows and its page facts, unless it exists.

    A database made by an older version of this example gets the page facts added
    (installing them is idempotent): a real app does this once, at deployment time.
    """
    if path.exists():
        with closing(sqlite3.connect(path)) as db:
            install_facts(db)
        return
    # Build under a private name, then link it into place: several gunicorn workers may
    # start at once, none of them may see a half-filled database, and all must read the
    # same one (a link, unlike a rename, keeps the first worker's file, whose page
    # facts every worker then reads).
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    # SQLite has no date type: updated_at is ISO 8601 text, with its offset.
    rows = (
        (i, title, tag, updated_at.isoformat())
        for i, title, tag, updated_at in stand_in_posts(posts)
    )
    with closing(sqlite3.connect(partial)) as db:
        with db:
            db.execute(
                "CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT NOT NULL,"
                " tag TEXT NOT NULL, updated_at TEXT NOT NULL)"
            )
            db.executemany("INSERT INTO posts VALUES (?, ?, ?, ?)", rows)
        # After the bulk load, in one grouped pass: from now on every change to posts
        # keeps its page's facts.
        install_facts(db)
        # Write-ahead logging (kept in the file): readers in every worker never wait
        # for a writer, and each request's version read costs about half as much.
        db.execute("PRAGMA journal_mode=WAL")
    try:
        os.link(partial, path)
    except FileExistsError:
        pass  # another worker's database is in place: read that one
    finally:
        partial.unlink()


def connect() -> sqlite3.Connection:
    """Open the blog database read-only."""
    return sqlite3.connect(f"file:{DATABASE}?mode=ro", uri=True)


# -- PostgreSQL (DATABASE_URL) -----------------------------------------------------------

#: The advisory lock the workers take turns on while one creates the tables: any
#: number the app uses for nothing else.
SETUP_LOCK = 20_200_101
metadata = MetaData()
#: The posts on PostgreSQL: ``updated_at`` is a ``timestamptz``, an instant, which
#: PostgreSQL gives back in the session's time zone (its ``TimeZone`` setting).
posts_table = Table(
    "posts",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("title", Text, nullable=False),
    Column("tag", Text, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)


def create_tables(conn: Connection, posts: int = POST_COUNT) -> None:
    """Create and fill the posts table and its page facts, unless it exists.

    In one transaction (the caller's) under an advisory lock: the gunicorn workers all
    run this at start-up, and the first one fills the table while the others wait for
    it, then find it there, complete.
    """
    conn.execute(select(func.pg_advisory_xact_lock(SETUP_LOCK)))
    if inspect(conn).has_table("posts"):
        # Idempotent: a table of an older version of this example gets its facts.
        sqla.install_page_facts(
            conn, "posts", "id", PAGE_FACTS, lastmod="updated_at", page_width=PAGE_WIDTH
        )
        return
    metadata.create_all(conn)
    # Batches of 10,000 rows, which SQLAlchemy sends as multi-row INSERTs (1,000 rows
    # each), all in one transaction: under two seconds for the 120,000 posts.
    columns = [column.name for column in posts_table.columns]
    rows = (dict(zip(columns, post, strict=True)) for post in stand_in_posts(posts))
    while batch := list(islice(rows, 10_000)):
        conn.execute(insert(posts_table), batch)
    # The ids were given: new posts are numbered after them.
    conn.execute(select(func.setval(func.pg_get_serial_sequence("posts", "id"), posts)))
    # After the bulk load, as on SQLite: from now on every change to posts keeps its
    # page's facts.
    sqla.install_page_facts(
        conn, "posts", "id", PAGE_FACTS, lastmod="updated_at", page_width=PAGE_WIDTH
    )


# -- the sitemap -------------------------------------------------------------------------

#: ``url_for("post", post_id=..., _external=True)``, built several times faster: the
#: rule's text and the site's base URL are worked out once per request, not per post.
post_url = url_builder("post")


def post_row(row: tuple[int, Any]) -> tuple[str, Any, None, None, list[str]]:
    """One post's sitemap row, from its database row ``(id, updated_at)``.

    A tuple ``(loc, lastmod, changefreq, priority, images)`` is checked exactly as
    ``Entry(loc, lastmod=..., images=...)`` would be, but written in one pass with no
    object per post: the fast way for a source of many rows. ``updated_at`` is text
    on SQLite, a ``datetime`` on PostgreSQL: the sitemap takes either.
    """
    url = post_url.build({"post_id": row[0]})
    # The cover's URL is the post's plus a suffix (see the cover route): one URL built
    # per row, not two, on pages of 50,000 rows.
    return (url, row[1], None, None, [f"{url}/cover.svg"])


#: The PostgreSQL engine (None on SQLite).
engine: Engine | None = None
#: The posts in id order, in pages of PAGE_WIDTH ids. ``updated_at`` is each post's
#: lastmod; the page facts make every fact of a page exact and cheap.
posts: SQLiteSource | sqla.SQLAlchemySource
if DATABASE_URL:
    engine = create_engine(engine_url(DATABASE_URL, backends={"postgresql"}))
    with engine.begin() as conn:
        create_tables(conn)
    # No connection of the set-up stays open: processes forked from this one (gunicorn
    # --preload) must each open their own.
    engine.dispose()
    posts = sqla.SQLAlchemySource(
        engine,
        posts_table,
        key="id",
        build=post_row,
        columns=("id", "updated_at"),
        lastmod="updated_at",
        page_facts=PAGE_FACTS,
    )
else:
    create_database(DATABASE)
    posts = SQLiteSource(
        connect,
        "posts",
        "id",
        post_row,
        columns=("id", "updated_at"),
        lastmod="updated_at",
        page_facts=PAGE_FACTS,
        row_factory=None,  # post_row takes plain tuples: cheaper than sqlite3.Row per row
    )


def post_title(post_id: int) -> str | None:
    """The title of post ``post_id``; None if there is no such post."""
    if engine is not None:
        with engine.connect() as conn:
            title: str | None = conn.scalar(
                select(posts_table.c.title).where(posts_table.c.id == post_id)
            )
            return title
    with closing(connect()) as db:
        row = db.execute("SELECT title FROM posts WHERE id = ?", (post_id,)).fetchone()
    return None if row is None else str(row[0])


app = Flask(__name__)
# The feed of recent changes (/sitemap-recent.atom), and an IndexNow key kept beside
# the database (made on first start, served at /<key>.txt) for `flask sitemap indexnow`.
app.config["SITEMAP_FEED"] = True
app.config["SITEMAP_INDEXNOW_KEY_FILE"] = str(DATABASE.with_name(f"{DATABASE.stem}-indexnow.key"))
app.config.from_prefixed_env()  # FLASK_SITEMAP_BASE_URL -> SITEMAP_BASE_URL
sitemapper = Sitemapper(app)
sitemapper.add_source("posts", posts)


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
@sitemapper.include(params=TAG_PARAMS, changefreq="weekly")
def tag(tag: str) -> str:
    if tag not in TAGS:
        abort(404)
    return f"<h1>Posts tagged {tag}</h1>"


@app.get("/posts/<int:post_id>")
def post(post_id: int) -> str:
    title = post_title(post_id)
    if title is None:
        abort(404)
    return f"<h1>{title}</h1>"


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
