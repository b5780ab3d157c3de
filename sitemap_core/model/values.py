"""Normalising the values of a sitemap entry: URLs, dates, changefreq, priority.

Every function returns the text or value that will be written, or raises
:class:`~sitemap_core.errors.InvalidEntryError` naming the field. :class:`~sitemap_core.
entries.Entry` and the extension values (images, videos, news, alternates) share them.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime, timedelta, tzinfo
from decimal import Decimal
from enum import StrEnum
from typing import Any
from urllib.parse import quote, urlsplit

from sitemap_core.errors import InvalidEntryError
from sitemap_core.limits import MAX_URL_LENGTH, MIN_URL_LENGTH

__all__ = [
    "ChangeFreq",
    "LastmodInput",
    "lastmod_instant",
    "normalise_lastmod",
    "normalise_url",
]

#: What ``lastmod`` accepts: a date, a datetime, or an ISO 8601 / W3C string.
LastmodInput = date | datetime | str


class ChangeFreq(StrEnum):
    """The seven ``<changefreq>`` words of the protocol."""

    ALWAYS = "always"
    HOURLY = "hourly"
    DAILY = "daily"
    WEEKLY = "weekly"
    MONTHLY = "monthly"
    YEARLY = "yearly"
    NEVER = "never"


_CHANGEFREQ_BY_WORD = {member.value: member for member in ChangeFreq}
# The same words as plain str, for the writers: an f-string formats a str subclass
# through Enum.__format__, a Python call per <url>, where a str is copied as it is.
_CHANGEFREQ_TEXT = {word: word for word in _CHANGEFREQ_BY_WORD}

# The common case, an ASCII URL that is already a valid URI with a lower-case host, is
# recognised by one regex so that building 50,000 entries stays cheap. Anything else
# (IRIs, upper-case hosts, spaces, IPv6, stray '%') takes the slower, general path.
#
# A host label is letters and digits with hyphens only inside: "[a-z0-9]+(-+[a-z0-9]+)*"
# is that language written so that nothing can match two ways, which lets every
# quantifier be possessive. The usual "[a-z0-9](?:[a-z0-9-]*[a-z0-9])?" backtracks at
# the end of every label and cost 40% more per URL (a test checks both accept the same).
_LABEL = r"[a-z0-9]++(?:-++[a-z0-9]++)*+"
_HOST = rf"{_LABEL}(?:\.{_LABEL})*+"
_PLAIN_URL = re.compile(
    rf"https?+://{_HOST}"
    r"(?::(?P<port>[0-9]{1,5}))?"
    r"(?P<rest>[/?](?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*)?\Z"
)
# The commonest shape of all, for the inlined check in Entry: no port, a path, and
# only characters a URI may hold as they are ('%' is checked separately, rarely).
_COMMON_URL = re.compile(rf"https?+://{_HOST}/[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*\Z")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_STRAY_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
# RFC 3986 pchar minus the unreserved set (which quote() never encodes) plus '%',
# which is kept because stray ones were already encoded by _STRAY_PERCENT.
_SAFE_PATH = "/!$&'()*+,;=:@%"
_SAFE_QUERY = _SAFE_PATH + "?"
_HOST_LABELS = re.compile(
    r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\.?"
)


def normalise_url(value: Any, field: str = "loc") -> str:
    """Return ``value`` as an absolute http(s) URI, or raise :class:`InvalidEntryError`.

    IRIs are converted to URIs: the host is IDNA-encoded, everything else that a URI
    cannot hold is percent-encoded as UTF-8. Scheme and host are lower-cased, a default
    port is dropped and an empty path becomes ``/``. Credentials and control characters
    are refused.
    """
    if not isinstance(value, str):
        raise InvalidEntryError(field, value, "must be a str")
    url: str
    match = _PLAIN_URL.match(value)
    # Ports that are out of range, default for the scheme or written with a leading
    # zero take the general path, which reports or normalises them.
    if match is not None and _canonical_port(match.group("port"), value):
        rest = match.start("rest")
        if match.group("rest") is None:
            url = value + "/"
        elif value[rest] == "?":
            url = value[:rest] + "/" + value[rest:]
        else:
            url = value
    else:
        url = _normalise_general_url(value, field)
    if len(url) > MAX_URL_LENGTH:
        raise InvalidEntryError(
            field, value, f"is {len(url)} characters as a URI; the limit is {MAX_URL_LENGTH}"
        )
    if len(url) < MIN_URL_LENGTH:
        raise InvalidEntryError(
            field, value, f"is shorter than the schema's minimum of {MIN_URL_LENGTH} characters"
        )
    return url


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _canonical_port(port: str | None, url: str) -> bool:
    if port is None:
        return True
    default = "443" if url.startswith("https") else "80"
    return port[0] != "0" and port != default and int(port) <= 65535


def _normalise_general_url(value: str, field: str) -> str:
    if _CONTROL.search(value):
        raise InvalidEntryError(field, value, "contains a control character")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        raise InvalidEntryError(field, value, f"is not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise InvalidEntryError(field, value, "must be an absolute http:// or https:// URL")
    if parts.username is not None or parts.password is not None:
        raise InvalidEntryError(field, value, "must not contain credentials")
    host = _normalise_host(parts.hostname or "", value, field)
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    try:
        path = quote(_STRAY_PERCENT.sub("%25", parts.path or "/"), safe=_SAFE_PATH)
        query = quote(_STRAY_PERCENT.sub("%25", parts.query), safe=_SAFE_QUERY)
        fragment = quote(_STRAY_PERCENT.sub("%25", parts.fragment), safe=_SAFE_QUERY)
    except UnicodeEncodeError:
        raise InvalidEntryError(field, value, "contains text that is not valid Unicode") from None
    url = f"{scheme}://{netloc}{path}"
    # A present-but-empty query or fragment ("?" / "#") is kept as written: it is part
    # of the URL the application generated.
    if "?" in value.partition("#")[0]:
        url += "?" + query
    if "#" in value:
        url += "#" + fragment
    return url


def _normalise_host(hostname: str, value: str, field: str) -> str:
    if not hostname:
        raise InvalidEntryError(field, value, "has no host")
    if ":" in hostname:  # urlsplit strips the brackets of an IPv6 literal
        if not re.fullmatch(r"[0-9a-f:.]+", hostname):
            raise InvalidEntryError(field, value, "has an invalid IPv6 host")
        return f"[{hostname}]"
    if not hostname.isascii():
        try:
            hostname = hostname.encode("idna").decode("ascii")
        except UnicodeError:
            raise InvalidEntryError(field, value, "has a host that IDNA cannot encode") from None
    if not _HOST_LABELS.fullmatch(hostname):
        raise InvalidEntryError(field, value, "has an invalid host name")
    return hostname


def normalise_lastmod(value: Any) -> str:
    """Return ``value`` as W3C date / date-time text that the sitemap XSD accepts.

    * ``date`` -> ``YYYY-MM-DD``.
    * aware ``datetime`` -> ``YYYY-MM-DDThh:mm:ss[.ffffff]±hh:mm`` in its own offset, so
      23:30-05:00 stays on its day. An offset with seconds (historic zones) cannot be
      written and is converted to UTC.
    * naive ``datetime`` -> taken as UTC, the convention of ``datetime.utcnow()`` columns
      and of Werkzeug's HTTP date helpers.
    * ``str`` -> parsed as ISO 8601 (``date.fromisoformat`` / ``datetime.fromisoformat``)
      and then treated as the value it parses to; ``"2024-05-01 10:00:00"`` from SQLite
      is therefore UTC. Year-only and year-month text is refused: the XSD needs a day.
    """
    if isinstance(value, datetime):
        return _format_datetime(value, value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str):
        known = _lastmod_text(value) if type(value) is str else None
        if known is not None:
            return known
        try:
            if "T" in value or " " in value.strip():
                return _format_datetime(datetime.fromisoformat(value), value)
            return date.fromisoformat(value).isoformat()
        except ValueError:
            raise InvalidEntryError(
                "lastmod", value, "is not an ISO 8601 date (YYYY-MM-DD) or date-time"
            ) from None
    raise InvalidEntryError("lastmod", value, "must be a date, datetime or ISO 8601 str")


#: Fixed-offset zones (``datetime.timezone``) already seen to be writable as they are,
#: each with its offset as ``isoformat()`` writes it; None, for naive datetimes, which
#: are written as UTC (what many database drivers return).
_ZONE_SUFFIX: dict[tzinfo | None, str] = {UTC: "+00:00", None: "+00:00"}
#: The offsets of those zones, as written: ISO text ending in one needs no zone object.
_ZONE_TEXTS: set[str] = {"+00:00"}


def _remember_zone(zone: tzinfo | None, suffix: str) -> None:
    """Remember a fixed-offset zone that is written as it is, with its written offset.

    A site uses one or two zones; past 64 nothing more is remembered (the general path
    still writes the rest).
    """
    if zone is not None and len(_ZONE_SUFFIX) < 64:
        _ZONE_SUFFIX[zone] = suffix
        _ZONE_TEXTS.add(suffix)


# isoformat() costs more than everything else an entry does (C's printf-like formatter,
# and a call of utcoffset()). The lastmods of a page fall on few days, so the text of
# each day is kept, and the time is put together from two-digit strings: the same text
# in under a third of the time (0.17 us against 0.56 us here), and, when every lastmod
# falls on a day not seen yet, in about isoformat()'s (4% more).
_DAY_TEXT: dict[int, str] = {}
# About 2.8 years of days, ~130 KiB; past that the memo starts again. A page in date
# order still finds every day but its first; one in no order loses little.
_MAX_DAYS = 1024
_TWO_DIGITS = tuple(f"{number:02d}" for number in range(60))


def _zoned_text(moment: datetime, suffix: str) -> str:
    """``moment.isoformat()`` for a datetime whose zone writes ``suffix`` (a fixed offset)."""
    day = _DAY_TEXT.get(ordinal := moment.toordinal())
    if day is None:
        if len(_DAY_TEXT) >= _MAX_DAYS:
            _DAY_TEXT.clear()
        day = _DAY_TEXT[ordinal] = date.fromordinal(ordinal).isoformat()
    two = _TWO_DIGITS
    if moment.microsecond:
        return (
            f"{day}T{two[moment.hour]}:{two[moment.minute]}:{two[moment.second]}"
            f".{moment.microsecond:06d}{suffix}"
        )
    return f"{day}T{two[moment.hour]}:{two[moment.minute]}:{two[moment.second]}{suffix}"


def _writable_offset(offset: timedelta) -> bool:
    # Whole minutes within +-14:00, checked on integers: timedelta arithmetic here
    # would cost more than the isoformat() it guards.
    seconds = offset.days * 86_400 + offset.seconds
    return not offset.microseconds and not seconds % 60 and -50_400 <= seconds <= 50_400


# Lastmod text in the shapes databases and APIs give, which normalise_lastmod would only
# reformat: a date, or a date, "T" or a space, a time with seconds (hours 00-23, seconds
# 00-59, whatever a Python version's parser allows), six fraction digits other than
# zeros (which isoformat() leaves out) or none, and "Z", no zone (UTC, as for naive
# datetimes) or an offset that can be written as it is: whole minutes within +-14:00,
# not "-00:00" (isoformat() writes "+00:00").
_LASTMOD_TEXT = re.compile(
    r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])"
    r"(?:[T ](?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.(?!000000)[0-9]{6})?"
    r"(?:Z|(?!-00:00)[+-](?:(?:0[0-9]|1[0-3]):[0-5][0-9]|14:00))?)?\Z"
)


def _lastmod_text(text: str) -> str | None:
    """``normalise_lastmod(text)`` for text of a recognised shape, else None.

    The same result without converting through a datetime and back: the text is
    checked to be a real date and time by ``fromisoformat`` (which a shape cannot tell:
    2023-02-29) and rewritten only where ``isoformat()`` would write it differently
    (the "T", the zone). Anything else, valid or not, is None: the general path decides.
    """
    # Most texts of a page share their date and hour with one seen before, and their
    # minutes, seconds and zone with another: both halves already checked, the text is
    # their concatenation, at the cost of two dictionary lookups (a date is valid or not
    # whatever its time, and a time whatever its date).
    head = _TEXT_HEADS.get(text[:13])
    if head is not None and (tail := _TEXT_TAILS.get(text[13:])) is not None:
        return head + tail
    written = _checked_lastmod_text(text)
    if written is not None and len(written) == 25 and len(text) <= 25:
        # A date-time without a fraction (the only tails worth keeping: a fraction makes
        # almost every tail new). Past the bounds the memo starts again.
        if len(_TEXT_HEADS) >= _MAX_HEADS:
            _TEXT_HEADS.clear()
        if len(_TEXT_TAILS) >= _MAX_TAILS:
            _TEXT_TAILS.clear()
        _TEXT_HEADS[text[:13]] = written[:13]
        _TEXT_TAILS[text[13:]] = written[13:]
    return written


#: Checked "YYYY-MM-DDThh" / "YYYY-MM-DD hh" heads of lastmod texts, each with its
#: written form; and their ":mm:ss" tails with the zone as given (an offset, "Z" or
#: none), each with its written form (the offset as written, "+00:00" for the others).
_TEXT_HEADS: dict[str, str] = {}
_TEXT_TAILS: dict[str, str] = {}
# 4,096 heads are 170 days of every hour (~0.5 MiB); tails are at most 3,600 per zone
# form, and a site has one or two.
_MAX_HEADS = 4096
_MAX_TAILS = 8192


def _checked_lastmod_text(text: str) -> str | None:
    """``_lastmod_text`` without its memo: the text checked by shape and ``fromisoformat``."""
    # isoformat()'s own shape, or str()'s (a space for the "T"), with an offset already
    # seen: told by position, which costs less than the regex. fromisoformat() accepts
    # far more than this shape (10:00.5, 10:00,5, week dates, any separator), so every
    # separator is checked; the offset must be one a datetime in that zone writes.
    if (
        len(text) == 25
        and text[4:17:3] in _MARKS
        and text[19:] in _ZONE_TEXTS
        and text[11:13] != "24"
    ):
        try:
            datetime.fromisoformat(text)
        except ValueError:
            return None
        return text if text[10] == "T" else text.replace(" ", "T", 1)
    if _LASTMOD_TEXT.match(text) is None:
        return None
    try:
        if len(text) == 10:
            date.fromisoformat(text)
            return text
        zone = datetime.fromisoformat(text).tzinfo
    except ValueError:
        return None
    # The shape leaves three zones: an offset (its sign 6 from the end), "Z" or none.
    if text[-6] not in "+-":
        text = (text[:-1] if text[-1] == "Z" else text) + "+00:00"
    elif zone not in _ZONE_SUFFIX:
        _remember_zone(zone, text[-6:])  # a writable offset: the shape says so
    return text if text[10] == "T" else text.replace(" ", "T", 1)


# The separators of "YYYY-MM-DDThh:mm:ss" at 4, 7, 10, 13 and 16.
_MARKS = ("--T::", "-- ::")


def _format_datetime(value: datetime, given: object) -> str:
    offset = value.utcoffset()
    if offset is None:
        value = value.replace(tzinfo=UTC)
    elif not _writable_offset(offset):
        # An offset the schema cannot write (seconds, beyond ±14:00): the same instant
        # in UTC is the faithful alternative.
        try:
            value = value.astimezone(UTC)
        except OverflowError:
            raise InvalidEntryError(
                "lastmod", given, "falls outside years 1-9999 once converted to UTC"
            ) from None
    return value.isoformat()


def _normalise_changefreq(value: Any) -> ChangeFreq:
    if isinstance(value, str):
        found = _CHANGEFREQ_BY_WORD.get(value.lower())
        if found is not None:
            return found
    words = ", ".join(_CHANGEFREQ_BY_WORD)
    raise InvalidEntryError("changefreq", value, f"must be one of {words}")


def _normalise_priority(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        raise InvalidEntryError("priority", value, "must be a number from 0.0 to 1.0")
    try:
        number = float(value)
    except (ValueError, OverflowError):  # a signalling NaN, an int beyond float range
        raise InvalidEntryError("priority", value, "must be between 0.0 and 1.0") from None
    if math.isnan(number) or not 0.0 <= number <= 1.0:
        raise InvalidEntryError("priority", value, "must be between 0.0 and 1.0")
    # Adding 0.0 turns -0.0 into 0.0: equal priorities must render to equal bytes.
    return number + 0.0


#: The first and last instants a datetime can hold, in UTC.
_FIRST_INSTANT = datetime.min.replace(tzinfo=UTC)
_LAST_INSTANT = datetime.max.replace(tzinfo=UTC)


def lastmod_instant(lastmod: str) -> datetime:
    """The instant of a normalised ``lastmod`` text, in UTC (a date counts as its UTC
    midnight).

    ``0001-01-01T00:00:00+01:00`` is a valid W3C date whose instant lies before the
    first one a datetime holds in UTC (and likewise past 9999 with a negative offset):
    such an instant is clamped to the first (last) one, so that comparing it or writing
    it as an HTTP date can never fail.
    """
    if "T" in lastmod:
        moment = datetime.fromisoformat(lastmod)
        try:
            return moment.astimezone(UTC)
        except OverflowError:
            return _FIRST_INSTANT if moment.year == 1 else _LAST_INSTANT
    return datetime.combine(date.fromisoformat(lastmod), datetime.min.time(), UTC)
