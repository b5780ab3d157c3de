"""Decorated Flask routes as a URL source.

``@sitemapper.include(...)`` records a :class:`RouteSpec` for a view function. When a
sitemap is served, each spec is matched to the endpoints the app registered for that
function, and URLs are built inside a request context bound to the site's base URL,
so blueprints, ``url_defaults`` and ``APPLICATION_ROOT`` all apply: by a
:class:`~flask_sitemapper.urls.UrlBuilder` per endpoint, which gives exactly what
``url_for(endpoint, _external=True, **values)`` gives, at a fraction of its cost.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import Any
from weakref import WeakKeyDictionary

from flask import Flask

from sitemap_core import ConfigurationError, Entry
from sitemap_core.entries import ChangeFreq, LastmodInput
from sitemap_core.params import (
    Languages,
    ParamItem,
    Params,
    check_params,
    entry_defaults,
    iter_param_entries,
    param_result,
    wraps,
)
from sitemap_core.sources import walk_count

from .urls import UrlBuilder

__all__ = ["Params", "RouteSpec", "route_entries"]


@dataclass
class RouteSpec:
    """What ``include`` recorded for one view function."""

    view: Callable[..., Any]
    params: Params | None
    defaults: dict[str, Any] = field(default_factory=dict)
    languages: Languages | None = None
    #: The endpoints found per app, once that app serves requests (it can no longer
    #: add routes then): a count asks for them on every request.
    _found: WeakKeyDictionary[Flask, list[str]] = field(
        default_factory=WeakKeyDictionary, repr=False, compare=False
    )
    #: One URL builder per endpoint, kept so that its plan of the rule (and, while the
    #: extension reuses a URL adapter, its bound prefix) outlives a request.
    _builders: dict[str, UrlBuilder] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(
        cls,
        view: Callable[..., Any],
        params: Params | None,
        lastmod: LastmodInput | None,
        changefreq: ChangeFreq | str | None,
        priority: float | None,
        languages: Languages | None = None,
    ) -> RouteSpec:
        """Validate the decorator's arguments now, at import time, not on the first crawl."""
        if not callable(view):
            raise ConfigurationError(f"include() decorates a view function, got {view!r}")
        defaults = entry_defaults(lastmod, changefreq, priority)
        check_params(params, view.__qualname__)
        if params is None:
            required = _required_arguments(view)
            if languages is not None:  # the language variable is filled in per URL
                required = [name for name in required if name != languages.variable]
            if required:
                raise ConfigurationError(
                    f"{view.__qualname__} takes URL arguments {required}; "
                    "include() needs params= to know their values"
                )
        return cls(view, params, defaults, languages)

    def find_endpoints(self, app: Flask) -> list[str]:
        """The endpoints ``app`` registered for this view (through any wrappers)."""
        found = self._found.get(app)
        if found is not None:
            return found
        found = [name for name, func in app.view_functions.items() if wraps(func, self.view)]
        # Flask refuses new routes once it served a request, so the answer is final then.
        if app._got_first_request:
            self._found[app] = found
        return found

    def endpoints(self, app: Flask) -> list[str]:
        """As :meth:`find_endpoints`, but a view that is no route is an error, and so is
        a route without the URL variable its hreflang languages fill in."""
        found = self.find_endpoints(app)
        if not found:
            raise ConfigurationError(
                f"{self.view.__qualname__} is decorated with include() but is not a route "
                "of this app (register it with @app.route / a blueprint)"
            )
        if self.languages is not None:
            variable = self.languages.variable
            for endpoint in found:
                if not all(variable in rule.arguments for rule in app.url_map.iter_rules(endpoint)):
                    raise ConfigurationError(
                        f"route {endpoint!r} has no URL variable {variable!r} for its"
                        " hreflang languages (url_for would put it in the query string)"
                    )
        return found

    def param_items(self) -> Iterable[ParamItem]:
        """The items of ``params`` (one empty mapping for a static route)."""
        if self.params is None:
            return ({},)
        items = self.params() if callable(self.params) else self.params
        return param_result(items, self.view.__qualname__)

    def count(self, app: Flask) -> int:
        """How many URLs this spec yields (walks ``params`` unless it is sized)."""
        per_item = 1 if self.languages is None else len(self.languages.values)
        return walk_count(self.param_items()) * len(self.endpoints(app)) * per_item

    def entries(self, app: Flask) -> Iterator[Entry]:
        """Build one entry per endpoint and param item (URLs as ``url_for`` gives them)."""
        for endpoint in self.endpoints(app):
            builder = self._builders.get(endpoint)
            if builder is None:
                builder = self._builders.setdefault(endpoint, UrlBuilder(endpoint))
            build_url = builder.build
            yield from iter_param_entries(
                self.param_items(), endpoint, self.defaults, self.languages, build_url
            )


def route_entries(app: Flask, specs: list[RouteSpec], start: int, stop: int) -> Iterator[Entry]:
    """The entries ``[start, stop)`` of the given specs, in registration order."""
    chained = chain.from_iterable(spec.entries(app) for spec in specs)
    return islice(chained, start, stop)


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
