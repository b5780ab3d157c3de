"""Two sites in one Flask app, by host: a blog and a shop, each with its own sitemap.

Run it (from this folder): ``gunicorn app:app`` or ``flask --app app run``, then ask
with a Host header (or add both names to ``/etc/hosts``)::

    curl -H "Host: blog.localhost" http://127.0.0.1:8000/robots.txt
    curl -H "Host: shop.localhost" http://127.0.0.1:8000/sitemap.xml

* ``blog.localhost`` lists its posts (``/posts/<slug>``), ``shop.localhost`` its
  products (``/products/<sku>``); both tables are in ``multisite.db``, created on
  first run (``MULTISITE_DATABASE`` moves it).
* ``SITEMAP_SITES`` declares the two hosts, each with its own sources; the shop also
  has its own IndexNow key. Each host gets its own robots.txt ``Sitemap:`` line,
  index, pages, HTML view and feed, on its own host, from its own memories and
  cache keys; any other host gets 400 on the sitemap paths.
* The home page is shared: it is listed by both sites (a decorated route), each
  under its own host.
* ``FLASK_SITEMAP_CACHE=redis://...`` shares the rendered pages between workers: keys
  are prefixed with each site's host (``sitemap:blog.localhost|...``).
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

from flask import Flask, abort, request

from flask_sitemapper import Sitemapper, SiteSpec, UrlBuilder, url_builder
from sitemap_core.sql import SQLiteSource, install_page_facts

DATABASE = Path(os.environ.get("MULTISITE_DATABASE", Path(__file__).with_name("multisite.db")))
POSTS = 300
PRODUCTS = 180
BLOG = "blog.localhost"
SHOP = "shop.localhost"
#: The shop's IndexNow key, served at /<key>.txt on the shop's host only.
SHOP_KEY = "shop-localhost-indexnow-0001"


def _rows(count: int, word: str) -> list[tuple[int, str, str, str]]:
    # (id, slug, title, updated_at): made-up rows, the same on every run.
    start = datetime(2024, 1, 1, tzinfo=UTC)
    return [
        (i, f"{word}-{i}", f"{word.title()} {i}", (start + timedelta(hours=7 * i)).isoformat())
        for i in range(1, count + 1)
    ]


def create_database(path: Path) -> None:
    """Create both sites' tables and their page facts, unless the file exists.

    Built under a private name and linked into place: several gunicorn workers may
    start at once, and none may see a half-filled database.
    """
    if path.exists():
        return
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    with closing(sqlite3.connect(partial)) as db:
        with db:
            for table, count, word in (("posts", POSTS, "post"), ("products", PRODUCTS, "item")):
                db.execute(
                    f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, slug TEXT NOT NULL,"
                    " title TEXT NOT NULL, updated_at TEXT NOT NULL)"
                )
                db.executemany(f"INSERT INTO {table} VALUES (?, ?, ?, ?)", _rows(count, word))
        for table in ("posts", "products"):
            install_page_facts(db, table, "id", f"{table}_pages", lastmod="updated_at")
        db.execute("PRAGMA journal_mode=WAL")
    try:
        os.link(partial, path)
    except FileExistsError:
        pass  # another worker's database is in place: read that one
    finally:
        partial.unlink()


def connect() -> sqlite3.Connection:
    """Open the database read-only."""
    return sqlite3.connect(f"file:{DATABASE}?mode=ro", uri=True)


create_database(DATABASE)
post_url = url_builder("post")
product_url = url_builder("product")


def table_source(table: str, url: UrlBuilder) -> SQLiteSource:
    """The rows of ``table`` as a sitemap source, each URL built by ``url(slug=...)``."""
    return SQLiteSource(
        connect,
        table,
        "id",
        lambda row: (url(slug=row[1]), row[2], None, None),
        columns=("id", "slug", "updated_at"),
        lastmod="updated_at",
        page_facts=f"{table}_pages",
        row_factory=None,
    )


app = Flask(__name__)
app.config["SITEMAP_FEED"] = True
app.config["SITEMAP_SITES"] = {
    BLOG: {"posts": table_source("posts", post_url)},
    SHOP: SiteSpec({"products": table_source("products", product_url)}, indexnow_key=SHOP_KEY),
}
app.config.from_prefixed_env()  # FLASK_SITEMAP_CACHE -> SITEMAP_CACHE
sitemapper = Sitemapper(app)


def _title(table: str, slug: str) -> str:
    with closing(connect()) as db:
        row = db.execute(f"SELECT title FROM {table} WHERE slug = ?", (slug,)).fetchone()
    if row is None:
        abort(404)
    return str(row[0])


@app.get("/")
@sitemapper.include(changefreq="daily", priority=1.0)
def home() -> str:
    # Any host: this is also what the tests wait for before they start.
    return f"<h1>Welcome to {request.host}</h1>"


@app.get("/posts/<slug>")
def post(slug: str) -> str:
    if request.host.partition(":")[0] != BLOG:
        abort(404)  # a post lives on the blog's host only
    return f"<h1>{_title('posts', slug)}</h1>"


@app.get("/products/<slug>")
def product(slug: str) -> str:
    if request.host.partition(":")[0] != SHOP:
        abort(404)
    return f"<h1>{_title('products', slug)}</h1>"
