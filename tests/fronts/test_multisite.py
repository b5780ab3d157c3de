"""Several sites by host on every front: the Flask extension (``SITEMAP_SITES``), the
WSGI and the ASGI middlewares (``sites=``).

The two declared sites use the same source name, the same fingerprint and the same
page layout on purpose: whatever a front remembers under a source's name or a
fingerprint would then be found by the other site, and only keying by site keeps
them apart. Every response is checked to hold its own host's URLs only.
"""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from flask import Flask, url_for
from werkzeug.test import Client

import asgi_sitemap
from flask_sitemapper import SitemapMiddleware, Sitemapper, SiteSpec
from sitemap_core import ConfigurationError, MemoryCache
from sitemap_core.memory.cache import PageCache

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

BLOG, SHOP = "blog.test", "shop.test"
SHOP_KEY = "shop-test-key-0001"
LOC = re.compile(r"<loc>([^<]*)</loc>")
HOST_OF = re.compile(r"https?://([^/:]+)")


class Listing:
    """A sliceable source with a fingerprint that never changes (the same on every site)."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls

    def __len__(self) -> int:
        return len(self.urls)

    def __getitem__(self, window: slice) -> list[str]:
        return self.urls[window]

    def fingerprint(self) -> int:
        return 1


def urls(host: str, kind: str, n: int) -> list[str]:
    return [f"http://{host}/"] + [f"http://{host}/{kind}/{i}" for i in range(1, n)]


def declared(calls: list[str] | None = None) -> dict[str, Any]:
    """The sites every front serves: two by host, one wildcard (refusing 'banned.')."""

    def member(host: str) -> Any:
        if calls is not None:
            calls.append(host)
        if host.startswith("banned."):
            return None
        return {"pages": Listing(urls(host, "home", 2))}

    return {
        BLOG: {"pages": Listing(urls(BLOG, "posts", 7))},
        SHOP: SiteSpec({"pages": Listing(urls(SHOP, "products", 5))}, indexnow_key=SHOP_KEY),
        "*.users.test": member,
    }


@dataclass
class Reply:
    status: int
    headers: Mapping[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode()


Get = Callable[[str, str, Mapping[str, str]], Reply]


def lower(headers: Any) -> dict[str, str]:
    return {name.lower(): value for name, value in headers}


def hello_wsgi(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    if environ["PATH_INFO"] == "/":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"hello"]
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b"not found"]


async def hello_asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
    status, body = (200, b"hello") if scope["path"] == "/" else (404, b"not found")
    headers = [(b"content-type", b"text/plain")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def flask_app(sites: Mapping[str, Any], **config: Any) -> Flask:
    app = Flask("multisite")
    app.config["SITEMAP_SITES"] = sites
    app.config.update({f"SITEMAP_{name.upper()}": value for name, value in config.items()})

    @app.get("/")
    def home() -> str:
        return "hello"

    Sitemapper(app)
    return app


def wsgi_get(app: Any) -> Get:
    def get(host: str, path: str, headers: Mapping[str, str]) -> Reply:
        response = Client(app).get(path, headers={"Host": host, **headers})
        return Reply(response.status_code, lower(response.headers.items()), response.get_data())

    return get


def asgi_get(app: Any) -> Get:
    client = TestClient(app)

    def get(host: str, path: str, headers: Mapping[str, str]) -> Reply:
        response = client.get(f"http://{host}{path}", headers={"Host": host, **headers})
        return Reply(response.status_code, lower(response.headers.items()), response.content)

    return get


def build(front: str, sites: Mapping[str, Any], **settings: Any) -> Any:
    """The front's app serving ``sites`` with ``settings`` (keyword spelling)."""
    if front == "flask":
        return flask_app(sites, **settings)
    if front == "wsgi":
        return SitemapMiddleware(hello_wsgi, sites=sites, **settings)
    return asgi_sitemap.SitemapMiddleware(hello_asgi, sites=sites, **settings)


def getter(front: str, app: Any) -> Get:
    return asgi_get(app) if front == "asgi" else wsgi_get(app)


FRONTS = ("flask", "wsgi", "asgi")


@pytest.fixture(params=FRONTS)
def front(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def crawl(get: Get, host: str, headers: Mapping[str, str] | None = None) -> set[str]:
    """Every <loc> of the host's sitemap: the index, then each child it lists."""
    headers = headers or {}
    root = get(host, "/sitemap.xml", headers)
    assert root.status == 200, root.text
    found = set(LOC.findall(root.text))
    if "<sitemapindex" not in root.text:
        return found
    pages: set[str] = set()
    for child in found:
        assert HOST_OF.match(child).group(1) == host  # type: ignore[union-attr]
        path = child.split(host, 1)[1]
        page = get(host, path, headers)
        assert page.status == 200, (path, page.text)
        pages |= set(LOC.findall(page.text))
    return pages


def assert_on_host(host: str, text: str) -> None:
    other = {BLOG: SHOP, SHOP: BLOG}.get(host)
    for loc in LOC.findall(text):
        assert HOST_OF.match(loc).group(1) == host, (host, loc)  # type: ignore[union-attr]
    if other is not None:
        assert other not in text, (host, text[:300])


# -- every front ----------------------------------------------------------------------


def test_each_host_has_its_own_robots_index_and_pages(front: str) -> None:
    get = getter(front, build(front, declared(), page_size=2))
    blog, shop = crawl(get, BLOG), crawl(get, SHOP)
    assert blog and shop and not blog & shop
    assert len(blog) == 7 and len(shop) == 5
    for host, locs in ((BLOG, blog), (SHOP, shop)):
        assert {HOST_OF.match(loc).group(1) for loc in locs} == {host}  # type: ignore[union-attr]
        robots = get(host, "/robots.txt", {})
        assert robots.status == 200
        assert f"Sitemap: http://{host}/sitemap.xml" in robots.text
        assert {BLOG, SHOP} - {host} <= {h for h in (BLOG, SHOP) if h not in robots.text}


def test_the_html_view_and_the_feed_are_each_sites_own(front: str) -> None:
    get = getter(front, build(front, declared(), feed=True))
    for host in (BLOG, SHOP):
        html = get(host, "/sitemap.html", {})
        assert html.status == 200 and f"Sitemap of http://{host}" in html.text
        assert {BLOG, SHOP} - {host} <= {h for h in (BLOG, SHOP) if h not in html.text}
        robots = get(host, "/robots.txt", {}).text
        assert f"Sitemap: http://{host}/sitemap-recent.atom" in robots


def test_an_unknown_host_is_refused_and_the_app_keeps_its_paths(front: str) -> None:
    get = getter(front, build(front, declared()))
    for path in ("/sitemap.xml", "/robots.txt", "/sitemap-pages-1.xml", "/sitemap.html"):
        assert get("evil.test", path, {}).status == 400, path
    assert get("evil.test", "/", {}).body == b"hello"
    assert get(BLOG, "/", {}).body == b"hello"


def test_the_indexnow_key_is_served_by_its_site_only(front: str) -> None:
    get = getter(front, build(front, declared()))
    assert get(SHOP, f"/{SHOP_KEY}.txt", {}).body == SHOP_KEY.encode()
    assert get(BLOG, f"/{SHOP_KEY}.txt", {}).status == 404
    assert get("evil.test", f"/{SHOP_KEY}.txt", {}).status == 404


def test_a_wildcard_site_is_made_by_its_callable_once_per_host(front: str) -> None:
    calls: list[str] = []
    get = getter(front, build(front, declared(calls)))
    assert get("ann.users.test", "/", {}).body == b"hello"
    assert calls == []  # the app's own paths never choose a site
    for _ in range(3):
        page = get("ann.users.test", "/sitemap.xml", {})
        assert page.status == 200
        assert_on_host("ann.users.test", page.text)
    assert get("bob.users.test", "/robots.txt", {}).text.endswith(
        "Sitemap: http://bob.users.test/sitemap.xml\n"
    )
    assert get("banned.users.test", "/sitemap.xml", {}).status == 400
    assert get("banned.users.test", "/sitemap.xml", {}).status == 400
    assert get("users.test", "/sitemap.xml", {}).status == 400  # the wildcard's own domain
    assert sorted(calls) == ["ann.users.test", "banned.users.test", "bob.users.test"]


def test_an_etag_of_one_site_is_never_a_304_on_another(front: str) -> None:
    # Both sites on one base URL: their documents have one URL, one source name and
    # one fingerprint, and still two ETags.
    same = "https://www.example.test"
    sites = {
        BLOG: SiteSpec({"pages": Listing([f"{same}/a", f"{same}/b"])}, base_url=same),
        SHOP: SiteSpec({"pages": Listing([f"{same}/c"])}, base_url=same),
    }
    get = getter(front, build(front, sites))
    blog, shop = get(BLOG, "/sitemap.xml", {}), get(SHOP, "/sitemap.xml", {})
    assert blog.headers["etag"] != shop.headers["etag"]
    assert b"/c<" not in blog.body and b"/a<" not in shop.body
    again = get(SHOP, "/sitemap.xml", {"If-None-Match": blog.headers["etag"]})
    assert again.status == 200 and b"/c<" in again.body
    assert get(BLOG, "/sitemap.xml", {"If-None-Match": blog.headers["etag"]}).status == 304


def test_shared_sources_are_listed_by_every_site(front: str) -> None:
    sites = {BLOG: {"posts": [f"http://{BLOG}/p"]}, SHOP: {"items": [f"http://{SHOP}/i"]}}
    if front == "flask":
        app = flask_app(sites)
        owner = app.extensions["sitemapper"].owner
        owner.add_source("home", lambda: [url_for("home", _external=True)])
        get = getter(front, app)
        # url_for builds on each site's own base URL.
        assert f"<loc>http://{BLOG}/</loc>" in get(BLOG, "/sitemap.xml", {}).text
        assert f"<loc>http://{SHOP}/</loc>" in get(SHOP, "/sitemap.xml", {}).text
        return
    shared = {"about": lambda: ["http://blog.test/about"]}
    middleware = (
        SitemapMiddleware(hello_wsgi, shared, sites=sites)
        if front == "wsgi"
        else asgi_sitemap.SitemapMiddleware(hello_asgi, shared, sites=sites)
    )
    get = getter(front, middleware)
    assert "http://blog.test/about" in get(BLOG, "/sitemap.xml", {}).text
    # The shop's sitemap refuses the blog's URL (500), as any entry off its host.
    assert get(SHOP, "/sitemap.xml", {}).status == 500


# -- caches under concurrency ------------------------------------------------------------


def alternate(get: Get, requests: int, workers: int) -> None:
    """``requests`` requests alternating between the hosts (and their documents, codings
    and validators), ``workers`` at once; each must hold its own host's URLs only."""
    paths = ("/sitemap.xml", "/sitemap-pages-1.xml", "/sitemap-pages-2.xml", "/sitemap.html")
    etags: dict[tuple[str, str], str] = {}
    lock = threading.Lock()

    def one(i: int) -> None:
        host = (BLOG, SHOP)[i % 2]
        other = (SHOP, BLOG)[i % 2]
        path = paths[(i // 2) % len(paths)]
        headers = {"Accept-Encoding": "identity"}
        with lock:
            stale = etags.get((other, path))
        if stale is not None and i % 3 == 0:
            headers["If-None-Match"] = stale  # the other site's: never a 304 here
        reply = get(host, path, headers)
        assert reply.status == 200, (host, path, reply.status)
        assert_on_host(host, reply.text)
        if "etag" in reply.headers:
            with lock:
                etags[(host, path)] = reply.headers["etag"]

    with ThreadPoolExecutor(workers) as pool:
        for future in [pool.submit(one, i) for i in range(requests)]:
            future.result()


@pytest.mark.parametrize("front_name", ["flask", "wsgi"])
def test_alternating_hosts_with_the_memory_cache(front_name: str) -> None:
    cache = MemoryCache()
    get = getter(front_name, build(front_name, declared(), page_size=4, cache=cache))
    alternate(get, 200, 8)
    assert cache.size > 0  # the documents were cached, and still never crossed


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_alternating_hosts_on_the_asgi_middleware_concurrently(
    kind: str, request: pytest.FixtureRequest
) -> None:
    import anyio

    from sitemap_core import RedisCache

    cache: PageCache
    if kind == "memory":
        cache = MemoryCache()
    else:
        cache = RedisCache(url=request.getfixturevalue("redis_url"), prefix="sitemap-aio:")
    app = build("asgi", declared(), page_size=4, cache=cache)
    transport = httpx.ASGITransport(app=app)

    async def main() -> None:
        async with httpx.AsyncClient(transport=transport) as client:

            async def one(i: int) -> None:
                host = (BLOG, SHOP)[i % 2]
                path = ("/sitemap.xml", "/sitemap-pages-1.xml", "/sitemap-pages-2.xml")[i % 3]
                response = await client.get(f"http://{host}{path}")
                assert response.status_code == 200, (host, path)
                assert_on_host(host, response.text)

            async with anyio.create_task_group() as group:
                for i in range(200):
                    group.start_soon(one, i)

    anyio.run(main)
    if isinstance(cache, MemoryCache):
        assert cache.size > 0


def test_walks_shared_by_concurrent_requests_never_cross_sites() -> None:
    """Plain generators (no count, no fingerprint) of one name on two sites: the ASGI
    middleware shares a walk between concurrent requests for the same thing, and a
    walk of one site's source is never another site's count or document."""
    import time

    import anyio

    def walked(host: str, count: int) -> Any:
        def posts() -> Iterator[str]:
            for n in range(1, count + 1):
                time.sleep(0.0005)  # long enough for the requests to overlap
                yield f"http://{host}/posts/{n}"

        return posts

    app = build(
        "asgi",
        {BLOG: {"posts": walked(BLOG, 9)}, SHOP: {"posts": walked(SHOP, 5)}},
        page_size=4,
        cache=None,
    )
    transport = httpx.ASGITransport(app=app)
    expected = {BLOG: 3, SHOP: 2}  # children of each index: 9 and 5 posts by 4

    async def main() -> None:
        async with httpx.AsyncClient(transport=transport) as client:

            async def one(i: int) -> None:
                host = (BLOG, SHOP)[i % 2]
                path = ("/sitemap.xml", "/sitemap-posts-1.xml", "/sitemap-posts-2.xml")[i % 3]
                response = await client.get(f"http://{host}{path}")
                assert response.status_code == 200, (host, path, response.text)
                assert_on_host(host, response.text)
                if path == "/sitemap.xml":
                    assert response.text.count("<sitemap>") == expected[host], response.text

            async with anyio.create_task_group() as group:
                for i in range(60):
                    group.start_soon(one, i)

    anyio.run(main)


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from redis_server import redis_server

    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server.url


@pytest.mark.parametrize("front_name", FRONTS)
def test_alternating_hosts_with_one_redis(front_name: str, redis_url: str) -> None:
    import redis

    from sitemap_core import RedisCache

    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    prefix = f"sitemap-{front_name}:"
    # Two apps (two workers, say) on one Redis: what one stores the other reads.
    apps = [
        build(front_name, declared(), page_size=4, cache=RedisCache(url=redis_url, prefix=prefix))
        for _ in range(2)
    ]
    gets = [getter(front_name, app) for app in apps]

    def get(host: str, path: str, headers: Mapping[str, str]) -> Reply:
        return gets[hash((host, path, threading.get_ident())) % 2](host, path, headers)

    alternate(get if front_name != "asgi" else gets[0], 120, 6 if front_name != "asgi" else 1)
    keys = [key.decode() for key in client.keys(f"{prefix}*")]
    assert keys
    sites = {key.removeprefix(prefix).split("|", 1)[0] for key in keys}
    assert sites == {BLOG, SHOP}
    for key in keys:
        host = key.removeprefix(prefix).split("|", 1)[0]
        value = client.get(key)
        assert value is not None
        if not value.startswith(b"\x1f\x8b"):  # identity documents: readable
            assert_on_host(host, value.decode())


# -- settings, checked when the app starts ----------------------------------------------


@pytest.mark.parametrize(
    ("sites", "settings", "message"),
    [
        ({}, {}, "sites must be a mapping of hosts"),
        ("blog.test", {}, "sites must be a mapping of hosts"),
        ({"http://blog.test": {}}, {}, "sites key must be a host"),
        ({"blog.test": 42}, {}, "sites['blog.test']=42 is not a site"),
        ({"blog.test": SiteSpec({}, cache=False)}, {}, "cache= is the front's"),
        ({"blog.test": SiteSpec({}, page_size=0)}, {}, "sites['blog.test']: page_size=0"),
        ({"blog.test": SiteSpec({}, pagesize=5)}, {}, "unknown setting pagesize="),
        ({"blog.test": {}}, {"base_url": "https://x.test"}, "base_url (SITEMAP_BASE_URL)"),
        ({"blog.test": {}}, {"allowed_hosts": ["x.test"]}, "allowed_hosts= with sites="),
        ({"blog.test": {}, "BLOG.test": {}}, {}, "declared twice"),
        ({"*.users.test": 3}, {}, "is not a site"),
    ],
)
@pytest.mark.parametrize("front_name", ["wsgi", "asgi"])
def test_wrong_sites_fail_at_start(
    front_name: str, sites: Any, settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        build(front_name, sites, **settings)


def test_wrong_sitemap_sites_fail_at_init_app_naming_the_key() -> None:
    with pytest.raises(ConfigurationError, match=re.escape("SITEMAP_SITES['blog.test']=42")):
        flask_app({"blog.test": 42})
    with pytest.raises(ConfigurationError, match="SITEMAP_ALLOWED_HOSTS with SITEMAP_SITES"):
        flask_app({"blog.test": {}}, allowed_hosts=["blog.test"])
    with pytest.raises(ConfigurationError, match="generate\\(\\) serves one site"):
        app = flask_app({BLOG: {}})
        with app.test_request_context("/"):
            app.extensions["sitemapper"].owner.generate()


def test_a_site_of_several_keeps_its_pages_under_its_host_in_a_shared_cache() -> None:
    seen: dict[str, bytes] = {}

    class Recording(PageCache):
        blocking = False
        max_item_bytes = 2**20

        def get(self, key: str) -> bytes | None:
            return seen.get(key)

        def set(self, key: str, value: bytes) -> None:
            seen[key] = value

    get = wsgi_get(SitemapMiddleware(hello_wsgi, sites=declared(), cache=Recording()))
    get(BLOG, "/sitemap.xml", {})
    get(SHOP, "/sitemap.xml", {})
    assert sorted(key.split("|", 1)[0] for key in seen) == [BLOG, SHOP]


def test_flask_keeps_its_own_txt_routes_beside_the_sites_key_files() -> None:
    # With SITEMAP_SITES every key-shaped /<name>.txt reaches the package's rule (a
    # site's key is known only with its host); the app's own static routes win.
    app = flask_app(declared())

    @app.get("/security.txt")
    def security() -> str:
        return "Contact: mailto:security@example.test"

    get = wsgi_get(app)
    assert get(SHOP, "/security.txt", {}).text.startswith("Contact:")
    assert get(SHOP, f"/{SHOP_KEY}.txt", {}).text == SHOP_KEY
    assert get(SHOP, "/elsewhere.txt", {}).status == 404
