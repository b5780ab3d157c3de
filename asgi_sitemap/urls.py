"""Absolute URLs of a Starlette / FastAPI route, built cheaply inside sitemap sources.

``router.url_path_for(name, **params)`` searches the routes (and mounts) for every URL,
compares parameter sets, splits the path format with a regular expression and builds
``URLPath`` objects. A :class:`UrlBuilder` finds the route once per request (the
middleware sets a new context per request) and per set of parameter names, and keeps
what does not depend on the values: the route's and its mounts' path formats split
into static texts and parameters (as Starlette's ``replace_params`` splits them), and
each parameter's convertor, whose ``to_string`` converts every value::

    from asgi_sitemap import Entry, url_builder

    article_url = url_builder("article")

    async def articles():
        async for row in database.rows():
            yield Entry(article_url(article_id=row.id), lastmod=row.updated_at)

The result is ``asgi_sitemap.context.url_for(name, **params)``: the router's
``url_path_for(name, **params)`` joined to the site's trusted base URL, which is what
``request.url_for(name, **params)`` gives on that base URL. A value a convertor
refuses raises the convertor's own error, as ``url_path_for`` does. The router's
``url_path_for`` itself builds the URLs that only Starlette knows how it would answer:
parameter names no route of that name takes (it raises ``NoMatchFound``), a name that
a ``Host``, a ``WebSocketRoute``, a mount's own URL or a route class of its own
(FastAPI's included routers, for one) may answer, a ``path`` parameter through a mount,
a mount's parameter left out, and a router whose ``url_path_for`` is not Starlette's.

:func:`url_for` keeps one builder per route name, so sources that call
``url_for(name, **params)`` get the same.

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

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from starlette.convertors import Convertor
from starlette.datastructures import URLPath
from starlette.routing import PARAM_FORMAT_REGEX, Host, Mount, Route, Router, WebSocketRoute

from .context import SitemapContext, _current
from .context import url_for as _url_path_for_on_base

__all__ = ["UrlBuilder", "url_builder", "url_for"]

#: Builds the absolute URL for a mapping of path parameters.
Build = Callable[[Mapping[str, Any]], str]

#: How deep mounts are followed (a bound, not a limit any real app reaches).
_MAX_DEPTH = 32
#: How many sets of parameter names one builder keeps per request (a bound).
_MAX_KEY_SETS = 16


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
        # (context, how URLs are built in it): renewed for each sitemap request.
        self._bound: tuple[SitemapContext, _RouteUrls] | None = None

    def __repr__(self) -> str:
        return f"url_builder({self.name!r})"

    def __call__(self, /, **params: Any) -> str:
        """The absolute URL of the route for ``params``, as ``url_for`` gives it."""
        return self.build(params)

    def build(self, params: Mapping[str, Any]) -> str:
        """The absolute URL of the route for the mapping ``params`` (left unchanged)."""
        bound = self._bound
        if bound is None or bound[0] is not _current.get(None):
            return self.for_request()(params)
        return bound[1].build(params)

    def for_request(self) -> Build:
        """What :meth:`build` does while the current sitemap request is served: for a
        loop that builds many URLs in one request (a route source's page), without
        looking the request up for each."""
        context = _current.get(None)
        if context is None:  # the reference raises its LookupError
            return self._reference
        bound = self._bound
        if bound is None or bound[0] is not context:
            bound = (context, _RouteUrls(self.name, context))
            self._bound = bound  # one assignment: another thread sees the old or the new pair
        return bound[1].build

    def _reference(self, params: Mapping[str, Any]) -> str:
        return _url_path_for_on_base(self.name, **params)


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


class _RouteUrls:
    """The URLs of the routes named ``name`` in one request's router, on its base URL:
    one way to build them per set of parameter names (the route Starlette's search
    answers from depends on the name and those names only)."""

    __slots__ = ("_base", "_by_keys", "_name", "_router", "last")

    def __init__(self, name: str, context: SitemapContext) -> None:
        self._name = name
        self._router = context.router
        self._base = context.base.url
        self._by_keys: dict[frozenset[str], Build] = {}
        #: The parameter names of the last URL and their way, replaced in one
        #: assignment: the parameters of one source have the same names.
        self.last: tuple[frozenset[Any], Build] = (frozenset({None}), self._reference)

    def build(self, params: Mapping[str, Any]) -> str:
        """``url_for(name, **params)``."""
        keys, build = self.last
        if params.keys() != keys:
            build = self.learn(params)
        return build(params)

    def learn(self, params: Mapping[str, Any]) -> Build:
        """The way to build URLs for parameters named as ``params``, now the last."""
        keys = frozenset(params)
        build = self._by_keys.get(keys)
        if build is None:
            build = self._build_for(keys)
            if len(self._by_keys) < _MAX_KEY_SETS:
                self._by_keys[keys] = build
        self.last = (keys, build)
        return build

    def _build_for(self, keys: frozenset[str]) -> Build:
        router = self._router
        if router is None or type(router).url_path_for is not Router.url_path_for:
            return self._reference
        try:
            chain = _chain(router.routes, self._name, keys, 0)
        except _AskStarlette:
            return self._reference
        if chain is None:  # no route answers: url_path_for raises NoMatchFound
            return self._reference
        path = _Path(self._base, chain)
        return path.nested if path.mounts else path.flat

    def _reference(self, params: Mapping[str, Any]) -> str:
        return _url_path_for_on_base(self._name, **params)


class _AskStarlette(Exception):
    """A route on the way may answer the name in a way only Starlette knows."""


def _chain(routes: Iterable[Any], name: str, keys: frozenset[str], depth: int) -> list[Any] | None:
    """The mounts and the route ``Router.url_path_for(name, **params)`` answers from,
    for parameters named ``keys``, in Starlette's search order (the first route that
    answers); None when none does. Raises :class:`_AskStarlette` where Starlette alone
    knows (see the module documentation)."""
    if depth > _MAX_DEPTH:
        raise _AskStarlette
    for route in routes:
        kind = type(route).url_path_for
        if kind is Route.url_path_for:
            if route.name == name and route.param_convertors.keys() == keys:
                return [route]
        elif kind is Mount.url_path_for:
            found = _mount_chain(route, name, keys, depth)
            if found is not None:
                return found
        elif _may_answer(route, name, keys):
            raise _AskStarlette
    return None


def _mount_chain(mount: Mount, name: str, keys: frozenset[str], depth: int) -> list[Any] | None:
    """As :func:`_chain`, under ``mount`` (``Mount.url_path_for``'s search)."""
    prefix = mount.name
    if prefix is not None and not name.startswith(prefix + ":"):
        if name == prefix and "path" in keys:  # the mount's own URL
            raise _AskStarlette
        return None
    if "path" in keys:  # passed on to the mount's routes unless it is None
        raise _AskStarlette
    own = mount.param_convertors.keys() - {"path"}
    rest = name if prefix is None else name[len(prefix) + 1 :]
    found = _chain(mount.routes, rest, keys - own, depth + 1)
    if found is None:
        if own & keys:  # converted while Starlette searches: a value refused is its error
            raise _AskStarlette
        return None
    if not own <= keys:  # Starlette leaves "{name}" in the URL
        raise _AskStarlette
    return [mount, *found]


def _may_answer(route: Any, name: str, keys: frozenset[str]) -> bool:
    """Whether a route that is neither a Route nor a Mount may answer ``name``."""
    kind = type(route).url_path_for
    if kind is WebSocketRoute.url_path_for:
        return bool(route.name == name and route.param_convertors.keys() == keys)
    if kind is Host.url_path_for:
        prefix = route.name
        return prefix is None or name == prefix or name.startswith(prefix + ":")
    return True


class _Level:
    """A path format as ``replace_params`` fills it: ``first``, then per parameter its
    convertor's ``to_string(value)`` and the text after it. The parameter ``blank``
    (a mount's ``path``) is filled with its convertor's text for ``""`` once, as
    ``Mount.url_path_for`` fills it for the mount's routes."""

    __slots__ = ("first", "steps")

    def __init__(
        self, path_format: str, convertors: Mapping[str, Convertor[Any]], blank: str = ""
    ) -> None:
        first, *pieces = PARAM_FORMAT_REGEX.split(path_format)
        self.first = first
        self.steps: list[tuple[str, Callable[[Any], str], str]] = []
        for key, after in zip(pieces[::2], pieces[1::2], strict=True):
            if key != blank:
                self.steps.append((key, convertors[key].to_string, after))
            elif self.steps:
                last, to_string, text = self.steps[-1]
                self.steps[-1] = (last, to_string, text + convertors[key].to_string("") + after)
            else:
                self.first += convertors[key].to_string("") + after


class _Path:
    """How ``Router.url_path_for`` builds the path of a route under its mounts, joined
    to the base URL (``BaseURL.join`` puts the path after the base URL's text).

    A mount puts its path (its parameters filled, trailing slashes stripped) before
    the ``URLPath`` of its route's, and ``URLPath`` quotes backslashes and a leading
    ``//`` (see :func:`_own_url_path`). The mounts' parameters are converted before
    the route's, as Starlette converts them. A mount without parameters around the
    others is static text: it goes into the head."""

    __slots__ = ("_first", "_head", "_lead", "_steps", "mounts")

    def __init__(self, base: str, chain: list[Any]) -> None:
        *mounts, route = chain
        levels = [_Level(m.path_format, m.param_convertors, blank="path") for m in mounts]
        while levels and not levels[0].steps and _own_url_path(levels[0].first.rstrip("/")):
            base += levels.pop(0).first.rstrip("/")
        self._head = base
        #: The mounts with parameters, outermost first: composed per URL.
        self.mounts = levels
        level = _Level(route.path_format, route.param_convertors)
        self._first, self._steps = level.first, level.steps
        # Whether the path may start with "//": only where its first text is "/" or
        # starts so (a route's path starts with "/").
        self._lead = self._first == "/" or self._first.startswith("//")

    def flat(self, params: Mapping[str, Any]) -> str:
        """The URL for ``params``, without mounts to compose."""
        path = self._first
        for key, to_string, after in self._steps:
            path += to_string(params[key]) + after
        if "\\" in path or (self._lead and path.startswith("//")):  # see _own_url_path
            path = str(URLPath(path))
        return self._head + path

    def nested(self, params: Mapping[str, Any]) -> str:
        """The URL for ``params``, under mounts with parameters."""
        prefixes = []
        for level in self.mounts:
            prefix = level.first
            for key, to_string, after in level.steps:
                prefix += to_string(params[key]) + after
            prefixes.append(prefix.rstrip("/"))
        path = self._first
        for key, to_string, after in self._steps:
            path += to_string(params[key]) + after
        for prefix in [*reversed(prefixes), ""]:  # each level's URLPath, innermost first
            if "\\" in path or path.startswith("//"):
                path = str(URLPath(path))
            path = prefix + path
        return self._head + path


def _own_url_path(path: str) -> bool:
    """Whether ``URLPath(path)`` is ``path``: Starlette quotes backslashes and a
    leading ``//``, which few paths have."""
    return "\\" not in path and not path.startswith("//")
