"""The feed of recent changes: an Atom 1.0 document (RFC 4287) beside the sitemap.

The sitemaps protocol lets a site offer a syndication feed of its recently changed
URLs next to its full sitemap, and search engines read RSS 2.0 and Atom 1.0 feeds as
sitemaps: a crawler that polls a small feed finds changes sooner than one re-reading
every page of a large index.

The feed lists the most recently modified URLs across the sources, newest first, one
``<entry>`` per URL: its ``<id>`` and ``<link>`` are the URL (stable for the page, so a
reader sees an update of the same entry) and its ``<updated>`` the URL's lastmod, the
same instant the sitemap gives it. It is bounded by a count (``feed_size``) and,
optionally, an age (``feed_max_days``). Entries without a lastmod are left out.

How a source lists them: :mod:`sitemap_core.model.recent`.
"""

from __future__ import annotations

from collections.abc import Sequence

from sitemap_core.errors import ConfigurationError
from sitemap_core.model.hosts import BaseURL
from sitemap_core.model.recent import Recent
from sitemap_core.model.xmltext import escape

__all__ = [
    "ATOM_TYPE",
    "DEFAULT_FEED_SIZE",
    "FEED_PATH",
    "MAX_FEED_SIZE",
    "check_feed_max_days",
    "check_feed_size",
    "render_feed",
]

#: Where the feed is served (listed in robots.txt and linked from the HTML view).
FEED_PATH = "/sitemap-recent.atom"
#: The feed's media type (RFC 4287, section 7).
ATOM_TYPE = "application/atom+xml; charset=utf-8"
#: URLs in the feed unless ``feed_size`` says otherwise.
DEFAULT_FEED_SIZE = 1_000
#: The most a feed may list: the protocol's limit of URLs per sitemap file.
MAX_FEED_SIZE = 50_000

#: The ``<updated>`` of a feed with no dated entry: Atom requires one, and a fixed
#: instant keeps its ETag stable (the time of the request would renew it every time).
_NO_CHANGE = "1970-01-01T00:00:00Z"


def check_feed_size(value: object, name: str) -> int:
    """``feed_size``: a whole number of URLs from 1 to 50,000, else a
    :class:`ConfigurationError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_FEED_SIZE:
        raise ConfigurationError(
            f"{name}={value!r} is not accepted; accepted: a whole number from 1 to "
            f"{MAX_FEED_SIZE:,} (URLs in the feed of recent changes)"
        )
    return value


def check_feed_max_days(value: object, name: str) -> float | None:
    """``feed_max_days``: None (no age limit) or a positive number of days."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e6:
        raise ConfigurationError(
            f"{name}={value!r} is not accepted; accepted: None or a number of days above"
            " 0 (URLs changed longer ago are left out of the feed of recent changes)"
        )
    return float(value)


def _atom_date(lastmod: str) -> str:
    # RFC 3339 needs a time: a date-only lastmod is its UTC midnight, the instant the
    # sitemap's Last-Modified gives it too.
    return lastmod if "T" in lastmod else f"{lastmod}T00:00:00Z"


def render_feed(base: BaseURL, items: Sequence[Recent]) -> bytes:
    """The Atom document of ``items`` (newest first) for the site at ``base``."""
    feed_url = escape(base.join(FEED_PATH))
    home = escape(base.join("/"))
    updated = _atom_date(items[0].lastmod) if items else _NO_CHANGE
    site = escape(base.url.split("://", 1)[1])
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom">\n'
        f"<id>{feed_url}</id>\n"
        f"<title>Recent changes of {site}</title>\n"
        f"<updated>{updated}</updated>\n"
        f'<link rel="self" type="application/atom+xml" href="{feed_url}"/>\n'
        f'<link rel="alternate" href="{home}"/>\n'
        f"<author><name>{site}</name></author>\n"
    ]
    for item in items:
        loc = escape(item.loc)
        parts.append(
            f"<entry><id>{loc}</id><title>{loc}</title>"
            f"<updated>{_atom_date(item.lastmod)}</updated>"
            f'<link href="{loc}"/></entry>\n'
        )
    parts.append("</feed>\n")
    return "".join(parts).encode("utf-8")
