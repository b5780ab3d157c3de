"""Decorated Flask routes as a URL source.

``@sitemapper.include(...)`` records a :class:`RouteSpec` for a view function, and
``sitemapper.add_endpoint("name")`` one for an endpoint named by text (as
flask-sitemapper 1.8 did, see :mod:`flask_sitemapper.compat`). When a sitemap is
served, each spec is matched to the endpoints the app registered for that function
(or to the named endpoint), and URLs are built inside a request context bound to the
site's base URL,
so blueprints, ``url_defaults`` and ``APPLICATION_ROOT`` all apply: by a
:class:`~flask_sitemapper.urls.UrlBuilder` per endpoint, which gives exactly what
``url_for(endpoint, _external=True, **values)`` gives, at a fraction of its cost.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import Any
from weakref import WeakKeyDictionary

from flask import Flask

from sitemap_core.serve.front import (
    ChangeFreq,
    ConfigurationError,
    Entry,
    InvalidEntryError,
    Languages,
    LastmodInput,
    ParamItem,
    Params,
    Row,
    check_params,
    coerce_batch,
    entry_defaults,
    iter_param_entries,
    lastmod_instant,
    param_result,
    params_fingerprint,
    walk_count,
    wraps,
)

from .urls import UrlBuilder

__all__ = ["Params", "RouteSpec", "RoutesFingerprint", "route_entries", "routes_newest"]


@dataclass
class RouteSpec:
    """What ``include`` recorded for one view function (or ``add_endpoint`` for one
    endpoint name: then ``view`` is None and ``endpoint`` names it)."""

    view: Callable[..., Any] | None
    params: Params | None
    defaults: dict[str, Any] = field(default_factory=dict)
    languages: Languages | None = None
    endpoint: str | None = None
    #: ``params`` carries only per-crawl fields of a route without URL variables (1.8's
    #: ``lastmod=`` as a function): the route is checked as if it had no ``params``.
    fields_only: bool = False
    #: The endpoints found per app, once that app serves requests (it can no longer
    #: add routes then): a count asks for them on every request.
    _found: WeakKeyDictionary[Flask, list[str]] = field(
        default_factory=WeakKeyDictionary, repr=False, compare=False
    )
    #: One URL builder per endpoint, kept so that, while the extension reuses a URL
    #: adapter, what it learnt of the rule under it outlives a request.
    _builders: dict[str, UrlBuilder] = field(default_factory=dict, repr=False, compare=False)
    #: ``params`` gave too many items, or a value without a stable encoding, to be
    #: fingerprinted: not tried again (each try is a call of ``params``, perhaps a query).
    _unfingerprinted: bool = field(default=False, repr=False, compare=False)

    @classmethod
    def build(
        cls,
        view: Callable[..., Any],
        params: Params | None,
        lastmod: LastmodInput | None,
        changefreq: ChangeFreq | str | None,
        priority: float | None,
        languages: Languages | None = None,
        fields_only: bool = False,
    ) -> RouteSpec:
        """Validate the decorator's arguments now, at import time, not on the first crawl."""
        if not callable(view):
            raise ConfigurationError(f"include() decorates a view function, got {view!r}")
        defaults = entry_defaults(lastmod, changefreq, priority)
        check_params(params, view.__qualname__)
        if params is None or fields_only:
            required = _required_arguments(view)
            if languages is not None:  # the language variable is filled in per URL
                required = [name for name in required if name != languages.variable]
            if required:
                raise ConfigurationError(
                    f"{view.__qualname__} takes URL arguments {required}; "
                    "include() needs params= to know their values"
                )
        return cls(view, params, defaults, languages, fields_only=fields_only)

    @classmethod
    def for_endpoint(
        cls,
        endpoint: str,
        params: Params | None,
        lastmod: LastmodInput | None,
        changefreq: ChangeFreq | str | None,
        priority: float | None,
        fields_only: bool = False,
    ) -> RouteSpec:
        """A spec for the endpoint named ``endpoint`` (``"blog.post"``), validated now.

        Its URL variables are known only once the app has the route, so a route that
        needs values and has no ``params`` is refused when the sitemap is first built.
        """
        if not isinstance(endpoint, str) or not endpoint:
            raise ConfigurationError(f"an endpoint name must be a non-empty str, got {endpoint!r}")
        defaults = entry_defaults(lastmod, changefreq, priority)
        check_params(params, endpoint)
        return cls(None, params, defaults, None, endpoint, fields_only)

    @property
    def label(self) -> str:
        """How errors name this spec: the view's qualified name, or the endpoint."""
        if self.view is None:
            return repr(self.endpoint)
        return self.view.__qualname__

    def find_endpoints(self, app: Flask) -> list[str]:
        """The endpoints ``app`` registered for this view (through any wrappers)."""
        found = self._found.get(app)
        if found is not None:
            return found
        if self.view is None:
            found = [self.endpoint] if self.endpoint in app.view_functions else []
        else:
            view = self.view
            found = [name for name, func in app.view_functions.items() if wraps(func, view)]
        # Flask refuses new routes once it served a request, so the answer is final then.
        if app._got_first_request:
            self._found[app] = found
        return found

    def endpoints(self, app: Flask) -> list[str]:
        """As :meth:`find_endpoints`, but a view that is no route is an error, and so is
        a route without the URL variable its hreflang languages fill in."""
        found = self.find_endpoints(app)
        if not found:
            raise ConfigurationError(self._not_a_route())
        if self.view is None and (self.params is None or self.fields_only):
            # include() checked the view's arguments at import time; a named endpoint's
            # rule is known only now.
            _check_no_variables(app, found[0])
        if self.languages is not None:
            _check_language_variable(app, found, self.languages.variable)
        return found

    def _not_a_route(self) -> str:
        if self.view is None:
            return f"endpoint {self.endpoint!r} given to add_endpoint() is not a route of this app"
        return (
            f"{self.label} is decorated with include() but is not a route "
            "of this app (register it with @app.route / a blueprint)"
        )

    def param_items(self) -> Iterable[ParamItem]:
        """The items of ``params`` (one empty mapping for a static route)."""
        if self.params is None:
            return ({},)
        items = self.params() if callable(self.params) else self.params
        return param_result(items, self.label)

    def count(self, app: Flask) -> int:
        """How many URLs this spec yields (walks ``params`` unless it is sized)."""
        per_item = 1 if self.languages is None else len(self.languages.values)
        return walk_count(self.param_items()) * len(self.endpoints(app)) * per_item

    def entries(self, app: Flask) -> Iterator[Entry]:
        """Build one entry per endpoint and param item (URLs as ``url_for`` gives them)."""
        for endpoint, build_url in self._url_builds(app):
            yield from iter_param_entries(
                self.param_items(), endpoint, self.defaults, self.languages, build_url
            )

    def items(self, app: Flask) -> Iterator[Entry | Row]:
        """As :meth:`entries`, but an item with no fields beyond ``lastmod``,
        ``changefreq`` and ``priority`` is the tuple row of its entry, which the
        ``<urlset>`` writer validates and writes without building the entry (what a
        sitemap page asks for; see :func:`~sitemap_core.sources.params.iter_param_entries`)."""
        for endpoint, build_url in self._url_builds(app):
            yield from iter_param_entries(
                self.param_items(), endpoint, self.defaults, self.languages, build_url, rows=True
            )

    def params_digest(self) -> str | None:
        """A digest of this spec's params' values (one call of ``params``), or None when
        they cannot be digested cheaply (see
        :func:`~sitemap_core.sources.params.params_fingerprint`); then never tried again."""
        if self._unfingerprinted:
            return None
        digest = params_fingerprint(self.param_items())
        if digest is None:
            self._unfingerprinted = True
        return digest

    def fixed_part(self, app: Flask) -> tuple[object, ...]:
        """What this spec's URLs and fields depend on besides its params, in ``app``
        (asked once the app serves, when its routes are final): the rules of its
        endpoints, its default fields as entries write them and its hreflang group.
        A deploy that renames a route or changes a default changes this, and so every
        ETag of the source, though no params value moved."""
        rules = tuple(
            (endpoint, rule.rule, rule.subdomain, rule.host, sorted((rule.defaults or {}).items()))
            for endpoint in self.find_endpoints(app)
            for rule in app.url_map.iter_rules(endpoint)
        )
        # Normalised by the entry that validated them: a date and its text agree.
        sample = Entry("http://fields.invalid/", **self.defaults)
        fields = (sample.lastmod, sample.changefreq, sample.priority)
        return (self.label, rules, fields, self.languages, self.fields_only)

    def _url_builds(self, app: Flask) -> Iterator[tuple[str, Callable[[Mapping[str, Any]], str]]]:
        """Each endpoint with its kept URL builder's build for this request (the
        request's URL adapter is looked up once, not per URL)."""
        for endpoint in self.endpoints(app):
            builder = self._builders.get(endpoint)
            if builder is None:
                builder = self._builders.setdefault(endpoint, UrlBuilder(endpoint))
            yield endpoint, builder.for_request()


def route_entries(
    app: Flask, specs: list[RouteSpec], start: int, stop: int
) -> Iterator[Entry | Row]:
    """The entries ``[start, stop)`` of the given specs, in registration order (as tuple
    rows where :meth:`RouteSpec.items` can: the source's batches make them entries)."""
    chained = chain.from_iterable(spec.items(app) for spec in specs)
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


class RoutesFingerprint:
    """The fingerprint of one app's route source made of ``specs`` (called with the
    range asked, which a route source's fingerprint does not depend on).

    A route source lists what its specs' params give, on routes that are fixed once the
    app serves: so each request digests the params' values (one call of each ``params``,
    as counting them was), and what else the URLs depend on (rules, default fields) is
    digested once. None for an app with ``url_defaults`` functions (they may fill URL
    values from anything, at each build) or params that cannot be digested cheaply.
    """

    def __init__(self, app: Flask, specs: list[RouteSpec]) -> None:
        self._app = app
        self._specs = specs
        self._with_params = [spec for spec in specs if spec.params is not None]
        self._fixed: str | None = None

    def __call__(self, start: int = 0, stop: int | None = None) -> str | None:
        """The fingerprint now (the same for every range of the source)."""
        app = self._app
        if not _fingerprintable(app, self._specs):
            return None
        if self._fixed is None:
            fixed = repr([spec.fixed_part(app) for spec in self._specs])
            self._fixed = "routes:" + hashlib.sha256(fixed.encode()).hexdigest()[:32]
        parts = [self._fixed]
        for spec in self._with_params:
            digest = spec.params_digest()
            if digest is None:
                return None
            parts.append(digest)
        # One short text: the fingerprint is keyed on every request, and joining the
        # digests costs less than digesting them again.
        return ":".join(parts)


def routes_newest(
    app: Flask, specs: list[RouteSpec], name: str, start: int, stop: int
) -> str | None:
    """The newest lastmod of the route source's entries ``[start, stop)``, or None when
    one has none (Last-Modified is only claimed for a range whose every entry is dated).

    Asked only of a fingerprinted route source, whose params are short (see
    :class:`RoutesFingerprint`), and remembered while its fingerprint holds.
    """
    if not _fingerprintable(app, specs):
        # Nothing would remember the answer: each index would walk every page (and call
        # params once per page) for a Last-Modified it can do without, as before.
        return None
    items = list(route_entries(app, specs, start, stop))
    try:
        lastmods = [entry.lastmod for entry in coerce_batch(items, name)]  # validated
    except InvalidEntryError:
        # The page itself answers 500 with the error when it is served; the index
        # lists it without a date rather than failing for it.
        return None
    if not lastmods or None in lastmods:
        return None
    return max(lastmods, key=lastmod_instant)  # type: ignore[arg-type]


def _fingerprintable(app: Flask, specs: list[RouteSpec]) -> bool:
    # Cheap: no params are called. False before the app serves (routes may still be
    # added), with url_defaults functions, or once a spec was found unfingerprintable.
    return (
        app._got_first_request
        and not any(app.url_default_functions.values())
        and not any(spec._unfingerprinted for spec in specs)
    )


def _check_no_variables(app: Flask, endpoint: str) -> None:
    # A route given by name, with neither url_variables= nor params=: it must need none.
    for rule in app.url_map.iter_rules(endpoint):
        required = sorted(rule.arguments - set(rule.defaults or ()))
        if required:
            raise ConfigurationError(
                f"route {endpoint!r} takes URL variables {required}; add_endpoint()"
                " needs url_variables= (or params=) to know their values"
            )


def _check_language_variable(app: Flask, endpoints: list[str], variable: str) -> None:
    # Every rule of a route with hreflang languages has the variable they fill in.
    for endpoint in endpoints:
        if not all(variable in rule.arguments for rule in app.url_map.iter_rules(endpoint)):
            raise ConfigurationError(
                f"route {endpoint!r} has no URL variable {variable!r} for its"
                " hreflang languages (url_for would put it in the query string)"
            )
