"""A FastAPI shop over SQLite (read with aiosqlite) whose sitemap lists every product.

Run it from this folder::

    uvicorn app:app                      # then open http://127.0.0.1:8000/sitemap.xml

* On first start-up 75,000 products are written to ``shop.db`` next to this file;
  ``FASTAPI_DATABASE=/path/to/file.db`` puts the database elsewhere.
* ``/``, ``/contact`` and the ``/categories/{category}`` pages are marked with
  ``@routes.include`` under FastAPI's ``@app.get``; the categories are read from the
  database by an async generator. The products come from :class:`ProductPages`, an
  ``AsyncSliceable``, so ``/sitemap.xml`` is an index of ``/sitemap-pages-1.xml`` and
  ``/sitemap-products-1.xml`` / ``-2.xml``, each page one ``LIMIT/OFFSET`` query.
* Each product lists its photo (``/products/{id}/photo.svg``, drawn on request) as an
  ``<image:image>``; the featured product (id 1) also has a demo video, listed as a
  ``<video:video>`` whose player page is ``/products/1/demo``.
* ``/sitemap.html`` shows the same sitemap to people, page by page.
* ``updated_at`` is stored as SQLite's ``CURRENT_TIMESTAMP`` writes it: UTC text with
  no offset (``2022-01-01 00:00:00``), which the sitemap writes as UTC.
* The sitemap's URLs use the request's host when it is localhost / 127.0.0.1. Set
  ``SITEMAP_BASE_URL=https://shop.example.com`` to fix them instead.
* ``SITEMAP_PAGE_SIZE=1000`` makes the child sitemaps (and their HTML pages) smaller
  than the protocol's 50,000 URLs.
* Rendered pages are cached per process; ``SITEMAP_CACHE=redis://127.0.0.1:6379/0``
  shares them (and their ETags) between workers and machines.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path

import aiosqlite
from fastapi import FastAPI, HTTPException
from fastapi.responses import HTMLResponse, Response

from asgi_sitemap import Entry, SitemapMiddleware, SitemapRoutes, Video, url_for

PRODUCT_COUNT = 75_000
CATEGORIES = ("books", "garden", "kitchen", "music", "outdoor", "toys", "tools")
#: The product with a demo video (the first row of the first page, so the video
#: namespace is declared once, on ``<urlset>``).
FEATURED = 1
DATABASE = Path(os.environ.get("FASTAPI_DATABASE") or Path(__file__).with_name("shop.db"))


async def build_catalogue(path: Path, products: int = PRODUCT_COUNT) -> None:
    """Fill a new database at ``path`` with ``products`` products; keep an existing one.

    Built under a name of this process's own, then renamed: a reader (another worker
    starting at the same time) sees either no file or the complete catalogue.
    """
    if path.exists():
        return
    building = path.with_name(f".{path.name}.building-{os.getpid()}")
    building.unlink(missing_ok=True)
    first_update = datetime(2022, 1, 1)  # naive: UTC, as CURRENT_TIMESTAMP writes it
    rows = (
        (
            n,
            f"Product {n}",
            CATEGORIES[n % len(CATEGORIES)],
            (first_update + timedelta(minutes=11 * n)).strftime("%Y-%m-%d %H:%M:%S"),
        )
        for n in range(1, products + 1)
    )
    try:
        async with aiosqlite.connect(building) as db:
            await db.execute(
                "CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                " category TEXT NOT NULL, updated_at TEXT NOT NULL)"
            )
            await db.executemany("INSERT INTO products VALUES (?, ?, ?, ?)", rows)
            # After the bulk load: from now on every change bumps the version.
            await db.executescript(VERSIONED)
            await db.commit()
        os.replace(building, path)
    finally:
        building.unlink(missing_ok=True)


def open_catalogue() -> aiosqlite.Connection:
    """A read-only connection to the catalogue (use with ``async with``)."""
    return aiosqlite.connect(f"file:{DATABASE}?mode=ro", uri=True, iter_chunk_size=500)


#: A version that triggers bump on every change of the table: an exact, O(1) fingerprint.
VERSIONED = """
CREATE TABLE products_version (n INTEGER NOT NULL);
INSERT INTO products_version VALUES (0);
CREATE TRIGGER products_added AFTER INSERT ON products
    BEGIN UPDATE products_version SET n = n + 1; END;
CREATE TRIGGER products_edited AFTER UPDATE ON products
    BEGIN UPDATE products_version SET n = n + 1; END;
CREATE TRIGGER products_removed AFTER DELETE ON products
    BEGIN UPDATE products_version SET n = n + 1; END;
"""


class ProductPages:
    """The products as an ``AsyncSliceable``: ``count()`` and ``slice()`` are one query each."""

    async def count(self) -> int:
        """The number of products, from which the index numbers its child pages."""
        async with open_catalogue() as db:
            rows = list(await db.execute_fetchall("SELECT COUNT(*) FROM products"))
        return int(rows[0][0])

    async def fingerprint(self) -> int:
        """The table's version, bumped by triggers on every change (see VERSIONED)."""
        async with open_catalogue() as db:
            rows = list(await db.execute_fetchall("SELECT n FROM products_version"))
        return int(rows[0][0])

    async def newest(self, start: int, stop: int) -> str | None:
        """The newest ``updated_at`` of products ``[start, stop)``: a page's lastmod."""
        async with open_catalogue() as db:
            rows = list(
                await db.execute_fetchall(
                    "SELECT MAX(updated_at) FROM"
                    " (SELECT updated_at FROM products ORDER BY id LIMIT ? OFFSET ?)",
                    (stop - start, start),
                )
            )
        return None if rows[0][0] is None else str(rows[0][0])

    async def slice(self, start: int, stop: int) -> AsyncIterator[Entry]:
        """Products ``[start, stop)`` by id, fetched as the page is written out."""
        async with (
            open_catalogue() as db,
            db.execute(
                "SELECT id, updated_at FROM products ORDER BY id LIMIT ? OFFSET ?",
                (stop - start, start),
            ) as cursor,
        ):
            async for product_id, updated_at in cursor:
                url = url_for("product", product_id=product_id)
                # The photo's and the demo's URLs are the product's plus a suffix (see
                # their routes): one url_for per row, on pages of 50,000 rows.
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
                yield Entry(url, lastmod=updated_at, images=[photo], videos=videos)


async def category_params() -> AsyncIterator[dict[str, str]]:
    """The path values of every category page, as the database knows them."""
    async with (
        open_catalogue() as db,
        db.execute("SELECT DISTINCT category FROM products ORDER BY category") as cursor,
    ):
        async for (category,) in cursor:
            yield {"category": category}


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Build the catalogue before uvicorn starts accepting requests."""
    await build_catalogue(DATABASE)
    yield


app = FastAPI(title="Shop", lifespan=lifespan)
routes = SitemapRoutes()
app.add_middleware(
    SitemapMiddleware,
    sources={"products": ProductPages()},
    routes=routes,
    # None: the request's host, if it is a loopback name (else 400).
    base_url=os.environ.get("SITEMAP_BASE_URL") or None,
    # A redis:// URL shares rendered pages between workers; unset: per-process cache.
    cache=os.environ.get("SITEMAP_CACHE") or None,
    # URLs per child sitemap: the protocol's 50,000 unless SITEMAP_PAGE_SIZE says less
    # (smaller pages are quicker to browse at /sitemap.html).
    page_size=int(os.environ.get("SITEMAP_PAGE_SIZE") or 50_000),
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
@routes.include(params=category_params, changefreq="weekly", priority=0.6)
async def category(category: str) -> str:
    """The products of one category."""
    if category not in CATEGORIES:
        raise HTTPException(status_code=404)
    return f"<h1>{category.title()}</h1>"


@app.get("/products/{product_id}", response_class=HTMLResponse)
async def product(product_id: int) -> str:
    """One product; listed in the sitemap by :class:`ProductPages`, not by a route mark."""
    async with (
        open_catalogue() as db,
        db.execute("SELECT name FROM products WHERE id = ?", (product_id,)) as cursor,
    ):
        row = await cursor.fetchone()
    if row is None:
        raise HTTPException(status_code=404)
    return f"<h1>{row[0]}</h1>"


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
