"""Entry validation and normalisation: what a valid entry is, and how bad values fail."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from fractions import Fraction
from zoneinfo import ZoneInfo

import pytest

from sitemap_core import ChangeFreq, Entry, InvalidEntryError, normalise_lastmod, normalise_url
from sitemap_core.limits import MAX_URL_LENGTH, MIN_URL_LENGTH

# --------------------------------------------------------------------------- loc


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("https://example.com/", "https://example.com/"),
        ("http://example.com/a/b?c=d", "http://example.com/a/b?c=d"),
        # scheme and host are lower-cased; the path is not
        ("HTTPS://Example.COM/Path/To", "https://example.com/Path/To"),
        ("HtTp://WWW.EXAMPLE.COM/", "http://www.example.com/"),
        # an empty path becomes "/", also in front of a query
        ("https://example.com", "https://example.com/"),
        ("https://EXAMPLE.com", "https://example.com/"),
        ("https://example.com?q=1", "https://example.com/?q=1"),
        ("https://example.com:8443", "https://example.com:8443/"),
        # IRI -> URI: UTF-8 percent-encoding of path and query, IDNA host
        ("https://example.com/café", "https://example.com/caf%C3%A9"),
        ("https://example.com/search?q=naïve", "https://example.com/search?q=na%C3%AFve"),
        ("https://bücher.de/", "https://xn--bcher-kva.de/"),
        ("https://BÜCHER.de/ä", "https://xn--bcher-kva.de/%C3%A4"),
        ("https://例え.jp/テスト", "https://xn--r8jz45g.jp/%E3%83%86%E3%82%B9%E3%83%88"),
        ("https://example.com/😀", "https://example.com/%F0%9F%98%80"),
        # characters a URI cannot hold are encoded, sub-delims are kept
        ("https://example.com/a b", "https://example.com/a%20b"),
        ('https://example.com/<x>"y"', "https://example.com/%3Cx%3E%22y%22"),
        ("https://example.com/a?b=1&c='2'", "https://example.com/a?b=1&c='2'"),
        ("https://example.com/{x}|y^`", "https://example.com/%7Bx%7D%7Cy%5E%60"),
        # stray '%' is encoded, valid %XX escapes are kept as written
        ("https://example.com/100%", "https://example.com/100%25"),
        ("https://example.com/a%zz", "https://example.com/a%25zz"),
        ("https://example.com/a%2", "https://example.com/a%252"),
        ("https://example.com/a%20b%2Fc", "https://example.com/a%20b%2Fc"),
        ("https://example.com/a%e9?q=%C3%A9", "https://example.com/a%e9?q=%C3%A9"),
        ("https://example.com/ü%20%", "https://example.com/%C3%BC%20%25"),
        # IP literals
        ("http://127.0.0.1:8000/x", "http://127.0.0.1:8000/x"),
        ("http://[::1]/x", "http://[::1]/x"),
        ("http://[2001:DB8::1]:8080/", "http://[2001:db8::1]:8080/"),
        # fragments and empty queries are part of the URL the app generated
        ("https://example.com/a#top", "https://example.com/a#top"),
        ("https://example.com/a?", "https://example.com/a?"),
    ],
)
def test_loc_is_normalised_to_a_uri(given: str, expected: str) -> None:
    assert normalise_url(given) == expected
    assert Entry(given).loc == expected


def test_normalised_loc_is_stable() -> None:
    """Normalising twice changes nothing (a normalised URI is its own normal form)."""
    for given in ("https://Bücher.de/ä b%?q=ö&x='1'#f", "HTTP://EXAMPLE.com", "http://[::1]/"):
        once = normalise_url(given)
        assert normalise_url(once) == once
        assert once.isascii()


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        ("/relative/path", "absolute"),
        ("example.com/page", "absolute"),
        ("//example.com/page", "absolute"),
        ("ftp://example.com/file", "absolute http"),
        ("mailto:someone@example.com", "absolute http"),
        ("javascript:alert(1)//example.com", "absolute http"),
        ("file:///etc/passwd", "absolute http"),
        ("https://user:secret@example.com/", "credentials"),
        ("https://user@example.com/", "credentials"),
        ("https://:pw@example.com/", "credentials"),
        ("https://example.com/a\nb", "control"),
        ("https://example.com/a\tb", "control"),
        ("https://example.com/\x00", "control"),
        ("https://example.com/\x7f", "control"),
        ("https://example.com/\x85", "control"),
        ("https://exa\rmple.com/", "control"),
        ("https://example.com:99999/", "URL"),
        ("https://example.com:65536/", "URL"),
        ("https://example.com:abc/", "URL"),
        ("https://example.com:-1/", "URL"),
        ("https://example.com:٣/", "URL"),
        ("https:///path-only", "host"),
        ("https://", "host"),
        ("https://exa mple.com/", "host"),
        ("https://exa_mple.com/", "host"),
        ("https://-example.com/", "host"),
        ("https://example..com/", "host"),
        ("https://[::1/", "URL"),
        ("https://[fe80::1%25eth0]/", "IPv6"),
        ("https://example.com/\ud800", "Unicode"),
        ("http://a.b/", "minimum"),
        ("HTTP://A.B", "minimum"),
        ("", "absolute"),
    ],
)
def test_bad_loc_is_refused_naming_field_and_value(given: str, reason: str) -> None:
    with pytest.raises(InvalidEntryError) as info:
        Entry(given)
    error = info.value
    assert error.field == "loc"
    assert error.value == given
    assert error.source is None
    assert reason in str(error)
    assert str(error).startswith("invalid loc ")
    assert repr(given)[:40] in str(error)


@pytest.mark.parametrize("given", [None, 42, b"https://example.com/", ["https://example.com/"]])
def test_loc_must_be_a_str(given: object) -> None:
    with pytest.raises(InvalidEntryError, match="must be a str") as info:
        Entry(given)  # type: ignore[arg-type]
    assert info.value.field == "loc"
    assert info.value.value is given


def test_short_loc_error_names_the_value_as_given() -> None:
    with pytest.raises(InvalidEntryError) as info:
        Entry("http://a.b")
    assert info.value.value == "http://a.b"


def test_port_bounds() -> None:
    assert Entry("https://example.com:65535/").loc == "https://example.com:65535/"
    assert Entry("https://example.com:1/").loc == "https://example.com:1/"
    with pytest.raises(InvalidEntryError, match="65535"):
        Entry("https://example.com:65536/")


def test_length_limits_are_the_schemas() -> None:
    assert (MIN_URL_LENGTH, MAX_URL_LENGTH) == (12, 2048)
    # 12 characters, the XSD's minLength: accepted; 11: refused
    assert Entry("http://a.bc/").loc == "http://a.bc/"
    with pytest.raises(InvalidEntryError, match="minimum of 12") as info:
        Entry("http://a.b/")
    assert info.value.field == "loc"

    head = "https://example.com/"
    longest = head + "a" * (MAX_URL_LENGTH - len(head))
    assert len(Entry(longest).loc) == 2048
    too_long = longest + "a"
    with pytest.raises(InvalidEntryError, match="2049 characters") as info:
        Entry(too_long)
    assert info.value.value == too_long
    # the message shortens the value instead of echoing 2,049 characters
    assert len(str(info.value)) < 300


def test_length_is_measured_after_percent_encoding() -> None:
    head = "https://example.com/"
    # 2,028 + 20 = 2,048 characters as written, but each "é" becomes 6 as a URI
    iri = head + "é" + "a" * (MAX_URL_LENGTH - len(head) - 1)
    assert len(iri) == MAX_URL_LENGTH
    with pytest.raises(InvalidEntryError, match="2053 characters as a URI"):
        Entry(iri)


def test_invalid_entry_error_is_a_value_error() -> None:
    assert issubclass(InvalidEntryError, ValueError)
    with pytest.raises(ValueError):
        Entry("not a url")


def test_error_can_name_its_source() -> None:
    error = InvalidEntryError("loc", "x", "is bad")
    named = error.with_source("posts")
    assert (named.field, named.value, named.reason, named.source) == ("loc", "x", "is bad", "posts")
    assert "'posts'" in str(named)
    assert "posts" not in str(error)


# --------------------------------------------------------------------------- lastmod


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (date(2024, 3, 10), "2024-03-10"),
        (date(1, 1, 1), "0001-01-01"),
        # an aware datetime keeps its own offset, so the day does not move
        (
            datetime(2024, 3, 10, 23, 30, tzinfo=timezone(timedelta(hours=-5))),
            "2024-03-10T23:30:00-05:00",
        ),
        (
            datetime(2024, 3, 10, 0, 15, tzinfo=timezone(timedelta(hours=5, minutes=45))),
            "2024-03-10T00:15:00+05:45",
        ),
        (datetime(2024, 3, 10, 12, 0, tzinfo=UTC), "2024-03-10T12:00:00+00:00"),
        (
            datetime(2024, 7, 1, 9, 0, tzinfo=ZoneInfo("America/New_York")),
            "2024-07-01T09:00:00-04:00",
        ),
        (
            datetime(2024, 1, 1, 9, 0, 0, 250000, tzinfo=ZoneInfo("Europe/Paris")),
            "2024-01-01T09:00:00.250000+01:00",
        ),
        # a naive datetime is taken as UTC (documented)
        (datetime(2024, 3, 10, 23, 30), "2024-03-10T23:30:00+00:00"),
        # an offset with seconds cannot be written: converted to UTC
        (
            datetime(2024, 3, 10, 12, 0, tzinfo=timezone(timedelta(minutes=19, seconds=32))),
            "2024-03-10T11:40:28+00:00",
        ),
        (
            datetime(1900, 1, 1, 12, 0, tzinfo=ZoneInfo("Europe/Amsterdam")),  # LMT +0:19:32
            "1900-01-01T11:40:28+00:00",
        ),
        # strings: ISO 8601 parsed, always re-emitted with seconds (the XSD needs them)
        ("2024-03-10", "2024-03-10"),
        ("20240310", "2024-03-10"),
        ("2024-05-01 10:00:00", "2024-05-01T10:00:00+00:00"),
        ("2024-05-01T10:00", "2024-05-01T10:00:00+00:00"),
        ("2024-05-01T10:00+02:00", "2024-05-01T10:00:00+02:00"),
        ("2024-05-01T10:00:00Z", "2024-05-01T10:00:00+00:00"),
        ("2024-05-01T23:30:00-05:00", "2024-05-01T23:30:00-05:00"),
        ("2024-05-01T10:00:00.5+01:00", "2024-05-01T10:00:00.500000+01:00"),
        ("2024-05-01T10:00:00+00:00:30", "2024-05-01T09:59:30+00:00"),
    ],
)
def test_lastmod_is_normalised(given: object, expected: str) -> None:
    assert normalise_lastmod(given) == expected
    assert Entry("https://example.com/", lastmod=given).lastmod == expected  # type: ignore[arg-type]


def test_lastmod_keeps_the_instant_and_the_local_day() -> None:
    moment = datetime(2024, 3, 10, 23, 30, tzinfo=ZoneInfo("America/Chicago"))
    written = Entry("https://example.com/", lastmod=moment).lastmod
    assert written is not None
    parsed = datetime.fromisoformat(written)
    assert parsed == moment
    assert parsed.date() == moment.date() == date(2024, 3, 10)


@pytest.mark.parametrize(
    "given",
    [
        "2024",
        "2024-05",
        "yesterday",
        "",
        "2024-13-01",
        "2024-02-30",
        "2024-05-01T25:00",
        "2024-05-01 ",
        "10:00:00",
        "2024/05/01",
        "2024-05-01T10:00:00+24:00",
    ],
)
def test_bad_lastmod_text_is_refused(given: str) -> None:
    with pytest.raises(InvalidEntryError, match="ISO 8601") as info:
        Entry("https://example.com/", lastmod=given)
    assert info.value.field == "lastmod"
    assert info.value.value == given
    assert repr(given) in str(info.value)


@pytest.mark.parametrize("given", [2024, 1710000000.0, (2024, 5, 1), b"2024-05-01"])
def test_lastmod_of_wrong_type_is_refused(given: object) -> None:
    with pytest.raises(InvalidEntryError, match="date, datetime") as info:
        Entry("https://example.com/", lastmod=given)  # type: ignore[arg-type]
    assert info.value.field == "lastmod"


@pytest.mark.parametrize(
    "given",
    [
        datetime(2024, 3, 10, 12, 0, tzinfo=timezone(timedelta(hours=15))),
        datetime(2024, 3, 10, 12, 0, tzinfo=timezone(-timedelta(hours=14, minutes=1))),
        "2024-03-10T12:00:00+15:00",
        # a real zone: Guam was at -14:21 (whole minutes) before 1845
        datetime(1800, 1, 1, 12, 0, tzinfo=ZoneInfo("Pacific/Guam")),
    ],
)
def test_lastmod_offset_beyond_14_hours_is_refused_or_converted(given: object) -> None:
    try:
        written = normalise_lastmod(given)
    except InvalidEntryError:
        return
    offset = datetime.fromisoformat(written).utcoffset()
    assert offset is not None
    assert abs(offset) <= timedelta(hours=14), written


@pytest.mark.parametrize(
    "given",
    [
        "0001-01-01T00:00:00+00:00:30",
        "9999-12-31T23:59:59-00:00:30",
        datetime(1, 1, 1, tzinfo=timezone(timedelta(seconds=30))),
    ],
)
def test_lastmod_overflow_is_an_invalid_entry(given: object) -> None:
    with pytest.raises(InvalidEntryError):
        Entry("https://example.com/", lastmod=given)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- changefreq


@pytest.mark.parametrize("word", [m.value for m in ChangeFreq])
def test_changefreq_words_in_any_case(word: str) -> None:
    for given in (word, word.upper(), word.capitalize(), ChangeFreq(word)):
        result = Entry("https://example.com/", changefreq=given).changefreq
        assert result is ChangeFreq(word)
        assert result == word


def test_changefreq_has_exactly_the_seven_words() -> None:
    assert [m.value for m in ChangeFreq] == [
        "always",
        "hourly",
        "daily",
        "weekly",
        "monthly",
        "yearly",
        "never",
    ]


@pytest.mark.parametrize(
    "given", ["", "sometimes", "day", " daily", "daily ", "biweekly", 1, None.__class__, b"daily"]
)
def test_bad_changefreq_is_refused(given: object) -> None:
    with pytest.raises(InvalidEntryError, match="must be one of always, hourly") as info:
        Entry("https://example.com/", changefreq=given)  # type: ignore[arg-type]
    assert info.value.field == "changefreq"
    assert info.value.value is given


# --------------------------------------------------------------------------- priority


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (0, 0.0),
        (1, 1.0),
        (0.0, 0.0),
        (0.5, 0.5),
        (1.0, 1.0),
        (1e-05, 1e-05),
        (Decimal("0.8"), 0.8),
        (Decimal("1.000"), 1.0),
    ],
)
def test_priority_accepts_numbers_from_0_to_1(given: object, expected: float) -> None:
    result = Entry("https://example.com/", priority=given).priority  # type: ignore[arg-type]
    assert result == expected
    assert type(result) is float


@pytest.mark.parametrize(
    "given",
    [
        True,
        False,
        math.nan,
        math.inf,
        -math.inf,
        -0.1,
        1.01,
        2,
        -1,
        "0.5",
        Decimal("NaN"),
        Decimal("Infinity"),
        Decimal("1.0000001"),
        Fraction(1, 2),
        [0.5],
    ],
)
def test_bad_priority_is_refused(given: object) -> None:
    with pytest.raises(InvalidEntryError) as info:
        Entry("https://example.com/", priority=given)  # type: ignore[arg-type]
    assert info.value.field == "priority"
    assert info.value.value is given
    assert "0.0" in str(info.value) and "1.0" in str(info.value)


@pytest.mark.parametrize(
    "given", [Decimal("sNaN"), Decimal("-sNaN"), pytest.param(10**400, id="10**400")]
)
def test_unconvertible_priority_is_an_invalid_entry(given: object) -> None:
    with pytest.raises(InvalidEntryError) as info:
        Entry("https://example.com/", priority=given)  # type: ignore[arg-type]
    assert info.value.field == "priority"


# --------------------------------------------------------------------------- value semantics


def test_equal_entries_after_normalisation() -> None:
    a = Entry("HTTPS://Example.com", lastmod=date(2024, 3, 10), changefreq="DAILY", priority=1)
    b = Entry(
        "https://example.com/", lastmod="2024-03-10", changefreq=ChangeFreq.DAILY, priority=1.0
    )
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b}) == 1


@pytest.mark.parametrize(
    "other",
    [
        Entry("https://example.com/other"),
        Entry("https://example.com/", lastmod="2024-03-11"),
        Entry("https://example.com/", changefreq="weekly"),
        Entry("https://example.com/", priority=0.4),
        Entry("https://example.com/"),
    ],
)
def test_entries_differing_in_one_field_are_unequal(other: Entry) -> None:
    base = Entry("https://example.com/", lastmod="2024-03-10", changefreq="daily", priority=0.5)
    assert base != other
    assert len({base, other}) == 2


def test_entry_is_not_equal_to_other_types() -> None:
    entry = Entry("https://example.com/")
    assert entry != "https://example.com/"
    assert entry.__eq__("https://example.com/") is NotImplemented


def test_repr_shows_only_set_fields() -> None:
    assert repr(Entry("https://example.com/")) == "Entry('https://example.com/')"
    full = Entry("https://example.com/a", lastmod="2024-03-10", changefreq="DAILY", priority=0.5)
    assert repr(full) == (
        "Entry('https://example.com/a', lastmod='2024-03-10', changefreq='daily', priority=0.5)"
    )


def test_entry_has_no_dict() -> None:
    entry = Entry("https://example.com/")
    with pytest.raises(AttributeError):
        entry.surprise = 1  # type: ignore[attr-defined]
