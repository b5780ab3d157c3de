"""Issue 10, item 1: a plain generator streams by default on every front.

What a new user writes first (a generator of entries with no ``count=`` and no
fingerprint) is rendered whole once, to learn its validators; every later GET streams
at once on them, in one walk of the source, and a change the walk finds after the first
bytes cuts the transfer (never a complete-looking body under the old ETag).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sitemap_core import Entry

from .conftest import BASE, Front
from .test_caching import IDENTITY, raw
from .test_conformance import is_well_formed, locs, validate

T0 = datetime(2024, 1, 1, tzinfo=UTC)


class Posts:
    """``def posts(): for row in db: yield Entry(...)``: as the Quick start writes it."""

    def __init__(self, n: int) -> None:
        self.rows = [(f"{BASE}/posts/{i}", T0 + timedelta(minutes=i)) for i in range(n)]
        self.walks = 0
        self.yielded = 0

    def __call__(self) -> Iterator[Entry]:
        self.walks += 1
        for loc, lastmod in list(self.rows):
            self.yielded += 1
            yield Entry(loc, lastmod=lastmod)


def test_the_second_get_streams_in_one_walk(make_app: Any, front: Front) -> None:
    posts = Posts(20_000)
    app = make_app({"posts": posts})
    client = front.client(app)
    first, first_body = raw(client, "/sitemap.xml")
    assert first.status_code == 200 and first.headers["content-length"] == str(len(first_body))
    walks = posts.walks
    streamed = front.raw_body(app, "/sitemap.xml")
    assert streamed.status == 200
    head = next(streamed.chunks)
    # The first bytes leave after a small part of the source was read.
    assert posts.yielded - 2 * 20_000 < 10_000
    body = head + b"".join(streamed.chunks)
    assert posts.walks == walks + 1  # one walk, no count
    assert dict(streamed.headers).get("Content-Length") is None
    assert body == first_body
    validate(body)
    again, again_body = raw(client, "/sitemap.xml")
    assert again.headers["etag"] == first.headers["etag"]
    assert again.headers["last-modified"] == first.headers["last-modified"]
    assert again_body == first_body


def test_a_change_found_late_cuts_the_transfer(make_app: Any, front: Front) -> None:
    posts = Posts(20_000)
    app = make_app({"posts": posts})
    client = front.client(app)
    first, _ = raw(client, "/sitemap.xml")
    posts.rows.append((f"{BASE}/posts/new", T0))  # appended: seen by the probe at the end
    stale = front.raw_body(app, "/sitemap.xml")
    assert stale.status == 200
    received: list[bytes] = []
    with pytest.raises(Exception, match="changed"):
        for chunk in stale.chunks:
            received.append(chunk)
    body = b"".join(received)
    assert b"</urlset>" not in body and not is_well_formed(body)
    fresh, fresh_body = raw(client, "/sitemap.xml", headers=IDENTITY)
    assert fresh.status_code == 200 and fresh.headers["etag"] != first.headers["etag"]
    assert locs(fresh_body)[-1] == f"{BASE}/posts/new"
    assert len(locs(fresh_body)) == 20_001


def test_a_change_in_the_first_chunk_is_rendered_afresh(make_app: Any, front: Front) -> None:
    posts = Posts(20_000)
    app = make_app({"posts": posts})
    client = front.client(app)
    first, _ = raw(client, "/sitemap.xml")
    posts.rows.insert(0, (f"{BASE}/posts/newest", T0 + timedelta(days=30)))
    fresh, body = raw(client, "/sitemap.xml")
    assert fresh.status_code == 200 and fresh.headers["etag"] != first.headers["etag"]
    assert locs(body)[0] == f"{BASE}/posts/newest"
    assert len(locs(body)) == 20_001


def test_a_route_decorator_with_params_streams_after_its_first_render() -> None:
    from flask import Flask

    from flask_sitemapper import Sitemapper

    app = Flask(__name__)
    sitemapper = Sitemapper(app)
    calls = []

    def post_ids() -> Iterator[dict[str, Any]]:
        calls.append(1)
        for i in range(20_000):
            yield {"post_id": i}

    @app.get("/posts/<int:post_id>")
    @sitemapper.include(params=post_ids)
    def post(post_id: int) -> str:
        return str(post_id)

    client = app.test_client()
    first = client.get("/sitemap.xml")
    assert first.status_code == 200 and first.headers["Content-Length"]
    walks = len(calls)
    second = client.get("/sitemap.xml")
    assert second.status_code == 200 and "Content-Length" not in second.headers
    assert second.headers["ETag"] == first.headers["ETag"]
    assert second.data == first.data
    assert len(calls) == walks + 1  # one walk of params, no count
    assert locs(second.data)[-1] == "http://localhost/posts/19999"
