"""HTTP validators and conditional requests (RFC 9110 sections 8.8, 13).

ETags are derived from content and settings only (never from a process, a clock or a
random seed), so every worker on every machine gives the same ETag for the same
document: a document's identity (its path, base URL and paging) plus either the
sources' fingerprints or a digest of the rendered bytes.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime

from sitemap_core.model.stable import stable_bytes
from sitemap_core.model.values import lastmod_instant

__all__ = [
    "FORMAT_VERSION",
    "Validators",
    "digest_etag",
    "fingerprint_etag",
    "http_date",
    "is_not_modified",
    "lastmod_instant",
    "not_modified_headers",
    "parse_http_date",
]

#: Changes whenever the library's output for the same entries changes, so that an
#: upgrade never serves new bytes under an old ETag.
FORMAT_VERSION = "sitemap-core/1"


@dataclass(frozen=True)
class Validators:
    """What identifies a response's content: its ETag and Last-Modified (both optional)."""

    etag: str | None = None
    last_modified: datetime | None = None

    def headers(self) -> list[tuple[str, str]]:
        """The ``ETag`` / ``Last-Modified`` header pairs."""
        out = []
        if self.etag is not None:
            out.append(("ETag", self.etag))
        if self.last_modified is not None:
            out.append(("Last-Modified", http_date(self.last_modified)))
        return out


def not_modified_headers(
    validators: Validators, headers: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    """The headers of a 304: the ETag, Cache-Control and Vary the 200 would have had.

    Nothing else, on every front alike: RFC 9110 (15.4.5) asks a 304 for these and no
    other representation metadata when there is an ETag (Werkzeug strips Last-Modified
    from a 304 in any case, so a Flask 304 could not carry it while others did).
    """
    kept = [(k, v) for k, v in headers if k.lower() in ("cache-control", "vary")]
    etag = validators.etag
    return kept if etag is None else [("ETag", etag), *kept]


def _tag(digest: bytes, coding: str) -> str:
    text = base64.urlsafe_b64encode(digest[:18]).decode("ascii")
    # The same content gzipped is another representation: another tag, and a weak one,
    # since gzip bytes may differ between zlib builds on different machines.
    return f'W/"{text}-gz"' if coding == "gzip" else f'"{text}"'


def fingerprint_etag(identity: str, fingerprints: Iterable[object], coding: str) -> str:
    """The ETag of a document known by its identity and its sources' fingerprints.

    Each fingerprint enters as :func:`~sitemap_core.model.stable.stable_bytes` encodes
    it, so values Python calls equal but that name different versions (``1`` and
    ``1.0``, two datetimes of one instant at different offsets) give different tags.
    """
    hasher = hashlib.sha256(f"{FORMAT_VERSION}\0{identity}\0".encode())
    for value in fingerprints:
        hasher.update(stable_bytes(value))
    return _tag(hasher.digest(), coding)


def digest_etag(identity: str, content_digest: bytes, coding: str) -> str:
    """The ETag of a document known by the SHA-256 of its uncompressed bytes."""
    hasher = hashlib.sha256(f"{FORMAT_VERSION}\0{identity}\0".encode())
    hasher.update(content_digest)
    return _tag(hasher.digest(), coding)


def http_date(moment: datetime) -> str:
    """``moment`` as an IMF-fixdate (``Sun, 06 Nov 1994 08:49:37 GMT``)."""
    return format_datetime(moment.astimezone(UTC).replace(microsecond=0), usegmt=True)


def parse_http_date(text: str) -> datetime | None:
    """Parse an HTTP date; None if it is not one (the header is then ignored)."""
    try:
        parsed = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if parsed is None:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _opaque(tag: str) -> str:
    tag = tag.strip()
    return tag[2:] if tag.startswith("W/") else tag


def _listed_tags(header: str) -> Iterable[str]:
    # Entity-tags may contain commas inside their quotes; split outside quotes only.
    current: list[str] = []
    quoted = False
    for char in header:
        if char == '"':
            quoted = not quoted
        if char == "," and not quoted:
            yield "".join(current)
            current = []
        else:
            current.append(char)
    yield "".join(current)


def is_not_modified(request: Mapping[str, str], validators: Validators) -> bool:
    """Whether a GET/HEAD with these request headers gets 304 (RFC 9110 13.2.2).

    ``If-None-Match`` (weak comparison, ``*``, lists) takes precedence; only without it
    is ``If-Modified-Since`` compared with ``Last-Modified`` (to the second).
    """
    if_none_match = request.get("if-none-match")
    if if_none_match is not None:
        if validators.etag is None:
            return False
        ours = _opaque(validators.etag)
        # One tag (what caches and crawlers send back) needs no splitting.
        tags = (if_none_match,) if "," not in if_none_match else _listed_tags(if_none_match)
        return any(tag.strip() == "*" or _opaque(tag) == ours for tag in tags)
    since_text = request.get("if-modified-since")
    if since_text is None or validators.last_modified is None:
        return False
    since = parse_http_date(since_text)
    if since is None:
        return False
    modified = validators.last_modified.astimezone(UTC).replace(microsecond=0)
    return modified <= since
