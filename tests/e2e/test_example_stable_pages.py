"""The Flask example's posts keep their pages: one write changes one page, from outside.

The example runs under gunicorn (two workers, so that answers come from either)
with 1,000 URLs per page (``FLASK_SITEMAP_PAGE_SIZE=1000``): 120 pages of posts. Each
write below is committed to its SQLite file by another process, as the app's own
editor would; then every page of posts is fetched again over HTTP.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import httpx
import pytest
from lxml import etree
from xsd import validate

from .servers import EXAMPLES_ROOT, HTTP_TIMEOUT, GunicornServer, run_gunicorn

PAGE = 1_000
NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}


@pytest.fixture(scope="module")
def blog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GunicornServer, Path]]:
    folder = tmp_path_factory.mktemp("stable-pages")
    database = folder / "blog.db"
    env = {"BLOG_DATABASE": str(database), "FLASK_SITEMAP_PAGE_SIZE": str(PAGE)}
    with run_gunicorn(
        "app:app", EXAMPLES_ROOT / "flask_blog", folder, workers=2, env=env
    ) as server:
        yield server, database


def posts_pages(client: httpx.Client) -> tuple[dict[str, str | None], dict[str, str]]:
    """The index's posts children (path -> lastmod) and each one's ETag."""
    response = client.get("/sitemap.xml")
    assert response.status_code == 200
    validate(response.content)
    index = {
        httpx.URL(str(child.findtext("sm:loc", namespaces=NS))).path: child.findtext(
            "sm:lastmod", namespaces=NS
        )
        for child in etree.fromstring(response.content).iterfind("sm:sitemap", NS)
    }
    index = {path: lastmod for path, lastmod in index.items() if "-posts-" in path}
    tags = {}
    for path in index:
        page = client.head(path)
        assert page.status_code == 200, path
        tags[path] = page.headers["ETag"]
    return index, tags


def write(database: Path, sql: str) -> None:
    with closing(sqlite3.connect(database)) as db, db:
        db.execute(sql)


@pytest.mark.parametrize(
    ("sql", "page"),
    [
        ("DELETE FROM posts WHERE id = 1234", 2),
        ("UPDATE posts SET title = 'Edited' WHERE id = 56789", 57),
        (
            "INSERT INTO posts VALUES (1234, 'Back again', 'flask', '2026-11-27T00:00:00+00:00')",
            2,
        ),
    ],
    ids=["delete", "update", "insert"],
)
def test_one_write_changes_one_page_and_its_lastmod(
    blog: tuple[GunicornServer, Path], sql: str, page: int
) -> None:
    server, database = blog
    with httpx.Client(base_url=server.base_url, timeout=HTTP_TIMEOUT) as client:
        index, tags = posts_pages(client)
        assert len(index) == 120
        write(database, sql)
        index_after, tags_after = posts_pages(client)
    changed = f"/sitemap-posts-{page}.xml"
    assert [path for path in tags if tags[path] != tags_after[path]] == [changed]
    assert [path for path in index if index[path] != index_after[path]] == [changed]


def test_a_page_emptied_answers_404_and_the_others_keep_serving(
    blog: tuple[GunicornServer, Path],
) -> None:
    server, database = blog
    write(database, "DELETE FROM posts WHERE id BETWEEN 3001 AND 4000")
    with httpx.Client(base_url=server.base_url, timeout=HTTP_TIMEOUT) as client:
        assert client.get("/sitemap-posts-4.xml").status_code == 404
        index, _ = posts_pages(client)
        assert "/sitemap-posts-4.xml" not in index and len(index) == 119
        fifth = client.get("/sitemap-posts-5.xml")
        assert fifth.status_code == 200
        assert b"/posts/4001</loc>" in fifth.content
