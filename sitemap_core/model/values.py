"""Normalising the values of a sitemap entry: URLs, dates, changefreq, priority.

One validator per field: :func:`normalise_url` (``loc`` and every other URL),
:func:`normalise_lastmod`, :func:`normalise_changefreq` and :func:`normalise_priority`
(the first two with a batch form, :func:`normalise_urls` and :func:`normalise_lastmods`,
which gives what each value gives).
Each returns the text or value that will be written, or raises
:class:`~sitemap_core.errors.InvalidEntryError` naming the field; nothing else checks
these fields. :class:`~sitemap_core.model.entries.Entry`, the writer of tuple rows and
the extension values (images, videos, news, alternates) call them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from enum import StrEnum
from functools import lru_cache
from typing import Any
from urllib.parse import SplitResult, quote, urlsplit

from sitemap_core.errors import InvalidEntryError
from sitemap_core.limits import MAX_URL_LENGTH, MIN_URL_LENGTH

__all__ = [
    "ChangeFreq",
    "LastmodInput",
    "lastmod_instant",
    "normalise_changefreq",
    "normalise_lastmod",
    "normalise_lastmods",
    "normalise_priority",
    "normalise_url",
    "normalise_urls",
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

# --- loc ------------------------------------------------------------------------------

# A URL that is already a URI in its written form (lower-case host, no port, a path,
# only characters a URI may hold as they are) is its own normal form, and most URLs a
# site gives look like that; one regex recognises them. Everything else (IRIs,
# upper-case hosts, ports, spaces, IPv6, no path) is taken apart by urlsplit.
#
# A host label is letters and digits with hyphens only inside: "[a-z0-9]+(-+[a-z0-9]+)*"
# is that language written so that nothing can match two ways, which lets every
# quantifier be possessive; the usual "[a-z0-9](?:[a-z0-9-]*[a-z0-9])?" backtracks at the
# end of every label.
_LABEL = r"[a-z0-9]++(?:-++[a-z0-9]++)*+"
# The scheme, the host and the path's first slash; then only these characters.
_HEAD = rf"https?+://{_LABEL}(?:\.{_LABEL})*+/"
_URI_CHARS = r"A-Za-z0-9\-._~!$&'()*+,;=:@/?%"
_WRITTEN_URL = re.compile(rf"{_HEAD}[{_URI_CHARS}]*+\Z")
# The same two rules in the form normalise_urls checks a batch with (see there): the
# head alone, and the bytes of _URI_CHARS with the newline that joins the batch.
_WRITTEN_HEAD = re.compile(_HEAD)
_BATCH_BYTES = b"\n" + bytes(code for code in range(128) if re.match(f"[{_URI_CHARS}]", chr(code)))
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_STRAY_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
# RFC 3986 pchar minus the unreserved set (which quote() never encodes) plus '%',
# which is kept because stray ones were already encoded by _STRAY_PERCENT.
_SAFE_PATH = "/!$&'()*+,;=:@%"
_SAFE_QUERY = _SAFE_PATH + "?"
_HOST_LABELS = re.compile(
    r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\.?"
)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalise_url(value: Any, field: str = "loc") -> str:
    """Return ``value`` as an absolute http(s) URI, or raise :class:`InvalidEntryError`.

    IRIs are converted to URIs: the host is IDNA-encoded, everything else that a URI
    cannot hold is percent-encoded as UTF-8. Scheme and host are lower-cased, a default
    port is dropped and an empty path becomes ``/``. Credentials and control characters
    are refused, and so is a URI outside the schema's 12 to 2,048 characters. ``field``
    names the value in the error (``"loc"``, ``"image.loc"``, ...).
    """
    if (
        type(value) is str
        and MIN_URL_LENGTH <= len(value) <= MAX_URL_LENGTH
        and _WRITTEN_URL.match(value) is not None
        and ("%" not in value or _STRAY_PERCENT.search(value) is None)
    ):
        return value
    if not isinstance(value, str):
        raise InvalidEntryError(field, value, "must be a str")
    url = _general_url(value, field)
    if len(url) > MAX_URL_LENGTH:
        raise InvalidEntryError(
            field, value, f"is {len(url)} characters as a URI; the limit is {MAX_URL_LENGTH}"
        )
    if len(url) < MIN_URL_LENGTH:
        raise InvalidEntryError(
            field, value, f"is shorter than the schema's minimum of {MIN_URL_LENGTH} characters"
        )
    return url


def normalise_urls(values: Sequence[Any], field: str = "loc") -> Sequence[str]:
    """Return ``[normalise_url(value, field) for value in values]``, or raise its error.

    The batch form of :func:`normalise_url`, for writers of many URLs: a batch whose
    URLs all are in their written form (see :func:`_written_urls`), as a page's URLs
    from one site usually are, is checked at once and returned as it is.
    """
    if _written_urls(values):
        return values
    return [normalise_url(value, field) for value in values]


def _written_urls(values: Sequence[Any]) -> bool:
    """Whether :func:`normalise_url` returns every one of ``values`` as it is.

    Its first test, for a batch: each value a ``str`` of 12 to 2,048 characters that
    ``_WRITTEN_URL`` matches, with no stray ``%``. The URLs of a page share their
    scheme and host, so the head ``_WRITTEN_URL`` matches first (scheme, host, first
    slash) is matched once, on the first value; a value starting with that text has
    that head too (the pattern cannot backtrack), and matches when the rest is made of
    ``_URI_CHARS``. That rest is checked for the whole batch joined by newlines (a
    character no URL here holds, so exactly ``len(values) - 1`` of them) in one pass,
    and so is the stray ``%`` (a newline after it is no hex digit, as the end of a
    value is not). A batch of any other shape, whatever its URLs, is left to the
    one-by-one form.
    """
    if not values or set(map(type, values)) != {str}:
        return False
    found = _WRITTEN_HEAD.match(values[0])
    return (
        found is not None
        and _lengths_within(values, len(found.group()))
        and _written_after(found.group(), "\n".join(values), len(values) - 1)
    )


def _lengths_within(values: Sequence[str], head: int) -> bool:
    # Every value starts with a head of this length, which may make the minimum sure.
    shortest = head >= MIN_URL_LENGTH or min(map(len, values)) >= MIN_URL_LENGTH
    return shortest and max(map(len, values)) <= MAX_URL_LENGTH


def _written_after(head: str, text: str, newlines: int) -> bool:
    # The values joined as ``text``: each starts with ``head`` and holds no newline,
    # and all of it is _URI_CHARS (heads included) with no stray '%'.
    return (
        text.count("\n") == newlines
        and text.count("\n" + head) == newlines
        and text.isascii()
        and not text.encode("ascii").translate(None, _BATCH_BYTES)
        and ("%" not in text or _STRAY_PERCENT.search(text) is None)
    )


def _general_url(value: str, field: str) -> str:
    """``value`` taken apart and put together as a URI (no length check)."""
    if _CONTROL.search(value):
        raise InvalidEntryError(field, value, "contains a control character")
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        raise InvalidEntryError(field, value, f"is not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise InvalidEntryError(field, value, "must be an absolute http:// or https:// URL")
    if parts.username is not None or parts.password is not None:
        raise InvalidEntryError(field, value, "must not contain credentials")
    host = _normalise_host(parts.hostname or "", value, field)
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    return f"{scheme}://{netloc}{_encoded_rest(parts, value, field)}"


def _encoded_rest(parts: SplitResult, value: str, field: str) -> str:
    """The path, query and fragment of ``parts``, percent-encoded as a URI holds them."""
    try:
        rest = quote(_STRAY_PERCENT.sub("%25", parts.path or "/"), safe=_SAFE_PATH)
        # A present-but-empty query or fragment ("?" / "#") is kept as written: it is
        # part of the URL the application generated.
        if "?" in value.partition("#")[0]:
            rest += "?" + quote(_STRAY_PERCENT.sub("%25", parts.query), safe=_SAFE_QUERY)
        if "#" in value:
            rest += "#" + quote(_STRAY_PERCENT.sub("%25", parts.fragment), safe=_SAFE_QUERY)
    except UnicodeEncodeError:
        raise InvalidEntryError(field, value, "contains text that is not valid Unicode") from None
    return rest


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


# --- lastmod --------------------------------------------------------------------------


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
        return _datetime_text(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str):
        return _text_lastmod(value)
    raise InvalidEntryError("lastmod", value, "must be a date, datetime or ISO 8601 str")


# A lastmod text in its written form: a day, or a day and a time as ``isoformat()``
# writes them (whole seconds or six digits of a fraction that is not zero, an offset the
# schema can write other than "-00:00"). Such a text is its own normal form once
# ``fromisoformat()`` reads it (the pattern cannot tell 2023-02-29), and what a
# database column of ``isoformat()`` texts holds.
_DAY = r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])"
_TIME = r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.(?!0{6})[0-9]{6})?"
_OFFSET = r"(?:\+(?:0[0-9]|1[0-3]):[0-5][0-9]|-(?!00:00)(?:0[0-9]|1[0-3]):[0-5][0-9]|[+-]14:00)"
_WRITTEN_LASTMOD = rf"{_DAY}(?:{_TIME}{_OFFSET})?"
# Texts in their written form joined by newlines, for normalise_lastmods.
_WRITTEN_LASTMODS = re.compile(rf"(?:{_WRITTEN_LASTMOD}\n)*+{_WRITTEN_LASTMOD}")


def normalise_lastmods(values: Sequence[Any]) -> Sequence[str]:
    """Return ``[normalise_lastmod(value) for value in values]``, or raise its error.

    The batch form of :func:`normalise_lastmod`, for writers of many entries: a batch
    of texts all in their written form (see :func:`_written_lastmods`), as a column of
    ``isoformat()`` texts is, is checked at once and returned as it is.
    """
    if _written_lastmods(values):
        return values
    return [normalise_lastmod(value) for value in values]


def _written_lastmods(values: Sequence[Any]) -> bool:
    """Whether :func:`normalise_lastmod` returns every one of ``values`` as it is: each
    a ``str`` of the written form (``_WRITTEN_LASTMOD``, matched over the batch joined by
    newlines, which no such text holds) that ``fromisoformat()`` reads."""
    if not values or set(map(type, values)) != {str}:
        return False
    text = "\n".join(values)
    return (
        text.count("\n") == len(values) - 1
        and _WRITTEN_LASTMODS.fullmatch(text) is not None
        and _readable(values)
    )


def _readable(texts: Sequence[str]) -> bool:
    # Whether fromisoformat() reads every one of texts (a day the calendar has).
    try:
        for _ in map(datetime.fromisoformat, texts):
            pass
    except ValueError:
        return False
    return True


def _text_lastmod(text: str) -> str:
    """``normalise_lastmod`` of ISO 8601 text: the date or datetime it parses to."""
    try:
        if "T" in text or " " in text.strip():
            return _datetime_text(datetime.fromisoformat(text))
        return date.fromisoformat(text).isoformat()
    except ValueError:  # InvalidEntryError included: the text is named as unreadable
        raise InvalidEntryError(
            "lastmod", text, "is not an ISO 8601 date (YYYY-MM-DD) or date-time"
        ) from None


_TWO_DIGITS = tuple(f"{number:02d}" for number in range(60))


def _datetime_text(moment: datetime) -> str:
    """``moment`` as ``isoformat()`` writes it, in a zone the schema can write.

    Naive is UTC; an offset the schema cannot write (seconds, beyond ±14:00) is
    replaced by the same instant in UTC. The text is put together from its parts:
    ``isoformat()`` asks the zone for its offset and formats every number, which
    costs more than all the rest of an entry.
    """
    zone = moment.tzinfo
    if zone is not None and type(zone) is not timezone:
        # A zone whose offset depends on the date (zoneinfo, pytz): this moment's own.
        offset = moment.utcoffset()
        zone = None if offset is None else timezone(offset)
    head = _day_in_zone(moment.toordinal(), zone)
    if head is None:
        # An offset the schema cannot write: the same instant in UTC.
        return _datetime_text(_in_utc(moment))
    day, offset_text = head
    two = _TWO_DIGITS
    fraction = f".{moment.microsecond:06d}" if moment.microsecond else ""
    return (
        f"{day}{two[moment.hour]}:{two[moment.minute]}:{two[moment.second]}{fraction}{offset_text}"
    )


@lru_cache(maxsize=1024)
def _day_in_zone(ordinal: int, zone: timezone | None) -> tuple[str, str] | None:
    """The text of the day ``ordinal`` (``date.toordinal()``) with its "T", and of the
    fixed offset ``zone`` ("+00:00" for none: naive is UTC); None when the schema
    cannot write that offset (not whole minutes, or beyond ±14:00).

    The lastmods of a page fall on few days, in one or two zones: a day's text and a
    zone's offset are made once, instead of asking each datetime for its offset.
    """
    offset = timedelta(0) if zone is None else zone.utcoffset(None)
    seconds = offset.days * 86_400 + offset.seconds
    if offset.microseconds or seconds % 60 or not -50_400 <= seconds <= 50_400:
        return None
    hours, minutes = divmod(abs(seconds) // 60, 60)
    sign = "-" if seconds < 0 else "+"
    return f"{date.fromordinal(ordinal).isoformat()}T", f"{sign}{hours:02d}:{minutes:02d}"


def _in_utc(moment: datetime) -> datetime:
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise InvalidEntryError(
            "lastmod", moment, "falls outside years 1-9999 once converted to UTC"
        ) from None


# --- changefreq and priority ----------------------------------------------------------


def normalise_changefreq(value: Any) -> ChangeFreq:
    """Return ``value`` as a :class:`ChangeFreq`: a member, or one of its words in any case."""
    found = _CHANGEFREQ_BY_WORD.get(value)  # a member hashes as its word
    if found is None and isinstance(value, str):
        found = _CHANGEFREQ_BY_WORD.get(value.lower())
    if found is None:
        words = ", ".join(_CHANGEFREQ_BY_WORD)
        raise InvalidEntryError("changefreq", value, f"must be one of {words}")
    return found


def normalise_priority(value: Any) -> float:
    """Return ``value`` as a float from 0.0 to 1.0; an int, float or Decimal is accepted."""
    number = value if type(value) is float else _priority_number(value)
    if not 0.0 <= number <= 1.0:  # NaN fails both comparisons
        raise InvalidEntryError("priority", value, "must be between 0.0 and 1.0")
    # Adding 0.0 turns -0.0 into 0.0: equal priorities must render to equal bytes.
    return number + 0.0


def _priority_number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        raise InvalidEntryError("priority", value, "must be a number from 0.0 to 1.0")
    try:
        return float(value)
    except (ValueError, OverflowError):  # a signalling NaN, an int beyond float range
        raise InvalidEntryError("priority", value, "must be between 0.0 and 1.0") from None


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
