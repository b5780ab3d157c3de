"""Absolute URLs of a Starlette / FastAPI route, built cheaply inside sitemap sources.

``router.url_path_for(name, **params)`` searches the routes (and mounts) for every URL,
compares parameter sets, splits the path format with a regular expression and builds
``URLPath`` objects: a few microseconds each, a large share of a sitemap page. A
:class:`UrlBuilder` finds the route once per request (the middleware sets a new
context per request) and keeps what does not depend on the values: the route's static
text, each parameter's convertor, the mounts' prefixes and the site's base URL::

    from asgi_sitemap import Entry, url_builder

    article_url = url_builder("article")

    async def articles():
        async for row in database.rows():
            yield Entry(article_url(article_id=row.id), lastmod=row.updated_at)

The result is always exactly ``asgi_sitemap.context.url_for(name, **params)``: the
router's ``url_path_for(name, **params)`` joined to the site's trusted base URL, which
is what ``request.url_for(name, **params)`` gives on that base URL. What the fast path
does not cover goes to ``url_path_for`` itself: parameters that are not exactly the
route's (Starlette finds no route, or another one), a value a convertor refuses (so the
error is Starlette's), a name that only a ``Host`` route, a ``WebSocketRoute``, a
mount's own URL or a route class of its own (FastAPI's included routers, for one)
could answer, and a router whose ``url_path_for`` is not Starlette's.

:func:`url_for` keeps one builder per route name, so sources that call
``url_for(name, **params)`` get the fast path too.

Runnable example (the middleware sets the context sources run in)::

    >>> from starlette.applications import Starlette
    >>> from starlette.routing import Route
    >>> from starlette.testclient import TestClient
    >>> from asgi_sitemap import Entry, SitemapMiddleware
    >>> post_url = url_builder("post")
    >>> def posts():
    ...     for post_id in (1, 2):
    ...         yield Entry(post_url(post_id=post_id, slug="hello"))
    >>> app = Starlette(routes=[Route("/posts/{post_id:int}/{slug}", lambda r: None, name="post")])
    >>> site = SitemapMiddleware(app, {"posts": posts}, base_url="https://example.com")
    >>> print(TestClient(site).get("/sitemap.xml").text)
    <?xml version="1.0" encoding="UTF-8"?>
    <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
    <url><loc>https://example.com/posts/1/hello</loc></url>
    <url><loc>https://example.com/posts/2/hello</loc></url>
    </urlset>
    <BLANKLINE>
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from starlette.convertors import (
    Convertor,
    FloatConvertor,
    IntegerConvertor,
    PathConvertor,
    StringConvertor,
    UUIDConvertor,
)
from starlette.routing import PARAM_FORMAT_REGEX, Host, Mount, Route, Router, WebSocketRoute

from .context import SitemapContext, _current
from .context import url_for as _url_path_for_on_base

__all__ = ["UrlBuilder", "url_builder", "url_for"]

#: Renders one parameter value, or raises (any exception) to let url_path_for decide.
Convert = Callable[[Any], str]
#: Renders a whole URL from the parameters, or raises (any exception).
Render = Callable[[Mapping[str, Any]], str]

#: How deep mounts are followed (a bound, not a limit any real app reaches).
_MAX_DEPTH = 32


class _UseUrlPathFor(Exception):
    """The fast path cannot promise url_path_for's answer for these parameters."""


class _Unknown(Exception):
    """A route on the way answers names in a way this module does not reproduce."""


class UrlBuilder:
    """Build ``asgi_sitemap.url_for(name, **params)`` for one route name, fast.

    Call it with the path parameters (``builder(post_id=7)``) or a mapping of them
    (``builder.build({"post_id": 7})``). See the module documentation.
    """

    __slots__ = ("_bound", "name")

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"url_builder() needs a route name, got {name!r}")
        self.name = name
        # (context, renderer or None): recomputed for each sitemap request's context.
        self._bound: tuple[SitemapContext, Render | None] | None = None

    def __repr__(self) -> str:
        return f"url_builder({self.name!r})"

    def __call__(self, /, **params: Any) -> str:
        """The absolute URL of the route for ``params``, as ``url_for`` gives it."""
        # The body of build(), repeated: one call level less per URL.
        context = _current.get(None)
        if context is not None:
            bound = self._bound
            if bound is None or bound[0] is not context:
                bound = self._bind(context)
            render = bound[1]
            if render is not None:
                try:
                    return render(params)
                except Exception:  # anything unusual: Starlette gives the answer or the error
                    pass
        return _url_path_for_on_base(self.name, **params)

    def build(self, params: Mapping[str, Any]) -> str:
        """The absolute URL of the route for the mapping ``params`` (left unchanged)."""
        context = _current.get(None)
        if context is not None:
            bound = self._bound
            if bound is None or bound[0] is not context:
                bound = self._bind(context)
            render = bound[1]
            if render is not None:
                try:
                    return render(params)
                except Exception:
                    pass
        return _url_path_for_on_base(self.name, **params)

    def _bind(self, context: SitemapContext) -> tuple[SitemapContext, Render | None]:
        bound = (context, _renderer(self.name, context))
        self._bound = bound  # one assignment: another thread sees the old or the new pair
        return bound


def url_builder(name: str) -> UrlBuilder:
    """A :class:`UrlBuilder` for the route ``name``; create it once, call it per URL."""
    return UrlBuilder(name)


_builders: dict[str, UrlBuilder] = {}


def url_for(name: str, /, **path_params: Any) -> str:
    """Absolute URL of the route ``name`` on the site's trusted base URL.

    Exactly the router's ``url_path_for(name, **path_params)`` joined to the base URL
    (so mounts and convertors apply), through one :class:`UrlBuilder` per name. Works
    while a sitemap is served (in sources); raises LookupError elsewhere.
    """
    builder = _builders.get(name)
    if builder is None:
        builder = UrlBuilder(name)
        if len(_builders) < 1024:  # names come from code; a bound all the same
            _builders[name] = builder
    return builder(**path_params)


# -- finding the route url_path_for would use -------------------------------------------


def _renderer(name: str, context: SitemapContext) -> Render | None:
    """A renderer equal to url_path_for on the context's router, or None."""
    router = context.router
    if router is None or type(router).url_path_for is not Router.url_path_for:
        return None
    base = context.base.url
    if context.base.join("/a") != base + "/a":  # the reference joins otherwise: defer to it
        return None
    routes = list(router.routes)
    try:
        key_sets = set(_key_sets(routes, name, frozenset(), 0))
    except _Unknown:
        return None
    renderers: dict[frozenset[str], Render] = {}
    for keys in key_sets:
        try:
            chain = _resolve(routes, name, keys, 0)
        except _Unknown:  # parameters named so go to url_path_for (no renderer matches)
            continue
        if chain is not None:
            renderers[keys] = _chain_renderer(base, chain, keys)
    if not renderers:
        return None  # no route of that name: url_path_for raises NoMatchFound
    if len(renderers) == 1:
        return next(iter(renderers.values()))

    def by_keys(params: Mapping[str, Any]) -> str:
        return renderers[frozenset(params)](params)

    return by_keys


def _kind(route: Any) -> Any:
    """Which of Starlette's ``url_path_for`` the route's class uses (or its own)."""
    return getattr(type(route), "url_path_for", None)


def _key_sets(
    routes: Iterable[Any], name: str, outer: frozenset[str], depth: int
) -> Iterator[frozenset[str]]:
    """The parameter sets with which some route (under mounts) is called ``name``."""
    if depth > _MAX_DEPTH:
        raise _Unknown
    for route in routes:
        kind = _kind(route)
        if kind is Route.url_path_for and route.name == name:
            yield outer | frozenset(route.param_convertors)
        elif kind is Mount.url_path_for:
            mount_name = route.name
            if mount_name is None or name.startswith(mount_name + ":"):
                rest = name if mount_name is None else name[len(mount_name) + 1 :]
                own = frozenset(route.param_convertors) - {"path"}
                yield from _key_sets(route.routes or [], rest, outer | own, depth + 1)


def _resolve(routes: list[Any], name: str, keys: frozenset[str], depth: int) -> list[Any] | None:
    """The mounts and the route ``url_path_for(name, **params)`` answers from, for
    parameters named ``keys``, following Starlette's search order; None when no
    route answers. Raises :class:`_Unknown` when a route on the way might answer in a
    way not reproduced here (then every URL goes to url_path_for)."""
    if depth > _MAX_DEPTH:
        raise _Unknown
    for route in routes:
        kind = _kind(route)
        if kind is Route.url_path_for:
            if name == route.name and keys == route.param_convertors.keys():
                return [route]
        elif kind is WebSocketRoute.url_path_for:
            if name == route.name and keys == route.param_convertors.keys():
                raise _Unknown
        elif kind is Mount.url_path_for:
            mount_name = route.name
            own = frozenset(route.param_convertors)
            if mount_name is not None and name == mount_name and "path" in keys:
                if not keys - own:  # the mount's own URL ("static", path=...)
                    raise _Unknown
            elif mount_name is None or name.startswith(mount_name + ":"):
                if "path" in keys:
                    # A "path" parameter passes through a mount only when not None.
                    raise _Unknown
                rest = name if mount_name is None else name[len(mount_name) + 1 :]
                found = _resolve(list(route.routes or []), rest, keys - own, depth + 1)
                if found is not None:
                    return [route, *found]
        elif kind is Host.url_path_for:
            host_name = route.name
            if host_name is None or name == host_name or name.startswith(host_name + ":"):
                raise _Unknown
        else:
            raise _Unknown
    return None


# -- rendering ---------------------------------------------------------------------------


def _fix(path: str) -> str:
    """What ``URLPath`` makes of a path: backslashes quoted, no leading ``//``."""
    path = path.replace("\\", "%5C")
    if path.startswith("//"):
        path = "/%2F" + path[2:]
    return path


@dataclass(frozen=True)
class _Format:
    """A path format as static texts and parameters: ``texts[0]``, then per parameter
    its convertor and the text after it (``texts[i + 1]``)."""

    texts: tuple[str, ...]
    params: tuple[tuple[str, Convert], ...]

    @classmethod
    def of(
        cls, path_format: str, convertors: Mapping[str, Convertor[Any]], blank: str = ""
    ) -> _Format:
        """Split ``path_format`` as ``replace_params`` reads it; the parameter ``blank``
        (a mount's ``path``) is the text its convertor gives for ``""``."""
        pieces = PARAM_FORMAT_REGEX.split(path_format)
        texts = [pieces[0]]
        params: list[tuple[str, Convert]] = []
        for index in range(1, len(pieces), 2):
            key, after = pieces[index], pieces[index + 1]
            if key == blank:
                texts[-1] += convertors[key].to_string("") + after
            else:
                params.append((key, _convertor(convertors[key])))
                texts.append(after)
        return cls(tuple(texts), tuple(params))

    def fill(self, params: Mapping[str, Any]) -> str:
        """The format with the parameters' texts."""
        texts = self.texts
        out = texts[0]
        for index, (key, convert) in enumerate(self.params, 1):
            out += convert(params[key]) + texts[index]
        return out


def _chain_renderer(base: str, chain: list[Any], keys: frozenset[str]) -> Render:
    """The renderer of ``chain`` (mounts, then the route) under the base URL ``base``."""
    *mounts, route = chain
    target = _Format.of(route.path_format, route.param_convertors)
    levels = [_Format.of(m.path_format, m.param_convertors, blank="path") for m in mounts]
    count = len(keys)
    flat = _flatten(levels, target)
    if flat is None:
        return _general_renderer(base, levels, target, count)
    texts, steps, leading = flat
    head = base + texts[0]
    if leading:  # the route's path may start with "//" once filled: URLPath's rule

        def prefixed(params: Mapping[str, Any]) -> str:
            if len(params) != count:
                raise _UseUrlPathFor
            return head + _fix(target.fill(params))

        return prefixed
    if not steps:

        def static(params: Mapping[str, Any]) -> str:
            if params:
                raise _UseUrlPathFor
            return head

        return static
    if len(steps) == 1:
        ((key, convert, tail),) = steps

        def one(params: Mapping[str, Any]) -> str:
            if len(params) != count:
                raise _UseUrlPathFor
            return head + convert(params[key]) + tail

        return one
    if len(steps) == 2:
        (key1, convert1, tail1), (key2, convert2, tail2) = steps

        def two(params: Mapping[str, Any]) -> str:
            if len(params) != count:
                raise _UseUrlPathFor
            return head + convert1(params[key1]) + tail1 + convert2(params[key2]) + tail2

        return two

    def many(params: Mapping[str, Any]) -> str:
        if len(params) != count:
            raise _UseUrlPathFor
        url = head
        for key, convert, tail in steps:
            url += convert(params[key]) + tail
        return url

    return many


def _flatten(
    levels: list[_Format], target: _Format
) -> tuple[list[str], list[tuple[str, Convert, str]], bool] | None:
    """The chain as one format, when what each level does to the path is known now.

    ``Mount.url_path_for`` writes ``prefix.rstrip("/") + inner`` and ``URLPath`` then
    quotes backslashes and a leading ``//``. Convertors here quote backslashes in
    values; the rest only touches static text when each mount's text starts with "/"
    and another character, and its end is static text or a value that cannot end with
    "/". Returns the texts before and the steps (parameter, convertor, text after),
    and whether the route's own path needs the leading-``//`` rule at run time (only
    under static mounts); None when the general renderer must compose level by level.
    """
    prefix = ""
    steps: list[tuple[str, Convert, str]] = []
    for level in levels:
        if not level.params:
            piece = level.texts[0].rstrip("/")
            if piece:
                prefix_text = _fix(piece)
                if steps:
                    key, convert, tail = steps[-1]
                    steps[-1] = (key, convert, tail + prefix_text)
                else:
                    prefix += prefix_text
            continue
        first, *tails = level.texts
        last = tails[-1].rstrip("/")
        if not _starts_once(first, level.params[0][1]):
            return None
        if not last and not _slashless(level.params[-1][1]):
            return None
        tails[-1] = last
        texts = [text.replace("\\", "%5C") for text in [first, *tails]]
        if steps:
            key, convert, tail = steps[-1]
            steps[-1] = (key, convert, tail + texts[0])
        else:
            prefix += texts[0]
        for (key, convert), tail in zip(level.params, texts[1:], strict=True):
            steps.append((key, convert, tail))
    first = target.texts[0]
    if not (target.params and _starts_once(first, target.params[0][1])) and (
        first == "/" or first.startswith("//")
    ):
        if steps:
            return None  # a mount with parameters before it: the general renderer
        return [prefix], [], True
    texts = [text.replace("\\", "%5C") for text in target.texts]
    if steps:
        key, convert, tail = steps[-1]
        steps[-1] = (key, convert, tail + texts[0])
    else:
        prefix += texts[0]
    for (key, convert), tail in zip(target.params, texts[1:], strict=True):
        steps.append((key, convert, tail))
    return [prefix], steps, False


def _slashless(convert: Convert) -> bool:
    """Whether the convertor's text is never empty and has no "/" at either end."""
    return convert is _string or convert is _integer or convert is _float


def _starts_once(text: str, convert: Convert) -> bool:
    """Whether a path starting with ``text`` then the value of ``convert`` starts with
    one "/" and something else (so URLPath's leading-``//`` rule cannot apply)."""
    if text == "/":
        return _slashless(convert)
    return len(text) >= 2 and text[0] == "/" and text[1] != "/"


def _general_renderer(base: str, levels: list[_Format], target: _Format, count: int) -> Render:
    """Mounts with parameters: each level as ``Mount.url_path_for`` composes it."""
    inner_first = levels[::-1]

    def render(params: Mapping[str, Any]) -> str:
        if len(params) != count:
            raise _UseUrlPathFor
        path = _fix(target.fill(params))
        for level in inner_first:
            path = _fix(level.fill(params).rstrip("/") + path)
        return base + path

    return render


# -- convertors --------------------------------------------------------------------------


def _convertor(convertor: Convertor[Any]) -> Convert:
    """A function giving ``convertor.to_string(value)`` as it ends up in the URL path
    (backslashes quoted), with Starlette's own convertors done inline."""
    to_string = type(convertor).to_string
    if to_string is StringConvertor.to_string:
        return _string
    if to_string is PathConvertor.to_string or to_string is UUIDConvertor.to_string:
        return _text
    if to_string is IntegerConvertor.to_string:
        return _integer
    if to_string is FloatConvertor.to_string:
        return _float
    bound = convertor.to_string

    def custom(value: Any) -> str:
        text = bound(value)
        return text.replace("\\", "%5C") if "\\" in text else text

    return custom


def _string(value: Any) -> str:
    # StringConvertor asserts a non-empty segment without "/": Starlette says so.
    text = value if type(value) is str else str(value)
    if not text or "/" in text:
        raise _UseUrlPathFor
    return text.replace("\\", "%5C") if "\\" in text else text


def _text(value: Any) -> str:
    text = value if type(value) is str else str(value)
    return text.replace("\\", "%5C") if "\\" in text else text


def _integer(value: Any) -> str:
    number = int(value)
    if number < 0:
        raise _UseUrlPathFor  # Starlette asserts: let it say so
    return str(number)


def _float(value: Any) -> str:
    number = float(value)
    if not 0.0 <= number < math.inf:  # NaN, infinities and negatives: Starlette asserts
        raise _UseUrlPathFor
    return f"{number:.20f}".rstrip("0").rstrip(".")
