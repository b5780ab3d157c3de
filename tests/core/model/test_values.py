"""Every form of a value gives one outcome, the one the reference gives.

A value reaches a sitemap in several forms (an ``Entry``, a tuple row written without an
entry, an ``Image``, text or a datetime for a lastmod) and the validators recognise the
commonest of them cheaply (a URL already in its written form, a datetime's text put
together from its parts). Shown here, for any input:

* an ``Entry`` and a tuple row give the same bytes, or the same ``InvalidEntryError``
  (field, value, reason, source), as a reference built from the validators, with
  lastmods written by ``datetime.isoformat()`` as the code before any fast form did;
* a URL the written-form pattern recognises is one the general path leaves as it is;
* a batch of URLs, or of lastmods, checked at once gives what each value gives alone;
* values pickle, copy, compare and hash as before.

The recorded outcomes of a fixed corpus are checked by ``test_corpus``.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sitemap_core import ChangeFreq, Entry, Image, InvalidEntryError, UrlsetEncoder
from sitemap_core.model import values
from sitemap_core.model.values import (
    _WRITTEN_URL,
    _general_url,
    normalise_changefreq,
    normalise_lastmod,
    normalise_lastmods,
    normalise_priority,
    normalise_url,
    normalise_urls,
)
from sitemap_core.model.xmltext import escape
from sitemap_core.sources.base import coerce_batch
from sitemap_core.write.encoders import format_priority

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ORIGIN = "https://example.com/"
TZ = timezone(timedelta(hours=5, minutes=30))

# ------------------------------------------------------------------------ URL patterns

HOST_CHARS = st.sampled_from([*"az09-.", "--", "..", "-.", ".-", "A", "é", "_", ":"])
URL_CHARS = st.sampled_from([*"az09-./?%:@&'#[] ~AZé", "%2", "%41", "%zz", "\n"])


@st.composite
def urlish(draw: st.DrawFn) -> str:
    """Text close to the patterns' edges: hosts of odd labels, ports, paths, noise."""
    scheme = draw(st.sampled_from(["https://", "http://", "httpss://", "htp://", "https:/", ""]))
    host = "".join(draw(st.lists(HOST_CHARS, max_size=12)))
    port = draw(st.sampled_from(["", "", ":1", ":8443", ":", ":123456", ":x"]))
    rest = "".join(draw(st.lists(URL_CHARS, max_size=12)))
    return scheme + host + port + draw(st.sampled_from(["", "/", "?"])) + rest


@SETTINGS
@given(st.one_of(urlish(), st.text(max_size=30)))
@example("https://a-b.c-d.example/x")
@example("https://a--b.example/")
@example("https://a-.example/")
@example("https://example.com./")
@example("https://example.com:443")
@example("https://example.com/a%zz")
def test_a_url_in_its_written_form_is_what_the_general_path_makes_of_it(text: str) -> None:
    # normalise_url returns a URL the pattern recognises as it is: the general path
    # (urlsplit, IDNA, percent-encoding) must give back the very same text.
    if _WRITTEN_URL.match(text) is not None and values._STRAY_PERCENT.search(text) is None:
        assert _general_url(text, "loc") == text
    expected = outcome(lambda: _general_url(text, "loc"))
    if expected[0] == "ok" and 12 <= len(expected[1]) <= 2048:
        assert outcome(lambda: normalise_url(text)) == expected


class Link(str):
    """A str subclass: never in its written form, since normalise_url returns a str."""


def each_url(batch: list[Any], field: str = "loc") -> tuple[Any, ...]:
    """The reference of a batch: normalise_url of each value, in order."""
    return outcome(lambda: [normalise_url(value, field) for value in batch])


@SETTINGS
@given(
    st.lists(
        st.one_of(
            st.lists(URL_CHARS, max_size=8).map(lambda rest: ORIGIN + "".join(rest)),
            st.lists(URL_CHARS, max_size=8).map(lambda rest: "http://a.b/" + "".join(rest)),
            urlish(),
            st.sampled_from([ORIGIN + "x" * 2029, None, 7, Link(ORIGIN + "x")]),
        ),
        max_size=6,
    ),
    st.sampled_from(["loc", "image.loc"]),
)
@example([ORIGIN + "a\n" + ORIGIN + "b", ORIGIN + "c"], "loc")  # a newline inside a value
@example([ORIGIN + "a%4", ORIGIN + "1"], "loc")  # a stray % at a value's end
@example([ORIGIN + "a%", "1" + ORIGIN], "loc")
@example(["http://a.b/", "http://a.b/x"], "loc")  # a head shorter than the minimum
@example([ORIGIN + "a", "https://other.example/b"], "loc")  # two heads
@example([ORIGIN + "a", ORIGIN + "x" * 2029], "loc")  # one value too long
@example([ORIGIN + "a", Link(ORIGIN + "b")], "loc")
def test_a_batch_of_urls_gives_what_each_url_gives(batch: list[Any], field: str) -> None:
    expected = each_url(batch, field)
    assert outcome(lambda: list(normalise_urls(batch, field))) == expected
    if values._written_urls(batch):  # returned as they are: each is its own normal form
        assert all(type(url) is str and normalise_url(url) is url for url in batch)


def test_a_batch_in_its_written_form_is_returned_as_it_is() -> None:
    batch = [ORIGIN + "posts/1?ref=feed&x=1", ORIGIN + "posts/2", ORIGIN + "a%41'b"]
    assert values._written_urls(batch)
    assert normalise_urls(batch) is batch
    assert not values._written_urls([])
    for odd in (
        [ORIGIN + "a", "https://other.example/b"],  # another head: one by one
        [ORIGIN + "a", Link(ORIGIN + "b")],
        [ORIGIN + "a\n" + ORIGIN + "b"],
        ["https://EXAMPLE.com/a"],
    ):
        assert not values._written_urls(odd)
        assert outcome(lambda odd=odd: list(normalise_urls(odd))) == each_url(odd)


def test_a_batch_with_a_bad_url_raises_the_error_of_the_first() -> None:
    batch = [ORIGIN + "a", "ftp://example.com/x", "nothing"]
    with pytest.raises(InvalidEntryError) as info:
        normalise_urls(batch, "image.loc")
    assert (info.value.field, info.value.value) == ("image.loc", "ftp://example.com/x")
    assert "must be an absolute http:// or https:// URL" in str(info.value)


# ------------------------------------------------------------------------- the reference


def reference_datetime(value: datetime, given: object) -> str:
    """A datetime's lastmod by ``isoformat()``: naive is UTC, an offset the schema
    cannot write (seconds, beyond +-14:00) becomes UTC."""
    offset = value.utcoffset()
    if offset is None:
        value = value.replace(tzinfo=UTC)
    elif offset % timedelta(minutes=1) or abs(offset) > timedelta(hours=14):
        try:
            value = value.astimezone(UTC)
        except OverflowError:
            raise InvalidEntryError(
                "lastmod", given, "falls outside years 1-9999 once converted to UTC"
            ) from None
    return value.isoformat()


def general_lastmod(value: Any) -> str:
    """``normalise_lastmod`` as the code before any fast form wrote it: through a
    datetime and ``isoformat()``, always."""
    if isinstance(value, datetime):
        return reference_datetime(value, value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            if "T" in value or " " in value.strip():
                return reference_datetime(datetime.fromisoformat(value), value)
            return date.fromisoformat(value).isoformat()
        except ValueError:
            raise InvalidEntryError(
                "lastmod", value, "is not an ISO 8601 date (YYYY-MM-DD) or date-time"
            ) from None
    raise InvalidEntryError("lastmod", value, "must be a date, datetime or ISO 8601 str")


def general_element(loc: Any, lastmod: Any, changefreq: Any, priority: Any) -> str:
    """One ``<url>`` from the general functions alone, in the schema's order."""
    url = normalise_url(loc)
    written = None if lastmod is None else general_lastmod(lastmod)
    word = None if changefreq is None else normalise_changefreq(changefreq)
    number = None if priority is None else normalise_priority(priority)
    text = f"<url><loc>{escape(url)}</loc>"
    if written is not None:
        text += f"<lastmod>{written}</lastmod>"
    if word is not None:
        text += f"<changefreq>{word.value}</changefreq>"
    if number is not None:
        text += f"<priority>{format_priority(number)}</priority>"
    return text + "</url>\n"


def outcome(make: Callable[[], object], source: str | None = None) -> tuple[Any, ...]:
    """What ``make`` gave, or its error as (field, value, reason, source)."""
    try:
        return ("ok", make())
    except InvalidEntryError as exc:
        named = exc if source is None or exc.source else exc.with_source(source)
        return ("error", named.field, repr(named.value), named.reason, named.source)
    except TypeError as exc:  # an unhashable changefreq, as ever
        return ("type-error", str(exc))


def body(encoder: UrlsetEncoder, batch: Any) -> str:
    document = (encoder.feed(batch, None, "posts") + encoder.close()).decode()
    return document[document.index("<url>") : document.rindex("</urlset>")]


def via_entry(row: tuple[Any, ...]) -> str:
    return body(UrlsetEncoder(), [Entry(*row)])


def via_row(row: tuple[Any, ...]) -> str:
    return body(UrlsetEncoder(), coerce_batch([row], "posts"))


# ------------------------------------------------------------------------ odd values


@st.composite
def iso_text(draw: st.DrawFn) -> str:
    """ISO-like text at the edges of the recognised shapes: bad days and hours, odd
    separators, fractions of every length, every kind of zone, stray whitespace."""
    year = draw(st.sampled_from(["2024", "2023", "0000", "0001", "9999", "24", "20245"]))
    month = draw(st.sampled_from(["01", "02", "12", "00", "13", "1"]))
    day = draw(st.sampled_from(["01", "28", "29", "30", "31", "32", "00", "1"]))
    text = f"{year}-{month}-{day}"
    if draw(st.booleans()):
        sep = draw(st.sampled_from(["T", " ", "t", "_", "  "]))
        hour = draw(st.sampled_from(["00", "09", "23", "24", "7"]))
        minute = draw(st.sampled_from(["00", "59", "60"]))
        second = draw(st.sampled_from([":00", ":59", ":60", ""]))
        fraction = draw(st.sampled_from(["", "", ".123456", ".000000", ".100000", ".123", ".5"]))
        zone = draw(
            st.sampled_from(
                [
                    *("", "Z", "z", "+00:00", "-00:00", "+05:30", "-11:45", "+14:00", "-14:00"),
                    *("+14:01", "+13:59", "+0530", "+05", "+05:30:15", "+24:00", "-23:59"),
                ]
            )
        )
        text += f"{sep}{hour}:{minute}{second}{fraction}{zone}"
    return draw(st.sampled_from(["", " ", "\n"])) + text + draw(st.sampled_from(["", "", " "]))


ZONES = st.sampled_from(
    [
        None,
        UTC,
        TZ,
        timezone(timedelta(hours=-11, minutes=-45)),
        timezone(timedelta(hours=14)),
        timezone(timedelta(hours=14, minutes=1)),
        timezone(timedelta(seconds=90)),
    ]
)
#: Datetimes, naive (UTC) or aware in offsets within and beyond +-14:00.
MOMENTS = st.builds(lambda moment, zone: moment.replace(tzinfo=zone), st.datetimes(), ZONES)


def as_database_text(moment: datetime, sep: str, zulu: bool) -> str:
    """``moment`` as a database or API would give it as text."""
    text = moment.isoformat(sep=sep)
    return text[:-6] + "Z" if zulu and text.endswith("+00:00") else text


LASTMODS = st.one_of(
    st.none(),
    MOMENTS,
    st.dates(),
    st.builds(as_database_text, MOMENTS, st.sampled_from(["T", " "]), st.booleans()),
    iso_text(),
    st.text(max_size=12),
    st.sampled_from([1714567200, 1.5, b"2024-05-01"]),
)
LOCS = st.one_of(
    st.text(max_size=24).map(lambda tail: ORIGIN + tail),
    st.text("ab/?&'=%~:@!$()*+,;-._é日", max_size=24).map(lambda tail: ORIGIN + tail),
    st.sampled_from(["https://EXAMPLE.com/x", "https://example.com:8443/x", "http://a.b", "x"]),
    st.sampled_from(["https://[::1]/x", "https://bücher.de/x", ORIGIN + "x" * 2029, None]),
)
CHANGEFREQS = st.one_of(
    st.none(),
    st.sampled_from([*ChangeFreq, *(word.value for word in ChangeFreq)]),
    st.sampled_from(["DAILY", "Never", "often", "", " daily", 1, 0.5]),
)
PRIORITIES = st.one_of(
    st.none(),
    st.floats(0.0, 1.0),
    st.floats(allow_nan=True, allow_infinity=True),
    st.decimals(allow_nan=True),
    st.sampled_from([0, 1, 2, True, "0.5", -0.0]),
)


@SETTINGS
@given(LOCS, LASTMODS, CHANGEFREQS, PRIORITIES)
@example(ORIGIN + "a&b'c", "2024-05-01 10:00:00", "daily", 0.5)
@example(ORIGIN + "é", "2024-05-01T10:00:00Z", None, None)
@example(ORIGIN + "a", "2023-02-29", None, None)
@example(ORIGIN + "a", "2024-05-01T10:00:00-00:00", None, None)
@example(ORIGIN + "a", datetime(2024, 5, 1, 12), "never", 1.0)  # naive: UTC
@example(ORIGIN + "a", date(2024, 5, 1), None, None)
def test_entry_and_row_give_what_the_general_path_gives(
    loc: Any, lastmod: Any, changefreq: Any, priority: Any
) -> None:
    row = (loc, lastmod, changefreq, priority)
    expected = outcome(lambda: general_element(*row), "posts")
    assert outcome(lambda: via_entry(row), "posts") == expected
    assert outcome(lambda: via_row(row)) == expected


@SETTINGS
@given(st.one_of(iso_text(), st.builds(as_database_text, MOMENTS, st.just(" "), st.booleans())))
@example("2024-05-01T10:00:00.000000+05:30")  # isoformat() leaves zero microseconds out
@example("2024-05-01 10:00:00.000000")
@example("2024-05-01T10:00:00.100000Z")
@example("2024-05-01T10:00:00+14:00")
@example("2024-05-01T10:00:00+14:01")  # beyond the schema: converted to UTC
@example("2024-05-01T10:00:00-00:00")
def test_lastmod_text_is_what_the_reference_makes_of_it(text: str) -> None:
    slow = outcome(lambda: general_lastmod(text))
    assert outcome(lambda: normalise_lastmod(text)) == slow
    assert outcome(lambda: Entry(ORIGIN, text).lastmod) == slow


@pytest.mark.parametrize(
    "text",
    [
        "2024-05-01",
        "2024-05-01T10:00:00+05:30",
        "2024-05-01 10:00:00+05:30",  # str() of an aware datetime; PostgreSQL's text
        "2024-05-01 10:00:00",  # SQLite's CURRENT_TIMESTAMP, MySQL's DATETIME
        "2024-05-01T10:00:00Z",
        "2024-05-01 10:00:00.123456",
        str(datetime(2024, 5, 1, 10, tzinfo=TZ)),
    ],
)
def test_the_shapes_databases_give_are_written_as_the_reference_writes_them(text: str) -> None:
    assert normalise_lastmod(text) == general_lastmod(text)


@pytest.mark.parametrize(
    "text",
    [
        "2024-05-01T10:00.12+05:30",  # a fraction of a minute
        "2024-05-01T10:00,000+05:30",  # a comma fraction
        "2024-05-01T10:00:00.+05:30",  # an empty fraction
        "2024-W18-3T10:00:00+05:30",  # a week date
        "2024-05-01X10:00:00+05:30",  # another separator
        "2024-05-01T10:00:00+0530",
        "2024-05-01T10:00:00-00:00",
        "2024-05-01 10:00:00-00:00",
        "2024-05-01T10:00:00+14:01",
    ],
)
def test_forms_fromisoformat_accepts_beyond_the_shape_are_written_as_ever(text: str) -> None:
    # Of the same length and offset as the shape told by position, with the zone known.
    Entry(ORIGIN, datetime(2024, 5, 1, tzinfo=TZ))
    expected = outcome(lambda: general_lastmod(text))
    assert outcome(lambda: Entry(ORIGIN, text).lastmod) == expected
    row = (ORIGIN, text)
    assert outcome(lambda: via_row(row)) == outcome(lambda: via_entry(row), "posts")


@pytest.mark.parametrize(
    "bad",
    [
        "2023-02-29",
        "2024-05-01T24:00:00",
        "2024-13-01",
        "0000-01-01",
        "2024-05-01T1\u0660:00:00+05:30",  # an Arabic-Indic digit, in the shape told by position
        "2024-02-30T10:00:00+05:30",
    ],
)
def test_a_bad_text_lastmod_fails_as_it_did(bad: str) -> None:
    Entry(ORIGIN, datetime(2024, 5, 1, tzinfo=TZ))  # the zone known: the positional path
    with pytest.raises(InvalidEntryError) as raised:
        Entry(ORIGIN, bad)
    assert (raised.value.field, raised.value.value) == ("lastmod", bad)
    assert outcome(lambda: Entry(ORIGIN, bad)) == outcome(lambda: general_lastmod(bad))


# ----------------------------------------------------------------------- lastmod batches

LASTMOD_TEXTS = st.one_of(
    iso_text(),
    st.builds(as_database_text, MOMENTS, st.sampled_from(["T", " "]), st.booleans()),
    MOMENTS.map(lambda moment: general_lastmod(moment)),
)


@SETTINGS
@given(st.one_of(LASTMOD_TEXTS, st.text(max_size=30)))
@example("2024-05-01T10:00:00-00:00")
@example("2024-05-01T10:00:00.000000+05:30")
@example("2024-05-01T10:00:00+14:00")
@example("2024-05-01T10:00:00-14:00")
@example("0001-01-01T00:00:00+14:00")
def test_a_lastmod_in_its_written_form_is_what_the_general_path_makes_of_it(text: str) -> None:
    # A text the batch pattern recognises is returned as it is by normalise_lastmods
    # once fromisoformat() reads it: the reference must give back the very same text,
    # or refuse a day the calendar does not have, which the batch then leaves to it.
    if values._WRITTEN_LASTMODS.fullmatch(text) is not None and "\n" not in text:
        reference = outcome(lambda: general_lastmod(text))
        assert reference == ("ok", text) or reference[0] == "error"
        assert values._written_lastmods([text]) is (reference[0] == "ok")


@SETTINGS
@given(
    st.lists(
        st.one_of(
            LASTMOD_TEXTS,
            st.sampled_from([None, date(2024, 5, 1), datetime(2024, 5, 1, tzinfo=TZ), 7]),
        ),
        max_size=6,
    )
)
@example(["2024-05-01\n2024-05-02", "2024-05-03"])  # a newline inside a value
@example(["2024-05-01T10:00:00+00:00", "2023-02-29T10:00:00+00:00"])  # no such day
@example(["2024-05-01T10:00:00+00:00", "2024-05-01T10:00:00-00:00"])
@example(["2024-05-01T10:00:00+00:00", "2024-05-01T10:00:00.000000+00:00"])
@example(["2024-05-01T10:00:00+00:00", "2024-05-01T1\u0660:00:00+00:00"])
@example(["2024-05-01T10:00:00+00:00", "2024-05-01"])
def test_a_batch_of_lastmods_gives_what_each_lastmod_gives(batch: list[Any]) -> None:
    expected = outcome(lambda: [normalise_lastmod(value) for value in batch])
    assert outcome(lambda: list(normalise_lastmods(batch))) == expected
    if values._written_lastmods(batch):  # returned as they are: each its own normal form
        assert expected == ("ok", batch)
        assert [general_lastmod(value) for value in batch] == batch


def test_a_column_of_isoformat_texts_is_returned_as_it_is() -> None:
    start = datetime(2020, 1, 1, tzinfo=UTC)
    column = [(start + timedelta(minutes=17 * i)).isoformat() for i in range(300)]
    column += ["2024-05-01", "2024-05-01T10:00:00.123456-11:45"]
    assert normalise_lastmods(column) is column
    assert not values._written_lastmods([])
    for odd in (
        [*column[:3], "2024-05-01 10:00:00"],  # a space for the "T": one by one
        [*column[:3], "2024-05-01T10:00:00Z"],
        [*column[:3], datetime(2024, 5, 1, tzinfo=UTC)],
    ):
        assert not values._written_lastmods(odd)
        assert normalise_lastmods(odd) == [normalise_lastmod(value) for value in odd]


def test_a_batch_with_a_bad_lastmod_raises_the_error_of_the_first() -> None:
    batch = ["2024-05-01T10:00:00+00:00", "2023-02-29T10:00:00+00:00", "never"]
    with pytest.raises(InvalidEntryError) as info:
        normalise_lastmods(batch)
    assert (info.value.field, info.value.value) == ("lastmod", "2023-02-29T10:00:00+00:00")


# ------------------------------------------------------------------------------- images

IMAGE_LOCS = st.one_of(
    st.text("ab/?&'=%~:@é日 ", max_size=16).map(lambda tail: ORIGIN + "i/" + tail),
    LOCS,
)


@SETTINGS
@given(IMAGE_LOCS)
def test_a_plain_image_is_its_general_form(loc: Any) -> None:
    def plain() -> tuple[str, str]:
        image = Image(loc)
        return image.loc, image.to_xml()

    def general() -> tuple[str, str]:
        url = normalise_url(loc, "image.loc")
        return url, f"<image:image><image:loc>{escape(url)}</image:loc></image:image>"

    assert outcome(plain) == outcome(general)


@SETTINGS
@given(st.lists(IMAGE_LOCS, max_size=3), st.sampled_from([list, tuple]))
def test_images_alone_give_what_the_general_extension_path_gives(
    locs: list[Any], kind: type
) -> None:
    images = kind(locs)

    def built(**more: Any) -> tuple[Any, ...]:
        entry = Entry(ORIGIN + "page", images=images, **more)
        return entry, repr(entry), body(UrlsetEncoder(), [entry])

    # Passing videos=() takes Extensions' general path; nothing else differs.
    assert outcome(built) == outcome(lambda: built(videos=()))


@pytest.mark.parametrize("protocol", range(2, pickle.HIGHEST_PROTOCOL + 1))
def test_images_given_as_urls_are_built_when_read(protocol: int) -> None:
    urls = [ORIGIN + "a.png", ORIGIN + "b&c.png", ORIGIN + "é.png"]
    lazy = Entry(ORIGIN, images=urls)
    eager = Entry(ORIGIN, images=[Image(url) for url in urls])
    general = Entry(ORIGIN, images=urls, videos=())
    # Compared, hashed and pickled before anything reads the images, and after.
    again = pickle.loads(pickle.dumps(lazy, protocol))
    assert lazy == eager == general == again
    assert hash(lazy) == hash(eager) == hash(general) == hash(again)
    assert repr(lazy) == repr(eager)
    images = lazy.images
    assert images == eager.images == tuple(Image(url) for url in urls)
    assert all(type(image) is Image for image in images)
    assert lazy.images is images  # built once
    assert pickle.loads(pickle.dumps(lazy, protocol)) == lazy
    assert via_entries([lazy]) == via_entries([eager]) == via_entries([again])


def test_images_keep_their_fields_and_stay_immutable() -> None:
    plain = Image(ORIGIN + "a.png")
    detailed = Image(ORIGIN + "b.png", caption=" A ", title="T", license=ORIGIN + "l")
    assert (plain.caption, plain.title, plain.geo_location, plain.license) == (None,) * 4
    assert (detailed.caption, detailed.title, detailed.geo_location) == ("A", "T", None)
    assert detailed.license == ORIGIN + "l"
    for image in (plain, detailed):
        for name in ("loc", "caption", "title", "geo_location", "license"):
            with pytest.raises(AttributeError):
                setattr(image, name, "x")
    assert Image(ORIGIN + "a.png") == plain
    assert hash(Image(ORIGIN + "a.png")) == hash(plain)
    assert Image(ORIGIN + "a.png", caption=None) == plain
    assert repr(detailed) == (
        f"Image('{ORIGIN}b.png', caption='A', title='T', license='{ORIGIN}l')"
    )


def test_two_bad_image_fields_name_the_loc_first() -> None:
    with pytest.raises(InvalidEntryError) as raised:
        Image("nope", caption="")
    assert raised.value.field == "image.loc"


# ------------------------------------------------------------------ pickling and copies

ENTRIES = [
    Entry(ORIGIN + "a"),
    Entry(ORIGIN + "a?b=1&c='2'", datetime(2024, 5, 1, 12, tzinfo=TZ), "daily", 0.5),
    Entry(ORIGIN + "b", "2024-05-01 10:00:00", "never", Decimal("0.25")),
    Entry(ORIGIN + "c", images=[ORIGIN + "i.png", Image(ORIGIN + "j.png", caption="c")]),
    Entry(ORIGIN + "d", alternates={"en": ORIGIN + "d", "de": ORIGIN + "de/d"}),
]


@pytest.mark.parametrize("entry", ENTRIES, ids=range(len(ENTRIES)))
@pytest.mark.parametrize("protocol", range(2, pickle.HIGHEST_PROTOCOL + 1))
def test_entries_pickle_as_before(entry: Entry, protocol: int) -> None:
    # Protocols 0 and 1 never pickled an Entry (slots without __getstate__).
    again = pickle.loads(pickle.dumps(entry, protocol))
    assert again == entry
    assert hash(again) == hash(entry)
    assert repr(again) == repr(entry)
    assert via_entries([again]) == via_entries([entry])
    assert copy.copy(entry) == entry == copy.deepcopy(entry)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_images_pickle_with_every_protocol(protocol: int) -> None:
    for image in (Image(ORIGIN + "a.png"), Image(ORIGIN + "b.png", geo_location="Paris")):
        again = pickle.loads(pickle.dumps(image, protocol))
        assert (again, again.to_xml(), repr(again)) == (image, image.to_xml(), repr(image))
        assert again.geo_location == image.geo_location


def via_entries(entries: list[Entry]) -> str:
    return body(UrlsetEncoder(), entries)


def test_a_fast_form_and_a_slow_form_of_one_value_make_equal_entries() -> None:
    moment = datetime(2024, 5, 1, 10, tzinfo=TZ)
    forms = [
        Entry(ORIGIN + "a", moment),
        Entry(ORIGIN + "a", moment.isoformat()),
        Entry(ORIGIN + "a", str(moment)),
        Entry(ORIGIN + "a", moment.astimezone(TZ)),
    ]
    assert all(form == forms[0] and hash(form) == hash(forms[0]) for form in forms)


# ---------------------------------------------------------------- the memo of day texts


@SETTINGS
@given(st.datetimes(timezones=st.sampled_from([UTC, TZ, timezone(timedelta(hours=-14))])))
@example(datetime(1, 1, 1, tzinfo=UTC))
@example(datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=TZ))
@example(datetime(2024, 5, 1, 0, 0, 0, 1, tzinfo=TZ))
def test_a_datetime_in_a_fixed_offset_is_written_as_isoformat_writes_it(moment: datetime) -> None:
    # The first entry may make its day's and its offset's text; the second finds both made.
    first, second = Entry(ORIGIN, moment), Entry(ORIGIN, moment)
    assert first.lastmod == second.lastmod == moment.isoformat()
    assert via_row((ORIGIN, moment, "daily", 0.5)) == via_entry((ORIGIN, moment, "daily", 0.5))


def test_the_memo_of_days_stays_bounded_and_right() -> None:
    start = datetime(1990, 1, 1, 12, tzinfo=TZ)
    moments = [start + timedelta(days=day, microseconds=day % 3) for day in range(3000)]
    for moment in moments:
        assert Entry(ORIGIN, moment).lastmod == moment.isoformat()
    memo = values._day_in_zone.cache_info()
    assert memo.maxsize is not None
    assert 0 < memo.currsize <= memo.maxsize


@SETTINGS
@given(
    st.lists(
        st.one_of(iso_text(), st.builds(as_database_text, MOMENTS, st.just(" "), st.booleans())),
        min_size=2,
        max_size=6,
    ),
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=6),
)
def test_the_head_of_one_text_with_the_tail_of_another_is_written_as_the_reference_writes_it(
    seen: list[str], pairs: list[tuple[int, int]]
) -> None:
    # Any head (date and hour) of one text with any tail (minutes, seconds, zone) of
    # another, each perhaps valid, perhaps refused, gives what the reference gives.
    for text in seen:
        assert outcome(lambda text=text: Entry(ORIGIN, text).lastmod) == outcome(
            lambda text=text: general_lastmod(text)
        )
    for first, second in pairs:
        mixed = seen[first % len(seen)][:13] + seen[second % len(seen)][13:]
        expected = outcome(lambda mixed=mixed: general_lastmod(mixed))
        assert outcome(lambda mixed=mixed: Entry(ORIGIN, mixed).lastmod) == expected
        assert outcome(lambda mixed=mixed: via_row((ORIGIN, mixed))) == outcome(
            lambda mixed=mixed: via_entry((ORIGIN, mixed)), "posts"
        )


def test_a_valid_tail_never_lets_a_bad_head_through() -> None:
    assert Entry(ORIGIN, "2024-05-01T10:11:12+05:30").lastmod == "2024-05-01T10:11:12+05:30"
    for bad in (
        "2023-02-29T10:11:12+05:30",
        "2024-05-01T24:11:12+05:30",
        "2024-05-01X10:11:12+05:30",
    ):
        with pytest.raises(InvalidEntryError):
            Entry(ORIGIN, bad)
    # A space-separated head is written with a "T".
    assert Entry(ORIGIN, "2024-05-02 10:11:12").lastmod == "2024-05-02T10:11:12+00:00"
    assert Entry(ORIGIN, "2024-05-02 10:11:12+05:30").lastmod == "2024-05-02T10:11:12+05:30"


def test_text_lastmods_of_many_hours_are_right() -> None:
    start = datetime(1990, 1, 1, tzinfo=TZ)
    for hour in range(0, 6000, 1):
        moment = start + timedelta(hours=hour, seconds=hour % 3600)
        text = moment.isoformat(sep=" ")
        assert Entry(ORIGIN, text).lastmod == moment.isoformat()
