"""Route params: the one-loop ``iter_param_entries`` gives what ``param_entries`` gives
item by item, with the same errors, for every shape of item (plain dicts and pairs
take a shortcut past the ABC checks; everything else the general path)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_core import Entry, InvalidEntryError
from sitemap_core.model.rows import entry_from_row
from sitemap_core.sources.params import (
    Languages,
    iter_param_entries,
    param_entries,
    params_fingerprint,
    split_param_item,
)


def build_url(values: Mapping[str, Any]) -> str:
    return "https://example.com/p/" + "/".join(f"{k}-{v}" for k, v in values.items())


GOOD_ITEMS: list[Any] = [
    {"n": 1},
    ({"n": 2}, {"lastmod": "2024-01-02"}),
    ({"n": 3}, {}),
    (OrderedDict(n=4), {"priority": 0.3}),
    (MappingProxyType({"n": 5}), MappingProxyType({"changefreq": "daily"})),
    OrderedDict(n=6),
    ({"n": 7}, {"lastmod": "2024-01-07", "changefreq": "weekly", "priority": 1.0}),
]


def one_by_one(items: list[Any], **kwargs: Any) -> list[Entry]:
    return [entry for item in items for entry in param_entries(item, **kwargs)]


@pytest.mark.parametrize("defaults", [{}, {"changefreq": "monthly"}, {"priority": 0.1}])
@pytest.mark.parametrize("languages", [None, Languages.build("lang", ["en", "fr"], "en", "view")])
def test_iter_param_entries_equals_param_entries(
    defaults: dict[str, Any], languages: Languages | None
) -> None:
    kwargs = {"view": "view", "defaults": defaults, "languages": languages, "build_url": build_url}
    expected = one_by_one(GOOD_ITEMS, **kwargs)
    assert list(iter_param_entries(GOOD_ITEMS, **kwargs)) == expected
    assert len(expected) == len(GOOD_ITEMS) * (1 if languages is None else 2)


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (({"n": 1}, {"last_modified": "x"}), "last_modified"),
        (({"n": 1}, {"priority": 7}), "priority"),
        (["n", 1], "a dict of URL values"),
        (({"n": 1},), "a dict of URL values"),
        (({"n": 1}, "fields"), "a dict of URL values"),
        ("n=1", "a dict of URL values"),
        (({"n": 1}, {"lastmod": "yesterday"}), "lastmod"),
    ],
)
def test_bad_items_raise_the_same_error_naming_the_view(item: Any, message: str) -> None:
    kwargs = {"view": "the_view", "defaults": {}, "languages": None, "build_url": build_url}
    with pytest.raises(InvalidEntryError) as expected:
        param_entries(item, **kwargs)
    with pytest.raises(InvalidEntryError) as got:
        list(iter_param_entries([{"n": 0}, item], **kwargs))
    assert str(got.value) == str(expected.value)
    assert message in str(got.value)
    assert "the_view" in str(got.value)


def test_an_item_without_fields_shares_a_read_only_mapping() -> None:
    values, fields = split_param_item({"n": 1}, "view")
    assert values == {"n": 1}
    assert dict(fields) == {}
    with pytest.raises(TypeError):
        fields["lastmod"] = "2024-01-01"  # type: ignore[index]


@pytest.mark.parametrize(
    "defaults", [{}, {"changefreq": "monthly"}, {"images": ["https://example.com/i.png"]}]
)
def test_rows_are_the_entries_as_tuples(defaults: dict[str, Any]) -> None:
    """``rows=True``: an item with only the usual fields is the row of its entry, an
    item with other fields its entry; written, both are what ``rows=False`` gives."""
    items = [*GOOD_ITEMS, ({"n": 8}, {"images": ["https://example.com/8.png"]})]
    kwargs = {"view": "view", "defaults": defaults, "languages": None, "build_url": build_url}
    expected = list(iter_param_entries(items, **kwargs))
    got = list(iter_param_entries(items, rows=True, **kwargs))
    assert [entry_from_row(e, "s") if isinstance(e, tuple) else e for e in got] == expected
    kinds = [type(e) for e in got]
    if "images" in defaults:
        assert kinds == [Entry] * len(items)
    else:
        assert kinds == [tuple] * len(GOOD_ITEMS) + [Entry]


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (({"n": 1}, {"last_modified": "x"}), "last_modified"),
        (["n", 1], "a dict of URL values"),
        (({"n": 1}, "fields"), "a dict of URL values"),
    ],
)
def test_rows_keep_the_shape_errors_naming_the_view(item: Any, message: str) -> None:
    kwargs = {"view": "the_view", "defaults": {}, "languages": None, "build_url": build_url}
    with pytest.raises(InvalidEntryError, match=message) as got:
        list(iter_param_entries([{"n": 0}, item], rows=True, **kwargs))
    assert got.value.source == "the_view"


def test_a_bad_field_of_a_row_is_found_when_written_naming_the_source() -> None:
    """A field value is checked as the row is written (as ``Entry(*row)``); the error
    names the sitemap source the rows are written for."""
    kwargs = {"view": "the_view", "defaults": {}, "languages": None, "build_url": build_url}
    (row,) = iter_param_entries([({"n": 1}, {"priority": 7})], rows=True, **kwargs)
    with pytest.raises(InvalidEntryError, match="priority") as got:
        entry_from_row(row, "posts")
    assert got.value.source == "posts"


# -- params_fingerprint: the digest a short route source's ETag is made of ---------------


@given(
    st.lists(
        st.dictionaries(
            st.text(max_size=4),
            st.one_of(
                st.none(),
                st.booleans(),
                st.integers(-(2**60), 2**60),
                st.floats(),
                st.text(max_size=4),
            ),
            max_size=3,
        ),
        max_size=4,
    )
)
@settings(max_examples=200, deadline=None)
def test_the_digest_is_the_same_for_equal_values_and_differs_between_types(
    items: list[dict[str, Any]],
) -> None:
    # Every call gives the digest of the values, whatever objects hold them (texts
    # neither shared nor interned, as a database gives them); values that differ only
    # in type (1, 1.0, True) must not share one.
    fresh = params_fingerprint([dict(item) for item in items])
    assert fresh is not None
    assert params_fingerprint([dict(item) for item in items]) == fresh
    assert params_fingerprint([_rebuilt(item) for item in items]) == fresh
    retyped = [{key: _retype(value) for key, value in item.items()} for item in items]
    if retyped != items or any(
        type(a) is not type(b)
        for item, other in zip(items, retyped, strict=True)
        for a, b in zip(item.values(), other.values(), strict=True)
    ):
        assert params_fingerprint(retyped) != fresh


def _rebuilt(item: dict[str, Any]) -> dict[str, Any]:
    # A copy whose texts are new objects (joined from their characters).
    def text(value: Any) -> Any:
        return "".join(list(value)) if type(value) is str else value

    return {text(key): text(value) for key, value in item.items()}


def _retype(value: Any) -> Any:
    # The same value under Python's equality, of another type where there is one.
    if type(value) is bool:
        return int(value)
    if type(value) is int:
        return float(value)
    return value


def test_values_of_other_types_are_never_taken_for_a_text() -> None:
    class Opaque:
        def __repr__(self) -> str:
            return "'flask'"

    plain = params_fingerprint([{"tag": "flask"}])
    assert plain is not None
    # A value without a stable encoding gives no fingerprint, whatever its repr.
    assert params_fingerprint([{"tag": Opaque()}]) is None


def test_a_buffer_is_never_taken_for_bytes() -> None:
    # bytes have a stable encoding; bytearray and memoryview (whose contents may change
    # under the digest) have none.
    assert params_fingerprint([{"k": b"ab"}]) is not None
    for other in (bytearray(b"ab"), memoryview(b"ab")):
        assert params_fingerprint([{"k": other}]) is None
    assert params_fingerprint([{"k": "ab", "n": 1}]) == params_fingerprint(
        [{"k": "".join(["a", "b"]), "n": 1}]
    )
