"""asgi-sitemaps (PyPI) serving the benchmark's 50,000 URLs, driven by bench_peers.

Used as its README shows: a ``Sitemap`` subclass (``items``, ``location``,
``lastmod``, ``changefreq``, ``priority``) wrapped in ``SitemapApp(..., domain=...)``
and mounted as ``Route("/sitemap.xml", sitemap)`` in a Starlette app (the README's
framework). ``items()`` returns the rows (a list, as ``fetch_all`` would);
``location`` returns each row's path, to which the package adds scheme and domain.
The request is a direct ASGI call on one event loop kept for the whole run.
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import datetime
from importlib.metadata import version

import asgi_sitemaps
from peercommon import Fetch, Raw, build_raw, fetch_asgi, path_of, serve
from starlette.applications import Starlette
from starlette.routing import Route

PATH = "/sitemap.xml"


def make_app(raw: list[Raw]) -> Starlette:
    """The Starlette app with asgi-sitemaps listing the rows of ``raw``."""

    class PostSitemap(asgi_sitemaps.Sitemap[Raw]):
        def items(self) -> list[Raw]:
            return raw

        def location(self, item: Raw) -> str:
            return path_of(item[0])

        def lastmod(self, item: Raw) -> datetime:
            return item[1]

        def changefreq(self, item: Raw) -> str:
            return item[2]

        def priority(self, item: Raw) -> float:
            return item[3]

    sitemap = asgi_sitemaps.SitemapApp(PostSitemap(), domain="example.com")
    return Starlette(routes=[Route(PATH, sitemap)])


def main() -> None:
    """Build the app and answer the benchmark's commands."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, required=True)
    args = parser.parse_args()
    raw = build_raw(args.entries)
    app = make_app(raw)
    loop = asyncio.new_event_loop()

    def request(sink: list[bytes] | None) -> Fetch:
        return fetch_asgi(loop, app, PATH, sink)

    serve(
        "asgi-sitemaps",
        request,
        raw,
        {name: version(name) for name in ("asgi-sitemaps", "starlette", "anyio")},
        [
            f"GET {PATH}: the whole document joined in memory, sent as one body message",
            "locations from the rows' paths (the package adds scheme and domain)",
        ],
        asgi_sitemaps.__file__ or "",
    )


if __name__ == "__main__":
    main()
