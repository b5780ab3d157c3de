"""The three example sites, described for the shared end-to-end checks.

An :class:`ExampleSite` says how to start an example (gunicorn or uvicorn, which
variable names its database) and what it must publish: the fixed pages its routes
source lists, and one big table of items (posts, articles, products) with ``id`` and
``updated_at`` columns, served by one sliceable source. The item URLs expected are
read from the database the server uses (:class:`ServedExample`), so the checks compare
the sitemap with the data rather than with a second copy of the example's logic.

Nothing here imports an example (importing creates databases); the values below are
the examples' own constants, repeated, and the ``served`` fixture checks the item
count against the database.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

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

    def __str__(self) -> str:
        return self.name

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
        """Documents whose validators come from rendering them, not from fingerprints.

        robots.txt (always sent with its length), and on the ASGI examples the routes
        source's pages: that source has no fingerprint there, so a worker's first render
        of a page is spooled (its ETag is a digest of the bytes), and its later GETs
        stream on what that render found (see :mod:`sitemap_core.recall`). Flask's route
        source, with short params, is fingerprinted by its params' values.
        """
        if self.name == "flask":
            return ("/robots.txt",)
        return ("/robots.txt", "/sitemap-pages-1.xml", "/sitemap-pages-1.txt")

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

    def serve(self, database: Path, log_dir: Path) -> AbstractContextManager[Server]:
        """Start the example on a free port of 127.0.0.1 with its database at ``database``."""
        run = run_gunicorn if self.server == "gunicorn" else run_uvicorn
        return run(
            "app:app",
            self.directory,
            log_dir,
            workers=self.workers,
            env={
                self.database_variable: str(database),
                # A connection that is dropped instead of closed is otherwise cleaned up
                # silently (aiosqlite's __del__ stops its thread): make it say so in the log.
                "PYTHONWARNINGS": "always::ResourceWarning",
            },
        )


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
    # Two workers create the database concurrently at start-up: the atomic rename
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

#: Every example, in the order their tests run.
SITES = (FLASK_BLOG, STARLETTE_NEWS, FASTAPI_SHOP)


def read_only(database: Path) -> closing[sqlite3.Connection]:
    """A read-only connection to an example's database (``with read_only(path) as db``)."""
    return closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True))


@dataclass
class ServedExample:
    """An example site running on a real server, with the item ids of its database."""

    site: ExampleSite
    server: Server
    database: Path
    #: Every item id in the database, ascending: the order of the items' sitemaps.
    item_ids: list[int]

    @classmethod
    def read(cls, site: ExampleSite, server: Server, database: Path) -> ServedExample:
        """Describe ``server``, reading the item ids from ``database``."""
        with read_only(database) as db:
            ids = [row[0] for row in db.execute(f"SELECT id FROM {site.table} ORDER BY id")]
        return cls(site, server, database, ids)

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
        """``updated_at`` of the items ``ids``, as stored."""
        marks = ",".join("?" * len(ids))
        query = f"SELECT id, updated_at FROM {self.site.table} WHERE id IN ({marks})"
        with read_only(self.database) as db:
            return {int(i): str(v) for i, v in db.execute(query, ids)}


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
