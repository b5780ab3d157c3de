"""Issue 13 on the running examples: the feed of recent changes and the IndexNow key.

Each example serves ``/sitemap-recent.atom`` from its real server (gunicorn or
uvicorn): a valid Atom 1.0 document (RFC 4287's grammar and prose rules), read
without complaint by feedparser, newest first, whose every URL the sitemap lists with
the same lastmod; and its IndexNow key at ``/<key>.txt``, the key the example keeps
beside its database.
"""

from __future__ import annotations

from datetime import UTC

import httpx
from atom import check_atom_rules, check_newest_first, read_feed, validate_atom
from lxml import etree

from .sites import ServedExample

NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}


def sitemap_lastmods(served: ServedExample, http: httpx.Client) -> dict[str, str]:
    """Every URL of the example's sitemap with its lastmod, children of the index read."""
    found: dict[str, str] = {}
    index = etree.fromstring(http.get(served.url("/sitemap.xml")).content)
    for child in index.iterfind("sm:sitemap/sm:loc", NS):
        assert child.text
        page = etree.fromstring(http.get(child.text).content)
        for url in page.iterfind("sm:url", NS):
            loc, lastmod = (
                url.findtext("sm:loc", namespaces=NS),
                url.findtext("sm:lastmod", namespaces=NS),
            )
            if loc and lastmod:
                found[loc] = lastmod
    return found


def test_the_feed_is_valid_atom_and_agrees_with_the_sitemap(
    served: ServedExample, http: httpx.Client
) -> None:
    response = http.get(served.url("/sitemap-recent.atom"))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/atom+xml; charset=utf-8"
    document = response.content
    validate_atom(document)
    check_atom_rules(document)
    check_newest_first(document)
    feed = read_feed(document, response.headers["content-type"])
    assert feed.self_link == served.url("/sitemap-recent.atom")
    assert len(feed.entries) == 1_000  # the default size; every example has more dated URLs
    lastmods = sitemap_lastmods(served, http)
    for entry in feed.entries:
        assert entry.link in lastmods, entry.link
        from datetime import datetime

        listed = datetime.fromisoformat(lastmods[entry.link].replace("Z", "+00:00"))
        # feedparser keeps whole seconds: compare to the second, in UTC.
        assert entry.updated == listed.astimezone(UTC).replace(microsecond=0), entry.link
    etag = response.headers["etag"]
    again = http.get(served.url("/sitemap-recent.atom"), headers={"If-None-Match": etag})
    assert again.status_code == 304


def test_the_indexnow_key_file_is_served(served: ServedExample, http: httpx.Client) -> None:
    key_file = served.database.with_name(f"{served.database.stem}-indexnow.key")
    key = key_file.read_text().strip()
    response = http.get(served.url(f"/{key}.txt"))
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert response.text == key
