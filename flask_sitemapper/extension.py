"""The Flask extension: ``Sitemapper``.

Configuration (``app.config``), with defaults:

``SITEMAP_BASE_URL`` (None)
    Absolute URL the sitemap's URLs live under, e.g. ``"https://www.example.com"``.
    When unset, ``SERVER_NAME`` is used, and failing that the request's host if it is
    allowed (see next key). Sources run inside a request context bound to this URL, so
    ``url_for(..., _external=True)`` in a source builds the right absolute URLs.
``SITEMAP_ALLOWED_HOSTS`` (None)
    Hosts whose requests may define the base URL (``"example.com"``,
    ``".example.com"`` for subdomains, ``"*"`` for any). None falls back to Flask's
    ``TRUSTED_HOSTS``, and failing that to localhost / 127.0.0.1 / [::1]. A request
    from another host is answered 400, so a forged ``Host`` never reaches a sitemap.
``SITEMAP_PAGE_SIZE`` (50000)
    Entries per child sitemap, 1 to 50,000.
``SITEMAP_ROBOTS_TXT`` (True)
    Serve ``/robots.txt`` when the app has none, and add the ``Sitemap:`` line to the
    app's own robots.txt when it has one. False leaves robots.txt alone.
``SITEMAP_ROBOTS_RULES`` (``"User-agent: *\\nDisallow:\\n"``)
    The rules of the robots.txt served when the app has none.
``SITEMAP_SAME_HOST_ONLY`` (True)
    Refuse entries whose URL is on another origin than the base URL.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from flask import Flask, Response, abort, current_app, request
from flask.ctx import RequestContext

from sitemap_core import BaseURL, ConfigurationError, Site, UntrustedHostError, UrlSource
from sitemap_core.entries import ChangeFreq, LastmodInput
from sitemap_core.hosts import LOOPBACK_HOSTS
from sitemap_core.http import ALLOWED_METHODS, Reply, method_not_allowed, plain_text
from sitemap_core.limits import MAX_ROBOTS_BYTES, MAX_URLS_PER_SITEMAP
from sitemap_core.robots import DEFAULT_RULES, merge_sitemap_lines
from sitemap_core.site import refuse_host, respond
from sitemap_core.sources import check_name

from .routes import Params, RouteSpec, route_entries

__all__ = ["Sitemapper"]

logger = logging.getLogger("flask_sitemapper")

F = TypeVar("F", bound=Callable[..., Any])

_EXTENSION_KEY = "sitemapper"
_SITEMAP_RULES = ("/sitemap.xml", "/sitemap.txt", "/sitemap-<page>.xml", "/sitemap-<page>.txt")


@dataclass
class _AppState:
    site: Site[UrlSource] | None = None


class Sitemapper:
    """Serve ``/sitemap.xml``, its child pages and ``/robots.txt`` for a Flask app.

    Register URL sources with :meth:`include` (a decorator for routes) and
    :meth:`source` (a decorator for generator functions) or :meth:`add_source`.
    One ``Sitemapper`` may serve several apps through :meth:`init_app`.
    """

    def __init__(self, app: Flask | None = None) -> None:
        self._specs: dict[str, list[RouteSpec]] = {}
        self._sources: dict[str, UrlSource] = {}
        if app is not None:
            self.init_app(app)

    def init_app(self, app: Flask) -> None:
        """Register the sitemap routes and the robots.txt hook on ``app``."""
        config = app.config
        config.setdefault("SITEMAP_BASE_URL", None)
        config.setdefault("SITEMAP_ALLOWED_HOSTS", None)
        config.setdefault("SITEMAP_PAGE_SIZE", MAX_URLS_PER_SITEMAP)
        config.setdefault("SITEMAP_ROBOTS_TXT", True)
        config.setdefault("SITEMAP_ROBOTS_RULES", DEFAULT_RULES)
        config.setdefault("SITEMAP_SAME_HOST_ONLY", True)
        if config["SITEMAP_BASE_URL"]:
            BaseURL.parse(config["SITEMAP_BASE_URL"])  # fail at start-up, not on a crawl
        app.extensions[_EXTENSION_KEY] = _AppState()
        for index, rule in enumerate(_SITEMAP_RULES):
            app.add_url_rule(
                rule,
                endpoint=f"sitemapper.sitemap_{index}",
                view_func=self._serve,
                methods=["GET", "HEAD"],
                provide_automatic_options=False,
            )
        app.after_request(self._robots_after_request)

    # Registration ------------------------------------------------------------------

    def include(
        self,
        *,
        params: Params | None = None,
        lastmod: LastmodInput | None = None,
        changefreq: ChangeFreq | str | None = None,
        priority: float | None = None,
        source: str = "pages",
    ) -> Callable[[F], F]:
        """Decorate a view function to list its route(s) in the sitemap.

        A static route needs no arguments. A route with URL variables needs
        ``params``: a function returning (or a list of) dicts of URL values, each
        optionally paired with a dict of per-URL fields, e.g.
        ``({"post_id": 7}, {"lastmod": row.updated_at})``. ``lastmod``,
        ``changefreq`` and ``priority`` are the defaults for every URL of the route.
        Routes are grouped into the source named ``source`` (``"pages"``).
        Bad arguments raise here, at import time.
        """

        def decorator(view: F) -> F:
            spec = RouteSpec.build(view, params, lastmod, changefreq, priority)
            if source in self._sources:
                raise ConfigurationError(f"source name {source!r} is already a source()")
            check_name(source)
            self._specs.setdefault(source, []).append(spec)
            return view

        return decorator

    def source(self, name: str, *, count: Callable[[], int] | None = None) -> Callable[[F], F]:
        """Decorate a function returning entries (a generator) as the source ``name``.

        The function may yield :class:`~sitemap_core.Entry` objects or URL strings,
        and is called inside a request context bound to the base URL, so
        ``url_for(..., _external=True)`` works. Page N of a plain generator is served
        by skipping; give ``count`` (a cheap function) or use :meth:`add_source` with a
        sliceable object for big sources.
        """

        def decorator(func: F) -> F:
            self.add_source(name, func, count=count)
            return func

        return decorator

    def add_source(self, name: str, source: Any, *, count: Callable[[], int] | None = None) -> None:
        """Register ``source``: a callable returning an iterable, or a sized sliceable.

        A sliceable (``__len__`` + ``__getitem__(slice)``, e.g. a list or a query
        object doing ``LIMIT/OFFSET``) serves page N with one slice.
        """
        if name in self._sources or name in self._specs:
            raise ConfigurationError(f"source name {name!r} is registered twice")
        self._sources[name] = UrlSource.from_object(name, source, count=count)

    # Serving -------------------------------------------------------------------------

    def _site(self, app: Flask) -> Site[UrlSource]:
        state: _AppState = app.extensions[_EXTENSION_KEY]
        if state.site is None:
            route_sources = [
                self._route_source(app, name, specs) for name, specs in self._specs.items()
            ]
            state.site = Site(
                [*route_sources, *self._sources.values()],
                page_size=app.config["SITEMAP_PAGE_SIZE"],
                robots_rules=app.config["SITEMAP_ROBOTS_RULES"],
                same_host_only=app.config["SITEMAP_SAME_HOST_ONLY"],
            )
        return state.site

    @staticmethod
    def _route_source(app: Flask, name: str, specs: list[RouteSpec]) -> UrlSource:
        for spec in specs:
            spec.endpoints(app)  # a decorated function that is no route fails here
        return UrlSource(
            name,
            lambda: sum(spec.count(app) for spec in specs),
            lambda start, stop: route_entries(app, specs, start, stop),
        )

    def _base_url(self, app: Flask) -> BaseURL:
        config = app.config
        if config["SITEMAP_BASE_URL"]:
            return BaseURL.parse(config["SITEMAP_BASE_URL"])
        if config.get("SERVER_NAME"):
            return BaseURL.from_request(
                request.scheme, config["SERVER_NAME"], request.script_root, ["*"]
            )
        allowed = config["SITEMAP_ALLOWED_HOSTS"] or config.get("TRUSTED_HOSTS") or LOOPBACK_HOSTS
        return BaseURL.from_request(request.scheme, request.host, request.script_root, allowed)

    def _url_context(self, app: Flask, base: BaseURL) -> RequestContext:
        # A request context for the base URL: url_for() in sources then builds URLs on
        # the trusted origin, whatever Host the crawler sent.
        environ = dict(request.environ)
        scheme, _, rest = base.url.partition("://")
        netloc, slash, prefix = rest.partition("/")
        environ.update(
            {
                "wsgi.url_scheme": scheme,
                "HTTP_HOST": netloc,
                "SCRIPT_NAME": slash + prefix if prefix else "",
                "PATH_INFO": "/",
                "QUERY_STRING": "",
                "REQUEST_METHOD": "GET",
            }
        )
        return app.request_context(environ)

    def _serve(self, page: str | None = None) -> Response:
        """View of every sitemap path; ``page`` is parsed by the core, not here."""
        app = _current_app()
        pushed: list[RequestContext] = []

        def base_url() -> BaseURL:
            base = self._base_url(app)
            ctx = self._url_context(app, base)
            ctx.push()  # counting and the first chunk run inside it
            pushed.append(ctx)
            return base

        try:
            reply = respond(self._site(app), request.method, request.path, base_url)
        finally:
            if pushed:
                pushed[0].pop()
        if reply is None:
            abort(404)
        body = reply.body
        assert isinstance(body, Iterable)  # the sync core never gives an async body
        if pushed and isinstance(body, Iterator):
            body = _stream_in_context(pushed[0], body)
        return app.response_class(body, status=reply.status, headers=reply.headers)

    def _robots_after_request(self, response: Response) -> Response:
        app = _current_app()
        if request.path != "/robots.txt" or not app.config["SITEMAP_ROBOTS_TXT"]:
            return response
        if request.method not in ALLOWED_METHODS:
            # The app has no robots.txt route, so routing said 404; the file we serve
            # exists, and only the method is wrong.
            if response.status_code == 404:
                return _to_response(app, method_not_allowed())
            return response
        if response.status_code not in (200, 404):
            return response
        head = request.method == "HEAD"
        try:
            base = self._base_url(app)
        except UntrustedHostError as exc:
            if response.status_code == 404:
                return _to_response(app, refuse_host(exc, head))
            return response  # the app's own file, left as it is
        urls = self._site(app).sitemap_urls(base)
        if response.status_code == 404:
            return _to_response(app, plain_text(200, self._site(app).robots(base), head))
        if response.mimetype != "text/plain":
            return response
        response.direct_passthrough = False  # send_file responses: allow reading the body
        data = response.get_data()
        if len(data) > MAX_ROBOTS_BYTES:
            logger.warning("robots.txt is over %d bytes; Sitemap line not added", MAX_ROBOTS_BYTES)
            return response
        merged = merge_sitemap_lines(data.decode("utf-8", "replace"), urls)
        response.set_data(merged.encode())
        # The validators described the app's file, not the merged one.
        for name in ("ETag", "Last-Modified"):
            response.headers.pop(name, None)
        return response


def _to_response(app: Flask, reply: Reply) -> Response:
    return app.response_class(list(reply.body), status=reply.status, headers=reply.headers)  # type: ignore[arg-type]


def _current_app() -> Flask:
    app: Flask = current_app._get_current_object()  # type: ignore[attr-defined]
    return app


def _stream_in_context(ctx: RequestContext, body: Iterable[bytes]) -> Iterator[bytes]:
    # The view's own context is gone once the server iterates the body; sources keep
    # running under the URL context, as Flask's stream_with_context does for requests.
    with ctx:
        yield from body
