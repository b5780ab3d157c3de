"""Absolute URLs of one Flask endpoint, built cheaply inside sitemap sources.

``url_for(endpoint, _external=True, **values)`` runs Flask's and Werkzeug's general
machinery for every URL (context look-ups, URL defaults, the choice of a rule among
several, query arguments, the host): a few microseconds each, a large share of a
sitemap page. A :class:`UrlBuilder` does the part that does not depend on the values
once per request (the rule's static text, each variable's converter, the
``scheme://host/script-root`` prefix of the URL adapter the request is bound to) and
then only converts the values::

    from flask_sitemapper import Entry, Sitemapper, url_builder

    post_url = url_builder("post")

    @sitemapper.source("posts")
    def posts():
        for post in Post.query:
            yield Entry(post_url(post_id=post.id), lastmod=post.updated_at)

The result is always exactly ``url_for(endpoint, _external=True, **values)``: what the
fast path does not cover goes to ``url_for`` itself, e.g. an endpoint with several
rules, values that are not exactly the rule's variables (extra ones become a query
string there), ``None`` values, a relative endpoint (``".post"``), host matching,
variables in a subdomain, WebSocket rules, a ``Flask`` subclass with its own
``url_for``, a call outside a request context, and any value a converter refuses (so
the error raised is ``url_for``'s). ``url_defaults`` functions of the app and of the
endpoint's blueprints run as ``url_for`` runs them, and a rule's defaults (a
blueprint's ``url_defaults=``) are checked and left out as Werkzeug does.

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

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, quote_plus

from flask import Flask, url_for
from werkzeug.routing import (
    BaseConverter,
    FloatConverter,
    IntegerConverter,
    MapAdapter,
    Rule,
    UUIDConverter,
)
from werkzeug.routing.converters import NumberConverter

try:  # Flask keeps the request context in this ContextVar (Flask 2.2 to 3.1).
    from flask.globals import _cv_request

    _request_context: Callable[[None], Any] = _cv_request.get
except ImportError:  # pragma: no cover - a Flask without it: every URL goes to url_for

    def _request_context(default: None) -> Any:
        return default


__all__ = ["UrlBuilder", "url_builder"]

#: What Werkzeug leaves unquoted in a path segment besides letters, digits and ``_.-~``
#: (the WHATWG path-segment set), for static rule text and ``to_url`` alike.
_SEGMENT_SAFE = "!$&'()*+,/:;=@"
#: A character that Werkzeug's quoting would change: a string without any is its own URL.
_NEEDS_QUOTING = re.compile(r"[^A-Za-z0-9_.\-~!$&'()*+,/:;=@]")

#: url_for's own keyword arguments: a value named so is no URL value.
_URL_FOR_OPTIONS = frozenset({"_anchor", "_method", "_scheme", "_external"})

#: Renders one value of a variable, or raises (any exception) to let url_for decide.
Convert = Callable[[Any], str]
#: Renders a whole URL from the values, or raises (any exception) for url_for.
Render = Callable[[Mapping[str, Any]], str]


class _UseUrlFor(Exception):
    """The fast path cannot promise url_for's answer for these values."""


class UrlBuilder:
    """Build ``url_for(endpoint, _external=True, **values)`` for one endpoint, fast.

    Call it with the URL values (``builder(post_id=7)``) or a mapping of them
    (``builder.build({"post_id": 7})``). See the module documentation.
    """

    __slots__ = ("_bound", "_plan", "endpoint")

    def __init__(self, endpoint: str) -> None:
        if not isinstance(endpoint, str) or not endpoint:
            raise TypeError(f"url_builder() needs an endpoint name, got {endpoint!r}")
        self.endpoint = endpoint
        # (URL adapter, renderer or None): recomputed when a request binds a new adapter.
        self._bound: tuple[MapAdapter | None, Render | None] | None = None
        # (rule, its plan): a plan is derived once per rule object, not per request.
        self._plan: tuple[Rule, _RulePlan | None] | None = None

    def __repr__(self) -> str:
        return f"url_builder({self.endpoint!r})"

    def __call__(self, /, **values: Any) -> str:
        """The absolute URL of the endpoint for ``values``, as ``url_for`` gives it."""
        # The body of build(), repeated: one call level less per URL.
        ctx = _request_context(None)
        if ctx is not None:
            bound = self._bound
            adapter = ctx.url_adapter
            if bound is None or bound[0] is not adapter:
                bound = self._bind(ctx.app, adapter)
            render = bound[1]
            if render is not None:
                try:
                    return render(values)
                except Exception:  # anything unusual: url_for gives the answer or the error
                    pass
        return url_for(self.endpoint, _external=True, **values)

    def build(self, values: Mapping[str, Any]) -> str:
        """The absolute URL of the endpoint for the mapping ``values`` (left unchanged)."""
        ctx = _request_context(None)
        if ctx is not None:
            bound = self._bound
            adapter = ctx.url_adapter
            if bound is None or bound[0] is not adapter:
                bound = self._bind(ctx.app, adapter)
            render = bound[1]
            if render is not None:
                try:
                    return render(values)
                except Exception:
                    pass
        return url_for(self.endpoint, _external=True, **values)

    def _bind(
        self, app: Flask, adapter: MapAdapter | None
    ) -> tuple[MapAdapter | None, Render | None]:
        bound = (adapter, self._renderer(app, adapter))
        self._bound = bound  # one assignment: another thread sees the old or the new pair
        return bound

    def _renderer(self, app: Flask, adapter: MapAdapter | None) -> Render | None:
        """A renderer equal to url_for under ``adapter``, or None where url_for must run."""
        endpoint = self.endpoint
        if adapter is None or endpoint.startswith(".") or not _plain_url_for(app, adapter):
            return None
        url_map = adapter.map
        if url_map.host_matching:
            return None
        try:
            rules = list(url_map.iter_rules(endpoint))
        except KeyError:  # unknown endpoint: url_for raises its BuildError
            return None
        if len(rules) != 1:  # which rule wins depends on the values: Werkzeug decides
            return None
        rule = rules[0]
        cached = self._plan
        if cached is None or cached[0] is not rule:
            cached = (rule, _RulePlan.of(rule))
            self._plan = cached
        plan = cached[1]
        if plan is None:
            return None
        prefix = _prefix(adapter, plan.domain)
        return plan.renderer(prefix, _injector(app, endpoint), not url_map.sort_parameters)


def url_builder(endpoint: str) -> UrlBuilder:
    """A :class:`UrlBuilder` for ``endpoint``; create it once, call it per URL.

    ``url_builder("post")(post_id=7)`` is ``url_for("post", _external=True,
    post_id=7)``, at a fraction of the cost, inside a request context (as sources run).
    """
    return UrlBuilder(endpoint)


# -- what the fast path may assume ----------------------------------------------------


def _plain_url_for(app: Flask, adapter: MapAdapter) -> bool:
    """Tell whether url_for is Flask's and Werkzeug's own, which the plan reproduces."""
    return (
        type(app).url_for is Flask.url_for
        and "url_for" not in vars(app)
        and type(adapter).build is MapAdapter.build
    )


def _prefix(adapter: MapAdapter, domain: str) -> str:
    """``scheme://host/script-root`` as ``MapAdapter.build(force_external=True)`` writes
    it for an HTTP rule (no trailing slash)."""
    scheme = adapter.url_scheme
    if scheme:
        scheme = "https:" if scheme in ("https", "wss") else "http:"
    return f"{scheme}//{adapter.get_host(domain)}{adapter.script_name[:-1]}"


def _injector(app: Flask, endpoint: str) -> Callable[[dict[str, Any]], None] | None:
    """``app.inject_url_defaults`` for ``endpoint`` when it does anything, else None."""

    def inject(values: dict[str, Any]) -> None:
        app.inject_url_defaults(endpoint, values)

    if type(app).inject_url_defaults is not Flask.inject_url_defaults:
        return inject
    # url_for runs the app's functions (key None) and those of each blueprint the
    # endpoint is in ("a.b.view": "a.b" and "a").
    names: list[str | None] = [None]
    blueprint = endpoint.rpartition(".")[0]
    while blueprint:
        names.append(blueprint)
        blueprint = blueprint.rpartition(".")[0]
    functions = app.url_default_functions
    return inject if any(functions.get(name) for name in names) else None


# -- one rule, compiled ----------------------------------------------------------------


@dataclass(frozen=True)
class _RulePlan:
    """What a rule's URLs are made of, values aside.

    The path is ``head`` then, per variable, its converted value and the static text
    after it. ``strip``: the path starts with a variable after nothing but slashes, so
    its leading slashes are stripped at run time, as ``MapAdapter.build`` does.
    """

    domain: str
    head: str
    steps: tuple[tuple[str, Convert, str], ...]
    strip: bool
    defaults: tuple[tuple[str, Any], ...]

    @classmethod
    def of(cls, rule: Rule) -> _RulePlan | None:
        """The plan of ``rule``, or None when its URLs are left to url_for."""
        if (
            rule.websocket
            or type(rule).build is not Rule.build
            or type(rule).suitable_for is not Rule.suitable_for
        ):
            return None
        # The rule's parsed parts, as Werkzeug keeps them (a private attribute: a
        # Werkzeug without it just sends every URL through url_for).
        trace = getattr(rule, "_trace", None)
        converters = getattr(rule, "_converters", None)
        if not isinstance(trace, list) or not isinstance(converters, dict):
            return None
        defaults = dict(rule.defaults or {})
        try:
            split = trace.index((False, "|"))  # the host part, then the path part
            domain = _static_text(trace[:split], converters, defaults)
            parts = _parts(trace[split + 1 :], converters, defaults)
        except Exception:  # a part we do not know, a default its converter refuses
            return None
        if domain is None or not parts or not isinstance(parts[0], str):
            return None
        first = parts[0]
        # MapAdapter.build writes "/" + path.lstrip("/"): with text after the leading
        # slashes that is known now; with a variable right after them, not before run time.
        strip = not first.lstrip("/")
        head = first if strip else "/" + first.lstrip("/")
        steps: list[tuple[str, Convert, str]] = []
        index = 1
        while index < len(parts):
            variable = parts[index]
            tail = parts[index + 1] if index + 1 < len(parts) else ""
            if not isinstance(variable, tuple) or not isinstance(tail, str):
                return None
            if variable[0] in _URL_FOR_OPTIONS:
                return None  # url_for takes such a value as its option, not the variable
            steps.append((variable[0], variable[1], tail))
            index += 2
        return cls(domain, head, tuple(steps), strip, tuple(defaults.items()))

    def renderer(
        self, prefix: str, inject: Callable[[dict[str, Any]], None] | None, query: bool
    ) -> Render:
        """The URL renderer for this plan under ``prefix`` (scheme, host, script root);
        ``query``: values that are no variable may be rendered as the query string."""
        base = _path_renderer(prefix, self, query)
        defaults = self.defaults
        if inject is None and not defaults:
            return base

        def render(values: Mapping[str, Any]) -> str:
            given = values
            if inject is not None:
                given = dict(values)  # url_for's functions change their own copy
                inject(given)
            if defaults:
                # A rule default may be left out or given as itself (Werkzeug ignores a
                # None value); any other value means another rule or an error.
                rest = dict(given)
                for key, default in defaults:
                    if key in rest:
                        value = rest.pop(key)
                        if value is not None and default != value:
                            raise _UseUrlFor
                given = rest
            return base(given)

        return render


def _static_text(
    ops: list[tuple[bool, str]],
    converters: Mapping[str, BaseConverter],
    defaults: Mapping[str, Any],
) -> str | None:
    """The text of trace parts that must all be static (the host part), or None."""
    text = ""
    for part in _parts(ops, converters, defaults):
        if not isinstance(part, str):
            return None
        text += part
    return text


def _parts(
    ops: list[tuple[bool, str]],
    converters: Mapping[str, BaseConverter],
    defaults: Mapping[str, Any],
) -> list[str | tuple[str, Convert]]:
    """Static texts (quoted as Werkzeug quotes them, adjacent ones joined) and variables.

    A variable with a rule default is the default's text, as Werkzeug compiles it.
    """
    parts: list[str | tuple[str, Convert]] = []
    for dynamic, data in ops:
        if dynamic and data in defaults:
            part: str | tuple[str, Convert] = converters[data].to_url(defaults[data])
        elif dynamic:
            part = (data, _converter(converters[data]))
        else:
            part = quote(data, safe=_SEGMENT_SAFE)
        if isinstance(part, str):
            if parts and isinstance(parts[-1], str):
                parts[-1] += part
            else:
                parts.append(part)
        else:
            if not parts or not isinstance(parts[-1], str):
                parts.append("")  # a variable right after another: no text between
            parts.append(part)
    return parts


# -- converters --------------------------------------------------------------------------


def _converter(converter: BaseConverter) -> Convert:
    """A function giving ``converter.to_url(value)``, with Werkzeug's built-in
    converters done inline; None (which url_for drops) raises."""
    kind = type(converter)
    to_url = converter.to_url
    if kind.to_url is BaseConverter.to_url:  # the default, string and path converters

        def segment(value: Any) -> str:
            if type(value) is str and (
                (value.isalnum() and value.isascii()) or _needs_quoting(value) is None
            ):
                return value
            if value is None:
                raise _UseUrlFor
            return to_url(value)

        return segment
    if (
        kind in (IntegerConverter, FloatConverter)
        and kind.to_url is NumberConverter.to_url
        and not getattr(converter, "fixed_digits", 0)
    ):
        number = kind.num_convert
        if number is int:
            return _integer
        if number is float:
            return _float
    if kind is UUIDConverter:
        return _uuid

    def convert(value: Any) -> str:
        if value is None:
            raise _UseUrlFor
        return to_url(value)

    return convert


_needs_quoting = _NEEDS_QUOTING.search


def _integer(value: Any) -> str:
    # int(None) raises, as url_for would (it drops None, then finds no rule).
    return str(int(value))


def _float(value: Any) -> str:
    return str(float(value))


def _uuid(value: Any) -> str:
    if value is None:
        raise _UseUrlFor
    return str(value)


# -- renderers by number of variables ----------------------------------------------------


def _path_renderer(prefix: str, plan: _RulePlan, query: bool) -> Render:
    """A function of the values giving the whole URL.

    Every variable of the rule must be among the values; the other values make the
    query string, as Werkzeug appends them (``query`` False: the map sorts them, so
    url_for builds those URLs).

    Values with a query part take the encoder of their names in their order, which
    is the last one used while the names come in the same order (the usual case: every
    item of a route's ``params`` made by the same code); comparing the names as a list
    is cheaper than hashing them as a tuple to look the encoder up. The check is
    written out in each renderer below, one call level less per URL.
    """
    steps = plan.steps
    count = len(steps)
    encoders = _QueryEncoders(frozenset(name for name, _, _ in steps), query)

    if plan.strip:
        first = plan.head

        def stripped(values: Mapping[str, Any]) -> str:
            path = first
            for name, convert, tail in steps:
                path += convert(values[name]) + tail
            url = prefix + "/" + path.lstrip("/")
            if len(values) == count:
                return url
            names, encode = encoders.last
            if [*values] != names:
                encode = encoders.encoder(values)
            return url + encode(values)

        return stripped
    head = prefix + plan.head
    if not steps:

        def static(values: Mapping[str, Any]) -> str:
            if not values:
                return head
            names, encode = encoders.last
            if [*values] != names:
                encode = encoders.encoder(values)
            return head + encode(values)

        return static
    if count == 1:
        ((name, convert, tail),) = steps

        def one(values: Mapping[str, Any]) -> str:
            url = head + convert(values[name]) + tail
            if len(values) == 1:
                return url
            names, encode = encoders.last
            if [*values] != names:
                encode = encoders.encoder(values)
            return url + encode(values)

        return one
    if count == 2:
        (name1, convert1, tail1), (name2, convert2, tail2) = steps

        def two(values: Mapping[str, Any]) -> str:
            url = head + convert1(values[name1]) + tail1 + convert2(values[name2]) + tail2
            if len(values) == 2:
                return url
            names, encode = encoders.last
            if [*values] != names:
                encode = encoders.encoder(values)
            return url + encode(values)

        return two

    def many(values: Mapping[str, Any]) -> str:
        url = head
        for name, convert, tail in steps:
            url += convert(values[name]) + tail
        if len(values) == count:
            return url
        names, encode = encoders.last
        if [*values] != names:
            encode = encoders.encoder(values)
        return url + encode(values)

    return many


# -- the query string ---------------------------------------------------------------------

#: What urlencode leaves unquoted in Werkzeug's query strings besides ``_.-~``.
_QUERY_SAFE = "!$'()*,/:;?@"
_query_needs_quoting = re.compile(r"[^A-Za-z0-9_.\-~!$'()*,/:;?@]").search


def _refuse(values: Mapping[str, Any]) -> str:
    """No encoder yet: never called (no list of names equals the first ``[]``)."""
    raise _UseUrlFor


class _QueryEncoders:
    """The query-string encoders of one rule's renderer, one per order of value names.

    ``last`` is ``(names, encoder)`` of the values last encoded, replaced in one
    assignment so that a thread reading it never pairs one order's names with
    another's encoder.
    """

    __slots__ = ("_by_names", "_variables", "allowed", "last")

    def __init__(self, variables: frozenset[str], allowed: bool) -> None:
        self._variables = variables
        self.allowed = allowed
        self._by_names: dict[tuple[Any, ...], Render] = {}
        self.last: tuple[list[Any], Render] = ([], _refuse)

    def encoder(self, values: Mapping[str, Any]) -> Render:
        """The encoder of the query part of ``values`` (the values that are not the
        rule's variables, in their order), now also the ``last`` one."""
        if not self.allowed:  # the map sorts query arguments: url_for builds those URLs
            raise _UseUrlFor
        names = [*values]
        key = tuple(names)
        encode = self._by_names.get(key)
        if encode is None:
            encode = _query_encoder([name for name in names if name not in self._variables])
            if len(self._by_names) < 64:  # a bound for values whose names keep changing
                self._by_names[key] = encode
        self.last = (names, encode)
        return encode


def _query_encoder(names: list[Any]) -> Render:
    """A function giving ``?name=value&...`` for these value names, in this order,
    quoted as Werkzeug's ``urlencode`` quotes them (``quote_plus``).

    An ``int``, or a ``str`` of ASCII letters and digits (the usual query values), is
    its own text and is written without a call; the others go through
    :func:`_query_value`, which raises for the values Werkzeug expands or drops.
    """
    if not names:  # fewer values than variables: the path part raised already
        raise _UseUrlFor
    texts = [_query_key(name) for name in names]
    texts = ["?" + texts[0], *("&" + text for text in texts[1:])]
    if len(names) == 1:
        (name,), (text,) = names, texts

        def one(values: Mapping[str, Any]) -> str:
            value = values[name]
            if type(value) is not int and (
                type(value) is not str or not (value.isascii() and value.isalnum())
            ):
                value = _query_value(value)
            return f"{text}{value}"

        return one
    if len(names) == 2:
        (name1, name2), (text1, text2) = names, texts

        def two(values: Mapping[str, Any]) -> str:
            value1 = values[name1]
            if type(value1) is not int and (
                type(value1) is not str or not (value1.isascii() and value1.isalnum())
            ):
                value1 = _query_value(value1)
            value2 = values[name2]
            if type(value2) is not int and (
                type(value2) is not str or not (value2.isascii() and value2.isalnum())
            ):
                value2 = _query_value(value2)
            return f"{text1}{value1}{text2}{value2}"

        return two
    pairs = tuple(zip(names, texts, strict=True))

    def many(values: Mapping[str, Any]) -> str:
        query = ""
        for name, text in pairs:
            value = values[name]
            if type(value) is not int and (
                type(value) is not str or not (value.isascii() and value.isalnum())
            ):
                value = _query_value(value)
            query += f"{text}{value}"
        return query

    return many


def _query_value(value: Any) -> str:
    """One query value as ``urlencode`` writes it (``quote_plus(str(value))``); the
    values Werkzeug expands or drops (lists, tuples, sets, bytes, None) raise."""
    kind = type(value)
    if kind is str:
        return value if _query_needs_quoting(value) is None else quote_plus(value, _QUERY_SAFE)
    if kind is int:
        return str(value)
    if value is None or isinstance(value, list | tuple | set | bytes):
        raise _UseUrlFor
    return quote_plus(str(value), _QUERY_SAFE)


def _query_key(key: Any) -> str:
    """``key=`` quoted; a key url_for refuses or takes as its option raises."""
    if type(key) is not str or key in _URL_FOR_OPTIONS:
        raise _UseUrlFor
    return (key if _query_needs_quoting(key) is None else quote_plus(key, _QUERY_SAFE)) + "="
