"""Rows read as they arrive, through SQLAlchemy: how an index's pages stream.

With psycopg 3 on a libpq of version 17 or later, the driver's own cursor reads the
rows of one statement in chunks as the server sends them (``Cursor.stream(size=)``):
one round trip, and only a chunk held at a time. Elsewhere a server-side cursor
(``stream_results``) fetches them in batches of one size, which costs a transaction
and a round trip per batch. Either way the statement goes through SQLAlchemy's
cursor events, so that what watches them (logging, tracing, the benchmarks' counts)
sees it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterator, Mapping
from typing import Any

from sqlalchemy import Connection, Dialect, TextClause
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection

__all__ = ["STREAMED_ROWS", "astreamed_rows", "chunks", "streamed_rows"]

#: Rows read at a time.
STREAMED_ROWS = 1_000

#: The first libpq whose chunked mode psycopg's ``stream(size=)`` needs.
_CHUNKED_LIBPQ = 170_000
#: SQLAlchemy's names of psycopg 3, sync and async.
_CHUNKING_DRIVERS = frozenset({"psycopg", "psycopg_async"})


def streamed_rows(
    conn: Connection, statement: TextClause, params: Mapping[str, Any]
) -> Iterator[Any]:
    """The rows of ``statement``, read as they are pulled; a driver's error is
    SQLAlchemy's :class:`~sqlalchemy.exc.DBAPIError`, as from ``execute``."""
    if not chunks(conn.dialect):
        result = conn.execution_options(stream_results=True).execute(statement, params)
        try:
            # Batches of one size from the first: a buffer growing from one row costs
            # a round trip per step.
            yield from result.yield_per(STREAMED_ROWS)
        finally:
            result.close()
        return
    sql, bound = _compiled(conn, statement, params)
    cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    conn.dispatch.before_cursor_execute(conn, cursor, sql, bound, None, False)
    try:
        yield from cursor.stream(sql, bound, size=STREAMED_ROWS)
    except conn.dialect.loaded_dbapi.Error as exc:
        raise _wrapped(conn, sql, bound, exc) from exc
    finally:
        cursor.close()


async def astreamed_rows(
    conn: AsyncConnection, statement: TextClause, params: Mapping[str, Any]
) -> AsyncGenerator[Any, None]:
    """As :func:`streamed_rows`, on an async connection."""
    sync = conn.sync_connection
    assert sync is not None
    if not chunks(sync.dialect):
        result = await conn.stream(statement, params)
        try:
            async for row in result.yield_per(STREAMED_ROWS):
                yield row
        finally:
            await result.close()
        return
    sql, bound = _compiled(sync, statement, params)
    raw = await conn.get_raw_connection()
    cursor = raw.driver_connection.cursor()  # type: ignore[union-attr]
    sync.dispatch.before_cursor_execute(sync, cursor, sql, bound, None, False)
    try:
        async for row in cursor.stream(sql, bound, size=STREAMED_ROWS):
            yield row
    except sync.dialect.loaded_dbapi.Error as exc:
        raise _wrapped(sync, sql, bound, exc) from exc
    finally:
        await cursor.close()


def chunks(dialect: Dialect) -> bool:
    """Whether ``dialect``'s driver streams a statement's rows in chunks itself (then
    without a transaction: a server-side cursor needs one)."""
    pq = getattr(dialect.loaded_dbapi, "pq", None)
    return dialect.driver in _CHUNKING_DRIVERS and pq is not None and pq.version() >= _CHUNKED_LIBPQ


def _compiled(
    conn: Connection, statement: TextClause, params: Mapping[str, Any]
) -> tuple[str, dict[str, Any]]:
    # The statement in the driver's own parameter style, and its parameters.
    compiled = statement.compile(dialect=conn.dialect)
    return str(compiled), dict(compiled.construct_params(dict(params)))


def _wrapped(conn: Connection, sql: str, params: Mapping[str, Any], error: Exception) -> Exception:
    # A driver's error as SQLAlchemy raises it from execute().
    return DBAPIError.instance(sql, dict(params), error, conn.dialect.loaded_dbapi.Error)
