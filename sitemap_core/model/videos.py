"""Google's video sitemap extension: a validated :class:`Video` that renders once.

Every argument is checked and normalised in ``__init__``, and the ``<video:video>``
fragment is rendered there and kept (:meth:`Video.to_xml`), in the order Google's XSD
demands. Parts that carry several values or attributes are small frozen classes
(:class:`Price`, :class:`Restriction`, :class:`Platform`, :class:`ContentSegment`,
:class:`TvShow`, :class:`VideoId`); one-attribute pairs are plain keyword arguments of
:class:`Video` (``player_loc`` + ``allow_embed`` / ``autoplay``, ``gallery_loc`` +
``gallery_title``, ``uploader`` + ``uploader_info``).

A bad value raises :class:`~sitemap_core.errors.InvalidEntryError` whose ``field`` is
dotted: ``"video.duration"``, ``"video.price"``, ...

Sources: the official ``sitemap-video.xsd`` (Google 2010), which fixes element order and
value types, and Google's current documentation, which adds the limits the XSD does
not state (duration at least 1 second, at most 32 tags, ...).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar, Final, Self

from sitemap_core.model.alternates import ISO_3166_1
from sitemap_core.model.fields import (
    _MAX_COUNT,
    _attr,
    _bool,
    _choice,
    _date,
    _decimal,
    _decimal_text,
    _element,
    _fail,
    _optional_element,
    _optional_text,
    _optional_url,
    _or_none,
    _sequence,
    _text,
    _Value,
    _whole,
    _words,
    _yes_no,
)
from sitemap_core.model.namespaces import VIDEO_NS
from sitemap_core.model.values import normalise_url
from sitemap_core.model.xmltext import check_xml_text, escape_uri

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

#: Every officially assigned ISO 3166-1 alpha-2 code (249 codes, as of 2023): the table
#: hreflang regions are checked against. User-assigned codes such as ``XK`` and reserved
#: ones such as ``UK`` or ``EU`` are not countries to Google and are refused.
COUNTRY_CODES: Final = ISO_3166_1

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
    _WORDS: ClassVar[str]
    _NOUN: ClassVar[str]

    def __init_subclass__(cls, *, element: str, words: str, noun: str) -> None:
        # ``words``: the attribute holding the words; ``noun``: what one word is (named
        # in the error when there is none).
        super().__init_subclass__()
        cls._ELEMENT, cls._FIELD = element, f"video.{element}"
        cls._WORDS, cls._NOUN = words, noun

    if TYPE_CHECKING:
        # Each subclass names its second argument (countries, platforms); declared here
        # so that allow() and deny() type-check once, for both.
        def __init__(self, relationship: str, words: Iterable[str] | str, /) -> None: ...

    def _build(self, relationship: object, words: list[str], given: object) -> None:
        # ``words`` are checked, ``given`` is what the caller passed (named when empty).
        if not words:
            _fail(self._FIELD, given, f"needs at least one {self._NOUN}")
        unique = _unique(words)
        self._freeze(relationship=_choice(relationship, self._FIELD, _RELATIONSHIPS))
        self._freeze(**{self._WORDS: unique})
        attributes = f' relationship="{self.relationship}"'
        self._freeze(_xml=_element("video", self._ELEMENT, " ".join(unique), attributes))

    @classmethod
    def allow(cls, *words: str) -> Self:
        """Return a rule letting only ``words`` (countries, platforms) play the video."""
        return cls("allow", words)

    @classmethod
    def deny(cls, *words: str) -> Self:
        """Return a rule keeping ``words`` (countries, platforms) from playing the video."""
        return cls("deny", words)

    def _arguments(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.relationship, getattr(self, self._WORDS)), {}


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    # Order kept (it is what the user wrote); duplicates say nothing more.
    return tuple(dict.fromkeys(items))


def _country(code: object, field: str) -> str:
    if not isinstance(code, str) or not _COUNTRY.match(code):
        _fail(field, code, "is not a two-letter ISO 3166-1 country code")
    if code.upper() not in COUNTRY_CODES:
        _fail(field, code, "is not an assigned ISO 3166-1 alpha-2 country code")
    return code.upper()


class Restriction(_Relationship, element="restriction", words="countries", noun="country code"):
    """``<video:restriction>``: countries where the video may (``allow``) or may not
    (``deny``) be played.

    ``countries`` is an iterable of ISO 3166-1 alpha-2 codes, or one str of codes
    separated by spaces. Each must be an officially assigned code (:data:`COUNTRY_CODES`);
    any case is accepted and stored upper case, duplicates dropped, order kept. At least
    one country is needed. Shorter spellings: ``Restriction.allow("FR", "BE")``,
    ``Restriction.deny("US")``. Errors name the field ``"video.restriction"``.
    """

    __slots__ = ("countries",)

    countries: tuple[str, ...]

    def __init__(self, relationship: str, countries: Iterable[str] | str) -> None:
        codes = [_country(code, self._FIELD) for code in _words(countries, self._FIELD)]
        self._build(relationship, codes, countries)


class Platform(_Relationship, element="platform", words="platforms", noun="platform"):
    """``<video:platform>``: platforms where the video may (``allow``) or may not
    (``deny``) be played.

    ``platforms`` is an iterable of ``"web"``, ``"mobile"`` and ``"tv"`` (any case, stored
    lower case), or one str of them separated by spaces; at least one, duplicates dropped.
    Shorter spellings: ``Platform.allow("web", "mobile")``, ``Platform.deny("tv")``.
    Errors name the field ``"video.platform"``.
    """

    __slots__ = ("platforms",)

    platforms: tuple[str, ...]

    def __init__(self, relationship: str, platforms: Iterable[str] | str) -> None:
        names = [_choice(name, self._FIELD, _PLATFORMS) for name in _words(platforms, self._FIELD)]
        self._build(relationship, names, platforms)


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
            season_number=_or_none(
                _whole, season_number, f"{field}.season_number", minimum=1, maximum=_MAX_COUNT
            ),
            episode_number=_or_none(
                _whole, episode_number, f"{field}.episode_number", minimum=1, maximum=_MAX_COUNT
            ),
            premier_date=_or_none(_date, premier_date, f"{field}.premier_date"),
        )
        parts = [
            "<video:tvshow>",
            _element("video", "show_title", _text(self.show_title)),
            _element("video", "video_type", self.video_type),
            _optional_element("video", "episode_title", self.episode_title, _text),
            _optional_element("video", "season_number", self.season_number),
            _optional_element("video", "episode_number", self.episode_number),
            _optional_element("video", "premier_date", self.premier_date),
            "</video:tvshow>",
        ]
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


def _instance(value: object, cls: type[_Value], field: str) -> None:
    """Refuse a value given for ``field`` that is neither None nor a ``cls``."""
    if value is not None and not isinstance(value, cls):
        _fail(field, value, f"must be a {cls.__name__}")


def _xml_of(value: _Value | None) -> str:
    return "" if value is None else value.to_xml()


def _segments(value: object) -> tuple[ContentSegment, ...]:
    """The content segments, each a :class:`ContentSegment` or its URL."""
    return tuple(
        item if isinstance(item, ContentSegment) else ContentSegment(item)
        for item in _sequence(value, "video.content_segment_loc")
    )


def _tags(value: object) -> tuple[Any, ...]:
    """The tags, not yet checked one by one, at most :data:`MAX_VIDEO_TAGS`."""
    items = _sequence(value, "video.tag")
    if len(items) > MAX_VIDEO_TAGS:
        _fail("video.tag", value, f"has {len(items)} tags; the limit is {MAX_VIDEO_TAGS}")
    return items


# --- videos -------------------------------------------------------------------------------


class Video(_Value):
    """One ``<video:video>`` of a page.

    Required: ``thumbnail_loc``, ``title``, ``description``, and at least one of
    ``content_loc`` (the media file) and ``player_loc`` (a player page).

    * URLs (``thumbnail_loc``, ``content_loc``, ``player_loc``, ``gallery_loc``,
      ``uploader_info``): absolute http(s), normalised as
      :func:`~sitemap_core.model.values.normalise_url` does.
    * Text: a ``str`` XML can hold; stripped; not empty. ``title`` at most 100 characters,
      ``description`` 2,048, ``category`` 256, ``uploader`` 255.
    * ``allow_embed`` (with ``player_loc``): may Google embed the player; ``autoplay`` (with
      ``player_loc``): text Google may append to the player URL to start playing.
    * ``duration``: seconds from 1 to 28,800, as an ``int``, a ``float`` without fraction
      or a ``timedelta`` of whole seconds; stored as ``int``.
    * ``expiration_date``, ``publication_date``: ``date``, ``datetime`` or ISO 8601 text,
      stored as W3C text (see :func:`~sitemap_core.model.values.normalise_lastmod`).
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
        segments = _segments(content_segments)
        tag_items = _tags(tags)
        _instance(restriction, Restriction, "video.restriction")
        _instance(platform, Platform, "video.platform")
        _instance(tvshow, TvShow, "video.tvshow")
        # Checked in this order: with two bad values, the error names the first.
        self._freeze(
            thumbnail_loc=normalise_url(thumbnail_loc, "video.thumbnail_loc"),
            title=check_xml_text(title, "video.title", max_length=MAX_VIDEO_TITLE_LENGTH),
            description=check_xml_text(
                description, "video.description", max_length=MAX_VIDEO_DESCRIPTION_LENGTH
            ),
            content_loc=_optional_url(content_loc, "video.content_loc"),
            player_loc=_optional_url(player_loc, "video.player_loc"),
            allow_embed=_or_none(_bool, allow_embed, "video.allow_embed"),
            autoplay=_optional_text(autoplay, "video.autoplay"),
            duration=_or_none(_duration, duration, "video.duration"),
            expiration_date=_or_none(_date, expiration_date, "video.expiration_date"),
            rating=_or_none(_decimal, rating, "video.rating", maximum=MAX_VIDEO_RATING),
            content_segments=segments,
            view_count=_or_none(
                _whole, view_count, "video.view_count", minimum=0, maximum=_MAX_COUNT
            ),
            publication_date=_or_none(_date, publication_date, "video.publication_date"),
            tags=tuple(check_xml_text(tag, "video.tag") for tag in tag_items),
            category=_optional_text(
                category, "video.category", max_length=MAX_VIDEO_CATEGORY_LENGTH
            ),
            family_friendly=_or_none(_bool, family_friendly, "video.family_friendly"),
            restriction=restriction,
            gallery_loc=_optional_url(gallery_loc, "video.gallery_loc"),
            gallery_title=_optional_text(gallery_title, "video.gallery_title"),
            prices=_parts(prices, "video.price", Price),
            requires_subscription=_or_none(
                _bool, requires_subscription, "video.requires_subscription"
            ),
            uploader=_optional_text(
                uploader, "video.uploader", max_length=MAX_VIDEO_UPLOADER_LENGTH
            ),
            uploader_info=_optional_url(uploader_info, "video.uploader_info"),
            tvshow=tvshow,
            platform=platform,
            live=_or_none(_bool, live, "video.live"),
            ids=_parts(ids, "video.id", VideoId),
        )
        self._freeze(_xml=self._render())

    def _render(self) -> str:
        # Exactly the XSD's xsd:sequence; any other order fails validation.
        return "".join(
            [
                "<video:video>",
                _element("video", "thumbnail_loc", escape_uri(self.thumbnail_loc)),
                _element("video", "title", _text(self.title)),
                _element("video", "description", _text(self.description)),
                _optional_element("video", "content_loc", self.content_loc, escape_uri),
                self._player_xml(),
                _optional_element("video", "duration", self.duration),
                _optional_element("video", "expiration_date", self.expiration_date),
                _optional_element("video", "rating", self.rating, _decimal_text),
                *[segment.to_xml() for segment in self.content_segments],
                _optional_element("video", "view_count", self.view_count),
                _optional_element("video", "publication_date", self.publication_date),
                *[_element("video", "tag", _text(tag)) for tag in self.tags],
                _optional_element("video", "category", self.category, _text),
                _optional_element("video", "family_friendly", self.family_friendly, _yes_no),
                _xml_of(self.restriction),
                self._gallery_xml(),
                *[price.to_xml() for price in self.prices],
                _optional_element(
                    "video", "requires_subscription", self.requires_subscription, _yes_no
                ),
                self._uploader_xml(),
                _xml_of(self.tvshow),
                _xml_of(self.platform),
                _optional_element("video", "live", self.live, _yes_no),
                *[video_id.to_xml() for video_id in self.ids],
                "</video:video>",
            ]
        )

    def _player_xml(self) -> str:
        if self.player_loc is None:
            return ""
        attributes = ""
        if self.allow_embed is not None:
            attributes += f' allow_embed="{_yes_no(self.allow_embed)}"'
        if self.autoplay is not None:
            attributes += f' autoplay="{_attr(self.autoplay)}"'
        return _element("video", "player_loc", escape_uri(self.player_loc), attributes)

    def _gallery_xml(self) -> str:
        if self.gallery_loc is None:
            return ""
        attributes = "" if self.gallery_title is None else f' title="{_attr(self.gallery_title)}"'
        return _element("video", "gallery_loc", escape_uri(self.gallery_loc), attributes)

    def _uploader_xml(self) -> str:
        if self.uploader is None:
            return ""
        attributes = (
            "" if self.uploader_info is None else f' info="{escape_uri(self.uploader_info)}"'
        )
        return _element("video", "uploader", _text(self.uploader), attributes)

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
