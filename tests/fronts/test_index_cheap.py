"""Issue 10, item 6, on every front: ``/sitemap.xml`` (GET, HEAD, 304) makes one query
per section while the sections' fingerprints are unchanged."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from .conftest import BASE, Front


class Table:
    """A sized sliceable with a version fingerprint and per-range newest; counts queries."""

    def __init__(self, n: int, name: str) -> None:
        self.n, self.name, self.version = n, name, 1
        self.queries: list[str] = []

    def __len__(self) -> int:
        self.queries.append("count")
        return self.n

    def __getitem__(self, window: slice) -> list[str]:
        return [f"{BASE}/{self.name}/{i}" for i in range(*window.indices(self.n))]

    def fingerprint(self) -> int:
        self.queries.append("fingerprint")
        return self.version

    def newest(self, start: int, stop: int) -> date:
        self.queries.append("newest")
        return date(2024, 1, 1) + timedelta(days=stop)


def test_the_index_costs_one_query_per_section(make_app: Any, front: Front) -> None:
    posts, tags = Table(120, "posts"), Table(35, "tags")
    client = front.client(make_app({"posts": posts, "tags": tags}, 10))
    first = client.get("/sitemap.xml")
    assert first.status_code == 200 and "sitemapindex" in first.text
    assert posts.queries.count("newest") == 12
    for method, headers in [
        ("GET", {}),
        ("HEAD", {}),
        ("GET", {"If-None-Match": first.headers["etag"]}),
    ]:
        posts.queries.clear()
        tags.queries.clear()
        response = client.request(method, "/sitemap.xml", headers=headers)
        assert response.status_code in (200, 304)
        assert response.headers["etag"] == first.headers["etag"]
        assert posts.queries == ["fingerprint"] and tags.queries == ["fingerprint"]
    posts.n, posts.version = 125, 2
    posts.queries.clear()
    tags.queries.clear()
    changed = client.get("/sitemap.xml")
    assert changed.headers["etag"] != first.headers["etag"]
    assert "count" in posts.queries and tags.queries == ["fingerprint"]
