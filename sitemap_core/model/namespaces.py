"""The XML namespaces a sitemap document can use, and the prefixes we write them with."""

from __future__ import annotations

from typing import Final

__all__ = ["IMAGE_NS", "NEWS_NS", "SITEMAP_NS", "VIDEO_NS", "XHTML_NS"]

#: The Sitemaps protocol 0.9 (``<urlset>``, ``<sitemapindex>``): the default namespace.
SITEMAP_NS: Final = "http://www.sitemaps.org/schemas/sitemap/0.9"
#: Google image sitemaps, written with the prefix ``image:``.
IMAGE_NS: Final = "http://www.google.com/schemas/sitemap-image/1.1"
#: Google video sitemaps, written with the prefix ``video:``.
VIDEO_NS: Final = "http://www.google.com/schemas/sitemap-video/1.1"
#: Google news sitemaps, written with the prefix ``news:``.
NEWS_NS: Final = "http://www.google.com/schemas/sitemap-news/0.9"
#: XHTML, for ``<xhtml:link rel="alternate" hreflang=...>``.
XHTML_NS: Final = "http://www.w3.org/1999/xhtml"
