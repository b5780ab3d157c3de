"""Helpers shared by the sitemap_core tests: sites, requests and document parsing."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from lxml import etree

from sitemap_core import BaseURL, Reply, Site, UrlSource, respond

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
SM = {"sm": NS}
ORIGIN = "https://example.com"
BASE = BaseURL.parse(ORIGIN)


def url(i: int, prefix: str = "item") -> str:
    """A distinct URL on the test origin."""
    return f"{ORIGIN}/{prefix}/{i}"


def parse(document: bytes) -> etree._Element:
    """Parse a document safely (no entities, no network), failing on malformed XML."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    return etree.fromstring(document, parser)


def locs(document: bytes) -> list[str]:
    """The text of every ``<loc>`` of a urlset or sitemapindex, in document order."""
    return [str(el.text) for el in parse(document).iterfind(".//sm:loc", SM)]


@dataclass
class Got:
    """A reply with its body already read."""

    reply: Reply
    body: bytes

    @property
    def status(self) -> int:
        return self.reply.status

    def header(self, name: str) -> str | None:
        return self.reply.header(name)


def get(
    site: Site,
    path: str,
    method: str = "GET",
    base: Callable[[], BaseURL] = lambda: BASE,
) -> Got | None:
    """Run ``respond`` and read the whole body (None when the path is not the site's)."""
    reply = respond(site, method, path, base)
    if reply is None:
        return None
    body = reply.body
    assert isinstance(body, Iterable), "the sync path must give a sync body"
    return Got(reply, b"".join(body))


def make_site(
    sources: dict[str, Any] | Sequence[UrlSource],
    page_size: int = 10,
    **kwargs: Any,
) -> Site:
    """A site from ``{name: list-or-callable}`` (or ready UrlSource objects)."""
    if isinstance(sources, dict):
        sources = [UrlSource.from_object(name, obj) for name, obj in sources.items()]
    return Site(sources, page_size=page_size, **kwargs)


class RecordingSlice:
    """A sliceable fake (a stand-in for a SQL query) that records every access."""

    def __init__(self, n: int, prefix: str = "item") -> None:
        self.n = n
        self.prefix = prefix
        self.len_calls = 0
        self.slices: list[slice] = []

    def __len__(self) -> int:
        self.len_calls += 1
        return self.n

    def __getitem__(self, index: slice) -> list[str]:
        assert isinstance(index, slice), f"only slices are expected, got {index!r}"
        self.slices.append(index)
        return [url(i, self.prefix) for i in range(*index.indices(self.n))]
