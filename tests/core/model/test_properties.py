"""Property tests: whatever a user passes, Entry either refuses it with InvalidEntryError or
yields a document that parses, validates against the official XSD and round-trips.

The properties run over the whole input space (never narrowed by ``assume``); the
explicit ``@example`` cases pin inputs that once broke the library.
"""

from __future__ import annotations

import contextlib
import math
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from xsd import validate

from sitemap_core import ChangeFreq, Entry, InvalidEntryError, UrlsetEncoder, escape
from sitemap_core.limits import MAX_URL_LENGTH, MIN_URL_LENGTH
from sitemap_core.write.encoders import encode_all
from tests.core.helpers import SM, parse

SETTINGS = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# ----------------------------------------------------------------------------- strategies

#: Characters that matter to URLs and XML, plus the awkward ones.
SPECIAL = [
    *"&<>\"'%?#@:/[]\\ ;=+,!$()*{}|^`~",
    "\t",
    "\n",
    "\r",
    "\x00",
    "\x1f",
    "\x7f",
    "\x85",
    "\u2028",
    "\ufeff",
    "\ufffe",
    "\uffff",
    "é",
    "ß",
    "日",
    "😀",
    "%2",
    "%20",
    "%zz",
    "%C3%A9",
]
CHARS = st.one_of(
    st.characters(),  # all of Unicode but surrogates
    st.characters(codec=None, categories=["Cs"]),  # lone surrogates
    st.characters(max_codepoint=127),
    st.sampled_from(SPECIAL),
)
TEXT = st.lists(CHARS, max_size=40).map("".join)
#: The same without control characters and surrogates, which are always refused: text
#: that a path or query may really carry, so that most such URLs are accepted.
PRINTABLE = st.lists(
    st.one_of(
        st.characters(exclude_categories=["Cc", "Cs"]),
        st.characters(min_codepoint=32, max_codepoint=126),
        st.sampled_from([c for c in SPECIAL if c.isprintable() and c.isascii()]),
    ),
    max_size=40,
).map("".join)

HOSTS = st.one_of(
    st.sampled_from(
        [
            "example.com",
            "EXAMPLE.COM",
            "www.example.com",
            "bücher.de",
            "BÜCHER.de",
            "例え.jp",
            "127.0.0.1",
            "[::1]",
            "[2001:DB8::1]",
            "a",
            "",
            "exa mple.com",
            "user:pw@example.com",
            "example.com.",
        ]
    ),
    TEXT,
)
PORTS = st.one_of(
    st.just(""),
    st.integers(0, 70_000).map(lambda p: f":{p}"),
    st.sampled_from([":", ":abc", ":-1", ":080"]),
)
SCHEMES = st.sampled_from(["http://", "https://", "HTTP://", "HtTpS://", "ftp://", "//", ""])


@st.composite
def urlish(draw: st.DrawFn) -> str:
    """Text shaped like a URL, with every part drawn from hostile alphabets."""
    url = draw(SCHEMES) + draw(HOSTS) + draw(PORTS)
    url += draw(st.sampled_from(["", "/"])) + draw(TEXT)
    if draw(st.booleans()):
        url += "?" + draw(TEXT)
    if draw(st.booleans()):
        url += "#" + draw(TEXT)
    return url


ON_SITE = st.one_of(
    PRINTABLE.map(lambda t: "https://example.com/" + t),
    st.tuples(PRINTABLE, PRINTABLE).map(lambda pq: f"https://example.com/{pq[0]}?{pq[1]}"),
)
LOCS = st.one_of(
    st.text(),
    TEXT,
    TEXT.map(lambda t: "https://example.com/" + t),
    st.tuples(TEXT, TEXT).map(lambda pq: f"https://example.com/{pq[0]}?{pq[1]}"),
    ON_SITE,
    urlish(),
    st.integers(0, 2100).map(lambda n: "https://example.com/" + "a" * n),
    st.integers(0, 1100).map(lambda n: "https://example.com/" + "é" * n),
)

#: Every fixed offset Python allows (up to +/-23:59), seconds included: the ones the XSD
#: cannot write (seconds, beyond +/-14:00) must be converted to UTC, or refused.
FIXED_OFFSETS = st.builds(
    timezone,
    st.timedeltas(
        min_value=-timedelta(hours=23, minutes=59), max_value=timedelta(hours=23, minutes=59)
    ),
)
AWARE = st.one_of(
    st.datetimes(timezones=FIXED_OFFSETS),
    # Real zones over all years, historic local mean times (-14:21 in Guam) included.
    st.datetimes(timezones=st.timezones()),
)
NAIVE = st.datetimes()


@st.composite
def iso_text(draw: st.DrawFn) -> str:
    """ISO 8601 text as databases and users write it, sometimes truncated or damaged."""
    moment = draw(st.one_of(NAIVE, st.datetimes(timezones=FIXED_OFFSETS)))
    text = moment.isoformat(
        sep=draw(st.sampled_from(["T", " ", "t"])),
        timespec=draw(st.sampled_from(["auto", "hours", "minutes", "seconds", "milliseconds"])),
    )
    return text[: draw(st.integers(0, len(text)))] if draw(st.booleans()) else text


LASTMODS = st.one_of(
    AWARE,
    NAIVE,
    st.dates(),
    iso_text(),
    st.dates().map(date.isoformat),
    st.text(max_size=40),
    TEXT,
)

WORDS = [m.value for m in ChangeFreq]
CHANGEFREQS = st.one_of(
    st.sampled_from(list(ChangeFreq)),
    st.sampled_from(WORDS).flatmap(
        lambda w: st.lists(st.booleans(), min_size=len(w), max_size=len(w)).map(
            lambda up: "".join(c.upper() if u else c for c, u in zip(w, up, strict=True))
        )
    ),
    st.text(max_size=12),
    TEXT,
)

PRIORITIES = st.one_of(
    st.floats(),  # nan, +-inf, subnormals, -0.0 included
    st.floats(min_value=0.0, max_value=1.0),
    st.decimals(),  # NaN, signalling NaN and infinities included
    st.decimals(min_value=0, max_value=1, places=8),
    st.sampled_from([Decimal("NaN"), Decimal("-NaN"), Decimal("sNaN"), 10**400, -0.0]),
    st.integers(),
    st.booleans(),
    st.text(max_size=8),
    st.none(),
)

# ----------------------------------------------------------------------------- checks


def _document(entry: Entry) -> bytes:
    doc = encode_all(UrlsetEncoder(), [entry])
    validate(doc)
    validate(doc, profile="core")
    return doc


def _only_child(doc: bytes, name: str) -> str | None:
    found = parse(doc).findall(f"sm:url/sm:{name}", SM)
    assert len(found) <= 1
    return None if not found else str(found[0].text)


def _check_loc(given: str, entry: Entry) -> None:
    loc = entry.loc
    assert loc.isascii()
    assert loc.startswith(("http://", "https://"))
    assert MIN_URL_LENGTH <= len(loc) <= MAX_URL_LENGTH
    assert not any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in loc)
    doc = _document(entry)
    assert _only_child(doc, "loc") == loc
    # normal form: normalising again changes nothing
    assert Entry(loc).loc == loc


@SETTINGS
@given(LOCS)
@example("https://example.com/a&b'c\"d<e>f")
@example("https://example.com/\ud800")
@example("HTTPS://BÜCHER.de/ä ?q=ö&x=%zz#frag")
def test_any_loc_is_refused_or_valid(given: str) -> None:
    try:
        entry = Entry(given)
    except InvalidEntryError as error:
        event("loc refused")
        assert error.field == "loc"
        assert isinstance(error.value, str)
        return
    event("loc accepted")
    _check_loc(given, entry)


def _check_lastmod(given: Any, written: str) -> None:
    parsed = datetime.fromisoformat(written) if "T" in written else date.fromisoformat(written)
    if isinstance(given, datetime):
        assert isinstance(parsed, datetime) and parsed.tzinfo is not None
        expected = given if given.utcoffset() is not None else given.replace(tzinfo=UTC)
        assert parsed - expected == timedelta(0), "the instant moved"
        offset = expected.utcoffset()
        assert offset is not None
        if not offset % timedelta(minutes=1) and abs(offset) <= timedelta(hours=14):
            # an offset the XSD can write is kept: same local date and time of day
            assert parsed.utcoffset() == offset
            assert parsed.replace(tzinfo=None) == expected.replace(tzinfo=None)
        else:
            assert parsed.utcoffset() == timedelta(0)
    elif isinstance(given, date):
        assert written == given.isoformat()
    else:
        assert isinstance(given, str)
        if isinstance(parsed, datetime):
            # re-emitted with seconds and a zone, whatever was written
            assert written[10] == "T" and written[16] == ":"
            assert parsed.tzinfo is not None
            source = datetime.fromisoformat(given)
            if source.tzinfo is None:
                source = source.replace(tzinfo=UTC)
            assert parsed - source == timedelta(0)
        else:
            assert parsed == date.fromisoformat(given)


@SETTINGS
@given(LASTMODS)
@example(datetime(2024, 3, 10, 23, 30, tzinfo=timezone(timedelta(hours=-5))))
@example(datetime(2024, 3, 10, 23, 30, tzinfo=timezone(timedelta(hours=14))))
@example(datetime(2024, 3, 10, 0, 0, tzinfo=timezone(-timedelta(hours=13, seconds=59))))
@example("2024-05-01 10:00:00")
@example("2024")
@example("2024-05")
def test_any_lastmod_is_refused_or_valid(given: Any) -> None:
    try:
        entry = Entry("https://example.com/", lastmod=given)
    except InvalidEntryError as error:
        event("lastmod refused")
        assert error.field == "lastmod"
        if isinstance(given, datetime):
            # only an instant that leaves years 1-9999 once converted to UTC is refused
            offset = given.utcoffset()
            assert offset is not None and (
                offset % timedelta(minutes=1) or abs(offset) > timedelta(hours=14)
            )
            with pytest.raises(OverflowError):
                given.astimezone(UTC)
        else:
            assert not isinstance(given, date)  # plain dates are always writable
        return
    event(f"lastmod accepted: {type(given).__name__}")
    assert entry.lastmod is not None
    doc = _document(entry)
    assert _only_child(doc, "lastmod") == entry.lastmod
    _check_lastmod(given, entry.lastmod)


@SETTINGS
@given(CHANGEFREQS)
def test_any_changefreq_is_refused_or_valid(given: Any) -> None:
    try:
        entry = Entry("https://example.com/", changefreq=given)
    except InvalidEntryError as error:
        assert error.field == "changefreq"
        assert not (isinstance(given, str) and given.lower() in WORDS)
        return
    assert entry.changefreq is not None
    assert entry.changefreq.value == given.lower()
    doc = _document(entry)
    assert _only_child(doc, "changefreq") == entry.changefreq.value


@SETTINGS
@given(PRIORITIES)
@example(1e-05)
@example(5e-324)
@example(-0.0)
@example(0.9999999999)
@example(Decimal("1E-7"))
def test_any_priority_is_refused_or_valid(given: Any) -> None:
    if given is None:
        assert Entry("https://example.com/", priority=given).priority is None
        return
    try:
        entry = Entry("https://example.com/", priority=given)
    except InvalidEntryError as error:
        assert error.field == "priority"
        if isinstance(given, Decimal):
            assert given.is_nan() or not 0 <= given <= 1
        elif isinstance(given, int | float) and not isinstance(given, bool):
            assert (isinstance(given, float) and math.isnan(given)) or not 0 <= given <= 1
        return
    assert entry.priority is not None and 0.0 <= entry.priority <= 1.0
    doc = _document(entry)
    text = _only_child(doc, "priority")
    assert text is not None and "e" not in text.lower()
    assert abs(Decimal(text) - Decimal(given)) <= Decimal("0.0000005")


@SETTINGS
@given(
    st.one_of(LOCS, ON_SITE),
    st.one_of(st.none(), LASTMODS),
    st.one_of(st.none(), CHANGEFREQS),
    st.one_of(st.none(), PRIORITIES),
)
def test_any_entry_is_refused_or_gives_a_valid_document(
    loc: str, lastmod: Any, changefreq: Any, priority: Any
) -> None:
    try:
        entry = Entry(loc, lastmod=lastmod, changefreq=changefreq, priority=priority)
    except InvalidEntryError as error:
        event(f"entry refused: {error.field}")
        assert error.field in ("loc", "lastmod", "changefreq", "priority")
        return
    event("entry accepted")
    doc = _document(entry)
    (url,) = parse(doc).findall("sm:url", SM)
    names = [child.tag.split("}")[1] for child in url]
    expected = ["loc", "lastmod", "changefreq", "priority"]
    assert names == [n for n in expected if n == "loc" or getattr(entry, n) is not None]
    assert _only_child(doc, "loc") == entry.loc


XML_CHARS = st.characters(
    exclude_categories=["Cs", "Cc"],
    exclude_characters=["\ufffe", "\uffff"],
    include_characters=["\t", "\n"],
)


@SETTINGS
@given(st.text(XML_CHARS, max_size=60))
@example("&<>\"'")
@example("&amp;&#38;]]>")
def test_escape_round_trips_any_xml_text(text: str) -> None:
    escaped = escape(text)
    assert not ({"<", ">", '"', "'"} & set(escaped))
    doc = f"<r a='{escaped}'>{escaped}</r>".encode()
    root = parse(doc)
    assert (root.text or "") == text
    # attribute values are whitespace-normalised by XML; compare that way
    assert root.get("a") == text.replace("\t", " ").replace("\n", " ")


# ------------------------------------------------------------------ once-broken inputs


@SETTINGS
@given(
    st.datetimes(
        timezones=st.builds(
            timezone,
            st.timedeltas(
                min_value=-timedelta(hours=23, minutes=59),
                max_value=timedelta(hours=23, minutes=59),
            ),
        ),
    )
)
@example(datetime(2024, 3, 10, 12, tzinfo=timezone(timedelta(hours=15))))
def test_any_fixed_offset_lastmod_is_refused_or_valid(given: datetime) -> None:
    try:
        entry = Entry("https://example.com/", lastmod=given)
    except InvalidEntryError:
        return
    _document(entry)


@SETTINGS
@given(st.datetimes(timezones=FIXED_OFFSETS))
@example(datetime(1, 1, 1, tzinfo=timezone(timedelta(seconds=30))))
def test_any_lastmod_datetime_never_raises_another_error(given: datetime) -> None:
    with contextlib.suppress(InvalidEntryError):
        Entry("https://example.com/", lastmod=given)


@SETTINGS
@given(st.one_of(st.decimals(), st.integers()))
@example(Decimal("sNaN"))
@example(10**400)
def test_any_number_priority_never_raises_another_error(given: Decimal | int) -> None:
    with contextlib.suppress(InvalidEntryError):
        Entry("https://example.com/", priority=given)
