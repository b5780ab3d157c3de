"""Google News sitemap values: ``<news:news>`` inside a ``<url>``.

A :class:`News` is valid once built against Google's ``sitemap-news.xsd`` and the
rules Google documents beside it, and carries its XML fragment, rendered once, in the
order the schema's ``xsd:sequence`` demands: ``publication`` (``name``, ``language``),
``access``, ``genres``, ``publication_date``, ``title``, ``keywords``, ``stock_tickers``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, date, datetime
from typing import Any, ClassVar, Final

import sitemap_core.model.values as _values
from sitemap_core.errors import InvalidEntryError
from sitemap_core.model.alternates import _LANGUAGE_HINTS, ISO_639_1
from sitemap_core.model.fields import _Value
from sitemap_core.model.namespaces import NEWS_NS
from sitemap_core.model.xmltext import check_xml_text, escape

__all__ = ["ACCESS", "GENRES", "MAX_STOCK_TICKERS", "News"]

#: The ``<news:genres>`` values the schema enumerates, in their canonical spelling.
GENRES: Final = ("PressRelease", "Satire", "Blog", "OpEd", "Opinion", "UserGenerated")
_GENRE_BY_LOWER: Final = {genre.lower(): genre for genre in GENRES}

#: The ``<news:access>`` values the schema enumerates; open access is written by omission.
ACCESS: Final = ("Subscription", "Registration")
_ACCESS_BY_LOWER: Final = {access.lower(): access for access in ACCESS}

#: Google's (and the schema's) limit on ``<news:stock_tickers>``.
MAX_STOCK_TICKERS: Final = 5

# The two language values with a region that Google asks for, Chinese being written
# one way or the other; a bare "zh" does not say which.
_CHINESE: Final = frozenset({"zh-cn", "zh-tw"})

# Three-letter codes that name no language: ISO 639-2's local-use range qaa-qtz and its
# special codes (uncoded, multiple, undetermined, no linguistic content).
_NOT_A_LANGUAGE: Final = re.compile(r"q[a-t][a-z]|mis|mul|und|zxx")

# An exchange and a symbol, as in "NASDAQ:AMAT" or "BOM:500325". The schema's pattern is
# \w+:\w+, where XSD's \w excludes punctuation such as "_" and "."; ASCII letters and
# digits are what exchanges use and are inside both Python's and XSD's \w.
_TICKER: Final = re.compile(r"[A-Za-z0-9]+:[A-Za-z0-9]+")


def _required(value: Any, field: str) -> Any:
    if value is None:
        raise InvalidEntryError(field, value, "is required")
    return value


_LANGUAGE_FIELD: Final = "news.language"


def _normalise_language(value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidEntryError(_LANGUAGE_FIELD, value, "must be a str")
    code = value.strip().lower().replace("_", "-")
    if code in _CHINESE:
        return code
    base = code.split("-", 1)[0]
    if base in ("zh", "chi", "zho"):
        # Bare Chinese, or another variant (zh-Hans, zh-HK, ...): Google documents
        # exactly two values for Chinese, and either one says which script is used.
        raise InvalidEntryError(
            _LANGUAGE_FIELD,
            value,
            "Google asks for zh-cn (Simplified Chinese) or zh-tw (Traditional Chinese)",
        )
    if not (code.isascii() and code.isalpha()):
        reason = "is not an ISO 639 language code"
        if "-" in code and base.isascii() and base.isalpha():
            reason += f"; a news language has no region or script, write {base!r}"
        raise InvalidEntryError(_LANGUAGE_FIELD, value, reason)
    return _language_code(code, value)


def _language_code(code: str, value: str) -> str:
    """``code`` (ASCII letters, lower case) if it is an ISO 639 code a news article can
    be written in."""
    if len(code) == 2:
        if code not in ISO_639_1:
            hint = _LANGUAGE_HINTS.get(code)
            reason = "is not an ISO 639-1 language code"
            raise InvalidEntryError(
                _LANGUAGE_FIELD, value, reason + (f"; did you mean {hint!r}?" if hint else "")
            )
        return code
    if len(code) == 3:
        # ISO 639-2 and 639-3 hold thousands of codes; the shape is checked, and the
        # codes that cannot name the language of a publication are refused.
        if _NOT_A_LANGUAGE.fullmatch(code):
            raise InvalidEntryError(
                _LANGUAGE_FIELD,
                value,
                "is a reserved ISO 639 code that names no particular language",
            )
        return code
    raise InvalidEntryError(
        _LANGUAGE_FIELD,
        value,
        "is not an ISO 639 language code (2 or 3 letters, or zh-cn / zh-tw)",
    )


def _normalise_date(value: Any) -> tuple[str, datetime]:
    field = "news.publication_date"
    try:
        text = _values.normalise_lastmod(value)
    except InvalidEntryError as exc:
        raise InvalidEntryError(field, value, exc.reason) from None
    if len(text) == 10:  # YYYY-MM-DD
        day = date.fromisoformat(text)
        return text, datetime(day.year, day.month, day.day, tzinfo=UTC)
    try:
        # normalise_lastmod always writes an offset with a time, so this is aware.
        published = datetime.fromisoformat(text).astimezone(UTC)
    except OverflowError:
        raise InvalidEntryError(field, value, "falls outside years 1-9999 in UTC") from None
    return text, published


def _pieces(value: Any, field: str) -> list[str]:
    """Split a comma-separated str, or check the items of an iterable of str (none
    for None)."""
    if value is None:
        return []
    if isinstance(value, str):
        # Text holds its own separators; empty pieces ("a, b,") are a harmless slip.
        return [check_xml_text(piece, field) for piece in value.split(",") if piece.strip()]
    if not isinstance(value, Iterable):
        raise InvalidEntryError(field, value, "must be a str or an iterable of str")
    pieces = []
    for item in value:
        text = check_xml_text(item, field)
        if "," in text:
            # The element is one comma-separated list: a comma would split this item.
            raise InvalidEntryError(field, item, "must not contain a comma (the separator)")
        pieces.append(text)
    return pieces


def _normalise_genres(value: Any) -> tuple[str, ...]:
    genres = []
    for piece in _pieces(value, "news.genres"):
        genre = _GENRE_BY_LOWER.get(piece.lower())
        if genre is None:
            raise InvalidEntryError("news.genres", piece, f"must be one of {', '.join(GENRES)}")
        genres.append(genre)
    return tuple(genres)


def _normalise_tickers(value: Any) -> tuple[str, ...]:
    field = "news.stock_tickers"
    tickers = []
    for piece in _pieces(value, field):
        if not _TICKER.fullmatch(piece):
            raise InvalidEntryError(
                field, piece, "must be EXCHANGE:SYMBOL in ASCII letters and digits"
            )
        tickers.append(piece.upper())
    if len(tickers) > MAX_STOCK_TICKERS:
        raise InvalidEntryError(
            field, value, f"has {len(tickers)} tickers; the limit is {MAX_STOCK_TICKERS}"
        )
    return tuple(tickers)


def _normalise_access(value: Any) -> str | None:
    if value is None:
        return None
    found = _ACCESS_BY_LOWER.get(value.strip().lower()) if isinstance(value, str) else None
    if found is None:
        raise InvalidEntryError(
            "news.access",
            value,
            "must be Subscription or Registration (leave it out for open access)",
        )
    return found


def _element(name: str, text: str) -> str:
    return f"<news:{name}>{escape(text)}</news:{name}>"


class News(_Value):
    """The ``<news:news>`` block of one article in a Google News sitemap.

    Keyword-only arguments, validated and normalised when built:

    * ``publication_name`` (required): the publication's name as Google News shows it;
      any text XML can hold, stripped.
    * ``language`` (required): an ISO 639-1 two-letter code (checked against
      :data:`~sitemap_core.model.alternates.ISO_639_1`), an ISO 639-2/3 three-letter code (shape
      checked, reserved codes refused), or ``zh-cn`` / ``zh-tw``, which Google asks for
      instead of ``zh``. Stored lower case; ``_`` is read as ``-``.
    * ``publication_date`` (required): ``date``, ``datetime`` or W3C / ISO 8601 text, as
      ``lastmod`` (see :func:`~sitemap_core.model.entries.normalise_lastmod`); stored as the
      text written. ``published`` holds the same instant as an aware UTC ``datetime``
      (a date alone is midnight UTC), for recency checks such as Google's two days.
    * ``title`` (required): the article's title, stripped.
    * ``keywords``: an iterable of str, or one comma-separated str; written joined by
      ``", "``.
    * ``genres``: from :data:`GENRES` (any case), as an iterable or comma-separated str.
    * ``stock_tickers``: at most :data:`MAX_STOCK_TICKERS` ``EXCHANGE:SYMBOL`` values,
      stored upper case.
    * ``access``: ``"Subscription"`` or ``"Registration"`` (any case); ``None`` for open.

    Optional lists are stored as tuples (empty when absent). A bad or missing value raises
    :class:`~sitemap_core.errors.InvalidEntryError` naming ``news.<field>``. Instances are
    immutable, hashable and compare by their normalised fields.
    """

    __slots__ = (
        "access",
        "genres",
        "keywords",
        "language",
        "publication_date",
        "publication_name",
        "published",
        "stock_tickers",
        "title",
    )

    #: The namespace of the fragment; the writer declares it on ``<urlset>``.
    NAMESPACE: ClassVar[str] = NEWS_NS
    #: The prefix the fragment is written with.
    PREFIX: ClassVar[str] = "news"

    publication_name: str
    language: str
    publication_date: str
    published: datetime
    title: str
    keywords: tuple[str, ...]
    genres: tuple[str, ...]
    stock_tickers: tuple[str, ...]
    access: str | None

    def __init__(
        self,
        *,
        publication_name: str | None = None,
        language: str | None = None,
        publication_date: date | datetime | str | None = None,
        title: str | None = None,
        keywords: Iterable[str] | str | None = None,
        genres: Iterable[str] | str | None = None,
        stock_tickers: Iterable[str] | str | None = None,
        access: str | None = None,
    ) -> None:
        # The four required fields default to None so that leaving one out raises the
        # same typed error, naming it, as passing a bad value does.
        name = check_xml_text(
            _required(publication_name, "news.publication_name"), "news.publication_name"
        )
        lang = _normalise_language(_required(language, "news.language"))
        when, published = _normalise_date(_required(publication_date, "news.publication_date"))
        headline = check_xml_text(_required(title, "news.title"), "news.title")
        words = tuple(_pieces(keywords, "news.keywords"))
        kinds = _normalise_genres(genres)
        tickers = _normalise_tickers(stock_tickers)
        restricted = _normalise_access(access)

        # After the publication, in the schema's order; an empty text is a field left
        # out (the required ones never are empty).
        elements = (
            ("access", restricted or ""),
            ("genres", ", ".join(kinds)),
            ("publication_date", when),
            ("title", headline),
            ("keywords", ", ".join(words)),
            ("stock_tickers", ", ".join(tickers)),
        )
        parts = [
            "<news:news><news:publication>",
            _element("name", name),
            _element("language", lang),
            "</news:publication>",
            *[_element(tag, text) for tag, text in elements if text],
            "</news:news>",
        ]

        self._freeze(
            publication_name=name,
            language=lang,
            publication_date=when,
            published=published,
            title=headline,
            keywords=words,
            genres=kinds,
            stock_tickers=tickers,
            access=restricted,
            _xml="".join(parts),
        )

    def _arguments(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        # Every field but ``published``, which is read from ``publication_date``.
        return (), {
            "publication_name": self.publication_name,
            "language": self.language,
            "publication_date": self.publication_date,
            "title": self.title,
            "keywords": self.keywords,
            "genres": self.genres,
            "stock_tickers": self.stock_tickers,
            "access": self.access,
        }
