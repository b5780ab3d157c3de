"""News sections: 1,000 URLs per news sitemap, news= on every entry, the two-day window."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from flask import Flask
from starlette.applications import Starlette
from starlette.testclient import TestClient
from xsd import NEWS_NS, validate

from asgi_sitemap import SitemapMiddleware
from flask_sitemapper import Sitemapper
from sitemap_core import ConfigurationError, Entry, News, Site, UrlSource, news_cutoff
from sitemap_core.limits import MAX_NEWS_URLS
from sitemap_core.sources.aio import AsyncUrlSource
from sitemap_core.sources.base import Limits
from sitemap_core.sources.newsroom import NEWS_GRACE, NEWS_WINDOW, check_news, news_epoch
from tests.core.helpers import ORIGIN, get, locs, parse

NOW = datetime.now(UTC)


def article(i: int, age: timedelta = timedelta(hours=3)) -> Entry:
    return Entry(
        f"{ORIGIN}/news/{i}",
        news=News(
            publication_name="The Example Times",
            language="en",
            publication_date=NOW - age,
            title=f"Story {i} & more",
        ),
    )


def news_site(count: int, **limits: object) -> Site[UrlSource]:
    stories = [article(i) for i in range(count)]
    source = UrlSource.from_object("news", stories, news=True, **limits)  # type: ignore[arg-type]
    return Site([source])


def test_a_news_section_holds_1000_urls_a_page() -> None:
    site = news_site(2_500)
    assert site.entries_per_page("news") == MAX_NEWS_URLS
    index = get(site, "/sitemap.xml")
    assert index is not None and index.status == 200
    assert locs(index.body) == [f"{ORIGIN}/sitemap-news-{n}.xml" for n in (1, 2, 3)]
    pages = [get(site, f"/sitemap-news-{n}.xml") for n in (1, 2, 3)]
    assert [len(locs(page.body)) for page in pages if page] == [1_000, 1_000, 500]
    for page in pages:
        assert page is not None
        validate(page.body)
        assert parse(page.body).find(f".//{{{NEWS_NS}}}news") is not None


def test_a_smaller_page_size_is_kept() -> None:
    assert news_site(10, page_size=300).entries_per_page("news") == 300


def test_a_small_news_section_fits_the_root_sitemap() -> None:
    got = get(news_site(20), "/sitemap.xml")
    assert got is not None and got.status == 200
    validate(got.body)
    assert len(locs(got.body)) == 20


def test_news_must_be_a_bool() -> None:
    with pytest.raises(ConfigurationError, match="news"):
        Limits(news="yes")  # type: ignore[arg-type]


def test_an_entry_without_news_is_refused_naming_it() -> None:
    with pytest.raises(Exception) as caught:
        check_news([article(1), Entry(f"{ORIGIN}/plain")], "news")
    error = caught.value
    assert getattr(error, "field", None) == "news"
    assert "news section" in str(error) and "/plain" in str(error)


def test_an_article_older_than_the_window_is_refused() -> None:
    old = article(1, age=NEWS_WINDOW + NEWS_GRACE + timedelta(minutes=1))
    with pytest.raises(Exception) as caught:
        check_news([old], "news", NOW)
    assert getattr(caught.value, "field", None) == "news.publication_date"
    assert "two days" in str(caught.value) and "'news'" in str(caught.value)


def test_an_article_just_aged_out_is_within_the_grace() -> None:
    # Judged at NOW, the instant the article's age counts from: the suite may reach
    # this test more than the minute of margin after this module was imported.
    check_news([article(1, age=NEWS_WINDOW + NEWS_GRACE - timedelta(minutes=1))], "news", NOW)


def test_a_served_page_with_a_stale_article_is_a_500_not_a_document(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stories = [article(1), article(2, age=timedelta(days=5))]
    app = Flask("stale_news")
    app.config["SITEMAP_BASE_URL"] = ORIGIN
    sitemap = Sitemapper(app)
    sitemap.add_source("news", stories, news=True)
    with caplog.at_level(logging.ERROR):
        response = app.test_client().get("/sitemap.xml")
    assert response.status_code == 500
    assert "news.publication_date" in caplog.text and "'news'" in caplog.text


def test_the_fingerprint_changes_every_hour() -> None:
    source = UrlSource.from_object("news", [article(1)], fingerprint=lambda: 7, news=True)
    assert source.fingerprint(0, 1) == (7, news_epoch())
    plain = UrlSource.from_object("plain", [article(1)], fingerprint=lambda: 7)
    assert plain.fingerprint(0, 1) == 7
    assert news_epoch(NOW + timedelta(hours=1)) == news_epoch(NOW) + 1


def test_news_cutoff_is_two_days_back() -> None:
    assert news_cutoff(NOW) == NOW - timedelta(days=2)
    assert news_cutoff().tzinfo is not None


def test_flask_news_source_decorator_serves_news_pages() -> None:
    app = Flask("news_app")
    app.config["SITEMAP_BASE_URL"] = ORIGIN
    sitemap = Sitemapper(app)

    @sitemap.source("news", news=True, count=lambda: 1_200)
    def recent() -> Iterator[Entry]:
        for i in range(1_200):
            yield article(i)

    client = app.test_client()
    index = client.get("/sitemap.xml")
    assert locs(index.data) == [f"{ORIGIN}/sitemap-news-1.xml", f"{ORIGIN}/sitemap-news-2.xml"]
    second = client.get("/sitemap-news-2.xml")
    assert second.status_code == 200
    validate(second.data)
    assert len(locs(second.data)) == 200


def test_asgi_news_source_serves_news_pages() -> None:
    async def recent() -> Iterator[Entry]:  # type: ignore[misc]
        for i in range(1_001):
            yield article(i)

    source = AsyncUrlSource.from_object("news", recent, news=True)
    app = SitemapMiddleware(Starlette(), [source], base_url=ORIGIN)
    client = TestClient(app, base_url=ORIGIN)
    index = client.get("/sitemap.xml")
    assert index.status_code == 200
    assert len(locs(index.content)) == 2
    last = client.get("/sitemap-news-2.xml")
    validate(last.content)
    assert locs(last.content) == [f"{ORIGIN}/news/1000"]


def test_a_date_only_article_of_the_window_is_kept() -> None:
    now = datetime(2024, 1, 3, 10, tzinfo=UTC)
    dated = Entry(
        f"{ORIGIN}/news/dated",
        news=News(
            publication_name="The Example Times",
            language="en",
            publication_date=datetime(2024, 1, 1, 12, tzinfo=UTC).date(),
            title="Published at noon, given as a date",
        ),
    )
    check_news([dated], "news", now)
    with pytest.raises(Exception, match="two days"):
        check_news([dated], "news", now + timedelta(days=1))
