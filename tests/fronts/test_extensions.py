"""Entries with images, videos, news and hreflang alternates, served by every front.

The documents served (index, children, gzip files, content-coded responses) are valid
against the official schemas with the extensions' own schemas; the HTML view lists the
URLs; real consumers (ultimate-sitemap-parser, Scrapy's sitemap utilities) read the
extensions back; a bad entry is a 500 before the first byte, logged, never a malformed
document.
"""

from __future__ import annotations

import gzip
import logging
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from crawlers import scrapy_page_urls, usp_page_urls
from flask import Flask
from live import serve_live
from lxml import etree
from scrapy.utils.sitemap import Sitemap
from usp.objects.sitemap import PagesXMLSitemap
from usp.tree import sitemap_from_str
from xsd import IMAGE_NS, NEWS_NS, SITEMAP_NS, VIDEO_NS, XHTML_NS, validate

import asgi_sitemap
from flask_sitemapper import SitemapMiddleware, Sitemapper
from sitemap_core import Entry, Image, News, UrlSource, Video
from sitemap_core.sources.aio import AsyncUrlSource

from .conftest import BASE, Front, hello_asgi_app, hello_wsgi_app

NS = {"sm": SITEMAP_NS, "image": IMAGE_NS, "video": VIDEO_NS, "news": NEWS_NS, "xhtml": XHTML_NS}
XML = "application/xml; charset=utf-8"

MakeClient = Callable[..., httpx.Client]

# -- entries ---------------------------------------------------------------------------


def images(origin: str, i: int) -> list[Image]:
    return [
        Image(f"https://cdn.example.com/{i}/a.jpg", caption=f"First of {i}"),
        Image(f"https://cdn.example.com/{i}/b.jpg", title="B & C"),
    ]


def video(origin: str, i: int) -> Video:
    return Video(
        f"https://cdn.example.com/{i}/thumb.jpg",
        f"Video {i}",
        "What happens <here> & there",
        content_loc=f"https://cdn.example.com/{i}/v.mp4",
        player_loc=f"{origin}/player?v={i}",
        duration=90,
        family_friendly=True,
    )


def news(origin: str, i: int) -> News:
    return News(
        publication_name="The Example Times",
        language="en",
        publication_date=datetime(2024, 5, 1, 12, i % 60, tzinfo=UTC),
        title=f"Story {i}",
        keywords=["one", "two"],
    )


def alternates(origin: str, i: int) -> list[tuple[str, str]]:
    return [
        ("en", f"{origin}/en/{i}"),
        ("de-AT", f"{origin}/de-at/{i}"),
        ("x-default", f"{origin}/en/{i}"),
    ]


KINDS: dict[str, Callable[[str, int], Any]] = {
    "images": images,
    "videos": video,
    "news": news,
    "alternates": alternates,
}


def entries(origin: str, n: int, kinds: tuple[str, ...]) -> list[Entry]:
    """``n`` entries carrying ``kinds``; every third one is plain, to mix them."""
    made = []
    for i in range(n):
        loc = f"{origin}/en/{i}" if "alternates" in kinds else f"{origin}/page/{i}"
        if i % 3 == 2 and "alternates" not in kinds:
            made.append(Entry(loc))
        else:
            made.append(Entry(loc, "2024-01-01", **{k: KINDS[k](origin, i) for k in kinds}))
    return made


def sources(origin: str, kinds: tuple[str, ...]) -> dict[str, Any]:
    """A list source and a generator source, both with ``kinds``."""
    listed = entries(origin, 9, kinds)
    walked = [
        Entry(entry.loc.replace("/en/", "/en/w").replace("/page/", "/walked/"), **fields(entry))
        for entry in entries(origin, 7, kinds)
    ]

    def generator() -> Iterator[Entry]:
        yield from walked

    return {"listed": listed, "walked": generator}


def fields(entry: Entry) -> dict[str, Any]:
    """Keyword arguments rebuilding ``entry``'s extensions (for a URL moved elsewhere)."""
    moved: dict[str, Any] = {}
    if entry.images:
        moved["images"] = entry.images
    if entry.videos:
        moved["videos"] = entry.videos
    if entry.news is not None:
        moved["news"] = entry.news
    if entry.alternates:
        moved["alternates"] = [
            (a.hreflang, a.href.replace("/en/", "/en/w").replace("/de-at/", "/de-at/w"))
            for a in entry.alternates
        ]
    return moved


def expected_entries(origin: str, kinds: tuple[str, ...]) -> list[Entry]:
    made = sources(origin, kinds)
    return [*made["listed"], *made["walked"]()]


KIND_SETS = [pytest.param((kind,), id=kind) for kind in KINDS] + [
    pytest.param(tuple(KINDS), id="all")
]

# -- helpers ---------------------------------------------------------------------------


def parse(body: bytes) -> etree._Element:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    return etree.fromstring(body, parser)


def locs(body: bytes) -> list[str]:
    return [str(loc.text) for loc in parse(body).iterfind("sm:*/sm:loc", NS)]


def get_valid(client: httpx.Client, path: str) -> bytes:
    response = client.get(path)
    assert response.status_code == 200, (path, response.status_code, response.text[:300])
    assert response.headers["content-type"] == XML
    validate(response.content)
    return response.content


def urlsets(client: httpx.Client) -> dict[str, bytes]:
    """Every urlset the site serves, by path (``/sitemap.xml`` or its children)."""
    root = get_valid(client, "/sitemap.xml")
    if parse(root).tag == f"{{{SITEMAP_NS}}}urlset":
        return {"/sitemap.xml": root}
    children = [loc.removeprefix(BASE) for loc in locs(root)]
    return {path: get_valid(client, path) for path in children}


def described(element: etree._Element) -> dict[str, Any]:
    """What one ``<url>`` carries, as plain values."""
    return {
        "images": [str(e.text) for e in element.iterfind("image:image/image:loc", NS)],
        "videos": [str(e.text) for e in element.iterfind("video:video/video:title", NS)],
        "news": [str(e.text) for e in element.iterfind("news:news/news:title", NS)],
        "alternates": [
            (e.get("hreflang"), e.get("href")) for e in element.iterfind("xhtml:link", NS)
        ],
    }


def expected_description(entry: Entry) -> dict[str, Any]:
    return {
        "images": [image.loc for image in entry.images],
        "videos": [video.title for video in entry.videos],
        "news": [] if entry.news is None else [entry.news.title],
        "alternates": [(a.hreflang, a.href) for a in entry.alternates],
    }


def error_text(caplog: pytest.LogCaptureFixture) -> str:
    """Every ERROR record with its traceback, as an operator reads the log."""
    formatter = logging.Formatter()
    return "\n".join(
        formatter.format(record) for record in caplog.records if record.levelno >= logging.ERROR
    )


# -- valid documents on every front ---------------------------------------------------------


@pytest.mark.parametrize("kinds", KIND_SETS)
@pytest.mark.parametrize("page_size", [50_000, 4], ids=["one-urlset", "index"])
def test_served_documents_are_valid_and_carry_the_extensions(
    make_client: MakeClient, kinds: tuple[str, ...], page_size: int
) -> None:
    client = make_client(sources(BASE, kinds), page_size=page_size)
    documents = urlsets(client)
    assert len(documents) == (1 if page_size == 50_000 else 5)
    expected = expected_entries(BASE, kinds)
    served = [
        element for body in documents.values() for element in parse(body).iterfind("sm:url", NS)
    ]
    assert [element.findtext("sm:loc", namespaces=NS) for element in served] == [
        entry.loc for entry in expected
    ]
    assert [described(element) for element in served] == [
        expected_description(entry) for entry in expected
    ]
    # Text sitemaps carry the URLs alone.
    if page_size == 50_000:
        text = client.get("/sitemap.txt")
        assert text.status_code == 200
        assert text.text.splitlines() == [entry.loc for entry in expected]


@pytest.mark.parametrize("kinds", KIND_SETS)
def test_gzip_documents_are_the_same_valid_bytes(
    make_client: MakeClient, kinds: tuple[str, ...]
) -> None:
    client = make_client(sources(BASE, kinds), page_size=4)
    for path, body in urlsets(client).items():
        packed = client.get(path + ".gz")
        assert packed.status_code == 200
        assert packed.headers["content-type"] == "application/gzip"
        unpacked = gzip.decompress(packed.content)
        assert unpacked == body
        validate(unpacked)
        coded = client.get(path, headers={"accept-encoding": "gzip"})
        assert coded.headers.get("content-encoding") == "gzip"
        assert coded.content == body  # httpx undoes the coding


@pytest.mark.parametrize("kinds", KIND_SETS)
def test_the_html_view_lists_the_urls(make_client: MakeClient, kinds: tuple[str, ...]) -> None:
    client = make_client(sources(BASE, kinds))
    expected = sources(BASE, kinds)
    for name, listed in (("listed", expected["listed"]), ("walked", list(expected["walked"]()))):
        response = client.get(f"/sitemap-{name}-1.html")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/html")
        page = response.text
        for entry in listed:
            assert entry.loc in page
            for image in entry.images:
                assert image.loc in page
            for alternate in entry.alternates:
                assert alternate.href in page


# -- real consumers -----------------------------------------------------------------------


@pytest.mark.parametrize("kinds", KIND_SETS)
def test_ultimate_sitemap_parser_reads_images_news_and_alternates(
    make_client: MakeClient, kinds: tuple[str, ...], caplog: pytest.LogCaptureFixture
) -> None:
    client = make_client(sources(BASE, kinds), page_size=4)
    expected = {entry.loc: entry for entry in expected_entries(BASE, kinds)}
    seen = []
    with caplog.at_level(logging.WARNING, logger="usp"):
        for body in urlsets(client).values():
            tree = sitemap_from_str(body.decode())
            assert isinstance(tree, PagesXMLSitemap)
            for page in tree.all_pages():
                entry = expected[page.url]
                seen.append(page.url)
                assert [image.loc for image in page.images or []] == [
                    image.loc for image in entry.images
                ]
                if entry.images:
                    assert page.images is not None
                    assert page.images[0].caption == entry.images[0].caption
                if entry.news is None:
                    assert page.news_story is None
                else:
                    assert page.news_story is not None
                    assert page.news_story.title == entry.news.title
                    assert page.news_story.publication_name == "The Example Times"
                    assert page.news_story.publication_language == "en"
                    assert page.news_story.publish_date == entry.news.published
                assert (page.alternates or []) == [(a.hreflang, a.href) for a in entry.alternates]
    assert sorted(seen) == sorted(expected)
    assert not [r for r in caplog.records if r.name.startswith("usp")]


@pytest.mark.parametrize("kinds", KIND_SETS)
def test_scrapy_sitemap_reads_the_alternate_links(
    make_client: MakeClient, kinds: tuple[str, ...]
) -> None:
    client = make_client(sources(BASE, kinds), page_size=4)
    expected = {entry.loc: entry for entry in expected_entries(BASE, kinds)}
    seen = []
    for body in urlsets(client).values():
        sitemap = Sitemap(body)
        assert sitemap.type == "urlset"
        for item in sitemap:
            entry = expected[item["loc"]]
            seen.append(item["loc"])
            hrefs = [a.href for a in entry.alternates]
            if hrefs:
                assert item["alternate"] == hrefs
            else:
                assert "alternate" not in item
    assert sorted(seen) == sorted(expected)


def test_scrapy_follows_alternates_like_sitemap_spider(make_client: MakeClient) -> None:
    # SitemapSpider with sitemap_alternate_links=True requests loc and every alternate.
    client = make_client(sources(BASE, ("alternates",)))
    body = get_valid(client, "/sitemap.xml")
    requested = set()
    for item in Sitemap(body):
        requested.add(item["loc"])
        requested.update(item.get("alternate", ()))
    locations = {entry.loc for entry in expected_entries(BASE, ("alternates",))}
    others = {a.href for e in expected_entries(BASE, ("alternates",)) for a in e.alternates}
    assert requested == locations | others
    assert any("/de-at/" in url for url in requested)


def test_real_crawlers_over_a_live_server_find_every_extended_url(front: Front) -> None:
    kinds = tuple(KINDS)
    # The origin is only known once the port is: the sources are read at request time.
    holder: dict[str, str] = {}

    def late(name: str) -> Callable[[], Iterator[Entry]]:
        def generator() -> Iterator[Entry]:
            made = sources(holder["origin"], kinds)[name]
            yield from made() if callable(made) else made

        return generator

    app = front.build_app(
        {"listed": late("listed"), "walked": late("walked")},
        4,
        allowed_hosts=["127.0.0.1"],
    )
    with serve_live(lambda origin: app, asgi=front.name == "asgi-middleware") as origin:
        holder["origin"] = origin
        expected = sorted(entry.loc for entry in expected_entries(origin, kinds))
        assert sorted(usp_page_urls(origin + "/")) == expected
        assert sorted(scrapy_page_urls(origin + "/")) == expected


# -- bad entries: a 500 before the first byte, logged -------------------------------------


def too_many_images() -> Entry:
    return Entry(f"{BASE}/bad", images=[f"https://cdn.example.com/{i}.jpg" for i in range(1001)])


def bad_hreflang() -> Entry:
    return Entry(f"{BASE}/bad", alternates=[("en-UK", f"{BASE}/bad"), ("fr", f"{BASE}/fr/bad")])


def without_own_url() -> Entry:
    return Entry(f"{BASE}/bad", alternates=[("en", f"{BASE}/en/bad"), ("fr", f"{BASE}/fr/bad")])


BAD_ENTRIES = [
    pytest.param(too_many_images, "images", id="1001-images"),
    pytest.param(bad_hreflang, "alternate.hreflang", id="invalid-hreflang"),
    pytest.param(without_own_url, "alternates", id="alternates-without-own-url"),
]


def failing_source(make_bad: Callable[[], Entry], at: int) -> Callable[[], Iterator[Entry]]:
    def generator() -> Iterator[Entry]:
        for i in range(at):
            yield Entry(f"{BASE}/ok/{i}", images=[f"https://cdn.example.com/ok/{i}.jpg"])
        yield make_bad()

    return generator


@pytest.mark.parametrize(("make_bad", "field"), BAD_ENTRIES)
@pytest.mark.parametrize("at", [0, 600], ids=["first", "late"])
@pytest.mark.parametrize("path", ["/sitemap.xml", "/sitemap-broken-1.xml", "/sitemap.xml.gz"])
def test_a_bad_entry_is_a_500_before_the_first_byte(
    front: Front,
    caplog: pytest.LogCaptureFixture,
    make_bad: Callable[[], Entry],
    field: str,
    at: int,
    path: str,
) -> None:
    app = front.build_app({"broken": failing_source(make_bad, at)})
    raw = front.raw_body(app, path)
    assert raw.status == 500
    body = b"".join(raw.chunks)
    assert b"<urlset" not in body and b"/ok/" not in body and not body.startswith(b"\x1f\x8b")
    logged = error_text(caplog)
    assert f"invalid {field} " in logged
    if path.startswith("/sitemap-broken-"):
        assert "sitemap-broken-1" in logged  # the path names the source


@pytest.mark.parametrize(("make_bad", "field"), BAD_ENTRIES[:1])
def test_a_bad_entry_from_a_sources_own_code_is_logged_naming_the_source(
    front: Front, caplog: pytest.LogCaptureFixture, make_bad: Callable[[], Entry], field: str
) -> None:
    app = front.build_app({"gallery": failing_source(make_bad, 0)})
    raw = front.raw_body(app, "/sitemap.xml")
    assert raw.status == 500
    assert b"".join(raw.chunks).find(b"<urlset") == -1
    assert "(from source 'gallery')" in error_text(caplog)


def test_an_extension_value_yielded_as_an_item_names_the_field_and_source(
    front: Front, caplog: pytest.LogCaptureFixture
) -> None:
    def mistaken() -> Iterator[Any]:
        yield Entry(f"{BASE}/a")
        yield Image(f"{BASE}/b.jpg")  # an image where an entry was meant

    app = front.build_app({"gallery": mistaken})
    raw = front.raw_body(app, "/sitemap.xml")
    assert raw.status == 500
    assert b"<urlset" not in b"".join(raw.chunks)
    logged = error_text(caplog)
    assert "invalid item Image(" in logged
    assert "(from source 'gallery')" in logged


def build_bounded_app(front: Front, obj: Any, max_entry_bytes: int) -> Any:
    """An app whose only source ``gallery`` has ``max_entry_bytes`` (each front's way)."""
    if front.name == "flask-extension":
        app = Flask("bounded")
        app.config["PROPAGATE_EXCEPTIONS"] = False
        Sitemapper(app).add_source("gallery", obj, max_entry_bytes=max_entry_bytes)
        return app
    if front.name == "wsgi-middleware":
        source = UrlSource.from_object("gallery", obj, max_entry_bytes=max_entry_bytes)
        return SitemapMiddleware(hello_wsgi_app(), [source])
    adapted = AsyncUrlSource.from_object("gallery", obj, max_entry_bytes=max_entry_bytes)
    return asgi_sitemap.SitemapMiddleware(hello_asgi_app(), [adapted])


def test_an_entry_over_max_entry_bytes_is_a_500_naming_the_entry_and_source(
    front: Front, caplog: pytest.LogCaptureFixture
) -> None:
    many = [f"https://cdn.example.com/{i}.jpg" for i in range(100)]
    listed = [Entry(f"{BASE}/a", images=many[:2]), Entry(f"{BASE}/b", images=many)]
    app = build_bounded_app(front, listed, 2048)
    raw = front.raw_body(app, "/sitemap.xml")
    assert raw.status == 500
    assert b"<urlset" not in b"".join(raw.chunks)
    logged = error_text(caplog)
    assert f"invalid entry '{BASE}/b'" in logged
    assert "max_entry_bytes 2048" in logged
    assert "(from source 'gallery')" in logged
    # Under the bound, the same source is served, valid.
    fine = build_bounded_app(front, listed[:1], 2048)
    client = front.client(fine)  # not as a context manager: no ASGI lifespan here
    try:
        body = get_valid(client, "/sitemap.xml")
    finally:
        client.close()
    assert locs(body) == [f"{BASE}/a"]
