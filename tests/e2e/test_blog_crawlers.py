"""Independent sitemap consumers crawl the example blog from its robots.txt.

``ultimate-sitemap-parser`` and Scrapy's sitemap utilities (see ``tests/crawlers.py``)
must find exactly the 120,011 pages the example publishes: no page missing, none
extra, none twice.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

import httpx
import pytest
from crawlers import scrapy_page_urls, usp_page_urls

from .servers import POST_COUNT, GunicornServer, expected_page_urls, page_urls

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
    blog_server: GunicornServer, crawl: Callable[[str], list[str]]
) -> None:
    started = time.perf_counter()
    found = crawl(blog_server.homepage)
    elapsed = time.perf_counter() - started
    print(f"\n{crawl.__name__}: {len(found)} URLs in {elapsed:.2f} s")

    expected = expected_page_urls(blog_server.base_url)
    assert len(expected) == POST_COUNT + 11
    assert len(found) == len(expected), _difference(found, expected)
    assert set(found) == set(expected), _difference(found, expected)


def test_listed_pages_exist(blog_server: GunicornServer, http: httpx.Client) -> None:
    """A sample of the listed URLs really are pages of the site (no 404s)."""
    base = blog_server.base_url
    sample = [*page_urls(base), *(f"{base}/posts/{n}" for n in (1, 50_000, 50_001, POST_COUNT))]
    for url in sample:
        assert http.get(url).status_code == 200, url
    assert http.get(f"{base}/posts/{POST_COUNT + 1}").status_code == 404
