"""The HTML view (``/sitemap.html`` and its pages) on every front.

Each HTML document is checked against its XML twin: the same URLs in the same order,
page by page. Its navigation links are relative; each is resolved against the page's
own URL (as a browser does) and fetched. The headers are those of every sitemap
document plus the HTML ones (Content-Security-Policy, nosniff).
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
import lxml.html
import pytest
from lxml import etree

from sitemap_core import Entry, hreflang_cluster
from sitemap_core.write.html import CONTENT_SECURITY_POLICY

from .conftest import BASE, Front, generator_source, url_list
from .test_index_split import build_split_app

HTML = "text/html; charset=utf-8"
XML = "application/xml; charset=utf-8"
SM = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
IDENTITY = {"accept-encoding": "identity"}
GZIP = {"accept-encoding": "gzip"}
#: What Chromium and Firefox send for a navigation: text/html ranks above XML.
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
PAGE_SIZE = 5


def language_entries(origin: str = BASE) -> list[Entry]:
    """Three language versions of two pages (reciprocal alternates) and images."""
    entries = []
    for slug in ("about", "team"):
        group = {lang: f"{origin}/{lang}/{slug}" for lang in ("en", "de", "fr")}
        group["x-default"] = group["en"]
        for loc, alternates in hreflang_cluster(group):
            entries.append(
                Entry(loc, changefreq="monthly", images=[f"{loc}/photo.jpg"], alternates=alternates)
            )
    return entries


def index_sources() -> dict[str, Any]:
    """Two sources, 6 + 12 URLs: with 5 per page, an index of 2 + 3 pages."""
    return {
        "langs": language_entries(),
        "posts": generator_source(url_list(BASE, "posts", 12)),
    }


@pytest.fixture
def one_file(make_client: Callable[..., httpx.Client]) -> httpx.Client:
    """A site that fits one file: /sitemap.xml is a urlset."""
    return make_client({"langs": language_entries()})


@pytest.fixture
def indexed(make_client: Callable[..., httpx.Client]) -> httpx.Client:
    """A site of 18 URLs, 5 per page: /sitemap.xml is an index of 5 pages."""
    return make_client(index_sources(), page_size=PAGE_SIZE)


# -- reading documents ---------------------------------------------------------------


def get(client: httpx.Client, path: str, **headers: str) -> httpx.Response:
    return client.get(path, headers={**IDENTITY, **headers})


def page_url(path: str) -> str:
    return urljoin(BASE + "/", path.lstrip("/"))


def html_tree(response: httpx.Response) -> lxml.html.HtmlElement:
    assert response.status_code == 200, (response.request.url, response.status_code)
    assert response.headers["content-type"] == HTML
    return lxml.html.document_fromstring(response.content)


def row_links(response: httpx.Response) -> list[str]:
    """The link of the second column of each row (the URL, or the child page)."""
    return [str(href) for href in html_tree(response).xpath("//table/tbody/tr/td[2]/a/@href")]


def row_numbers(response: httpx.Response) -> list[int]:
    return [int(n) for n in html_tree(response).xpath("//table/tbody/tr/td[1]/text()")]


def nav(response: httpx.Response) -> dict[str, str]:
    """``{label: href}`` of the navigation above the table."""
    [header_nav] = html_tree(response).xpath("//header/nav")
    return {a.text_content(): a.get("href") for a in header_nav.iter("a")}


def xml_locs(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, (response.request.url, response.status_code)
    assert response.headers["content-type"] == XML
    root = etree.fromstring(response.content)
    return [str(loc.text) for loc in root.iterfind("sm:*/sm:loc", SM)]


def path_of(url: str) -> str:
    return urlsplit(url).path


def follow(client: httpx.Client, page: str, href: str) -> httpx.Response:
    """Fetch ``href`` as a browser would from the page at ``page``; it must exist."""
    target = urljoin(page_url(page), href)
    assert urlsplit(target).netloc == urlsplit(BASE).netloc, target
    response = get(client, path_of(target))
    assert response.status_code == 200, (page, href, response.status_code)
    expected = HTML if target.endswith(".html") else XML
    assert response.headers["content-type"] == expected, target
    return response


def html_twin(xml_url: str) -> str:
    """The path of the HTML view of a child sitemap named by its XML URL."""
    return path_of(xml_url).removesuffix(".xml") + ".html"


# -- the site in one file ----------------------------------------------------------------


def test_one_file_site_shows_every_url_of_the_urlset(one_file: httpx.Client) -> None:
    response = get(one_file, "/sitemap.html")
    locs = xml_locs(get(one_file, "/sitemap.xml"))
    assert len(locs) == 6
    assert row_links(response) == locs
    assert row_numbers(response) == list(range(1, 7))
    assert nav(response) == {"XML": "sitemap.xml"}
    follow(one_file, "/sitemap.html", "sitemap.xml")
    root = html_tree(response)
    assert root.findtext(".//title") == f"Sitemap of {BASE}"
    # No index form to show: the index-only paths are not there.
    assert get(one_file, "/sitemap-langs-1.html").status_code == 200
    assert get(one_file, "/sitemap-index-2.html").status_code == 404


def test_extensions_are_shown(one_file: httpx.Client) -> None:
    root = html_tree(get(one_file, "/sitemap.html"))
    [first_row] = root.xpath("//table/tbody/tr[1]")
    more = first_row.xpath("./td[6]")[0]
    assert [li.text_content() for li in more.iter("li")] == [
        f"image: {BASE}/en/about/photo.jpg",
        f"en: {BASE}/en/about",
        f"de: {BASE}/de/about",
        f"fr: {BASE}/fr/about",
        f"x-default: {BASE}/en/about",
    ]
    assert first_row.xpath("./td[4]")[0].text_content() == "monthly"


# -- the site as an index ----------------------------------------------------------------


def test_index_html_lists_the_pages_of_the_xml_index(indexed: httpx.Client) -> None:
    children = xml_locs(get(indexed, "/sitemap.xml"))
    assert [path_of(url) for url in children] == [
        "/sitemap-langs-1.xml",
        "/sitemap-langs-2.xml",
        "/sitemap-posts-1.xml",
        "/sitemap-posts-2.xml",
        "/sitemap-posts-3.xml",
    ]
    response = get(indexed, "/sitemap.html")
    # Each row links the HTML page and its XML twin, by relative name.
    root = html_tree(response)
    pairs = [
        [str(href) for href in row.xpath("./td/a/@href")] for row in root.xpath("//table/tbody/tr")
    ]
    assert pairs == [[html_twin(url).lstrip("/"), path_of(url).lstrip("/")] for url in children]
    assert row_numbers(response) == [1, 2, 3, 4, 5]
    assert nav(response) == {"XML": "sitemap.xml"}
    for hrefs in pairs:
        for href in hrefs:
            follow(indexed, "/sitemap.html", href)


def test_every_html_page_mirrors_its_xml_page(indexed: httpx.Client) -> None:
    children = [path_of(url) for url in xml_locs(get(indexed, "/sitemap.xml"))]
    seen: list[str] = []
    for xml_path in children:
        html_path = xml_path.removesuffix(".xml") + ".html"
        response = get(indexed, html_path)
        locs = xml_locs(get(indexed, xml_path))
        assert row_links(response) == locs, html_path
        number = int(xml_path.rsplit("-", 1)[1].split(".")[0])
        first = (number - 1) * PAGE_SIZE + 1
        assert row_numbers(response) == list(range(first, first + len(locs)))
        seen += locs
    assert len(seen) == len(set(seen)) == 18


@pytest.mark.parametrize(
    ("path", "links"),
    [
        (
            "/sitemap-langs-1.html",
            {
                "Index": "sitemap.html",
                "XML": "sitemap-langs-1.xml",
                "Next page": "sitemap-langs-2.html",
            },
        ),
        (
            "/sitemap-langs-2.html",
            {
                "Index": "sitemap.html",
                "XML": "sitemap-langs-2.xml",
                "Previous page": "sitemap-langs-1.html",
            },
        ),
        (
            "/sitemap-posts-2.html",
            {
                "Index": "sitemap.html",
                "XML": "sitemap-posts-2.xml",
                "Previous page": "sitemap-posts-1.html",
                "Next page": "sitemap-posts-3.html",
            },
        ),
    ],
)
def test_page_links_resolve_to_their_documents(
    indexed: httpx.Client, path: str, links: dict[str, str]
) -> None:
    response = get(indexed, path)
    assert nav(response) == links
    # The same links again under the table.
    [footer_nav] = html_tree(response).xpath("//footer/nav")
    assert {a.text_content(): a.get("href") for a in footer_nav.iter("a")} == links
    name = path.removeprefix("/sitemap-").removesuffix(".html")
    source, number = name.rsplit("-", 1)
    for label, href in links.items():
        target = follow(indexed, path, href)
        if label == "Index":
            assert "sitemap-langs-1.html" in row_links(target)
        elif label == "XML":
            assert xml_locs(target) == row_links(response)
        else:
            step = 1 if label == "Next page" else -1
            assert (
                path_of(str(target.request.url)) == f"/sitemap-{source}-{int(number) + step}.html"
            )
            assert row_numbers(target)[0] == row_numbers(response)[0] + step * PAGE_SIZE


def test_a_split_index_links_its_parts(front: Front) -> None:
    sources = {"posts": url_list(BASE, "posts", 23)}
    app = build_split_app(front, sources, page_size=2, index_size=5)
    # Not a `with` block: Starlette's client would send lifespan events to the bare app.
    client = front.client(app)
    try:
        children = [html_twin(url).lstrip("/") for url in xml_locs(get(client, "/sitemap.xml"))]
        children += [
            html_twin(url).lstrip("/") for url in xml_locs(get(client, "/sitemap-index-2.xml"))
        ]
        children += [
            html_twin(url).lstrip("/") for url in xml_locs(get(client, "/sitemap-index-3.xml"))
        ]
        assert len(children) == 12
        first = get(client, "/sitemap.html")
        assert nav(first) == {"XML": "sitemap.xml", "Next part": "sitemap-index-2.html"}
        second = follow(client, "/sitemap.html", "sitemap-index-2.html")
        assert nav(second) == {
            "XML": "sitemap-index-2.xml",
            "Previous part": "sitemap.html",
            "Next part": "sitemap-index-3.html",
        }
        third = follow(client, "/sitemap-index-2.html", "sitemap-index-3.html")
        assert nav(third) == {"XML": "sitemap-index-3.xml", "Previous part": "sitemap-index-2.html"}
        assert row_links(first) + row_links(second) + row_links(third) == children
        assert row_numbers(first) + row_numbers(second) + row_numbers(third) == list(range(1, 13))
        assert html_tree(second).findtext(".//title") == f"Sitemap index of {BASE}, part 2 of 3"
        for label in ("XML", "Previous part"):
            follow(client, "/sitemap-index-3.html", nav(third)[label])
    finally:
        client.close()


# -- headers -------------------------------------------------------------------------------

HTML_PATHS = ["/sitemap.html", "/sitemap-langs-1.html", "/sitemap-posts-3.html"]


@pytest.mark.parametrize("path", HTML_PATHS)
def test_html_headers(indexed: httpx.Client, path: str) -> None:
    response = get(indexed, path)
    assert response.status_code == 200
    assert response.headers["content-type"] == HTML
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["vary"] == "Accept-Encoding"
    assert response.headers["etag"]
    assert "content-encoding" not in response.headers
    assert response.content.startswith(b"<!DOCTYPE html>")


@pytest.mark.parametrize("path", HTML_PATHS)
@pytest.mark.parametrize("coding", [IDENTITY, GZIP], ids=["identity", "gzip"])
def test_html_etag_and_304(indexed: httpx.Client, path: str, coding: dict[str, str]) -> None:
    first = indexed.get(path, headers=coding)
    etag = first.headers["etag"]
    again = indexed.get(path, headers={**coding, "if-none-match": etag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == etag
    other = indexed.get(path, headers={**coding, "if-none-match": '"something-else"'})
    assert other.status_code == 200
    assert other.content == first.content


@pytest.mark.parametrize("path", HTML_PATHS)
def test_html_gzip_when_asked(indexed: httpx.Client, path: str) -> None:
    plain = get(indexed, path)
    with indexed.stream("GET", path, headers=GZIP) as response:
        raw = b"".join(response.iter_raw())
        headers = response.headers
    assert response.status_code == 200
    assert headers["content-encoding"] == "gzip"
    assert headers["content-type"] == HTML
    assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert headers["x-content-type-options"] == "nosniff"
    assert gzip.decompress(raw) == plain.content
    assert headers["etag"] != plain.headers["etag"]


@pytest.mark.parametrize("path", HTML_PATHS)
def test_html_head(indexed: httpx.Client, path: str) -> None:
    got = get(indexed, path)
    head = indexed.head(path, headers=IDENTITY)
    assert head.status_code == 200
    assert head.content == b""
    for name in ("content-type", "content-security-policy", "x-content-type-options", "etag"):
        assert head.headers[name] == got.headers[name], name


@pytest.mark.parametrize(
    "path",
    [
        "/sitemap.html.gz",
        "/sitemap-langs-1.html.gz",
        "/sitemap-posts-4.html",
        "/sitemap-posts-0.html",
        "/sitemap-posts-01.html",
        "/sitemap-posts-abc.html",
        "/sitemap-posts--1.html",
        "/sitemap-posts-99999999999999999999999.html",
        "/sitemap-nope-1.html",
        "/sitemap-index-2.html",
        "/sitemap-posts.html",
        "/sitemap-posts-1.htm",
    ],
)
def test_unknown_html_pages_are_404(indexed: httpx.Client, path: str) -> None:
    assert get(indexed, path).status_code == 404
    assert get(indexed, path, **GZIP).status_code == 404


@pytest.mark.parametrize("path", ["/sitemap.xml", "/sitemap-posts-1.xml"])
def test_xml_stays_xml_for_a_browser_accept_header(indexed: httpx.Client, path: str) -> None:
    response = get(indexed, path, accept=BROWSER_ACCEPT)
    assert response.headers["content-type"] == XML
    assert response.content.startswith(b"<?xml")
    assert "content-security-policy" not in response.headers
    # And the HTML view answers HTML whatever Accept says.
    assert get(indexed, "/sitemap.html", accept="application/xml").headers["content-type"] == HTML


def test_one_file_html_headers_and_304(one_file: httpx.Client) -> None:
    response = get(one_file, "/sitemap.html")
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert response.headers["x-content-type-options"] == "nosniff"
    again = get(one_file, "/sitemap.html", **{"if-none-match": response.headers["etag"]})
    assert again.status_code == 304
    assert get(one_file, "/sitemap.html.gz").status_code == 404
