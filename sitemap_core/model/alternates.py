"""hreflang alternates: ``<xhtml:link rel="alternate" hreflang="…" href="…"/>``.

An :class:`Alternate` names one language / region version of a page. Google reads them
only when they are reciprocal: every version lists every version, itself included.
:func:`hreflang_cluster` builds such a set from one declaration per group of pages, and
:func:`check_alternates` validates the list one entry carries.

Accepted ``hreflang`` values are ``x-default`` and the subset of BCP 47 Google documents:
``language[-Script][-REGION]``, where

* ``language`` is an ISO 639-1 two-letter code (:data:`ISO_639_1`), written lower case;
* ``Script`` is an ISO 15924 four-letter code, written in title case (``zh-Hant``); only
  its shape is checked, because the list keeps growing and Google ignores unknown ones;
* ``REGION`` is an ISO 3166-1 alpha-2 code (:data:`ISO_3166_1`), written upper case.

Input may use any case and ``_`` as well as ``-`` as the separator, because locale names
such as ``pt_BR`` (gettext, Babel, Django) are what applications usually hold; the value
is always written in the canonical form above. Anything else (three-letter languages,
UN M.49 regions such as ``419``, variants, extensions, private use) is refused: Google
does not document them for hreflang and a silently ignored annotation is worse than an
error at build time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Final

import sitemap_core.model.values as _values
from sitemap_core.errors import InvalidEntryError
from sitemap_core.model.frozen import Frozen
from sitemap_core.model.namespaces import XHTML_NS
from sitemap_core.model.xmltext import escape, escape_uri

__all__ = [
    "ISO_639_1",
    "ISO_3166_1",
    "X_DEFAULT",
    "Alternate",
    "AlternatesInput",
    "check_alternates",
    "hreflang_cluster",
    "normalise_hreflang",
]

#: The hreflang value of the page shown when no language or region matches.
X_DEFAULT: Final = "x-default"

# Kept as text, split once at import: a one-per-line literal would be 400 lines.
_ISO_639_1_TABLE: Final = """
aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu
cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi
ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks
ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl
nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl
sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve
vi vo wa wo xh yi yo za zh zu
"""
#: ISO 639-1 two-letter language codes (as listed by ISO 639-2's registration authority).
ISO_639_1: Final = frozenset(_ISO_639_1_TABLE.split())

_ISO_3166_1_TABLE: Final = """
AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO
BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ
DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP
GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG
KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML
MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE
PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL
SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM
US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW
"""
#: ISO 3166-1 alpha-2 country codes (officially assigned ones only).
ISO_3166_1: Final = frozenset(_ISO_3166_1_TABLE.split())

# Withdrawn or mistaken codes that people still write, with the code meant. They are
# refused like any unknown code, but the error says what to write instead.
_LANGUAGE_HINTS: Final[Mapping[str, str]] = {
    "iw": "he",  # withdrawn 1989, still used by some Google and Java APIs
    "in": "id",
    "ji": "yi",
    "jw": "jv",
    "mo": "ro",
    "sh": "sr, hr or bs",
    "jp": "ja",
    "cn": "zh",
    "gr": "el",
    "dk": "da",
}
_REGION_HINTS: Final[Mapping[str, str]] = {
    "UK": "GB",
    "EL": "GR",  # EU's code for Greece
    "EN": "GB or US",
}

_SEPARATORS: Final = str.maketrans("_", "-")


def _refuse(value: object, reason: str) -> InvalidEntryError:
    return InvalidEntryError("alternate.hreflang", value, reason)


def _letters(part: str) -> bool:
    # str.isalpha() alone would let non-ASCII letters through (and their lower() or
    # upper() can change length); codes are ASCII.
    return part.isascii() and part.isalpha()


def normalise_hreflang(value: Any) -> str:
    """Return ``value`` as a canonical hreflang code, or raise :class:`InvalidEntryError`.

    ``x-default`` in any case becomes ``"x-default"``; otherwise ``language[-Script]
    [-REGION]`` is checked against ISO 639-1 and ISO 3166-1 and written ``ll-Ssss-RR``.
    ``_`` is accepted as a separator and surrounding whitespace is ignored. Applying it to
    its own result returns the result unchanged.
    """
    if not isinstance(value, str):
        raise _refuse(value, "must be a str")
    code = value.strip().translate(_SEPARATORS)
    if not code:
        raise _refuse(value, "must not be empty")
    if code.lower() == X_DEFAULT:
        return X_DEFAULT
    language, *rest = code.split("-")
    result = [_language(language, value)]
    if rest and len(rest[0]) == 4:
        result.append(_script(rest.pop(0), value))
    if rest:
        result.append(_region(rest.pop(0), value))
    if rest:
        raise _refuse(
            value,
            f"unexpected {'-'.join(rest)!r}: only language[-Script][-REGION] is accepted",
        )
    return "-".join(result)


def _language(part: str, value: str) -> str:
    """The language of an hreflang, lower case: an ISO 639-1 code."""
    language = part.lower()
    if not _letters(language):
        raise _refuse(value, f"{part!r} is not a language code")
    if len(language) != 2:
        reason = f"{part!r} is not an ISO 639-1 two-letter language code"
        if len(language) == 3:
            reason += " (Google's hreflang does not take ISO 639-2/3 codes)"
        raise _refuse(value, reason)
    if language not in ISO_639_1:
        hint = _LANGUAGE_HINTS.get(language)
        reason = f"{language!r} is not an ISO 639-1 language code"
        raise _refuse(value, reason + (f"; did you mean {hint!r}?" if hint else ""))
    return language


def _script(part: str, value: str) -> str:
    """The script of an hreflang, title case: four letters (ISO 15924's shape)."""
    if not _letters(part):
        raise _refuse(value, f"{part!r} is not an ISO 15924 script code")
    return part.title()


def _region(part: str, value: str) -> str:
    """The region of an hreflang, upper case: an ISO 3166-1 alpha-2 code."""
    region = part.upper()
    if region.isascii() and region.isdigit() and len(region) == 3:
        raise _refuse(
            value,
            f"{region!r} is a UN M.49 region; Google's hreflang takes ISO 3166-1 "
            "alpha-2 country codes",
        )
    if not (_letters(region) and len(region) == 2):
        raise _refuse(
            value,
            f"{region!r} is neither an ISO 15924 script (4 letters) nor an "
            "ISO 3166-1 alpha-2 region (2 letters)",
        )
    if region not in ISO_3166_1:
        hint = _REGION_HINTS.get(region)
        reason = f"{region!r} is not an ISO 3166-1 alpha-2 country code"
        raise _refuse(value, reason + (f"; did you mean {hint!r}?" if hint else ""))
    return region


class Alternate(Frozen):
    """One ``<xhtml:link rel="alternate" hreflang=… href=…/>`` of an entry.

    * ``hreflang``: ``"x-default"`` or ``language[-Script][-REGION]`` (see
      :func:`normalise_hreflang`), stored in canonical case.
    * ``href``: an absolute http(s) URL, normalised as ``loc`` is (see
      :func:`~sitemap_core.model.entries.normalise_url`).

    ``language``, ``script`` and ``region`` hold the parts of ``hreflang`` (``None`` when
    absent, and all ``None`` for ``x-default``). Instances are immutable, hashable and
    compare by ``hreflang`` and ``href``. :meth:`to_xml` returns the fragment, rendered
    once here because the writer asks for it on every request.
    """

    __slots__ = ("_xml", "href", "hreflang", "language", "region", "script")

    #: The namespace of the fragment; the writer declares it on ``<urlset>``.
    NAMESPACE: ClassVar[str] = XHTML_NS
    #: The prefix the fragment is written with.
    PREFIX: ClassVar[str] = "xhtml"

    hreflang: str
    href: str
    language: str | None
    script: str | None
    region: str | None
    _xml: str

    def __init__(self, hreflang: str, href: str) -> None:
        code = normalise_hreflang(hreflang)
        url = _values.normalise_url(href, "alternate.href")
        language = script = region = None
        if code != X_DEFAULT:
            for part in code.split("-"):
                if len(part) == 4:
                    script = part
                elif part.isupper():
                    region = part
                else:
                    language = part
        _set = object.__setattr__
        _set(self, "hreflang", code)
        _set(self, "href", url)
        _set(self, "language", language)
        _set(self, "script", script)
        _set(self, "region", region)
        _set(
            self,
            "_xml",
            f'<xhtml:link rel="alternate" hreflang="{escape(code)}" href="{escape_uri(url)}"/>',
        )

    def to_xml(self) -> str:
        """Return the ``<xhtml:link …/>`` fragment (the ``xhtml`` prefix is not declared)."""
        return self._xml

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Alternate):
            return NotImplemented
        return self.hreflang == other.hreflang and self.href == other.href

    def __hash__(self) -> int:
        return hash((self.hreflang, self.href))

    def __repr__(self) -> str:
        return f"Alternate({self.hreflang!r}, {self.href!r})"


#: What :func:`check_alternates` accepts: a mapping hreflang -> URL, or an iterable of
#: :class:`Alternate` objects and ``(hreflang, href)`` pairs.
AlternatesInput = Mapping[str, str] | Iterable[Alternate | tuple[str, str]]


def _build(alternates: AlternatesInput, field: str) -> list[Alternate]:
    """Turn any accepted input into Alternates, refusing duplicate hreflang values."""
    if isinstance(alternates, Mapping):
        items: Iterable[Any] = alternates.items()
    elif isinstance(alternates, str | bytes) or not isinstance(alternates, Iterable):
        # A str is iterable too, and would fail confusingly one character at a time.
        raise InvalidEntryError(
            field, alternates, "must be a mapping or an iterable of (hreflang, href) pairs"
        )
    else:
        items = alternates
    built: list[Alternate] = []
    seen: dict[str, Alternate] = {}
    for item in items:
        if isinstance(item, Alternate):
            alternate = item
        elif isinstance(item, tuple) and len(item) == 2:
            alternate = Alternate(item[0], item[1])
        else:
            raise InvalidEntryError(
                field, item, "each alternate must be an Alternate or an (hreflang, href) pair"
            )
        first = seen.get(alternate.hreflang)
        if first is not None:
            raise InvalidEntryError(
                "alternate.hreflang",
                alternate.hreflang,
                f"appears twice (for {first.href} and {alternate.href})",
            )
        seen[alternate.hreflang] = alternate
        built.append(alternate)
    return built


def check_alternates(alternates: AlternatesInput | None) -> tuple[Alternate, ...]:
    """Validate the alternates of one entry and return them as a tuple.

    Accepts ``None`` (no alternates), a mapping ``hreflang -> href``, or an iterable of
    :class:`Alternate` objects and ``(hreflang, href)`` pairs; order is kept. Raises
    :class:`InvalidEntryError` for a bad value or an hreflang that appears twice (after
    normalisation, so ``en_gb`` and ``en-GB`` are the same). Reciprocity across pages is
    not checked here: one entry cannot see the others; see :func:`hreflang_cluster`.
    """
    if alternates is None:
        return ()
    return tuple(_build(alternates, "alternates"))


def hreflang_cluster(
    pages: Mapping[str, str] | Iterable[tuple[str, str]],
) -> list[tuple[str, tuple[Alternate, ...]]]:
    """Expand one group of language versions into reciprocal per-page alternates.

    ``pages`` declares the group once, as ``hreflang -> URL`` (a mapping or pairs). The
    result has one ``(url, alternates)`` pair per distinct (normalised) URL, in order of
    first appearance, and every page gets the same full tuple of alternates, itself and
    ``x-default`` included, in declaration order: that is the reciprocity Google requires.
    A URL declared for two codes (often a language and ``x-default``) is one page.

    Raises :class:`InvalidEntryError` for a bad code or URL, an hreflang that appears
    twice, or a group whose only code is ``x-default``.
    """
    alternates = tuple(_build(pages, "alternates"))
    if not any(alternate.hreflang != X_DEFAULT for alternate in alternates):
        raise InvalidEntryError(
            "alternates",
            pages,
            "an hreflang group needs at least one language code besides x-default",
        )
    # dict keeps insertion order: URLs come out in order of first appearance.
    urls = dict.fromkeys(alternate.href for alternate in alternates)
    return [(url, alternates) for url in urls]
