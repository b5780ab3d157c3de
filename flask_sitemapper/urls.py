"""Absolute URLs of one Flask endpoint, built cheaply inside sitemap sources.

``url_for(endpoint, _external=True, **values)`` runs Flask's and Werkzeug's general
machinery for every URL: the context look-ups, the choice of a rule among the
endpoint's rules, the host and script root, the query string. A :class:`UrlBuilder`
finds the endpoint's rule once per URL adapter (once per request) and keeps what does
not depend on the values, as Werkzeug gives it: the rule's static text (from the
builder Werkzeug compiled for the rule), the ``scheme://host/script-root/`` text
``MapAdapter.build`` writes before it, Werkzeug's query text of each ``name=value``
pair. Each value goes through the rule's own converter (``to_url``)::

    from flask_sitemapper import Entry, Sitemapper, url_builder

    post_url = url_builder("post")

    @sitemapper.source("posts")
    def posts():
        for post in Post.query:
            yield Entry(post_url(post_id=post.id), lastmod=post.updated_at)

The result is ``url_for(endpoint, _external=True, **values)``. ``url_for`` itself
builds every URL of an endpoint with several rules (which rule wins depends on the
values), of a relative endpoint (``".post"``), of a rule with a variable in its
subdomain or host, of a ``Flask`` subclass with its own ``url_for``, outside a request
context, and the URLs whose values name one of ``url_for``'s options (``_anchor``,
...). Values the rule cannot build (one missing or None, a default contradicted, a
converter's ``ValidationError``) go to ``url_for`` too, which raises its
``BuildError`` (or answers through the app's ``url_build_error_handlers``); any other
error of a converter is raised as is, as ``url_for`` raises it. ``url_defaults``
functions run on a copy of the values, as ``url_for`` runs them.

Runnable example (the sitemap's sources run in such a request context, bound to the
site's base URL)::

    >>> from flask import Flask
    >>> app = Flask("example")
    >>> @app.get("/posts/<int:post_id>/<slug>")
    ... def post(post_id: int, slug: str) -> str:
    ...     return slug
    >>> post_url = url_builder("post")
    >>> with app.test_request_context(base_url="https://example.com/blog"):
    ...     post_url(post_id=7, slug="caf\u00e9 au lait")
    'https://example.com/blog/posts/7/caf%C3%A9%20au%20lait'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from flask import Flask, url_for
from werkzeug.routing import MapAdapter, Rule, ValidationError

try:  # Flask keeps the request context in this ContextVar (Flask 2.2 to 3.1).
    from flask.globals import _cv_request

    _request_context: Callable[[None], Any] = _cv_request.get
except ImportError:  # pragma: no cover - a Flask without it: every URL goes to url_for

    def _request_context(default: None) -> Any:
        return default


__all__ = ["UrlBuilder", "url_builder"]

#: url_for's own keyword arguments: a value named so is no URL value.
_URL_FOR_OPTIONS = frozenset({"_anchor", "_method", "_scheme", "_external"})

#: How many ``name=value`` query texts one rule's builder remembers per name (query
#: values in a sitemap repeat: a feed name, a page size), and for how many names.
_MAX_QUERY_PAIRS = 1024
_MAX_QUERY_NAMES = 64

#: Builds the absolute URL for a mapping of values.
Build = Callable[[Mapping[str, Any]], str]


class UrlBuilder:
    """Build ``url_for(endpoint, _external=True, **values)`` for one endpoint, fast.

    Call it with the URL values (``builder(post_id=7)``) or a mapping of them
    (``builder.build({"post_id": 7})``). See the module documentation.
    """

    __slots__ = ("_bound", "endpoint")

    def __init__(self, endpoint: str) -> None:
        if not isinstance(endpoint, str) or not endpoint:
            raise TypeError(f"url_builder() needs an endpoint name, got {endpoint!r}")
        self.endpoint = endpoint
        # (URL adapter, how URLs are built under it): renewed when a request binds
        # another adapter.
        self._bound: tuple[MapAdapter | None, Build] | None = None

    def __repr__(self) -> str:
        return f"url_builder({self.endpoint!r})"

    def __call__(self, /, **values: Any) -> str:
        """The absolute URL of the endpoint for ``values``, as ``url_for`` gives it."""
        return self.build(values)

    def build(self, values: Mapping[str, Any]) -> str:
        """The absolute URL of the endpoint for the mapping ``values`` (left unchanged)."""
        ctx = _request_context(None)
        bound = self._bound
        if ctx is None or bound is None or bound[0] is not ctx.url_adapter:
            return self.for_request()(values)
        return bound[1](values)

    def for_request(self) -> Build:
        """What :meth:`build` calls under the current request's URL adapter: for a loop
        that builds many URLs in one request (a route source's page), without looking
        the request up for each."""
        ctx = _request_context(None)
        if ctx is None:  # url_for uses the app context's adapter, or raises
            return self._url_for
        bound = self._bound
        if bound is None or bound[0] is not ctx.url_adapter:
            bound = self._bind(ctx.app, ctx.url_adapter)
        return bound[1]

    def _bind(self, app: Flask, adapter: MapAdapter | None) -> tuple[MapAdapter | None, Build]:
        rule = _sole_rule(app, adapter, self.endpoint)
        template = None if rule is None else _template(rule)
        if adapter is None or rule is None or template is None:
            build = self._url_for
        else:
            build = _RuleUrls(app, adapter, self.endpoint, rule, template).build
        bound = (adapter, build)
        self._bound = bound  # one assignment: another thread sees the old or the new pair
        return bound

    def _url_for(self, values: Mapping[str, Any]) -> str:
        return url_for(self.endpoint, _external=True, **values)


def url_builder(endpoint: str) -> UrlBuilder:
    """A :class:`UrlBuilder` for ``endpoint``; create it once, call it per URL.

    ``url_builder("post")(post_id=7)`` is ``url_for("post", _external=True,
    post_id=7)``, at a fraction of the cost, inside a request context (as sources run).
    """
    return UrlBuilder(endpoint)


def _sole_rule(app: Flask, adapter: MapAdapter | None, endpoint: str) -> Rule | None:
    """The endpoint's rule when it is url_for's only choice for any values, else None
    (then url_for builds every URL: see the module documentation)."""
    if (
        adapter is None
        or endpoint.startswith(".")
        or type(app).url_for is not Flask.url_for
        or "url_for" in vars(app)
        or type(adapter).build is not MapAdapter.build
    ):
        return None
    try:
        rules = list(adapter.map.iter_rules(endpoint))
    except KeyError:  # an unknown endpoint: url_for raises its BuildError
        return None
    return rules[0] if len(rules) == 1 else None


class _RuleUrls:
    """The URLs of an endpoint's one rule under one URL adapter.

    Werkzeug compiles a rule into a builder that joins the rule's static text (quoted,
    its defaults' text folded in) with each variable's ``converter.to_url(value)``
    (see :func:`_template`). A URL is that static text around the rule's own
    converters' ``to_url(value)``, after the ``scheme://host/script-root/`` text that
    ``MapAdapter.build`` writes before every path of the rule (taken from its answer
    for the first URL), then the query string of the values the rule does not take.
    """

    __slots__ = (
        "_adapter",
        "_consumed",
        "_defaults",
        "_endpoint",
        "_first",
        "_head",
        "_inject",
        "_memos",
        "_prepare",
        "_rule",
        "_shape",
        "_sorted",
        "_start",
        "_steps",
        "_strip",
    )

    def __init__(
        self, app: Flask, adapter: MapAdapter, endpoint: str, rule: Rule, template: _Template
    ) -> None:
        self._adapter = adapter
        self._endpoint = endpoint
        self._rule = rule
        self._first, self._steps = template
        # MapAdapter.build strips the path's leading slashes: with text after the first
        # ones that is done once, with a variable right after them per URL.
        self._strip = bool(self._steps) and not self._first.lstrip("/")
        # url_for runs the app's url_defaults functions; with none, none need a copy.
        own = type(app).inject_url_defaults is not Flask.inject_url_defaults
        inject = own or any(app.url_default_functions.values())
        self._inject = app.inject_url_defaults if inject else None
        # Whether Rule.suitable_for depends on the values (a rule with defaults), not
        # only on their names; then None values are left out before it reads them.
        self._defaults = bool(rule.defaults)
        self._prepare = inject or self._defaults
        # The values the rule takes (its variables and its defaults): the others are
        # appended as the query string.
        self._consumed = frozenset(rule.arguments)  # Werkzeug counts the defaults in
        # The names of the last values and their query part (see _learn), replaced in
        # one assignment: the values of one source have the same names.
        self._shape: tuple[list[Any], _Query | None] = ([None], None)
        self._head = ""  # what MapAdapter.build writes before the path (see _learn_head)
        self._start = ""  # the URL's text before its first variable, once the head is known
        # Per query name, Werkzeug's "&name=value" text per value (see _query_text).
        self._memos: dict[str, dict[Any, str]] = {}
        self._sorted = bool(rule.map.sort_parameters)

    def build(self, values: Mapping[str, Any]) -> str:
        """``url_for(endpoint, _external=True, **values)``."""
        given = values
        if self._prepare:
            values = self._prepared(values)
        names, query = self._shape
        if [*values] != names:
            query = self._learn(values)
        if query is None or (self._defaults and not self._rule.suitable_for(values)):
            return self._url_for(given)
        url = self._start
        try:
            for name, to_url, tail in self._steps:
                value = values[name]
                if value is None:  # url_for leaves it out: the rule no longer suits them
                    return self._url_for(given)
                url += to_url(value) + tail
        except ValidationError:  # Rule.build's signal: url_for raises its BuildError
            return self._url_for(given)
        if self._strip:
            url = self._head + url.lstrip("/")
        return url + self._query_text(values, query) if query else url

    def _prepared(self, values: Mapping[str, Any]) -> Mapping[str, Any]:
        """The values as url_for passes them to the rule: after the url_defaults
        functions (on a copy), without None values (MapAdapter.build drops them)."""
        if self._inject is not None and _URL_FOR_OPTIONS.isdisjoint(values):
            values = dict(values)
            self._inject(self._endpoint, values)
        return {key: value for key, value in values.items() if value is not None}

    def _url_for(self, values: Mapping[str, Any]) -> str:
        """url_for's own answer: its options, or values the rule cannot build (then its
        BuildError, or what the app's url_build_error_handlers give)."""
        return url_for(self._endpoint, _external=True, **values)

    def _learn(self, values: Mapping[str, Any]) -> _Query | None:
        """The query part of values named as ``values``: the names of the values the
        rule does not take, in their order, each with its texts. None when url_for
        must build them: a name is not a keyword it takes as a URL value, or the rule
        does not suit them (without defaults, Rule.suitable_for reads names only), or
        the values are the first and the rule cannot build them."""
        names = [*values]
        query: _Query | None = tuple(
            (name, self._memo(name)) for name in names if name not in self._consumed
        )
        if any(type(name) is not str or name in _URL_FOR_OPTIONS for name in names) or not (
            self._defaults or self._rule.suitable_for(values)
        ):
            query = None
        elif not self._head and not self._learn_head(values):
            return None
        # Kept for the next values so named: a query part only once the head is known
        # (above), and None (url_for) is decided by the names alone.
        self._shape = (names, query)
        return query

    def _learn_head(self, values: Mapping[str, Any]) -> bool:
        """Learn what ``MapAdapter.build`` writes before the rule's path (the scheme, the
        host, the script root), from its answer for ``values``; False when the rule
        cannot build them."""
        values = {key: value for key, value in values.items() if value is not None}
        built = self._rule.suitable_for(values) and self._rule.build(values, append_unknown=False)
        if not built:
            return False
        path = built[1].lstrip("/")
        url = self._adapter.build(self._endpoint, values, force_external=True, append_unknown=False)
        if not url.endswith(path):
            raise RuntimeError(f"MapAdapter.build gave {url!r}, which does not end with {path!r}")
        self._head = url[: len(url) - len(path)]
        self._start = self._first if self._strip else self._head + self._first.lstrip("/")
        return True

    def _query_text(self, values: Mapping[str, Any], query: _Query) -> str:
        """The query string ``Rule.build`` appends: Werkzeug's ``urlencode`` of the
        pairs (None values left out), which joins each pair's text with ``&``.
        Werkzeug's text of a ``str`` or ``int`` pair is remembered (a page's query
        values repeat, and encoding them is most of what such a URL would cost); other
        values (lists expand into several pairs) and a map that sorts its query
        arguments are encoded whole each time."""
        if self._sorted:
            return self._encoded(values, query)
        text = ""
        for name, memo in query:
            value = values[name]
            kind = type(value)
            if kind is str or kind is int:
                text += memo.get(value) or self._pair(memo, name, value)
            elif value is not None:
                return self._encoded(values, query)
        return "?" + text[1:] if text else ""

    def _pair(self, memo: dict[Any, str], name: str, value: str | int) -> str:
        """Werkzeug's ``&name=value``, remembered in ``memo`` (bounded)."""
        pair = "&" + self._rule._encode_query_vars({name: value})
        if len(memo) < _MAX_QUERY_PAIRS:
            memo[value] = pair
        return pair

    def _encoded(self, values: Mapping[str, Any], query: _Query) -> str:
        text = self._rule._encode_query_vars({name: values[name] for name, _ in query})
        return "?" + text if text else ""

    def _memo(self, name: str) -> dict[Any, str]:
        memo = self._memos.get(name)
        if memo is None:
            memo = {}
            if len(self._memos) < _MAX_QUERY_NAMES:  # names come from code; a bound all the same
                self._memos[name] = memo
        return memo


#: The query part of a shape of values: per name, its remembered texts.
_Query = tuple[tuple[str, dict[Any, str]], ...]
#: A rule's path text before its first variable, then per variable its name, its
#: converter's ``to_url`` and the text after it.
_Template = tuple[str, tuple[tuple[str, Callable[[Any], str], str], ...]]


class _Marks:
    """Stands for a rule in a call of its compiled builder: its converters answer
    marks (NUL, which Werkzeug's quoting never leaves in static text)."""

    def __init__(self, rule: Rule) -> None:
        self._converters = {name: _Mark(name) for name in rule._converters}


class _Mark:
    def __init__(self, name: str) -> None:
        self.text = f"\0{name}\0"

    def to_url(self, value: Any) -> str:
        return self.text


def _template(rule: Rule) -> _Template | None:
    """The rule's static text and converters, as its compiled builder joins them.

    Werkzeug compiles each rule into a function (``Rule._build``) that joins the
    rule's static text, quoted and with its defaults' text folded in, with
    ``self._converters[name].to_url(value)`` per variable. Called once with
    converters that answer marks, it gives the rule's text with a mark for each
    variable: the static parts, exactly as Werkzeug writes them. None for a rule with
    a variable in its subdomain or host (url_for builds those URLs)."""
    marks = dict.fromkeys(rule.arguments - (rule.defaults or {}).keys())
    domain, path = rule._build.__func__(_Marks(rule), **marks)  # type: ignore[attr-defined]
    if "\0" in domain:
        return None
    first, *rest = path.split("\0")
    names, tails = rest[::2], rest[1::2]
    converters = rule._converters
    return first, tuple(
        (name, converters[name].to_url, tail) for name, tail in zip(names, tails, strict=True)
    )
