"""Sources: registration checks, counting, range access and item coercion."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sitemap_core import ConfigurationError, Entry, InvalidEntryError, Sliceable, UrlSource
from tests.core.helpers import RecordingSlice, get, locs, make_site, url


class CountingFactory:
    """A generator function that records how often it is called and how far it is read."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.calls = 0
        self.yielded = 0

    def __call__(self) -> Iterator[str]:
        self.calls += 1
        for i in range(self.n):
            self.yielded += 1
            yield url(i)


def _flat(source: UrlSource, start: int, stop: int, size: int = 256) -> list[str]:
    return [e.loc for batch in source.batches(start, stop, size) for e in batch]


# --------------------------------------------------------------------------- sliceable


def test_list_is_counted_with_len_and_sliced() -> None:
    items = [url(i) for i in range(25)]
    source = UrlSource.from_object("posts", items)
    assert source.count() == 25
    assert _flat(source, 10, 20) == items[10:20]
    assert _flat(source, 20, 25) == items[20:25]


def test_sliceable_serves_a_range_with_one_getitem_call() -> None:
    fake = RecordingSlice(10_000)
    assert isinstance(fake, Sliceable)
    source = UrlSource.from_object("posts", fake)
    assert source.count() == 10_000
    assert fake.len_calls == 1
    got = _flat(source, 5_000, 6_000, size=256)
    assert got == [url(i) for i in range(5_000, 6_000)]
    assert fake.slices == [slice(5_000, 6_000)]


def test_page_n_of_a_sliceable_touches_only_page_n() -> None:
    fake = RecordingSlice(35)
    site = make_site([UrlSource.from_object("posts", fake)], page_size=10)
    got = get(site, "/sitemap-posts-3.xml")
    assert got is not None and got.status == 200
    assert locs(got.body) == [url(i) for i in range(20, 30)]
    assert fake.slices == [slice(20, 30)]
    assert fake.len_calls == 1


def test_index_of_a_sliceable_counts_without_touching_entries() -> None:
    fake = RecordingSlice(35)
    site = make_site([UrlSource.from_object("posts", fake)], page_size=10)
    got = get(site, "/sitemap.xml")
    assert got is not None and got.status == 200
    assert len(locs(got.body)) == 4
    assert fake.slices == []
    assert fake.len_calls == 1


def test_count_callable_overrides_len() -> None:
    fake = RecordingSlice(100)
    source = UrlSource.from_object("posts", fake, count=lambda: 42)
    assert source.count() == 42
    assert fake.len_calls == 0


def test_sliceable_giving_more_than_asked_is_cut() -> None:
    class Sloppy:
        def __len__(self) -> int:
            return 100

        def __getitem__(self, index: slice) -> list[str]:
            return [url(i) for i in range(100)]  # ignores the slice

    source = UrlSource.from_object("posts", Sloppy())
    assert _flat(source, 10, 15) == [url(i) for i in range(5)]
    assert sum(len(b) for b in source.batches(0, 7, size=3)) == 7
    assert [len(b) for b in source.batches(0, 7, size=3)] == [3, 3, 1]


# --------------------------------------------------------------------------- callables


def test_generator_function_is_counted_by_walking() -> None:
    factory = CountingFactory(23)
    source = UrlSource.from_object("posts", factory)
    assert source.count() == 23
    assert (factory.calls, factory.yielded) == (1, 23)


def test_generator_function_is_sliced_by_skipping() -> None:
    factory = CountingFactory(100)
    source = UrlSource.from_object("posts", factory)
    assert _flat(source, 30, 40) == [url(i) for i in range(30, 40)]
    assert factory.calls == 1
    # it skipped the first 30 and stopped reading after the 40th
    assert factory.yielded == 40


def test_generator_page_n_via_site() -> None:
    factory = CountingFactory(25)
    site = make_site({"posts": factory}, page_size=10)
    got = get(site, "/sitemap-posts-2.xml")
    assert got is not None and got.status == 200
    assert locs(got.body) == [url(i) for i in range(10, 20)]


def test_count_callable_is_used_instead_of_walking() -> None:
    factory = CountingFactory(25)
    counted: list[int] = []

    def count() -> int:
        counted.append(1)
        return 25

    site = make_site([UrlSource.from_object("posts", factory, count=count)], page_size=10)
    got = get(site, "/sitemap.xml")
    assert got is not None and got.status == 200
    assert len(locs(got.body)) == 3
    assert counted == [1]
    assert factory.calls == 0  # the index never read an entry


def test_callable_returning_a_list_is_sliced() -> None:
    items = [url(i) for i in range(10)]
    source = UrlSource.from_object("posts", lambda: items)
    assert source.count() == 10
    assert _flat(source, 3, 6) == items[3:6]


def test_infinite_generator_gives_only_the_range() -> None:
    def forever() -> Iterator[str]:
        i = 0
        while True:
            yield url(i)
            i += 1

    source = UrlSource.from_object("posts", forever, count=lambda: 10)
    assert _flat(source, 0, 10, size=4) == [url(i) for i in range(10)]
    assert [len(b) for b in source.batches(2, 9, size=4)] == [4, 3]


def test_batches_are_at_most_size() -> None:
    source = UrlSource.from_object("posts", [url(i) for i in range(1000)])
    sizes = [len(b) for b in source.batches(0, 1000, size=256)]
    assert sizes == [256, 256, 256, 232]
    assert list(source.batches(5, 5)) == []


# --------------------------------------------------------------------------- registration


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param((url(i) for i in range(3)), id="generator-object"),
        pytest.param(iter([url(0)]), id="list-iterator"),
        pytest.param(map(str, [url(0)]), id="map-object"),
    ],
)
def test_iterator_is_refused_at_registration(obj: Any) -> None:
    with pytest.raises(ConfigurationError, match="iterator, which can be read only once"):
        UrlSource.from_object("posts", obj)


@pytest.mark.parametrize(
    "obj", [42, None, object(), url(0), b"https://example.com/", {url(0)}, 1.5]
)
def test_non_callable_is_refused_at_registration(obj: Any) -> None:
    with pytest.raises(ConfigurationError, match="'posts'") as info:
        UrlSource.from_object("posts", obj)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("name", ["posts", "a", "0", "my_posts-2", "x" * 64, "2024"])
def test_good_names(name: str) -> None:
    assert UrlSource.from_object(name, []).name == name


@pytest.mark.parametrize(
    "name", ["Posts", "POSTS", "my posts", "", "x" * 65, "-posts", "_posts", "posts\n", "pösts"]
)
def test_bad_names_are_refused(name: str) -> None:
    with pytest.raises(ConfigurationError, match="lower-case") as info:
        UrlSource.from_object(name, [url(0)])
    assert repr(name) in str(info.value)


def test_count_must_be_callable() -> None:
    with pytest.raises(ConfigurationError, match="count="):
        UrlSource.from_object("posts", [], count=5)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [-1, "3", 2.0, True, None])
def test_count_must_return_a_whole_number(bad: Any) -> None:
    source = UrlSource.from_object("posts", [], count=lambda: bad)
    with pytest.raises(ConfigurationError, match="'posts'"):
        source.count()


# --------------------------------------------------------------------------- items


def test_items_may_be_str_or_entry() -> None:
    entry = Entry(url(1), lastmod="2024-03-10")

    class Sub(Entry):
        __slots__ = ()

    sub = Sub(url(2))
    source = UrlSource.from_object("posts", [url(0), entry, sub, "HTTPS://EXAMPLE.COM/x"])
    (batch,) = source.batches(0, 4)
    assert batch[0] == Entry(url(0))
    assert batch[1] is entry
    assert batch[2] is sub
    assert batch[3].loc == "https://example.com/x"
    assert all(isinstance(e, Entry) for e in batch)


@pytest.mark.parametrize(
    "item",
    # Tuples are rows (tests/core/model/test_rows.py; a fifth field holds the images): only
    # those of 0 or 6+ fields are refused.
    [
        42,
        None,
        b"https://example.com/",
        (),
        (url(0), None, None, None, None, None),
        {"loc": url(0)},
    ],
)
def test_other_items_raise_naming_the_source(item: Any) -> None:
    source = UrlSource.from_object("posts", [url(0), item])
    with pytest.raises(InvalidEntryError) as info:
        list(source.batches(0, 2))
    assert info.value.source == "posts"
    assert info.value.field == "item"
    assert info.value.value is item
    assert "'posts'" in str(info.value)


def test_bad_url_string_error_names_the_source() -> None:
    source = UrlSource.from_object("news", lambda: [url(0), "ftp://example.com/x"])
    with pytest.raises(InvalidEntryError) as info:
        list(source.batches(0, 2))
    assert info.value.source == "news"
    assert info.value.field == "loc"
    assert info.value.value == "ftp://example.com/x"
    assert "from source 'news'" in str(info.value)
