"""A PostgreSQL server for the examples: one per session, a fresh database per site.

The server is :func:`postgres.postgres_server` (``tests/postgres.py``): initdb and pg_ctl
in a temporary folder, skipped without PostgreSQL (failed under ``CI=true``). The
examples are given the URL users would write, ``postgresql://user@host:port/db``
(no ``+driver``): each example picks the driver itself, so these tests show that the
plain form works as given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import psycopg
from psycopg import sql

#: A database name the tests make: a plain identifier (no quoting needed in URLs).
_NAME = re.compile(r"[a-z_][a-z0-9_]*")


def plain_url(url: str) -> str:
    """``url`` without its ``+driver``: ``postgresql+psycopg://...`` -> ``postgresql://...``."""
    scheme, sep, rest = url.partition("://")
    return scheme.partition("+")[0] + sep + rest


@dataclass
class PostgresServer:
    """The session's PostgreSQL server, given as the URL of its first database."""

    #: ``postgresql://postgres@127.0.0.1:<port>/sitemap`` (plain: no driver named).
    url: str
    #: The databases made so far (a name is made once per session).
    made: set[str] = field(default_factory=set)

    def url_of(self, database: str) -> str:
        """The plain URL of ``database`` on this server."""
        return self.url.rsplit("/", 1)[0] + "/" + database

    def create_database(self, name: str, timezone: str | None = None) -> str:
        """Create the empty database ``name``; return its plain URL.

        ``timezone`` becomes the database's ``TimeZone`` setting: PostgreSQL gives every
        ``timestamptz`` back in it (and so the examples' sitemaps write it). Set, it
        makes the output independent of the zone the machine's initdb picked.
        """
        if not _NAME.fullmatch(name) or name in self.made:
            raise ValueError(f"not a new plain database name: {name!r}")
        with psycopg.connect(self.url, autocommit=True) as admin:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            if timezone is not None:
                admin.execute(
                    sql.SQL("ALTER DATABASE {} SET timezone TO {}").format(
                        sql.Identifier(name), sql.Literal(timezone)
                    )
                )
        self.made.add(name)
        return self.url_of(name)


def connect(url: str) -> psycopg.Connection[tuple[object, ...]]:
    """A connection to the database of ``url`` (plain or ``+psycopg``), autocommitting."""
    return psycopg.connect(plain_url(url), autocommit=True)
