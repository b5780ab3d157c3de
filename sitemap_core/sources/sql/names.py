"""SQL identifiers that the SQL sources interpolate into their statements."""

from __future__ import annotations

import re

from sitemap_core.errors import ConfigurationError

__all__ = ["IDENTIFIER", "quoted"]

#: What an interpolated SQL identifier may look like: no quotes, spaces or dots, so
#: nothing a caller passes can change the statement's shape.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def quoted(kind: str, name: object) -> str:
    """Return ``name`` double-quoted if it is a plain identifier, else raise.

    Quoting on top of the check also lets columns named like keywords (``order``)
    work; the check keeps the quotes from ever being closed by the name itself.
    """
    if not isinstance(name, str) or not IDENTIFIER.fullmatch(name):
        raise ConfigurationError(
            f"{kind} {name!r} is not a plain SQL identifier ([A-Za-z_][A-Za-z0-9_]*);"
            " it is interpolated into SQL, so nothing else is accepted"
        )
    return f'"{name}"'
