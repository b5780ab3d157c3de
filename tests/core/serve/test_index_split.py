"""The sitemap index split into parts above ``index_size`` children (sitemap_core only).

``/sitemap.xml`` is part 1 and ``/sitemap-index-N.xml`` part N; robots.txt lists them
all. These tests check the paths, that the parts partition the child pages exactly,
that a part never passes 50 MiB even for a very long base URL, and the reserved name.
"""

from __future__ import annotations

import gzip
import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xsd import SITEMAPINDEX_TAG, validate

from sitemap_core import (
    BaseURL,
    ConfigurationError,
    Entry,
    Site,
    Target,
    UrlSource,
)
from sitemap_core.limits import MAX_SITEMAP_BYTES, MAX_SITEMAPS_PER_INDEX, MAX_URL_LENGTH
from sitemap_core.model.hosts import MAX_BASE_URL_LENGTH
from sitemap_core.serve.site import index_part_path
from sitemap_core.sources.aio import AsyncUrlSource
from sitemap_core.sources.base import Limits, check_name
from sitemap_core.write.encoders import IndexEncoder
from sitemap_core.write.robots import sitemap_urls
from tests.core.helpers import BASE, ORIGIN, get, locs, parse, url

# -- helpers ---------------------------------------------------------------------------


def counted(name: str, n: int, page_size: int | None = None, **limits: Any) -> UrlSource:
    """A source of ``n`` URLs under its own name, with optional per-source limits."""
    return UrlSource(
        name,
        lambda: n,
        lambda start, stop: [url(i, name) for i in range(start, min(stop, n))],
        limits=Limits(page_size, **limits),
    )


def site_of(
    counts: dict[str, int],
    *,
    page_size: int,
    index_size: int,
    source_page_sizes: dict[str, int] | None = None,
) -> Site[UrlSource]:
    sizes = source_page_sizes or {}
    sources = [counted(name, n, sizes.get(name)) for name, n in counts.items()]
    return Site(sources, page_size=page_size, index_size=index_size)


def expected_children(
    site: Site[UrlSource], counts: dict[str, int], base: BaseURL = BASE
) -> list[tuple[str, int, int, str]]:
    """Every child page, worked out here independently: source order, then page order."""
    children = []
    for name, n in counts.items():
        limits = site.sources[name].limits
        size = site.entries_per_page(name)
        if limits.max_entry_bytes is None:
            assert size == min(site.page_size, limits.page_size or site.page_size)
        for number, start in enumerate(range(0, n, size), start=1):
            children.append(
                (name, start, min(start + size, n), f"{base.url}/sitemap-{name}-{number}.xml")
            )
    return children


def plan_parts(
    site: Site[UrlSource], counts: dict[str, int], base: BaseURL = BASE
) -> list[list[tuple[str, int, int, str]]]:
    """The child ranges of each part the plan gives, from part 1 until a 404."""
    parts = []
    number = 1
    while True:
        target = Target("root") if number == 1 else Target("index", page=number)
        plan = site.plan(target, counts, base)
        if plan is None:
            break
        assert plan.kind == "index", (number, plan.kind)
        parts.append([(s.name, start, stop, loc) for s, start, stop, loc in plan.child_ranges])
        number += 1
        assert number < 10_000, "the plan never ends"
    return parts


def check_partition(
    site: Site[UrlSource], counts: dict[str, int], base: BaseURL = BASE
) -> list[list[tuple[str, int, int, str]]]:
    """Assert the parts hold every child once, in order, ``capacity`` per full part."""
    parts = plan_parts(site, counts, base)
    capacity = site.index_capacity(base)
    flat = [child for part in parts for child in part]
    assert flat == expected_children(site, counts, base)
    assert all(len(part) == capacity for part in parts[:-1])
    assert 1 <= len(parts[-1]) <= capacity
    assert len(parts) == site.index_parts(counts, base)
    # Every entry of every source is in exactly one child page.
    covered: Counter[tuple[str, int]] = Counter()
    for name, start, stop, _ in flat:
        assert start < stop
        covered.update((name, i) for i in range(start, stop))
    assert covered == Counter((name, i) for name, n in counts.items() for i in range(n))
    # The part after the last is nothing.
    assert site.plan(Target("index", page=len(parts) + 1), counts, base) is None
    return parts


# -- paths -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "target"),
    [
        ("/sitemap-index-2.xml", Target("index", page=2)),
        ("/sitemap-index-9.xml", Target("index", page=9)),
        ("/sitemap-index-10.xml", Target("index", page=10)),
        ("/sitemap-index-123.xml", Target("index", page=123)),
        ("/sitemap-index-2.xml.gz", Target("index", page=2, gz=True)),
        (f"/sitemap-index-{'9' * 18}.xml", Target("index", page=int("9" * 18))),
    ],
)
def test_match_index_parts(path: str, target: Target) -> None:
    assert Site([]).match(path) == target
    assert target.path == path.removesuffix(".gz")


def test_part_paths() -> None:
    assert index_part_path(1) == "/sitemap.xml"
    assert index_part_path(2) == "/sitemap-index-2.xml"
    assert index_part_path(17) == "/sitemap-index-17.xml"


BAD_PART_PATHS = [
    "/sitemap-index-1.xml",  # part 1 is /sitemap.xml
    "/sitemap-index-1.xml.gz",
    "/sitemap-index-0.xml",
    "/sitemap-index-02.xml",
    "/sitemap-index-002.xml",
    "/sitemap-index--2.xml",
    "/sitemap-index-+2.xml",
    "/sitemap-index-2.0.xml",
    "/sitemap-index-x.xml",
    "/sitemap-index-.xml",
    "/sitemap-index.xml",
    "/sitemap-index-2",
    "/sitemap-index-2.XML",
    "/sitemap-index-2.xml/",
    "/sitemap-index-2.xml.gz.gz",
    "/sitemap-index-2.txt",  # text sitemaps have no index form
    "/sitemap-index-2.txt.gz",
    "/Sitemap-index-2.xml",
    f"/sitemap-index-{'9' * 19}.xml",
    f"/sitemap-index-{'1' * 1000}.xml",
]


@pytest.mark.parametrize("path", BAD_PART_PATHS)
def test_bad_part_paths_are_never_a_part(path: str) -> None:
    # Whatever the matcher makes of it, the answer on a split site is "not here".
    site = site_of({"posts": 40}, page_size=2, index_size=3)  # 20 children, 7 parts
    assert site.index_parts({"posts": 40}, BASE) == 7
    target = site.match(path)
    assert target is None or target.kind != "index"
    got = get(site, path)
    assert got is None or got.status == 404


@pytest.mark.parametrize("path", ["/sitemap-index-8.xml", "/sitemap-index-8.xml.gz"])
def test_the_part_after_the_last_is_404(path: str) -> None:
    site = site_of({"posts": 40}, page_size=2, index_size=3)
    got = get(site, path)
    assert got is not None and got.status == 404
    last = get(site, "/sitemap-index-7.xml")
    assert last is not None and last.status == 200
    assert len(locs(last.body)) == 2  # 20 children: 6 parts of 3, then 2


@pytest.mark.parametrize(
    ("counts", "page_size"),
    [
        ({"posts": 5}, 10),  # one urlset, no index at all
        ({"posts": 30}, 10),  # an index of 3 children, one part
        ({"posts": 0}, 10),  # nothing at all
    ],
)
def test_no_parts_when_the_site_is_not_split(counts: dict[str, int], page_size: int) -> None:
    site = site_of(counts, page_size=page_size, index_size=3)
    assert site.index_parts(counts, BASE) == 1
    for number in (2, 3):
        assert site.plan(Target("index", page=number), counts, BASE) is None
        got = get(site, f"/sitemap-index-{number}.xml")
        assert got is not None and got.status == 404


def test_text_root_of_a_split_site_is_404() -> None:
    site = site_of({"posts": 40}, page_size=2, index_size=3)
    got = get(site, "/sitemap.txt")
    assert got is not None and got.status == 404


# -- index_size ------------------------------------------------------------------------


@pytest.mark.parametrize("index_size", [0, -1, MAX_SITEMAPS_PER_INDEX + 1, 1.5, "3", True, None])
def test_index_size_out_of_range(index_size: Any) -> None:
    with pytest.raises(ConfigurationError, match="index size"):
        Site([], index_size=index_size)


@pytest.mark.parametrize("index_size", [1, 2, MAX_SITEMAPS_PER_INDEX])
def test_index_size_in_range(index_size: int) -> None:
    assert Site([], index_size=index_size).index_capacity(BASE) == index_size


def test_default_index_size_is_the_protocol_limit() -> None:
    assert Site([]).index_size == MAX_SITEMAPS_PER_INDEX == 50_000


# -- the plan partitions the children --------------------------------------------------


@pytest.mark.parametrize(
    ("counts", "page_size", "index_size", "source_sizes", "parts"),
    [
        # 20 children of one source: 7 parts of 3, 3, 3, 3, 3, 3, 2.
        ({"posts": 40}, 2, 3, None, 7),
        # Exactly full parts: 12 children, 4 parts of 3.
        ({"posts": 24}, 2, 3, None, 4),
        # One child past a full part.
        ({"posts": 25}, 2, 3, None, 5),
        # Several sources, ragged last pages: 4 + 5 + 2 = 11 children, parts 3/3/3/2.
        ({"pages": 7, "posts": 9, "tags": 4}, 2, 3, None, 4),
        # An empty source in the middle contributes no child.
        ({"pages": 7, "empty": 0, "posts": 9}, 2, 3, None, 3),
        # One child per part.
        ({"a": 3, "b": 2}, 1, 1, None, 5),
        # A source with its own smaller page size: 5 + 3 children.
        ({"big": 30, "small": 3}, 10, 2, {"big": 6, "small": 1}, 4),
        # Parts bigger than the number of children of any one source.
        ({"a": 5, "b": 5, "c": 5, "d": 5}, 1, 7, None, 3),
        # index_size 1 and page_size 1: every entry is its own part.
        ({"a": 4}, 1, 1, None, 4),
    ],
)
def test_plan_partitions_the_children(
    counts: dict[str, int],
    page_size: int,
    index_size: int,
    source_sizes: dict[str, int] | None,
    parts: int,
) -> None:
    site = site_of(
        counts, page_size=page_size, index_size=index_size, source_page_sizes=source_sizes
    )
    found = check_partition(site, counts)
    assert len(found) == parts


def test_a_source_sized_by_bytes_splits_like_any_other() -> None:
    # max_entry_bytes of half the byte limit leaves one entry per page.
    sources = [
        counted("heavy", 5, max_entry_bytes=MAX_SITEMAP_BYTES // 2),
        counted("light", 4),
    ]
    site = Site(sources, page_size=2, index_size=3)
    counts = {"heavy": 5, "light": 4}
    assert site.entries_per_page("heavy") == 1
    parts = check_partition(site, counts)
    assert [len(part) for part in parts] == [3, 3, 1]  # 5 + 2 children
    assert parts[1][:2] == [
        ("heavy", 3, 4, f"{ORIGIN}/sitemap-heavy-4.xml"),
        ("heavy", 4, 5, f"{ORIGIN}/sitemap-heavy-5.xml"),
    ]


def test_the_index_is_split_exactly_above_index_size() -> None:
    site = site_of({"posts": 60}, page_size=10, index_size=6)  # 6 children: one part
    assert site.index_parts({"posts": 60}, BASE) == 1
    assert len(plan_parts(site, {"posts": 60})) == 1
    assert site.index_parts({"posts": 61}, BASE) == 2  # 7 children
    assert [len(p) for p in check_partition(site, {"posts": 61})] == [6, 1]


@settings(max_examples=150, deadline=None)
@given(
    counts=st.lists(st.integers(0, 40), min_size=1, max_size=4),
    source_sizes=st.lists(st.none() | st.integers(1, 7), min_size=4, max_size=4),
    page_size=st.integers(1, 8),
    index_size=st.integers(1, 8),
)
def test_plan_partition_property(
    counts: list[int], source_sizes: list[int | None], page_size: int, index_size: int
) -> None:
    by_name = {f"s{i}": n for i, n in enumerate(counts)}
    sizes = {f"s{i}": size for i, size in enumerate(source_sizes) if size is not None}
    site = site_of(by_name, page_size=page_size, index_size=index_size, source_page_sizes=sizes)
    parts = site.index_parts(by_name, BASE)
    root = site.plan(Target("root"), by_name, BASE)
    if sum(counts) == 0:
        assert root is None and parts == 1
    elif root is not None and root.kind == "urlset":
        # Everything fits one urlset: there are no parts to list.
        assert parts == 1
        assert site.plan(Target("index", page=2), by_name, BASE) is None
    else:
        found = check_partition(site, by_name)
        assert parts == len(found) == -(-len(expected_children(site, by_name)) // index_size)
    assert sitemap_urls(BASE, parts) == [f"{ORIGIN}/sitemap.xml"] + [
        f"{ORIGIN}/sitemap-index-{n}.xml" for n in range(2, parts + 1)
    ]


# -- the served parts ------------------------------------------------------------------


def test_served_parts_are_valid_indexes_that_partition_the_pages() -> None:
    counts = {"pages": 7, "posts": 9, "tags": 4}
    site = site_of(counts, page_size=2, index_size=3)
    children: list[str] = []
    for number in range(1, 5):
        got = get(site, index_part_path(number))
        assert got is not None and got.status == 200, number
        validate(got.body)
        assert parse(got.body).tag == SITEMAPINDEX_TAG
        children += locs(got.body)
    assert children == [loc for *_, loc in expected_children(site, counts)]
    entries: list[str] = []
    for child in children:
        got = get(site, child.removeprefix(ORIGIN))
        assert got is not None and got.status == 200, child
        validate(got.body)
        entries += locs(got.body)
    assert entries == [url(i, name) for name, n in counts.items() for i in range(n)]


def test_gzip_part_is_the_gzipped_part() -> None:
    site = site_of({"posts": 40}, page_size=2, index_size=3)
    plain = get(site, "/sitemap-index-3.xml")
    packed = get(site, "/sitemap-index-3.xml.gz")
    assert plain is not None and packed is not None
    assert packed.status == 200
    assert packed.header("Content-Type") == "application/gzip"
    assert gzip.decompress(packed.body) == plain.body
    assert locs(plain.body) == [f"{ORIGIN}/sitemap-posts-{n}.xml" for n in (7, 8, 9)]


# -- a very long base URL --------------------------------------------------------------


@dataclass(frozen=True)
class Child:
    """What IndexEncoder reads of a child: loc and lastmod (no URL checks, worst case)."""

    loc: str
    lastmod: str | None


#: The longest lastmod text the library writes (microseconds and an offset).
LONGEST_LASTMOD = "2024-12-31T23:59:59.999999+14:00"
#: The longest child path: a 64-character source name and an 18-digit page.
LONGEST_CHILD_PATH = f"/sitemap-{'x' * 64}-{'9' * 18}.xml"


def long_base(length: int, filler: str = "a") -> BaseURL:
    """A base URL of ``length`` characters whose path repeats ``filler``."""
    origin = "https://example.com/"
    path = (filler * length)[: length - len(origin)]
    base = BaseURL.parse(origin + path)
    assert len(base.url) == length
    return base


def worst_part_bytes(base: BaseURL, capacity: int) -> int:
    """The size of a part of ``capacity`` children, each the longest the base can give."""
    element = IndexEncoder().render(  # type: ignore[list-item]
        [Child(base.join(LONGEST_CHILD_PATH), LONGEST_LASTMOD)]
    )
    return len(IndexEncoder.head) + capacity * len(element.encode()) + len(IndexEncoder.tail)


def test_longest_lastmod_is_what_the_library_writes() -> None:
    assert Entry(url(1), lastmod=LONGEST_LASTMOD).lastmod == LONGEST_LASTMOD


@pytest.mark.parametrize(
    ("length", "filler"),
    [
        (30, "a"),
        (900, "a"),
        (1_200, "a"),
        (MAX_BASE_URL_LENGTH, "a"),
        # '&' is written '&amp;': five bytes in the document for one in the URL.
        (MAX_BASE_URL_LENGTH, "&"),
        (MAX_BASE_URL_LENGTH, "a'"),
    ],
)
def test_a_full_part_stays_under_50_mib(length: int, filler: str) -> None:
    base = long_base(length, filler)
    site = Site([], index_size=MAX_SITEMAPS_PER_INDEX)
    capacity = site.index_capacity(base)
    assert 1 <= capacity <= MAX_SITEMAPS_PER_INDEX
    assert worst_part_bytes(base, capacity) <= MAX_SITEMAP_BYTES
    if length >= 1_200:
        assert capacity < MAX_SITEMAPS_PER_INDEX  # the byte bound, not the count, rules


def test_a_base_url_too_long_for_its_sitemap_urls_is_refused() -> None:
    # The longest document URL under the longest base is still a valid <loc>.
    longest = long_base(MAX_BASE_URL_LENGTH).join(f"/sitemap-{'x' * 64}-{'9' * 18}.html")
    assert len(longest) == MAX_URL_LENGTH
    assert Entry(longest).loc == longest
    with pytest.raises(ConfigurationError, match="at most 1951"):
        BaseURL.parse("https://example.com/" + "a" * (MAX_BASE_URL_LENGTH - 19))


def test_a_short_base_keeps_the_protocol_count() -> None:
    assert Site([]).index_capacity(BASE) == MAX_SITEMAPS_PER_INDEX
    assert worst_part_bytes(BASE, MAX_SITEMAPS_PER_INDEX) <= MAX_SITEMAP_BYTES


def test_the_capacity_never_exceeds_index_size() -> None:
    base = long_base(MAX_BASE_URL_LENGTH, "&")
    assert Site([], index_size=5).index_capacity(base) == 5


def test_the_encoder_writes_a_full_worst_part() -> None:
    # Not only arithmetic: the real encoder (which refuses to pass 50 MiB) writes a full
    # part of the worst children this base can give.
    base = long_base(MAX_BASE_URL_LENGTH, "&")
    capacity = Site([]).index_capacity(base)
    children = [Child(base.join(LONGEST_CHILD_PATH), LONGEST_LASTMOD)] * capacity
    encoder = IndexEncoder()
    size = 0
    for start in range(0, capacity, 1024):
        size += len(encoder.feed(children[start : start + 1024]))  # type: ignore[arg-type]
    size += len(encoder.close())
    assert size <= MAX_SITEMAP_BYTES
    assert encoder.items == capacity


def test_a_long_base_url_splits_the_served_index_below_index_size() -> None:
    # A 64-character source name, one entry per page: the index of a site whose base
    # URL is long is split into parts that each fit 50 MiB, counted from the site.
    base = long_base(1_900, "&")
    name = "n" * 64
    capacity = Site([]).index_capacity(base)
    assert capacity < MAX_SITEMAPS_PER_INDEX
    total = capacity + 3
    site = Site([counted(name, total)], page_size=1)
    counts = {name: total}
    assert site.index_parts(counts, base) == 2
    plan = site.plan(Target("root"), counts, base)
    assert plan is not None and len(plan.child_ranges) == capacity
    rest = site.plan(Target("index", page=2), counts, base)
    assert rest is not None and len(rest.child_ranges) == 3
    assert rest.child_ranges[-1][3] == base.join(f"/sitemap-{name}-{total}.xml")
    assert site.robots(base, site.index_parts(counts, base)).count("Sitemap: ") == 2
    # Served: part 1 is full, under 50 MiB, and valid.
    got = get(site, "/sitemap.xml", base=lambda: base)
    assert got is not None and got.status == 200
    assert len(got.body) <= MAX_SITEMAP_BYTES
    assert got.body.count(b"<sitemap>") == capacity
    second = get(site, "/sitemap-index-2.xml", base=lambda: base)
    assert second is not None and second.status == 200
    validate(second.body)


# -- robots.txt ------------------------------------------------------------------------


def sitemap_lines(robots: bytes) -> list[str]:
    return [line for line in robots.decode().splitlines() if line.startswith("Sitemap:")]


def test_robots_txt_lists_every_part_in_order() -> None:
    site = site_of({"pages": 7, "posts": 9, "tags": 4}, page_size=2, index_size=3)
    got = get(site, "/robots.txt")
    assert got is not None and got.status == 200
    assert sitemap_lines(got.body) == [
        f"Sitemap: {ORIGIN}/sitemap.xml",
        f"Sitemap: {ORIGIN}/sitemap-index-2.xml",
        f"Sitemap: {ORIGIN}/sitemap-index-3.xml",
        f"Sitemap: {ORIGIN}/sitemap-index-4.xml",
    ]
    # ...and every line it lists is a served index part.
    for line in sitemap_lines(got.body):
        part = get(site, line.removeprefix(f"Sitemap: {ORIGIN}"))
        assert part is not None and part.status == 200


@pytest.mark.parametrize(("counts", "page_size"), [({"posts": 5}, 10), ({"posts": 30}, 10)])
def test_robots_txt_of_an_unsplit_site_lists_one_sitemap(
    counts: dict[str, int], page_size: int
) -> None:
    site = site_of(counts, page_size=page_size, index_size=3)
    got = get(site, "/robots.txt")
    assert got is not None
    assert sitemap_lines(got.body) == [f"Sitemap: {ORIGIN}/sitemap.xml"]


def test_robots_txt_of_an_empty_site_lists_one_sitemap() -> None:
    got = get(site_of({"posts": 0}, page_size=1, index_size=1), "/robots.txt")
    assert got is not None and got.status == 200
    assert sitemap_lines(got.body) == [f"Sitemap: {ORIGIN}/sitemap.xml"]


def test_robots_txt_lists_one_sitemap_when_a_count_fails(caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> int:
        raise RuntimeError("the database is down")

    sources = [
        counted("posts", 40),
        UrlSource("broken", broken, lambda start, stop: []),
    ]
    site = Site(sources, page_size=2, index_size=3)
    with caplog.at_level(logging.ERROR, logger="sitemap_core"):
        got = get(site, "/robots.txt")
    assert got is not None and got.status == 200
    assert sitemap_lines(got.body) == [f"Sitemap: {ORIGIN}/sitemap.xml"]
    assert any("robots.txt" in r.getMessage() for r in caplog.records)


def test_sitemap_urls_and_site_robots() -> None:
    assert sitemap_urls(BASE) == [f"{ORIGIN}/sitemap.xml"]
    assert sitemap_urls(BASE, 1) == [f"{ORIGIN}/sitemap.xml"]
    assert sitemap_urls(BASE, 3) == [
        f"{ORIGIN}/sitemap.xml",
        f"{ORIGIN}/sitemap-index-2.xml",
        f"{ORIGIN}/sitemap-index-3.xml",
    ]
    prefixed = BaseURL.parse("https://example.com/shop")
    assert sitemap_urls(prefixed, 2) == [
        "https://example.com/shop/sitemap.xml",
        "https://example.com/shop/sitemap-index-2.xml",
    ]
    robots = Site([], robots_rules="User-agent: *\nDisallow: /x\n").robots(BASE, 2)
    assert robots.startswith("User-agent: *\nDisallow: /x\n")
    assert robots.endswith(
        f"Sitemap: {ORIGIN}/sitemap.xml\nSitemap: {ORIGIN}/sitemap-index-2.xml\n"
    )


def test_parts_under_a_path_prefix() -> None:
    base = BaseURL.parse("https://example.com/shop")
    sources = [
        UrlSource.from_object("posts", [f"https://example.com/shop/p/{i}" for i in range(9)])
    ]
    site = Site(sources, page_size=2, index_size=2)  # 5 children, 3 parts
    got = get(site, "/robots.txt", base=lambda: base)
    assert got is not None
    assert sitemap_lines(got.body) == [
        "Sitemap: https://example.com/shop/sitemap.xml",
        "Sitemap: https://example.com/shop/sitemap-index-2.xml",
        "Sitemap: https://example.com/shop/sitemap-index-3.xml",
    ]
    part = get(site, "/sitemap-index-3.xml", base=lambda: base)
    assert part is not None and part.status == 200
    assert locs(part.body) == ["https://example.com/shop/sitemap-posts-5.xml"]


# -- the reserved name -----------------------------------------------------------------


def test_index_is_a_reserved_name() -> None:
    with pytest.raises(ConfigurationError, match="reserved"):
        check_name("index")
    with pytest.raises(ConfigurationError, match="reserved"):
        UrlSource.from_object("index", [url(1)])
    with pytest.raises(ConfigurationError, match="reserved"):
        AsyncUrlSource.from_object("index", [url(1)])


@pytest.mark.parametrize("name", ["indexes", "index2", "my-index", "index_", "idx", "0index"])
def test_names_near_index_are_allowed(name: str) -> None:
    assert check_name(name) == name
    site = Site([UrlSource.from_object(name, [url(i) for i in range(3)])], page_size=1)
    got = get(site, f"/sitemap-{name}-2.xml")
    assert got is not None and got.status == 200
    assert locs(got.body) == [url(1)]


def test_a_directly_built_source_named_index_is_refused() -> None:
    # Built without from_object, a source named "index" would have its page 2 shadowed
    # by the index part path /sitemap-index-2.xml: the site refuses it (fixed in cdc0279).
    source = UrlSource("index", lambda: 3, lambda start, stop: [url(i) for i in range(start, stop)])
    with pytest.raises(ConfigurationError, match="reserved"):
        Site([source], page_size=1)


def test_a_directly_built_source_with_a_bad_name_is_refused() -> None:
    with pytest.raises(ConfigurationError):
        Site([UrlSource("Bad Name", lambda: 0, lambda start, stop: [])])


# -- many parts ------------------------------------------------------------------------


def test_many_parts_with_index_size_one() -> None:
    counts = {"posts": 50}
    site = site_of(counts, page_size=1, index_size=1)
    assert site.index_parts(counts, BASE) == 50
    got = get(site, "/robots.txt")
    assert got is not None
    lines = sitemap_lines(got.body)
    assert len(lines) == 50 and len(set(lines)) == 50
    for number in (1, 2, 10, 50):
        part = get(site, index_part_path(number))
        assert part is not None and part.status == 200
        assert locs(part.body) == [f"{ORIGIN}/sitemap-posts-{number}.xml"]
    missing = get(site, "/sitemap-index-51.xml")
    assert missing is not None and missing.status == 404
