"""``examples/multisite`` from outside: two sites by Host on real servers.

The Flask example runs under gunicorn (two sync workers, each with the page cache as
shipped: a MemoryCache per process; then again with both sharing one real
redis-server), its ASGI twin (``multisite_asgi.py``) under uvicorn, each on 127.0.0.1
with its database in a temporary folder. Requests carry
the Host header of ``blog.localhost``, ``shop.localhost`` or a host no site claims.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from redis_server import redis_server

from .servers import EXAMPLES_ROOT, HTTP_TIMEOUT, Server, run_gunicorn, run_uvicorn

BLOG, SHOP = "blog.localhost", "shop.localhost"
OTHER = {BLOG: SHOP, SHOP: BLOG}
SHOP_KEY = "shop-localhost-indexnow-0001"
#: Each site's own child sitemaps (its sources: the shared home page, then its table).
CHILDREN = {
    BLOG: ("/sitemap-pages-1.xml", "/sitemap-posts-1.xml"),
    SHOP: ("/sitemap-pages-1.xml", "/sitemap-products-1.xml"),
}
LOC = re.compile(r"<loc>([^<]*)</loc>")
EXAMPLE = EXAMPLES_ROOT / "multisite"


#: The Redis URL of each server started with one, by port.
REDIS: dict[int, str] = {}


@pytest.fixture(scope="module", params=["flask-gunicorn", "flask-gunicorn-redis", "asgi-uvicorn"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("multisite")
    env = {"MULTISITE_DATABASE": str(folder / "multisite.db")}
    if request.param == "flask-gunicorn-redis":
        (folder / "redis").mkdir()
        with redis_server(folder / "redis") as redis:
            env["FLASK_SITEMAP_CACHE"] = redis.url
            with run_gunicorn(
                "app:app", EXAMPLE, folder / "logs", workers=2, env=env, ready_path="/"
            ) as running:
                REDIS[running.port] = redis.url
                yield running
    elif request.param == "flask-gunicorn":
        with run_gunicorn(
            "app:app", EXAMPLE, folder / "logs", workers=2, env=env, ready_path="/"
        ) as running:
            yield running
    else:
        here = Path(__file__).parent
        with run_uvicorn(
            "multisite_asgi:app",
            here,
            folder / "logs",
            env=env,
            pythonpath=[EXAMPLE],
            ready_path="/",
        ) as running:
            yield running


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=HTTP_TIMEOUT, trust_env=False) as http:
        yield http


def get(
    client: httpx.Client, server: Server, host: str, path: str, **headers: str
) -> httpx.Response:
    return client.get(server.url(path), headers={"Host": host, **headers})


def locs(text: str) -> list[str]:
    return LOC.findall(text)


def site_urls(client: httpx.Client, server: Server, host: str) -> set[str]:
    """Every URL the host's sitemap lists: its root, and each child page it names."""
    root = get(client, server, host, "/sitemap.xml")
    assert root.status_code == 200, root.text
    found = set(locs(root.text))
    if "<sitemapindex" in root.text:
        children, found = found, set()
        for child in children:
            page = get(client, server, host, urlsplit(child).path)
            assert page.status_code == 200
            found |= set(locs(page.text))
    return found


def assert_own(host: str, text: str) -> None:
    """Every URL in ``text`` is on ``host``, and the other site's name is nowhere."""
    for loc in locs(text):
        assert urlsplit(loc).hostname == host, (host, loc)
    assert OTHER[host] not in text, (host, text[:400])


def test_each_hosts_robots_names_its_own_sitemap(client: httpx.Client, server: Server) -> None:
    for host in (BLOG, SHOP):
        robots = get(client, server, host, "/robots.txt")
        assert robots.status_code == 200
        assert f"Sitemap: http://{host}/sitemap.xml" in robots.text
        assert_own(host, robots.text)


def test_every_loc_is_on_its_host_and_the_sites_differ(
    client: httpx.Client, server: Server
) -> None:
    blog, shop = site_urls(client, server, BLOG), site_urls(client, server, SHOP)
    assert blog and shop and blog != shop and not blog & shop
    assert {urlsplit(url).hostname for url in blog} == {BLOG}
    assert {urlsplit(url).hostname for url in shop} == {SHOP}
    assert any("/posts/" in url for url in blog) and not any("/posts/" in url for url in shop)
    assert any("/products/" in url for url in shop)
    # A page of one site's source is no page of the other's.
    assert get(client, server, BLOG, "/sitemap-products-1.xml").status_code == 404
    assert get(client, server, SHOP, "/sitemap-posts-1.xml").status_code == 404


def test_the_views_feeds_and_keys_are_each_sites_own(client: httpx.Client, server: Server) -> None:
    for host in (BLOG, SHOP):
        for path in ("/sitemap.html", "/sitemap-recent.atom"):
            reply = get(client, server, host, path)
            assert reply.status_code == 200, (host, path)
            assert f"http://{host}" in reply.text
            assert OTHER[host] not in reply.text
    assert get(client, server, SHOP, f"/{SHOP_KEY}.txt").text == SHOP_KEY
    assert get(client, server, BLOG, f"/{SHOP_KEY}.txt").status_code == 404


def test_100_alternating_requests_never_hold_the_other_sites_urls(
    client: httpx.Client, server: Server
) -> None:
    paths = ("/sitemap.xml", "/robots.txt", "/sitemap.html", "/sitemap-recent.atom")
    etags: dict[tuple[str, str], str] = {}

    def one(i: int) -> tuple[str, str, httpx.Response]:
        host = (BLOG, SHOP)[i % 2]
        every = (*paths, *CHILDREN[host])
        path = every[(i // 2) % len(every)]
        headers = {"Accept-Encoding": "gzip" if i % 4 < 2 else "identity"}
        stale = etags.get((OTHER[host], path))
        if stale is not None and i % 3 == 0:
            headers["If-None-Match"] = stale  # the other site's ETag: never a 304 here
        return host, path, get(client, server, host, path, **headers)

    # Warm both sites (and both workers' caches), then 100 more, four at a time.
    for i in range(12):
        host, path, reply = one(i)
        if "etag" in reply.headers:
            etags[(host, path)] = reply.headers["etag"]
    with ThreadPoolExecutor(4) as pool:
        for host, path, reply in pool.map(one, range(100)):
            assert reply.status_code == 200, (host, path, reply.status_code)
            assert_own(host, reply.text)
            assert reply.headers.get("etag") != etags.get((OTHER[host], path))


def test_an_unknown_host_gets_400(client: httpx.Client, server: Server) -> None:
    for host in ("evil.example", "localhost", f"127.0.0.1:{server.port}"):
        for path in ("/robots.txt", "/sitemap.xml", "/sitemap-posts-1.xml", "/sitemap.html"):
            assert get(client, server, host, path).status_code == 400, (host, path)
    # The app's own pages are the app's, on any host.
    assert get(client, server, "evil.example", "/").status_code == 200


def test_shared_redis_pages_are_each_under_their_sites_host(
    client: httpx.Client, server: Server
) -> None:
    if server.port not in REDIS:
        pytest.skip("this server keeps its pages in process (the Redis one checks this)")
    import redis

    for host in (BLOG, SHOP):
        assert get(client, server, host, "/sitemap.xml").status_code == 200
    keys = [key.decode() for key in redis.Redis.from_url(REDIS[server.port]).keys("sitemap:*")]
    hosts = {key.removeprefix("sitemap:").split("|", 1)[0] for key in keys}
    assert hosts == {BLOG, SHOP}, keys
