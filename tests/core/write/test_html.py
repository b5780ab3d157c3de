"""The HTML view's encoders: escaping, numbering, links, extensions, well-formed streaming.

The pages are read back the way a browser would: ``html.parser`` from the standard
library (with a strict check that every element is closed where it was opened) and
``lxml.html`` for finding rows and links.
"""

from __future__ import annotations

import gc
import re
import tracemalloc
from collections.abc import Iterable, Iterator, Sequence
from html.parser import HTMLParser

import lxml.html
import pytest

from sitemap_core import Entry
from sitemap_core.errors import SitemapTooLargeError
from sitemap_core.limits import CHUNK_BYTES
from sitemap_core.model.images import Image
from sitemap_core.model.news import News
from sitemap_core.model.videos import Video
from sitemap_core.write.html import CONTENT_SECURITY_POLICY, HtmlEncoder, HtmlIndexEncoder, HtmlView
from tests.core.helpers import ORIGIN, url

PAGE_COLUMNS = ["#", "URL", "Last modified", "Change frequency", "Priority", "More"]
INDEX_COLUMNS = ["#", "Sitemap", "Last modified", "XML"]
VOID = frozenset({"meta", "br", "img", "link", "hr", "input", "col", "wbr"})
SCRIPT = "<script>alert('x')</script>"
ROW_NUMBER = re.compile(rb'<tr><td class="n">(\d+)</td>')


# -- reading pages back ------------------------------------------------------------------


class _Strict(HTMLParser):
    """Fails on an end tag that closes anything but the innermost open element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.seen: list[str] = []
        self.doctype = ""

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.seen.append(tag)
        if tag not in VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.seen.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, f"</{tag}> closes {self.open[-1:]}"
        self.open.pop()


def strict_parse(document: str) -> _Strict:
    """Parse ``document`` with ``html.parser``; every element must be properly nested."""
    parser = _Strict()
    parser.feed(document)
    parser.close()
    assert parser.open == [], f"left open: {parser.open}"
    assert parser.doctype.lower() == "doctype html"
    return parser


def tree(document: str) -> lxml.html.HtmlElement:
    strict_parse(document)
    return lxml.html.document_fromstring(document)


def rows(document: str) -> list[lxml.html.HtmlElement]:
    """The ``<tr>`` of the table's body."""
    found: list[lxml.html.HtmlElement] = tree(document).xpath("//table/tbody/tr")
    return found


def headings(document: str) -> list[str]:
    return [th.text_content() for th in tree(document).xpath("//table/thead/tr/th")]


def cells(row: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    found: list[lxml.html.HtmlElement] = row.xpath("./td")
    return found


def links(element: lxml.html.HtmlElement) -> list[tuple[str, str]]:
    """``(text, href)`` of every link under ``element``, in order."""
    return [(a.text_content(), a.get("href")) for a in element.iter("a")]


def page(
    entries: Iterable[Entry], view: HtmlView | None = None, *, batch: int = 100, **options: int
) -> str:
    """The whole HTML page of ``entries``, fed in batches of ``batch``."""
    encoder = HtmlEncoder(view or HtmlView("Sitemap", "Some URLs"), **options)
    return _run(encoder, entries, batch)


def index(children: Iterable[Entry], view: HtmlView | None = None) -> str:
    return _run(HtmlIndexEncoder(view or HtmlView("Index", "Some sitemaps")), children, 10)


def _run(encoder: HtmlEncoder | HtmlIndexEncoder, items: Iterable[Entry], batch: int) -> str:
    chunks: list[bytes] = []
    pending: list[Entry] = []
    for item in items:
        pending.append(item)
        if len(pending) == batch:
            chunks.append(encoder.feed(pending))
            pending = []
    chunks.append(encoder.feed(pending))
    chunks.append(encoder.close())
    return b"".join(chunks).decode("utf-8")


# -- escaping ----------------------------------------------------------------------------


def test_a_loc_with_ampersand_quote_and_angle_brackets_round_trips() -> None:
    raw = f"{ORIGIN}/search?q=fish&chips&who='me'&tag=<b>"
    entry = Entry(raw)
    # The entry percent-encodes what a URI cannot hold; '&' and "'" remain.
    assert "%3Cb%3E" in entry.loc and "&" in entry.loc and "'" in entry.loc
    document = page([entry])
    [row] = rows(document)
    assert links(cells(row)[1]) == [(entry.loc, entry.loc)]
    # In the bytes, nothing of the URL can end the attribute or open a tag.
    assert "&amp;chips&amp;who=&apos;me&apos;" in document
    assert "<b>" not in document


def test_titles_summaries_and_links_of_the_view_are_escaped() -> None:
    view = HtmlView(
        title=f"Sitemap {SCRIPT}",
        summary='"quoted" & <i>summary</i>',
        links=[(f"Back {SCRIPT}", 'x.html?a=1&b="2"'), ("Up", "../up.html")],
    )
    document = page([Entry(url(1))], view)
    assert "<script" not in document.lower()
    assert "<i>" not in document
    root = tree(document)
    assert root.findtext(".//title") == f"Sitemap {SCRIPT}"
    assert root.findtext(".//h1") == f"Sitemap {SCRIPT}"
    assert root.xpath("string(//p[@class='meta'])") == '"quoted" & <i>summary</i>'
    # The links are shown twice: above and below the table.
    expected = [(f"Back {SCRIPT}", 'x.html?a=1&b="2"'), ("Up", "../up.html")]
    for nav in root.xpath("//nav"):
        assert links(nav) == expected
    assert len(root.xpath("//nav")) == 2


def test_extension_texts_are_escaped() -> None:
    entry = Entry(
        url(1),
        images=[Image(f"{ORIGIN}/img.png?a=1&b=<2>", title=SCRIPT, caption=SCRIPT)],
        videos=[
            Video(
                thumbnail_loc=f"{ORIGIN}/t.jpg",
                title=f"Video {SCRIPT}",
                description=SCRIPT,
                content_loc=f"{ORIGIN}/v.mp4?x=1&y=2",
            )
        ],
        news=News(
            publication_name=f"The <b>Times</b> & {SCRIPT}",
            language="en",
            publication_date="2024-05-01",
            title=f"Breaking: {SCRIPT}",
        ),
        alternates={"en": url(1), "de": f"{ORIGIN}/de?a=1&b='2'"},
    )
    document = page([entry])
    assert "<script" not in document.lower()
    assert "<b>" not in document
    more = cells(rows(document)[0])[5]
    text = more.text_content()
    assert f"Video {SCRIPT}" in text
    assert f"Breaking: {SCRIPT}" in text
    assert f"The <b>Times</b> & {SCRIPT}" in text
    hrefs = [href for _, href in links(more)]
    assert f"{ORIGIN}/img.png?a=1&b=%3C2%3E" in hrefs
    assert f"{ORIGIN}/v.mp4?x=1&y=2" in hrefs
    assert f"{ORIGIN}/de?a=1&b='2'" in hrefs


def test_the_page_loads_nothing_and_runs_nothing() -> None:
    entry = Entry(url(1), images=[f"{ORIGIN}/a.jpg"])
    document = page([entry], HtmlView("T", "S", [("XML", "sitemap.xml")]))
    parser = strict_parse(document)
    # No script, no external style sheet, no embedded resource: the CSP allows none.
    assert not {"script", "link", "img", "iframe", "object", "embed"} & set(parser.seen)
    assert " src=" not in document
    assert "default-src 'none'" in CONTENT_SECURITY_POLICY
    assert "script-src" not in CONTENT_SECURITY_POLICY
    root = tree(document)
    assert root.xpath("string(//meta[@name='robots']/@content)") == "noindex, follow"
    assert root.xpath("string(//meta/@charset)") == "utf-8"


# -- rows and numbering ----------------------------------------------------------------


def test_one_row_per_entry_with_its_fields() -> None:
    entries = [
        Entry(url(1), lastmod="2024-01-02", changefreq="daily", priority=0.8),
        Entry(url(2), lastmod="2024-01-02T03:04:05+01:00"),
        Entry(url(3), priority=1),
    ]
    document = page(entries)
    assert headings(document) == PAGE_COLUMNS
    got = [[cell.text_content() for cell in cells(row)] for row in rows(document)]
    assert got == [
        ["1", url(1), "2024-01-02", "daily", "0.8", ""],
        ["2", url(2), "2024-01-02T03:04:05+01:00", "", "", ""],
        ["3", url(3), "", "", "1.0", ""],
    ]
    assert [links(cells(row)[1]) for row in rows(document)] == [
        [(url(i), url(i))] for i in (1, 2, 3)
    ]


@pytest.mark.parametrize("batch", [1, 7, 1000])
def test_numbering_starts_at_first_and_continues_across_batches(batch: int) -> None:
    entries = [Entry(url(i)) for i in range(25)]
    document = page(entries, HtmlView("Page 3", "s", first=50_001), batch=batch)
    numbers = [cells(row)[0].text_content() for row in rows(document)]
    assert numbers == [str(n) for n in range(50_001, 50_026)]
    assert [cells(row)[1].text_content() for row in rows(document)] == [url(i) for i in range(25)]


def test_an_empty_view_has_no_navigation() -> None:
    document = page([Entry(url(1))], HtmlView("T", "S"))
    assert tree(document).xpath("//nav") == []


def test_extensions_are_listed_in_the_more_column() -> None:
    entry = Entry(
        url(1),
        images=[f"{ORIGIN}/a.jpg", Image(f"{ORIGIN}/b.png")],
        videos=[
            Video(
                thumbnail_loc=f"{ORIGIN}/t.jpg",
                title="Played",
                description="d",
                player_loc=f"{ORIGIN}/player",
                duration=90,
            ),
            Video(
                thumbnail_loc=f"{ORIGIN}/t2.jpg",
                title="File",
                description="d",
                content_loc=f"{ORIGIN}/file.mp4",
            ),
        ],
        news=News(
            publication_name="Daily",
            language="fr",
            publication_date="2024-05-01T10:00:00+02:00",
            title="Headline",
        ),
        alternates=[("en", url(1)), ("fr", f"{ORIGIN}/fr/item/1"), ("x-default", url(1))],
    )
    plain = Entry(url(2))
    document = page([entry, plain])
    first, second = rows(document)
    more = cells(first)[5]
    items = [li.text_content() for li in more.iter("li")]
    assert items == [
        f"image: {ORIGIN}/a.jpg",
        f"image: {ORIGIN}/b.png",
        "video: Played (90 s)",
        "video: File",
        "news: Headline, Daily (fr), 2024-05-01T10:00:00+02:00",
        f"en: {url(1)}",
        f"fr: {ORIGIN}/fr/item/1",
        f"x-default: {url(1)}",
    ]
    assert links(more) == [
        (f"{ORIGIN}/a.jpg", f"{ORIGIN}/a.jpg"),
        (f"{ORIGIN}/b.png", f"{ORIGIN}/b.png"),
        ("Played", f"{ORIGIN}/player"),
        ("File", f"{ORIGIN}/file.mp4"),
        (url(1), url(1)),
        (f"{ORIGIN}/fr/item/1", f"{ORIGIN}/fr/item/1"),
        (url(1), url(1)),
    ]
    assert cells(second)[5].text_content() == ""
    assert list(cells(second)[5]) == []


def test_a_long_url_is_one_cell_and_breaks_anywhere() -> None:
    long = f"{ORIGIN}/{'x' * 2000}"
    document = page([Entry(long)])
    assert cells(rows(document)[0])[1].text_content() == long
    assert "word-break:break-all" in document


# -- the index -----------------------------------------------------------------------------


def test_index_rows_link_the_sibling_pages_by_relative_name() -> None:
    children = [
        Entry(f"{ORIGIN}/sitemap-posts-1.html", lastmod="2024-02-01"),
        Entry(f"{ORIGIN}/sitemap-posts-2.html"),
        # Under a prefix: still linked by file name, as siblings of the index.
        Entry(f"{ORIGIN}/blog/sitemap-pages-1.html", lastmod="2024-03-01T00:00:00+00:00"),
    ]
    view = HtmlView("Index", "3 sitemaps", [("XML", "sitemap.xml")])
    document = index(children, view)
    assert headings(document) == INDEX_COLUMNS
    got = [([cell.text_content() for cell in cells(row)], links(row)) for row in rows(document)]
    assert got == [
        (
            ["1", "sitemap-posts-1", "2024-02-01", "XML"],
            [("sitemap-posts-1", "sitemap-posts-1.html"), ("XML", "sitemap-posts-1.xml")],
        ),
        (
            ["2", "sitemap-posts-2", "", "XML"],
            [("sitemap-posts-2", "sitemap-posts-2.html"), ("XML", "sitemap-posts-2.xml")],
        ),
        (
            ["3", "sitemap-pages-1", "2024-03-01T00:00:00+00:00", "XML"],
            [("sitemap-pages-1", "sitemap-pages-1.html"), ("XML", "sitemap-pages-1.xml")],
        ),
    ]
    assert ORIGIN not in "".join(a.get("href") for a in tree(document).iter("a"))


def test_index_numbering_continues_from_first() -> None:
    children = [Entry(f"{ORIGIN}/sitemap-posts-{n}.html") for n in range(1, 6)]
    document = index(children, HtmlView("Index, part 2", "s", first=50_001))
    assert [cells(row)[0].text_content() for row in rows(document)] == [
        str(n) for n in range(50_001, 50_006)
    ]


# -- streaming ---------------------------------------------------------------------------


def _entries(n: int) -> Iterator[Entry]:
    for i in range(n):
        yield Entry(
            f"{ORIGIN}/articles/{i}/a-readable-slug-for-this-article",
            lastmod="2024-03-10T12:00:00+02:00",
            changefreq="weekly",
            priority=0.5,
            images=[f"{ORIGIN}/covers/{i}.jpg"],
        )


def _batches(entries: Iterator[Entry], size: int) -> Iterator[Sequence[Entry]]:
    batch: list[Entry] = []
    for entry in entries:
        batch.append(entry)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def test_50000_entries_stream_in_chunks_with_bounded_memory() -> None:
    total = 50_000
    encoder = HtmlEncoder(HtmlView("Big", "50,000 URLs", [("XML", "sitemap-big-1.xml")]))
    sizes: list[int] = []
    next_number = 1
    first = b""

    def take(chunk: bytes) -> None:
        # Every row of the chunk, numbered on from the chunk before.
        nonlocal next_number
        numbers = [int(n) for n in ROW_NUMBER.findall(chunk)]
        assert numbers == list(range(next_number, next_number + len(numbers)))
        next_number += len(numbers)
        sizes.append(len(chunk))

    gc.collect()
    tracemalloc.start()
    try:
        for batch in _batches(_entries(total), 256):
            chunk = encoder.feed(batch)
            if chunk:
                first = first or chunk[:100]
                take(chunk)
        last = encoder.close()
        take(last)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert next_number == total + 1
    assert encoder.items == total
    document_bytes = sum(sizes)
    assert document_bytes > 15_000_000  # about 330 bytes a row
    # Many chunks, none much above the chunk size plus one batch of rows.
    assert len(sizes) > 150
    assert max(sizes) < CHUNK_BYTES + 256 * 1_000
    # The whole document never sits in memory: a chunk and a batch do.
    assert peak < 3 * 1024 * 1024, f"peak {peak:,} bytes for a {document_bytes:,}-byte page"
    assert first.startswith(b"<!DOCTYPE html>")
    assert last.endswith(b"</footer></body></html>\n")


def test_the_streamed_page_is_one_well_formed_table() -> None:
    document = page(_entries(3_000), HtmlView("Big", "s", [("XML", "x.xml")]), batch=256)
    found = rows(document)
    assert len(found) == 3_000
    assert cells(found[-1])[0].text_content() == "3000"
    assert len(tree(document).xpath("//table")) == 1


def test_more_than_50000_entries_are_refused_not_written() -> None:
    encoder = HtmlEncoder(HtmlView("Too big", "s"))
    entry = Entry(url(0))
    for _ in range(50):
        encoder.feed([entry] * 1_000)
    with pytest.raises(SitemapTooLargeError):
        encoder.feed([entry])


def test_small_chunks_split_the_page_without_changing_it() -> None:
    entries = list(_entries(200))
    whole = page(entries, HtmlView("T", "S"))
    encoder = HtmlEncoder(HtmlView("T", "S"), chunk_bytes=1_000)
    chunks = [encoder.feed([entry]) for entry in entries]
    chunks.append(encoder.close())
    assert sum(1 for chunk in chunks if chunk) > 50
    assert b"".join(chunks).decode() == whole
