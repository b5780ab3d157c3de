"""Text that goes into XML: escaping, and the check that XML 1.0 can hold it at all.

Shared by the writers and by the extension values (images, videos, news, alternates),
which render their own fragments once, when they are built.
"""

from __future__ import annotations

import re

from sitemap_core.errors import InvalidEntryError

__all__ = ["check_xml_text", "escape", "escape_uri"]

# Characters XML 1.0 cannot carry at all, even escaped: C0 controls other than tab, LF
# and CR, lone surrogates, and U+FFFE / U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def escape(text: str) -> str:
    """Escape the five XML special characters for element text and attribute values."""
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    if '"' in text:
        text = text.replace('"', "&quot;")
    if "'" in text:
        text = text.replace("'", "&apos;")
    if "\r" in text:
        # A parser turns a raw CR into LF; the reference keeps it.
        text = text.replace("\r", "&#13;")
    return text


def escape_uri(uri: str) -> str:
    """Escape a normalised URI (see :func:`~sitemap_core.model.entries.normalise_url`).

    A normalised URI cannot hold '<', '>' or '"' (they are percent-encoded), so only
    '&' and "'" can need escaping; testing first keeps the common case to two scans.
    """
    if "&" in uri:
        uri = uri.replace("&", "&amp;")
    if "'" in uri:
        uri = uri.replace("'", "&apos;")
    return uri


def check_xml_text(value: object, field: str, *, max_length: int | None = None) -> str:
    """Return ``value`` if it is a ``str`` that XML 1.0 can hold, else raise.

    Leading and trailing whitespace is stripped; empty text is refused (every text field
    of the sitemap extensions is meaningful only when present). ``max_length`` counts
    characters after stripping.
    """
    if not isinstance(value, str):
        raise InvalidEntryError(field, value, "must be a str")
    text = value.strip()
    if not text:
        raise InvalidEntryError(field, value, "must not be empty")
    if _NOT_XML.search(text):
        raise InvalidEntryError(field, value, "contains a character XML cannot hold")
    if max_length is not None and len(text) > max_length:
        raise InvalidEntryError(
            field, value, f"is {len(text)} characters; the limit is {max_length}"
        )
    return text
