"""Issue 23: ``sitemaps_url`` / ``SITEMAP_SITEMAPS_URL`` puts the sitemap files on a CDN.

The protocol lets an index list only sitemaps on its own host, and lets a host's
robots.txt name a sitemap on another host (cross-submission). So with
``sitemaps_url`` the index lists its children there, robots.txt (ours, or the lines
added to the app's own) names the index and the feed there, and the entries stay
under the base URL; the HTML view stays on the app. A new ``sitemaps_url`` gives the
index a new ETag. ``sitemap build`` writes the files to publish there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from xsd import validate

from flask_sitemapper import ConfigurationError
from sitemap_commands.build import ROBOTS_LINES, build
from sitemap_commands.cli import find_served

from .conftest import BASE, FRONTS, Front, url_list

CDN = "https://cdn.example.com/sitemaps"
NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
TEXT = "text/plain; charset=utf-8"


def make(front: Front, sitemaps_url: str | None, app_robots: bytes | None = None) -> Any:
    """An app of ``front`` (25 posts in pages of 10, with the feed) and ``sitemaps_url``."""
    return front.build_app(
        {"posts": url_list(BASE, "posts", 25)},
        10,
        base_url=BASE,
        app_robots=app_robots,
        feed=True,
        sitemaps_url=sitemaps_url,
    )


def get(front: Front, app: Any, path: str) -> Any:
    client = front.client(app)
    try:
        response = client.get(path)
        response.read()
        return response
    finally:
        client.close()


def locs(body: bytes) -> list[str]:
    return [loc.text or "" for loc in etree.fromstring(body).iterfind("sm:*/sm:loc", NS)]


def test_the_index_lists_its_children_on_the_cdn_and_the_entries_stay(front: Front) -> None:
    app = make(front, CDN + "/")  # normalised as a base URL is: no trailing slash
    index = get(front, app, "/sitemap.xml")
    assert index.status_code == 200
    validate(index.content)
    assert locs(index.content) == [f"{CDN}/sitemap-posts-{n}.xml" for n in (1, 2, 3)]
    page = get(front, app, "/sitemap-posts-1.xml")
    assert locs(page.content) == url_list(BASE, "posts", 10)
    # The view for people stays on the app, its links relative.
    view = get(front, app, "/sitemap.html")
    assert view.status_code == 200 and "cdn.example.com" not in view.text


def test_robots_txt_names_the_index_and_the_feed_on_the_cdn(front: Front) -> None:
    ours = get(front, make(front, CDN), "/robots.txt")
    assert ours.text.endswith(
        f"Sitemap: {CDN}/sitemap.xml\nSitemap: {CDN}/sitemap-recent.atom\n"
    ), ours.text
    own = b"User-agent: *\nDisallow: /admin\n"
    merged = get(front, make(front, CDN, app_robots=own), "/robots.txt")
    assert merged.content.startswith(own)
    assert f"Sitemap: {CDN}/sitemap.xml" in merged.text and f"{BASE}/sitemap" not in merged.text


def test_unset_changes_nothing_and_a_new_url_gives_a_new_index_etag(front: Front) -> None:
    plain = get(front, make(front, None), "/sitemap.xml")
    assert locs(plain.content)[0] == f"{BASE}/sitemap-posts-1.xml"
    empty = get(front, make(front, ""), "/sitemap.xml")  # "" is unset, as from the env
    assert empty.content == plain.content and empty.headers["etag"] == plain.headers["etag"]
    moved = get(front, make(front, CDN), "/sitemap.xml")
    other = get(front, make(front, "https://cdn2.example.com"), "/sitemap.xml")
    tags = {plain.headers["etag"], moved.headers["etag"], other.headers["etag"]}
    assert len(tags) == 3


@pytest.mark.parametrize("value", ["ftp://cdn.example.com", "/sitemaps", "https://cdn/?q=1"])
def test_a_bad_url_is_refused_naming_the_setting(front: Front, value: str) -> None:
    name = "SITEMAP_SITEMAPS_URL" if front.name == "flask-extension" else "sitemaps_url="
    with pytest.raises(ConfigurationError, match=name):
        make(front, value)


@pytest.mark.parametrize("name", list(FRONTS))
def test_a_build_writes_the_files_to_publish_on_the_cdn(name: str, tmp_path: Path) -> None:
    front = FRONTS[name]
    served = find_served(make(front, CDN, app_robots=b"User-agent: *\nDisallow: /admin\n"))
    try:
        result = build(served, tmp_path / "out")
    finally:
        served.close()
    files = {path.name: path.read_bytes() for path in (tmp_path / "out").iterdir()}
    assert {f"sitemap-posts-{n}.{ext}" for n in (1, 2, 3) for ext in ("xml", "txt")} <= set(files)
    assert locs(files["sitemap.xml"]) == [f"{CDN}/sitemap-posts-{n}.xml" for n in (1, 2, 3)]
    assert files[ROBOTS_LINES] == (
        f"Sitemap: {CDN}/sitemap.xml\nSitemap: {CDN}/sitemap-recent.atom\n".encode()
    )
    assert result.urls == 25
