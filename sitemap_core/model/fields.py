"""What the image and video values share: field checks, XML output, an immutable base.

Every check returns the normalised value or raises
:class:`~sitemap_core.errors.InvalidEntryError` naming the dotted field
(``"video.duration"``); every output helper escapes what it writes. :class:`_Value` is
the frame of each value: fields set once in ``__init__``, the XML fragment rendered
then, equality by that fragment.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from datetime import timedelta
from decimal import Decimal, InvalidOperation
from typing import Any, NoReturn, TypeVar

from sitemap_core.errors import InvalidEntryError
from sitemap_core.model.frozen import Frozen
from sitemap_core.model.values import normalise_lastmod, normalise_url
from sitemap_core.model.xmltext import check_xml_text, escape

# Bounds that only keep the written text sane. The XSD types are unbounded, but a
# Decimal such as 1E+1000000 would render as a million digits, and Python refuses to
# turn an int of more than 4,300 digits into text; nothing real comes near these.
_MAX_COUNT = 10**18
_MAX_DECIMAL_PLACES = 32
_MAX_DECIMAL_INTEGER_DIGITS = 15
_ONE = Decimal(1)

_T = TypeVar("_T")

# --- text and attribute output ------------------------------------------------------------

# escape() leaves tab, LF and CR as they are. A parser turns a literal CR in element text
# into LF, and tab / LF / CR in an attribute value into spaces, so those are written as
# character references: the text read back is then the text that was validated.
_ATTR_WHITESPACE = {"\t": "&#9;", "\n": "&#10;", "\r": "&#13;"}


def _text(value: str) -> str:
    text = escape(value)
    if "\r" in text:
        text = text.replace("\r", "&#13;")
    return text


def _attr(value: str) -> str:
    text = escape(value)
    for char, reference in _ATTR_WHITESPACE.items():
        if char in text:
            text = text.replace(char, reference)
    return text


def _element(prefix: str, name: str, content: str, attributes: str = "") -> str:
    """``content`` and ``attributes`` are already escaped."""
    return f"<{prefix}:{name}{attributes}>{content}</{prefix}:{name}>"


def _optional_element(
    prefix: str, name: str, value: _T | None, text: Callable[[_T], str] = str
) -> str:
    """The element of ``value`` written by ``text`` (which escapes), or "" for None."""
    return "" if value is None else _element(prefix, name, text(value))


# --- field checks ---------------------------------------------------------------------------


def _fail(field: str, value: object, reason: str) -> NoReturn:
    try:
        repr(value)
    except ValueError:
        # An int longer than sys.get_int_max_str_digits() has no repr(); the error's
        # message is built from repr(value), so name the value instead of crashing there.
        value = f"<{type(value).__name__} too large to show>"
    raise InvalidEntryError(field, value, reason)


def _date(value: object, field: str) -> str:
    """W3C date / date-time text, with errors naming ``field`` rather than ``lastmod``."""
    try:
        return normalise_lastmod(value)
    except InvalidEntryError as exc:
        raise InvalidEntryError(field, value, exc.reason) from None


def _bool(value: object, field: str) -> bool:
    # Only real bools: the strings "no" / "false" are truthy, and guessing which words
    # mean what would hide mistakes.
    if not isinstance(value, bool):
        _fail(field, value, "must be a bool (True or False)")
    return value


def _yes_no(value: bool) -> str:
    return "yes" if value else "no"


def _whole(
    value: object,
    field: str,
    *,
    minimum: int,
    maximum: int,
    allow_timedelta: bool = False,
) -> int:
    """An integer in ``[minimum, maximum]``: an int, or a float / timedelta without fraction."""
    number: int
    if isinstance(value, bool):
        _fail(field, value, "must be a whole number, not a bool")
    if isinstance(value, int):
        number = value
    elif isinstance(value, float):
        if not value.is_integer():
            _fail(field, value, "must be a whole number")
        number = int(value)
    elif allow_timedelta and isinstance(value, timedelta):
        if value.microseconds:
            _fail(field, value, "must be a whole number of seconds")
        number = value.days * 86_400 + value.seconds
    else:
        kinds = "an int or a timedelta" if allow_timedelta else "an int"
        _fail(field, value, f"must be {kinds}")
    if not minimum <= number <= maximum:
        _fail(field, value, f"must be from {minimum} to {maximum}")
    return number


def _decimal(value: object, field: str, *, maximum: Decimal | None = None) -> Decimal:
    """A finite, non-negative decimal from an int, float, Decimal or decimal text."""
    number = _as_decimal(value, field)
    if not number.is_finite():
        _fail(field, value, "must be a finite number")
    if number < 0:
        _fail(field, value, "must not be negative")
    if maximum is not None and number > maximum:
        _fail(field, value, f"must be at most {maximum}")
    if number.adjusted() >= _MAX_DECIMAL_INTEGER_DIGITS:
        _fail(field, value, "is too large")
    exponent = number.as_tuple().exponent
    assert isinstance(exponent, int)  # a finite Decimal's is; only NaN / Infinity have 'n' / 'F'
    if exponent < -_MAX_DECIMAL_PLACES:
        _fail(field, value, f"has more than {_MAX_DECIMAL_PLACES} decimal places")
    if exponent > 0:
        # Decimal("1E+2") is a whole number; keep it as Decimal("100"), as it is written.
        number = number.quantize(_ONE)
    # -0 is not negative but would be written "-0"; copy_abs() keeps trailing zeros.
    return number.copy_abs()


def _as_decimal(value: object, field: str) -> Decimal:
    """``value`` as a Decimal, any Decimal (NaN and infinities too), or the error."""
    if isinstance(value, bool):
        _fail(field, value, "must be a number, not a bool")
    if isinstance(value, Decimal):
        return value
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        # repr() is the shortest text that reads back as the same float: 4.7 stays 4.7
        # instead of Decimal(4.7)'s 4.70000000000000017763568394002504646778106689453125.
        return Decimal(repr(value)) if math.isfinite(value) else Decimal("NaN")
    if isinstance(value, str):
        try:
            return Decimal(value.strip())
        except InvalidOperation:
            _fail(field, value, "is not a decimal number")
    _fail(field, value, "must be an int, float, Decimal or decimal str")


def _decimal_text(number: Decimal) -> str:
    # Fixed-point: xsd:decimal has no exponent notation (str(Decimal("1E+2")) is "1E+2").
    return format(number, "f")


def _choice(value: object, field: str, choices: tuple[str, ...]) -> str:
    """One of ``choices``, matched case-insensitively, returned as written in ``choices``."""
    if isinstance(value, str):
        word = value.strip().lower()
        if word in choices:
            return word
    _fail(field, value, f"must be one of {', '.join(choices)}")


def _or_none(check: Callable[..., _T], value: object, field: str, **options: Any) -> _T | None:
    """``check(value, field, **options)``, or None for an absent value (None)."""
    return None if value is None else check(value, field, **options)


def _optional_text(value: object, field: str, *, max_length: int | None = None) -> str | None:
    return None if value is None else check_xml_text(value, field, max_length=max_length)


def _optional_url(value: object, field: str) -> str | None:
    return None if value is None else normalise_url(value, field)


def _sequence(value: object, field: str) -> tuple[Any, ...]:
    """The items of an iterable that is not text (a str would iterate by character)."""
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        _fail(field, value, "must be an iterable (list, tuple ...), not a single value")
    return tuple(value)


def _words(value: object, field: str) -> tuple[Any, ...]:
    """A list of codes, given as an iterable or as one whitespace-separated str."""
    if isinstance(value, str):
        return tuple(value.split())
    return _sequence(value, field)


# --- the shared frame -----------------------------------------------------------------------


def _rebuild(cls: type[_Value], args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Value:
    return cls(*args, **kwargs)


class _Value(Frozen):
    """Immutable value with a pre-rendered fragment; equal when the fragments are equal.

    The fragment is a function of the normalised fields only, so comparing fragments
    compares the values.
    """

    __slots__ = ("_xml",)

    _xml: str

    def _freeze(self, **fields: Any) -> None:
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def _arguments(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The normalised values as constructor arguments (building from them is a no-op)."""
        raise NotImplementedError

    def to_xml(self) -> str:
        """Return the XML fragment of this value (rendered once, when it was built)."""
        return self._xml

    def __reduce__(self) -> tuple[Any, ...]:
        # Default pickling of __slots__ would go through the refused __setattr__.
        args, kwargs = self._arguments()
        return (_rebuild, (type(self), args, kwargs))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Value) or type(other) is not type(self):
            return NotImplemented
        return self._xml == other._xml

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._xml))

    def __repr__(self) -> str:
        args, kwargs = self._arguments()
        shown = [repr(arg) for arg in args]
        shown += [f"{name}={value!r}" for name, value in kwargs.items() if value not in (None, ())]
        return f"{type(self).__name__}({', '.join(shown)})"
