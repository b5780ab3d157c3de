"""Tuple rows: validated exactly as ``Entry(*row)``, written in one pass, served everywhere."""

from __future__ import annotations

import copy
import gzip
import pickle
import re
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any, NamedTuple

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemap_core import ChangeFreq, Entry, InvalidEntryError, Site, UrlSource, respond
from sitemap_core.memory.cache import MemoryCache
from sitemap_core.model.rows import RowBatch
from sitemap_core.serve.drive_async import respond_async
from sitemap_core.serve.site import Plan
from sitemap_core.sources.aio import AsyncUrlSource
from sitemap_core.sources.base import coerce_batch
from sitemap_core.write.encoders import TextEncoder, UrlsetEncoder
from tests.core.helpers import BASE, get, locs, parse
from tests.core.memory.test_cache import InlineRunner

ORIGIN = "https://example.com/"
TZ = timezone(timedelta(hours=5, minutes=30))


def outcome(render: Any) -> tuple[Any, ...]:
    """What rendering gave: the bytes, or the error's type, field, value, reason, source."""
    try:
        return ("bytes", render())
    except InvalidEntryError as exc:
        return ("error", exc.field, repr(exc.value), exc.reason, exc.source)
    except TypeError as exc:  # Entry's own behaviour for an unhashable changefreq
        return ("type-error", str(exc))


def via_rows(rows: list[tuple[Any, ...]], origin: str | None = ORIGIN) -> bytes:
    """The rows through the row path: coerce_batch, Plan.check, the urlset writer."""
    batch = coerce_batch(list(rows), "posts")
    assert type(batch) is RowBatch
    Plan[Any]("urlset", origin=origin).check(batch, "posts")
    encoder = UrlsetEncoder(chunk_bytes=1 << 30)
    return encoder.feed(batch) + encoder.close()


def via_entries(rows: list[tuple[Any, ...]], origin: str | None = ORIGIN) -> bytes:
    """The reference: ``Entry(*row)`` for each row, the same check and writer."""
    entries = []
    for row in rows:
        try:
            entries.append(Entry(*row))
        except InvalidEntryError as exc:
            raise exc.with_source("posts") from None
    Plan[Any]("urlset", origin=origin).check(entries, "posts")
    encoder = UrlsetEncoder(chunk_bytes=1 << 30)
    return encoder.feed(entries) + encoder.close()


def assert_same(rows: list[tuple[Any, ...]], origin: str | None = ORIGIN) -> tuple[Any, ...]:
    expected = outcome(lambda: via_entries(rows, origin))
    assert outcome(lambda: via_rows(rows, origin)) == expected
    # Read as a list, the batch gives the same entries (or the same error).
    batch = coerce_batch(list(rows), "posts")
    Plan[Any]("urlset", origin=origin).check(batch, "posts")
    as_list = outcome(lambda: _write_entries(list(batch)))
    assert as_list == expected
    return expected


def _write_entries(entries: list[Entry]) -> bytes:
    encoder = UrlsetEncoder(chunk_bytes=1 << 30)
    return encoder.feed(entries) + encoder.close()


# --------------------------------------------------------------------------- equivalence

VALID_ROWS = [
    (ORIGIN + "a", datetime(2024, 5, 1, 12, 0, tzinfo=TZ), "daily", 0.5),
    (ORIGIN + "a?x=1&y='2'", datetime(2024, 5, 1, tzinfo=UTC), "NEVER", 1.0),
    (ORIGIN + "a", datetime(2024, 5, 1, 12, 0, 0, 123, tzinfo=TZ), "weekly", -0.0),
    (ORIGIN + "a", datetime(2024, 5, 1), "hourly", 0.1),  # naive: UTC
    (ORIGIN + "a", date(2024, 5, 1), None, None),
    (ORIGIN + "a", "2024-05-01 10:00:00", None, 0.3),
    (ORIGIN + "a", "2024-05-01T10:00:00-05:00", "monthly", Decimal("0.25")),
    (ORIGIN + "a", None, None, None),
    (ORIGIN + "a", None, "yearly", None),
    (ORIGIN + "a", None, None, 1),
    (ORIGIN + "%7e/%41", None, None, None),
    (ORIGIN + "stray%", None, None, None),
    (ORIGIN + "ünïcode/路径", None, None, None),
    ("HTTPS://EXAMPLE.COM/upper", None, None, None),
    ("https://example.com", None, None, None),  # empty path becomes /
    ("https://example.com?q=1", None, None, None),
    (ORIGIN + "a", datetime(2024, 5, 1, tzinfo=timezone(timedelta(seconds=30))), None, None),
    (ORIGIN + "a", datetime(2024, 5, 1, tzinfo=timezone(timedelta(hours=-3))), None, None),
    (ORIGIN + "x" * 2028, None, None, None),  # 2,048 characters
]


@pytest.mark.parametrize("row", VALID_ROWS, ids=range(len(VALID_ROWS)))
def test_valid_rows_write_the_bytes_of_their_entry(row: tuple[Any, ...]) -> None:
    kind, _ = assert_same([row])
    assert kind == "bytes"


INVALID_ROWS = [
    (b"https://example.com/", None, None, None),
    (42, None, None, None),
    ("ftp://example.com/x", None, None, None),
    ("https://user:pw@example.com/x", None, None, None),
    ("https://example.com/\x00", None, None, None),
    ("http://a.b", None, None, None),  # shorter than 12
    (ORIGIN + "x" * 2029, None, None, None),  # 2,049 characters
    ("https://other.example/x", None, None, None),  # another host
    ("http://example.com/x", None, None, None),  # another scheme
    (ORIGIN + "a", "2024-05", None, None),
    (ORIGIN + "a", "yesterday", None, None),
    (ORIGIN + "a", 1714567200, None, None),
    (ORIGIN + "a", None, "sometimes", None),
    (ORIGIN + "a", None, 7, None),
    (ORIGIN + "a", None, None, 1.5),
    (ORIGIN + "a", None, None, float("nan")),
    (ORIGIN + "a", None, None, True),
    (ORIGIN + "a", None, None, "0.5"),
    (ORIGIN + "a", datetime(2024, 5, 1, tzinfo=TZ), "daily", 2.0),
    (ORIGIN + "a", datetime(2024, 5, 1, tzinfo=TZ), "often", 0.5),
    ("nope", "bad date", "bad word", 9.0),  # the first field's error, as Entry
]


@pytest.mark.parametrize("row", INVALID_ROWS, ids=range(len(INVALID_ROWS)))
def test_invalid_rows_raise_the_error_of_their_entry(row: tuple[Any, ...]) -> None:
    kind, *_ = assert_same([row])
    assert kind == "error"


def test_errors_name_the_source_field_and_value() -> None:
    rows = [(ORIGIN + "a", None, "sometimes", None)]
    with pytest.raises(InvalidEntryError) as info:
        via_rows(rows)
    assert (info.value.field, info.value.value, info.value.source) == (
        "changefreq",
        "sometimes",
        "posts",
    )
    assert "from source 'posts'" in str(info.value)


def test_a_value_error_of_a_batch_comes_before_a_row_on_another_host() -> None:
    # As with entries: every row is validated before the batch's origin check.
    rows = [("https://other.example/x",), (ORIGIN + "a", "not a date")]
    assert assert_same(rows)[1] == "lastmod"
    rows = [("https://other.example/x",), (ORIGIN + "a",)]
    assert assert_same(rows)[1:3] == ("loc", "'https://other.example/x'")


def test_a_batch_raises_the_error_of_its_first_bad_row() -> None:
    # The writer checks a batch field by field (every loc, then every lastmod, ...);
    # the error is still the first bad row's, in Entry's order of fields.
    good = (ORIGIN + "a", "2024-05-01", "daily", 0.5)
    rows = [good, (ORIGIN + "b", None, None, 2.0), ("not a url",), good]
    assert assert_same(rows)[1:3] == ("priority", "2.0")
    rows = [good, (ORIGIN + "b", None, ["unhashable"]), (ORIGIN + "c", None, None, 7.0)]
    assert assert_same(rows)[0] == "type-error"
    rows = [good, (ORIGIN + "b", None, "often"), (ORIGIN + "c", None, ["unhashable"])]
    assert assert_same(rows)[1:3] == ("changefreq", "'often'")
    rows = [(ORIGIN + "c", None, "Daily", 1), (ORIGIN + "d", None, ChangeFreq.DAILY, True)]
    assert assert_same(rows)[1:3] == ("priority", "True")


def test_rows_of_a_page_write_each_distinct_value_alike() -> None:
    # Equal values of the types written once per batch: a word and its member, -0.0.
    rows = [
        (ORIGIN + "a", None, ChangeFreq.DAILY, -0.0),
        (ORIGIN + "b", None, "daily", 0.0),
        (ORIGIN + "c", None, "DAILY", 0.5),
        (ORIGIN + "d?x=1&y='2'", None, None, 1.0),
    ]
    assert assert_same(rows)[0] == "bytes"
    assert via_rows(rows).count(b"<changefreq>daily</changefreq>") == 3
    assert b"&amp;y=&apos;2&apos;" in via_rows(rows)


def test_rows_under_other_origins() -> None:
    rows = [(f"{prefix}p/{i}",) for i, prefix in enumerate(["https://example.com/blog/"] * 3)]
    assert assert_same(rows, "https://example.com/blog/")[0] == "bytes"
    assert assert_same(rows, "https://example.com/shop/")[0] == "error"
    # An origin the inline check does not cover (a port): every row takes Entry's path.
    ported = [("https://example.com:8443/x",), ("https://example.com:8443/y", None, None, 0.5)]
    assert assert_same(ported, "https://example.com:8443/")[0] == "bytes"
    assert assert_same(ported, None)[0] == "bytes"
    assert assert_same([("https://any.example/x",)], None)[0] == "bytes"


def test_rows_with_every_uri_character_under_an_origin() -> None:
    # Rows are checked by Entry's own validators, then by the origin's prefix.
    rows = [(ORIGIN + "a?b=c&d",), (ORIGIN + "-._~!$&'()*+,;=:@/?%41",)]
    assert assert_same(rows, ORIGIN)[0] == "bytes"
    ported = [("https://example.com:8443/a",)]
    assert assert_same(ported, "https://example.com:8443/")[0] == "bytes"
    assert assert_same(ported, ORIGIN)[0] == "error"


URLS = st.one_of(
    st.sampled_from(
        [
            ORIGIN,
            ORIGIN + "a/b?c=d&e='f'",
            ORIGIN + "%41%zz",
            ORIGIN + "a b",
            "https://EXAMPLE.com/x",
            "https://example.com:443/x",
            "https://example.com:8443/x",
            "https://other.example/x",
            "http://example.com/x",
            "https://example.com",
            "https://[::1]/x",
            "https://example.com/blog/x",
            ORIGIN + "x" * 2028,
            ORIGIN + "x" * 2029,
        ]
    ),
    st.text(max_size=30).map(lambda tail: ORIGIN + tail),
    st.text(max_size=30),
    st.sampled_from([None, 3, b"https://example.com/"]),
)
ZONES = st.sampled_from(
    [
        None,
        UTC,
        TZ,
        timezone(timedelta(hours=-11, minutes=-45)),
        timezone(timedelta(seconds=90)),
        timezone(timedelta(hours=14)),
        timezone(timedelta(hours=23, minutes=59)),
    ]
)
LASTMODS = st.one_of(
    st.none(),
    st.builds(lambda d, z: d.replace(tzinfo=z), st.datetimes(), ZONES),
    st.dates(),
    st.sampled_from(["2024-05-01", "2024-05-01 10:00:00", "2024-05-01T10:00+02:00", "2024-5-1"]),
    st.text(max_size=12),
    st.integers(),
)
CHANGEFREQS = st.one_of(
    st.none(),
    st.sampled_from(["daily", "DAILY", "Never", "often", "", 1, 0.5]),
    st.text(max_size=8),
)
PRIORITIES = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=0.0, max_value=1.0),
    st.integers(-2, 3),
    st.decimals(allow_nan=True),
    st.booleans(),
    st.sampled_from(["0.5", -0.0]),
)
# Rows that are mostly valid, so that the one-pass path is taken often (and one field
# in a few is off), mixed with rows of anything.
GOOD_ROWS = st.tuples(
    st.one_of(
        st.text("abc/?&'=%~:@!$()*+,;-._", max_size=20).map(lambda tail: ORIGIN + tail), URLS
    ),
    st.one_of(
        st.builds(
            lambda d, z: d.replace(tzinfo=z),
            st.datetimes(),
            st.sampled_from([UTC, TZ, timezone(timedelta(hours=-11, minutes=-45))]),
        ),
        LASTMODS,
    ),
    st.one_of(st.sampled_from(["daily", "never", "hourly"]), CHANGEFREQS),
    st.one_of(st.floats(0.0, 1.0), PRIORITIES),
)
ROWS = st.one_of(GOOD_ROWS, st.tuples(URLS, LASTMODS, CHANGEFREQS, PRIORITIES))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(ROWS, min_size=1, max_size=4),
    origin=st.sampled_from(
        [ORIGIN, None, "https://example.com/blog/", "https://example.com:8443/"]
    ),
    width=st.sampled_from([4, 4, 4, 1, 2, 3]),
)
def test_any_rows_give_what_their_entries_give(
    rows: list[tuple[Any, ...]], origin: str | None, width: int
) -> None:
    assert_same([row[:width] for row in rows], origin)


# --------------------------------------------------------------------------- the batch


def test_a_row_batch_is_a_list_of_entries_built_on_first_use() -> None:
    rows = [(ORIGIN + "a",), (ORIGIN + "b", "2024-05-01")]
    batch = coerce_batch(list(rows), "posts")
    assert isinstance(batch, RowBatch) and isinstance(batch, list)
    assert len(batch) == 2 and batch and batch.rows is not None  # len needs no entries
    assert batch[1] == Entry(ORIGIN + "b", "2024-05-01")
    assert batch.rows is None
    assert list(batch) == [Entry(ORIGIN + "a"), Entry(ORIGIN + "b", "2024-05-01")]
    assert batch == [Entry(*row) for row in rows]
    assert [Entry(*row) for row in rows] == batch
    assert Entry(ORIGIN + "a") in batch and "Entry(" in repr(batch)
    assert pickle.loads(pickle.dumps(batch)) == batch
    assert copy.copy(coerce_batch(list(rows), "posts")) == batch


@pytest.mark.parametrize(
    "use",
    [list, iter, lambda b: b[0], repr, lambda b: b.copy(), lambda b: b.append(None), sorted],
)
def test_any_list_operation_validates_the_rows_first(use: Any) -> None:
    batch = coerce_batch([(ORIGIN + "a",), (ORIGIN + "b", "not a date")], "posts")
    with pytest.raises(InvalidEntryError) as info:
        use(batch)
    assert (info.value.field, info.value.source) == ("lastmod", "posts")
    assert batch.rows is not None  # still pending: a second use fails the same way


def test_a_built_batch_refuses_a_row_outside_the_origin() -> None:
    batch = coerce_batch([(ORIGIN + "a",), ("https://other.example/x",)], "posts")
    Plan[Any]("urlset", origin=ORIGIN).check(batch, "posts")
    with pytest.raises(InvalidEntryError) as info:
        TextEncoder().feed(batch)
    assert (info.value.field, info.value.value) == ("loc", "https://other.example/x")


def test_short_rows_named_tuples_and_mixed_batches() -> None:
    class Row(NamedTuple):
        loc: str
        lastmod: date | None
        changefreq: str | None
        priority: float | None

    named = [Row(ORIGIN + "n", date(2024, 1, 2), "daily", 0.5)]
    assert via_rows(named) == via_entries(named)  # type: ignore[arg-type]
    short = [(ORIGIN + "a",), (ORIGIN + "b", date(2024, 1, 2)), (ORIGIN + "c", None, "daily")]
    assert via_rows(short) == via_entries(short)
    mixed = coerce_batch([Entry(ORIGIN + "e"), ORIGIN + "s", (ORIGIN + "t", None, None, 1.0)], "p")
    assert type(mixed) is list
    assert mixed == [Entry(ORIGIN + "e"), Entry(ORIGIN + "s"), Entry(ORIGIN + "t", priority=1.0)]


# A fifth field is the row's images (tests/core/write/test_image_rows.py): six are refused.
@pytest.mark.parametrize("row", [(), (ORIGIN + "a", None, None, None, None, None)])
@pytest.mark.parametrize("alone", [True, False])
def test_rows_of_no_field_or_more_than_five_are_refused(row: tuple[Any, ...], alone: bool) -> None:
    items: list[Any] = [(ORIGIN + "a",), row] if alone else [ORIGIN + "a", row]
    with pytest.raises(InvalidEntryError) as info:
        coerce_batch(items, "posts")
    assert (info.value.field, info.value.value, info.value.source) == ("item", row, "posts")


def test_a_per_entry_byte_bound_measures_each_row() -> None:
    rows = [(ORIGIN + "a",), (ORIGIN + "b" * 300,)]
    encoder = UrlsetEncoder()
    with pytest.raises(InvalidEntryError) as info:
        encoder.feed(coerce_batch(list(rows), "posts"), 200, "posts")
    assert info.value.field == "entry" and info.value.value == ORIGIN + "b" * 300


# --------------------------------------------------------------------------- serving


def raw_rows(n: int) -> list[tuple[Any, ...]]:
    start = datetime(2024, 5, 1, 12, tzinfo=TZ)
    words = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
    return [
        (f"{ORIGIN}posts/{i}?ref=feed&x={i % 7}", start + timedelta(seconds=37 * i))
        + ((words[i % 7], (i % 11) / 10) if i % 5 else (None, None))
        for i in range(n)
    ]


ROWS_1000 = raw_rows(1000)
ENTRIES_1000 = [Entry(*row) for row in ROWS_1000]


def sites(**settings: Any) -> tuple[Site, Site]:
    """The same site over rows and over entries."""
    made = []
    for items in (ROWS_1000, ENTRIES_1000):
        made.append(
            Site(
                [UrlSource.from_object("posts", lambda items=items: iter(items), **settings)],
                page_size=400,
            )
        )
    return made[0], made[1]


@pytest.mark.parametrize(
    "path",
    [
        "/sitemap.xml",
        "/sitemap-posts-1.xml",
        "/sitemap-posts-3.xml",
        "/sitemap-posts-2.txt",
        "/sitemap-posts-2.html",
        "/sitemap-posts-2.xml.gz",
    ],
)
@pytest.mark.parametrize("fingerprinted", [True, False])
def test_row_sources_serve_what_entry_sources_serve(path: str, fingerprinted: bool) -> None:
    extra = {"fingerprint": lambda: "v1", "count": lambda: 1000} if fingerprinted else {}
    rows_site, entries_site = sites(**extra)
    got, expected = get(rows_site, path), get(entries_site, path)
    assert got is not None and expected is not None
    assert got.status == expected.status == 200
    assert got.body == expected.body
    assert got.header("ETag") == expected.header("ETag")
    assert got.header("Last-Modified") == expected.header("Last-Modified")
    if path == "/sitemap-posts-3.xml":
        assert len(locs(got.body)) == 200  # 1,000 rows in pages of 400


def test_gzip_and_the_page_cache_serve_rows() -> None:
    cache = MemoryCache()
    calls = []

    def source() -> Iterator[tuple[Any, ...]]:
        calls.append(1)
        return iter(ROWS_1000)

    site = Site(
        [UrlSource.from_object("posts", source, count=lambda: 1000, fingerprint=lambda: "v")],
        page_size=400,
        cache=cache,
    )
    _, entries_site = sites()
    expected = get(entries_site, "/sitemap-posts-1.xml")
    assert expected is not None
    for _ in range(2):
        reply = respond(
            site, "GET", "/sitemap-posts-1.xml", lambda: BASE, {"accept-encoding": "gzip"}
        )
        assert reply is not None and reply.header("Content-Encoding") == "gzip"
        assert gzip.decompress(b"".join(reply.body)) == expected.body  # type: ignore[arg-type]
        plain = get(site, "/sitemap-posts-1.xml")
        assert plain is not None and plain.body == expected.body
    assert len(calls) == 2  # one render per coding, then the cache


def test_a_bad_row_before_the_first_byte_fails_the_request() -> None:
    rows = [*ROWS_1000[:10], (ORIGIN + "x", "never"), *ROWS_1000[11:]]
    site = Site(
        [
            UrlSource.from_object(
                "posts", lambda: iter(rows), count=lambda: 1000, fingerprint=lambda: "v"
            )
        ]
    )
    with pytest.raises(InvalidEntryError) as info:
        respond(site, "GET", "/sitemap.xml", lambda: BASE)
    assert (info.value.field, info.value.source) == ("lastmod", "posts")


def test_a_bad_row_after_the_first_byte_cuts_the_transfer() -> None:
    rows = [*raw_rows(5000), ("https://other.example/x",)]
    site = Site(
        [
            UrlSource.from_object(
                "posts", lambda: iter(rows), count=lambda: 5001, fingerprint=lambda: "v"
            )
        ]
    )
    reply = respond(site, "GET", "/sitemap.xml", lambda: BASE)
    assert reply is not None and reply.status == 200
    body = iter(reply.body)  # type: ignore[arg-type]
    sent = [next(body)]
    with pytest.raises(InvalidEntryError) as info:
        sent.extend(body)
    assert (info.value.field, info.value.value) == ("loc", "https://other.example/x")
    assert len(b"".join(sent)) > 16_000 and b"</urlset>" not in b"".join(sent)


def test_a_bad_row_without_fingerprint_fails_before_any_byte() -> None:
    rows = [*raw_rows(5000), (ORIGIN + "x", None, None, 7.0)]
    site = Site([UrlSource.from_object("posts", lambda: iter(rows))])
    with pytest.raises(InvalidEntryError) as info:
        respond(site, "GET", "/sitemap.xml", lambda: BASE)
    assert (info.value.field, info.value.source) == ("priority", "posts")


async def _arows() -> AsyncIterator[tuple[Any, ...]]:
    for row in ROWS_1000:
        yield row


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("path", ["/sitemap-posts-2.xml", "/sitemap-posts-2.txt"])
def test_the_async_path_serves_rows(kind: str, path: str) -> None:
    obj: Any = (lambda: iter(ROWS_1000)) if kind == "sync" else _arows
    site = Site(
        [AsyncUrlSource.from_object("posts", obj, count=lambda: 1000, fingerprint=lambda: "v")],
        page_size=400,
    )
    _, entries_site = sites()
    expected = get(entries_site, path)

    async def run() -> bytes:
        reply = await respond_async(site, "GET", path, lambda: BASE, InlineRunner())
        assert reply is not None and reply.status == 200
        return b"".join([chunk async for chunk in reply.body])  # type: ignore[union-attr]

    assert expected is not None and anyio.run(run) == expected.body
    if path.endswith(".xml"):
        assert len(parse(expected.body)) == 400


def test_a_bad_async_row_before_the_first_byte_fails_the_request() -> None:
    async def bad() -> AsyncIterator[tuple[Any, ...]]:
        yield (ORIGIN + "a",)
        yield ("https://other.example/x",)

    site = Site([AsyncUrlSource.from_object("posts", bad, count=lambda: 2)])

    async def run() -> None:
        await respond_async(site, "GET", "/sitemap.xml", lambda: BASE, InlineRunner())

    with pytest.raises(InvalidEntryError, match=re.escape("other.example")):
        anyio.run(run)
