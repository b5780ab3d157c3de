"""Issue 11, item 5: no accepted value breaks a page, ever.

``Entry(url, lastmod=datetime(1, 1, 1, tzinfo=+01:00))`` was accepted (a valid W3C date)
and then every request for its page was a 500: its instant lies before year 1 in UTC,
and writing it as Last-Modified overflowed. Here every accepted value is served through
the whole request path (GET, HEAD, If-Modified-Since, a source's ``newest``, news
sections) and the document checked against the official schemas; every refused value
raises the typed error. No other exception may come out of any of it.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from xsd import validate

from sitemap_core import BaseURL, Entry, InvalidEntryError, News, Site, UrlSource, respond
from sitemap_core.model.values import lastmod_instant

BASE = BaseURL.parse("https://example.com")

OFFSETS = st.builds(
    timezone,
    st.timedeltas(
        min_value=-timedelta(hours=23, minutes=59), max_value=timedelta(hours=23, minutes=59)
    ),
)
ANY_DATETIME = st.datetimes(timezones=st.one_of(st.none(), OFFSETS))
ANY_LASTMOD = st.one_of(
    ANY_DATETIME,
    st.dates(),
    ANY_DATETIME.map(lambda moment: moment.isoformat()),
    st.dates().map(lambda day: day.isoformat()),
    st.text(max_size=40),
    st.integers(),
)
CONDITIONS = st.one_of(
    st.just({}),
    st.sampled_from(
        [
            "Mon, 01 Jan 0001 00:00:00 GMT",
            "Fri, 31 Dec 9999 23:59:59 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "garbage",
        ]
    ).map(lambda text: {"if-modified-since": text}),
)


def serve(entry: Entry, newest: Any, request: dict[str, str], news: bool = False) -> None:
    """GET and HEAD the entry's page; the GET's document must be valid."""
    source = UrlSource.from_object("s", [entry], newest=lambda: newest, news=news)
    site = Site([source])
    for method in ("GET", "HEAD"):
        reply = respond(site, method, "/sitemap.xml", lambda: BASE, request)
        assert reply is not None and reply.status in (200, 304)
        body = b"".join(reply.body)  # type: ignore[arg-type]
        if method == "GET" and reply.status == 200:
            validate(body)


@settings(max_examples=300, deadline=None)
@given(ANY_LASTMOD, CONDITIONS)
@example(datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1))), {})
@example("0001-01-01T00:00:00+23:59", {"if-modified-since": "Mon, 01 Jan 0001 00:00:00 GMT"})
@example("9999-12-31T23:59:59-23:59", {})
@example(date(9999, 12, 31), {})
def test_any_lastmod_is_refused_or_served(lastmod: Any, request: dict[str, str]) -> None:
    try:
        entry = Entry("https://example.com/a", lastmod=lastmod)
    except InvalidEntryError as error:
        assert error.field == "lastmod"
        return
    # The same value also as the source's newest (the index's lastmods, Last-Modified).
    serve(entry, lastmod, request)


@settings(max_examples=150, deadline=None)
@given(st.one_of(ANY_DATETIME, st.dates()))
@example(datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1))))
@example(datetime(9999, 12, 31, 23, 59, tzinfo=timezone(timedelta(hours=-23))))
def test_any_news_date_is_refused_or_served(published: Any) -> None:
    try:
        article = News(publication_name="P", language="en", publication_date=published, title="T")
        entry = Entry("https://example.com/a", news=article)
        serve(entry, None, {}, news=True)
    except InvalidEntryError as error:
        # Refused when built, or (an article older than two days) when served.
        assert error.field.startswith("news") or "publication" in error.field


@given(st.one_of(ANY_DATETIME.filter(lambda m: m.tzinfo is not None), st.dates()))
@settings(max_examples=200, deadline=None)
def test_every_lastmod_has_an_instant(moment: datetime | date) -> None:
    text = moment.isoformat()
    instant = lastmod_instant(text)
    assert instant.tzinfo is not None
    assert instant.utcoffset() == timedelta(0)
