"""``SitemapMiddleware`` in front of a plain WSGI application."""

from __future__ import annotations

import io
import logging
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from lxml import etree
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.test import create_environ
from xsd import SITEMAP_NS, SITEMAPINDEX_TAG, validate

from flask_sitemapper import ConfigurationError, Entry, SitemapMiddleware, UrlSource
from sitemap_core.limits import MAX_ROBOTS_BYTES

from .conftest import BASE, hello_wsgi_app, url_list, wsgi_client

NS = {"sm": SITEMAP_NS}


def locs(body: bytes) -> list[str]:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    return [str(loc.text) for loc in etree.fromstring(body, parser).iterfind(".//sm:loc", NS)]


def document(client: httpx.Client, path: str, **kwargs: Any) -> bytes:
    response = client.get(path, **kwargs)
    assert response.status_code == 200, response.text[:300]
    validate(response.content)
    return response.content


class Body:
    """A WSGI response iterable that remembers being closed."""

    def __init__(self, parts: list[bytes]) -> None:
        self.parts = parts
        self.closed = False

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.parts)

    def close(self) -> None:
        self.closed = True


class EchoApp:
    """Answers 418 with what it received; keeps the last body it returned."""

    def __init__(self) -> None:
        self.last: Body | None = None
        self.headers = [
            ("Content-Type", "text/plain"),
            ("Set-Cookie", "a=1"),
            ("Set-Cookie", "b=2"),
            ("X-Custom", "kept"),
        ]

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Body:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        received = environ["wsgi.input"].read(length) if length else b""
        text = f"{environ['REQUEST_METHOD']} {environ['PATH_INFO']}?{environ['QUERY_STRING']}"
        start_response("418 I'm a teapot", self.headers)
        self.last = Body([text.encode(), b"|", received])
        return self.last


def call(app: Any, path: str, method: str = "GET", body: bytes = b"") -> tuple[Any, ...]:
    environ = create_environ(path, BASE, method=method, input_stream=io.BytesIO(body))
    environ["CONTENT_LENGTH"] = str(len(body))
    started: list[Any] = []

    def start_response(status: str, headers: list[Any], exc_info: Any = None) -> Any:
        started.extend([status, headers])
        return lambda data: None

    result = app(environ, start_response)
    return result, started


PASSTHROUGH_PATHS = [
    "/",
    "/anything?x=1",
    "/sitemap",
    "/sitemap.xml.bak",
    "/sitemap.xml/",
    "/sitemap-0.xml",
    "/sitemap-pages-01.xml",
    "/sitemap-Pages-1.xml",
    "/static/robots.txt",
    "/robots.txt/",
]


@pytest.mark.parametrize("path", PASSTHROUGH_PATHS)
@pytest.mark.parametrize("method", ["GET", "POST", "HEAD", "DELETE"])
def test_other_paths_go_to_the_app_untouched(path: str, method: str) -> None:
    inner = EchoApp()
    app = SitemapMiddleware(inner, {"pages": url_list(BASE, "pages", 3)})
    result, started = call(app, path, method, body=b"payload=1&x=<y>")
    # The very iterable and the very headers of the app: nothing wrapped, nothing read.
    assert result is inner.last
    assert started == ["418 I'm a teapot", inner.headers]
    assert inner.last is not None and not inner.last.closed
    expected_path, _, query = path.partition("?")
    assert b"".join(result) == f"{method} {expected_path}?{query}|payload=1&x=<y>".encode()


def test_a_post_passes_through_over_http() -> None:
    client = wsgi_client(SitemapMiddleware(EchoApp(), {"pages": [f"{BASE}/"]}))
    response = client.post("/form", content=b"name=value")
    assert response.status_code == 418
    assert response.text == "POST /form?|name=value"
    assert response.headers.get_list("set-cookie") == ["a=1", "b=2"]
    assert response.headers["x-custom"] == "kept"


def test_sources_as_a_mapping_of_every_kind() -> None:
    class Rows:
        def __len__(self) -> int:
            return 2

        def __getitem__(self, index: slice) -> list[Entry]:
            return [Entry(f"{BASE}/row/{i}", lastmod="2024-01-01") for i in range(2)][index]

    def generated() -> Iterator[str]:
        yield f"{BASE}/gen/0"
        yield f"{BASE}/gen/1"

    sources = {"listed": [f"{BASE}/list/0"], "rows": Rows(), "generated": generated}
    client = wsgi_client(SitemapMiddleware(hello_wsgi_app(), sources))
    assert locs(document(client, "/sitemap.xml")) == [
        f"{BASE}/list/0",
        f"{BASE}/row/0",
        f"{BASE}/row/1",
        f"{BASE}/gen/0",
        f"{BASE}/gen/1",
    ]


def test_sources_as_url_sources_with_a_count() -> None:
    calls: list[str] = []

    def articles() -> Iterator[str]:
        calls.append("walk")
        yield from url_list(BASE, "article", 25)

    sources = [
        UrlSource.from_object("articles", articles, count=lambda: 25),
        UrlSource.from_object("pages", url_list(BASE, "pages", 3)),
    ]
    client = wsgi_client(SitemapMiddleware(hello_wsgi_app(), sources, page_size=10))
    index = document(client, "/sitemap.xml")
    assert locs(index) == [
        f"{BASE}/sitemap-articles-1.xml",
        f"{BASE}/sitemap-articles-2.xml",
        f"{BASE}/sitemap-articles-3.xml",
        f"{BASE}/sitemap-pages-1.xml",
    ]
    assert calls == [], "the index was built by walking the source despite count="
    assert locs(document(client, "/sitemap-articles-3.xml")) == url_list(BASE, "article", 25)[20:]
    assert calls == ["walk"]
    assert client.get("/sitemap-articles-4.xml").status_code == 404


def test_a_sliceable_source_is_read_one_slice_per_page() -> None:
    class Table:
        def __init__(self) -> None:
            self.slices: list[tuple[int, int]] = []

        def __len__(self) -> int:
            return 1_000

        def __getitem__(self, index: slice) -> list[str]:
            self.slices.append((index.start, index.stop))
            return [f"{BASE}/t/{i}" for i in range(index.start, index.stop)]

    table = Table()
    client = wsgi_client(SitemapMiddleware(hello_wsgi_app(), {"t": table}, page_size=100))
    assert len(locs(document(client, "/sitemap.xml"))) == 10
    assert table.slices == []
    assert locs(document(client, "/sitemap-t-7.xml")) == [f"{BASE}/t/{i}" for i in range(600, 700)]
    assert table.slices == [(600, 700)]


def test_base_url() -> None:
    origin = "https://www.example.com/app"
    sources = {"pages": url_list("https://www.example.com", "pages", 12)}
    client = wsgi_client(
        SitemapMiddleware(hello_wsgi_app(), sources, base_url=origin + "/", page_size=5)
    )
    for headers in ({}, {"Host": "evil.example"}):
        robots = client.get("/robots.txt", headers=headers)
        assert robots.status_code == 200
        assert f"Sitemap: {origin}/sitemap.xml" in robots.text.splitlines()
        index = document(client, "/sitemap.xml", headers=headers)
        assert locs(index) == [f"{origin}/sitemap-pages-{n}.xml" for n in (1, 2, 3)]
        assert b"evil" not in index + robots.content


@pytest.mark.parametrize(
    "base_url", ["www.example.com", "ftp://example.com", "https://example.com/?q=1", "https://"]
)
def test_a_bad_base_url_fails_at_construction(base_url: str) -> None:
    with pytest.raises(ConfigurationError, match="base URL"):
        SitemapMiddleware(hello_wsgi_app(), {"pages": [f"{BASE}/"]}, base_url=base_url)


@pytest.mark.parametrize(
    ("sources", "options", "match"),
    [
        ({"pages": []}, {"page_size": 0}, "page size"),
        ({"pages": []}, {"page_size": 50_001}, "page size"),
        ({"Bad Name": []}, {}, "'Bad Name'"),
        ({"gen": (u for u in [f"{BASE}/"])}, {}, "iterator"),
        ({"n": 42}, {}, "int"),
        (
            [UrlSource.from_object("dup", []), UrlSource.from_object("dup", [])],
            {},
            "dup",
        ),
    ],
)
def test_bad_configuration_fails_at_construction(
    sources: Any, options: dict[str, Any], match: str
) -> None:
    with pytest.raises(ConfigurationError, match=match):
        SitemapMiddleware(hello_wsgi_app(), sources, **options)


def test_default_allowed_hosts_are_loopback() -> None:
    client = wsgi_client(SitemapMiddleware(hello_wsgi_app(), {"p": [f"{BASE}/"]}))
    for host, origin in [
        ("localhost", "http://localhost"),
        ("localhost:8000", "http://localhost:8000"),
        ("127.0.0.1:5000", "http://127.0.0.1:5000"),
        ("[::1]:8080", "http://[::1]:8080"),
    ]:
        robots = client.get("/robots.txt", headers={"Host": host})
        assert robots.status_code == 200, host
        assert f"Sitemap: {origin}/sitemap.xml" in robots.text.splitlines()
    for host in ("example.com", "localhost.example.com", "127.0.0.2"):
        assert client.get("/robots.txt", headers={"Host": host}).status_code == 400


def test_allowed_hosts() -> None:
    sources = {"p": ["http://docs.example.org/", "http://example.org/"]}
    app = SitemapMiddleware(
        hello_wsgi_app(), sources, allowed_hosts=[".example.org"], same_host_only=False
    )
    client = wsgi_client(app)
    for host in ("example.org", "docs.example.org", "a.b.example.org:8443"):
        robots = client.get("/robots.txt", headers={"Host": host})
        assert f"Sitemap: http://{host}/sitemap.xml" in robots.text.splitlines()
    for host in ("localhost", "badexample.org", "example.org.evil.example"):
        assert client.get("/sitemap.xml", headers={"Host": host}).status_code == 400
    anyone = wsgi_client(
        SitemapMiddleware(hello_wsgi_app(), sources, allowed_hosts=["*"], same_host_only=False)
    )
    assert anyone.get("/sitemap.xml", headers={"Host": "whatever.test"}).status_code == 200


def test_robots_false_passes_robots_txt_to_the_app() -> None:
    inner = EchoApp()
    app = SitemapMiddleware(inner, {"pages": [f"{BASE}/"]}, robots=False)
    for method in ("GET", "HEAD", "POST"):
        result, started = call(app, "/robots.txt", method)
        assert result is inner.last
        assert started[0] == "418 I'm a teapot"
    client = wsgi_client(SitemapMiddleware(hello_wsgi_app(), {"p": [f"{BASE}/"]}, robots=False))
    assert client.get("/robots.txt").status_code == 404
    assert client.get("/sitemap.xml").status_code == 200
    own = b"User-agent: *\nDisallow: /\n"
    with_own = SitemapMiddleware(hello_wsgi_app(own), {"p": [f"{BASE}/"]}, robots=False)
    assert wsgi_client(with_own).get("/robots.txt").content == own


def test_the_apps_robots_txt_keeps_its_other_headers() -> None:
    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        start_response(
            "200 OK",
            [
                ("Content-Type", "text/plain"),
                ("Content-Length", "25"),
                ("Cache-Control", "max-age=3600"),
                ("ETag", '"v1"'),
                ("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT"),
            ],
        )
        return [b"User-agent: *\n", b"Disallow:\n"]

    client = wsgi_client(SitemapMiddleware(app, {"p": [f"{BASE}/"]}))
    response = client.get("/robots.txt")
    assert response.text == "User-agent: *\nDisallow:\n\nSitemap: http://localhost/sitemap.xml\n"
    assert response.headers["cache-control"] == "max-age=3600"
    assert response.headers["content-length"] == str(len(response.content))
    # The app's validators described its own bytes; the merged file has its own ETag.
    assert "last-modified" not in response.headers
    assert response.headers["etag"] not in ('"v1"', None)
    again = client.get("/robots.txt", headers={"If-None-Match": response.headers["etag"]})
    assert again.status_code == 304 and again.content == b""


@pytest.mark.parametrize(
    ("status", "content_type"),
    [("200 OK", "text/html"), ("500 Internal Server Error", "text/plain"), ("302 Found", "")],
)
def test_a_robots_txt_answer_that_is_not_a_text_file_is_replayed(
    status: str, content_type: str
) -> None:
    body = Body([b"<p>", b"not robots</p>"])

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Body:
        start_response(status, [("Content-Type", content_type), ("X-From", "app")])
        return body

    result, started = call(SitemapMiddleware(app, {"p": [f"{BASE}/"]}), "/robots.txt")
    assert started[0] == status
    assert ("X-From", "app") in started[1]
    assert b"".join(result) == b"<p>not robots</p>"


def test_an_oversized_robots_txt_is_passed_on_intact(caplog: pytest.LogCaptureFixture) -> None:
    big = b"User-agent: *\n" + b"# padding\n" * (MAX_ROBOTS_BYTES // 10 + 10)
    assert len(big) > MAX_ROBOTS_BYTES
    client = wsgi_client(SitemapMiddleware(hello_wsgi_app(big), {"p": [f"{BASE}/"]}))
    with caplog.at_level(logging.WARNING):
        response = client.get("/robots.txt")
    assert response.status_code == 200
    assert response.content == big
    assert any("robots.txt" in r.getMessage() for r in caplog.records)


def test_proxy_fix_outside_gives_the_public_scheme_and_host() -> None:
    sources = {"p": url_list("https://www.example.com", "p", 12)}
    inner = SitemapMiddleware(
        hello_wsgi_app(), sources, allowed_hosts=["www.example.com"], page_size=5
    )
    client = wsgi_client(ProxyFix(inner, x_proto=1, x_host=1))
    headers = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "www.example.com"}
    index = document(client, "/sitemap.xml", headers=headers)
    assert locs(index)[0] == "https://www.example.com/sitemap-p-1.xml"
    assert len(locs(document(client, "/sitemap-p-3.xml", headers=headers))) == 2
    robots = client.get("/robots.txt", headers=headers).text.splitlines()
    assert "Sitemap: https://www.example.com/sitemap.xml" in robots
    spoofed = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"}
    assert client.get("/sitemap.xml", headers=spoofed).status_code == 400


def test_mounted_under_a_script_name() -> None:
    sources = {"p": url_list(f"{BASE}/blog", "p", 12)}
    app = SitemapMiddleware(hello_wsgi_app(), sources, page_size=5)
    client = httpx.Client(
        transport=httpx.WSGITransport(app=app, script_name="/blog"), base_url=BASE
    )
    robots = client.get("/robots.txt").text.splitlines()
    assert "Sitemap: http://localhost/blog/sitemap.xml" in robots
    index = document(client, "/sitemap.xml")
    assert etree.fromstring(index).tag == SITEMAPINDEX_TAG
    assert locs(index)[0] == "http://localhost/blog/sitemap-p-1.xml"


def test_a_failing_source_is_logged_with_the_path(caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> Iterator[str]:
        raise LookupError("table missing")
        yield  # pragma: no cover

    client = wsgi_client(SitemapMiddleware(hello_wsgi_app(), {"broken": broken}))
    response = client.get("/sitemap-broken-1.xml")
    assert response.status_code == 500
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert b"table missing" not in response.content  # no internals in the body
    records = [r for r in caplog.records if r.name == "flask_sitemapper"]
    assert records and records[0].levelno == logging.ERROR
    assert "/sitemap-broken-1.xml" in records[0].getMessage()
    assert records[0].exc_info is not None and records[0].exc_info[0] is LookupError
