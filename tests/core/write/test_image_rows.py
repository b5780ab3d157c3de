"""Tuple rows with a fifth field, their images: written as ``Entry`` writes them.

``(loc, lastmod, changefreq, priority, images)`` is validated and written exactly as
``Entry(*row[:4], images=row[4])``: the same bytes (namespaces declared on ``<urlset>``
by the first batch, on ``<url>`` by a later one), or the same typed error naming the
source. Rows of four fields keep their own path.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xsd import validate

from sitemap_core import (
    ConfigurationError,
    Entry,
    Image,
    InvalidEntryError,
    Site,
    UrlSource,
    respond,
)
from sitemap_core.model.rows import RowBatch
from sitemap_core.write.encoders import UrlsetEncoder
from tests.core.helpers import BASE

LOCS = st.one_of(
    st.builds(lambda i: f"https://example.com/p/{i}?a=1&b='2'", st.integers(0, 999)),
    st.sampled_from(["https://example.com/ü", "ftp://x", "https://example.com/a b", "", 7]),
)
IMAGE_URLS = st.one_of(
    st.builds(lambda i: f"https://cdn.example.com/{i}.png", st.integers(0, 99)),
    st.sampled_from(["https://cdn.example.com/a&b.jpg", "https://cdn.example.com/ü.png", "x", 3]),
)
IMAGES = st.one_of(
    st.none(),
    st.lists(IMAGE_URLS, max_size=3),
    st.lists(
        IMAGE_URLS.filter(lambda u: isinstance(u, str)).map(
            lambda u: Image(u) if u.startswith("https") else u
        ),
        max_size=2,
    ),
    st.just("https://cdn.example.com/not-a-list.png"),
)
ROWS = st.tuples(
    LOCS,
    st.sampled_from([None, "2024-01-02T03:04:05+00:00", "2024-01-02", "not a date"]),
    st.sampled_from([None, "daily", "sometimes"]),
    st.sampled_from([None, 0.5, 2.0]),
    IMAGES,
)


def written(batches: list[list[Any]]) -> bytes | InvalidEntryError:
    encoder = UrlsetEncoder()
    try:
        return b"".join(encoder.feed(batch, None, "s") for batch in batches) + encoder.close()
    except InvalidEntryError as error:
        return error


def as_entries(rows: list[tuple[Any, ...]]) -> list[Entry]:
    entries = []
    for row in rows:
        try:
            entries.append(Entry(*row[:4], images=row[4]))
        except InvalidEntryError as error:
            raise error.with_source("s") from None
    return entries


@settings(max_examples=300, deadline=None)
@given(first=st.lists(ROWS, min_size=1, max_size=4), second=st.lists(ROWS, max_size=4))
def test_image_rows_write_what_entries_write(
    first: list[tuple[Any, ...]], second: list[tuple[Any, ...]]
) -> None:
    batches_of_rows = [RowBatch.of(list(first), "s")] + (
        [RowBatch.of(list(second), "s")] if second else []
    )
    got = written(batches_of_rows)
    try:
        expected: bytes | InvalidEntryError = written(
            [as_entries(first)] + ([as_entries(second)] if second else [])
        )
    except InvalidEntryError as error:
        expected = error
    if isinstance(expected, bytes):
        assert got == expected
        validate(expected)
    else:
        # The very same error (field, reason): Entry's order, row by row.
        assert isinstance(got, InvalidEntryError), got
        assert got.source == "s"
        assert (got.field, got.reason) == (expected.field, expected.reason)


def test_a_row_of_five_through_a_site_is_valid_and_streams() -> None:
    rows = [
        (
            f"https://example.com/p/{i}",
            "2024-05-01T10:00:00+00:00",
            None,
            None,
            [f"https://example.com/p/{i}/c.svg"],
        )
        for i in range(3_000)
    ]
    site = Site([UrlSource.from_object("posts", rows, fingerprint=lambda: 1)])
    reply = respond(site, "GET", "/sitemap.xml", lambda: BASE, {})
    assert reply is not None and reply.status == 200
    document = b"".join(reply.body)  # type: ignore[arg-type]
    validate(document)
    assert document.count(b"<image:image>") == 3_000
    text = respond(site, "GET", "/sitemap.txt", lambda: BASE, {})
    assert text is not None and b"".join(text.body).count(b"\n") == 3_000  # type: ignore[arg-type]


@pytest.mark.parametrize("row", [(), ("https://example.com/a", None, None, None, None, "extra")])
def test_a_row_of_no_field_or_six_is_refused(row: tuple[Any, ...]) -> None:
    with pytest.raises(InvalidEntryError, match="a row must be"):
        RowBatch.of([row], "s")


def test_sqlite_source_hands_build_plain_tuples_when_asked(tmp_path: Any) -> None:
    import sqlite3

    from sitemap_core.sources.sql.sqlite import SQLiteSource

    path = tmp_path / "t.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, at TEXT)")
        db.executemany("INSERT INTO t VALUES (?, ?)", [(i, "2024-01-01") for i in range(1, 4)])
    db.close()
    seen: list[Any] = []

    def build(row: Any) -> tuple[str, str, None, None, list[str]]:
        seen.append(row)
        url = f"https://example.com/t/{row[0]}"
        return (url, row[1], None, None, [url + "/i.png"])

    source = SQLiteSource(
        lambda: sqlite3.connect(path), "t", "id", build, columns=("id", "at"), row_factory=None
    )
    assert list(source[0:3]) == [
        (
            f"https://example.com/t/{i}",
            "2024-01-01",
            None,
            None,
            [f"https://example.com/t/{i}/i.png"],
        )
        for i in range(1, 4)
    ]
    assert all(type(row) is tuple for row in seen)
    by_name = SQLiteSource(
        lambda: sqlite3.connect(path),
        "t",
        "id",
        lambda row: f"https://example.com/{row['id']}",
        columns=("id", "at"),
    )
    assert list(by_name[0:1]) == ["https://example.com/1"]
    with pytest.raises(ConfigurationError, match="row_factory"):
        SQLiteSource(
            lambda: sqlite3.connect(path), "t", "id", build, columns=("id",), row_factory=5
        )  # type: ignore[arg-type]


INLINE_ROWS = st.tuples(
    st.builds(
        lambda i, q: f"https://example.com/p/{i}{q}",
        st.integers(0, 99),
        st.sampled_from(["", "?a=1&b=2", "/it's", "/%41"]),
    ),
    st.sampled_from(
        [
            "2024-01-02T03:04:05+00:00",
            "2024-01-02 03:04:05",
            "2024-01-02",
            datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=5, minutes=30))),
            datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
        ]
    ),
    st.just(None),
    st.just(None),
    st.builds(
        lambda i, q: [f"https://cdn.example.com/{i}{q}.png"],
        st.integers(0, 99),
        st.sampled_from(["", "&x", "'y"]),
    ),
)


@settings(max_examples=200, deadline=None)
@given(
    batch=st.lists(INLINE_ROWS, min_size=1, max_size=6),
    odd=st.one_of(st.none(), ROWS),
    first_plain=st.booleans(),
)
def test_batches_of_the_commonest_image_rows_write_what_entries_write(
    batch: list[tuple[Any, ...]], odd: tuple[Any, ...] | None, first_plain: bool
) -> None:
    # A whole batch of (loc, lastmod, None, None, [image]) takes the inline loop; one odd
    # row sends the batch down the general path; a first batch without images makes the
    # namespace be declared on each <url> of the next.
    rows = list(batch) if odd is None else [*batch, odd]
    batches: list[list[tuple[Any, ...]]] = [rows]
    if first_plain:
        batches.insert(0, [("https://example.com/first", None, None, None, None)])
    got = written([RowBatch.of(list(b), "s") for b in batches])
    try:
        expected: bytes | InvalidEntryError = written([as_entries(b) for b in batches])
    except InvalidEntryError as error:
        expected = error
    if isinstance(expected, bytes):
        assert got == expected
        validate(expected)
    else:
        assert isinstance(got, InvalidEntryError) and got.source == "s"


def test_a_column_of_one_image_url_a_row_writes_and_fails_as_entries_do() -> None:
    # The rows' images checked at once: written as entries write them (an IRI normalised,
    # '&' escaped), and a refused value is the error of the first row with one, in
    # Entry's order (a row's fields before its images).
    rows = [
        (f"https://example.com/p/{i}", "2024-01-02T03:04:05+00:00", None, None, [image])
        for i, image in enumerate(["https://cdn.example.com/a&b.png", "https://cdn.example.com/ü"])
    ]
    assert written([RowBatch.of(list(rows), "s")]) == written([as_entries(rows)])
    bad = [*rows, ("https://example.com/x", None, None, None, ["nothing"])]
    error = written([RowBatch.of(list(bad), "s")])
    assert isinstance(error, InvalidEntryError)
    assert (error.field, error.value, error.source) == ("image.loc", "nothing", "s")
    # A refused loc on an earlier row is the error; a refused image on the first row too.
    worse = [("ftp://example.com/y", None, None, None, None), *bad]
    error = written([RowBatch.of(list(worse), "s")])
    assert isinstance(error, InvalidEntryError) and (error.field, error.source) == ("loc", "s")
    error = written([RowBatch.of(list(bad[::-1]), "s")])
    assert isinstance(error, InvalidEntryError) and error.value == "nothing"
