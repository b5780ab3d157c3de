"""Route parameters: the framework-free half of the route decorators of both fronts.

A decorated route is listed once per item of its ``params``; an item is a mapping of
URL values, or a ``(values, fields)`` pair whose fields (``lastmod``, ``changefreq``,
``priority``) override the decorator's defaults for that URL.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Callable, Iterable, Iterator, Mapping
from typing import Any, TypeAlias

from .entries import ChangeFreq, Entry, LastmodInput
from .errors import ConfigurationError, InvalidEntryError

__all__ = [
    "ParamItem",
    "Params",
    "check_params",
    "entry_defaults",
    "param_result",
    "split_param_item",
    "wraps",
]

#: One item of ``params``: URL values, optionally paired with per-URL entry fields.
ParamItem: TypeAlias = Mapping[str, Any] | tuple[Mapping[str, Any], Mapping[str, Any]]
#: ``params=``: a callable returning param items (sync, or async on the ASGI front), or a
#: list / tuple of them.
Params: TypeAlias = Callable[[], Iterable[ParamItem]] | Iterable[ParamItem] | Callable[[], Any]

ENTRY_FIELDS = frozenset({"lastmod", "changefreq", "priority"})


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
    if isinstance(params, Iterator | AsyncIterable) and not callable(params):
        raise ConfigurationError(
            f"params= of {view} is an iterator, which can be read only once; "
            "pass a function returning it, or a list"
        )
    if not callable(params) and not isinstance(params, Iterable):
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


def split_param_item(item: Any, view: str) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """Return ``(url_values, entry_fields)`` of one param item, validating its shape."""
    if isinstance(item, tuple) and len(item) == 2:
        values, fields = item
    else:
        values, fields = item, {}
    if not isinstance(values, Mapping) or not isinstance(fields, Mapping):
        raise InvalidEntryError(
            "params", item, "items must be a dict of URL values or a (values, fields) pair", view
        )
    unknown = set(fields) - ENTRY_FIELDS
    if unknown:
        raise InvalidEntryError(
            "params",
            item,
            f"unknown entry fields {sorted(unknown)}; use {sorted(ENTRY_FIELDS)}",
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
