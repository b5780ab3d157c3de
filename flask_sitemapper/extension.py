"""The Flask extension: ``Sitemapper``.

Configuration (``app.config``), with defaults:

``SITEMAP_BASE_URL`` (None)
    Absolute URL the sitemap's URLs live under, e.g. ``"https://www.example.com"``.
    When unset, ``SERVER_NAME`` is used, and failing that the request's host if it is
    allowed (see next key). Sources run inside a request context bound to this URL, so
    ``url_for(..., _external=True)`` in a source builds the right absolute URLs.
``SITEMAP_ALLOWED_HOSTS`` (None)
    Hosts whose requests may define the base URL (``"example.com"``,
    ``".example.com"`` for subdomains, ``"*"`` for any), as a list: a bare string is
    refused when the app starts. None falls back to Flask's
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
    Refuse entries whose URL is not under the base URL.
``SITEMAP_CACHE_CONTROL`` (``"public, max-age=3600, s-maxage=3600"``)
    The Cache-Control of sitemap documents and of the robots.txt served.
``SITEMAP_CACHE`` (None)
    Where rendered documents of sources with a fingerprint are kept: None for a
    per-process ``MemoryCache`` (64 MiB); a ``redis://`` URL or a ``RedisCache`` to
    share them between workers and machines; False for none.
``SITEMAP_GZIP`` (True)
    Send gzip to clients whose Accept-Encoding allows it.
``SITEMAP_INDEX_SIZE`` (50,000)
    Children per ``<sitemapindex>`` file; above it the index is split into parts,
    each listed in robots.txt (lower it only to test that split).
``SITEMAP_HTML`` (True)
    Serve the HTML view for people (``/sitemap.html`` and the pages' ``.html``
    twins); False leaves those paths to the app. Read at ``init_app``.
``SITEMAP_EXTRA_SITEMAPS`` (``()``)
    More absolute sitemap URLs for robots.txt to list after ours (another host's
    sitemap this host vouches for, a static file).

These keys are the settings of :mod:`sitemap_core.settings`, one to one with the
middlewares' keyword arguments (``SITEMAP_GZIP`` is ``gzip=``; ``SITEMAP_ROBOTS_TXT`` is
``robots=``), with the same checks. All are checked by ``init_app``: a bad value raises
:class:`~sitemap_core.ConfigurationError` naming the key. Booleans are ``True`` /
``False``, ``1`` / ``0`` or the words ``true false yes no on off`` (environment values).

Values set after ``init_app`` are used and checked when they are next read: the base
URL, hosts and robots.txt settings on each request, the others when the first sitemap
is built. A bad one is logged (once) and the sitemap answers 500 until it is fixed,
while robots.txt keeps answering with the settings checked at ``init_app``.
"""

from __future__ import annotations

import difflib
import logging
import threading
from collections import ChainMap
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

from flask import Flask, Response, abort, current_app, request, stream_with_context
from flask.globals import request_ctx
from werkzeug.routing import MapAdapter

from sitemap_core import BaseURL, ConfigurationError, Site, UrlSource
from sitemap_core.cache import default_cache
from sitemap_core.entries import ChangeFreq, LastmodInput
from sitemap_core.hosts import LOOPBACK_HOSTS, check_allowed_hosts
from sitemap_core.http import ALLOWED_METHODS, Reply, method_not_allowed, plain_text
from sitemap_core.params import Languages
from sitemap_core.serve import answer_robots, count_index_parts, request_headers, respond
from sitemap_core.settings import FLASK_PREFIX, OPTIONS, Settings
from sitemap_core.sources import check_name

from .routes import Params, RouteSpec, route_entries

__all__ = ["Sitemapper"]

logger = logging.getLogger("flask_sitemapper")

F = TypeVar("F", bound=Callable[..., Any])

_EXTENSION_KEY = "sitemapper"
_EVERY_METHOD = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"]
_SITEMAP_RULES = tuple(
    f"{stem}.{fmt}{gz}"
    for stem in ("/sitemap", "/sitemap-<page>")
    for fmt in ("xml", "txt", "html")
    for gz in ("", ".gz")
)


#: The config keys a Sitemapper reads (TRUSTED_HOSTS: the fallback of the host list).
_KEYS = (*(option.key for option in OPTIONS), "TRUSTED_HOSTS")

_Snapshot = tuple[object, ...]


@dataclass
class _AppState:
    #: The settings checked by init_app: robots.txt keeps them while a later value is bad.
    started: Settings
    #: The config values last read and what their check gave.
    seen: tuple[_Snapshot, Settings | ConfigurationError]
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
        self._apps: list[Flask] = []
        self._lock = threading.Lock()
        # Set once a sitemap was built: sources registered later would be ignored by
        # the apps already serving, so registering then is refused.
        self._frozen = False
        if app is not None:
            self.init_app(app)

    def init_app(self, app: Flask) -> None:
        """Register the sitemap routes and the robots.txt hook on ``app``."""
        config = app.config
        for option in OPTIONS:
            config.setdefault(option.key, option.default)
        _warn_unknown_keys(config)
        # Fail at start-up, not on a crawl (values set after init_app are checked then).
        settings = _settings_of(config)
        self._apps.append(app)
        app.extensions[_EXTENSION_KEY] = _AppState(settings, (_snapshot(config), settings))
        rules = [rule for rule in _SITEMAP_RULES if settings.html or ".html" not in rule]
        for index, rule in enumerate(rules):
            app.add_url_rule(
                rule,
                endpoint=f"sitemapper.sitemap_{index}",
                view_func=self._serve,
                # Every method reaches the view, so that the core answers the others
                # with its own 405 (Allow: GET, HEAD), the same on every front.
                methods=_EVERY_METHOD,
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
        hreflang: str | None = None,
        languages: Iterable[str] | None = None,
        x_default: str | None = None,
    ) -> Callable[[F], F]:
        """Decorate a view function to list its route(s) in the sitemap.

        A static route needs no arguments. A route with URL variables needs
        ``params``: a function returning (or a list of) dicts of URL values, each
        optionally paired with a dict of per-URL fields, e.g.
        ``({"post_id": 7}, {"lastmod": row.updated_at})``. ``lastmod``,
        ``changefreq`` and ``priority`` are the defaults for every URL of the route.
        Routes are grouped into the source named ``source`` (``"pages"``).

        hreflang: for a route whose URL variable ``hreflang`` holds the language
        (``/<lang>/about``), ``languages`` lists its values; each param item then gives
        one URL per language, every one listing all of them as alternates, plus
        ``x-default`` for the URL of ``x_default``. Per-URL fields may also carry
        ``images``, ``videos``, ``news`` or ``alternates``.

        Bad arguments raise here, at import time.
        """

        def decorator(view: F) -> F:
            self._check_open()
            group = Languages.build(hreflang, languages, x_default, view.__qualname__)
            spec = RouteSpec.build(view, params, lastmod, changefreq, priority, group)
            if source in self._sources:
                raise ConfigurationError(f"source name {source!r} is already a source()")
            check_name(source)
            self._specs.setdefault(source, []).append(spec)
            return view

        return decorator

    def source(
        self,
        name: str,
        *,
        count: Callable[[], int] | None = None,
        fingerprint: Callable[..., Any] | None = None,
        newest: Callable[..., Any] | None = None,
        page_size: int | None = None,
        max_entry_bytes: int | None = None,
        news: bool = False,
    ) -> Callable[[F], F]:
        """Decorate a function returning entries (a generator) as the source ``name``.

        The function may yield :class:`~sitemap_core.Entry` objects or URL strings,
        and is called inside a request context bound to the base URL, so
        ``url_for(..., _external=True)`` works. Page N of a plain generator is served
        by skipping; give ``count`` (a cheap function) or use :meth:`add_source` with a
        sliceable object for big sources.
        """

        def decorator(func: F) -> F:
            self.add_source(
                name,
                func,
                count=count,
                fingerprint=fingerprint,
                newest=newest,
                page_size=page_size,
                max_entry_bytes=max_entry_bytes,
                news=news,
            )
            return func

        return decorator

    def add_source(
        self,
        name: str,
        source: Any,
        *,
        count: Callable[[], int] | None = None,
        fingerprint: Callable[..., Any] | None = None,
        newest: Callable[..., Any] | None = None,
        page_size: int | None = None,
        max_entry_bytes: int | None = None,
        news: bool = False,
    ) -> None:
        """Register ``source``: a callable returning an iterable, or a sized sliceable.

        A sliceable (``__len__`` + ``__getitem__(slice)``, e.g. a list or a query
        object doing ``LIMIT/OFFSET``) serves page N with one slice. ``fingerprint``
        and ``newest`` (or methods of those names on the source) make validators, 304s
        and caching cheap; ``page_size`` and ``max_entry_bytes`` bound this source's
        pages (see :class:`~sitemap_core.sources.Limits`). ``news=True`` makes it a news
        section: 1,000 entries a page, each with ``news=`` and of the last two days
        (see :mod:`sitemap_core.newsroom`; select with ``news_cutoff()``).
        """
        self._check_open()
        if name in self._sources or name in self._specs:
            raise ConfigurationError(f"source name {name!r} is registered twice")
        self._sources[name] = UrlSource.from_object(
            name,
            source,
            count=count,
            fingerprint=fingerprint,
            newest=newest,
            page_size=page_size,
            max_entry_bytes=max_entry_bytes,
            news=news,
        )

    def _check_open(self) -> None:
        if self._frozen:
            raise ConfigurationError(
                "sources must be registered before the first sitemap is served"
            )

    # Serving -------------------------------------------------------------------------

    @staticmethod
    def _settings(app: Flask) -> Settings:
        """The app's settings now; raises :class:`ConfigurationError` if one is bad.

        Checked again only when a value changed since the last look (one tuple
        comparison per request otherwise); a bad value is logged once.
        """
        state: _AppState = app.extensions[_EXTENSION_KEY]
        snapshot = _snapshot(app.config)
        seen, outcome = state.seen
        if snapshot != seen:
            try:
                outcome = _settings_of(app.config)
            except ConfigurationError as exc:
                outcome = exc
                logger.error(
                    "%s; sitemaps answer 500 and robots.txt keeps the settings checked at"
                    " init_app until the value is fixed",
                    exc,
                )
            state.seen = (snapshot, outcome)
        if isinstance(outcome, ConfigurationError):
            raise ConfigurationError(str(outcome))
        return outcome

    def _site(self, app: Flask) -> Site[UrlSource]:
        state: _AppState = app.extensions[_EXTENSION_KEY]
        if state.site is not None:
            return state.site
        # Two first requests in two threads must not build two sites (two caches).
        with self._lock:
            return self._build_site(app, state)

    def _build_site(self, app: Flask, state: _AppState) -> Site[UrlSource]:
        if state.site is None:
            settings = self._settings(app)
            self._frozen = True
            route_sources = [
                self._route_source(app, name, specs) for name, specs in self._specs.items()
            ]
            sources = [*route_sources, *self._sources.values()]
            state.site = settings.site(sources, default_cache(settings.cache))
        return state.site

    def _route_source(self, app: Flask, name: str, specs: list[RouteSpec]) -> UrlSource:
        present = []
        for spec in specs:
            if spec.find_endpoints(app):
                present.append(spec)
            elif not any(spec.find_endpoints(other) for other in self._apps if other is not app):
                # Decorated but a route of no app: a mistake to report, not to skip.
                spec.endpoints(app)
        return UrlSource(
            name,
            lambda: sum(spec.count(app) for spec in present),
            lambda start, stop: route_entries(app, present, start, stop),
        )

    @staticmethod
    def _base_url(app: Flask, settings: Settings) -> BaseURL:
        if settings.base_url is not None:
            return settings.base_url
        server_name = app.config.get("SERVER_NAME")
        if server_name:
            return BaseURL.from_request(request.scheme, server_name, request.script_root, ["*"])
        return BaseURL.from_request(
            request.scheme, request.host, request.script_root, settings.allowed_hosts
        )

    def _serve(self, page: str | None = None) -> Response:
        """View of every sitemap path; ``page`` is parsed by the core, not here."""
        app = _current_app()
        ctx = request_ctx._get_current_object()  # type: ignore[attr-defined]
        try:
            settings = self._settings(app)
        except ConfigurationError:  # logged when the value was first seen
            return _to_response(app, plain_text(500, "Internal Server Error\n", _is_head()))

        def base_url() -> BaseURL:
            base = self._base_url(app, settings)
            # url_for() (in sources too) builds URLs with the request's URL adapter:
            # binding it to the trusted base URL keeps any forged Host out of them.
            ctx.url_adapter = _url_adapter(app, base)
            return base

        headers = request_headers(request.headers.get)
        protocol = request.environ.get("SERVER_PROTOCOL", "HTTP/1.1")
        reply = respond(self._site(app), request.method, request.path, base_url, headers, protocol)
        if reply is None:
            abort(404)
        body = reply.body
        assert isinstance(body, Iterable)  # the sync core never gives an async body
        if isinstance(body, Iterator):
            # Keeps this request's context (and its URL adapter) alive while the server
            # iterates; its teardown then runs once, after the last chunk.
            body = stream_with_context(body)
        return app.response_class(body, status=reply.status, headers=reply.headers)

    def _robots_settings(self, app: Flask) -> tuple[Settings, bool]:
        # A value changed after init_app that is not valid (logged by _settings) must
        # not fail robots.txt, which crawlers read as "disallow all" when it is a 5xx:
        # it keeps the settings init_app checked until the value is fixed (False: the
        # settings are those, not the current ones).
        try:
            return self._settings(app), True
        except ConfigurationError:
            state: _AppState = app.extensions[_EXTENSION_KEY]
            return state.started, False

    def _robots_after_request(self, response: Response) -> Response:
        if request.path != "/robots.txt":
            return response
        app = _current_app()
        settings, current = self._robots_settings(app)
        if not settings.robots:
            return response
        if request.method not in ALLOWED_METHODS:
            # The app has no robots.txt route, so routing said 404; the file we serve
            # exists, and only the method is wrong.
            if response.status_code == 404:
                return _to_response(app, method_not_allowed())
            return response

        def read_body() -> bytes:
            response.direct_passthrough = False  # send_file responses: allow reading
            return response.get_data()

        ctx = request_ctx._get_current_object()  # type: ignore[attr-defined]

        def index_parts(base: BaseURL) -> int:
            # Counted best-effort (one part if a source fails): a misconfigured source
            # must not break robots.txt (crawlers read a failing one as "disallow all").
            # The sources' url_for needs the adapter bound to the base URL; the app's
            # own one comes back for the handlers that run after this one.
            if not current:
                return 1  # no site can be built from the bad value (already logged)
            saved = ctx.url_adapter
            ctx.url_adapter = _url_adapter(app, base)
            try:
                site = self._site(app)
            except Exception:
                logger.exception("the sitemap configuration failed; robots.txt lists one index")
                return 1
            else:
                return count_index_parts(site, base)
            finally:
                ctx.url_adapter = saved

        reply = answer_robots(
            response.status_code,
            list(response.headers.items()),
            read_body,
            lambda: self._base_url(app, settings),
            settings.robots_rules,
            _is_head(),
            request_headers(request.headers.get),
            settings.cache_control,
            index_parts,
            settings.extra_sitemaps,
        )
        return response if reply is None else _to_response(app, reply)


def _settings_of(config: Mapping[str, Any]) -> Settings:
    """The checked settings of a Flask config (errors name the ``SITEMAP_*`` key)."""
    hosts = _allowed_hosts(config)
    return Settings.from_config(ChainMap({"SITEMAP_ALLOWED_HOSTS": hosts}, dict(config)))


def _snapshot(config: Mapping[str, Any]) -> _Snapshot:
    # Lists are copied (as tuples), so a list changed in place is seen as changed.
    return tuple(
        tuple(value) if isinstance(value, list) else value
        for value in (config.get(key) for key in _KEYS)
    )


def _warn_unknown_keys(config: Mapping[str, Any]) -> None:
    # A misspelt key would be silently ignored; other extensions may use the prefix
    # too, so it is a warning, not an error.
    known = [option.key for option in OPTIONS]
    for key in config:
        if isinstance(key, str) and key.startswith(FLASK_PREFIX) and key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            logger.warning("%s is not a setting of flask_sitemapper%s", key, hint)


def _is_head() -> bool:
    return request.method == "HEAD"


def _allowed_hosts(config: Mapping[str, Any]) -> tuple[str, ...]:
    # SITEMAP_ALLOWED_HOSTS, else Flask's TRUSTED_HOSTS, else loopback; whichever is
    # used is checked under its own name (a bare string there would allow any host).
    for key in ("SITEMAP_ALLOWED_HOSTS", "TRUSTED_HOSTS"):
        value = config.get(key)
        if value is not None and (isinstance(value, str | bytes) or value):
            return check_allowed_hosts(value, key)
    return LOOPBACK_HOSTS


#: URL adapters bound to a base URL, per app: building one costs more than a 304's
#: own work, and an adapter is only read when it builds URLs.
_ADAPTERS: WeakKeyDictionary[Flask, dict[str, MapAdapter]] = WeakKeyDictionary()


def _url_adapter(app: Flask, base: BaseURL) -> MapAdapter:
    adapters = _ADAPTERS.setdefault(app, {})
    adapter = adapters.get(base.url)
    if adapter is None:
        scheme, _, rest = base.url.partition("://")
        netloc, _, prefix = rest.partition("/")
        adapter = app.url_map.bind(
            netloc, script_name="/" + prefix, url_scheme=scheme, path_info="/"
        )
        # Kept once the app serves requests (its routes are final then), for a bounded
        # number of base URLs (an allow-list may admit many hosts).
        if app._got_first_request and len(adapters) < 64:
            adapters[base.url] = adapter
    return adapter


def _to_response(app: Flask, reply: Reply) -> Response:
    return app.response_class(list(reply.body), status=reply.status, headers=reply.headers)  # type: ignore[arg-type]


def _current_app() -> Flask:
    app: Flask = current_app._get_current_object()  # type: ignore[attr-defined]
    return app
