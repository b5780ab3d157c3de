"""A crowd of slow readers on the Quick start's shape, for the e2e suite and the benchmark.

The Quick start's source is a plain generator: no count, no fingerprint, so its
index is a walk of it and its pages are walked to be spooled until their validators
are known (issue 22). :data:`QUICK_APP` is that app on both fronts, sized by the
environment; :func:`slow_crowd` sends it slow readers spread over its index and
pages, every other one asking gzip, while :func:`~.load.verified_clients` times a
normal client.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from .load import Expectations, SlowRead, slow_reader

#: One plain generator source of ``QUICK_ENTRIES`` entries and a page of the app, on
#: Starlette (``asgi_app``) and Flask (``flask_app``). ``QUICK_URL_FOR=1`` builds each
#: URL with the front's ``url_for``, as the Quick start does; else by formatting.
QUICK_APP = '''
"""The Quick start's shape: a plain generator of QUICK_ENTRIES posts, and the app's pages.

/walks answers how many walks of the generator began (QUICK_PAUSE: seconds each
walk waits before its first entry, so that a crowd surely arrives during it); the
ASGI app's /trims, how many times its sitemap middleware gave the C heap back.
"""
import os
import threading
import time

import flask
from flask import Flask
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route

import asgi_sitemap
from asgi_sitemap import SitemapMiddleware
from flask_sitemapper import Entry, Sitemapper

ENTRIES = int(os.environ["QUICK_ENTRIES"])
PAGE_SIZE = int(os.environ["QUICK_PAGE_SIZE"])
URL_FOR = os.environ.get("QUICK_URL_FOR") == "1"
BASE = "https://quick.example.com"
LASTMOD = "2024-05-01T10:00:00+00:00"
PAUSE = float(os.environ.get("QUICK_PAUSE", "0"))
WALKS = [0]
LOCK = threading.Lock()


def walked():
    with LOCK:
        WALKS[0] += 1
    time.sleep(PAUSE)


def asgi_posts():
    walked()
    for i in range(ENTRIES):
        if URL_FOR:
            loc = asgi_sitemap.url_for("post", slug=f"post-{i}")
        else:
            loc = f"{BASE}/posts/post-{i}"
        yield Entry(loc, lastmod=LASTMOD)


async def home(request):
    return PlainTextResponse("home")


async def post(request):
    return PlainTextResponse(request.path_params["slug"])


async def walks(request):
    return PlainTextResponse(str(WALKS[0]))


async def trims(request):
    # How many times the sitemap middleware of this process gave the C heap back.
    import gc

    from asgi_sitemap.heap import Crowd

    found = [o.trims for o in gc.get_objects() if isinstance(o, Crowd)]
    return PlainTextResponse(str(sum(found)))


asgi_app = Starlette(
    routes=[
        Route("/", home),
        Route("/posts/{slug}", post, name="post"),
        Route("/walks", walks),
        Route("/trims", trims),
    ],
    middleware=[
        Middleware(
            SitemapMiddleware,
            sources={"posts": asgi_posts},
            base_url=BASE,
            page_size=PAGE_SIZE,
        )
    ],
)

flask_app = Flask(__name__)
flask_app.config.update(SITEMAP_BASE_URL=BASE, SITEMAP_PAGE_SIZE=PAGE_SIZE)
sitemapper = Sitemapper(flask_app)


@flask_app.get("/")
def flask_home():
    return "home"


@flask_app.get("/posts/<slug>")
def flask_post(slug):
    return slug


@flask_app.get("/walks")
def flask_walks():
    return str(WALKS[0])


@sitemapper.source("posts")
def flask_posts():
    walked()
    for i in range(ENTRIES):
        if URL_FOR:
            loc = flask.url_for("flask_post", slug=f"post-{i}", _external=True)
        else:
            loc = f"{BASE}/posts/post-{i}"
        yield Entry(loc, lastmod=LASTMOD)
'''


@dataclass(frozen=True)
class QuickSite:
    """The Quick start's app at one size: its environment and what it serves."""

    entries: int
    page_size: int = 50_000
    url_for: bool = False
    #: Seconds each walk of the generator waits before its first entry.
    pause: float = 0.0

    @property
    def env(self) -> dict[str, str]:
        """The environment its servers run with."""
        return {
            "QUICK_ENTRIES": str(self.entries),
            "QUICK_PAGE_SIZE": str(self.page_size),
            "QUICK_URL_FOR": "1" if self.url_for else "0",
            "QUICK_PAUSE": str(self.pause),
        }

    @property
    def pages(self) -> list[str]:
        """The child sitemaps its index lists (none while one sitemap holds all)."""
        count = -(-self.entries // self.page_size)
        return [f"/sitemap-posts-{n}.xml" for n in range(1, count + 1)] if count > 1 else []

    @property
    def documents(self) -> list[str]:
        """The index, then the pages."""
        return ["/sitemap.xml", *self.pages]

    @property
    def expected(self) -> Expectations:
        """What a normal client asks, and what each answer holds: the index, every
        page, and a page of the app."""
        expected: Expectations = {"/sitemap.xml": len(self.pages) or self.entries, "/": None}
        for number, path in enumerate(self.pages):
            expected[path] = min(self.page_size, self.entries - number * self.page_size)
        return expected


def write_quick_app(folder: Path) -> None:
    """Write the Quick start's app module, ``quick_app``, into ``folder``."""
    (folder / "quick_app.py").write_text(QUICK_APP)


def slow_crowd(
    port: int, paths: list[str], count: int, *, rate: int, seconds: float
) -> tuple[list[SlowRead], list[threading.Thread]]:
    """``count`` slow readers spread over ``paths`` in turn, every other one asking
    gzip, all started at once (threads; join them yourself)."""
    results = [SlowRead(path=paths[n % len(paths)]) for n in range(count)]
    threads = [
        threading.Thread(
            target=slow_reader,
            args=(port, result.path),
            kwargs={
                "rate": rate,
                "seconds": seconds,
                "result": result,
                "gzip_ok": (n // len(paths)) % 2 == 1,
            },
            daemon=True,
        )
        for n, result in enumerate(results)
    ]
    for thread in threads:
        thread.start()
    return results, threads
