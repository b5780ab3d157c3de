"""Every front serves sources of tuple rows as it serves sources of entries."""

from __future__ import annotations

import gzip
import logging
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest

from sitemap_core import Entry

from .conftest import BASE, Front

TZ = timezone(timedelta(hours=-5))
WORDS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")


def rows(n: int) -> list[tuple[Any, ...]]:
    """``n`` rows as a cursor gives them, some with empty fields."""
    start = datetime(2024, 5, 1, 23, 30, tzinfo=TZ)
    return [
        (f"{BASE}/posts/{i}?a=1&b={i % 3}", start + timedelta(minutes=i), WORDS[i % 7], 0.5)
        if i % 4
        else (f"{BASE}/posts/{i}", None, None, None)
        for i in range(n)
    ]


class RowSlices:
    """A sliceable source of rows with a fingerprint (so pages stream); one bad row."""

    def __init__(self, items: list[tuple[Any, ...]], bad_at: int | None = None) -> None:
        self.items = items
        self.bad_at = bad_at

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: slice) -> list[tuple[Any, ...]]:
        chosen = self.items[index]
        if self.bad_at is not None and index.start <= self.bad_at < index.stop:
            chosen[self.bad_at - index.start] = ("https://elsewhere.example/x",)
        return chosen

    def fingerprint(self) -> str:
        return "v1"


ROWS = rows(3000)


def as_entries(items: list[tuple[Any, ...]]) -> RowSlices:
    """The same data as Entry objects (the reference)."""
    slices = RowSlices([])
    slices.items = [Entry(*row) for row in items]  # type: ignore[misc]
    return slices


@pytest.mark.parametrize(
    "path",
    ["/sitemap.xml", "/sitemap-posts-2.xml", "/sitemap-posts-2.txt", "/sitemap-posts-1.html"],
)
@pytest.mark.parametrize("kind", ["sliceable", "generator"])
def test_rows_are_served_as_entries_are(
    make_client: Any, path: str, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    source: Any = RowSlices(list(ROWS)) if kind == "sliceable" else (lambda: iter(ROWS))
    got = make_client({"posts": source}, page_size=1000).get(path)
    expected = make_client({"posts": as_entries(ROWS)}, page_size=1000).get(path)
    assert got.status_code == expected.status_code == 200
    assert got.content == expected.content
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("cache", [None, False])
def test_rows_gzipped_and_cached(make_client: Any, cache: Any) -> None:
    client = make_client({"posts": RowSlices(list(ROWS))}, page_size=1000, cache=cache)
    expected = make_client({"posts": as_entries(ROWS)}, page_size=1000, cache=False)
    plain = expected.get("/sitemap-posts-3.xml").content
    for _ in range(2):  # the second from the page cache unless it is off
        zipped = client.get("/sitemap-posts-3.xml.gz")
        assert zipped.status_code == 200 and gzip.decompress(zipped.content) == plain
        assert client.get("/sitemap-posts-3.xml").content == plain


def test_a_bad_row_before_the_first_byte_is_a_500(make_client: Any) -> None:
    client = make_client({"posts": RowSlices(list(ROWS), bad_at=5)})
    response = client.get("/sitemap.xml")
    assert response.status_code == 500
    assert b"<urlset" not in response.content


def test_a_bad_row_after_the_first_byte_cuts_the_transfer(make_app: Any, front: Front) -> None:
    app = make_app({"posts": RowSlices(rows(10_000), bad_at=9_000)})
    raw = front.raw_body(app, "/sitemap.xml")
    assert raw.status == 200
    received: list[bytes] = []
    with pytest.raises(Exception, match=r"elsewhere\.example"):
        for chunk in raw.chunks:
            received.append(chunk)
    body = b"".join(received)
    assert len(received) >= 2 and b"</urlset>" not in body


def test_async_generator_of_rows_on_the_asgi_front(make_client: Any, front: Front) -> None:
    if front.name != "asgi-middleware":
        pytest.skip("async sources are for the ASGI front")

    async def posts() -> AsyncIterator[tuple[Any, ...]]:
        for row in ROWS:
            yield row

    client: httpx.Client = make_client({"posts": posts}, page_size=1000)
    expected = make_client({"posts": as_entries(ROWS)}, page_size=1000)
    for path in ("/sitemap-posts-1.xml", "/sitemap-posts-3.txt"):
        assert client.get(path).content == expected.get(path).content
