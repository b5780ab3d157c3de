"""robots.txt: our own body, or a ``Sitemap:`` line merged into the application's."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from sitemap_core.limits import MAX_ROBOTS_BYTES
from sitemap_core.model.hosts import BaseURL
from sitemap_core.write.feed import FEED_PATH

__all__ = [
    "DEFAULT_RULES",
    "REPLACED_HEADERS",
    "is_mergeable",
    "merge_robots_bytes",
    "merge_sitemap_lines",
    "robots_txt",
    "sitemap_urls",
]

logger = logging.getLogger("sitemap_core")

#: Used when the site has no robots.txt of its own: allow every crawler everything.
DEFAULT_RULES = "User-agent: *\nDisallow:\n"

#: Headers of the app's robots.txt response that describe its original bytes and so
#: are dropped (or replaced) once the Sitemap line is merged in.
REPLACED_HEADERS = frozenset(
    {"content-length", "content-type", "etag", "last-modified", "accept-ranges"}
)


def sitemap_urls(
    base: BaseURL, index_parts: int = 1, extra: Sequence[str] = (), feed: bool = False
) -> list[str]:
    """The sitemap URLs robots.txt declares for a site at ``base``.

    ``/sitemap.xml``, then ``/sitemap-index-N.xml`` for each further part of an index
    split above 50,000 children. Knowing the parts takes the sources' counts; the
    fronts count best-effort and fall back to one part, so that robots.txt keeps
    working even when a source is misconfigured (crawlers read a failing robots.txt
    as "disallow everything"). With ``feed`` (the site serves it) the feed of recent
    changes comes next. ``extra`` are further sitemap URLs, listed after ours
    (another host's sitemap that this host vouches for, a static file).
    """
    paths = ["/sitemap.xml"] + [f"/sitemap-index-{n}.xml" for n in range(2, index_parts + 1)]
    if feed:
        paths.append(FEED_PATH)
    return [base.join(path) for path in paths] + [url for url in extra]


def is_mergeable(status: int, content_type: str) -> bool:
    """Whether the app's own robots.txt response can take a Sitemap line."""
    return status == 200 and content_type.lower().startswith("text/plain")


def merge_robots_bytes(data: bytes, urls: Sequence[str]) -> bytes | None:
    """The app's robots.txt ``data`` with the Sitemap lines, or None if it is too large.

    Bytes that are not UTF-8 are carried through unchanged (surrogate escapes), so the
    app's own rules stay byte for byte what it served.
    """
    if len(data) > MAX_ROBOTS_BYTES:
        return None
    text = data.decode("utf-8", "surrogateescape")
    return merge_sitemap_lines(text, urls).encode("utf-8", "surrogateescape")


def robots_txt(sitemap_urls: Sequence[str], rules: str = DEFAULT_RULES) -> str:
    """Return a robots.txt of ``rules`` followed by one ``Sitemap:`` line per URL."""
    return merge_sitemap_lines(rules, sitemap_urls)


def merge_sitemap_lines(existing: str, sitemap_urls: Sequence[str]) -> str:
    """Return ``existing`` with a ``Sitemap:`` line added for each URL it lacks.

    The application's own lines are kept byte for byte; a URL already declared
    (the directive's name is case-insensitive, RFC 9309) is not declared twice.
    """
    declared = _declared_sitemaps(existing)
    # Each URL once, in order, whether the app declared it or it is listed twice here.
    missing = [url for url in dict.fromkeys(sitemap_urls) if url not in declared]
    if not missing:
        return existing
    text = existing
    if text and not text.endswith("\n"):
        text += "\n"
    if text.strip():
        text += "\n"  # a blank line keeps the Sitemap lines apart from the last group
    merged = text + "".join(f"Sitemap: {url}\n" for url in missing)
    if len(merged) * 4 > MAX_ROBOTS_BYTES:  # not a short file: count its bytes
        _warn_if_past_the_limit(merged)
    return merged


def _declared_sitemaps(text: str) -> set[str]:
    # The URLs of the Sitemap lines of a robots.txt, their comments left out.
    declared = set()
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip().lower() == "sitemap":
            declared.add(value.split("#", 1)[0].strip())
    return declared


#: When the last warning of _warn_if_past_the_limit was logged (time.monotonic()).
_LAST_WARNING: list[float] = []
#: At most one such warning per this many seconds (a robots.txt is asked often).
_WARNING_INTERVAL = 600.0


def _warn_if_past_the_limit(merged: str) -> None:
    # Crawlers read the first 512,000 bytes of robots.txt and ignore the rest, so
    # Sitemap lines written past them are never seen. They stay at the end: moved
    # first, they would push the site's last rules (a Disallow, say) past the limit
    # instead. Logged at most once per interval, not on every request.
    size = len(merged.encode("utf-8", "surrogateescape"))
    if size <= MAX_ROBOTS_BYTES:
        return
    now = time.monotonic()
    if _LAST_WARNING and now - _LAST_WARNING[0] < _WARNING_INTERVAL:
        return
    _LAST_WARNING[:] = [now]
    logger.warning(
        "robots.txt is %d bytes with its Sitemap lines, past the %d bytes crawlers read:"
        " they ignore Sitemap lines after byte %d; shorten the rules before them"
        " (SITEMAP_ROBOTS_RULES / robots_rules, or the app's own robots.txt)",
        size,
        MAX_ROBOTS_BYTES,
        MAX_ROBOTS_BYTES,
    )
