"""The example sites, described for the shared end-to-end checks.

An :class:`ExampleSite` says how to start an example (gunicorn or uvicorn, which
variable names its database) and what it must publish: the fixed pages its routes
source lists, and one big table of items (posts, articles, products) with ``id`` and
``updated_at`` columns, served by one sliceable source. The item URLs expected are
read from the database the server uses (:class:`ServedExample`), so the checks compare
the sitemap with the data rather than with a second copy of the example's logic.

Each of the three examples runs on its SQLite file (:data:`SQLITE_SITES`), and the
Flask blog and the Starlette news site run on PostgreSQL too (:data:`POSTGRESQL_SITES`,
``DATABASE_URL``): :data:`SITES`, every site the shared checks run on, holds both.

Nothing here imports an example (importing creates databases); the values below are
the examples' own constants, repeated, and the ``served`` fixture checks the item
count against the database.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import pytest

from .postgresql import connect
from .servers import DATABASE_VARIABLES, EXAMPLES_ROOT, Server, run_gunicorn, run_uvicorn

#: Entries per child sitemap: every example uses the protocol's maximum.
PAGE_SIZE = 50_000
#: robots.txt rules of the middleware when the app has none (``sitemap_core.DEFAULT_RULES``).
DEFAULT_ROBOTS = "User-agent: *\nDisallow:\n"


@dataclass(frozen=True)
class ExampleSite:
    """One example app and what its sitemap must list (hashable: a pytest parameter)."""

    #: Short name, used in test ids.
    name: str
    #: Folder of the example's ``app.py``.
    directory: Path
    server: Literal["gunicorn", "uvicorn"]
    workers: int
    #: File name of the database inside a temporary folder.
    database_file: str
    #: True when importing ``app`` creates the database (the Flask blog); False when
    #: the app creates it in its lifespan start-up (the ASGI examples).
    builds_on_import: bool
    #: The items' table (columns ``id`` and ``updated_at``), their source and URL path.
    table: str
    item_source: str
    item_path: str
    item_count: int
    #: The paths the routes source ("pages") lists, in sitemap order.
    page_paths: tuple[str, ...]
    #: What robots.txt holds before the Sitemap line: the app's own file if it serves
    #: one, else the middleware's default rules.
    robots_text: str = DEFAULT_ROBOTS
    own_robots: bool = False
    #: Where the items are: the SQLite file the database variable names, or a
    #: PostgreSQL database, named by ``DATABASE_URL``.
    backend: Literal["sqlite", "postgresql"] = "sqlite"
    #: On PostgreSQL, the database's ``TimeZone``: the offset the sitemap's lastmods
    #: are written in (``timestamptz`` keeps no offset of its own).
    timezone: str = "UTC"

    def __str__(self) -> str:
        return self.name

    def on_postgresql(self, timezone: str = "UTC") -> ExampleSite:
        """The same example, served from PostgreSQL (``DATABASE_URL``)."""
        return replace(
            self, name=f"{self.name}-postgresql", backend="postgresql", timezone=timezone
        )

    @property
    def on_sqlite(self) -> ExampleSite:
        """The same example on its SQLite file (itself, if it is on SQLite)."""
        return next(site for site in SQLITE_SITES if site.directory == self.directory)

    @property
    def database_name(self) -> str:
        """The name of its PostgreSQL database (a plain identifier)."""
        return self.name.replace("-", "_")

    @property
    def database_variable(self) -> str:
        """The environment variable that moves the example's database."""
        return DATABASE_VARIABLES[self.directory.name]

    @property
    def item_pages(self) -> tuple[int, ...]:
        """The numbers of the items' child sitemaps."""
        return tuple(range(1, -(-self.item_count // PAGE_SIZE) + 1))

    @property
    def xml_pages(self) -> tuple[str, ...]:
        """Every child sitemap, in index order."""
        items = (f"/sitemap-{self.item_source}-{n}.xml" for n in self.item_pages)
        return ("/sitemap-pages-1.xml", *items)

    @property
    def text_pages(self) -> tuple[str, ...]:
        """The text twin of every child sitemap."""
        return tuple(path.replace(".xml", ".txt") for path in self.xml_pages)

    @property
    def documents(self) -> tuple[str, ...]:
        """Every document the sitemap machinery serves, robots.txt first."""
        return ("/robots.txt", "/sitemap.xml", *self.xml_pages, *self.text_pages)

    @property
    def sized_documents(self) -> tuple[str, ...]:
        """Documents whose validators come from rendering them, not from fingerprints:
        robots.txt (always sent with its length). The route sources' pages are
        fingerprinted by their params' values, on Flask and on the ASGI examples."""
        return ("/robots.txt",)

    @property
    def fingerprinted_documents(self) -> tuple[str, ...]:
        """Documents whose ETag comes from the sources' fingerprints, not from rendering.

        The index, and the item pages (their source has ``fingerprint``): streamed on a
        cache miss, sent with Content-Length on a hit.
        """
        return tuple(p for p in self.documents if p not in self.sized_documents)

    @property
    def first_item_page(self) -> str:
        """The first child sitemap of the items (50,000 entries, with Last-Modified)."""
        return f"/sitemap-{self.item_source}-1.xml"

    @property
    def big_pages(self) -> tuple[str, ...]:
        """The item pages (10,000 to 50,000 entries): these must be streamed."""
        return tuple(p for p in (*self.xml_pages, *self.text_pages) if self.item_source in p)

    @property
    def unknown_pages(self) -> tuple[str, ...]:
        """Paths shaped like child sitemaps that do not exist: every one must be 404."""
        source, after = self.item_source, len(self.item_pages) + 1
        return (
            f"/sitemap-{source}-{after}.xml",
            f"/sitemap-{source}-0.xml",
            f"/sitemap-{source}-abc.xml",
            f"/sitemap-{source}-{after}.txt",
            f"/sitemap-{source}-01.xml",
            f"/sitemap-{source}--1.xml",
            f"/sitemap-{source}-99999999999999999999999.xml",
            "/sitemap-pages-2.xml",
            "/sitemap-nope-1.xml",
            f"/sitemap-{source}.xml",
        )

    def serve(
        self, database: Path, log_dir: Path, database_url: str | None = None
    ) -> AbstractContextManager[Server]:
        """Start the example on a free port of 127.0.0.1 with its database at ``database``.

        With ``database_url``, its items are in that PostgreSQL database instead;
        ``database`` then only names the folder of its IndexNow key.
        """
        run = run_gunicorn if self.server == "gunicorn" else run_uvicorn
        env = {
            self.database_variable: str(database),
            # A connection that is dropped instead of closed is otherwise cleaned up
            # silently (aiosqlite's __del__ stops its thread): make it say so in the log.
            "PYTHONWARNINGS": "always::ResourceWarning",
        }
        if database_url is not None:
            env["DATABASE_URL"] = database_url
        return run("app:app", self.directory, log_dir, workers=self.workers, env=env)


FLASK_BLOG = ExampleSite(
    name="flask",
    directory=EXAMPLES_ROOT / "flask_blog",
    server="gunicorn",
    workers=2,
    database_file="blog.db",
    builds_on_import=True,
    table="posts",
    item_source="posts",
    item_path="/posts/{}",
    item_count=120_000,
    page_paths=(
        "/",
        "/about",
        "/contact",
        *(
            f"/tags/{tag}"
            for tag in ("flask", "python", "sitemaps", "sqlite", "wsgi", "asgi", "http", "caching")
        ),
        # One route in three languages (hreflang="lang").
        "/en/welcome",
        "/de/welcome",
        "/fr/welcome",
    ),
)

STARLETTE_NEWS = ExampleSite(
    name="starlette",
    directory=EXAMPLES_ROOT / "starlette_app",
    server="uvicorn",
    # Two workers create the database concurrently at start-up: the atomic link
    # is exercised, not just described.
    workers=2,
    database_file="articles.db",
    builds_on_import=False,
    table="articles",
    item_source="articles",
    item_path="/articles/{}",
    item_count=60_000,
    page_paths=(
        "/",
        "/about",
        *(
            f"/topics/{topic}"
            for topic in ("python", "asyncio", "databases", "web", "testing", "packaging")
        ),
        # One route in three languages (hreflang="lang").
        "/en/newsletter",
        "/de/newsletter",
        "/es/newsletter",
    ),
    robots_text="User-agent: *\nDisallow: /admin/\n",
    own_robots=True,
)

FASTAPI_SHOP = ExampleSite(
    name="fastapi",
    directory=EXAMPLES_ROOT / "fastapi_app",
    server="uvicorn",
    workers=1,
    database_file="shop.db",
    builds_on_import=False,
    table="products",
    item_source="products",
    item_path="/products/{}",
    item_count=75_000,
    page_paths=(
        "/",
        "/contact",
        # CATEGORY_PARAMS: sorted by name.
        *(
            f"/categories/{c}"
            for c in ("books", "garden", "kitchen", "music", "outdoor", "tools", "toys")
        ),
    ),
)

#: Every example on its SQLite file.
SQLITE_SITES = (FLASK_BLOG, STARLETTE_NEWS, FASTAPI_SHOP)
#: One WSGI and one ASGI example on PostgreSQL. The newsroom's database is set to its
#: zone (UTC+2, POSIX spelling), as the example's docstring says: its lastmods then
#: keep the offset they have on SQLite.
POSTGRESQL_SITES = (FLASK_BLOG.on_postgresql(), STARLETTE_NEWS.on_postgresql("Etc/GMT-2"))
#: Every site the shared checks run on, in the order their tests run.
SITES = (*SQLITE_SITES, *POSTGRESQL_SITES)


def read_only(database: Path) -> closing[sqlite3.Connection]:
    """A read-only connection to an example's database (``with read_only(path) as db``)."""
    return closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True))


def query(
    database: Path | str, sql: str, parameters: Sequence[object] = ()
) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` (``?`` placeholders) on an example's database.

    ``database`` is a SQLite file (opened read-only) or a PostgreSQL URL.
    """
    if isinstance(database, Path):
        with read_only(database) as db:
            return db.execute(sql, parameters).fetchall()
    # psycopg's placeholder; no query here has a "?" of its own.
    with connect(database) as db:
        return db.execute(sql.replace("?", "%s"), parameters).fetchall()  # type: ignore[arg-type]


@dataclass
class ServedExample:
    """An example site running on a real server, with the item ids of its database."""

    site: ExampleSite
    server: Server
    #: The SQLite file; on PostgreSQL, a path in the folder of the IndexNow key.
    database: Path
    #: Every item id in the database, ascending: the order of the items' sitemaps.
    item_ids: list[int]
    #: The plain ``postgresql://`` URL the example was given (None on SQLite).
    database_url: str | None = None
    #: What the server had logged when it was up: its workers' start-up.
    boot_log: str = ""

    @classmethod
    def read(
        cls, site: ExampleSite, server: Server, database: Path, database_url: str | None = None
    ) -> ServedExample:
        """Describe ``server``, reading the item ids from its database."""
        ids = [
            row[0]
            for row in query(database_url or database, f"SELECT id FROM {site.table} ORDER BY id")
        ]
        return cls(site, server, database, ids, database_url, server.log())

    def query(self, sql: str, parameters: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """The rows of ``sql`` (``?`` placeholders) on the database the server reads."""
        return query(self.database_url or self.database, sql, parameters)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return self.server.base_url

    @property
    def homepage(self) -> str:
        """``http://127.0.0.1:<port>/``."""
        return self.server.homepage

    def url(self, path: str) -> str:
        """The absolute URL of ``path`` on the running server."""
        return self.server.url(path)

    def page_urls(self) -> list[str]:
        """The routes source's URLs, in sitemap order."""
        return [self.url(path) for path in self.site.page_paths]

    def item_url(self, item_id: int) -> str:
        """The URL of one item."""
        return self.url(self.site.item_path.format(item_id))

    def item_urls(self, start: int = 0, stop: int | None = None) -> list[str]:
        """The URLs of the items at positions ``[start, stop)`` of the id order."""
        return [self.item_url(i) for i in self.item_ids[start:stop]]

    def expected_urls(self) -> list[str]:
        """Every URL the sitemap must list: the pages, then every item."""
        return self.page_urls() + self.item_urls()

    def expected_locs(self, path: str) -> list[str]:
        """The URLs child sitemap ``path`` (``.xml`` or ``.txt``) must list, in order."""
        if path.startswith("/sitemap-pages-"):
            return self.page_urls()
        number = int(path.rsplit("-", 1)[1].split(".")[0])
        start = (number - 1) * PAGE_SIZE
        return self.item_urls(start, start + PAGE_SIZE)

    def lastmods(self, ids: list[int]) -> dict[int, str]:
        """``updated_at`` of the items ``ids``, as stored (ISO 8601 text).

        On PostgreSQL, a ``timestamptz`` in the database's time zone, as the example
        reads it.
        """
        marks = ",".join("?" * len(ids))
        rows = self.query(
            f"SELECT id, updated_at FROM {self.site.table} WHERE id IN ({marks})", ids
        )
        return {int(i): v if isinstance(v, str) else v.isoformat() for i, v in rows}


def per_site_document(paths: Callable[[ExampleSite], Iterable[str]]) -> list[Any]:
    """Parameters ``(example, path)`` for every site and each of its ``paths(site)``.

    For ``pytest.mark.parametrize(("example", "path"), ..., indirect=["example"])``:
    the ``example`` fixture then serves that site, and pytest, which groups
    session-scoped parameters by value, runs each site's tests together.
    """
    return [
        pytest.param(site, path, id=f"{site.name}:{path}") for site in SITES for path in paths(site)
    ]


def each(paths: Callable[[ExampleSite], Iterable[str]]) -> pytest.MarkDecorator:
    """Parametrize a test over ``(example, path)`` for every site and its ``paths``."""
    return pytest.mark.parametrize(
        ("example", "path"), per_site_document(paths), indirect=["example"], scope="session"
    )
