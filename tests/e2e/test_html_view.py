"""The HTML view of each example's sitemap, in headless Chromium against its real server.

A person opens ``/sitemap.html`` (the index of every example), clicks through to a page,
on to the next page and to one of the listed URLs, which must be a real page of the
example. What the browser shows is compared with the database the server reads (as the
other end-to-end tests do for the XML), the images, video and hreflang alternates the
examples declare must be visible, and the console must stay free of errors: the page's
Content-Security-Policy would report anything it blocked there.

A page of 50,000 rows is 16 MB of HTML, which headless Chromium takes 20 to 30 seconds
to load on a two-core machine; so the paging is browsed on a second server of each
example run with 1,000 URLs per page (``FLASK_SITEMAP_PAGE_SIZE`` /
``SITEMAP_PAGE_SIZE``, settings of the examples), and the shared server with the
protocol's page size serves the index, the routes' page and ``/sitemap.xml``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from browser import BrowserPage

from sitemap_core.write.html import CONTENT_SECURITY_POLICY

from .conftest import DatabaseFor
from .servers import run_gunicorn, run_uvicorn
from .sites import SQLITE_SITES, ExampleSite, ServedExample

# What a person sees does not depend on the database behind it: the examples on their
# SQLite files only (the other checks show PostgreSQL serves the same documents).
pytestmark = pytest.mark.parametrize(
    "example", SQLITE_SITES, indirect=True, ids=str, scope="session"
)

#: URLs per page on the second server of each example.
SMALL_PAGE = 1_000

HTML = "text/html; charset=utf-8"
XML = "application/xml; charset=utf-8"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

#: The URL column's links, as the browser resolves them.
ROW_HREFS = "table tbody tr td:nth-child(2) a"
ROWS = "table tbody tr"


@dataclass(frozen=True)
class Shown:
    """What the "More" cell of one row of one page must list (``{base}`` is the site)."""

    page: str
    row: int  # 1-based, within the page
    items: tuple[str, ...]


#: Per example: the extensions its sitemap declares, as the view must show them (the
#: item pages as served with :data:`SMALL_PAGE` URLs per page).
EXTENSIONS: dict[str, tuple[Shown, ...]] = {
    "flask": (
        Shown(
            "/sitemap-pages-1.html",
            13,  # /de/welcome: after 3 pages, 8 tags and /en/welcome
            (
                "en: {base}/en/welcome",
                "de: {base}/de/welcome",
                "fr: {base}/fr/welcome",
                "x-default: {base}/en/welcome",
            ),
        ),
        Shown("/sitemap-posts-1.html", 1, ("image: {base}/posts/1/cover.svg",)),
        Shown("/sitemap-posts-2.html", 1, ("image: {base}/posts/1001/cover.svg",)),
    ),
    "starlette": (
        Shown(
            "/sitemap-pages-1.html",
            9,  # /en/newsletter: after 2 pages and 6 topics
            (
                "en: {base}/en/newsletter",
                "de: {base}/de/newsletter",
                "es: {base}/es/newsletter",
                "x-default: {base}/en/newsletter",
            ),
        ),
    ),
    "fastapi": (
        Shown(
            "/sitemap-products-1.html",
            1,
            ("image: {base}/products/1/photo.svg", "video: Product 1 in use (60 s)"),
        ),
        Shown("/sitemap-products-1.html", 2, ("image: {base}/products/2/photo.svg",)),
        Shown("/sitemap-products-2.html", 1, ("image: {base}/products/1001/photo.svg",)),
    ),
}

#: The heading of each example's item pages, by the item's title in its database.
ITEM_TITLE = {"flask": "Post number {}", "starlette": "Article {}", "fastapi": "Product {}"}
#: The heading of the first page the routes source lists ("/").
HOME_TITLE = {"flask": "The blog", "starlette": "The news", "fastapi": "The shop"}


@pytest.fixture(scope="module")
def small_pages(
    example: ExampleSite, database_for: DatabaseFor, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServedExample]:
    """``example`` on a second server, with :data:`SMALL_PAGE` URLs per child sitemap."""
    database = database_for(example)
    env = {
        example.database_variable: str(database),
        "FLASK_SITEMAP_PAGE_SIZE" if example.server == "gunicorn" else "SITEMAP_PAGE_SIZE": str(
            SMALL_PAGE
        ),
    }
    run = run_gunicorn if example.server == "gunicorn" else run_uvicorn
    logs = tmp_path_factory.mktemp(f"logs-small-{example.name}")
    with run("app:app", example.directory, logs, env=env) as server:
        yield ServedExample.read(example, server, database)


def _item_locs(served: ServedExample, number: int) -> list[str]:
    start = (number - 1) * SMALL_PAGE
    return served.item_urls(start, start + SMALL_PAGE)


def _hrefs(browser: BrowserPage) -> list[str]:
    hrefs: list[str] = browser.page.eval_on_selector_all(ROW_HREFS, "els => els.map(e => e.href)")
    return hrefs


def _numbers(browser: BrowserPage) -> list[int]:
    return [int(n) for n in browser.texts(f"{ROWS} td:first-child")]


def _more(browser: BrowserPage, row: int) -> list[str]:
    return browser.texts(f"{ROWS}:nth-child({row}) td:nth-child(6) li")


def _check_extensions(browser: BrowserPage, served: ServedExample, path: str) -> int:
    checked = 0
    for shown in EXTENSIONS[served.site.name]:
        if shown.page == path:
            expected = [item.format(base=served.base_url) for item in shown.items]
            assert _more(browser, shown.row) == expected, (path, shown.row)
            checked += 1
    return checked


def _screenshot(browser: BrowserPage, path: Path, *, full_page: bool = True) -> None:
    browser.screenshot(path, full_page=full_page)
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC)
    assert len(data) > 5_000, len(data)


def _check_html_headers(browser: BrowserPage) -> None:
    headers = browser.response_headers()
    assert headers["content-type"] == HTML
    assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert headers["x-content-type-options"] == "nosniff"


def test_index_and_routes_page(
    chromium: BrowserPage, served: ServedExample, tmp_path: Path
) -> None:
    site = served.site
    # The index: one row per child sitemap, linked by relative name.
    assert chromium.goto(served.url("/sitemap.html")) == 200
    _check_html_headers(chromium)
    assert chromium.title() == f"Sitemap index of {served.base_url}"
    assert chromium.page.locator(ROWS).count() == len(site.xml_pages)
    names = [path.removeprefix("/").removesuffix(".xml") for path in site.xml_pages]
    assert chromium.links(ROW_HREFS) == [(name, f"{name}.html") for name in names]
    assert chromium.links(ROW_HREFS, absolute=True) == [
        (name, served.url(f"/{name}.html")) for name in names
    ]
    assert chromium.links(f"{ROWS} td:nth-child(4) a", absolute=True) == [
        ("XML", served.url(path)) for path in site.xml_pages
    ]
    summary = f"{len(site.xml_pages)} sitemaps listing {len(served.expected_urls()):,} URLs"
    assert chromium.text("header .meta") == summary
    assert chromium.text(f"{ROWS}:first-child").split("\t")[:2] == ["1", "sitemap-pages-1"]
    _screenshot(chromium, tmp_path / f"{site.name}-index.png")

    # The routes' page: its URLs, their alternates; and back by the Index link.
    assert chromium.click(link="sitemap-pages-1") == 200
    assert chromium.current_url() == served.url("/sitemap-pages-1.html")
    _check_html_headers(chromium)
    assert chromium.title() == "Sitemap: pages, page 1 of 1"
    assert _hrefs(chromium) == served.page_urls()
    assert _numbers(chromium) == list(range(1, len(site.page_paths) + 1))
    seen = _check_extensions(chromium, served, "/sitemap-pages-1.html")
    assert seen == (0 if site.name == "fastapi" else 1)
    _screenshot(chromium, tmp_path / f"{site.name}-pages.png")
    assert dict(chromium.links("header nav a", absolute=True)) == {
        "Index": served.url("/sitemap.html"),
        "XML": served.url("/sitemap-pages-1.xml"),
    }
    assert chromium.click(link="Index") == 200
    assert chromium.current_url() == served.url("/sitemap.html")

    # Its first URL, the home page, is a real page of the example.
    assert chromium.click(link="sitemap-pages-1") == 200
    assert chromium.click(f"{ROWS}:first-child td:nth-child(2) a") == 200
    assert chromium.current_url() == served.url("/")
    assert chromium.text("h1") == HOME_TITLE[site.name]
    assert chromium.console_errors() == []


def test_page_through_the_items(
    chromium: BrowserPage, small_pages: ServedExample, tmp_path: Path
) -> None:
    served = small_pages
    site = served.site
    source = site.item_source
    pages = -(-site.item_count // SMALL_PAGE)
    extensions_seen = 0

    assert chromium.goto(served.url("/sitemap.html")) == 200
    assert chromium.page.locator(ROWS).count() == 1 + pages

    # The first page of items: the same URLs as its XML twin, in the database's order.
    assert chromium.click(link=f"sitemap-{source}-1") == 200
    assert chromium.current_url() == served.url(f"/sitemap-{source}-1.html")
    _check_html_headers(chromium)
    assert chromium.title() == f"Sitemap: {source}, page 1 of {pages}"
    assert _hrefs(chromium) == _item_locs(served, 1)
    assert _numbers(chromium) == list(range(1, SMALL_PAGE + 1))
    extensions_seen += _check_extensions(chromium, served, f"/sitemap-{source}-1.html")
    _screenshot(chromium, tmp_path / f"{site.name}-{source}-1.png", full_page=False)
    assert "Previous page" not in dict(chromium.links("header nav a"))

    # Next page: numbering goes on from the first page.
    assert chromium.click(link="Next page") == 200
    assert chromium.current_url() == served.url(f"/sitemap-{source}-2.html")
    assert chromium.title() == f"Sitemap: {source}, page 2 of {pages}"
    assert _hrefs(chromium) == _item_locs(served, 2)
    assert _numbers(chromium) == list(range(SMALL_PAGE + 1, 2 * SMALL_PAGE + 1))
    extensions_seen += _check_extensions(chromium, served, f"/sitemap-{source}-2.html")
    assert dict(chromium.links("header nav a", absolute=True)) == {
        "Index": served.url("/sitemap.html"),
        "XML": served.url(f"/sitemap-{source}-2.xml"),
        "Previous page": served.url(f"/sitemap-{source}-1.html"),
        "Next page": served.url(f"/sitemap-{source}-3.html"),
    }

    # Images listed in the view are real images of the example.
    for _, href in chromium.links(f"{ROWS}:first-child td:nth-child(6) a", absolute=True):
        image = chromium.page.request.get(href)
        assert image.status == 200, href
        assert image.headers["content-type"].startswith("image/svg+xml"), href

    # A listed URL opens a real page of the example.
    item_id = served.item_ids[SMALL_PAGE]
    assert chromium.click(f"{ROWS}:first-child td:nth-child(2) a") == 200
    assert chromium.current_url() == served.item_url(item_id)
    assert chromium.text("h1") == ITEM_TITLE[site.name].format(item_id)

    # Back, and on to the XML twin: the browser gets XML there.
    chromium.page.go_back()
    assert chromium.click(link="XML") == 200
    assert chromium.response_headers()["content-type"] == XML
    assert chromium.current_url() == served.url(f"/sitemap-{source}-2.xml")

    expected = sum(1 for shown in EXTENSIONS[site.name] if shown.page != "/sitemap-pages-1.html")
    assert extensions_seen == expected
    assert chromium.console_errors() == []


def test_chromium_gets_xml_at_sitemap_xml(chromium: BrowserPage, served: ServedExample) -> None:
    # Chromium's Accept ranks text/html first; /sitemap.xml answers XML all the same.
    assert chromium.goto(served.url("/sitemap.xml")) == 200
    assert chromium.response_headers()["content-type"] == XML
    assert "content-security-policy" not in chromium.response_headers()
    assert served.url(f"/sitemap-{served.site.item_source}-1.xml") in chromium.html()
    assert chromium.console_errors() == []
