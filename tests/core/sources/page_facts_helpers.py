"""Pieces the page-facts tests share: an async SQLAlchemy source served through the
ASGI front, a SQLite source and its page facts over one ``posts`` table, and the
random-write strategy of the property tests."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from sqlalchemy import Table, text
from sqlalchemy.ext.asyncio import create_async_engine

from sitemap_core.sources.sql.page_reads import summary_sql, utc_text
from sitemap_core.sources.sql.sqla import AsyncSQLAlchemySource
from sitemap_core.sources.sql.sqla import install_page_facts as install_sqla_facts
from sitemap_core.sources.sql.sqlite import SQLiteSource, install_page_facts
from tests.core.helpers import ORIGIN
from tests.core.sources.test_sqla import ORIGIN as SQLA_ORIGIN
from tests.core.sources.test_sqla import Db


@contextmanager
def async_get(adb: Db, table: Table, width: int, **options: Any) -> Iterator[Callable[[str], Any]]:
    """A ``get(path)`` on the ASGI front serving ``table`` through an
    AsyncSQLAlchemySource (``options``: its key, lastmod, build, page_facts); each
    response also carries its body as ``data``, as a Flask test response does."""
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from asgi_sitemap import SitemapMiddleware

    engine = create_async_engine(adb.async_url)
    async_src = AsyncSQLAlchemySource(engine, table, **options)
    app = SitemapMiddleware(
        Starlette(), {"posts": async_src}, base_url=SQLA_ORIGIN, page_size=width
    )
    try:
        with TestClient(app, base_url=SQLA_ORIGIN) as client:

            def get(path: str) -> Any:
                response = client.get(path)
                response.data = response.content
                return response

            yield get
    finally:
        asyncio.run(engine.dispose())


def install_sqla(db: Db, table: Table, read: dict[str, Any], **options: Any) -> None:
    """Page facts over ``table`` as ``read`` (a source's key, lastmod and page_facts)
    names them."""
    install_sqla_facts(
        db.engine,
        table.name,
        read["key"],
        read["page_facts"],
        lastmod=read["lastmod"],
        **options,
    )


def as_client(get: Callable[[str], Any]) -> Any:
    """An object whose ``get`` is ``get``: what helpers taking a test client call."""
    return type("Client", (), {"get": staticmethod(get)})


def install_posts(db: sqlite3.Connection, key: str, lastmod: str, **options: object) -> None:
    """Page facts ``posts_pages`` over the SQLite ``posts`` table, keyed on ``key``."""
    install_page_facts(
        db,
        "posts",
        key,
        "posts_pages",
        lastmod=lastmod,
        **options,  # type: ignore[arg-type]
    )


def posts_source(path: Path, key: str, lastmod: str) -> SQLiteSource:
    """The SQLite ``posts`` table at ``path`` read through its ``posts_pages`` facts,
    each row at ``ORIGIN/<key>``."""
    return SQLiteSource(
        lambda: sqlite3.connect(path),
        "posts",
        key,
        lambda row: (f"{ORIGIN}/{row[key]}", row[lastmod]),
        columns=(key, lastmod),
        lastmod=lastmod,
        page_facts="posts_pages",
    )


def written(path: Path, statements: list[tuple[str, Any]], key: str) -> list[Any]:
    """Runs each statement on the SQLite ``posts`` table at ``path``, a commit each (as
    separate writers would), and returns the ``key`` of each live row."""
    with closing(sqlite3.connect(path)) as db:
        for sql, params in statements:
            db.execute(sql, params)
            db.commit()
        return [k for (k,) in db.execute(f"SELECT {key} FROM posts WHERE state = 'live'")]


def differing(old: dict[str, Any], new: dict[str, Any], keys: Any, prefix: str = "") -> list[str]:
    """The ``keys`` (in their order) whose value differs from ``old`` to ``new``, each
    without ``prefix``: the pages a write changed."""
    return [key.removeprefix(prefix) for key in keys if old[key] != new[key]]


def examples(count: int) -> settings:
    """Hypothesis settings of a property test on a database: ``count`` examples, no
    deadline (a write's triggers take their time), the per-test database fixture
    shared by the examples (each example starts by resetting it)."""
    return settings(
        max_examples=count,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )


def write_operations(
    most_id: int, max_size: int
) -> st.SearchStrategy[list[tuple[str, int, int, int]]]:
    """Random writes: a kind, a post id up to ``most_id``, a month and a count."""
    return st.lists(
        st.tuples(
            st.sampled_from(["insert", "delete", "move", "hide"]),
            st.integers(1, most_id),
            st.integers(1, 4),
            st.integers(1, 3),
        ),
        max_size=max_size,
    )


def stale_texts(db: Db, facts: str) -> list[Any]:
    """PostgreSQL: the facts rows of ``facts`` whose kept lastmod text is not the text
    of their dates as an index would write it from them (none on SQLite, which keeps
    no text)."""
    if db.engine.dialect.name != "postgresql":
        return []
    with db.engine.connect() as conn:
        rows = conn.execute(
            text(
                f"SELECT page, lastmod_text, {utc_text('newest', 'changed')} FROM {facts}"
                f" WHERE lastmod_text IS DISTINCT FROM {utc_text('newest', 'changed')}"
            )
        )
        return list(rows)


def kept_summary(db: Db, facts: str) -> tuple[Any, ...] | None:
    """PostgreSQL: the summary the layout row of ``facts`` keeps (pages, rows, newest
    date, last write, undated pages); None elsewhere."""
    if db.engine.dialect.name != "postgresql":
        return None
    with db.engine.connect() as conn:
        sql = f"SELECT pages, urls, newest, changed, undated FROM {facts}_layout"
        return tuple(conn.execute(text(sql)).one())


def counted_summary(db: Db, facts: str) -> tuple[Any, ...] | None:
    """PostgreSQL: the same summary counted again from the facts rows; None elsewhere."""
    if db.engine.dialect.name != "postgresql":
        return None
    with db.engine.connect() as conn:
        return tuple(conn.execute(text(summary_sql(facts))).one())
