"""Behaviour every front must show: run once per front registered in ``conftest.FRONTS``.

The tests talk HTTP only (an ``httpx.Client`` per front), build their sites from the
same source definitions through ``make_client`` / ``make_app``, and never look at which
front they run against, except to mark a known bug of one front as ``xfail``.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree
from xsd import SITEMAP_NS, SITEMAPINDEX_TAG, URLSET_TAG, validate

from .conftest import BASE, STANDARD_COUNTS, Front, standard_sources, url_list

NS = {"sm": SITEMAP_NS}
XML = "application/xml; charset=utf-8"
TEXT = "text/plain; charset=utf-8"
SITEMAP_LINE = "Sitemap: http://localhost/sitemap.xml"

MakeClient = Callable[..., httpx.Client]


# -- helpers ---------------------------------------------------------------------------


def parse(body: bytes) -> etree._Element:
    """Parse a document safely (no entities, no network)."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    return etree.fromstring(body, parser)


def is_well_formed(body: bytes) -> bool:
    try:
        parse(body)
    except etree.XMLSyntaxError:
        return False
    return True


def locs(body: bytes) -> list[str]:
    """The ``<loc>`` texts of a urlset or sitemapindex, in document order."""
    return [str(loc.text) for loc in parse(body).iterfind(".//sm:loc", NS)]


def path_of(url: str) -> str:
    return urlsplit(url).path


def get_document(client: httpx.Client, path: str) -> bytes:
    """GET a sitemap document, check status, type and schema; return the body."""
    response = client.get(path)
    assert response.status_code == 200, (path, response.status_code, response.text[:200])
    assert response.headers["content-type"] == XML
    validate(response.content)
    return response.content


def all_standard_urls(origin: str = BASE) -> list[str]:
    return [url for name, n in STANDARD_COUNTS.items() for url in url_list(origin, name, n)]


def comparable_headers(response: httpx.Response) -> list[tuple[str, str]]:
    # Date is the only header allowed to differ between two requests.
    return sorted((k.lower(), v) for k, v in response.headers.multi_items() if k.lower() != "date")


class CountedSlices:
    """A sized sliceable of ``total`` URLs that can fail at entry ``fail_at``.

    ``fail_with`` is raised instead of yielding entry ``fail_at`` (a bad URL string is
    yielded instead when ``fail_with`` is None and ``bad_entry_at`` is set). ``pulled``
    counts the entries handed out so far.
    """

    def __init__(
        self,
        total: int,
        fail_at: int | None = None,
        bad_entry_at: int | None = None,
        gate_at: int | None = None,
    ) -> None:
        self.total = total
        self.fail_at = fail_at
        self.bad_entry_at = bad_entry_at
        self.pulled = 0
        #: Entry ``gate_at`` waits until :attr:`gate` is set (for a source pulled in a
        #: worker thread, never in the thread that reads the body).
        self.gate_at = gate_at
        self.gate = threading.Event()

    def __len__(self) -> int:
        return self.total

    def fingerprint(self, start: int, stop: int) -> tuple[int, int, int]:
        """As a table's cheap fingerprint: with it, pages stream (no spool first)."""
        return (self.total, start, stop)

    def __getitem__(self, index: slice) -> Iterator[str]:
        for i in range(index.start or 0, min(index.stop, self.total)):
            if i == self.fail_at:
                raise RuntimeError(f"database went away at row {i}")
            if i == self.gate_at:
                assert self.gate.wait(30), "the gate was never opened"
            self.pulled += 1
            yield "not a url" if i == self.bad_entry_at else f"{BASE}/item/{i}"


def raising_source() -> Iterator[str]:
    raise RuntimeError("database went away before the first row")
    yield  # pragma: no cover - makes this a generator function


def error_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.ERROR]


# -- the wrapped application is untouched ------------------------------------------------


def test_the_wrapped_app_still_answers(client: httpx.Client) -> None:
    assert client.get("/").text == "hello"
    assert client.get("/no/such/page").status_code == 404


# -- robots.txt --------------------------------------------------------------------------


def test_robots_txt_declares_the_absolute_sitemap_url(client: httpx.Client) -> None:
    response = client.get("/robots.txt")
    assert response.status_code == 200
    assert response.headers["content-type"] == TEXT
    lines = response.text.splitlines()
    assert lines.count(SITEMAP_LINE) == 1
    # Ours, since the app has none: rules that allow everything, then the line.
    assert response.text == "User-agent: *\nDisallow:\n\n" + SITEMAP_LINE + "\n"


def test_robots_txt_uses_the_configured_rules(make_client: MakeClient) -> None:
    rules = "User-agent: *\nDisallow: /admin/\n"
    client = make_client(standard_sources(), robots_rules=rules)
    text = client.get("/robots.txt").text
    assert text.startswith(rules)
    assert text.splitlines().count(SITEMAP_LINE) == 1


@pytest.mark.parametrize(
    "app_robots",
    [
        pytest.param(b"User-agent: *\nDisallow: /private/\n", id="plain"),
        pytest.param(b"User-agent: *\r\nDisallow: /x # no final newline", id="crlf-no-eol"),
        pytest.param(
            "# r\u00e9sum\u00e9 \u2013 \u00fcber\nUser-agent: Googlebot\nAllow: /\n".encode(),
            id="utf8",
        ),
        pytest.param(
            b"User-agent: *\nDisallow:\nSitemap: https://cdn.example.net/other.xml\n",
            id="other-sitemap-kept",
        ),
    ],
)
def test_the_apps_own_robots_txt_is_kept_byte_for_byte(
    make_client: MakeClient, app_robots: bytes
) -> None:
    client = make_client(standard_sources(), app_robots=app_robots)
    response = client.get("/robots.txt")
    assert response.status_code == 200
    assert response.headers["content-type"] == TEXT
    body = response.content
    assert body.startswith(app_robots)
    added = body[len(app_robots) :].decode()
    assert added.strip() == SITEMAP_LINE
    assert body.decode().splitlines().count(SITEMAP_LINE) == 1
    assert response.headers.get("content-length", str(len(body))) == str(len(body))


@pytest.mark.parametrize(
    "declared",
    [SITEMAP_LINE, "sitemap: http://localhost/sitemap.xml", "SITEMAP:http://localhost/sitemap.xml"],
)
def test_a_sitemap_line_already_there_is_not_added_twice(
    make_client: MakeClient, declared: str
) -> None:
    app_robots = f"User-agent: *\nDisallow:\n\n{declared}\n".encode()
    client = make_client(standard_sources(), app_robots=app_robots)
    response = client.get("/robots.txt")
    assert response.status_code == 200
    assert response.content == app_robots


def test_non_utf8_bytes_of_the_apps_robots_txt_are_kept(make_client: MakeClient) -> None:
    app_robots = b"User-agent: *\nDisallow: /caf\xe9/\n"  # Latin-1, as old files are
    client = make_client(standard_sources(), app_robots=app_robots)
    body = client.get("/robots.txt").content
    assert body.startswith(app_robots)


def test_robots_false_leaves_robots_txt_to_the_app(make_client: MakeClient) -> None:
    without = make_client(standard_sources(), robots=False)
    assert without.get("/robots.txt").status_code == 404
    own = b"User-agent: *\nDisallow: /\n"
    with_own = make_client(standard_sources(), robots=False, app_robots=own)
    response = with_own.get("/robots.txt")
    assert response.status_code == 200
    assert response.content == own
    # The sitemap itself is still served.
    assert with_own.get("/sitemap.xml").status_code == 200


# -- urlset / index / pages --------------------------------------------------------------


def test_one_urlset_while_everything_fits(make_client: MakeClient) -> None:
    client = make_client(standard_sources(), page_size=50)
    body = get_document(client, "/sitemap.xml")
    assert parse(body).tag == URLSET_TAG
    assert locs(body) == all_standard_urls()


@pytest.mark.parametrize(("page_size", "root"), [(38, URLSET_TAG), (37, SITEMAPINDEX_TAG)])
def test_an_index_exactly_when_over_the_page_size(
    make_client: MakeClient, page_size: int, root: str
) -> None:
    client = make_client(standard_sources(), page_size=page_size)
    body = get_document(client, "/sitemap.xml")
    assert parse(body).tag == root


def test_index_lists_the_child_pages_in_order(client: httpx.Client) -> None:
    body = get_document(client, "/sitemap.xml")
    assert parse(body).tag == SITEMAPINDEX_TAG
    assert locs(body) == [
        f"{BASE}/sitemap-pages-1.xml",
        f"{BASE}/sitemap-pages-2.xml",
        f"{BASE}/sitemap-posts-1.xml",
        f"{BASE}/sitemap-posts-2.xml",
        f"{BASE}/sitemap-posts-3.xml",
    ]


def test_child_pages_are_valid_and_complete(client: httpx.Client) -> None:
    children = locs(get_document(client, "/sitemap.xml"))
    served: list[str] = []
    for child in children:
        body = get_document(client, path_of(child))
        assert parse(body).tag == URLSET_TAG
        page = locs(body)
        assert 1 <= len(page) <= 10
        served += page
    assert len(served) == len(set(served)), "a URL is listed on two pages"
    assert served == all_standard_urls()


def test_text_sitemap_while_everything_fits(make_client: MakeClient) -> None:
    client = make_client(standard_sources(), page_size=50)
    response = client.get("/sitemap.txt")
    assert response.status_code == 200
    assert response.headers["content-type"] == TEXT
    assert response.text.splitlines() == all_standard_urls()


def test_text_child_pages_hold_every_url_once(client: httpx.Client) -> None:
    served: list[str] = []
    for name, n in STANDARD_COUNTS.items():
        for number in range(1, -(-n // 10) + 1):
            response = client.get(f"/sitemap-{name}-{number}.txt")
            assert response.status_code == 200
            assert response.headers["content-type"] == TEXT
            served += response.text.splitlines()
    assert served == all_standard_urls()
    # Documented: text sitemaps have no index form, so an over-full root is not there.
    assert client.get("/sitemap.txt").status_code == 404


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    counts=st.lists(st.integers(0, 45), min_size=1, max_size=3),
    page_size=st.integers(1, 20),
)
def test_any_paging_lists_every_url_once(
    make_client: MakeClient, counts: list[int], page_size: int
) -> None:
    sources = {f"s{i}": url_list(BASE, f"s{i}", n) for i, n in enumerate(counts)}
    everything = [url for urls in sources.values() for url in urls]
    client = make_client(sources, page_size=page_size)
    root = client.get("/sitemap.xml")
    if not everything:
        assert root.status_code == 404
        return
    assert root.status_code == 200
    if len(everything) <= page_size:
        assert parse(root.content).tag == URLSET_TAG
        assert locs(root.content) == everything
        return
    assert parse(root.content).tag == SITEMAPINDEX_TAG
    children = locs(root.content)
    assert children == [
        f"{BASE}/sitemap-{name}-{number}.xml"
        for name, urls in sources.items()
        for number in range(1, -(-len(urls) // page_size) + 1)
    ]
    served = []
    for child in children:
        page = client.get(path_of(child))
        assert page.status_code == 200
        page_locs = locs(page.content)
        assert 1 <= len(page_locs) <= page_size
        served += page_locs
    assert served == everything
    for name, urls in sources.items():
        last = -(-len(urls) // page_size)
        assert client.get(f"/sitemap-{name}-{last + 1}.xml").status_code == 404


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/sitemap.xml", XML),
        ("/sitemap-pages-1.xml", XML),
        ("/sitemap-posts-3.xml", XML),
        ("/sitemap-posts-2.txt", TEXT),
        ("/robots.txt", TEXT),
    ],
)
def test_content_types(client: httpx.Client, path: str, content_type: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"] == content_type


@pytest.mark.parametrize(
    "path",
    [
        "/sitemap-pages-0.xml",
        "/sitemap-pages--1.xml",
        "/sitemap-pages-01.xml",
        "/sitemap-pages-abc.xml",
        f"/sitemap-pages-{10**20}.xml",
        f"/sitemap-pages-{10**17}.xml",  # short enough to parse, far past the end
        "/sitemap-pages-3.xml",  # last + 1
        "/sitemap-posts-4.xml",  # last + 1
        "/sitemap-posts-4.txt",
        "/sitemap-nope-1.xml",  # unknown source
        "/sitemap-Pages-1.xml",
        "/sitemap-pages-1.xml/",
        "/sitemap-0.xml",
    ],
)
def test_pages_that_do_not_exist_are_404(client: httpx.Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert b"<url" not in response.content


def test_an_empty_site_has_no_sitemap(make_client: MakeClient) -> None:
    client = make_client({"pages": []})
    assert client.get("/sitemap.xml").status_code == 404
    assert client.get("/sitemap-pages-1.xml").status_code == 404


# -- methods -----------------------------------------------------------------------------

HEAD_PATHS = [
    "/sitemap.xml",
    "/sitemap-pages-1.xml",
    "/sitemap-posts-3.txt",
    "/robots.txt",
    "/sitemap-posts-9.xml",
    "/sitemap-nope-1.xml",
]


@pytest.mark.parametrize("path", HEAD_PATHS)
def test_head_has_the_get_status_and_headers_and_no_body(client: httpx.Client, path: str) -> None:
    get = client.get(path)
    head = client.head(path)
    assert head.status_code == get.status_code
    assert comparable_headers(head) == comparable_headers(get)
    assert head.content == b""
    if get.status_code == 200:
        assert head.headers.get("content-length") != "0"


def test_head_of_a_urlset_that_fits(make_client: MakeClient) -> None:
    client = make_client(standard_sources(), page_size=50)
    get, head = client.get("/sitemap.xml"), client.head("/sitemap.xml")
    assert (head.status_code, comparable_headers(head)) == (200, comparable_headers(get))
    assert head.content == b""
    assert head.headers.get("content-length") != "0"


def test_head_of_the_apps_own_robots_txt(make_client: MakeClient) -> None:
    # The wrapped apps send no body for HEAD, as Werkzeug does: the Sitemap line must
    # still be counted in the length.
    own = b"User-agent: *\nDisallow: /x\n"
    client = make_client(standard_sources(), app_robots=own)
    get, head = client.get("/robots.txt"), client.head("/robots.txt")
    assert get.content.startswith(own)
    assert head.status_code == get.status_code == 200
    assert head.content == b""
    assert comparable_headers(head) == comparable_headers(get)


@pytest.mark.parametrize(
    "method", ["POST", "PUT", "DELETE", "OPTIONS", "PATCH", "PROPFIND", "BREW"]
)
@pytest.mark.parametrize(
    "path", ["/sitemap.xml", "/sitemap-pages-1.xml", "/sitemap-posts-2.txt", "/robots.txt"]
)
def test_other_methods_are_405_with_allow(client: httpx.Client, method: str, path: str) -> None:
    response = client.request(method, path)
    assert response.status_code == 405
    allowed = {m.strip() for m in response.headers["allow"].split(",")}
    assert allowed == {"GET", "HEAD"}
    assert b"<url" not in response.content


@pytest.mark.parametrize("method", ["POST", "DELETE"])
def test_other_methods_on_the_apps_own_robots_txt_are_405(
    make_client: MakeClient, method: str
) -> None:
    client = make_client(standard_sources(), app_robots=b"User-agent: *\nDisallow:\n")
    response = client.request(method, "/robots.txt")
    assert response.status_code == 405
    assert {"GET", "HEAD"} <= {m.strip() for m in response.headers["allow"].split(",")}


# -- hosts -------------------------------------------------------------------------------

EVIL = "evil.example"
SITE_PATHS = ["/sitemap.xml", "/sitemap-pages-1.xml", "/sitemap-posts-1.txt", "/robots.txt"]


@pytest.mark.parametrize("path", SITE_PATHS)
@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_an_untrusted_host_gets_400(client: httpx.Client, path: str, method: str) -> None:
    response = client.request(method, path, headers={"Host": EVIL})
    assert response.status_code == 400
    assert b"<url" not in response.content
    assert b"Sitemap:" not in response.content


@pytest.mark.parametrize("host", [EVIL, f"{EVIL}:80", "localhost.evil.example", "127.0.0.1.nip.io"])
def test_an_untrusted_host_never_reaches_a_sitemap(client: httpx.Client, host: str) -> None:
    for path in SITE_PATHS:
        response = client.get(path, headers={"Host": host})
        assert response.status_code == 400
        assert b"<loc>" not in response.content
        assert b"Sitemap:" not in response.content
    # A trusted request afterwards is not poisoned (nothing is kept from the above).
    for path in SITE_PATHS:
        response = client.get(path)
        assert response.status_code == 200
        assert b"evil" not in response.content and b"nip.io" not in response.content


def test_the_untrusted_host_is_logged_not_echoed(
    client: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    for path in SITE_PATHS:
        response = client.get(path, headers={"Host": EVIL})
        assert response.status_code == 400
        assert EVIL.encode() not in response.content
    assert any(EVIL in record.getMessage() for record in caplog.records)


def test_the_apps_own_robots_txt_on_an_untrusted_host_is_left_alone(
    make_client: MakeClient,
) -> None:
    own = b"User-agent: *\nDisallow: /x\n"
    client = make_client(standard_sources(), app_robots=own)
    response = client.get("/robots.txt", headers={"Host": EVIL})
    assert response.status_code == 200
    assert response.content == own


def test_an_allowed_host_gets_its_own_urls(make_client: MakeClient) -> None:
    origin = "http://www.example.org"
    client = make_client(
        standard_sources(origin), page_size=10, allowed_hosts=["www.example.org", "localhost"]
    )
    headers = {"Host": "www.example.org"}
    robots = client.get("/robots.txt", headers=headers).text
    assert "Sitemap: http://www.example.org/sitemap.xml" in robots.splitlines()
    index = client.get("/sitemap.xml", headers=headers)
    validate(index.content)
    children = locs(index.content)
    assert children[0] == "http://www.example.org/sitemap-pages-1.xml"
    assert all(child.startswith(origin + "/") for child in children)
    page = client.get(path_of(children[0]), headers=headers)
    assert locs(page.content) == url_list(origin, "pages", 13)[:10]
    # Still only the listed hosts.
    assert client.get("/sitemap.xml", headers={"Host": "other.example.org"}).status_code == 400


def test_a_subdomain_pattern_and_a_port(make_client: MakeClient) -> None:
    origin = "http://shop.example.org:8080"
    client = make_client(standard_sources(origin), page_size=10, allowed_hosts=[".example.org"])
    headers = {"Host": "shop.example.org:8080"}
    children = locs(client.get("/sitemap.xml", headers=headers).content)
    assert children[0] == f"{origin}/sitemap-pages-1.xml"
    bad = client.get("/sitemap.xml", headers={"Host": "example.org.evil.example"})
    assert bad.status_code == 400


def test_a_configured_base_url_wins_over_the_host_header(make_client: MakeClient) -> None:
    origin = "https://www.example.com"
    client = make_client(standard_sources(origin), page_size=10, base_url=origin)
    for headers in ({}, {"Host": EVIL}, {"Host": "127.0.0.1:5000"}):
        robots = client.get("/robots.txt", headers=headers)
        assert robots.status_code == 200
        assert f"Sitemap: {origin}/sitemap.xml" in robots.text.splitlines()
        index = client.get("/sitemap.xml", headers=headers)
        assert index.status_code == 200
        validate(index.content)
        children = locs(index.content)
        assert children[0] == f"{origin}/sitemap-pages-1.xml"
        page = client.get(path_of(children[-1]), headers=headers)
        assert locs(page.content) == url_list(origin, "posts", 25)[20:]
        for body in (robots.content, index.content, page.content):
            assert EVIL.encode() not in body
            assert b"localhost" not in body and b"127.0.0.1" not in body


def test_entries_on_another_origin_are_refused(
    make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    foreign = {"pages": [f"{BASE}/a", "http://elsewhere.example/b"]}
    client = make_client(foreign)
    response = client.get("/sitemap.xml")
    assert response.status_code == 500
    assert b"elsewhere.example" not in response.content
    assert error_records(caplog)
    relaxed = make_client(foreign, same_host_only=False)
    body = get_document(relaxed, "/sitemap.xml")
    assert locs(body) == [f"{BASE}/a", "http://elsewhere.example/b"]


# -- escaping ----------------------------------------------------------------------------

ODD_URLS = {
    # What the app gave -> what the document must carry (a URI: < > " percent-encoded).
    f"{BASE}/fish&chips": f"{BASE}/fish&chips",
    f"{BASE}/it's": f"{BASE}/it's",
    f'{BASE}/say"hi"': f"{BASE}/say%22hi%22",
    f"{BASE}/<tag>": f"{BASE}/%3Ctag%3E",
    f"{BASE}/search?q=fish&chips&x='1'": f"{BASE}/search?q=fish&chips&x='1'",
    f'{BASE}/q?a=<b>&c="d"&e=&amp;': f"{BASE}/q?a=%3Cb%3E&c=%22d%22&e=&amp;",
}


def test_special_characters_are_escaped_and_parse_back(make_client: MakeClient) -> None:
    client = make_client({"odd": list(ODD_URLS)})
    body = get_document(client, "/sitemap.xml")
    assert locs(body) == list(ODD_URLS.values())
    # Every '&' in the raw text starts an entity.
    assert not re.search(rb"&(?!amp;|lt;|gt;|quot;|apos;)", body)
    assert b"&amp;amp;" in body  # the literal "&amp;" of the last query, escaped once
    text = client.get("/sitemap.txt").text
    assert text.splitlines() == list(ODD_URLS.values())


def test_non_ascii_paths_are_percent_encoded(make_client: MakeClient) -> None:
    urls = {
        f"{BASE}/caf\u00e9/\u00fcber?q=\u00e4&r=\u00df": (
            f"{BASE}/caf%C3%A9/%C3%BCber?q=%C3%A4&r=%C3%9F"
        ),
        f"{BASE}/\u65e5\u672c\u8a9e": f"{BASE}/%E6%97%A5%E6%9C%AC%E8%AA%9E",
        f"{BASE}/emoji/\U0001f600": f"{BASE}/emoji/%F0%9F%98%80",
    }
    client = make_client({"intl": list(urls)})
    body = get_document(client, "/sitemap.xml")
    assert body.isascii()
    assert locs(body) == list(urls.values())


# Paths and queries of any text a URL can carry ('%' left out: an existing escape is
# kept as is, so it would not round-trip through unquote; '#' starts a fragment).
_URL_TEXT = st.characters(codec="utf-8", exclude_categories=("Cc", "Cs"), exclude_characters="%#")


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    path=st.text(_URL_TEXT.filter(lambda c: c != "?"), min_size=1, max_size=24),
    query=st.none() | st.text(_URL_TEXT, max_size=24),
)
def test_any_url_text_comes_back_from_the_xml(
    make_client: MakeClient, path: str, query: str | None
) -> None:
    url = f"{BASE}/{path}" + ("" if query is None else f"?{query}")
    client = make_client({"fuzz": [url]})
    body = get_document(client, "/sitemap.xml")
    (loc,) = locs(body)
    assert loc.isascii()
    assert unquote(loc) == url


# -- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(raising_source, id="count-raises"),
        pytest.param(CountedSlices(30, fail_at=0), id="first-slice-raises"),
        pytest.param(CountedSlices(30, bad_entry_at=3), id="invalid-first-batch"),
    ],
)
@pytest.mark.parametrize("path", ["/sitemap.xml", "/sitemap-broken-1.xml"])
def test_a_source_failing_before_the_first_byte_is_a_500(
    make_client: MakeClient, caplog: pytest.LogCaptureFixture, source: Any, path: str
) -> None:
    client = make_client({"broken": source})
    response = client.get(path)
    assert response.status_code == 500
    assert b"<urlset" not in response.content
    assert b"/item/" not in response.content
    records = error_records(caplog)
    assert records, "no log line for the 500"
    assert any(r.exc_info is not None for r in records)


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(CountedSlices(50_000, fail_at=20_000), id="raises"),
        pytest.param(CountedSlices(50_000, bad_entry_at=20_000), id="invalid-entry"),
    ],
)
def test_a_source_failing_mid_stream_cuts_the_transfer(
    make_client: MakeClient, caplog: pytest.LogCaptureFixture, source: CountedSlices
) -> None:
    client = make_client({"big": source})
    received = b""
    status = None
    completed = False
    # Any error will do, raised at the request or while reading: the point is that the
    # body never completes.
    with pytest.raises(Exception) as raised, client.stream("GET", "/sitemap.xml") as response:
        status = response.status_code
        for chunk in response.iter_raw():
            received += chunk
        completed = True
    assert not completed
    assert not (status == 200 and is_well_formed(received))
    assert not received.rstrip().endswith(b"</urlset>")
    assert raised.value is not None
    assert any("cut" in r.getMessage() for r in error_records(caplog))


def test_mid_stream_failure_comes_after_the_first_bytes(make_app: Any, front: Front) -> None:
    app = make_app({"big": CountedSlices(50_000, fail_at=20_000)})
    raw = front.raw_body(app, "/sitemap.xml")
    assert raw.status == 200
    received: list[bytes] = []
    with pytest.raises(RuntimeError, match="row 20000"):
        for chunk in raw.chunks:
            received.append(chunk)
    body = b"".join(received)
    assert len(received) >= 2
    assert body.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n<urlset')
    assert b"</urlset>" not in body
    assert not is_well_formed(body)


def test_a_big_page_streams_in_chunks_of_tens_of_kib(make_app: Any, front: Front) -> None:
    # On ASGI the page is rendered at full speed into a relay that the response reads
    # at its own pace (asgi_sitemap.relay): the source is held at entry 20,000, and the
    # first chunk must arrive meanwhile. The sync fronts render as the body is read.
    asgi = front.name.startswith("asgi")
    source = CountedSlices(50_000, gate_at=20_000 if asgi else None)
    app = make_app({"big": source})
    raw = front.raw_body(app, "/sitemap.xml")
    assert raw.status == 200
    first = next(raw.chunks)
    # Streamed, not rendered up front: one chunk needs a small part of the source.
    assert source.pulled <= 20_000 if asgi else source.pulled < 10_000
    source.gate.set()
    chunks = [first, *raw.chunks]
    assert len(chunks) >= 20
    sizes = [len(chunk) for chunk in chunks]
    assert all(16 * 1024 <= size <= 256 * 1024 for size in sizes[:-1]), sizes
    body = b"".join(chunks)
    validate(body)
    found = locs(body)
    assert len(found) == 50_000
    assert found[0] == f"{BASE}/item/0" and found[-1] == f"{BASE}/item/49999"
