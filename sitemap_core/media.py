"""Google's image and video sitemap extensions: validated values that render once.

An :class:`Image` or a :class:`Video` is valid once built. Every argument is checked and
normalised in ``__init__``; the XML fragment that goes inside ``<url>`` is rendered there
too and kept, so :meth:`Image.to_xml` / :meth:`Video.to_xml` cost nothing per request.
The fragments use the prefixes ``image:`` and ``video:``; the writer declares them on the
root element (:data:`Image.NAMESPACE`, :data:`Video.NAMESPACE`).

Parts of a video that carry several values or attributes are small frozen classes of
their own (:class:`Price`, :class:`Restriction`, :class:`Platform`,
:class:`ContentSegment`, :class:`TvShow`, :class:`VideoId`); one-attribute pairs are plain
keyword arguments of :class:`Video` (``player_loc`` + ``allow_embed`` / ``autoplay``,
``gallery_loc`` + ``gallery_title``, ``uploader`` + ``uploader_info``).

A bad value raises :class:`~sitemap_core.errors.InvalidEntryError` whose ``field`` is
dotted: ``"image.loc"``, ``"video.duration"``, ``"video.price"``, ...

Sources: the official XSDs (``sitemap-image.xsd``, ``sitemap-video.xsd``, Google 2010),
which fix element order and value types, and Google's current documentation, which adds
the limits the XSDs do not state (duration at least 1 second, at most 32 tags, ...).
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Iterable
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar, Final, NoReturn

from .errors import InvalidEntryError
from .frozen import Frozen
from .limits import MAX_URL_LENGTH
from .namespaces import IMAGE_NS, VIDEO_NS
from .values import _COMMON_URL, _STRAY_PERCENT, normalise_lastmod, normalise_url
from .xmltext import check_xml_text, escape, escape_uri

__all__ = [
    "COUNTRY_CODES",
    "MAX_VIDEO_CATEGORY_LENGTH",
    "MAX_VIDEO_DESCRIPTION_LENGTH",
    "MAX_VIDEO_DURATION",
    "MAX_VIDEO_RATING",
    "MAX_VIDEO_TAGS",
    "MAX_VIDEO_TITLE_LENGTH",
    "MAX_VIDEO_UPLOADER_LENGTH",
    "MIN_VIDEO_DURATION",
    "ContentSegment",
    "Image",
    "Platform",
    "Price",
    "Restriction",
    "TvShow",
    "Video",
    "VideoId",
]

# Limits of the video extension. They live here rather than in limits.py because only
# this module uses them; each says where it comes from.

#: Longest video, in seconds: 8 hours (XSD ``maxInclusive 28800``; Google's documentation).
MAX_VIDEO_DURATION: Final = 28_800
#: Shortest video, in seconds. The XSD allows 0, Google's documentation asks for 1 or more.
MIN_VIDEO_DURATION: Final = 1
#: Most ``<video:tag>`` elements per video (XSD ``maxOccurs 32``; Google's documentation).
MAX_VIDEO_TAGS: Final = 32
#: Longest ``<video:title>``, in characters (XSD ``maxLength 100``; Google's documentation).
MAX_VIDEO_TITLE_LENGTH: Final = 100
#: Longest ``<video:description>``, in characters (XSD ``maxLength 2048``; Google).
MAX_VIDEO_DESCRIPTION_LENGTH: Final = 2_048
#: Longest ``<video:category>``, in characters (XSD ``maxLength 256``).
MAX_VIDEO_CATEGORY_LENGTH: Final = 256
#: Longest ``<video:uploader>`` name, in characters (Google's documentation; no XSD limit).
MAX_VIDEO_UPLOADER_LENGTH: Final = 255
#: Highest rating (XSD ``maxInclusive 5``).
MAX_VIDEO_RATING: Final = Decimal(5)

# Bounds that only keep the written text sane. The XSD types are unbounded, but a
# Decimal such as 1E+1000000 would render as a million digits, and Python refuses to
# turn an int of more than 4,300 digits into text; nothing real comes near these.
_MAX_COUNT = 10**18
_MAX_DECIMAL_PLACES = 32
_MAX_DECIMAL_INTEGER_DIGITS = 15
_ONE = Decimal(1)

# ISO 3166-1 alpha-2, one line per first letter so a missing or extra code is easy to spot.
_COUNTRY_TABLE = """
    AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ
    BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ
    CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ
    DE DJ DK DM DO DZ
    EC EE EG EH ER ES ET
    FI FJ FK FM FO FR
    GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY
    HK HM HN HR HT HU
    ID IE IL IM IN IO IQ IR IS IT
    JE JM JO JP
    KE KG KH KI KM KN KP KR KW KY KZ
    LA LB LC LI LK LR LS LT LU LV LY
    MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ
    NA NC NE NF NG NI NL NO NP NR NU NZ
    OM
    PA PE PF PG PH PK PL PM PN PR PS PT PW PY
    QA
    RE RO RS RU RW
    SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ
    TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ
    UA UG UM US UY UZ
    VA VC VE VG VI VN VU
    WF WS
    YE YT
    ZA ZM ZW
"""
#: Every officially assigned ISO 3166-1 alpha-2 code (249 codes, as of 2023). User-assigned
#: codes such as ``XK`` and reserved ones such as ``UK`` or ``EU`` are not countries to
#: Google and are refused.
COUNTRY_CODES: Final = frozenset(_COUNTRY_TABLE.split())

_RELATIONSHIPS: Final = ("allow", "deny")
_PLATFORMS: Final = ("web", "mobile", "tv")
_PRICE_TYPES: Final = ("rent", "purchase")
_RESOLUTIONS: Final = ("hd", "sd")
_TV_VIDEO_TYPES: Final = ("full", "preview", "clip", "interview", "news", "other")
_VIDEO_ID_TYPES: Final = (
    "tms:series",
    "tms:program",
    "rovi:series",
    "rovi:program",
    "freebase",
    "url",
)
_CURRENCY = re.compile(r"[A-Za-z]{3}\Z")
_COUNTRY = re.compile(r"[A-Za-z]{2}\Z")


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
    number: Decimal
    if isinstance(value, bool):
        _fail(field, value, "must be a number, not a bool")
    if isinstance(value, Decimal):
        number = value
    elif isinstance(value, int):
        number = Decimal(value)
    elif isinstance(value, float):
        # repr() is the shortest text that reads back as the same float: 4.7 stays 4.7
        # instead of Decimal(4.7)'s 4.70000000000000017763568394002504646778106689453125.
        number = Decimal(repr(value)) if math.isfinite(value) else Decimal("NaN")
    elif isinstance(value, str):
        try:
            number = Decimal(value.strip())
        except InvalidOperation:
            _fail(field, value, "is not a decimal number")
    else:
        _fail(field, value, "must be an int, float, Decimal or decimal str")
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


# --- images -------------------------------------------------------------------------------


class Image(_Value):
    """One ``<image:image>`` of a page: the location of an image and, optionally, its details.

    * ``loc``: absolute http(s) URL of the image (any host: images often live on a CDN),
      normalised as :func:`~sitemap_core.values.normalise_url` does.
    * ``caption``, ``title``, ``geo_location``: text XML can hold, stripped, not empty.
    * ``license``: absolute http(s) URL of the image's licence.

    Google stopped reading ``caption``, ``title``, ``geo_location`` and ``license`` in 2022
    and now ignores them. They are still valid under the official XSD, so they are
    accepted and written, for other readers.

    A page may carry up to 1,000 images (``sitemap_core.limits.MAX_IMAGES_PER_URL``). An
    ``Image`` cannot check that; whoever collects the images of an entry does.
    """

    __slots__ = ("caption", "geo_location", "license", "loc", "title")

    #: Namespace of the image extension.
    NAMESPACE: ClassVar[str] = IMAGE_NS
    #: Prefix the fragment is written with; the writer binds it to :attr:`NAMESPACE`.
    PREFIX: ClassVar[str] = "image"

    loc: str
    caption: str | None
    title: str | None
    geo_location: str | None
    license: str | None

    def __init__(
        self,
        loc: str,
        *,
        caption: str | None = None,
        title: str | None = None,
        geo_location: str | None = None,
        license: str | None = None,
    ) -> None:
        if caption is None and title is None and geo_location is None and license is None:
            # The common image: a plain URL, by Entry's inlined check (same result as
            # normalise_url for the URLs it accepts), in one f-string.
            if (
                type(loc) is str
                and 12 <= len(loc) <= MAX_URL_LENGTH
                and _COMMON_URL.match(loc) is not None
                and ("%" not in loc or _STRAY_PERCENT.search(loc) is None)
            ):
                url = loc
            else:
                url = normalise_url(loc, "image.loc")
            store = object.__setattr__
            store(self, "loc", url)
            store(self, "caption", None)
            store(self, "title", None)
            store(self, "geo_location", None)
            store(self, "license", None)
            store(
                self, "_xml", f"<image:image><image:loc>{escape_uri(url)}</image:loc></image:image>"
            )
            return
        self._freeze(
            loc=normalise_url(loc, "image.loc"),
            caption=_optional_text(caption, "image.caption"),
            title=_optional_text(title, "image.title"),
            geo_location=_optional_text(geo_location, "image.geo_location"),
            license=_optional_url(license, "image.license"),
        )
        # The XSD's sequence: loc, caption, geo_location, title, license.
        parts = ["<image:image>", _element("image", "loc", escape_uri(self.loc))]
        if self.caption is not None:
            parts.append(_element("image", "caption", _text(self.caption)))
        if self.geo_location is not None:
            parts.append(_element("image", "geo_location", _text(self.geo_location)))
        if self.title is not None:
            parts.append(_element("image", "title", _text(self.title)))
        if self.license is not None:
            parts.append(_element("image", "license", escape_uri(self.license)))
        parts.append("</image:image>")
        self._freeze(_xml="".join(parts))

    def to_xml(self) -> str:
        """Return the ``<image:image>`` fragment (rendered once, when the image was built)."""
        return self._xml

    def _arguments(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.loc,), {
            "caption": self.caption,
            "title": self.title,
            "geo_location": self.geo_location,
            "license": self.license,
        }


# --- parts of a video ---------------------------------------------------------------------


class Price(_Value):
    """One ``<video:price>``: what viewing or downloading the video costs.

    * ``value``: a non-negative decimal: ``int``, ``float``, ``Decimal`` or decimal text
      (``"9.99"``). Kept as a ``Decimal`` and written in fixed-point notation (``1E+2``
      is written ``100``), trailing zeros kept (``Decimal("9.90")`` stays ``9.90``).
    * ``currency``: an ISO 4217 code, three ASCII letters, any case; stored upper case.
      Only the shape is checked (as the XSD does), not that the currency exists.
    * ``type``: ``"rent"`` or ``"purchase"`` (the XSD's words), or ``"own"``, Google's
      current word for ``"purchase"``, stored as ``"purchase"`` because the XSD knows no
      ``own``. Optional; Google assumes a purchase.
    * ``resolution``: ``"hd"`` or ``"sd"``, optional.

    Errors name the field ``"video.price"``. A video may list several prices, e.g. one per
    currency or resolution.
    """

    __slots__ = ("currency", "resolution", "type", "value")

    value: Decimal
    currency: str
    type: str | None
    resolution: str | None

    def __init__(
        self,
        value: int | float | Decimal | str,
        currency: str,
        *,
        type: str | None = None,
        resolution: str | None = None,
    ) -> None:
        field = "video.price"
        if not isinstance(currency, str) or not _CURRENCY.match(currency.strip()):
            _fail(field, currency, "currency must be an ISO 4217 code of three letters")
        if isinstance(type, str) and type.strip().lower() == "own":
            type = "purchase"
        self._freeze(
            value=_decimal(value, field),
            currency=currency.strip().upper(),
            type=None if type is None else _choice(type, field, _PRICE_TYPES),
            resolution=None if resolution is None else _choice(resolution, field, _RESOLUTIONS),
        )
        attributes = f' currency="{self.currency}"'
        if self.type is not None:
            attributes += f' type="{self.type}"'
        if self.resolution is not None:
            attributes += f' resolution="{self.resolution}"'
        self._freeze(_xml=_element("video", "price", _decimal_text(self.value), attributes))

    def _arguments(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.value, self.currency), {"type": self.type, "resolution": self.resolution}


class _Relationship(_Value):
    """Shared by :class:`Restriction` and :class:`Platform`: ``relationship`` + a word list."""

    __slots__ = ("relationship",)

    relationship: str
    _FIELD: ClassVar[str]
    _ELEMENT: ClassVar[str]

    def _render(self, words: tuple[str, ...]) -> None:
        content = " ".join(words)
        attributes = f' relationship="{self.relationship}"'
        self._freeze(_xml=_element("video", self._ELEMENT, content, attributes))

    def _relationship(self, value: object) -> str:
        return _choice(value, self._FIELD, _RELATIONSHIPS)


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    # Order kept (it is what the user wrote); duplicates say nothing more.
    return tuple(dict.fromkeys(items))


class Restriction(_Relationship):
    """``<video:restriction>``: countries where the video may (``allow``) or may not
    (``deny``) be played.

    ``countries`` is an iterable of ISO 3166-1 alpha-2 codes, or one str of codes
    separated by spaces. Each must be an officially assigned code (:data:`COUNTRY_CODES`);
    any case is accepted and stored upper case, duplicates dropped, order kept. At least
    one country is needed. Shorter spellings: ``Restriction.allow("FR", "BE")``,
    ``Restriction.deny("US")``. Errors name the field ``"video.restriction"``.
    """

    __slots__ = ("countries",)

    _FIELD = "video.restriction"
    _ELEMENT = "restriction"

    countries: tuple[str, ...]

    def __init__(self, relationship: str, countries: Iterable[str] | str) -> None:
        codes = []
        for code in _words(countries, self._FIELD):
            if not isinstance(code, str) or not _COUNTRY.match(code):
                _fail(self._FIELD, code, "is not a two-letter ISO 3166-1 country code")
            if code.upper() not in COUNTRY_CODES:
                _fail(self._FIELD, code, "is not an assigned ISO 3166-1 alpha-2 country code")
            codes.append(code.upper())
        if not codes:
            _fail(self._FIELD, countries, "needs at least one country code")
        self._freeze(relationship=self._relationship(relationship), countries=_unique(codes))
        self._render(self.countries)

    @classmethod
    def allow(cls, *countries: str) -> Restriction:
        """Return a restriction letting only ``countries`` play the video."""
        return cls("allow", countries)

    @classmethod
    def deny(cls, *countries: str) -> Restriction:
        """Return a restriction keeping ``countries`` from playing the video."""
        return cls("deny", countries)

    def _arguments(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.relationship, self.countries), {}


class Platform(_Relationship):
    """``<video:platform>``: platforms where the video may (``allow``) or may not
    (``deny``) be played.

    ``platforms`` is an iterable of ``"web"``, ``"mobile"`` and ``"tv"`` (any case, stored
    lower case), or one str of them separated by spaces; at least one, duplicates dropped.
    Shorter spellings: ``Platform.allow("web", "mobile")``, ``Platform.deny("tv")``.
    Errors name the field ``"video.platform"``.
    """

    __slots__ = ("platforms",)

    _FIELD = "video.platform"
    _ELEMENT = "platform"

    platforms: tuple[str, ...]

    def __init__(self, relationship: str, platforms: Iterable[str] | str) -> None:
        names = [_choice(name, self._FIELD, _PLATFORMS) for name in _words(platforms, self._FIELD)]
        if not names:
            _fail(self._FIELD, platforms, "needs at least one platform")
        self._freeze(relationship=self._relationship(relationship), platforms=_unique(names))
        self._render(self.platforms)

    @classmethod
    def allow(cls, *platforms: str) -> Platform:
        """Return a platform rule letting only ``platforms`` play the video."""
        return cls("allow", platforms)

    @classmethod
    def deny(cls, *platforms: str) -> Platform:
        """Return a platform rule keeping ``platforms`` from playing the video."""
        return cls("deny", platforms)

    def _arguments(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.relationship, self.platforms), {}


def _duration(value: object, field: str) -> int:
    return _whole(
        value,
        field,
        minimum=MIN_VIDEO_DURATION,
        maximum=MAX_VIDEO_DURATION,
        allow_timedelta=True,
    )


class ContentSegment(_Value):
    """One ``<video:content_segment_loc>``: a clip of a video published in parts.

    ``loc`` is an absolute http(s) URL; ``duration`` the clip's length in seconds, as for
    :class:`Video`. Google no longer documents this element; the XSD still has it.
    Errors name ``"video.content_segment_loc"`` / ``"video.content_segment_loc.duration"``.
    """

    __slots__ = ("duration", "loc")

    loc: str
    duration: int | None

    def __init__(self, loc: str, *, duration: int | float | timedelta | None = None) -> None:
        field = "video.content_segment_loc"
        self._freeze(
            loc=normalise_url(loc, field),
            duration=None if duration is None else _duration(duration, f"{field}.duration"),
        )
        attributes = "" if self.duration is None else f' duration="{self.duration}"'
        self._freeze(
            _xml=_element("video", "content_segment_loc", escape_uri(self.loc), attributes)
        )

    def _arguments(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.loc,), {"duration": self.duration}


class TvShow(_Value):
    """``<video:tvshow>``: the TV show a video belongs to.

    * ``show_title``: text, required.
    * ``video_type``: ``full``, ``preview``, ``clip``, ``interview``, ``news`` or ``other``.
    * ``episode_title``: text; ``season_number`` / ``episode_number``: whole numbers from 1;
      ``premier_date``: first broadcast, as for ``Video.publication_date``.

    Google no longer documents this element; the XSD still has it. Errors name
    ``"video.tvshow.<field>"``.
    """

    __slots__ = (
        "episode_number",
        "episode_title",
        "premier_date",
        "season_number",
        "show_title",
        "video_type",
    )

    show_title: str
    video_type: str
    episode_title: str | None
    season_number: int | None
    episode_number: int | None
    premier_date: str | None

    def __init__(
        self,
        show_title: str,
        video_type: str,
        *,
        episode_title: str | None = None,
        season_number: int | None = None,
        episode_number: int | None = None,
        premier_date: date | datetime | str | None = None,
    ) -> None:
        field = "video.tvshow"
        self._freeze(
            show_title=check_xml_text(show_title, f"{field}.show_title"),
            video_type=_choice(video_type, f"{field}.video_type", _TV_VIDEO_TYPES),
            episode_title=_optional_text(episode_title, f"{field}.episode_title"),
            season_number=None
            if season_number is None
            else _whole(season_number, f"{field}.season_number", minimum=1, maximum=_MAX_COUNT),
            episode_number=None
            if episode_number is None
            else _whole(episode_number, f"{field}.episode_number", minimum=1, maximum=_MAX_COUNT),
            premier_date=None
            if premier_date is None
            else _date(premier_date, f"{field}.premier_date"),
        )
        parts = [
            "<video:tvshow>",
            _element("video", "show_title", _text(self.show_title)),
            _element("video", "video_type", self.video_type),
        ]
        if self.episode_title is not None:
            parts.append(_element("video", "episode_title", _text(self.episode_title)))
        if self.season_number is not None:
            parts.append(_element("video", "season_number", str(self.season_number)))
        if self.episode_number is not None:
            parts.append(_element("video", "episode_number", str(self.episode_number)))
        if self.premier_date is not None:
            parts.append(_element("video", "premier_date", self.premier_date))
        parts.append("</video:tvshow>")
        self._freeze(_xml="".join(parts))

    def _arguments(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.show_title, self.video_type), {
            "episode_title": self.episode_title,
            "season_number": self.season_number,
            "episode_number": self.episode_number,
            "premier_date": self.premier_date,
        }


class VideoId(_Value):
    """One ``<video:id>``: an identifier of the video in some catalogue.

    ``type`` is one of ``tms:series``, ``tms:program``, ``rovi:series``, ``rovi:program``,
    ``freebase`` or ``url`` (the XSD's list); ``value`` is text. Google no longer
    documents this element; the XSD still has it. Errors name ``"video.id"``.
    """

    __slots__ = ("type", "value")

    type: str
    value: str

    def __init__(self, type: str, value: str) -> None:
        self._freeze(
            type=_choice(type, "video.id", _VIDEO_ID_TYPES),
            value=check_xml_text(value, "video.id"),
        )
        attributes = f' type="{self.type}"'
        self._freeze(_xml=_element("video", "id", _text(self.value), attributes))

    def _arguments(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.type, self.value), {}


def _parts(value: object, field: str, cls: type[_Value]) -> tuple[Any, ...]:
    """A tuple of ``cls`` instances from one instance or an iterable of them."""
    items = (value,) if isinstance(value, cls) else _sequence(value, field)
    for item in items:
        if not isinstance(item, cls):
            _fail(field, item, f"must be a {cls.__name__}")
    return items


def _needs(element: object, name: str, **attributes: object) -> None:
    """Refuse an attribute given without the element it belongs to."""
    if element is not None:
        return
    for attribute, value in attributes.items():
        if value is not None:
            _fail(f"video.{attribute}", value, f"is only allowed together with {name}")


# --- videos -------------------------------------------------------------------------------


class Video(_Value):
    """One ``<video:video>`` of a page.

    Required: ``thumbnail_loc``, ``title``, ``description``, and at least one of
    ``content_loc`` (the media file) and ``player_loc`` (a player page).

    * URLs (``thumbnail_loc``, ``content_loc``, ``player_loc``, ``gallery_loc``,
      ``uploader_info``): absolute http(s), normalised as
      :func:`~sitemap_core.values.normalise_url` does.
    * Text: a ``str`` XML can hold; stripped; not empty. ``title`` at most 100 characters,
      ``description`` 2,048, ``category`` 256, ``uploader`` 255.
    * ``allow_embed`` (with ``player_loc``): may Google embed the player; ``autoplay`` (with
      ``player_loc``): text Google may append to the player URL to start playing.
    * ``duration``: seconds from 1 to 28,800, as an ``int``, a ``float`` without fraction
      or a ``timedelta`` of whole seconds; stored as ``int``.
    * ``expiration_date``, ``publication_date``: ``date``, ``datetime`` or ISO 8601 text,
      stored as W3C text (see :func:`~sitemap_core.values.normalise_lastmod`).
    * ``rating``: 0 to 5 (``int``, ``float``, ``Decimal`` or decimal text); a ``Decimal``.
    * ``content_segments``: :class:`ContentSegment` values (or plain URLs).
    * ``view_count``: an ``int`` from 0.
    * ``tags``: up to 32 texts, in order (a single str is refused, not split).
    * ``family_friendly``, ``requires_subscription``, ``live``, ``allow_embed``: ``bool``
      only, written ``yes`` / ``no``. Strings such as ``"yes"`` are refused rather than
      guessed at.
    * ``restriction``: a :class:`Restriction`; ``platform``: a :class:`Platform`;
      ``prices``: one :class:`Price` or several; ``tvshow``: a :class:`TvShow`;
      ``ids``: one :class:`VideoId` or several.
    * ``gallery_loc`` + ``gallery_title``, ``uploader`` + ``uploader_info``: the title and
      the info URL only go with their element. Google wants ``uploader_info`` on the
      page's own host; a video does not know the page, so that is not checked here.

    Elements are written in the order of the XSD's sequence. Google has deprecated several
    (``category``, ``gallery_loc``, ``price``, ``tvshow``, ``id``, ``content_segment_loc``
    ...) but they remain valid under the XSD, so they are accepted and written.
    """

    __slots__ = (
        "allow_embed",
        "autoplay",
        "category",
        "content_loc",
        "content_segments",
        "description",
        "duration",
        "expiration_date",
        "family_friendly",
        "gallery_loc",
        "gallery_title",
        "ids",
        "live",
        "platform",
        "player_loc",
        "prices",
        "publication_date",
        "rating",
        "requires_subscription",
        "restriction",
        "tags",
        "thumbnail_loc",
        "title",
        "tvshow",
        "uploader",
        "uploader_info",
        "view_count",
    )

    #: Namespace of the video extension.
    NAMESPACE: ClassVar[str] = VIDEO_NS
    #: Prefix the fragment is written with; the writer binds it to :attr:`NAMESPACE`.
    PREFIX: ClassVar[str] = "video"

    thumbnail_loc: str
    title: str
    description: str
    content_loc: str | None
    player_loc: str | None
    allow_embed: bool | None
    autoplay: str | None
    duration: int | None
    expiration_date: str | None
    rating: Decimal | None
    content_segments: tuple[ContentSegment, ...]
    view_count: int | None
    publication_date: str | None
    tags: tuple[str, ...]
    category: str | None
    family_friendly: bool | None
    restriction: Restriction | None
    gallery_loc: str | None
    gallery_title: str | None
    prices: tuple[Price, ...]
    requires_subscription: bool | None
    uploader: str | None
    uploader_info: str | None
    tvshow: TvShow | None
    platform: Platform | None
    live: bool | None
    ids: tuple[VideoId, ...]

    def __init__(
        self,
        thumbnail_loc: str,
        title: str,
        description: str,
        *,
        content_loc: str | None = None,
        player_loc: str | None = None,
        allow_embed: bool | None = None,
        autoplay: str | None = None,
        duration: int | float | timedelta | None = None,
        expiration_date: date | datetime | str | None = None,
        rating: int | float | Decimal | str | None = None,
        content_segments: Iterable[ContentSegment | str] = (),
        view_count: int | None = None,
        publication_date: date | datetime | str | None = None,
        tags: Iterable[str] = (),
        category: str | None = None,
        family_friendly: bool | None = None,
        restriction: Restriction | None = None,
        gallery_loc: str | None = None,
        gallery_title: str | None = None,
        prices: Price | Iterable[Price] = (),
        requires_subscription: bool | None = None,
        uploader: str | None = None,
        uploader_info: str | None = None,
        tvshow: TvShow | None = None,
        platform: Platform | None = None,
        live: bool | None = None,
        ids: VideoId | Iterable[VideoId] = (),
    ) -> None:
        if content_loc is None and player_loc is None:
            _fail("video.content_loc", None, "a video needs content_loc or player_loc (or both)")
        _needs(player_loc, "player_loc", allow_embed=allow_embed, autoplay=autoplay)
        _needs(gallery_loc, "gallery_loc", gallery_title=gallery_title)
        _needs(uploader, "uploader", uploader_info=uploader_info)
        segments = tuple(
            item if isinstance(item, ContentSegment) else ContentSegment(item)
            for item in _sequence(content_segments, "video.content_segment_loc")
        )
        tag_items = _sequence(tags, "video.tag")
        if len(tag_items) > MAX_VIDEO_TAGS:
            _fail("video.tag", tags, f"has {len(tag_items)} tags; the limit is {MAX_VIDEO_TAGS}")
        if restriction is not None and not isinstance(restriction, Restriction):
            _fail("video.restriction", restriction, "must be a Restriction")
        if platform is not None and not isinstance(platform, Platform):
            _fail("video.platform", platform, "must be a Platform")
        if tvshow is not None and not isinstance(tvshow, TvShow):
            _fail("video.tvshow", tvshow, "must be a TvShow")
        self._freeze(
            thumbnail_loc=normalise_url(thumbnail_loc, "video.thumbnail_loc"),
            title=check_xml_text(title, "video.title", max_length=MAX_VIDEO_TITLE_LENGTH),
            description=check_xml_text(
                description, "video.description", max_length=MAX_VIDEO_DESCRIPTION_LENGTH
            ),
            content_loc=_optional_url(content_loc, "video.content_loc"),
            player_loc=_optional_url(player_loc, "video.player_loc"),
            allow_embed=None if allow_embed is None else _bool(allow_embed, "video.allow_embed"),
            autoplay=_optional_text(autoplay, "video.autoplay"),
            duration=None if duration is None else _duration(duration, "video.duration"),
            expiration_date=None
            if expiration_date is None
            else _date(expiration_date, "video.expiration_date"),
            rating=None
            if rating is None
            else _decimal(rating, "video.rating", maximum=MAX_VIDEO_RATING),
            content_segments=segments,
            view_count=None
            if view_count is None
            else _whole(view_count, "video.view_count", minimum=0, maximum=_MAX_COUNT),
            publication_date=None
            if publication_date is None
            else _date(publication_date, "video.publication_date"),
            tags=tuple(check_xml_text(tag, "video.tag") for tag in tag_items),
            category=_optional_text(
                category, "video.category", max_length=MAX_VIDEO_CATEGORY_LENGTH
            ),
            family_friendly=None
            if family_friendly is None
            else _bool(family_friendly, "video.family_friendly"),
            restriction=restriction,
            gallery_loc=_optional_url(gallery_loc, "video.gallery_loc"),
            gallery_title=_optional_text(gallery_title, "video.gallery_title"),
            prices=_parts(prices, "video.price", Price),
            requires_subscription=None
            if requires_subscription is None
            else _bool(requires_subscription, "video.requires_subscription"),
            uploader=_optional_text(
                uploader, "video.uploader", max_length=MAX_VIDEO_UPLOADER_LENGTH
            ),
            uploader_info=_optional_url(uploader_info, "video.uploader_info"),
            tvshow=tvshow,
            platform=platform,
            live=None if live is None else _bool(live, "video.live"),
            ids=_parts(ids, "video.id", VideoId),
        )
        self._freeze(_xml=self._render())

    def _render(self) -> str:
        # Exactly the XSD's xsd:sequence; any other order fails validation.
        parts = [
            "<video:video>",
            _element("video", "thumbnail_loc", escape_uri(self.thumbnail_loc)),
            _element("video", "title", _text(self.title)),
            _element("video", "description", _text(self.description)),
        ]
        if self.content_loc is not None:
            parts.append(_element("video", "content_loc", escape_uri(self.content_loc)))
        if self.player_loc is not None:
            attributes = ""
            if self.allow_embed is not None:
                attributes += f' allow_embed="{_yes_no(self.allow_embed)}"'
            if self.autoplay is not None:
                attributes += f' autoplay="{_attr(self.autoplay)}"'
            parts.append(_element("video", "player_loc", escape_uri(self.player_loc), attributes))
        if self.duration is not None:
            parts.append(_element("video", "duration", str(self.duration)))
        if self.expiration_date is not None:
            parts.append(_element("video", "expiration_date", self.expiration_date))
        if self.rating is not None:
            parts.append(_element("video", "rating", _decimal_text(self.rating)))
        parts.extend(segment.to_xml() for segment in self.content_segments)
        if self.view_count is not None:
            parts.append(_element("video", "view_count", str(self.view_count)))
        if self.publication_date is not None:
            parts.append(_element("video", "publication_date", self.publication_date))
        parts.extend(_element("video", "tag", _text(tag)) for tag in self.tags)
        if self.category is not None:
            parts.append(_element("video", "category", _text(self.category)))
        if self.family_friendly is not None:
            parts.append(_element("video", "family_friendly", _yes_no(self.family_friendly)))
        if self.restriction is not None:
            parts.append(self.restriction.to_xml())
        if self.gallery_loc is not None:
            attributes = (
                "" if self.gallery_title is None else f' title="{_attr(self.gallery_title)}"'
            )
            parts.append(_element("video", "gallery_loc", escape_uri(self.gallery_loc), attributes))
        parts.extend(price.to_xml() for price in self.prices)
        if self.requires_subscription is not None:
            parts.append(
                _element("video", "requires_subscription", _yes_no(self.requires_subscription))
            )
        if self.uploader is not None:
            attributes = (
                "" if self.uploader_info is None else f' info="{escape_uri(self.uploader_info)}"'
            )
            parts.append(_element("video", "uploader", _text(self.uploader), attributes))
        if self.tvshow is not None:
            parts.append(self.tvshow.to_xml())
        if self.platform is not None:
            parts.append(self.platform.to_xml())
        if self.live is not None:
            parts.append(_element("video", "live", _yes_no(self.live)))
        parts.extend(video_id.to_xml() for video_id in self.ids)
        parts.append("</video:video>")
        return "".join(parts)

    def to_xml(self) -> str:
        """Return the ``<video:video>`` fragment (rendered once, when the video was built)."""
        return self._xml

    def _arguments(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.thumbnail_loc, self.title, self.description), {
            name: getattr(self, name) for name in _VIDEO_KEYWORDS
        }


# Video's keyword arguments in the order of its signature, for repr() and pickling; read
# from the signature so that a new argument cannot be forgotten here.
_VIDEO_KEYWORDS: Final = tuple(
    name
    for name, parameter in inspect.signature(Video).parameters.items()
    if parameter.kind is inspect.Parameter.KEYWORD_ONLY
)
