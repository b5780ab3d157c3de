"""Issue 12, item 4: the same request gets the same HTTP answer on every front.

One site (a fingerprinted source with dated entries, a plain generator, 10 URLs a
page: an index of four children) served by the Flask extension, the WSGI middleware and
the ASGI middleware; for each request below, the status and every header but ``Date``
and ``Server`` (set by the server, not by us) must be the same on all three.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta
from typing import Any

import httpx
import pytest

from .conftest import BASE, FRONTS

DAY = date(2024, 1, 1)


class Posts:
    """A sliceable with a fingerprint and per-page newest; every entry dated."""

    def __len__(self) -> int:
        return 25

    def __getitem__(self, window: slice) -> list[tuple[str, date]]:
        return [(f"{BASE}/posts/{i}", DAY + timedelta(days=i)) for i in range(*window.indices(25))]

    def fingerprint(self) -> str:
        return "v1"

    def newest(self, start: int, stop: int) -> date:
        return DAY + timedelta(days=stop - 1)


def pages() -> Iterator[str]:
    yield from (f"{BASE}/pages/{i}" for i in range(7))


REQUESTS: list[tuple[str, str, dict[str, str]]] = [
    ("GET", "/sitemap.xml", {}),
    ("GET", "/sitemap.xml", {"Accept-Encoding": "gzip"}),
    ("HEAD", "/sitemap.xml", {}),
    ("GET", "/sitemap-posts-2.xml", {}),
    ("HEAD", "/sitemap-posts-2.xml", {"Accept-Encoding": "gzip"}),
    ("GET", "/sitemap-posts-3.txt", {}),
    ("GET", "/sitemap-pages-1.xml", {}),
    ("HEAD", "/sitemap-pages-1.xml", {}),
    ("GET", "/sitemap-posts-1.xml.gz", {}),
    ("GET", "/sitemap-posts-1.html", {}),
    ("GET", "/robots.txt", {}),
    ("HEAD", "/robots.txt", {}),
    ("GET", "/sitemap-posts-9.xml", {}),
    ("GET", "/sitemap-nope-1.xml", {}),
    ("POST", "/sitemap.xml", {}),
    ("PROPFIND", "/sitemap-posts-1.xml", {}),  # a method none of the frameworks lists
    ("DELETE", "/robots.txt", {}),
    ("GET", "/sitemap.xml", {"Host": "evil.example"}),
]


def answer(client: httpx.Client, method: str, path: str, headers: dict[str, str]) -> Any:
    with client.stream(method, path, headers=headers) as response:
        body = b"".join(response.iter_raw())
    kept = sorted(
        (k.lower(), v)
        for k, v in response.headers.multi_items()
        if k.lower() not in ("date", "server")
    )
    return response.status_code, kept, body


def clients() -> dict[str, httpx.Client]:
    sources = {"posts": Posts(), "pages": pages}
    return {name: front.client(front.build_app(sources, 10)) for name, front in FRONTS.items()}


@pytest.mark.parametrize(("method", "path", "headers"), REQUESTS, ids=lambda v: str(v))
def test_every_front_gives_the_same_answer(method: str, path: str, headers: dict[str, str]) -> None:
    fronts = clients()
    # Twice each: the first answer of a plain source is rendered whole, the next streamed.
    for _ in range(2):
        answers = {name: answer(client, method, path, headers) for name, client in fronts.items()}
        first = next(iter(answers.values()))
        for name, got in answers.items():
            assert got[:2] == first[:2], (name, got[:2], first[:2])
            assert got[2] == first[2], name


@pytest.mark.parametrize(
    "path", ["/sitemap.xml", "/sitemap-posts-2.xml", "/sitemap-pages-1.xml", "/robots.txt"]
)
def test_every_front_gives_the_same_304(path: str) -> None:
    fronts = clients()
    answers = {}
    for name, client in fronts.items():
        etag = client.get(path).headers["etag"]
        answers[name] = answer(client, "GET", path, {"If-None-Match": etag})
    first = next(iter(answers.values()))
    assert first[0] == 304
    for name, got in answers.items():
        assert got[:2] == first[:2], (name, got[:2], first[:2])
