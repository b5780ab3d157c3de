"""Google News values: validation, normalisation and the XSD-valid news:news fragment."""

from __future__ import annotations

import copy
import pickle
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree
from xsd import validate

from sitemap_core.errors import InvalidEntryError
from sitemap_core.model.namespaces import NEWS_NS
from sitemap_core.model.news import GENRES, MAX_STOCK_TICKERS, News

N = f"{{{NEWS_NS}}}"
REQUIRED: dict[str, Any] = {
    "publication_name": "The Example Times",
    "language": "en",
    "publication_date": "2024-05-01",
    "title": "Something happened",
}


def document(*fragments: str) -> bytes:
    """A one-URL urlset holding ``fragments``, with the news and xhtml prefixes declared."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
        ' xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"'
        ' xmlns:xhtml="http://www.w3.org/1999/xhtml">'
        f"<url><loc>https://example.com/</loc>{''.join(fragments)}</url></urlset>"
    ).encode()


def news_element(body: bytes) -> etree._Element:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    found = etree.fromstring(body, parser).find(f".//{N}news")
    assert found is not None
    return found


def news(**changes: Any) -> News:
    return News(**{**REQUIRED, **changes})


def field_of(**changes: Any) -> str:
    with pytest.raises(InvalidEntryError) as caught:
        news(**changes)
    return caught.value.field


# --------------------------------------------------------------------------- rendering


def test_minimal_news() -> None:
    item = news()
    assert item.to_xml() == (
        "<news:news><news:publication><news:name>The Example Times</news:name>"
        "<news:language>en</news:language></news:publication>"
        "<news:publication_date>2024-05-01</news:publication_date>"
        "<news:title>Something happened</news:title></news:news>"
    )
    validate(document(item.to_xml()), profile="strict")
    assert item.to_xml() is item.to_xml()  # rendered once
    assert (News.NAMESPACE, News.PREFIX) == (NEWS_NS, "news")


def test_maximal_news_in_schema_order() -> None:
    item = News(
        title="Markets rally",
        publication_date=datetime(2024, 5, 1, 10, 30, tzinfo=timezone(timedelta(hours=2))),
        language="de",
        publication_name="Beispiel Zeitung",
        access="subscription",
        genres="blog, OPED",
        keywords=["markets", "shares", "DAX"],
        stock_tickers=["nasdaq:amat", "BOM:500325", "FRA:SAP", "NYSE:IBM", "LON:BP"],
    )
    body = document(item.to_xml())
    validate(body, profile="strict")
    element = news_element(body)
    assert [child.tag.removeprefix(N) for child in element] == [
        "publication",
        "access",
        "genres",
        "publication_date",
        "title",
        "keywords",
        "stock_tickers",
    ]
    assert [child.tag.removeprefix(N) for child in element[0]] == ["name", "language"]
    texts = {child.tag.removeprefix(N): child.text for child in element}
    assert texts["access"] == "Subscription"
    assert texts["genres"] == "Blog, OpEd"
    assert texts["publication_date"] == "2024-05-01T10:30:00+02:00"
    assert texts["keywords"] == "markets, shares, DAX"
    assert texts["stock_tickers"] == "NASDAQ:AMAT, BOM:500325, FRA:SAP, NYSE:IBM, LON:BP"
    assert item.genres == ("Blog", "OpEd")
    assert item.keywords == ("markets", "shares", "DAX")
    assert item.published == datetime(2024, 5, 1, 8, 30, tzinfo=UTC)


@pytest.mark.parametrize("genre", GENRES)
def test_each_genre_is_xsd_valid(genre: str) -> None:
    validate(document(news(genres=[genre.upper()]).to_xml()), profile="strict")


def test_escaping_in_text() -> None:
    name = 'Tom & Jerry\'s <Daily> "News"'
    title = "5 > 3 & 2 < 4: 'quotes' \"too\""
    item = news(publication_name=name, title=title, keywords=["R&D", "<tag>"])
    xml = item.to_xml()
    assert "Tom &amp; Jerry&apos;s &lt;Daily&gt; &quot;News&quot;" in xml
    assert "5 &gt; 3 &amp; 2 &lt; 4: &apos;quotes&apos; &quot;too&quot;" in xml
    body = document(xml)
    validate(body, profile="strict")
    element = news_element(body)
    assert element.findtext(f"{N}publication/{N}name") == name
    assert element.findtext(f"{N}title") == title
    assert element.findtext(f"{N}keywords") == "R&D, <tag>"


# --------------------------------------------------------------------------- normalisation


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("en", "en"),
        ("EN", "en"),
        (" fr ", "fr"),
        ("zh-cn", "zh-cn"),
        ("zh-CN", "zh-cn"),
        ("ZH_TW", "zh-tw"),
        ("fil", "fil"),  # ISO 639-2
        ("yue", "yue"),  # ISO 639-3
        ("GER", "ger"),
    ],
)
def test_language_normalised(given: str, expected: str) -> None:
    item = news(language=given)
    assert item.language == expected
    validate(document(item.to_xml()), profile="strict")


@pytest.mark.parametrize(
    ("given", "published"),
    [
        ("2024-05-01", datetime(2024, 5, 1, tzinfo=UTC)),
        (date(2024, 5, 1), datetime(2024, 5, 1, tzinfo=UTC)),
        ("2024-05-01T23:30:00-05:00", datetime(2024, 5, 2, 4, 30, tzinfo=UTC)),
        (datetime(2024, 5, 1, 12, 0), datetime(2024, 5, 1, 12, 0, tzinfo=UTC)),  # naive: UTC
        ("2024-05-01 12:00:00", datetime(2024, 5, 1, 12, 0, tzinfo=UTC)),
        ("2024-05-01T12:00:00Z", datetime(2024, 5, 1, 12, 0, tzinfo=UTC)),
    ],
)
def test_published_is_aware_utc(given: Any, published: datetime) -> None:
    item = news(publication_date=given)
    assert item.published == published
    assert item.published.tzinfo is UTC
    validate(document(item.to_xml()), profile="strict")


def test_publication_date_keeps_its_offset_in_text() -> None:
    item = news(publication_date="2024-05-01T23:30:00-05:00")
    assert item.publication_date == "2024-05-01T23:30:00-05:00"


def test_optional_lists_from_text_and_empty() -> None:
    item = news(keywords="a, b ,, c,", genres="PressRelease,Satire", stock_tickers="")
    assert item.keywords == ("a", "b", "c")
    assert item.genres == ("PressRelease", "Satire")
    assert item.stock_tickers == ()
    plain = news(keywords=[], genres=(), stock_tickers=None, access=None)
    assert plain == news()
    assert "keywords" not in plain.to_xml()


def test_value_semantics() -> None:
    a = news(language="EN", keywords=("x",))
    b = news(language="en", keywords=["x"])
    assert a == b and hash(a) == hash(b)
    assert a != news(title="Other") and a != "news"
    assert repr(news()) == (
        "News(publication_name='The Example Times', language='en', "
        "publication_date='2024-05-01', title='Something happened')"
    )
    assert "access='Registration'" in repr(news(access="registration"))
    with pytest.raises(AttributeError):
        a.title = "changed"
    with pytest.raises(AttributeError):
        del a.language
    for clone in (pickle.loads(pickle.dumps(a)), copy.copy(a), copy.deepcopy(a)):
        assert clone == a and clone.to_xml() == a.to_xml() and clone.published == a.published


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize("missing", sorted(REQUIRED))
def test_missing_required_field(missing: str) -> None:
    values = {key: value for key, value in REQUIRED.items() if key != missing}
    with pytest.raises(InvalidEntryError) as caught:
        News(**values)
    assert caught.value.field == f"news.{missing}"
    assert "required" in caught.value.reason
    assert field_of(**{missing: None}) == f"news.{missing}"


@pytest.mark.parametrize(
    "language",
    ["english", "xx", "en-US", "zh", "zh-Hans", "zho", "", "und", "qaa", "e", "de1", 12, "ên"],
)
def test_invalid_language(language: object) -> None:
    assert field_of(language=language) == "news.language"


def test_language_reasons_help() -> None:
    with pytest.raises(InvalidEntryError) as caught:
        news(language="en-US")
    assert "'en'" in caught.value.reason
    with pytest.raises(InvalidEntryError) as caught:
        news(language="zh")
    assert "zh-cn" in caught.value.reason and "zh-tw" in caught.value.reason
    with pytest.raises(InvalidEntryError) as caught:
        news(language="iw")
    assert "'he'" in caught.value.reason


@pytest.mark.parametrize(
    "when",
    [
        "yesterday",
        "2024-13-01",
        "2024-05",
        "2024",
        "01/05/2024",
        "",
        12345,
        "0001-01-01T00:00:00+05:00",  # year 0 in UTC
    ],
)
def test_invalid_publication_date(when: object) -> None:
    assert field_of(publication_date=when) == "news.publication_date"


@pytest.mark.parametrize("title", ["a\x01b", "bell\x07", "", "   ", "\ud800", "\uffff", 7])
def test_invalid_title(title: object) -> None:
    assert field_of(title=title) == "news.title"


@pytest.mark.parametrize("name", ["a\x00", "\x1b[31m", " "])
def test_invalid_publication_name(name: str) -> None:
    assert field_of(publication_name=name) == "news.publication_name"


def test_too_many_stock_tickers() -> None:
    tickers = [f"NYSE:T{i}" for i in range(MAX_STOCK_TICKERS + 1)]
    with pytest.raises(InvalidEntryError) as caught:
        news(stock_tickers=tickers)
    assert caught.value.field == "news.stock_tickers"
    assert "limit is 5" in caught.value.reason
    assert field_of(stock_tickers=", ".join(tickers)) == "news.stock_tickers"
    assert len(news(stock_tickers=tickers[:5]).stock_tickers) == 5


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"stock_tickers": ["AMAT"]}, "news.stock_tickers"),
        ({"stock_tickers": ["NYSE:BRK.B"]}, "news.stock_tickers"),  # XSD's \w has no "."
        ({"stock_tickers": ["NYSE:A_B"]}, "news.stock_tickers"),
        ({"stock_tickers": 5}, "news.stock_tickers"),
        ({"genres": ["News"]}, "news.genres"),
        ({"genres": "Blog; Satire"}, "news.genres"),
        ({"keywords": ["a,b"]}, "news.keywords"),
        ({"keywords": ["ok", ""]}, "news.keywords"),
        ({"keywords": ["b\x0cad"]}, "news.keywords"),
        ({"keywords": [3]}, "news.keywords"),
        ({"access": "open"}, "news.access"),
        ({"access": ""}, "news.access"),
        ({"access": True}, "news.access"),
    ],
)
def test_invalid_optional_fields(changes: dict[str, Any], field: str) -> None:
    assert field_of(**changes) == field


# --------------------------------------------------------------------------- properties

# Any text XML 1.0 can hold with something left after stripping.
_XML_CHAR = st.characters(exclude_categories=["Cs"], exclude_characters="\ufffe\uffff").filter(
    lambda c: c in "\t\n\r" or c >= " "
)
_TEXT = st.text(_XML_CHAR, min_size=1, max_size=60).filter(lambda s: s.strip() != "")


def _parsed(text: str) -> str:
    # escape() writes CR as a character reference, so it survives the parser's
    # end-of-line normalisation (XML 1.0 section 2.11): the text comes back as given.
    return text


@settings(max_examples=100, deadline=None)
@given(title=_TEXT, name=_TEXT)
def test_any_valid_text_round_trips(title: str, name: str) -> None:
    item = news(title=title, publication_name=name)
    assert item.title == title.strip()
    assert item.publication_name == name.strip()
    body = document(item.to_xml())
    validate(body, profile="strict")
    element = news_element(body)
    assert element.findtext(f"{N}title") == _parsed(title.strip())
    assert element.findtext(f"{N}publication/{N}name") == _parsed(name.strip())
