"""A Starlette news site over SQLite or PostgreSQL whose sitemap lists every article.

Run it from this folder::

    uvicorn app:app                      # then open http://127.0.0.1:8000/sitemap.xml

* On first start-up 60,000 articles are written to ``articles.db`` next to this file;
  ``STARLETTE_DATABASE=/path/to/file.db`` puts the database elsewhere.
* ``DATABASE_URL=postgresql://user@host:port/db uvicorn app:app`` serves the same
  articles from PostgreSQL instead (``pip install
  "dynamic-sitemaps[asgi,postgresql]"``), through SQLAlchemy's asyncio engine: the first
  worker to start creates and fills the ``articles`` table and its page facts, under an
  advisory lock, so the others wait for it and find it filled. A plain ``postgresql://``
  (or ``postgres://``) URL is read with psycopg 3 (its asyncio mode;
  ``sitemap_core.sqla_url.engine_url``); a URL naming its driver
  (``postgresql+asyncpg://``) is taken as given, and ``sqlite:///path/to/articles.db``
  names the SQLite file.
* ``/``, ``/about`` and the six ``/topics/{topic}`` pages are marked with
  ``SitemapRoutes``; the articles come from the library's
  :class:`~sitemap_core.sql.SQLiteSource`, the fast way to list a big table:
  ``/sitemap.xml`` (an index, as 60,011 URLs need two pages of articles) reads no
  article, and each child sitemap is one bounded query (keyset paging) whose rows are
  written out as they are read. It is a plain sync source: the middleware pulls and
  writes each page in one worker thread of its own pool, so the event loop only sends
  finished chunks, and a sqlite3 connection never meets the loop. On PostgreSQL the
  articles come from :class:`~sitemap_core.sqla.AsyncSQLAlchemySource` instead, whose
  queries run on the event loop.
* Each row becomes a tuple ``(url, updated_at)``, not an ``Entry``: the writer
  validates and writes such rows in one pass, the cheapest way to give entries. The
  URL comes from ``url_builder("article")``: exactly what ``url_for`` gives, at a
  fraction of its cost per row.
* Page facts (:func:`~sitemap_core.sql.install_page_facts`, on PostgreSQL
  :func:`~sitemap_core.sqla.install_page_facts`): triggers keep, for each page of
  ids, its count, newest ``updated_at``, when it last changed and a version. A page
  holds the ids of its range and keeps its URLs until they are deleted, so a write
  changes one page's ETag and one ``<lastmod>`` in the index; the index, a page's
  validators and a 304 are each one small query that never scans the articles, in
  any worker, cold or warm.
* The newsletter page is published in English, German and Spanish
  (``/en/newsletter``, ``/de/newsletter``, ``/es/newsletter``), declared once with
  ``@routes.include(hreflang="lang", languages=[...], x_default="en")``: each of the
  three URLs lists all three as ``xhtml:link`` alternates, plus ``x-default``.
* The article pages themselves are read with aiosqlite (on PostgreSQL, with the same
  asyncio engine as the sitemap), on the event loop.
* The newsroom is in UTC+2. On SQLite each ``updated_at`` is text with that offset,
  which the sitemap keeps. PostgreSQL's ``timestamptz`` keeps the instant only and
  gives it back in the session's time zone: ``ALTER DATABASE news SET timezone TO
  'Etc/GMT-2'`` (the POSIX spelling of UTC+2) shows the newsroom's offset there too.
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
import sqlite3
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, closing
from datetime import datetime, timedelta, timezone
from itertools import islice
from pathlib import Path
from typing import Any

import aiosqlite
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
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse
from starlette.routing import Route

from asgi_sitemap import SitemapMiddleware, SitemapRoutes, url_builder
from sitemap_core import sqla
from sitemap_core.sql import SQLiteSource, install_page_facts
from sitemap_core.sqla_url import engine_url

ARTICLE_COUNT = 60_000
TOPICS = ("python", "asyncio", "databases", "web", "testing", "packaging")
DATABASE = Path(os.environ.get("STARLETTE_DATABASE") or Path(__file__).with_name("articles.db"))
#: ``postgresql://user@host:port/db``: the articles are on PostgreSQL. Unset or empty,
#: they are in the SQLite file DATABASE, which ``sqlite:///path/to/articles.db`` names too.
DATABASE_URL = os.environ.get("DATABASE_URL", "")
if DATABASE_URL.startswith("sqlite:///"):
    DATABASE, DATABASE_URL = Path(DATABASE_URL.removeprefix("sqlite:///")), ""
#: The table of page facts the triggers keep (see install_page_facts).
PAGE_FACTS = "articles_pages"
#: URLs per child sitemap: the protocol's 50,000 unless SITEMAP_PAGE_SIZE says less
#: (smaller pages are quicker to browse at /sitemap.html); a page spans as many ids.
PAGE_SIZE = int(os.environ.get("SITEMAP_PAGE_SIZE") or 50_000)
# The newsroom is in UTC+2: lastmod is written with that offset, and the sitemap keeps it.
NEWSROOM_TIME = timezone(timedelta(hours=2))
ROBOTS_TXT = "User-agent: *\nDisallow: /admin/\n"
#: The newsletter page in each language it is published in (the path's first segment).
NEWSLETTER = {
    "en": "Subscribe to our newsletter",
    "de": "Abonnieren Sie unseren Newsletter",
    "es": "Suscríbase a nuestro boletín",
}


def stand_in_articles(count: int = ARTICLE_COUNT) -> Iterator[tuple[int, str, str, datetime]]:
    """The made-up articles ``(id, title, topic, updated_at)``, the same on either database."""
    first = datetime(2021, 3, 1, 9, 0, tzinfo=NEWSROOM_TIME)
    for n in range(1, count + 1):
        yield n, f"Article {n}", TOPICS[n % len(TOPICS)], first + timedelta(minutes=23 * n)


# -- SQLite (the default) ----------------------------------------------------------------


def create_database(path: Path, count: int = ARTICLE_COUNT) -> None:
    """Write ``count`` articles and their page facts to ``path`` unless it exists.

    The rows go to a private file that is renamed into place once complete: with
    ``uvicorn --workers N`` every worker runs this at start-up, and none may open a
    database that another one is still filling. A database made by an older version
    of this example (or run with another page size) gets its page facts installed
    (idempotent for the same width; another width counts the pages again).
    """
    if path.exists():
        with closing(sqlite3.connect(path)) as db:
            install_articles_facts(db)
        return
    private = path.with_name(f".{path.name}.{os.getpid()}.partial")
    private.unlink(missing_ok=True)  # left over by a crashed run with the same pid
    # SQLite has no date type: updated_at is ISO 8601 text, with the newsroom's offset.
    rows = (
        (n, title, topic, updated_at.isoformat())
        for n, title, topic, updated_at in stand_in_articles(count)
    )
    try:
        with closing(sqlite3.connect(private)) as db:
            with db:
                db.execute(
                    "CREATE TABLE articles (id INTEGER PRIMARY KEY, title TEXT NOT NULL,"
                    " topic TEXT NOT NULL, updated_at TEXT NOT NULL)"
                )
                db.executemany("INSERT INTO articles VALUES (?, ?, ?, ?)", rows)
            # After the bulk load (one grouped pass, not a trigger per row): from now
            # on every write to articles keeps its page's facts.
            install_articles_facts(db)
            # Write-ahead logging (kept in the file): readers in every worker never wait
            # for a writer, and each request's version read costs about half as much.
            db.execute("PRAGMA journal_mode=WAL")
        os.replace(private, path)
    finally:
        private.unlink(missing_ok=True)


def install_articles_facts(db: sqlite3.Connection) -> None:
    """Install the articles' page facts on SQLite: a page per PAGE_SIZE ids."""
    install_page_facts(db, "articles", "id", PAGE_FACTS, lastmod="updated_at", page_width=PAGE_SIZE)


def connect() -> sqlite3.Connection:
    """Open the articles database read-only, for the sitemap's source.

    The source calls it from its worker threads; each page gets a connection of its
    own, closed when the page ends (or its client goes away).
    """
    return sqlite3.connect(f"file:{DATABASE}?mode=ro", uri=True)


def open_async() -> aiosqlite.Connection:
    """Open the articles database read-only for a page of the app (``async with``)."""
    return aiosqlite.connect(f"file:{DATABASE}?mode=ro", uri=True)


# -- PostgreSQL (DATABASE_URL) -----------------------------------------------------------

#: The advisory lock the workers take turns on while one creates the tables: any
#: number the app uses for nothing else.
SETUP_LOCK = 20_210_301
metadata = MetaData()
#: The articles on PostgreSQL: ``updated_at`` is a ``timestamptz`` (an instant).
articles_table = Table(
    "articles",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("title", Text, nullable=False),
    Column("topic", Text, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)


def create_tables(conn: Connection, count: int = ARTICLE_COUNT) -> None:
    """Create and fill the articles table and its page facts, unless it exists.

    In one transaction (the caller's) under an advisory lock: every uvicorn worker
    runs this at start-up, and the first one fills the table while the others wait
    for it, then find it there, complete. Sync code: the lifespan runs it on the async
    engine's connection with ``run_sync``.
    """
    conn.execute(select(func.pg_advisory_xact_lock(SETUP_LOCK)))
    if inspect(conn).has_table("articles"):
        # Idempotent for the same width; an older table or another width gets them now.
        install_pg_facts(conn)
        return
    metadata.create_all(conn)
    # Batches of 10,000 rows, which SQLAlchemy sends as multi-row INSERTs (1,000 rows
    # each), all in one transaction: under a second for the 60,000 articles.
    columns = [column.name for column in articles_table.columns]
    rows = (dict(zip(columns, article, strict=True)) for article in stand_in_articles(count))
    while batch := list(islice(rows, 10_000)):
        conn.execute(insert(articles_table), batch)
    # The ids were given: new articles are numbered after them.
    conn.execute(select(func.setval(func.pg_get_serial_sequence("articles", "id"), count)))
    # After the bulk load, as on SQLite: from now on every write keeps its page's facts.
    install_pg_facts(conn)


def install_pg_facts(conn: Connection) -> None:
    """Install the articles' page facts on PostgreSQL: a page per PAGE_SIZE ids."""
    sqla.install_page_facts(
        conn, "articles", "id", PAGE_FACTS, lastmod="updated_at", page_width=PAGE_SIZE
    )


# -- the sitemap -------------------------------------------------------------------------

#: The router's ``url_path_for("article", ...)`` on the site's base URL, built several
#: times faster: the route is found once per request, not once per article.
article_url = url_builder("article")


def article_row(row: Sequence[Any]) -> tuple[str, Any]:
    """One article's sitemap row: its URL and its ``updated_at`` (the lastmod).

    ``row`` is ``(id, updated_at)``: a ``sqlite3.Row`` whose date is text, or a
    SQLAlchemy ``Row`` whose date is a ``datetime``; the sitemap takes either.
    """
    article_id, updated_at = row
    return article_url(article_id=article_id), updated_at


#: The PostgreSQL engine (None on SQLite): the sitemap's and the article pages'.
engine: AsyncEngine | None = None
#: The articles in id order; ``updated_at`` is each one's lastmod, and its maximum
#: over a page that page's newest. The page facts make every fact exact and cheap.
articles: SQLiteSource | sqla.AsyncSQLAlchemySource
if DATABASE_URL:
    engine = create_async_engine(engine_url(DATABASE_URL, backends={"postgresql"}))
    articles = sqla.AsyncSQLAlchemySource(
        engine,
        articles_table,
        key="id",
        build=article_row,
        columns=("id", "updated_at"),
        lastmod="updated_at",
        page_facts=PAGE_FACTS,
    )
else:
    articles = SQLiteSource(
        connect,
        "articles",
        "id",
        article_row,
        columns=("id", "updated_at"),
        lastmod="updated_at",
        page_facts=PAGE_FACTS,
    )


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


async def article_title(article_id: int) -> str | None:
    """The title of article ``article_id``; None if there is no such article."""
    if engine is not None:
        async with engine.connect() as conn:
            title: str | None = await conn.scalar(
                select(articles_table.c.title).where(articles_table.c.id == article_id)
            )
            return title
    async with (
        open_async() as db,
        db.execute("SELECT title FROM articles WHERE id = ?", (article_id,)) as rows,
    ):
        row = await rows.fetchone()
    return None if row is None else str(row[0])


async def article(request: Request) -> HTMLResponse:
    """One article; not marked: the articles are listed by the ``articles`` source."""
    title = await article_title(request.path_params["article_id"])
    if title is None:
        raise HTTPException(404)
    return HTMLResponse(f"<h1>{title}</h1>")


async def robots(request: Request) -> PlainTextResponse:
    """The site's own rules; the middleware adds the ``Sitemap:`` line."""
    return PlainTextResponse(ROBOTS_TXT)


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    """Create the database before the first request is accepted."""
    if engine is None:
        await run_in_threadpool(create_database, DATABASE)
        yield
        return
    async with engine.begin() as conn:
        await conn.run_sync(create_tables)
    try:
        yield
    finally:
        await engine.dispose()  # close the pool's connections before the loop ends


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
            sources={"articles": articles},
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
    ],
    lifespan=lifespan,
)
