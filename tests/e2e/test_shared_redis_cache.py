"""Two processes of the Starlette example sharing one Redis: one ETag, one rendering.

Two uvicorn processes (as two machines behind a load balancer would be) serve the same
database file with ``SITEMAP_CACHE`` pointing at one real redis-server. They must give
the same ETag for every document, a page one of them rendered must be sent by the other
from Redis (not rendered again), and a change of the data must show at once in both:
new ETags, the new lastmod in the body, never the cached old page.

Both processes have ``SITEMAP_BASE_URL`` set, as processes behind one public name do:
an ETag includes the document's base URL (its URLs depend on it), and without it each
process would take its own ``127.0.0.1:<port>`` from the Host header.

The example reads the cache URL from the environment and passes it on as it is, which
the middleware refuses today (the xfail tests at the end): the processes here run the
example through ``shared_news.py``, which turns the URL into a ``RedisCache`` where the
middleware would. Once the middleware takes URLs, the shim changes nothing.

Last, Redis failing (down, or refusing writes) must cost the caching, not the sitemap:
checked for the Flask blog (gunicorn) and the Starlette example, each on its own Redis.
"""

from __future__ import annotations

import gzip
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, closing
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path

import httpx
import pytest
import redis
from lxml import etree
from redis_server import RedisServer, redis_server

from .servers import HTTP_TIMEOUT, Server, run_gunicorn, run_uvicorn
from .sites import FLASK_BLOG, STARLETTE_NEWS, ExampleSite
from .wire import Raw, get_raw, request_raw

NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
BASE_URL = "https://news.example.com"
PREFIX = "sitemap:"  # RedisCache's default key prefix
CODINGS = ("identity", "gzip")
PAGE_1 = "/sitemap-articles-1.xml"
PAGE_2 = "/sitemap-articles-2.xml"
#: An article on page 1 (ids 1-50,000) and one on page 2, neither the newest.
EDITED = 12_345
EDITED_BACK = 55_555

SHIM = '''
"""The Starlette example with its SITEMAP_CACHE URL made a RedisCache (see the test)."""
import asgi_sitemap.middleware
from sitemap_core.memory.cache import RedisCache

_default_cache = asgi_sitemap.middleware.default_cache


def _url_aware(setting):
    if isinstance(setting, str):
        return RedisCache(url=setting)
    return _default_cache(setting)


asgi_sitemap.middleware.default_cache = _url_aware

from app import app  # noqa: E402
'''


@dataclass
class Pair:
    """Two processes of the example, their database and their Redis."""

    a: Server
    b: Server
    database: Path
    redis: redis.Redis

    def cache_keys(self) -> set[bytes]:
        """The cache's keys in Redis now."""
        return set(self.redis.scan_iter(match=PREFIX + "*"))


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """Redis, then process A (which creates the database), then B on the same file."""
    folder = tmp_path_factory.mktemp("shared-redis")
    (folder / "shared_news.py").write_text(SHIM)
    database = folder / "articles.db"
    with ExitStack() as stack:
        server = stack.enter_context(redis_server(folder))
        client = stack.enter_context(closing(redis.Redis.from_url(server.url)))

        def start() -> Server:
            env = {
                STARLETTE_NEWS.database_variable: str(database),
                "SITEMAP_CACHE": server.url,
                "SITEMAP_BASE_URL": BASE_URL,
            }
            run = run_uvicorn(
                "shared_news:app",
                folder,
                folder / "logs",
                env=env,
                pythonpath=[STARLETTE_NEWS.directory],
            )
            return stack.enter_context(run)

        a = start()  # creates the database before it answers
        b = start()
        yield Pair(a, b, database, client)


def _etag(http: httpx.Client, server: Server, path: str, coding: str) -> str:
    head = request_raw(http, "HEAD", server.url(path), {"Accept-Encoding": coding})
    assert head.status == 200, (server.base_url, path)
    return head.headers["etag"]


def _all_etags(pair: Pair, http: httpx.Client) -> dict[tuple[str, str], str]:
    """Every (document, coding)'s ETag, checked equal on both processes."""
    etags = {}
    for path in STARLETTE_NEWS.documents:
        for coding in CODINGS:
            from_a = _etag(http, pair.a, path, coding)
            assert _etag(http, pair.b, path, coding) == from_a, (path, coding)
            etags[path, coding] = from_a
    return etags


def test_both_processes_give_the_same_etags(pair: Pair, http: httpx.Client) -> None:
    etags = _all_etags(pair, http)
    assert len(set(etags.values())) == len(etags) - 1  # robots.txt: one tag, not negotiated


def _key(response: Raw) -> bytes:
    # The cache key is the ETag's opaque part (no W/ of a weak gzip tag, no quotes).
    return (PREFIX + response.headers["etag"].removeprefix("W/").strip('"')).encode()


def test_a_page_rendered_by_one_process_is_sent_by_the_other_from_redis(
    pair: Pair, http: httpx.Client
) -> None:
    before = pair.cache_keys()
    report = []
    for path, coding in [(PAGE_1, "gzip"), (PAGE_2, "identity"), ("/sitemap.xml", "gzip")]:
        headers = {"Accept-Encoding": coding}
        rendered = get_raw(http, pair.a.url(path), headers)
        assert rendered.status == 200
        # A miss in A: nobody had asked for it (only HEADs so far, which render nothing).
        assert _key(rendered) not in before
        assert rendered.streamed, rendered.headers
        # A stored exactly what it sent, under the ETag.
        assert pair.redis.get(_key(rendered)) == rendered.body
        # B has never served this page: a Content-Length means it was not rendered but
        # read whole from the cache, which for B is Redis only. Same bytes, same tag.
        shared = get_raw(http, pair.b.url(path), headers)
        assert shared.status == 200
        assert shared.sized, shared.headers
        assert shared.body == rendered.body
        assert shared.headers["etag"] == rendered.headers["etag"]
        report.append(
            f"{path} {coding}: A streamed {len(rendered.body)} B,"
            f" B sent {shared.headers['content-length']} B from Redis"
        )
    after = pair.cache_keys()
    assert len(after) == len(before) + 3  # one per document and coding, stored by A only
    print(f"\nRedis keys {len(before)} -> {len(after)}; " + "; ".join(report))

    # The decisive check: what B sends for a cached page is whatever Redis holds.
    key = _key(get_raw(http, pair.a.url(PAGE_2), {"Accept-Encoding": "identity"}))
    original = pair.redis.get(key)
    assert isinstance(original, bytes)
    try:
        pair.redis.set(key, b"planted in Redis by the test\n")
        planted = get_raw(http, pair.b.url(PAGE_2), {"Accept-Encoding": "identity"})
        assert planted.body == b"planted in Redis by the test\n"
    finally:
        pair.redis.set(key, original)


def _update(database: Path, article: int, when: datetime) -> str:
    stamp = when.isoformat()
    with closing(sqlite3.connect(database)) as db, db:
        db.execute("UPDATE articles SET updated_at = ? WHERE id = ?", (stamp, article))
    return stamp


def _stored(database: Path, query: str, *args: object) -> str:
    with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
        (value,) = db.execute(query, args).fetchone()
    return str(value)


def _lastmod_of(body: bytes, loc: str) -> str | None:
    for url in etree.fromstring(body).iterfind("sm:url", NS):
        if url.findtext("sm:loc", namespaces=NS) == loc:
            return url.findtext("sm:lastmod", namespaces=NS)
    raise AssertionError(f"{loc} is not in the page")


def _child_lastmod(index: bytes, loc: str) -> str | None:
    for child in etree.fromstring(index).iterfind("sm:sitemap", NS):
        if child.findtext("sm:loc", namespaces=NS) == loc:
            return child.findtext("sm:lastmod", namespaces=NS)
    raise AssertionError(f"{loc} is not in the index")


def test_a_data_change_shows_at_once_in_both_processes(pair: Pair, http: httpx.Client) -> None:
    old = _all_etags(pair, http)
    # The old page 1 is in Redis, so a stale answer would be at hand for both.
    for server in (pair.a, pair.b):
        assert get_raw(http, server.url(PAGE_1), {"Accept-Encoding": "gzip"}).status == 200
    newest = datetime.fromisoformat(_stored(pair.database, "SELECT MAX(updated_at) FROM articles"))
    # An edit of article EDITED now: it becomes the newest article of all.
    edited_at = newest + timedelta(days=1)
    written_after = datetime.now(UTC).replace(microsecond=0)
    stamp = _update(pair.database, EDITED, edited_at)
    written_before = datetime.now(UTC)

    new = _all_etags(pair, http)  # equal on both processes, checked inside
    # The old page is still in Redis, under its old ETag: only the key moved on.
    assert (
        PREFIX + old[PAGE_1, "gzip"].removeprefix("W/").strip('"')
    ).encode() in pair.cache_keys()
    for path in ("/sitemap.xml", PAGE_1):
        for coding in CODINGS:
            assert new[path, coding] != old[path, coding], (path, coding)
    loc = f"{BASE_URL}/articles/{EDITED}"
    loc_of_page = f"{BASE_URL}{PAGE_1}"
    for first, second in ((pair.b, pair.a), (pair.a, pair.b)):
        for coding in CODINGS:
            headers = {"Accept-Encoding": coding}
            # The client's old copy is not current any more: the whole new page.
            renewed = get_raw(
                http, first.url(PAGE_1), {**headers, "If-None-Match": old[PAGE_1, coding]}
            )
            assert renewed.status == 200
            assert renewed.headers["etag"] == new[PAGE_1, coding]
            # The page changed when the edit was written (its page facts say so), later
            # than any of its rows' dates: that is its Last-Modified and its lastmod in
            # the index, while the row keeps its own date.
            modified = parsedate_to_datetime(renewed.headers["last-modified"])
            assert written_after <= modified <= written_before, stamp
            body = gzip.decompress(renewed.body) if coding == "gzip" else renewed.body
            assert datetime.fromisoformat(_lastmod_of(body, loc) or "") == edited_at, stamp
            # And the other process sends that same new page.
            other = get_raw(http, second.url(PAGE_1), headers)
            assert other.body == renewed.body
            index = httpx.get(second.url("/sitemap.xml"), timeout=HTTP_TIMEOUT)
            child = datetime.fromisoformat(_child_lastmod(index.content, loc_of_page) or "")
            assert child.replace(microsecond=0) == modified


def test_an_edit_that_moves_a_lastmod_back_shows_too(pair: Pair, http: httpx.Client) -> None:
    before = _etag(http, pair.a, PAGE_2, "gzip")
    assert get_raw(http, pair.a.url(PAGE_2), {"Accept-Encoding": "gzip"}).status == 200
    query = "SELECT updated_at FROM articles WHERE id = ?"
    earlier = datetime.fromisoformat(_stored(pair.database, query, EDITED_BACK)) - timedelta(days=1)
    _update(pair.database, EDITED_BACK, earlier)
    page = httpx.get(pair.b.url(PAGE_2), timeout=HTTP_TIMEOUT)
    lastmod = _lastmod_of(page.content, f"{BASE_URL}/articles/{EDITED_BACK}")
    assert datetime.fromisoformat(lastmod or "") == earlier
    assert _etag(http, pair.a, PAGE_2, "gzip") != before


# The documented configuration ------------------------------------------------------------


def _cached_by_redis(server: Server, redis_url: str, path: str) -> None:
    client = redis.Redis.from_url(redis_url)
    try:
        response = httpx.get(server.url(path), timeout=HTTP_TIMEOUT)
        assert response.status_code == 200, response.text[:300]
        assert len(list(client.scan_iter(match=PREFIX + "*"))) == 1
    finally:
        client.close()


def test_starlette_example_takes_its_cache_url_from_the_environment(tmp_path: Path) -> None:
    with redis_server(tmp_path) as server:
        env = {
            STARLETTE_NEWS.database_variable: str(tmp_path / "articles.db"),
            "SITEMAP_CACHE": server.url,
        }
        started = run_uvicorn(
            "app:app", STARLETTE_NEWS.directory, tmp_path / "logs", env=env, any_status=True
        )
        with started as news:
            _cached_by_redis(news, server.url, "/sitemap.xml")


def test_flask_example_takes_its_cache_url_from_the_environment(
    tmp_path: Path, blog_database: Path
) -> None:
    with redis_server(tmp_path) as server:
        # Flask's from_prefixed_env() parses values as JSON and keeps what is not JSON, so
        # the URL arrives in SITEMAP_CACHE as a string.
        env = {FLASK_BLOG.database_variable: str(blog_database), "FLASK_SITEMAP_CACHE": server.url}
        started = run_gunicorn("app:app", FLASK_BLOG.directory, tmp_path / "logs", env=env)
        with started as blog:
            _cached_by_redis(blog, server.url, "/sitemap.xml")


# When Redis fails ------------------------------------------------------------------------

FLASK_SHIM = '''
"""The Flask blog with a RedisCache at REDIS_URL (the site is built on first request)."""
import os

from app import app
from sitemap_core.memory.cache import RedisCache

app.config["SITEMAP_CACHE"] = RedisCache(url=os.environ["REDIS_URL"])
'''

#: Calls a cache makes are "best effort" (PageCache.set's docstring): Redis failing may
#: cost the caching, never the sitemap.


@dataclass
class Lone:
    """One example process with a Redis cache, for tests that break the Redis."""

    site: ExampleSite
    server: Server
    redis_server: RedisServer
    redis: redis.Redis


@pytest.fixture(params=["flask", "starlette"])
def lone(request: pytest.FixtureRequest, tmp_path: Path, blog_database: Path) -> Iterator[Lone]:
    """The Flask blog (gunicorn) or the Starlette example (uvicorn) on its own Redis."""
    with ExitStack() as stack:
        server = stack.enter_context(redis_server(tmp_path))
        client = stack.enter_context(closing(redis.Redis.from_url(server.url)))
        run: AbstractContextManager[Server]
        if request.param == "flask":
            (tmp_path / "redis_blog.py").write_text(FLASK_SHIM)
            env = {FLASK_BLOG.database_variable: str(blog_database), "REDIS_URL": server.url}
            run = run_gunicorn(
                "redis_blog:app",
                tmp_path,
                tmp_path / "logs",
                env=env,
                pythonpath=[FLASK_BLOG.directory],
            )
        else:
            (tmp_path / "shared_news.py").write_text(SHIM)
            env = {
                STARLETTE_NEWS.database_variable: str(tmp_path / "articles.db"),
                "SITEMAP_CACHE": server.url,
            }
            run = run_uvicorn(
                "shared_news:app",
                tmp_path,
                tmp_path / "logs",
                env=env,
                pythonpath=[STARLETTE_NEWS.directory],
            )
        site = FLASK_BLOG if request.param == "flask" else STARLETTE_NEWS
        yield Lone(site, stack.enter_context(run), server, client)


def test_pages_are_served_while_redis_is_down(lone: Lone) -> None:
    page = lone.site.first_item_page
    lone.redis_server.process.terminate()
    lone.redis_server.process.wait(10)
    with httpx.Client(timeout=HTTP_TIMEOUT, trust_env=False) as client:
        for path in ("/sitemap.xml", page):
            response = client.get(lone.server.url(path))
            # Rendered as if there were no cache.
            assert response.status_code == 200, (path, response.text[:200])
            assert response.content.rstrip().endswith((b"</urlset>", b"</sitemapindex>"))


def test_a_page_is_complete_when_redis_refuses_to_store_it(lone: Lone) -> None:
    page = lone.site.first_item_page
    # Reads still work; every write fails with "OOM command not allowed".
    lone.redis.config_set("maxmemory-policy", "noeviction")
    lone.redis.config_set("maxmemory", "1")
    with httpx.Client(timeout=HTTP_TIMEOUT, trust_env=False) as client:
        for _ in range(2):  # nothing is stored, so both are rendered: both must be whole
            response = client.get(lone.server.url(page))
            assert response.status_code == 200
            assert response.content.rstrip().endswith(b"</urlset>")
            assert response.content.count(b"<url>") == 50_000
    assert not list(lone.redis.scan_iter(match=PREFIX + "*"))
