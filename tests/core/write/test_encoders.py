"""The streaming writers: escaping, number formatting, element order, schema validity,
chunking and the size limits."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest
from xsd import validate

from sitemap_core import (
    Entry,
    IndexEncoder,
    SitemapTooLargeError,
    TextEncoder,
    UrlsetEncoder,
    escape,
)
from sitemap_core.limits import CHUNK_BYTES, MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP
from sitemap_core.write.encoders import SITEMAP_NS, encode_all, format_priority
from tests.core.helpers import NS, SM, locs, parse, url

KIB = 1024

# --------------------------------------------------------------------------- escaping


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", "plain"),
        ("&", "&amp;"),
        ("<", "&lt;"),
        (">", "&gt;"),
        ('"', "&quot;"),
        ("'", "&apos;"),
        ("a & b < c > d \"e\" 'f'", "a &amp; b &lt; c &gt; d &quot;e&quot; &apos;f&apos;"),
        # '&' first, so existing entities are escaped, not kept
        ("&amp;", "&amp;amp;"),
        ("&lt;<", "&amp;lt;&lt;"),
        ("", ""),
        ("é ü 日本", "é ü 日本"),
    ],
)
def test_escape(text: str, expected: str) -> None:
    assert escape(text) == expected


@pytest.mark.parametrize("text", ["a&b", "<tag attr='x'>", 'say "hi" & <bye>', "]]>", "&#38;"])
def test_escaped_text_round_trips_as_element_text_and_attribute(text: str) -> None:
    doc = f"<r a=\"{escape(text)}\" b='{escape(text)}'>{escape(text)}</r>".encode()
    root = parse(doc)
    assert root.text == text
    assert root.get("a") == text
    assert root.get("b") == text


def test_loc_escapes_ampersand_and_apostrophe() -> None:
    entry = Entry("https://example.com/a?b=1&c='2'&d=3")
    doc = encode_all(UrlsetEncoder(), [entry])
    assert b"<loc>https://example.com/a?b=1&amp;c=&apos;2&apos;&amp;d=3</loc>" in doc
    assert b"&c=" not in doc and b"'" not in doc.split(b"<urlset")[1]
    assert locs(doc) == [entry.loc]
    validate(doc)


def test_index_loc_is_escaped_too() -> None:
    child = Entry("https://example.com/sitemap.xml?a=1&b='x'")
    doc = encode_all(IndexEncoder(), [child])
    assert b"?a=1&amp;b=&apos;x&apos;</loc>" in doc
    assert locs(doc) == [child.loc]
    validate(doc)


# --------------------------------------------------------------------------- priority


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0.0"),
        (1.0, "1.0"),
        (0.5, "0.5"),
        (0.25, "0.25"),
        (0.1, "0.1"),
        (1e-05, "0.00001"),
        (1e-06, "0.000001"),
        (0.123456, "0.123456"),
        (0.3333333333, "0.333333"),
    ],
)
def test_priority_text_is_plain_decimal(value: float, text: str) -> None:
    # a fresh memo: what earlier tests formatted must not decide the text
    format_priority.cache_clear()
    assert format_priority(value) == text
    assert format_priority(value) == text  # the cached answer is the same
    assert re.fullmatch(r"[0-9]+\.[0-9]+", text)
    assert "e" not in text.lower()


@pytest.mark.parametrize("value", [1e-05, 1e-06, 1e-07, 5e-324, 0.9999999, 0.1 + 0.2])
def test_priority_element_is_a_valid_decimal(value: float) -> None:
    entry = Entry("https://example.com/", priority=value)
    doc = encode_all(UrlsetEncoder(), [entry])
    (priority,) = parse(doc).iterfind(".//sm:priority", SM)
    text = str(priority.text)
    assert "e" not in text.lower()
    assert abs(Decimal(text) - Decimal(value)) <= Decimal("0.0000005")
    assert Decimal(0) <= Decimal(text) <= Decimal(1)
    validate(doc)
    validate(doc, profile="core")


def test_priority_text_does_not_depend_on_history() -> None:
    format_priority.cache_clear()
    first = encode_all(UrlsetEncoder(), [Entry("https://example.com/", priority=0.0)])
    encode_all(UrlsetEncoder(), [Entry("https://example.com/", priority=-0.0)])
    assert b"<priority>-0.0</priority>" not in encode_all(
        UrlsetEncoder(), [Entry("https://example.com/", priority=-0.0)]
    )
    format_priority.cache_clear()
    encode_all(UrlsetEncoder(), [Entry("https://example.com/", priority=-0.0)])
    again = encode_all(UrlsetEncoder(), [Entry("https://example.com/", priority=0.0)])
    assert again == first


def test_priority_1e_05_is_written_without_exponent() -> None:
    doc = encode_all(UrlsetEncoder(), [Entry("https://example.com/", priority=1e-05)])
    assert b"<priority>0.00001</priority>" in doc


# --------------------------------------------------------------------------- structure


def test_url_element_order_and_text() -> None:
    entry = Entry(
        "https://example.com/page",
        lastmod=datetime(2024, 3, 10, 23, 30, tzinfo=timezone(timedelta(hours=-5))),
        changefreq="WEEKLY",
        priority=Decimal("0.8"),
    )
    doc = encode_all(UrlsetEncoder(), [entry])
    (url_el,) = parse(doc).iterfind("sm:url", SM)
    assert [(child.tag, child.text) for child in url_el] == [
        (f"{{{NS}}}loc", "https://example.com/page"),
        (f"{{{NS}}}lastmod", "2024-03-10T23:30:00-05:00"),
        (f"{{{NS}}}changefreq", "weekly"),
        (f"{{{NS}}}priority", "0.8"),
    ]
    validate(doc)


def test_document_head_and_tail() -> None:
    doc = encode_all(UrlsetEncoder(), [Entry("https://example.com/")])
    assert doc.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="')
    assert doc.endswith(b"</urlset>\n")
    assert parse(doc).tag == f"{{{SITEMAP_NS}}}urlset"
    assert SITEMAP_NS == "http://www.sitemaps.org/schemas/sitemap/0.9"
    index = encode_all(IndexEncoder(), [Entry("https://example.com/sitemap-a-1.xml")])
    assert parse(index).tag == f"{{{SITEMAP_NS}}}sitemapindex"
    assert index.endswith(b"</sitemapindex>\n")


FULL = [
    Entry("https://example.com/", lastmod="2024-03-10", changefreq="always", priority=1),
    Entry(
        "https://bücher.de/straße?q=ä&x='1'",
        lastmod=datetime(2024, 3, 10, 23, 30, 15, 123456, tzinfo=timezone(timedelta(hours=-5))),
        changefreq="never",
        priority=0.0,
    ),
    Entry("https://example.com/a%20b%zz", lastmod="2024-05-01 10:00:00", priority=1e-05),
    Entry("http://[::1]:8080/x", changefreq="hourly"),
]
MINIMAL = [Entry(url(i)) for i in range(3)]
CHILDREN = [Entry(f"https://example.com/sitemap-posts-{i}.xml") for i in range(1, 4)]
CHILDREN_WITH_LASTMOD = [
    Entry("https://example.com/sitemap-posts-1.xml", lastmod="2024-03-10"),
    Entry(
        "https://example.com/sitemap-posts-2.xml",
        lastmod=datetime(2024, 3, 10, 12, tzinfo=timezone(timedelta(hours=14))),
    ),
    Entry("https://example.com/sitemap-posts-3.xml?a=1&b=2", lastmod="2024-03-10T01:02:03Z"),
]


@pytest.mark.parametrize(
    ("encoder", "entries"),
    [
        pytest.param(UrlsetEncoder, FULL, id="urlset-all-fields"),
        pytest.param(UrlsetEncoder, MINIMAL, id="urlset-minimal"),
        pytest.param(IndexEncoder, CHILDREN, id="index"),
        pytest.param(IndexEncoder, CHILDREN_WITH_LASTMOD, id="index-lastmod"),
    ],
)
@pytest.mark.parametrize("profile", ["strict", "core"])
def test_every_document_kind_validates(
    encoder: type[UrlsetEncoder], entries: list[Entry], profile: str
) -> None:
    doc = encode_all(encoder(), entries)
    validate(doc, profile=profile)
    assert locs(doc) == [e.loc for e in entries]
    lastmods = [el.text for el in parse(doc).iterfind(".//sm:lastmod", SM)]
    assert lastmods == [e.lastmod for e in entries if e.lastmod is not None]


def test_index_writes_only_loc_and_lastmod() -> None:
    child = Entry(
        "https://example.com/sitemap-a-1.xml", lastmod="2024-01-01", changefreq="daily", priority=1
    )
    doc = encode_all(IndexEncoder(), [child])
    assert b"changefreq" not in doc and b"priority" not in doc
    (sitemap,) = parse(doc).iterfind("sm:sitemap", SM)
    assert [c.tag.split("}")[1] for c in sitemap] == ["loc", "lastmod"]
    validate(doc)


def test_text_encoder_writes_one_loc_per_line_in_utf8() -> None:
    entries = [Entry("https://example.com/a?x=1&y='2'"), Entry("https://bücher.de/ä"), *MINIMAL]
    doc = encode_all(TextEncoder(), entries)
    text = doc.decode("utf-8")
    assert text.endswith("\n")
    assert text.splitlines() == [e.loc for e in entries]
    assert "&amp;" not in text and "<" not in text
    assert "https://xn--bcher-kva.de/%C3%A4\n" in text


# --------------------------------------------------------------------------- chunking


def _entries(n: int) -> list[Entry]:
    return [Entry(url(i), lastmod="2024-03-10", changefreq="daily") for i in range(n)]


def _feed(encoder: UrlsetEncoder, entries: list[Entry], batch: int) -> list[bytes]:
    chunks = [encoder.feed(entries[i : i + batch]) for i in range(0, len(entries), batch)]
    chunks.append(encoder.close())
    return chunks


@pytest.fixture(scope="module")
def fifty_thousand() -> list[Entry]:
    return _entries(MAX_URLS_PER_SITEMAP)


@pytest.mark.parametrize("batch", [256, 1])
def test_chunks_are_tens_of_kib(fifty_thousand: list[Entry], batch: int) -> None:
    chunks = [c for c in _feed(UrlsetEncoder(), fifty_thousand, batch) if c]
    whole = encode_all(UrlsetEncoder(), fifty_thousand)
    assert b"".join(chunks) == whole
    assert len(whole) > 1_000_000
    assert 10 < len(chunks) < len(fifty_thousand) // 100
    for chunk in chunks[:-1]:
        assert 16 * KIB <= len(chunk) <= 128 * KIB, len(chunk)
        assert len(chunk) >= CHUNK_BYTES
    assert 0 < len(chunks[-1]) <= 128 * KIB
    assert chunks[-1].endswith(b"</urlset>\n")
    validate(whole, profile="core")
    assert len(locs(whole)) == MAX_URLS_PER_SITEMAP


def test_feed_returns_nothing_until_a_chunk_is_full() -> None:
    encoder = UrlsetEncoder()
    assert encoder.feed([]) == b""
    assert encoder.feed(_entries(3)) == b""
    assert encoder.items == 3
    rest = encoder.close()
    assert rest.startswith(b"<?xml") and rest.endswith(b"</urlset>\n")
    assert len(locs(rest)) == 3


def test_small_chunk_size_is_respected() -> None:
    encoder = UrlsetEncoder(chunk_bytes=100)
    first = encoder.feed(_entries(2))
    assert first.startswith(b"<?xml")
    assert encoder.feed(_entries(2)) != b""


# --------------------------------------------------------------------------- limits


def test_limits_are_the_protocols() -> None:
    assert MAX_URLS_PER_SITEMAP == 50_000
    assert MAX_SITEMAP_BYTES == 52_428_800
    assert UrlsetEncoder.max_items == 50_000
    assert IndexEncoder.max_items == 50_000


def test_exceeding_max_items_raises(fifty_thousand: list[Entry]) -> None:
    encoder = UrlsetEncoder()
    for i in range(0, len(fifty_thousand), 1000):
        encoder.feed(fifty_thousand[i : i + 1000])
    assert encoder.items == MAX_URLS_PER_SITEMAP
    with pytest.raises(SitemapTooLargeError, match="at most 50000"):
        encoder.feed([Entry(url(-1))])


def test_exceeding_max_items_in_one_batch_writes_nothing(fifty_thousand: list[Entry]) -> None:
    encoder = IndexEncoder()
    with pytest.raises(SitemapTooLargeError):
        encoder.feed([*fifty_thousand, Entry(url(-1))])


def test_exceeding_max_bytes_raises_instead_of_writing() -> None:
    one = encode_all(UrlsetEncoder(), [Entry(url(0))])
    per_entry = len(encode_all(UrlsetEncoder(), [Entry(url(0)), Entry(url(1))])) - len(one)
    limit = len(one) + per_entry  # room for exactly two entries
    encoder = UrlsetEncoder(max_bytes=limit)
    out = [encoder.feed([Entry(url(0))]), encoder.feed([Entry(url(1))])]
    with pytest.raises(SitemapTooLargeError, match=f"exceed {limit} bytes"):
        encoder.feed([Entry(url(2))])
    # a document exactly at the limit is allowed
    exact = UrlsetEncoder(max_bytes=limit)
    doc = b"".join([exact.feed([Entry(url(0)), Entry(url(1))]), exact.close()])
    assert len(doc) == limit
    assert b"".join([*out]) == b""  # nothing was flushed before the error


def test_max_bytes_counts_the_closing_tag() -> None:
    doc = encode_all(UrlsetEncoder(), [Entry(url(0))])
    with pytest.raises(SitemapTooLargeError):
        encode_all(UrlsetEncoder(max_bytes=len(doc) - 1), [Entry(url(0))])
    assert encode_all(UrlsetEncoder(max_bytes=len(doc)), [Entry(url(0))]) == doc


def test_text_encoder_has_limits_too() -> None:
    encoder = TextEncoder(max_bytes=50)
    with pytest.raises(SitemapTooLargeError):
        encoder.feed([Entry(url(i)) for i in range(3)])
