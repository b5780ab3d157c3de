"""Stable pages as the core sees them: each checked as it comes, and their summary."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime, timedelta, timezone

import pytest

from sitemap_core import ConfigurationError, UrlSource
from sitemap_core.sources.pages import (
    NormalisedLastmod,
    Page,
    PageCheck,
    Summary,
    streamed_pages,
    summarised,
)
from tests.core.stable_fakes import StablePages


def test_lastmods_are_normalised_unless_the_database_wrote_them_so() -> None:
    check = PageCheck("posts", 1, 10)
    assert check(Page(1, 0, 5, 5, "2024-05-01 10:00:00")).lastmod == "2024-05-01T10:00:00+00:00"
    paris = timezone(timedelta(hours=2))
    assert check(Page(2, 5, 10, 5, datetime(2024, 5, 1, 10, tzinfo=paris))).lastmod == (
        "2024-05-01T10:00:00+02:00"
    )
    written = NormalisedLastmod("2024-05-01T08:00:00+00:00")
    page = Page(3, 10, 15, 5, written)
    assert check(page) is page  # taken as it is: no second page made


@pytest.mark.parametrize(
    ("pages", "message"),
    [
        ([Page(2, 0, 5, 5), Page(2, 5, 10, 5)], "page 2 out of order"),
        ([Page(3, 0, 5, 5), Page(2, 5, 10, 5)], "page 2 out of order"),
        ([Page(0, 0, 5, 5)], "page 0 out of order"),
        ([Page(1, 0, 5, 6)], "lists 6 URLs in the window"),
        ([Page(1, 0, 5, 0)], "lists 0 URLs"),
        ([Page(1, 0, 60_000, 50_001)], "lists 50001 URLs"),
        ([(1, 0, 5, 5)], "gave \\(1, 0, 5, 5\\)"),
    ],
)
def test_a_wrong_page_is_the_source_s_error_when_it_comes(pages: list[Page], message: str) -> None:
    given: Iterator[Page] = iter(pages)
    checked = streamed_pages(given, "posts", 1, 100)
    with pytest.raises(ConfigurationError, match=message) as raised:
        list(checked)
    assert "'posts'" in str(raised.value)


def test_pages_are_checked_one_at_a_time_as_they_are_pulled() -> None:
    fake = StablePages(1_000, bad_at=600)
    pages = UrlSource.from_object("posts", fake).stream(1, 2_000)
    assert [next(pages).number for _ in range(3)] == [1, 2, 3]
    assert fake.pulled == 3
    with pytest.raises(ConfigurationError, match="out of order"):
        list(pages)
    assert fake.pulled == 600


def test_a_summary_counts_pages_urls_and_the_newest_dated_lastmod() -> None:
    pages = [
        Page(1, 0, 10, 4, "2024-05-01T10:00:00+02:00"),
        Page(3, 20, 30, 10, "2024-05-01T09:30:00+00:00"),  # later, as an instant
        Page(4, 30, 45, 1, "2024-04-01"),
    ]
    assert summarised(pages) == Summary(3, 15, "2024-05-01T09:30:00+00:00", 15)
    undated = [*pages, Page(5, 45, 50, 2)]
    assert summarised(undated) == Summary(4, 17, None, 15)
    assert summarised([]) == Summary(0, 0, None, 0)


def test_a_source_s_own_summary_is_checked_and_its_lastmod_normalised() -> None:
    fake = StablePages(3)
    fake.stable_summary = lambda: Summary(3, 3, date(2024, 5, 1), 1)  # type: ignore[method-assign]
    assert UrlSource.from_object("posts", fake).summary() == Summary(3, 3, "2024-05-01", 1)
    fake.stable_summary = lambda: Summary(-1, 3)  # type: ignore[method-assign]
    with pytest.raises(ConfigurationError, match="stable_summary\\(\\) of source 'posts'"):
        UrlSource.from_object("posts", fake).summary()
