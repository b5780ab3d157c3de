"""A FastAPI shop over SQLite or PostgreSQL whose sitemap lists every product.

Run it from this folder::

    uvicorn app:app                      # then open http://127.0.0.1:8000/sitemap.xml

* On first start-up 75,000 products are written to ``shop.db`` next to this file;
  ``FASTAPI_DATABASE=/path/to/file.db`` puts the database elsewhere.
* ``DATABASE_URL=postgresql://user@host:port/db uvicorn app:app`` serves the same
  products from PostgreSQL instead (``pip install
  "dynamic-sitemaps[asgi,postgresql]"``), through SQLAlchemy's asyncio engine: the first
  worker to start creates and fills the ``products`` table and its page facts, under an
  advisory lock, so the others wait for it and find it filled. A plain ``postgresql://``
  (or ``postgres://``) URL is read with psycopg 3 (its asyncio mode;
  ``sitemap_core.sqla_url.engine_url``); a URL naming its driver
  (``postgresql+asyncpg://``) is taken as given, and ``sqlite:///path/to/shop.db`` names
  the SQLite file.
* ``/``, ``/contact`` and the ``/categories/{category}`` pages are marked with
  ``@routes.include`` under FastAPI's ``@app.get``; the categories' params are a list
  made once from the same constant the category page checks, so listing them costs
  nothing per request (a callable reading the database would be called on every
  request for ``/sitemap.xml``, its 304s included). The products come from the
  library's :class:`~sitemap_core.sql.SQLiteSource`, the fast way to list a big table:
  ``/sitemap.xml`` is an index of ``/sitemap-pages-1.xml`` and
  ``/sitemap-products-1.xml`` / ``-2.xml`` that reads no product, and each page is one
  bounded query (keyset paging) whose rows are written out as they are read. It is a
  plain sync source: the middleware pulls and writes each page in one worker thread of
  its own pool, so the event loop only sends finished chunks. On PostgreSQL the
  products come from :class:`~sitemap_core.sqla.AsyncSQLAlchemySource` instead, whose
  queries run on the event loop. The products' URLs come
  from ``url_builder("product")``: exactly what ``url_for`` gives, at a fraction of
  its cost per row.
* Page facts (:func:`~sitemap_core.sql.install_page_facts`, on PostgreSQL
  :func:`~sitemap_core.sqla.install_page_facts`): triggers keep, for each page of
  ids, its count, newest ``updated_at``, when it last changed and a version. A page
  holds the ids of its range and keeps its URLs until they are deleted, so a write
  changes one page's ETag and one ``<lastmod>`` in the index; the index, a page's
  validators and a 304 are each one small query that never scans the products, in
  any worker, cold or warm.
* Each product lists its photo (``/products/{id}/photo.svg``, drawn on request) as an
  ``<image:image>``; the featured product (id 1) also has a demo video, listed as a
  ``<video:video>`` whose player page is ``/products/1/demo``.
* ``/sitemap.html`` shows the same sitemap to people, page by page.
* ``updated_at`` is stored as SQLite's ``CURRENT_TIMESTAMP`` writes it: UTC text with
  no offset (``2022-01-01 00:00:00``), which the sitemap writes as UTC. On PostgreSQL
  it is a ``timestamptz``, given back (and written) in the session's time zone.
* The sitemap's URLs use the request's host when it is localhost / 127.0.0.1. Set
  ``SITEMAP_BASE_URL=https://shop.example.com`` to fix them instead.
* ``SITEMAP_PAGE_SIZE=1000`` makes the child sitemaps (and their HTML pages) smaller
  than the protocol's 50,000 URLs.
* Rendered pages are cached per process; ``SITEMAP_CACHE=redis://127.0.0.1:6379/0``
  shares them (and their ETags) between workers and machines.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, closing
from datetime import UTC, datetime, timedelta
from itertools import islice
from pathlib import Path
from typing import Any

import aiosqlite
from fastapi import FastAPI, HTTPException
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import (
    Column,
    Connection,
    DateTime,
    Integer,
    MetaData,
    Table,
    Text,
    func,
    insert,
    inspect,
    select,
)
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from asgi_sitemap import Entry, SitemapMiddleware, SitemapRoutes, Video, url_builder
from sitemap_core import sqla
from sitemap_core.sql import SQLiteSource, install_page_facts
from sitemap_core.sqla_url import engine_url

PRODUCT_COUNT = 75_000
CATEGORIES = ("books", "garden", "kitchen", "music", "outdoor", "toys", "tools")
#: The path values of the category pages, in the sitemap's order (by name).
CATEGORY_PARAMS = [{"category": category} for category in sorted(CATEGORIES)]
#: The product with a demo video (the first row of the first page, so the video
#: namespace is declared once, on ``<urlset>``).
FEATURED = 1
DATABASE = Path(os.environ.get("FASTAPI_DATABASE") or Path(__file__).with_name("shop.db"))
#: ``postgresql://user@host:port/db``: the products are on PostgreSQL. Unset or empty,
#: they are in the SQLite file DATABASE, which ``sqlite:///path/to/shop.db`` names too.
DATABASE_URL = os.environ.get("DATABASE_URL", "")
if DATABASE_URL.startswith("sqlite:///"):
    DATABASE, DATABASE_URL = Path(DATABASE_URL.removeprefix("sqlite:///")), ""
#: The table of page facts the triggers keep (see install_page_facts).
PAGE_FACTS = "products_pages"
#: URLs per child sitemap: the protocol's 50,000 unless SITEMAP_PAGE_SIZE says less
#: (smaller pages are quicker to browse at /sitemap.html); a page spans as many ids.
PAGE_SIZE = int(os.environ.get("SITEMAP_PAGE_SIZE") or 50_000)


def stand_in_products(count: int = PRODUCT_COUNT) -> Iterator[tuple[int, str, str, datetime]]:
    """The made-up products ``(id, name, category, updated_at)``, the same on either database."""
    first_update = datetime(2022, 1, 1, tzinfo=UTC)
    for n in range(1, count + 1):
        yield (
            n,
            f"Product {n}",
            CATEGORIES[n % len(CATEGORIES)],
            first_update + timedelta(minutes=11 * n),
        )


# -- SQLite (the default) ----------------------------------------------------------------


def build_catalogue(path: Path, products: int = PRODUCT_COUNT) -> None:
    """Fill a new database at ``path`` with ``products`` products; keep an existing one.

    Built under a name of this process's own, then renamed: a reader (another worker
    starting at the same time) sees either no file or the complete catalogue.
    """
    if path.exists():
        # A catalogue made by an older version of this example (or served with another
        # page size) gets its page facts (idempotent for the same width): a real app
        # does this once, at deployment time.
        with closing(sqlite3.connect(path)) as db:
            install_products_facts(db)
        return
    building = path.with_name(f".{path.name}.building-{os.getpid()}")
    building.unlink(missing_ok=True)
    # UTC text without an offset, as CURRENT_TIMESTAMP writes it.
    rows = (
        (n, name, category, updated_at.strftime("%Y-%m-%d %H:%M:%S"))
        for n, name, category, updated_at in stand_in_products(products)
    )
    try:
        with closing(sqlite3.connect(building)) as db:
            with db:
                db.execute(
                    "CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                    " category TEXT NOT NULL, updated_at TEXT NOT NULL)"
                )
                db.executemany("INSERT INTO products VALUES (?, ?, ?, ?)", rows)
            # After the bulk load (one grouped pass, not a trigger per row): from now
            # on every write to products keeps its page's facts.
            install_products_facts(db)
            # Write-ahead logging (kept in the file): readers in every worker never wait
            # for a writer, and each request's version read costs about half as much.
            db.execute("PRAGMA journal_mode=WAL")
        os.replace(building, path)
    finally:
        building.unlink(missing_ok=True)


def install_products_facts(db: sqlite3.Connection) -> None:
    """Install the products' page facts on SQLite: a page per PAGE_SIZE ids."""
    install_page_facts(db, "products", "id", PAGE_FACTS, lastmod="updated_at", page_width=PAGE_SIZE)


def connect() -> sqlite3.Connection:
    """A read-only connection to the catalogue, for the sitemap's source.

    The source calls it from its worker threads; each page gets a connection of its
    own, closed when the page ends (or its client goes away).
    """
    return sqlite3.connect(f"file:{DATABASE}?mode=ro", uri=True)


def open_catalogue() -> aiosqlite.Connection:
    """A read-only connection to the catalogue for the app's pages (``async with``)."""
    return aiosqlite.connect(f"file:{DATABASE}?mode=ro", uri=True)


# -- PostgreSQL (DATABASE_URL) -----------------------------------------------------------

#: The advisory lock the workers take turns on while one creates the tables: any
#: number the app uses for nothing else.
SETUP_LOCK = 20_220_101
metadata = MetaData()
#: The products on PostgreSQL: ``updated_at`` is a ``timestamptz`` (an instant).
products_table = Table(
    "products",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", Text, nullable=False),
    Column("category", Text, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)


def create_tables(conn: Connection, products: int = PRODUCT_COUNT) -> None:
    """Create and fill the products table and its page facts, unless it exists.

    In one transaction (the caller's) under an advisory lock: every uvicorn worker
    runs this at start-up, and the first one fills the table while the others wait
    for it, then find it there, complete. Sync code: the lifespan runs it on the async
    engine's connection with ``run_sync``.
    """
    conn.execute(select(func.pg_advisory_xact_lock(SETUP_LOCK)))
    if inspect(conn).has_table("products"):
        # Idempotent for the same width; an older table or another width gets them now.
        install_pg_facts(conn)
        return
    metadata.create_all(conn)
    # Batches of 10,000 rows, which SQLAlchemy sends as multi-row INSERTs (1,000 rows
    # each), all in one transaction: about a second for the 75,000 products.
    columns = [column.name for column in products_table.columns]
    rows = (dict(zip(columns, product, strict=True)) for product in stand_in_products(products))
    while batch := list(islice(rows, 10_000)):
        conn.execute(insert(products_table), batch)
    # The ids were given: new products are numbered after them.
    conn.execute(select(func.setval(func.pg_get_serial_sequence("products", "id"), products)))
    # After the bulk load, as on SQLite: from now on every write keeps its page's facts.
    install_pg_facts(conn)


def install_pg_facts(conn: Connection) -> None:
    """Install the products' page facts on PostgreSQL: a page per PAGE_SIZE ids."""
    sqla.install_page_facts(
        conn, "products", "id", PAGE_FACTS, lastmod="updated_at", page_width=PAGE_SIZE
    )


# -- the sitemap -------------------------------------------------------------------------

#: The router's ``url_path_for("product", ...)`` on the site's base URL, built several
#: times faster: the route is found once per request, not once per product.
product_url = url_builder("product")


def product_entry(row: Sequence[Any]) -> Entry:
    """One product's sitemap entry, from its row ``(id, updated_at)``.

    A ``sqlite3.Row`` whose date is text, or a SQLAlchemy ``Row`` whose date is a
    ``datetime``: an ``Entry`` takes either.
    """
    product_id, updated_at = row
    url = product_url(product_id=product_id)
    # The photo's and the demo's URLs are the product's plus a suffix (see their
    # routes): one URL built per row, on pages of 50,000 rows.
    photo = f"{url}/photo.svg"
    videos = None
    if product_id == FEATURED:
        videos = Video(
            thumbnail_loc=photo,
            title=f"Product {product_id} in use",
            description=f"A one-minute demonstration of product {product_id}.",
            player_loc=f"{url}/demo",
            duration=60,
        )
    return Entry(url, lastmod=updated_at, images=[photo], videos=videos)


#: The PostgreSQL engine (None on SQLite): the sitemap's and the product pages'.
engine: AsyncEngine | None = None
#: The products in id order; ``updated_at`` is each one's lastmod, and its maximum
#: over a page that page's newest. The page facts make every fact exact and cheap.
products: SQLiteSource | sqla.AsyncSQLAlchemySource
if DATABASE_URL:
    engine = create_async_engine(engine_url(DATABASE_URL, backends={"postgresql"}))
    products = sqla.AsyncSQLAlchemySource(
        engine,
        products_table,
        key="id",
        build=product_entry,
        columns=("id", "updated_at"),
        lastmod="updated_at",
        page_facts=PAGE_FACTS,
    )
else:
    products = SQLiteSource(
        connect,
        "products",
        "id",
        product_entry,
        columns=("id", "updated_at"),
        lastmod="updated_at",
        page_facts=PAGE_FACTS,
    )


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Build the catalogue before uvicorn starts accepting requests."""
    if engine is None:
        await run_in_threadpool(build_catalogue, DATABASE)
        yield
        return
    async with engine.begin() as conn:
        await conn.run_sync(create_tables)
    try:
        yield
    finally:
        await engine.dispose()  # close the pool's connections before the loop ends


app = FastAPI(title="Shop", lifespan=lifespan)
routes = SitemapRoutes()
app.add_middleware(
    SitemapMiddleware,
    sources={"products": products},
    routes=routes,
    # None: the request's host, if it is a loopback name (else 400).
    base_url=os.environ.get("SITEMAP_BASE_URL") or None,
    # A redis:// URL shares rendered pages between workers; unset: per-process cache.
    cache=os.environ.get("SITEMAP_CACHE") or None,
    page_size=PAGE_SIZE,
    # The feed of recent changes (/sitemap-recent.atom), and an IndexNow key kept
    # beside the database (made on first start, served at /<key>.txt).
    feed=True,
    indexnow_key_file=str(DATABASE.with_name(f"{DATABASE.stem}-indexnow.key")),
)


@app.get("/", response_class=HTMLResponse)
@routes.include(changefreq="daily", priority=1.0)
async def home() -> str:
    """The shop's front page."""
    return "<h1>The shop</h1>"


@app.get("/contact", response_class=HTMLResponse)
@routes.include(changefreq="yearly", priority=0.1)
async def contact() -> str:
    """How to reach the shop."""
    return "<h1>Contact</h1>"


@app.get("/categories/{category}", response_class=HTMLResponse)
@routes.include(params=CATEGORY_PARAMS, changefreq="weekly", priority=0.6)
async def category(category: str) -> str:
    """The products of one category."""
    if category not in CATEGORIES:
        raise HTTPException(status_code=404)
    return f"<h1>{category.title()}</h1>"


async def product_name(product_id: int) -> str | None:
    """The name of product ``product_id``; None if there is no such product."""
    if engine is not None:
        async with engine.connect() as conn:
            name: str | None = await conn.scalar(
                select(products_table.c.name).where(products_table.c.id == product_id)
            )
            return name
    async with (
        open_catalogue() as db,
        db.execute("SELECT name FROM products WHERE id = ?", (product_id,)) as cursor,
    ):
        row = await cursor.fetchone()
    return None if row is None else str(row[0])


@app.get("/products/{product_id}", response_class=HTMLResponse)
async def product(product_id: int) -> str:
    """One product; listed in the sitemap by ``products``, not by a route mark."""
    name = await product_name(product_id)
    if name is None:
        raise HTTPException(status_code=404)
    return f"<h1>{name}</h1>"


@app.get("/products/{product_id}/photo.svg")
async def product_photo(product_id: int) -> Response:
    """The product's photo, drawn on request (the sitemap lists it as the product's image)."""
    hue = product_id * 37 % 360
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="240" height="240">'
        f'<circle cx="120" cy="120" r="110" fill="hsl({hue},55%,50%)"/>'
        '<text x="120" y="130" font-size="26" text-anchor="middle" fill="#fff">'
        f"#{product_id}</text></svg>"
    )
    return Response(svg, media_type="image/svg+xml")


@app.get("/products/{product_id}/demo", response_class=HTMLResponse)
async def product_demo(product_id: int) -> str:
    """The player page of the featured product's demo video."""
    if product_id != FEATURED:
        raise HTTPException(status_code=404)
    return f"<h1>Product {product_id} in use</h1><p>The video player goes here.</p>"
