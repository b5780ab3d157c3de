"""Independent sitemap consumers crawl every example site from its robots.txt.

``ultimate-sitemap-parser`` and Scrapy's sitemap utilities (see ``tests/crawlers.py``)
must find exactly the pages each example publishes (its fixed pages and every row of
its item table): no page missing, none extra, none twice, but for the feed of recent
changes robots.txt lists too, whose URLs a crawler that reads feeds counts again. Both
ask for gzip (requests' and httpx's default Accept-Encoding), and the servers send it:
the crawls read gzipped responses, as the crawlers in the wild do.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

import httpx
import pytest
import requests
from crawlers import scrapy_page_urls, usp_page_urls
from lxml import etree

from .sites import PAGE_SIZE, ServedExample

CRAWLERS = pytest.mark.parametrize(
    "crawl", [usp_page_urls, scrapy_page_urls], ids=["usp", "scrapy"]
)


def _difference(found: list[str], expected: list[str]) -> str:
    found_set, expected_set = set(found), set(expected)
    missing = sorted(expected_set - found_set)
    extra = sorted(found_set - expected_set)
    repeated = sorted(url for url, n in Counter(found).items() if n > 1)
    return (
        f"found {len(found)} URLs ({len(found_set)} distinct), expected {len(expected)};"
        f" {len(missing)} missing, e.g. {missing[:5]}; {len(extra)} unexpected,"
        f" e.g. {extra[:5]}; {len(repeated)} repeated, e.g. {repeated[:5]}"
    )


@CRAWLERS
def test_crawler_finds_exactly_the_published_pages(
    served: ServedExample, crawl: Callable[[str], list[str]]
) -> None:
    started = time.perf_counter()
    found = crawl(served.homepage)
    elapsed = time.perf_counter() - started
    print(f"\n{served.site.name} {crawl.__name__}: {len(found)} URLs in {elapsed:.2f} s")

    expected = served.expected_urls()
    assert len(expected) == served.site.item_count + len(served.site.page_paths)
    # robots.txt also lists the feed of recent changes, which a crawler that reads
    # feeds as sitemaps (usp does) counts once more: exactly its URLs, nothing else.
    feed = _feed_urls(served)
    assert feed and set(feed) <= set(expected)
    once_more = Counter(found) - Counter(expected)
    assert once_more in (Counter(), Counter(feed)), _difference(found, expected)
    assert not Counter(expected) - Counter(found), _difference(found, expected)


def _feed_urls(served: ServedExample) -> list[str]:
    response = httpx.get(served.url("/sitemap-recent.atom"), trust_env=False)
    assert response.status_code == 200
    root = etree.fromstring(response.content)
    atom = "{http://www.w3.org/2005/Atom}"
    return [link.get("href") or "" for link in root.iterfind(f"{atom}entry/{atom}link")]


def test_listed_pages_exist(served: ServedExample, http: httpx.Client) -> None:
    """A sample of the listed URLs really are pages of the site (no 404s)."""
    ids = served.item_ids
    sample = [
        *served.page_urls(),
        *(served.item_url(ids[i]) for i in (0, PAGE_SIZE - 1, PAGE_SIZE, len(ids) - 1)),
    ]
    for url in sample:
        assert http.get(url).status_code == 200, url
    assert http.get(served.item_url(ids[-1] + 1)).status_code == 404


def test_crawlers_are_sent_gzip(served: ServedExample, http: httpx.Client) -> None:
    # The crawls above find every URL; this shows they did so from gzipped responses:
    # what each crawler's HTTP client asks for is answered with gzip.
    asked = {
        "usp (requests)": requests.Session().headers["Accept-Encoding"],
        "scrapy adapter (httpx)": httpx.Client().headers["Accept-Encoding"],
    }
    for crawler, accept in asked.items():
        assert isinstance(accept, str)
        for path in ("/sitemap.xml", *served.site.xml_pages):
            head = http.head(served.url(path), headers={"Accept-Encoding": accept})
            assert head.headers.get("content-encoding") == "gzip", (crawler, accept, path)
