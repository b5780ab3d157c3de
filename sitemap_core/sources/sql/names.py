"""SQL identifiers that the SQL sources interpolate into their statements."""

from __future__ import annotations

import re
from collections.abc import Callable

from sitemap_core.errors import ConfigurationError

__all__ = ["IDENTIFIER", "double_quoted", "quoted"]

#: What an interpolated SQL identifier may look like: no quotes, spaces or dots, so
#: nothing a caller passes can change the statement's shape.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def double_quoted(name: str) -> str:
    """``name`` in the standard's double quotes (SQLite, PostgreSQL)."""
    return f'"{name}"'


def quoted(kind: str, name: object, quote: Callable[[str], str] = double_quoted) -> str:
    """Return ``name`` quoted by ``quote`` if it is a plain identifier, else raise.

    Quoting on top of the check also lets columns named like keywords (``order``)
    work; the check keeps the quotes from ever being closed by the name itself.
    ``quote`` is the dialect's (SQLAlchemy's ``identifier_preparer.quote_identifier``:
    backticks on MySQL, which reads double quotes as a string without ``ANSI_QUOTES``).
    """
    if not isinstance(name, str) or not IDENTIFIER.fullmatch(name):
        raise ConfigurationError(
            f"{kind} {name!r} is not a plain SQL identifier ([A-Za-z_][A-Za-z0-9_]*);"
            " it is interpolated into SQL, so nothing else is accepted"
        )
    return quote(name)
