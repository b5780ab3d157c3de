"""Decorated Flask routes as a URL source.

``@sitemapper.include(...)`` records a :class:`RouteSpec` for a view function. When a
sitemap is served, each spec is matched to the endpoints the app registered for that
function, and URLs are built with ``url_for`` inside a request context bound to the
site's base URL, so blueprints, ``url_defaults`` and ``APPLICATION_ROOT`` all apply.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping, Sized
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, TypeAlias

from flask import Flask, url_for

from sitemap_core import ConfigurationError, Entry, InvalidEntryError
from sitemap_core.entries import ChangeFreq, LastmodInput

__all__ = ["Params", "RouteSpec", "route_entries"]

#: One item of ``params``: the URL values, optionally with per-URL entry fields
#: (``lastmod``, ``changefreq``, ``priority``) as a second mapping.
ParamItem: TypeAlias = Mapping[str, Any] | tuple[Mapping[str, Any], Mapping[str, Any]]
#: ``params=``: a callable returning param items, or a list / tuple of them.
Params: TypeAlias = Callable[[], Iterable[ParamItem]] | Iterable[ParamItem]

_ENTRY_FIELDS = frozenset({"lastmod", "changefreq", "priority"})


@dataclass
class RouteSpec:
    """What ``include`` recorded for one view function."""

    view: Callable[..., Any]
    params: Params | None
    defaults: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        view: Callable[..., Any],
        params: Params | None,
        lastmod: LastmodInput | None,
        changefreq: ChangeFreq | str | None,
        priority: float | None,
    ) -> RouteSpec:
        """Validate the decorator's arguments now, at import time, not on the first crawl."""
        if not callable(view):
            raise ConfigurationError(f"include() decorates a view function, got {view!r}")
        defaults: dict[str, Any] = {
            name: value
            for name, value in (
                ("lastmod", lastmod),
                ("changefreq", changefreq),
                ("priority", priority),
            )
            if value is not None
        }
        # Building a throw-away entry runs every field's validation with one code path.
        Entry("http://validation.invalid/", lastmod, changefreq, priority)
        if params is not None:
            if isinstance(params, Iterator):
                raise ConfigurationError(
                    f"params= of {view.__qualname__} is an iterator, which can be read "
                    "only once; pass a function returning it, or a list"
                )
            if not callable(params) and not isinstance(params, Iterable):
                raise ConfigurationError(
                    f"params= of {view.__qualname__} must be a callable or a list, "
                    f"got {type(params).__name__}"
                )
        else:
            required = _required_arguments(view)
            if required:
                raise ConfigurationError(
                    f"{view.__qualname__} takes URL arguments {required}; "
                    "include() needs params= to know their values"
                )
        return cls(view, params, defaults)

    def endpoints(self, app: Flask) -> list[str]:
        """The endpoints ``app`` registered for this view (through any wrappers)."""
        found = [name for name, func in app.view_functions.items() if _wraps(func, self.view)]
        if not found:
            raise ConfigurationError(
                f"{self.view.__qualname__} is decorated with include() but is not a route "
                "of this app (register it with @app.route / a blueprint)"
            )
        return found

    def param_items(self) -> Iterable[ParamItem]:
        """The items of ``params`` (one empty mapping for a static route)."""
        if self.params is None:
            return ({},)
        items = self.params() if callable(self.params) else self.params
        if not isinstance(items, Iterable):
            raise ConfigurationError(
                f"params of {self.view.__qualname__} returned {type(items).__name__}, "
                "not an iterable"
            )
        return items

    def count(self, app: Flask) -> int:
        """How many URLs this spec yields (walks ``params`` unless it is sized)."""
        items = self.param_items()
        per_endpoint = len(items) if isinstance(items, Sized) else sum(1 for _ in items)
        return per_endpoint * len(self.endpoints(app))

    def entries(self, app: Flask) -> Iterator[Entry]:
        """Build one entry per endpoint and param item, with ``url_for``."""
        name = self.view.__qualname__
        for endpoint in self.endpoints(app):
            for item in self.param_items():
                values, fields = _split_item(item, name)
                url = url_for(endpoint, _external=True, **values)
                try:
                    yield Entry(url, **{**self.defaults, **fields})
                except InvalidEntryError as exc:
                    raise exc.with_source(endpoint) from None


def route_entries(app: Flask, specs: list[RouteSpec], start: int, stop: int) -> Iterator[Entry]:
    """The entries ``[start, stop)`` of the given specs, in registration order."""
    chained = (entry for spec in specs for entry in spec.entries(app))
    return islice(chained, start, stop)


def _split_item(item: Any, view: str) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    if isinstance(item, tuple) and len(item) == 2:
        values, fields = item
    else:
        values, fields = item, {}
    if not isinstance(values, Mapping) or not isinstance(fields, Mapping):
        raise InvalidEntryError(
            "params", item, "items must be a dict of URL values or a (values, fields) pair", view
        )
    unknown = set(fields) - _ENTRY_FIELDS
    if unknown:
        raise InvalidEntryError(
            "params",
            item,
            f"unknown entry fields {sorted(unknown)}; use {sorted(_ENTRY_FIELDS)}",
            view,
        )
    return values, fields


def _wraps(func: Callable[..., Any], target: Callable[..., Any]) -> bool:
    seen = 0
    current: Any = func
    while current is not None and seen < 100:  # a bound on pathological __wrapped__ cycles
        if current is target:
            return True
        current = getattr(current, "__wrapped__", None)
        seen += 1
    return False


def _required_arguments(view: Callable[..., Any]) -> list[str]:
    try:
        signature = inspect.signature(view)
    except (TypeError, ValueError):  # builtins and C callables have no signature
        return []
    return [
        name
        for name, parameter in signature.parameters.items()
        if parameter.default is inspect.Parameter.empty
        and parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
    ]
