"""The sitemap index split into parts, through every front (Flask, WSGI, ASGI).

With a small ``index_size`` a site of a few dozen URLs needs several index files:
``/sitemap.xml`` is part 1, ``/sitemap-index-N.xml`` part N, and robots.txt lists them
all. A crawl from robots.txt must find every entry exactly once, in valid documents.
"""

from __future__ import annotations

import gzip
import logging
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from crawlers import scrapy_page_urls, usp_page_urls
from flask import Flask
from live import serve_live
from lxml import etree
from xsd import SITEMAP_NS, SITEMAPINDEX_TAG, URLSET_TAG, validate

import asgi_sitemap
from flask_sitemapper import SitemapMiddleware, Sitemapper
from sitemap_core import ConfigurationError, MemoryCache

from .conftest import (
    BASE,
    FRONTS,
    Front,
    build_flask_app,
    generator_source,
    hello_asgi_app,
    hello_wsgi_app,
    url_list,
)

NS = {"sm": SITEMAP_NS}
XML = "application/xml; charset=utf-8"
IDENTITY = {"Accept-Encoding": "identity"}

#: 7 + 9 + 4 = 20 URLs; with 2 per page, 4 + 5 + 2 = 11 child pages; with 3 children
#: per index file, 4 parts of 3, 3, 3 and 2 children.
COUNTS = {"pages": 7, "posts": 9, "tags": 4}
PAGE_SIZE = 2
INDEX_SIZE = 3
PART_PATHS = [
    "/sitemap.xml",
    "/sitemap-index-2.xml",
    "/sitemap-index-3.xml",
    "/sitemap-index-4.xml",
]


# -- building a split site on each front -----------------------------------------------


def split_sources(origin: str = BASE) -> dict[str, Any]:
    """Both kinds of source: lists ("pages", "tags") and a generator function ("posts")."""
    return {
        "pages": url_list(origin, "pages", COUNTS["pages"]),
        "posts": generator_source(url_list(origin, "posts", COUNTS["posts"])),
        "tags": url_list(origin, "tags", COUNTS["tags"]),
    }


def all_urls(origin: str = BASE, counts: Mapping[str, int] = COUNTS) -> list[str]:
    """Every URL of :func:`split_sources`, in source order then entry order."""
    return [url for name, n in counts.items() for url in url_list(origin, name, n)]


def child_paths(counts: Mapping[str, int] = COUNTS, page_size: int = PAGE_SIZE) -> list[str]:
    return [
        f"/sitemap-{name}-{page}.xml"
        for name, n in counts.items()
        for page in range(1, -(-n // page_size) + 1)
    ]


def build_split_app(
    front: Front,
    sources: Mapping[str, Any],
    *,
    page_size: int = PAGE_SIZE,
    index_size: int = INDEX_SIZE,
    app_robots: bytes | None = None,
    **options: Any,
) -> Any:
    """The front's app serving ``sources`` with ``index_size`` children per index file.

    The shared factories know no ``index_size``: Flask takes it as the config key
    ``SITEMAP_INDEX_SIZE`` (read when the first sitemap is built), the middlewares as
    a keyword argument.
    """
    if front.name == "flask-extension":
        app = build_flask_app(sources, page_size, app_robots=app_robots, **options)
        app.config["SITEMAP_INDEX_SIZE"] = index_size
        return app
    if front.name == "wsgi-middleware":
        return SitemapMiddleware(
            hello_wsgi_app(app_robots),
            dict(sources),
            page_size=page_size,
            index_size=index_size,
            **options,
        )
    assert front.name == "asgi-middleware", front.name
    return asgi_sitemap.SitemapMiddleware(
        hello_asgi_app(app_robots),
        dict(sources),
        page_size=page_size,
        index_size=index_size,
        **options,
    )


@pytest.fixture
def make_split_client(front: Front) -> Iterator[Callable[..., httpx.Client]]:
    """``make_split_client(sources, **settings)``: a client of a fresh split site."""
    clients: list[httpx.Client] = []

    def make(sources: Mapping[str, Any] | None = None, **settings: Any) -> httpx.Client:
        app = build_split_app(front, split_sources() if sources is None else sources, **settings)
        client = front.client(app)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def split_client(make_split_client: Callable[..., httpx.Client]) -> httpx.Client:
    """The standard split site: 20 URLs, 11 child pages, 4 index parts."""
    return make_split_client()


# -- crawling --------------------------------------------------------------------------


def parse(body: bytes) -> etree._Element:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    return etree.fromstring(body, parser)


def locs(body: bytes) -> list[str]:
    return [str(loc.text) for loc in parse(body).iterfind(".//sm:loc", NS)]


def path_of(url: str) -> str:
    assert url.startswith(BASE + "/"), url
    return urlsplit(url).path


def sitemap_lines(text: str) -> list[str]:
    """The values of the ``Sitemap:`` lines of a robots.txt, in order."""
    values = []
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip().lower() == "sitemap":
            values.append(value.strip())
    return values


def fetch_xml(client: httpx.Client, path: str, root: str) -> bytes:
    """GET a document: 200, XML, schema-valid, with the expected root element."""
    response = client.get(path, headers=IDENTITY)
    assert response.status_code == 200, (path, response.status_code, response.text[:200])
    assert response.headers["content-type"] == XML, path
    validate(response.content)
    assert parse(response.content).tag == root, path
    return response.content


@dataclass
class Crawl:
    """What a crawler following robots.txt saw."""

    parts: list[str] = field(default_factory=list)
    children_per_part: list[list[str]] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)

    @property
    def children(self) -> list[str]:
        return [child for part in self.children_per_part for child in part]


def crawl(client: httpx.Client) -> Crawl:
    """Follow robots.txt -> every index part -> every child page."""
    found = Crawl()
    robots = client.get("/robots.txt")
    assert robots.status_code == 200, robots.text
    found.parts = sitemap_lines(robots.text)
    for part in found.parts:
        body = fetch_xml(client, path_of(part), SITEMAPINDEX_TAG)
        found.children_per_part.append(locs(body))
    for child in found.children:
        found.entries += locs(fetch_xml(client, path_of(child), URLSET_TAG))
    return found


# -- the crawl -------------------------------------------------------------------------


def test_a_crawl_from_robots_txt_finds_every_entry_once(split_client: httpx.Client) -> None:
    found = crawl(split_client)
    assert found.parts == [BASE + path for path in PART_PATHS]
    assert [len(children) for children in found.children_per_part] == [3, 3, 3, 2]
    assert found.children == [BASE + path for path in child_paths()]
    assert len(set(found.children)) == len(found.children)
    counted = Counter(found.entries)
    assert set(counted) == set(all_urls())
    assert all(n == 1 for n in counted.values()), [u for u, n in counted.items() if n > 1]
    assert found.entries == all_urls()  # source order, then page order


@pytest.mark.parametrize(
    ("counts", "page_size", "index_size", "parts"),
    [
        ({"pages": 6}, 2, 3, 1),  # 3 children: one index, not split
        ({"pages": 7}, 2, 3, 2),  # 4 children: split, the last part holds one
        ({"pages": 12}, 2, 3, 2),  # 6 children: two full parts
        ({"pages": 5, "posts": 5}, 1, 1, 10),  # one child per part
        ({"pages": 3, "posts": 30, "tags": 1}, 4, 5, 2),  # 1 + 8 + 1 children
    ],
)
def test_crawls_of_other_shapes(
    make_split_client: Callable[..., httpx.Client],
    counts: dict[str, int],
    page_size: int,
    index_size: int,
    parts: int,
) -> None:
    sources = {name: url_list(BASE, name, n) for name, n in counts.items()}
    client = make_split_client(sources, page_size=page_size, index_size=index_size)
    found = crawl(client)
    assert found.parts == [BASE + path for path in ["/sitemap.xml"]] + [
        f"{BASE}/sitemap-index-{n}.xml" for n in range(2, parts + 1)
    ]
    assert all(1 <= len(children) <= index_size for children in found.children_per_part)
    assert all(len(children) == index_size for children in found.children_per_part[:-1])
    assert found.children == [BASE + path for path in child_paths(counts, page_size)]
    assert found.entries == all_urls(BASE, counts)


def test_a_site_that_fits_one_urlset_lists_one_sitemap(
    make_split_client: Callable[..., httpx.Client],
) -> None:
    client = make_split_client(split_sources(), page_size=50, index_size=1)
    assert sitemap_lines(client.get("/robots.txt").text) == [f"{BASE}/sitemap.xml"]
    body = fetch_xml(client, "/sitemap.xml", URLSET_TAG)
    assert locs(body) == all_urls()
    assert client.get("/sitemap-index-2.xml").status_code == 404


# -- paths that are not parts ----------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/sitemap-index-1.xml",
        "/sitemap-index-1.xml.gz",
        "/sitemap-index-0.xml",
        "/sitemap-index-02.xml",
        "/sitemap-index-5.xml",  # one past the last
        "/sitemap-index-5.xml.gz",
        "/sitemap-index-99.xml",
        f"/sitemap-index-{'9' * 18}.xml",
        f"/sitemap-index-{'9' * 40}.xml",
        "/sitemap-index-2.txt",
        "/sitemap-index--2.xml",
        "/sitemap-index-x.xml",
    ],
)
def test_paths_that_are_not_parts_are_404(split_client: httpx.Client, path: str) -> None:
    for method in ("GET", "HEAD"):
        response = split_client.request(method, path)
        assert response.status_code == 404, (method, path)


@pytest.mark.parametrize("path", ["/sitemap-index-2.xml", "/sitemap-index-2.xml.gz"])
def test_no_parts_when_the_site_is_not_split(
    make_split_client: Callable[..., httpx.Client], path: str
) -> None:
    # 20 URLs, 11 children, but room for all of them in one index file.
    client = make_split_client(index_size=11)
    assert client.get(path).status_code == 404
    assert sitemap_lines(client.get("/robots.txt").text) == [f"{BASE}/sitemap.xml"]
    assert len(locs(fetch_xml(client, "/sitemap.xml", SITEMAPINDEX_TAG))) == 11


# -- gzip, validators ------------------------------------------------------------------


def test_gzip_part_file(split_client: httpx.Client) -> None:
    plain = split_client.get("/sitemap-index-3.xml", headers=IDENTITY)
    packed = split_client.get("/sitemap-index-3.xml.gz", headers=IDENTITY)
    assert packed.status_code == 200
    assert packed.headers["content-type"] == "application/gzip"
    assert "content-encoding" not in packed.headers
    assert gzip.decompress(packed.content) == plain.content
    assert locs(plain.content) == [
        f"{BASE}/sitemap-posts-3.xml",
        f"{BASE}/sitemap-posts-4.xml",
        f"{BASE}/sitemap-posts-5.xml",
    ]
    # Part 1 has its .gz file too.
    root = split_client.get("/sitemap.xml.gz", headers=IDENTITY)
    assert root.status_code == 200
    assert (
        gzip.decompress(root.content) == split_client.get("/sitemap.xml", headers=IDENTITY).content
    )


def test_part_with_gzip_content_encoding(split_client: httpx.Client) -> None:
    plain = split_client.get("/sitemap-index-4.xml", headers=IDENTITY)
    coded = split_client.get("/sitemap-index-4.xml", headers={"Accept-Encoding": "gzip"})
    assert coded.status_code == 200
    assert coded.headers["content-encoding"] == "gzip"
    assert coded.content == plain.content  # httpx undid the coding
    validate(coded.content)


def test_etag_and_304_on_a_part(split_client: httpx.Client) -> None:
    first = split_client.get("/sitemap-index-2.xml", headers=IDENTITY)
    etag = first.headers["etag"]
    again = split_client.get("/sitemap-index-2.xml", headers={**IDENTITY, "If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == etag
    head = split_client.head("/sitemap-index-2.xml", headers=IDENTITY)
    assert head.status_code == 200 and head.headers["etag"] == etag
    # Each part has its own validator: another part's ETag does not match.
    others = {
        path: split_client.get(path, headers=IDENTITY).headers["etag"]
        for path in PART_PATHS
        if path != "/sitemap-index-2.xml"
    }
    assert etag not in others.values()
    assert len(set(others.values())) == len(others)
    for path, other in others.items():
        response = split_client.get(
            "/sitemap-index-2.xml", headers={**IDENTITY, "If-None-Match": other}
        )
        assert response.status_code == 200, path


def test_a_part_changes_its_etag_when_its_children_move(
    make_split_client: Callable[..., httpx.Client],
) -> None:
    sources = split_sources()
    client = make_split_client(sources)
    before = client.get("/sitemap-index-2.xml", headers=IDENTITY)
    # Two more "pages" URLs: one more child page of "pages" shifts every later child.
    sources["pages"].extend([f"{BASE}/pages/new-{i}" for i in range(2)])
    after = client.get(
        "/sitemap-index-2.xml", headers={**IDENTITY, "If-None-Match": before.headers["etag"]}
    )
    assert after.status_code == 200
    assert after.headers["etag"] != before.headers["etag"]
    assert locs(after.content) == [
        f"{BASE}/sitemap-pages-4.xml",
        f"{BASE}/sitemap-pages-5.xml",
        f"{BASE}/sitemap-posts-1.xml",
    ]
    assert sitemap_lines(client.get("/robots.txt").text)[-1] == f"{BASE}/sitemap-index-4.xml"
    # 12 children now, still 4 parts; one more page would add a fifth.
    sources["tags"].extend([f"{BASE}/tags/new-{i}" for i in range(2)])
    assert sitemap_lines(client.get("/robots.txt").text)[-1] == f"{BASE}/sitemap-index-5.xml"
    assert client.get("/sitemap-index-5.xml").status_code == 200


def test_cached_parts_stay_apart(make_split_client: Callable[..., httpx.Client]) -> None:
    # With a page cache, each part is kept under its own key: never one for another.
    client = make_split_client(cache=MemoryCache())
    first = {path: client.get(path, headers=IDENTITY).content for path in PART_PATHS}
    assert len(set(first.values())) == len(PART_PATHS)
    for _ in range(2):
        for path in reversed(PART_PATHS):
            assert client.get(path, headers=IDENTITY).content == first[path], path
    packed = client.get("/sitemap-index-3.xml.gz")
    assert gzip.decompress(packed.content) == first["/sitemap-index-3.xml"]


# -- robots.txt ------------------------------------------------------------------------


def failing_source() -> Iterator[str]:
    """A generator function (as every front accepts) that fails when read or counted."""
    raise RuntimeError("the database is down")
    yield  # pragma: no cover


def test_robots_txt_lists_every_part(split_client: httpx.Client) -> None:
    response = split_client.get("/robots.txt")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    assert sitemap_lines(response.text) == [BASE + path for path in PART_PATHS]
    head = split_client.head("/robots.txt")
    assert head.status_code == 200 and head.headers["etag"] == response.headers["etag"]


def test_robots_txt_when_a_count_fails_lists_one_sitemap(
    make_split_client: Callable[..., httpx.Client], caplog: pytest.LogCaptureFixture
) -> None:
    sources = {**split_sources(), "broken": failing_source}
    client = make_split_client(sources)
    with caplog.at_level(logging.ERROR):
        response = client.get("/robots.txt")
    assert response.status_code == 200
    assert sitemap_lines(response.text) == [f"{BASE}/sitemap.xml"]
    assert "User-agent: *" in response.text
    assert any(r.levelno >= logging.ERROR for r in caplog.records), "the failure was not logged"
    # The sitemap itself cannot be listed without the count: a 500, not a wrong index.
    assert client.get("/sitemap.xml").status_code == 500


def test_the_apps_own_robots_txt_gets_every_part(
    make_split_client: Callable[..., httpx.Client],
) -> None:
    own = b"User-agent: *\nDisallow: /private\n"
    client = make_split_client(app_robots=own)
    response = client.get("/robots.txt")
    assert response.status_code == 200
    assert response.content.startswith(own)
    assert sitemap_lines(response.text) == [BASE + path for path in PART_PATHS]
    assert "Disallow: /private" in response.text


def test_an_app_robots_txt_declaring_the_root_gets_only_the_other_parts(
    make_split_client: Callable[..., httpx.Client],
) -> None:
    own = f"User-agent: *\nDisallow:\nSitemap: {BASE}/sitemap.xml\n".encode()
    client = make_split_client(app_robots=own)
    text = client.get("/robots.txt").text
    assert text.startswith(own.decode())
    assert sitemap_lines(text) == [BASE + path for path in PART_PATHS]  # none twice


def test_the_apps_own_robots_txt_when_a_count_fails(
    make_split_client: Callable[..., httpx.Client],
) -> None:
    own = b"User-agent: *\nDisallow: /private\n"
    client = make_split_client({**split_sources(), "broken": failing_source}, app_robots=own)
    response = client.get("/robots.txt")
    assert response.status_code == 200
    assert response.content.startswith(own)
    assert sitemap_lines(response.text) == [f"{BASE}/sitemap.xml"]


EVIL = "evil.example"


@pytest.mark.parametrize("path", ["/robots.txt", "/sitemap-index-2.xml", "/sitemap-index-2.xml.gz"])
def test_an_untrusted_host_gets_400_on_split_paths(split_client: httpx.Client, path: str) -> None:
    response = split_client.get(path, headers={"Host": EVIL})
    assert response.status_code == 400
    assert b"Sitemap:" not in response.content
    assert b"<sitemap" not in response.content


def test_the_apps_robots_txt_on_an_untrusted_host_is_left_alone(
    make_split_client: Callable[..., httpx.Client],
) -> None:
    own = b"User-agent: *\nDisallow: /x\n"
    client = make_split_client(app_robots=own)
    response = client.get("/robots.txt", headers={"Host": EVIL})
    assert response.status_code == 200
    assert response.content == own


def test_an_allowed_host_gets_its_own_parts(
    make_split_client: Callable[..., httpx.Client],
) -> None:
    origin = "http://www.example.org"
    client = make_split_client(split_sources(origin), allowed_hosts=["www.example.org"])
    host = {"Host": "www.example.org"}
    robots = client.get("/robots.txt", headers=host)
    assert sitemap_lines(robots.text) == [origin + path for path in PART_PATHS]
    part = client.get("/sitemap-index-4.xml", headers={**host, **IDENTITY})
    assert part.status_code == 200
    assert locs(part.content) == [f"{origin}/sitemap-tags-1.xml", f"{origin}/sitemap-tags-2.xml"]


# -- ASGI with async sources ----------------------------------------------------------


def async_source(urls: list[str]) -> Callable[[], AsyncIterator[str]]:
    async def entries() -> AsyncIterator[str]:
        for url in urls:
            yield url

    return entries


async def failing_async_source() -> AsyncIterator[str]:
    raise RuntimeError("the database is down")
    yield  # pragma: no cover


@contextmanager
def asgi_split_client(sources: Mapping[str, Any], **options: Any) -> Iterator[httpx.Client]:
    # Not the test client's own "with", which would send the app a lifespan message.
    front = FRONTS["asgi-middleware"]
    client = front.client(build_split_app(front, sources, **options))
    try:
        yield client
    finally:
        client.close()


def test_asgi_async_sources_split_and_crawl() -> None:
    sources = {name: async_source(url_list(BASE, name, n)) for name, n in COUNTS.items()}
    with asgi_split_client(sources) as client:
        found = crawl(client)
    assert found.parts == [BASE + path for path in PART_PATHS]
    assert found.entries == all_urls()


@pytest.mark.parametrize("app_robots", [None, b"User-agent: *\nDisallow: /private\n"])
def test_asgi_robots_txt_when_an_async_count_fails(
    caplog: pytest.LogCaptureFixture, app_robots: bytes | None
) -> None:
    sources = {**split_sources(), "broken": failing_async_source}
    with (
        asgi_split_client(sources, app_robots=app_robots) as client,
        caplog.at_level(logging.ERROR),
    ):
        response = client.get("/robots.txt")
    assert response.status_code == 200
    assert sitemap_lines(response.text) == [f"{BASE}/sitemap.xml"]
    assert any(r.levelno >= logging.ERROR for r in caplog.records)


# -- configuration ---------------------------------------------------------------------


@pytest.mark.parametrize("index_size", [0, 50_001, "3"])
def test_a_bad_index_size_is_refused(front: Front, index_size: Any) -> None:
    if front.name == "flask-extension":
        # Flask reads the config when the first sitemap is built: a sitemap request
        # fails (500) but robots.txt stays up with one line.
        app = build_split_app(front, split_sources(), index_size=index_size)
        with front.client(app) as client:
            assert client.get("/sitemap.xml").status_code == 500
            robots = client.get("/robots.txt")
            assert robots.status_code == 200
            assert sitemap_lines(robots.text) == [f"{BASE}/sitemap.xml"]
        return
    with pytest.raises(ConfigurationError, match="index size"):
        build_split_app(front, split_sources(), index_size=index_size)


@pytest.mark.parametrize("index_size", [0, 50_001, "3", True])
def test_flask_bad_index_size_fails_at_init_app(index_size: Any) -> None:
    # Like SITEMAP_PAGE_SIZE: at start-up, not on the first crawl (fixed in cdc0279).
    app = Flask("index_size")
    app.config["SITEMAP_INDEX_SIZE"] = index_size
    with pytest.raises(ConfigurationError, match="index size"):
        Sitemapper(app)


def test_flask_index_size_defaults_to_the_protocol_limit() -> None:
    app = Flask("index_size_default")
    Sitemapper(app)
    assert app.config["SITEMAP_INDEX_SIZE"] == 50_000


def test_index_is_a_reserved_source_name(front: Front) -> None:
    with pytest.raises(ConfigurationError, match="reserved"):
        build_split_app(front, {"index": url_list(BASE, "x", 3)})


def test_asgi_routes_named_index_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="reserved"):
        asgi_sitemap.SitemapRoutes("index")


def test_flask_route_source_named_index_is_refused() -> None:
    app = Flask("reserved_route")
    sitemapper = Sitemapper(app)
    with pytest.raises(ConfigurationError, match="reserved"):

        @sitemapper.include(source="index")
        @app.get("/")
        def home() -> str:
            return "home"  # pragma: no cover

    with pytest.raises(ConfigurationError, match="reserved"):
        sitemapper.add_source("index", [f"{BASE}/a"])


# -- real consumers over a real server -------------------------------------------------


def test_real_consumers_find_every_url_over_a_live_server(front: Front) -> None:
    counts = {"pages": 7, "posts": 9, "tags": 4}

    def build(origin: str) -> Any:
        sources = {
            "pages": url_list(origin, "pages", counts["pages"]),
            "posts": generator_source(url_list(origin, "posts", counts["posts"])),
            "tags": url_list(origin, "tags", counts["tags"]),
        }
        return build_split_app(front, sources)

    with serve_live(build, asgi=front.name == "asgi-middleware") as origin:
        expected = Counter(all_urls(origin, counts))
        robots = httpx.get(origin + "/robots.txt", trust_env=False)
        assert len(sitemap_lines(robots.text)) == 4
        assert Counter(usp_page_urls(origin + "/")) == expected
        assert Counter(scrapy_page_urls(origin + "/")) == expected
