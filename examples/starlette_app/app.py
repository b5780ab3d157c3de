"""A Starlette news site over SQLite (read with aiosqlite) whose sitemap lists every article.

Run it from this folder::

    uvicorn app:app                      # then open http://127.0.0.1:8000/sitemap.xml

* On first start-up 60,000 articles are written to ``articles.db`` next to this file;
  ``STARLETTE_DATABASE=/path/to/file.db`` puts the database elsewhere.
* ``/``, ``/about`` and the six ``/topics/{topic}`` pages are marked with
  ``SitemapRoutes``; the articles come from :class:`ArticlePages`, an ``AsyncSliceable``:
  ``/sitemap.xml`` (an index, as 60,008 URLs need two pages of articles) costs one
  ``COUNT(*)``, and each child sitemap one ``LIMIT/OFFSET`` query whose rows are
  streamed out as they arrive.
* The newsletter page is published in English, German and Spanish
  (``/en/newsletter``, ``/de/newsletter``, ``/es/newsletter``), declared once with
  ``@routes.include(hreflang="lang", languages=[...], x_default="en")``: each of the
  three URLs lists all three as ``xhtml:link`` alternates, plus ``x-default``.
* ``/sitemap.html`` shows the same sitemap to people, page by page.
* The app serves its own ``/robots.txt``; the middleware keeps it and appends the
  ``Sitemap:`` line.
* The sitemap's URLs use the request's host when it is localhost / 127.0.0.1. Set
  ``SITEMAP_BASE_URL=https://news.example.com`` to fix them instead (needed behind a
  proxy or on a public host, whose Host header is not trusted).
* ``SITEMAP_PAGE_SIZE=1000`` makes the child sitemaps (and their HTML pages) smaller
  than the protocol's 50,000 URLs.
* Rendered pages are cached per process; ``SITEMAP_CACHE=redis://127.0.0.1:6379/0``
  shares them (and their ETags) between workers and machines.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path

import aiosqlite
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse
from starlette.routing import Route

from asgi_sitemap import Entry, SitemapMiddleware, SitemapRoutes, url_for

ARTICLE_COUNT = 60_000
TOPICS = ("python", "asyncio", "databases", "web", "testing", "packaging")
DATABASE = Path(os.environ.get("STARLETTE_DATABASE") or Path(__file__).with_name("articles.db"))
# The newsroom is in UTC+2: lastmod is written with that offset, and the sitemap keeps it.
NEWSROOM_TIME = timezone(timedelta(hours=2))
ROBOTS_TXT = "User-agent: *\nDisallow: /admin/\n"
#: The newsletter page in each language it is published in (the path's first segment).
NEWSLETTER = {
    "en": "Subscribe to our newsletter",
    "de": "Abonnieren Sie unseren Newsletter",
    "es": "Suscríbase a nuestro boletín",
}


def _article_rows(count: int) -> Iterator[tuple[int, str, str, str]]:
    first = datetime(2021, 3, 1, 9, 0, tzinfo=NEWSROOM_TIME)
    for n in range(1, count + 1):
        updated = first + timedelta(minutes=23 * n)
        yield n, f"Article {n}", TOPICS[n % len(TOPICS)], updated.isoformat()


async def create_database(path: Path, count: int = ARTICLE_COUNT) -> None:
    """Write ``count`` articles to ``path`` unless the file already exists.

    The rows go to a private file that is renamed into place once complete: with
    ``uvicorn --workers N`` every worker runs this at start-up, and none may open a
    database that another one is still filling.
    """
    if path.exists():
        return
    private = path.with_name(f".{path.name}.{os.getpid()}.partial")
    private.unlink(missing_ok=True)  # left over by a crashed run with the same pid
    try:
        async with aiosqlite.connect(private) as db:
            await db.execute(
                "CREATE TABLE articles (id INTEGER PRIMARY KEY, title TEXT NOT NULL,"
                " topic TEXT NOT NULL, updated_at TEXT NOT NULL)"
            )
            await db.executemany("INSERT INTO articles VALUES (?, ?, ?, ?)", _article_rows(count))
            # After the bulk load: from now on every change bumps the version.
            await db.executescript(VERSIONED)
            await db.commit()
        os.replace(private, path)
    finally:
        private.unlink(missing_ok=True)


def connect(path: Path) -> aiosqlite.Connection:
    """Open the articles database read-only (use with ``async with``)."""
    # Batches of 256 rows per hop to the connection's thread, the size the sitemap
    # writer renders at a time (aiosqlite's default is 64).
    return aiosqlite.connect(f"file:{path}?mode=ro", uri=True, iter_chunk_size=256)


#: A version that triggers bump on every change of the table: an exact, O(1) fingerprint.
VERSIONED = """
CREATE TABLE articles_version (n INTEGER NOT NULL);
INSERT INTO articles_version VALUES (0);
CREATE TRIGGER articles_added AFTER INSERT ON articles
    BEGIN UPDATE articles_version SET n = n + 1; END;
CREATE TRIGGER articles_edited AFTER UPDATE ON articles
    BEGIN UPDATE articles_version SET n = n + 1; END;
CREATE TRIGGER articles_removed AFTER DELETE ON articles
    BEGIN UPDATE articles_version SET n = n + 1; END;
"""


class ArticlePages:
    """The articles as an ``AsyncSliceable`` sitemap source."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def count(self) -> int:
        """How many articles there are: the index needs it to number the child pages."""
        async with connect(self.path) as db, db.execute("SELECT COUNT(*) FROM articles") as rows:
            row = await rows.fetchone()
        assert row is not None  # COUNT(*) always returns one row
        return int(row[0])

    async def fingerprint(self) -> int:
        """The table's version, bumped by triggers on every change: ETags and the cache
        key on it, so no edit (even one moving a date back) is missed."""
        async with connect(self.path) as db, db.execute("SELECT n FROM articles_version") as rows:
            row = await rows.fetchone()
        assert row is not None
        return int(row[0])

    async def newest(self, start: int, stop: int) -> str | None:
        """The newest ``updated_at`` of one child page (the index's ``<lastmod>``)."""
        query = (
            "SELECT MAX(updated_at) FROM"
            " (SELECT updated_at FROM articles ORDER BY id LIMIT ? OFFSET ?)"
        )
        async with connect(self.path) as db, db.execute(query, (stop - start, start)) as rows:
            row = await rows.fetchone()
        return None if row is None or row[0] is None else str(row[0])

    async def slice(self, start: int, stop: int) -> AsyncIterator[Entry]:
        """The entries of articles ``[start, stop)`` in id order, one query per child page."""
        # Closing this generator early (the client went away) leaves both `async with`
        # blocks, which close the cursor and the connection.
        query = "SELECT id, updated_at FROM articles ORDER BY id LIMIT ? OFFSET ?"
        async with connect(self.path) as db, db.execute(query, (stop - start, start)) as rows:
            async for article_id, updated_at in rows:
                yield Entry(url_for("article", article_id=article_id), lastmod=updated_at)


routes = SitemapRoutes()


@routes.include(changefreq="hourly", priority=1.0)
async def home(request: Request) -> HTMLResponse:
    """The front page."""
    return HTMLResponse("<h1>The news</h1>")


@routes.include(changefreq="yearly", priority=0.2)
async def about(request: Request) -> HTMLResponse:
    """Who writes the news."""
    return HTMLResponse("<h1>About us</h1>")


@routes.include(params=[{"topic": topic} for topic in TOPICS], changefreq="daily")
async def topic(request: Request) -> HTMLResponse:
    """The articles of one topic."""
    name = request.path_params["topic"]
    if name not in TOPICS:
        raise HTTPException(404)
    return HTMLResponse(f"<h1>Articles about {name}</h1>")


@routes.include(hreflang="lang", languages=list(NEWSLETTER), x_default="en", changefreq="monthly")
async def newsletter(request: Request) -> HTMLResponse:
    """The newsletter page, one URL per language; the sitemap links them as alternates."""
    lang = request.path_params["lang"]
    if lang not in NEWSLETTER:
        raise HTTPException(404)
    return HTMLResponse(f'<html lang="{lang}"><h1>{NEWSLETTER[lang]}</h1></html>')


async def article(request: Request) -> HTMLResponse:
    """One article; not marked: the articles are listed by :class:`ArticlePages`."""
    async with (
        connect(DATABASE) as db,
        db.execute(
            "SELECT title FROM articles WHERE id = ?", (request.path_params["article_id"],)
        ) as rows,
    ):
        row = await rows.fetchone()
    if row is None:
        raise HTTPException(404)
    return HTMLResponse(f"<h1>{row[0]}</h1>")


async def robots(request: Request) -> PlainTextResponse:
    """The site's own rules; the middleware adds the ``Sitemap:`` line."""
    return PlainTextResponse(ROBOTS_TXT)


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    """Create the database before the first request is accepted."""
    await create_database(DATABASE)
    yield


app = Starlette(
    routes=[
        Route("/", home),
        Route("/about", about),
        Route("/topics/{topic}", topic),
        Route("/articles/{article_id:int}", article),
        Route("/{lang}/newsletter", newsletter),
        Route("/robots.txt", robots),
    ],
    middleware=[
        Middleware(
            SitemapMiddleware,
            sources={"articles": ArticlePages(DATABASE)},
            routes=routes,
            # None: the request's host, if it is a loopback name (else 400).
            base_url=os.environ.get("SITEMAP_BASE_URL") or None,
            # A redis:// URL shares rendered pages between workers; unset: per-process cache.
            cache=os.environ.get("SITEMAP_CACHE") or None,
            # URLs per child sitemap: the protocol's 50,000 unless SITEMAP_PAGE_SIZE says less
            # (smaller pages are quicker to browse at /sitemap.html).
            page_size=int(os.environ.get("SITEMAP_PAGE_SIZE") or 50_000),
        )
    ],
    lifespan=lifespan,
)
