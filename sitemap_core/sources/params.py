"""Route parameters: the framework-free half of the route decorators of both fronts.

A decorated route is listed once per item of its ``params``; an item is a mapping of
URL values, or a ``(values, fields)`` pair whose fields (``lastmod``, ``changefreq``,
``priority``, ``images``, ``videos``, ``news``, ``alternates``) override the
decorator's defaults for that URL.

A route whose URL carries the language (``/<lang>/about``) can declare its hreflang
group once, with :class:`Languages`: every param item then gives one URL per language,
and each of them lists all of them (and ``x-default``) as alternates.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import chain, islice
from types import MappingProxyType
from typing import Any, Literal, TypeAlias, overload

from sitemap_core.errors import ConfigurationError, InvalidEntryError
from sitemap_core.model.alternates import X_DEFAULT, check_alternates, normalise_hreflang
from sitemap_core.model.entries import ChangeFreq, Entry, LastmodInput
from sitemap_core.model.rows import Row
from sitemap_core.model.stable import stable_bytes

__all__ = [
    "Languages",
    "ParamItem",
    "Params",
    "check_params",
    "entry_defaults",
    "iter_param_entries",
    "param_entries",
    "param_result",
    "params_fingerprint",
    "split_param_item",
    "wraps",
]

#: One item of ``params``: URL values, optionally paired with per-URL entry fields.
ParamItem: TypeAlias = Mapping[str, Any] | tuple[Mapping[str, Any], Mapping[str, Any]]
#: ``params=``: a callable returning param items (sync, or async on the ASGI front), or a
#: list / tuple of them.
Params: TypeAlias = Callable[[], Iterable[ParamItem]] | Iterable[ParamItem] | Callable[[], Any]

ENTRY_FIELDS = frozenset(
    {"lastmod", "changefreq", "priority", "images", "videos", "news", "alternates"}
)
#: The fields an entry can be given by position (``Entry(loc, lastmod, changefreq,
#: priority)``): most items carry only these.
BASIC_FIELDS = frozenset({"lastmod", "changefreq", "priority"})


def entry_defaults(
    lastmod: LastmodInput | None,
    changefreq: ChangeFreq | str | None,
    priority: float | None,
) -> dict[str, Any]:
    """Validate a decorator's entry defaults now (import time); return the given ones."""
    # A throw-away entry runs every field's validation through the one code path.
    Entry("http://validation.invalid/", lastmod, changefreq, priority)
    given = {"lastmod": lastmod, "changefreq": changefreq, "priority": priority}
    return {name: value for name, value in given.items() if value is not None}


def check_params(params: object, view: str) -> None:
    """Refuse ``params`` that could not be read on every crawl."""
    if params is None:
        return
    if not callable(params):
        if isinstance(params, Iterator | AsyncIterable):
            raise ConfigurationError(
                f"params= of {view} is an iterator, which can be read only once; "
                "pass a function returning it, or a list"
            )
        if not isinstance(params, Iterable):
            raise ConfigurationError(
                f"params= of {view} must be a callable or a list, got {type(params).__name__}"
            )
    if isinstance(params, str | bytes | Mapping):
        raise ConfigurationError(f"params= of {view} must be a list of dicts, not one value")


def param_result(result: Any, view: str) -> Iterable[Any]:
    """What a ``params`` callable returned, if it is an iterable of items.

    A str or bytes is refused too: iterated, it would give one item per character.
    """
    if not isinstance(result, Iterable) or isinstance(result, str | bytes):
        raise ConfigurationError(
            f"params of {view} returned {type(result).__name__}, not an iterable"
        )
    return result


#: The entry fields of an item that has none (read-only: shared by every such item).
NO_FIELDS: Mapping[str, Any] = MappingProxyType({})


def split_param_item(item: Any, view: str) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """Return ``(url_values, entry_fields)`` of one param item, validating its shape."""
    values, fields = item if isinstance(item, tuple) and len(item) == 2 else (item, NO_FIELDS)
    # Dicts, the usual items, are known by their exact type: the ABC checks any other
    # mapping needs cost a share of a route's page.
    plain = type(values) is dict and (fields is NO_FIELDS or type(fields) is dict)
    if not plain and not (isinstance(values, Mapping) and isinstance(fields, Mapping)):
        raise InvalidEntryError(
            "params", item, "items must be a dict of URL values or a (values, fields) pair", view
        )
    if not ENTRY_FIELDS.issuperset(fields):
        raise InvalidEntryError(
            "params",
            item,
            f"unknown entry fields {sorted(set(fields) - ENTRY_FIELDS)};"
            f" use {sorted(ENTRY_FIELDS)}",
            view,
        )
    return values, fields


def wraps(func: Callable[..., Any], target: Callable[..., Any]) -> bool:
    """Tell whether ``func`` is ``target`` or wraps it (``functools.wraps`` chains)."""
    current: Any = func
    for _ in range(100):  # a bound on pathological __wrapped__ cycles
        if current is None:
            return False
        if current is target:
            return True
        current = getattr(current, "__wrapped__", None)
    return False


@dataclass(frozen=True)
class Languages:
    """The hreflang group of a route whose URL variable ``variable`` is the language.

    ``values`` are the URL values of that variable and ``codes`` their hreflang codes
    (the same, normalised: ``"pt_br"`` in the URL is ``"pt-BR"`` as hreflang);
    ``x_default`` is the value whose URL is also the ``x-default`` alternate.
    """

    variable: str
    values: tuple[str, ...]
    codes: tuple[str, ...]
    x_default: str | None = None

    @classmethod
    def build(
        cls,
        variable: str | None,
        languages: Iterable[str] | None,
        x_default: str | None,
        view: str,
    ) -> Languages | None:
        """Validate a decorator's ``hreflang`` / ``languages`` / ``x_default`` (import
        time); None when the route declares no group."""
        if variable is None and languages is None and x_default is None:
            return None
        if not isinstance(variable, str) or not variable:
            raise ConfigurationError(
                f"{view}: hreflang= must name the URL variable that holds the language"
            )
        values = _language_values(languages, view)
        codes = _hreflang_codes(values, view)
        if x_default is not None and x_default not in values:
            raise ConfigurationError(
                f"{view}: x_default={x_default!r} must be one of languages= {list(values)}"
            )
        return cls(variable, values, codes, x_default)

    def urls(
        self, values: Mapping[str, Any], build_url: Callable[[Mapping[str, Any]], str]
    ) -> list[str]:
        """The URL of each language for one param item."""
        return [build_url({**values, self.variable: value}) for value in self.values]


def _language_values(languages: Iterable[str] | None, view: str) -> tuple[str, ...]:
    # A route's languages= as a tuple: two at least.
    if isinstance(languages, str) or not isinstance(languages, Iterable):
        raise ConfigurationError(f"{view}: languages= must be a list of language values")
    values = tuple(languages)
    if len(values) < 2:
        raise ConfigurationError(f"{view}: an hreflang group needs at least two languages")
    return values


def _hreflang_codes(values: tuple[str, ...], view: str) -> tuple[str, ...]:
    # The hreflang code of each language value: valid, none repeated, none x-default.
    try:
        codes = tuple(normalise_hreflang(value) for value in values)
    except InvalidEntryError as exc:
        raise ConfigurationError(f"{view}: {exc}") from None
    if X_DEFAULT in codes or len(set(codes)) != len(codes):
        raise ConfigurationError(
            f"{view}: languages= {list(values)} repeats a language or lists x-default"
            " (use x_default= for it)"
        )
    return codes


@overload
def iter_param_entries(
    items: Iterable[Any],
    view: str,
    defaults: Mapping[str, Any],
    languages: Languages | None,
    build_url: Callable[[Mapping[str, Any]], str],
    *,
    rows: Literal[False] = False,
) -> Iterator[Entry]: ...


@overload
def iter_param_entries(
    items: Iterable[Any],
    view: str,
    defaults: Mapping[str, Any],
    languages: Languages | None,
    build_url: Callable[[Mapping[str, Any]], str],
    *,
    rows: bool,
) -> Iterator[Entry | Row]: ...


def iter_param_entries(
    items: Iterable[Any],
    view: str,
    defaults: Mapping[str, Any],
    languages: Languages | None,
    build_url: Callable[[Mapping[str, Any]], str],
    *,
    rows: bool = False,
) -> Iterator[Entry | Row]:
    """The entries of many param items of a route, in order: :func:`param_entries` in
    one loop, the hot path of a route's sitemap page.

    ``rows``: an item whose fields are at most ``lastmod``, ``changefreq`` and
    ``priority`` (most items) gives the tuple row ``(loc, lastmod, changefreq,
    priority)`` instead of an :class:`Entry`. The writer validates a row exactly as
    ``Entry(*row)`` while it writes it (:mod:`sitemap_core.model.rows`), without the entry
    object, which is most of what a route's URL costs beyond the URL itself; an error
    in such a field then names the sitemap source the row is written for, not ``view``.
    For sources, whose batches go through :func:`~sitemap_core.sources.base.coerce_batch`.
    """
    if languages is not None:
        for item in items:
            yield from param_entries(item, view, defaults, languages, build_url)
        return
    basic = BASIC_FIELDS.issuperset
    for item in items:
        values, fields = split_param_item(item, view)
        given = {**defaults, **fields} if defaults and fields else fields or defaults
        try:
            url = build_url(values)
            if rows and basic(given):
                get = given.get
                entry: Entry | Row = (url, get("lastmod"), get("changefreq"), get("priority"))
            else:
                entry = Entry(url, **given)
        except InvalidEntryError as exc:
            raise exc.with_source(view) from None
        yield entry


def param_entries(
    item: Any,
    view: str,
    defaults: Mapping[str, Any],
    languages: Languages | None,
    build_url: Callable[[Mapping[str, Any]], str],
) -> list[Entry]:
    """The entries of one param item of a route: one, or one per language.

    ``build_url`` is the front's ``url_for`` for the route. Errors name ``view``.
    """
    values, fields = split_param_item(item, view)
    given = {**defaults, **fields}
    try:
        if languages is None:
            return [Entry(build_url(values), **given)]
        if "alternates" in given:
            raise InvalidEntryError(
                "alternates", given["alternates"], "the route's languages= already set them"
            )
        urls = languages.urls(values, build_url)
        pairs = list(zip(languages.codes, urls, strict=True))
        if languages.x_default is not None:
            pairs.append((X_DEFAULT, urls[languages.values.index(languages.x_default)]))
        alternates = check_alternates(pairs)
        return [Entry(url, alternates=alternates, **given) for url in urls]
    except InvalidEntryError as exc:
        raise exc.with_source(view) from None


#: The most param items a route source fingerprints (see :func:`params_fingerprint`).
FINGERPRINT_ITEMS = 1_000


def params_fingerprint(items: Iterable[Any], limit: int = FINGERPRINT_ITEMS) -> str | None:
    """A digest of param items that changes with any of their values, or None.

    A route source's URLs and fields come from its params alone (its routes are fixed
    once the app serves), so this digest lets a short ``params`` be a fingerprinted
    source: while it holds, a 304 or a cached page costs one call of ``params`` and no
    URL building. None for more than ``limit`` items (the walk would cost more than
    rendering saves) or a value with no encoding stable across processes (the digest
    must be the same in every worker): such sources are rendered to learn their ETag.
    Keys and values are taken in their order, which is the order of the URL's query.
    """
    batch = list(islice(items, limit + 1))
    if len(batch) > limit:
        return None
    if _plain(batch):
        return _digest(repr(batch))
    try:
        return _digest(repr([stable_bytes(_item_parts(item)) for item in batch]))
    except ConfigurationError:  # a value stable_bytes cannot encode alike everywhere
        return None


def _plain(batch: list[Any]) -> bool:
    # Dicts of plain values (str, int, float, bool, None) by str keys: the usual items,
    # whose repr() is the same in every process and differs between types.
    return (
        _DICT.issuperset(map(type, batch))
        and _STR.issuperset(map(type, chain.from_iterable(batch)))
        and _PLAIN_VALUES.issuperset(map(type, chain.from_iterable(map(dict.values, batch))))
    )


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


_PLAIN_VALUES = frozenset({str, int, float, bool, type(None)})
_STR = frozenset({str})
_DICT = frozenset({dict})


def _item_parts(item: Any) -> object:
    # An item as a tuple stable_bytes encodes: a mapping as its (key, value) pairs, a
    # (values, fields) pair as two of them; lists of images and the like as tuples.
    if isinstance(item, Mapping):
        return ("m", *((key, _value_parts(value)) for key, value in item.items()))
    if isinstance(item, tuple) and len(item) == 2:
        return ("p", _item_parts(item[0]), _item_parts(item[1]))
    raise ConfigurationError("not a param item")  # refused when the page is built


def _value_parts(value: Any) -> object:
    if isinstance(value, Mapping):
        return _item_parts(value)
    if isinstance(value, list | tuple):
        return tuple(_value_parts(part) for part in value)
    return value
