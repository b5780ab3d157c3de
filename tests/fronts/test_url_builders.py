"""The URL builders give exactly what the frameworks' own URL building gives.

* Flask: ``flask_sitemapper.url_builder(endpoint)(**values)`` against
  ``url_for(endpoint, _external=True, **values)``, in request contexts bound as a real
  request binds them and as the extension binds them (https, ports, script roots),
  over odd values: unicode, spaces, ``%``, ``?``, ``#``, slashes in ``path`` variables,
  negative and huge ints, floats, UUIDs, ``any``, ``string(length=...)``, custom
  converters, blueprints with a ``url_prefix`` and ``url_defaults``, ``url_defaults``
  functions, query values, ``None``, hosts and subdomains, and the endpoints that
  ``url_for`` builds itself;
* ASGI: ``asgi_sitemap.url_builder(name)(**params)`` against the router's
  ``url_path_for`` joined to the base URL (``asgi_sitemap.context.url_for``) and
  against ``request.url_for`` on the same base, through mounts (named, unnamed, with
  parameters), ``root_path``, and a FastAPI app;
* errors: where the framework raises, the builder raises the same error; a converter's
  own bug is raised as is, never handed to the framework to try again;
* ``include(params=...)`` / ``SitemapRoutes`` output stays byte-identical to what it
  was with ``url_for`` per URL (a recorded digest, and a ``url_for`` twin source).
"""

from __future__ import annotations

import hashlib
import math
import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from fastapi import APIRouter, FastAPI
from flask import Blueprint, Flask, url_for
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.convertors import Convertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Host, Mount, Route, Router, WebSocketRoute
from werkzeug.routing import BaseConverter, BuildError, ValidationError

import asgi_sitemap
import asgi_sitemap.urls as asgi_urls
import flask_sitemapper
import flask_sitemapper.urls as flask_urls
from asgi_sitemap.context import SitemapContext, _current
from asgi_sitemap.context import url_for as reference_url_for
from sitemap_core import BaseURL

from .conftest import asgi_client, wsgi_client
from .url_apps import flask_app, starlette_app

#: More examples on request: URL_BUILDER_EXAMPLES=5000 pytest tests/fronts/test_url_builders.py
SETTINGS = settings(
    max_examples=int(os.environ.get("URL_BUILDER_EXAMPLES", "400")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def outcome(build: Callable[[], str]) -> tuple[str, str]:
    """``("ok", url)`` or ``(exception type, message)``: what a call gave."""
    try:
        return "ok", build()
    except Exception as exc:
        return type(exc).__name__, str(exc)


# -- odd values -----------------------------------------------------------------------

ODD_CHARS = st.sampled_from(
    [*" %?#/&=+;:@!$'()*,~._-\\\"<>[]{}|^`\t\n", "\u00e9", "\u65e5", "\U0001f600", "\x00"]
)
#: Text with many reserved / quoting characters, and any unicode now and then.
ODD_TEXT = st.one_of(
    st.lists(st.one_of(ODD_CHARS, st.characters(codec="utf-8")), max_size=12).map("".join),
    st.text(max_size=8),
    st.sampled_from(["", "/", "//", "a/b", "/lead", "trail/", "%2F", "caf\u00e9", "x y"]),
)
NUMBERS = st.one_of(
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 1.5, 0.1, 1e-7, 1e22, -0.0, True]),
)
ANY_VALUE = st.one_of(ODD_TEXT, NUMBERS, st.uuids(), st.none(), st.sampled_from(["12", " 7", "a"]))


# -- Flask -----------------------------------------------------------------------------


class TwoLetters(BaseConverter):
    """A converter with a regex of its own but Werkzeug's quoting."""

    regex = "[a-z]{2}"


class Reversed(BaseConverter):
    """A converter with its own ``to_url``."""

    def to_url(self, value: Any) -> str:
        return str(value)[::-1].replace(" ", "_")


def build_flask_app() -> Flask:
    """Every kind of rule the builder plans for, and some it leaves to url_for."""
    app = Flask("url_builders")
    app.url_map.converters["two"] = TwoLetters
    app.url_map.converters["rev"] = Reversed
    app.config["SERVER_NAME"] = None

    def view(**values: Any) -> str:
        return "ok"

    rules = {
        "string": "/s/<s>",
        "string_len": "/len/<string(length=2):code>",
        "path": "/p/<path:p>/edit",
        "int": "/i/<int:i>",
        "int_signed": "/is/<int(signed=True):i>",
        "int_fixed": "/fd/<int(fixed_digits=4):i>",
        "float": "/fl/<float:f>",
        "float_signed": "/fls/<float(signed=True):f>",
        "uuid": "/u/<uuid:u>",
        "any": "/a/<any(red, 'blue sky', green):c>",
        "two": "/two/<two:t>",
        "rev": "/rev/<rev:r>",
        "pair": "/x/<a>/<int:b>",
        "triple": "/y/<a>-<b>.<path:c>",
        "first": "/<first>",
        "root_path": "/<path:whole>",
        "about": "/about/us",
        "home": "/",
        "quoted_static": "/caf\u00e9 & bar/<a>",
    }
    for endpoint, rule in rules.items():
        app.add_url_rule(rule, endpoint, view)
    app.add_url_rule("//double//<a>", "double", view, merge_slashes=False)
    app.add_url_rule("/sub/<a>", "sub", view, subdomain="api")
    # Several rules for one endpoint: url_for chooses, the builder defers to it.
    app.add_url_rule("/list/", "listing", view, defaults={"page": 1})
    app.add_url_rule("/list/<int:page>", "listing", view)
    # A rule default that is not a variable: url_for accepts it only as itself.
    app.add_url_rule("/fixed/<a>", "fixed", view, defaults={"mode": "full"})

    blog = Blueprint("blog", __name__, url_prefix="/blog/<lang>", url_defaults={"lang": "en"})
    blog.add_url_rule("/<slug>", "article", view)
    inner = Blueprint("inner", __name__, url_prefix="/inner")
    inner.add_url_rule("/<int:n>", "page", view)
    shop = Blueprint("shop", __name__, url_prefix="/shop")
    shop.add_url_rule("/<currency>/<item>", "product", view)

    @shop.url_defaults
    def currency(endpoint: str, values: dict[str, Any]) -> None:
        values.setdefault("currency", "eur")

    blog.register_blueprint(inner)
    app.register_blueprint(blog)
    app.register_blueprint(shop)
    return app


FLASK_APP = build_flask_app()
FLASK_ENDPOINTS = sorted({rule.endpoint for rule in FLASK_APP.url_map.iter_rules()} - {"static"})
#: Where sources run: a request's own binding, and the extension's binding to a base URL.
FLASK_BASES = [
    "http://localhost",
    "https://example.com:8443/root",
    "https://example.com/a/b",
    "http://127.0.0.1:5000/",
    "https://xn--caf-dma.example/shop",
]
#: The variables of each endpoint, to draw values for.
FLASK_NAMES = {
    endpoint: sorted(
        {arg for rule in FLASK_APP.url_map.iter_rules(endpoint) for arg in rule.arguments}
    )
    for endpoint in FLASK_ENDPOINTS
}


@contextmanager
def flask_context(app: Flask, base: str, extension_binding: bool) -> Iterator[None]:
    """A request context as a source sees it: bound by the request itself, or rebound
    to the site's base URL as the extension does."""
    with app.test_request_context("/", base_url=base) as ctx:
        if extension_binding:
            parsed = BaseURL.parse(base)
            scheme, _, rest = parsed.url.partition("://")
            netloc, _, prefix = rest.partition("/")
            ctx.url_adapter = app.url_map.bind(
                netloc, script_name="/" + prefix, url_scheme=scheme, path_info="/"
            )
        yield


@st.composite
def flask_values(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """An endpoint and values for it: its variables (odd values), sometimes one too
    few, and sometimes extra ones (a query string)."""
    endpoint = draw(st.sampled_from(FLASK_ENDPOINTS))
    names = FLASK_NAMES[endpoint]
    values = {name: draw(ANY_VALUE) for name in names}
    if names and draw(st.integers(0, 9)) == 0:
        values.pop(draw(st.sampled_from(names)))
    extra = draw(
        st.dictionaries(
            st.sampled_from(["ref", "x", "q y", "caf\u00e9", "_anchor"]), ANY_VALUE, max_size=2
        )
    )
    values.update(extra)
    return endpoint, values


@SETTINGS
@given(
    case=flask_values(),
    base=st.sampled_from(FLASK_BASES),
    extension_binding=st.booleans(),
)
def test_flask_builder_equals_url_for(
    case: tuple[str, dict[str, Any]], base: str, extension_binding: bool
) -> None:
    endpoint, values = case
    with flask_context(FLASK_APP, base, extension_binding):
        expected = outcome(lambda: url_for(endpoint, _external=True, **values))
        builder = flask_sitemapper.url_builder(endpoint)
        assert outcome(lambda: builder(**values)) == expected
        # The mapping form, twice (the second call reuses the bound plan), unchanged.
        given_values = dict(values)
        assert outcome(lambda: builder.build(given_values)) == expected
        assert outcome(lambda: builder.build(given_values)) == expected
        assert given_values == values


@SETTINGS
@given(
    text=ODD_TEXT,
    number=st.integers(min_value=-(10**30), max_value=10**30),
    real=st.floats(),
    ident=st.uuids(),
    base=st.sampled_from(FLASK_BASES),
)
def test_flask_builder_equals_url_for_on_typed_values(
    text: str, number: int, real: float, ident: uuid.UUID, base: str
) -> None:
    """Values of the type each converter expects (the case sources have)."""
    cases = [
        ("string", {"s": text}),
        ("path", {"p": text}),
        ("first", {"first": text}),
        ("root_path", {"whole": text}),
        ("quoted_static", {"a": text}),
        ("double", {"a": text}),
        ("int", {"i": abs(number)}),
        ("int_signed", {"i": number}),
        ("float", {"f": abs(real)}),
        ("float_signed", {"f": real}),
        ("uuid", {"u": ident}),
        ("pair", {"a": text, "b": abs(number)}),
        ("triple", {"a": text, "b": text, "c": text}),
        ("blog.article", {"slug": text}),
        ("blog.inner.page", {"n": abs(number), "lang": text}),
        ("shop.product", {"item": text}),
        ("int", {"i": abs(number), "ref": text, "n": number}),
    ]
    with flask_context(FLASK_APP, base, extension_binding=True):
        for endpoint, values in cases:
            expected = outcome(lambda: url_for(endpoint, _external=True, **values))  # noqa: B023
            builder = flask_sitemapper.url_builder(endpoint)
            assert outcome(lambda: builder(**values)) == expected, (endpoint, values)  # noqa: B023


#: Query values a params list usually has, and the odd ones.
QUERY_VALUE = st.one_of(
    st.sampled_from(["feed", "A1", "", "a b", "a&b=c", "caf\u00e9", "\u00b2", 0, 7, -3, True]),
    ANY_VALUE,
)
#: Endpoints with every shape of path renderer: static, one, two, many, stripped.
QUERY_ENDPOINTS = ["about", "int", "pair", "triple", "first"]


@st.composite
def flask_value_runs(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]]]:
    """An endpoint and a run of values for one builder: a few orders of the names
    (the rule's variables and query names), each used several times in any order."""
    endpoint = draw(st.sampled_from(QUERY_ENDPOINTS))
    variables = FLASK_NAMES[endpoint]
    orders = draw(
        st.lists(
            st.lists(st.sampled_from(["ref", "x", "q y", "caf\u00e9", "n"]), unique=True)
            .map(lambda extra: [*variables, *extra])
            .flatmap(st.permutations),
            min_size=1,
            max_size=3,
        )
    )
    run = []
    for order in draw(st.lists(st.sampled_from(orders), min_size=1, max_size=8)):
        values: dict[str, Any] = {}
        for name in order:
            if name in variables:  # values the rule takes, so the query part is reached
                values[name] = draw(st.integers(0, 999) if name == "b" else st.sampled_from("ab7"))
            else:
                values[name] = draw(QUERY_VALUE)
        run.append(values)
    return endpoint, run


@SETTINGS
@given(case=flask_value_runs(), base=st.sampled_from(FLASK_BASES))
def test_flask_builder_query_values_equal_url_for_along_a_run(
    case: tuple[str, list[dict[str, Any]]], base: str
) -> None:
    """One builder over many values, as a route's page uses it: the query encoder it
    keeps for the last order of names never leaks into values of another order."""
    endpoint, run = case
    with flask_context(FLASK_APP, base, extension_binding=True):
        builder = flask_sitemapper.url_builder(endpoint)
        for values in run:
            expected = outcome(lambda: url_for(endpoint, _external=True, **values))  # noqa: B023
            assert outcome(lambda: builder.build(values)) == expected, values  # noqa: B023
            assert outcome(lambda: builder(**values)) == expected, values  # noqa: B023


def test_flask_query_orders_are_kept_apart() -> None:
    """The same names in two orders give two query strings, each url_for's."""
    with flask_context(FLASK_APP, "https://example.com", extension_binding=True):
        builder = flask_sitemapper.url_builder("int")
        runs = [{"i": 1, "ref": "feed", "x": 2}, {"x": 2, "i": 1, "ref": "feed"}] * 2
        urls = [builder.build(values) for values in runs]
        assert urls == [url_for("int", _external=True, **values) for values in runs]
        assert urls[0].endswith("?ref=feed&x=2")
        assert urls[1].endswith("?x=2&ref=feed")


class CountingUrlFor:
    """Stands in for ``flask_sitemapper.urls.url_for`` and counts the fallbacks."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, endpoint: str, /, **values: Any) -> str:
        self.calls += 1
        return url_for(endpoint, **values)


@pytest.mark.parametrize(
    ("endpoint", "values", "by_rule"),
    [
        ("string", {"s": "caf\u00e9 au lait?#"}, True),
        ("path", {"p": "a/b c/%"}, True),
        ("int", {"i": 7}, True),
        ("int_signed", {"i": -7}, True),
        ("float", {"f": 1.5}, True),
        ("uuid", {"u": uuid.UUID(int=5)}, True),
        ("any", {"c": "blue sky"}, True),
        ("any", {"c": "purple"}, True),  # AnyConverter builds any value, as url_for does
        ("two", {"t": "fr"}, True),
        ("rev", {"r": "ab c"}, True),
        ("triple", {"a": "1", "b": "2", "c": "3/4"}, True),
        ("first", {"first": "x"}, True),
        ("root_path", {"whole": "//x"}, True),
        ("about", {}, True),
        ("home", {}, True),
        ("sub", {"a": "x"}, True),
        ("int", {"i": 7, "ref": "feed", "x": 3, "f": 1.5, "t": "a b&c"}, True),
        ("int", {"i": 7, "ref": None}, True),  # a None value is left out, as url_for does
        ("int", {"i": 7, "ref": ["a", "b"]}, True),  # Werkzeug encodes the whole query
        ("int", {"i": "seven"}, True),  # the converter's ValueError, raised as url_for's
        ("blog.article", {"slug": "s"}, True),
        ("blog.article", {"slug": "s", "lang": "en"}, True),
        ("blog.inner.page", {"n": 3, "lang": "de"}, True),
        ("shop.product", {"item": "i"}, True),
        ("fixed", {"a": "x", "mode": "full"}, True),
        # url_for's business: several rules, values the rule refuses, its options,
        # names it resolves.
        ("listing", {"page": 2}, False),
        ("blog.article", {"slug": "s", "lang": "fr"}, False),
        ("fixed", {"a": "x", "mode": "lite"}, False),
        ("int", {"i": None}, False),
        ("int", {"i": 7, "_anchor": "top"}, False),
        ("string", {}, False),
        (".string", {"s": "x"}, False),
        ("unknown", {}, False),
    ],
)
def test_flask_builder_asks_url_for_only_for_its_business(
    monkeypatch: pytest.MonkeyPatch, endpoint: str, values: dict[str, Any], by_rule: bool
) -> None:
    """The rule builds the URL, or url_for does, decided by what the values are (never
    after an error of the rule's building): the answer, or the error, is url_for's."""
    counting = CountingUrlFor()
    monkeypatch.setattr(flask_urls, "url_for", counting)
    with flask_context(FLASK_APP, "https://example.com:8443/root", extension_binding=True):
        expected = outcome(lambda: url_for(endpoint, _external=True, **values))
        assert outcome(lambda: flask_sitemapper.url_builder(endpoint)(**values)) == expected
    assert (counting.calls == 0) is by_rule, expected


class Refusing(BaseConverter):
    """A converter that refuses some values as Werkzeug expects (ValidationError) and
    fails on others (a bug of its own)."""

    def to_url(self, value: Any) -> str:
        if value == "refused":
            raise ValidationError()
        if value == "bug":
            raise ZeroDivisionError("a bug in to_url")
        return str(value)


def test_flask_converter_errors_are_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ValidationError is Werkzeug's "cannot build": url_for raises its BuildError; any
    other error of a converter surfaces as is, and url_for is not asked to retry."""
    app = Flask("refusing")
    app.url_map.converters["refusing"] = Refusing
    app.add_url_rule("/r/<refusing:r>", "r", lambda r: r)
    counting = CountingUrlFor()
    monkeypatch.setattr(flask_urls, "url_for", counting)
    builder = flask_sitemapper.url_builder("r")
    with app.test_request_context(base_url="https://example.com"):
        assert builder(r="fine") == "https://example.com/r/fine"
        assert counting.calls == 0
        with pytest.raises(BuildError):
            builder(r="refused")
        assert counting.calls == 1
        with pytest.raises(ZeroDivisionError, match="a bug in to_url"):
            builder(r="bug")
        assert counting.calls == 1


@pytest.mark.parametrize("host_matching", [False, True])
def test_flask_hosts_and_subdomains_are_werkzeugs(host_matching: bool) -> None:
    """What comes before the path (scheme, host, subdomain, script root) is what
    MapAdapter.build writes; a variable in the subdomain or host goes to url_for."""
    static_host = "example.com" if host_matching else None
    app = Flask("hosts", host_matching=host_matching, static_host=static_host)
    app.config["SERVER_NAME"] = "example.com"
    if host_matching:
        app.add_url_rule("/a/<x>", "fixed_host", lambda x: x, host="api.example.com")
        app.add_url_rule("/b/<x>", "variable_host", lambda x: x, host="<user>.example.com")
    else:
        app.add_url_rule("/a/<x>", "fixed_host", lambda x: x, subdomain="api")
        app.add_url_rule("/b/<x>", "variable_host", lambda x: x, subdomain="<user>")
    app.add_url_rule("/c/<x>", "plain", lambda x: x)
    cases = [
        ("fixed_host", {"x": "1"}),
        ("fixed_host", {"x": "2 3"}),
        ("variable_host", {"x": "1", "user": "ann"}),
        ("variable_host", {"x": "1", "user": "bob"}),
        ("plain", {"x": "1", "q": "r"}),
    ]
    for base in ["https://example.com/root", "http://example.com"]:
        with app.test_request_context("/", base_url=base):
            for endpoint, values in cases:
                expected = url_for(endpoint, _external=True, **values)
                assert flask_sitemapper.url_builder(endpoint)(**values) == expected


def test_flask_builder_follows_the_adapter_of_each_request() -> None:
    builder = flask_sitemapper.url_builder("int")
    for base in [*FLASK_BASES, *FLASK_BASES]:
        with flask_context(FLASK_APP, base, extension_binding=True):
            assert builder(i=3) == url_for("int", _external=True, i=3)


def test_flask_builder_outside_a_request_is_url_for() -> None:
    builder = flask_sitemapper.url_builder("int")
    with pytest.raises(RuntimeError):
        builder(i=3)  # no app context: url_for's own error
    app = build_flask_app()
    app.config["SERVER_NAME"] = "example.org"
    with app.app_context():
        assert builder(i=3) == url_for("int", _external=True, i=3) == "http://example.org/i/3"


def test_flask_subclass_with_its_own_url_for_is_used() -> None:
    class Shouting(Flask):
        def url_for(self, endpoint: str, /, **kwargs: Any) -> str:  # type: ignore[override]
            return super().url_for(endpoint, **kwargs).upper()

    app = Shouting("shouting")
    app.add_url_rule("/a/<x>", "a", lambda x: x)
    with app.test_request_context(base_url="https://example.com"):
        assert flask_sitemapper.url_builder("a")(x="b") == "HTTPS://EXAMPLE.COM/A/B"


def test_flask_url_defaults_run_on_a_copy() -> None:
    app = Flask("defaults")
    seen: list[dict[str, Any]] = []

    @app.url_defaults
    def add_lang(endpoint: str, values: dict[str, Any]) -> None:
        seen.append(dict(values))
        values.setdefault("lang", "de")

    app.add_url_rule("/<lang>/<int:n>", "n", lambda lang, n: "")
    with app.test_request_context(base_url="https://example.com"):
        given_values = {"n": 4}
        builder = flask_sitemapper.url_builder("n")
        assert builder.build(given_values) == "https://example.com/de/4"
        assert given_values == {"n": 4}
        assert builder(n=5, lang="fr") == "https://example.com/fr/5"
    assert seen == [{"n": 4}, {"n": 5, "lang": "fr"}]


def test_flask_builder_repr_and_bad_endpoint() -> None:
    assert repr(flask_sitemapper.url_builder("post")) == "url_builder('post')"
    with pytest.raises(TypeError):
        flask_sitemapper.url_builder("")


# -- ASGI ------------------------------------------------------------------------------


class Hex(Convertor[int]):
    """A convertor of the app's own (registered under a name only these tests use)."""

    regex = "[0-9a-f]+"

    def convert(self, value: str) -> int:
        return int(value, 16)

    def to_string(self, value: int) -> str:
        return format(int(value), "x")


register_url_convertor("test_url_builders_hex", Hex())


async def endpoint(request: Any) -> PlainTextResponse:
    return PlainTextResponse("ok")


def build_router() -> Router:
    """Routes, mounts and names of every kind the builder plans for or leaves alone."""
    return Router(
        [
            Route("/s/{s}", endpoint, name="string"),
            Route("/p/{p:path}/edit", endpoint, name="path"),
            Route("/i/{i:int}", endpoint, name="int"),
            Route("/f/{f:float}", endpoint, name="float"),
            Route("/u/{u:uuid}", endpoint, name="uuid"),
            Route("/h/{h:test_url_builders_hex}", endpoint, name="hex"),
            Route("/x/{a}/{b:int}", endpoint, name="pair"),
            Route("/y/{a}-{b}.{c:path}", endpoint, name="triple"),
            Route("/{first}", endpoint, name="first"),
            Route("/{whole:path}", endpoint, name="whole"),
            Route("//double/{a}", endpoint, name="double"),
            Route("/caf\u00e9 & bar\\/{a}", endpoint, name="odd_static"),
            Route("/", endpoint, name="home"),
            # One name, two parameter sets: each set finds its own route.
            Route("/twice/{a}", endpoint, name="twice"),
            Route("/twice/{a}/{b}", endpoint, name="twice"),
            Mount(
                "/m",
                name="m",
                routes=[
                    Route("/{slug}", endpoint, name="page"),
                    Mount("", routes=[Route("/deep/{n:int}", endpoint, name="deep")]),
                ],
            ),
            Mount("/anon", routes=[Route("/{slug}/x", endpoint, name="anon_page")]),
            Mount(
                "/d/{section}",
                name="d",
                routes=[Mount("/in", routes=[Route("/{slug}", endpoint, name="page")])],
            ),
            Mount("/{lang}", name="l", routes=[Route("/about", endpoint, name="about")]),
            Mount("/w/{where:path}", name="w", routes=[Route("/{a}", endpoint, name="a")]),
            Mount("/files", name="files", routes=[]),
            # A websocket route and a host route answer their names: url_path_for does.
            WebSocketRoute("/ws/{a}", endpoint, name="socket"),
            Route("/ws2/{a}", endpoint, name="socket"),
            Host("api.example.com", Router([Route("/v/{a}", endpoint, name="v")]), name="api"),
        ]
    )


ROUTER = build_router()
ASGI_NAMES: dict[str, list[str]] = {
    "string": ["s"],
    "path": ["p"],
    "int": ["i"],
    "float": ["f"],
    "uuid": ["u"],
    "hex": ["h"],
    "pair": ["a", "b"],
    "triple": ["a", "b", "c"],
    "first": ["first"],
    "whole": ["whole"],
    "double": ["a"],
    "odd_static": ["a"],
    "home": [],
    "twice": ["a", "b"],
    "m:page": ["slug"],
    "m:deep": ["n"],
    "anon_page": ["slug"],
    "d:page": ["section", "slug"],
    "l:about": ["lang"],
    "w:a": ["where", "a"],
    "files": ["path"],
    "socket": ["a"],
    "api:v": ["a"],
    "missing": [],
}
ASGI_BASES = [
    "http://localhost",
    "https://example.com:8443",
    "https://example.com/root/sub",
    "http://127.0.0.1:8000/mounted",
]


@contextmanager
def asgi_context(base: str, router: Any = ROUTER) -> Iterator[SitemapContext]:
    """The context the middleware sets while it serves a sitemap."""
    context = SitemapContext(BaseURL.parse(base), router)
    token = _current.set(context)
    try:
        yield context
    finally:
        _current.reset(token)


@st.composite
def asgi_values(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A route name and parameters: its own (odd values), one fewer, or one more."""
    name = draw(st.sampled_from(sorted(ASGI_NAMES)))
    names = ASGI_NAMES[name]
    if name == "twice" and draw(st.booleans()):
        names = ["a"]
    params = {key: draw(ANY_VALUE) for key in names}
    choice = draw(st.integers(0, 19))
    if choice == 0 and names:
        params.pop(draw(st.sampled_from(names)))
    elif choice == 1:
        params[draw(st.sampled_from(["extra", "path", "slug"]))] = draw(ANY_VALUE)
    return name, params


@SETTINGS
@given(case=asgi_values(), base=st.sampled_from(ASGI_BASES))
def test_asgi_builder_equals_url_path_for_on_the_base(
    case: tuple[str, dict[str, Any]], base: str
) -> None:
    name, params = case
    with asgi_context(base):
        expected = outcome(lambda: BaseURL.parse(base).join(ROUTER.url_path_for(name, **params)))
        assert outcome(lambda: reference_url_for(name, **params)) == expected
        builder = asgi_sitemap.url_builder(name)
        assert outcome(lambda: builder(**params)) == expected
        given_params = dict(params)
        assert outcome(lambda: builder.build(given_params)) == expected
        assert given_params == params
        assert outcome(lambda: asgi_sitemap.url_for(name, **params)) == expected


@SETTINGS
@given(
    text=ODD_TEXT,
    number=st.integers(min_value=0, max_value=10**30),
    real=st.floats(min_value=0.0, allow_infinity=False),
    ident=st.uuids(),
    base=st.sampled_from(ASGI_BASES),
)
def test_asgi_builder_equals_url_path_for_on_typed_values(
    text: str, number: int, real: float, ident: uuid.UUID, base: str
) -> None:
    cases = [
        ("string", {"s": text}),
        ("path", {"p": text}),
        ("first", {"first": text}),
        ("whole", {"whole": text}),
        ("double", {"a": text}),
        ("odd_static", {"a": text}),
        ("int", {"i": number}),
        ("float", {"f": real}),
        ("uuid", {"u": ident}),
        ("hex", {"h": number}),
        ("pair", {"a": text, "b": number}),
        ("triple", {"a": text, "b": text, "c": text}),
        ("m:page", {"slug": text}),
        ("m:deep", {"n": number}),
        ("anon_page", {"slug": text}),
        ("d:page", {"section": text, "slug": text}),
        ("l:about", {"lang": text}),
        ("w:a", {"where": text, "a": text}),
    ]
    with asgi_context(base):
        for name, params in cases:
            path = outcome(lambda: str(ROUTER.url_path_for(name, **params)))  # noqa: B023
            expected = path if path[0] != "ok" else ("ok", BaseURL.parse(base).join(path[1]))
            builder = asgi_sitemap.url_builder(name)
            assert outcome(lambda: builder(**params)) == expected, (name, params)  # noqa: B023


@pytest.mark.parametrize(
    ("root_path", "host", "scheme"),
    [
        ("", "example.com", "https"),
        ("/root", "example.com:8443", "https"),
        ("/a/b", "localhost", "http"),
    ],
)
@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("string", {"s": "caf\u00e9 au lait"}),
        ("path", {"p": "a/b c"}),
        ("int", {"i": 42}),
        ("float", {"f": 0.1}),
        ("uuid", {"u": uuid.UUID(int=1)}),
        ("whole", {"whole": "/lead"}),
        ("m:page", {"slug": "x"}),
        ("d:page", {"section": "s p", "slug": "y"}),
        ("home", {}),
    ],
)
def test_asgi_builder_equals_request_url_for(
    root_path: str, host: str, scheme: str, name: str, params: dict[str, Any]
) -> None:
    """What ``request.url_for`` gives, when the request's base is the site's base URL."""
    scope = {
        "type": "http",
        "scheme": scheme,
        "server": None,
        "path": root_path + "/sitemap.xml",
        "root_path": root_path,
        "query_string": b"",
        "headers": [(b"host", host.encode())],
        "router": ROUTER,
    }
    request = Request(scope)
    base = BaseURL.from_request(scheme, host, root_path, ["*"])
    with asgi_context(base.url):
        assert asgi_sitemap.url_builder(name)(**params) == str(request.url_for(name, **params))


class CountingReference:
    """Stands in for the reference ``url_for`` (the router's ``url_path_for`` on the
    base URL) that the ASGI builder asks where Starlette alone knows the answer."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, name: str, /, **params: Any) -> str:
        self.calls += 1
        return reference_url_for(name, **params)


@pytest.mark.parametrize(
    ("name", "params", "by_route"),
    [
        ("string", {"s": "caf\u00e9 ?#"}, True),
        ("path", {"p": "a/b"}, True),
        ("int", {"i": 3}, True),
        ("float", {"f": 2.5}, True),
        ("uuid", {"u": uuid.UUID(int=2)}, True),
        ("hex", {"h": 255}, True),
        ("triple", {"a": "1", "b": "2", "c": "3"}, True),
        ("first", {"first": "x"}, True),
        ("whole", {"whole": "/x"}, True),
        ("home", {}, True),
        ("twice", {"a": "1"}, True),
        ("twice", {"a": "1", "b": "2"}, True),
        ("m:page", {"slug": "s"}, True),
        ("m:deep", {"n": 1}, True),
        ("anon_page", {"slug": "s"}, True),
        ("d:page", {"section": "s", "slug": "t"}, True),
        ("l:about", {"lang": "en"}, True),
        ("w:a", {"where": "a/b", "a": "c"}, True),
        # A value its convertor refuses: the convertor's own error, as Starlette's.
        ("string", {"s": "a/b"}, True),
        ("string", {"s": ""}, True),
        ("int", {"i": -1}, True),
        ("float", {"f": math.nan}, True),
        # Starlette's business: other routes, names only it knows how it answers.
        ("int", {"i": 3, "extra": 1}, False),
        ("l:about", {}, False),
        ("files", {"path": "x.css"}, False),
        ("socket", {"a": "x"}, False),
        ("api:v", {"a": "x"}, False),
        ("missing", {}, False),
    ],
)
def test_asgi_builder_asks_the_router_only_for_its_business(
    monkeypatch: pytest.MonkeyPatch, name: str, params: dict[str, Any], by_route: bool
) -> None:
    """The route found for the parameters' names builds the URL, or the router's
    ``url_path_for`` does, decided by those names (never after an error): the answer,
    or the error, is the router's."""
    counting = CountingReference()
    monkeypatch.setattr(asgi_urls, "_url_path_for_on_base", counting)
    with asgi_context("https://example.com:8443/root"):
        expected = outcome(lambda: reference_url_for(name, **params))
        assert outcome(lambda: asgi_sitemap.url_builder(name)(**params)) == expected
    assert (counting.calls == 0) is by_route, expected


class Fragile(Convertor[str]):
    """A convertor with a bug of its own for one value."""

    regex = "[a-z]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        if value == "bug":
            raise ZeroDivisionError("a bug in to_string")
        return str(value)


def test_asgi_convertor_errors_are_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    register_url_convertor("test_url_builders_fragile", Fragile())
    router = Router([Route("/f/{x:test_url_builders_fragile}", endpoint, name="f")])
    counting = CountingReference()
    monkeypatch.setattr(asgi_urls, "_url_path_for_on_base", counting)
    with asgi_context("https://example.com", router):
        builder = asgi_sitemap.url_builder("f")
        assert builder(x="ok") == "https://example.com/f/ok"
        with pytest.raises(ZeroDivisionError, match="a bug in to_string"):
            builder(x="bug")
    assert counting.calls == 0


def test_asgi_mounts_passed_over_convert_as_starlette_does() -> None:
    """Starlette converts the parameters of a mount it searches, even one whose routes
    do not answer: a value that mount refuses is the router's error."""
    router = Router(
        [
            Mount("/{n:int}", routes=[Route("/a", endpoint, name="a")]),
            Route("/posts/{n}", endpoint, name="post"),
        ]
    )
    with asgi_context("https://example.com", router):
        for params in [{"n": "7"}, {"n": "seven"}, {"n": "-1"}]:
            expected = outcome(lambda: reference_url_for("post", **params))  # noqa: B023
            assert outcome(lambda: asgi_sitemap.url_builder("post")(**params)) == expected  # noqa: B023
        assert outcome(lambda: asgi_sitemap.url_builder("post")(n="seven"))[0] == "ValueError"


def test_asgi_builder_follows_each_request_context() -> None:
    builder = asgi_sitemap.url_builder("m:page")
    for base in [*ASGI_BASES, *ASGI_BASES]:
        with asgi_context(base):
            assert builder(slug="x") == reference_url_for("m:page", slug="x")


def test_asgi_builder_outside_a_sitemap_raises_lookup_error() -> None:
    with pytest.raises(LookupError):
        asgi_sitemap.url_builder("home")()
    with pytest.raises(LookupError):
        asgi_sitemap.url_for("home")


def test_asgi_builder_on_fastapi_routes_and_included_routers() -> None:
    app = FastAPI()
    router = APIRouter(prefix="/blog")

    @router.get("/{slug}")
    def post(slug: str) -> str:
        return slug

    app.include_router(router)

    @app.get("/items/{item_id}")
    def item(item_id: int) -> int:
        return item_id

    with asgi_context("https://example.com", app.router):
        for name, params in [("post", {"slug": "a b"}), ("item", {"item_id": 3})]:
            expected = reference_url_for(name, **params)
            assert asgi_sitemap.url_builder(name)(**params) == expected


def test_asgi_builder_repr_and_bad_name() -> None:
    assert repr(asgi_sitemap.url_builder("post")) == "url_builder('post')"
    with pytest.raises(TypeError):
        asgi_sitemap.url_builder("")


# -- include(params=...) output: byte-identical to url_for per URL ------------------------

#: The documents of tests/fronts/url_apps.py's route sections before the builders
#: existed (with url_for / url_path_for per URL), as sha256.
BEFORE = {
    "flask": "6d14f22d7c913fa42ef806be1e02859c80ec81d6fe684a59950e9ad4c4c7685a",
    "starlette": "9bc49c356171764e4a2137974e1fe4d52c3de83228a3a9d6ae60957ccb4debbc",
}


@pytest.mark.parametrize("front", ["flask", "starlette"])
def test_include_output_is_byte_identical_to_url_for_per_url(front: str) -> None:
    if front == "flask":
        client = wsgi_client(flask_app(with_url_for_twin=True))
    else:
        client = asgi_client(starlette_app(with_url_for_twin=True))
    routes = client.get("/sitemap-routes-1.xml")
    twin = client.get("/sitemap-twin-1.xml")
    assert routes.status_code == twin.status_code == 200
    assert routes.content == twin.content
    assert hashlib.sha256(routes.content).hexdigest() == BEFORE[front]


def test_include_uses_the_builder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The decorated routes' URLs are built by their rules, not by url_for per URL."""
    flask_counting = CountingUrlFor()
    monkeypatch.setattr(flask_urls, "url_for", flask_counting)
    asgi_counting = CountingReference()
    monkeypatch.setattr(asgi_urls, "_url_path_for_on_base", asgi_counting)
    assert wsgi_client(flask_app()).get("/sitemap-routes-1.xml").status_code == 200
    assert asgi_client(starlette_app()).get("/sitemap-routes-1.xml").status_code == 200
    assert flask_counting.calls == 0
    assert asgi_counting.calls == 0


def test_public_names() -> None:
    assert flask_sitemapper.url_builder is flask_urls.url_builder
    assert "url_builder" in flask_sitemapper.__all__
    assert "UrlBuilder" in flask_sitemapper.__all__
    assert asgi_sitemap.url_builder is asgi_urls.url_builder
    assert asgi_sitemap.url_for is asgi_urls.url_for
    assert {"url_builder", "UrlBuilder", "url_for"} <= set(asgi_sitemap.__all__)


def test_docstring_examples_run() -> None:
    import doctest

    for module in (flask_urls, asgi_urls):
        failures, tried = doctest.testmod(module)
        assert tried and not failures


def test_sitemap_routes_find_fastapi_included_routers() -> None:
    """Newer FastAPI keeps an included router as one route: its endpoints are found
    (nested inclusions and prefix parameters too) and their URLs are url_path_for's."""
    app = FastAPI()
    routes = asgi_sitemap.SitemapRoutes()
    blog = APIRouter(prefix="/blog/{lang}")

    @blog.get("/{slug}")
    @routes.include(params=[{"slug": "a b", "lang": "en"}, {"slug": "c", "lang": "fr"}])
    def post(lang: str, slug: str) -> str:
        return slug

    inner = APIRouter(prefix="/inner")

    @inner.get("/{n}")
    @routes.include(params=[{"n": 3, "lang": "de"}])
    def deep(n: int) -> int:
        return n

    blog.include_router(inner)
    app.include_router(blog)

    @app.get("/")
    @routes.include()
    def home() -> str:
        return "home"

    app.add_middleware(asgi_sitemap.SitemapMiddleware, routes=routes)
    response = asgi_client(app).get("/sitemap.xml")
    assert response.status_code == 200
    base = "http://localhost"
    with asgi_context(base, app.router):
        expected = [
            reference_url_for("post", slug="a b", lang="en"),
            reference_url_for("post", slug="c", lang="fr"),
            reference_url_for("deep", n=3, lang="de"),
            reference_url_for("home"),
        ]
    assert expected == [
        f"{base}/blog/en/a b",
        f"{base}/blog/fr/c",
        f"{base}/blog/de/inner/3",
        f"{base}/",
    ]
    locs = [line for line in response.text.splitlines() if "<loc>" in line]
    assert locs == [f"<url><loc>{url.replace(' ', '%20')}</loc></url>" for url in expected]
