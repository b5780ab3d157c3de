"""Issue 13, part 1: the Atom feed of recent changes, on every front.

The feed lists the most recently modified URLs across the sources, newest first, with
the lastmod the sitemap gives each; it is listed in robots.txt and linked from the HTML
view, and has the validators of every other document (ETag, Last-Modified, 304, HEAD,
gzip). Every URL of the feed is in the sitemap with the same lastmod.
"""

from __future__ import annotations

import gzip
import sqlite3
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from atom import check_atom_rules, check_newest_first, read_feed, validate_atom

from sitemap_core import Entry
from sitemap_core.model.recent import newest_first
from sitemap_core.model.values import lastmod_instant
from sitemap_core.sources.sql.sqlite import SQLiteSource
from sitemap_core.write.feed import FEED_PATH

from .conftest import BASE

ATOM = "{http://www.w3.org/2005/Atom}"
SM = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
START = datetime(2024, 5, 1, 12, tzinfo=UTC)


def dated(n: int, section: str = "posts", step_minutes: int = 61) -> list[Entry]:
    """``n`` entries, each dated ``step_minutes`` after the one before (not in order of
    date: every third is moved a day back, so the newest are not simply the last)."""
    return [
        Entry(
            f"{BASE}/{section}/{i}?a=1&b=2",
            lastmod=START + timedelta(minutes=step_minutes * i) - timedelta(days=i % 3),
        )
        for i in range(n)
    ]


def undated(n: int) -> list[str]:
    return [f"{BASE}/pages/{i}" for i in range(n)]


def feed_entries(document: bytes) -> list[tuple[str, datetime]]:
    root = ET.fromstring(document)
    assert root.tag == f"{ATOM}feed"
    out = []
    for entry in root.iter(f"{ATOM}entry"):
        link = entry.find(f"{ATOM}link")
        updated = entry.find(f"{ATOM}updated")
        assert link is not None and updated is not None and updated.text
        out.append((link.attrib["href"], datetime.fromisoformat(updated.text)))
    return out


def sitemap_lastmods(client: Any) -> dict[str, datetime]:
    """Every URL of the sitemap with its lastmod instant (index children followed)."""
    found: dict[str, datetime] = {}
    pending = [f"{BASE}/sitemap.xml"]
    while pending:
        response = client.get(pending.pop())
        assert response.status_code == 200
        root = ET.fromstring(response.content)
        if root.tag == f"{SM}sitemapindex":
            pending += [loc.text for loc in root.iter(f"{SM}loc") if loc.text]
            continue
        for url in root.iter(f"{SM}url"):
            loc, lastmod = url.find(f"{SM}loc"), url.find(f"{SM}lastmod")
            assert loc is not None and loc.text
            if lastmod is not None and lastmod.text:
                found[loc.text] = lastmod_instant(lastmod.text)
    return found


def test_the_feed_is_off_unless_asked_for(front: Any) -> None:
    client = front.client(front.build_app({"posts": dated(5)}))
    assert client.get(FEED_PATH).status_code == 404
    assert "sitemap-recent.atom" not in client.get("/robots.txt").text


def test_the_feed_lists_the_newest_first_with_the_sitemaps_lastmods(front: Any) -> None:
    sources = {"posts": dated(40), "news": dated(30, "news", 17), "pages": undated(5)}
    client = front.client(front.build_app(sources, page_size=10, feed=True, feed_size=25))
    response = client.get(FEED_PATH)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/atom+xml; charset=utf-8"
    # As real consumers read it: RFC 4287's grammar and rules, and feedparser.
    validate_atom(response.content)
    check_atom_rules(response.content)
    check_newest_first(response.content)
    feed = read_feed(response.content, response.headers["content-type"])
    listed = feed_entries(response.content)
    assert [(entry.link, entry.updated) for entry in feed.entries] == [
        (loc, when.astimezone(UTC).replace(microsecond=0)) for loc, when in listed
    ]
    every = [
        (e.loc, lastmod_instant(e.lastmod or "")) for e in [*dated(40), *dated(30, "news", 17)]
    ]
    expected = sorted(every, key=lambda pair: (pair[1], pair[0]), reverse=True)[:25]
    assert listed == expected
    in_sitemap = sitemap_lastmods(client)
    assert all(in_sitemap[loc] == when for loc, when in listed)
    robots = client.get("/robots.txt").text
    assert f"Sitemap: {BASE}{FEED_PATH}" in robots.splitlines()


def test_the_feed_has_the_validators_of_any_document(front: Any) -> None:
    client = front.client(front.build_app({"posts": dated(12)}, feed=True))
    client.headers["Accept-Encoding"] = "identity"
    first = client.get(FEED_PATH)
    assert "content-encoding" not in first.headers
    etag, last_modified = first.headers["etag"], first.headers["last-modified"]
    newest = max(lastmod_instant(e.lastmod or "") for e in dated(12))
    assert last_modified == newest.strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert client.get(FEED_PATH, headers={"If-None-Match": etag}).status_code == 304
    assert client.get(FEED_PATH, headers={"If-Modified-Since": last_modified}).status_code == 304
    head = client.head(FEED_PATH)
    assert head.status_code == 200 and head.headers["etag"] == etag and head.content == b""
    zipped = client.get(FEED_PATH, headers={"Accept-Encoding": "gzip"})
    assert zipped.headers["content-encoding"] == "gzip"
    assert zipped.headers["etag"] != etag  # another representation, another tag
    # httpx decodes gzip itself; the bytes are the identity document's.
    assert zipped.content == first.content


def test_the_feed_has_a_gzipped_twin_as_a_file(front: Any) -> None:
    # As every document: /sitemap-recent.atom.gz is the feed gzipped, served as a file
    # (what `sitemap build --gzip` writes beside the feed).
    client = front.client(front.build_app({"posts": dated(12)}, feed=True))
    client.headers["Accept-Encoding"] = "identity"
    feed = client.get(FEED_PATH)
    with client.stream("GET", f"{FEED_PATH}.gz") as response:
        raw = b"".join(response.iter_raw())
        headers = response.headers
    assert response.status_code == 200
    assert headers["content-type"] == "application/gzip"
    assert "content-encoding" not in headers and "vary" not in headers
    assert gzip.decompress(raw) == feed.content
    etag = headers["etag"]
    assert client.get(f"{FEED_PATH}.gz", headers={"If-None-Match": etag}).status_code == 304
    assert (
        front.client(front.build_app({"posts": dated(3)})).get(f"{FEED_PATH}.gz").status_code == 404
    )


def test_an_age_limit_leaves_old_changes_out(front: Any) -> None:
    now = datetime.now(UTC)
    entries = [Entry(f"{BASE}/p/{days}", lastmod=now - timedelta(days=days)) for days in range(10)]
    client = front.client(front.build_app({"posts": entries}, feed=True, feed_max_days=4.5))
    listed = [loc for loc, _ in feed_entries(client.get(FEED_PATH).content)]
    assert listed == [f"{BASE}/p/{days}" for days in range(5)]


def test_a_site_without_dates_serves_an_empty_valid_feed(front: Any) -> None:
    client = front.client(front.build_app({"pages": undated(3)}, feed=True))
    response = client.get(FEED_PATH)
    assert response.status_code == 200 and feed_entries(response.content) == []
    validate_atom(response.content)
    check_atom_rules(response.content)
    root = ET.fromstring(response.content)
    assert root.findtext(f"{ATOM}updated") == "1970-01-01T00:00:00Z"


def test_the_html_view_links_the_feed(front: Any) -> None:
    client = front.client(front.build_app({"posts": dated(3)}, feed=True))
    page = client.get("/sitemap.html").text
    assert '<link rel="alternate" type="application/atom+xml"' in page
    assert 'href="sitemap-recent.atom"' in page


# -- how sources list their recent changes ----------------------------------------------


class Listed:
    """A sliceable source with its own ``recent(limit)``, counting the calls."""

    def __init__(self, entries: list[Entry]) -> None:
        self.entries = entries
        self.recent_calls: list[int] = []
        self.slices = 0

    def __len__(self) -> int:
        return len(self.entries)

    def __getitem__(self, window: slice) -> list[Entry]:
        self.slices += 1
        return self.entries[window]

    def recent(self, limit: int) -> list[Entry]:
        self.recent_calls.append(limit)
        ordered = sorted(self.entries, key=lambda e: lastmod_instant(e.lastmod or ""))
        return ordered[::-1][:limit]


def test_a_source_with_recent_is_asked_and_not_walked(front: Any) -> None:
    source = Listed(dated(50))
    client = front.client(front.build_app({"posts": source}, feed=True, feed_size=7))
    listed = feed_entries(client.get(FEED_PATH).content)
    assert source.recent_calls == [7] and source.slices == 0
    assert listed == [(e.loc, lastmod_instant(e.lastmod or "")) for e in source.recent(7)]


def build_table(path: Path, n: int) -> None:
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE posts (id INTEGER PRIMARY KEY, updated_at TEXT)")
        db.execute("CREATE INDEX posts_updated ON posts (updated_at)")
        db.executemany(
            "INSERT INTO posts VALUES (?, ?)",
            [
                (
                    i,
                    None
                    if i % 10 == 0
                    else (START + timedelta(minutes=7 * ((i * 37) % n))).isoformat(),
                )
                for i in range(1, n + 1)
            ],
        )


def test_sqlite_source_answers_recent_in_one_query(tmp_path: Path, front: Any) -> None:
    database = tmp_path / "posts.db"
    build_table(database, 300)
    statements: list[str] = []

    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(database)
        conn.set_trace_callback(statements.append)
        return conn

    def build(row: Any) -> tuple[str, Any, None, None]:
        return (f"{BASE}/posts/{row[0]}", row[1], None, None)

    source = SQLiteSource(
        connect,
        "posts",
        "id",
        build,
        columns=("id", "updated_at"),
        lastmod="updated_at",
        row_factory=None,
    )
    client = front.client(front.build_app({"posts": source}, feed=True, feed_size=20))
    statements.clear()
    listed = feed_entries(client.get(FEED_PATH).content)
    recent_queries = [s for s in statements if "ORDER BY" in s and "DESC" in s]
    assert len(recent_queries) == 1
    walked = newest_first((Entry(*build((i, t))) for i, t in rows(database)), 20)
    assert listed == [(item.loc, item.instant) for item in walked]


def rows(database: Path) -> Iterator[tuple[int, str]]:
    with closing(sqlite3.connect(database)) as db:
        yield from db.execute("SELECT id, updated_at FROM posts ORDER BY id")


def test_a_plain_generator_is_walked_once(front: Any) -> None:
    calls: list[int] = []

    def posts() -> Iterator[Entry]:
        calls.append(1)
        yield from dated(60)

    client = front.client(front.build_app({"posts": posts}, feed=True, feed_size=5))
    calls.clear()
    listed = feed_entries(client.get(FEED_PATH).content)
    assert len(listed) == 5
    assert calls == [1]  # one walk, not counted first


@pytest.mark.parametrize("size", [0, 50_001, True, "10"])
def test_a_bad_feed_size_is_refused_at_start(front: Any, size: object) -> None:
    with pytest.raises(Exception, match=r"feed_size|SITEMAP_FEED_SIZE"):
        front.build_app({"posts": dated(3)}, feed=True, feed_size=size)


def test_asgi_async_sources_feed_the_feed() -> None:
    import asgi_sitemap

    from .conftest import asgi_client, hello_asgi_app

    async def posts() -> Any:
        for entry in dated(30):
            yield entry

    class Catalogue:
        """An async sliceable with an async recent(limit)."""

        def __init__(self) -> None:
            self.entries = dated(20, "products", 13)
            self.asked: list[int] = []

        async def count(self) -> int:
            return len(self.entries)

        async def slice(self, start: int, stop: int) -> Any:
            for entry in self.entries[start:stop]:
                yield entry

        async def recent(self, limit: int) -> list[Entry]:
            self.asked.append(limit)
            return newest_first_entries(self.entries, limit)

    catalogue = Catalogue()
    app = asgi_sitemap.SitemapMiddleware(
        hello_asgi_app(), {"posts": posts, "products": catalogue}, feed=True, feed_size=12
    )
    listed = feed_entries(asgi_client(app).get(FEED_PATH).content)
    every = [(e.loc, lastmod_instant(e.lastmod or "")) for e in [*dated(30), *catalogue.entries]]
    assert listed == sorted(every, key=lambda pair: (pair[1], pair[0]), reverse=True)[:12]
    assert catalogue.asked == [12]


def newest_first_entries(entries: list[Entry], limit: int) -> list[Entry]:
    return sorted(entries, key=lambda e: lastmod_instant(e.lastmod or ""), reverse=True)[:limit]
