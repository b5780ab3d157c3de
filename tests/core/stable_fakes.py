"""Fake sources with stable pages, sync and async, for the index's streamed children."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import date, timedelta

from sitemap_core.sources.pages import Page, Summary
from tests.core.helpers import ORIGIN

FIRST_DAY = date(2024, 1, 1)


class StablePages:
    """``pages`` stable pages of ``width`` keys, each listing every key of its window.

    ``bad_at``: page numbers from there on come out of order. ``summary=False`` leaves
    ``stable_summary`` out (the core then walks the pages). ``pulled`` counts the pages
    given.
    """

    def __init__(
        self, pages: int, *, width: int = 1, bad_at: int | None = None, summary: bool = True
    ) -> None:
        self.total = pages
        self.width = width
        self.bad_at = bad_at
        self.pulled = 0
        if summary:
            self.stable_summary = self.summarised

    def __len__(self) -> int:
        return self.total * self.width

    def page(self, number: int) -> Page:
        start = (number - 1) * self.width
        lastmod = FIRST_DAY + timedelta(days=number % 400)
        return Page(number, start, start + self.width, self.width, lastmod, ("v", number))

    def given(self, first: int, stop: int) -> Iterator[Page]:
        for number in range(max(first, 1), min(stop, self.total + 1)):
            self.pulled += 1
            bad = self.bad_at is not None and number >= self.bad_at
            yield self.page(number - 2 if bad else number)

    def stable_pages(self, first: int, stop: int) -> Iterator[Page]:
        return self.given(first, stop)

    def summarised(self) -> Summary:
        days = range(1, min(self.total, 400) + 1)
        newest = max(FIRST_DAY + timedelta(days=n % 400) for n in days)
        return Summary(self.total, self.total * self.width, newest, self.width)

    def stable_items(self, start: int, stop: int) -> list[str]:
        return [f"{ORIGIN}/item/{key}" for key in range(start, stop)]

    def fingerprint(self) -> object:
        return ("v", self.total)


class AsyncStablePages(StablePages):
    """:class:`StablePages` with coroutine ``stable_pages`` (giving an async iterator),
    ``stable_summary`` and ``count``: an async-native source."""

    def __init__(self, pages: int, **kwargs: object) -> None:
        super().__init__(pages, summary=False, bad_at=kwargs.get("bad_at"))  # type: ignore[arg-type]

    async def stable_pages(self, first: int, stop: int) -> AsyncIterator[Page]:  # type: ignore[override]
        return self._pages(first, stop)

    async def _pages(self, first: int, stop: int) -> AsyncIterator[Page]:
        for page in self.given(first, stop):
            yield page

    async def stable_summary(self) -> Summary:
        return self.summarised()

    async def count(self) -> int:
        return len(self)

    async def stable_items(self, start: int, stop: int) -> AsyncIterator[str]:  # type: ignore[override]
        for item in super().stable_items(start, stop):
            yield item

    async def fingerprint(self) -> object:
        return ("v", self.total)
