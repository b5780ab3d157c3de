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
``SITEMAP_FEED`` (False)
    Serve the Atom feed of recently changed URLs at ``/sitemap-recent.atom`` and list
    it in robots.txt. Read at ``init_app``.
``SITEMAP_FEED_SIZE`` (1,000)
    The most URLs the feed lists, 1 to 50,000 (the most recently changed).
``SITEMAP_FEED_MAX_DAYS`` (None)
    Leave out of the feed the URLs changed longer ago than this many days.
``SITEMAP_INDEXNOW_KEY`` / ``SITEMAP_INDEXNOW_KEY_FILE`` (None)
    The site's IndexNow key, or a file keeping it (made with a new key if missing):
    served at ``/<key>.txt`` and used by ``flask sitemap indexnow``. Read at
    ``init_app``.
``SITEMAP_EXTRA_SITEMAPS`` (``()``)
    More absolute sitemap URLs for robots.txt to list after ours (another host's
    sitemap this host vouches for, a static file).
``SITEMAP_SITES`` (None)
    Several sites by host, each with its own sources (the middlewares' ``sites=``;
    see ``docs/multisite.md``): the decorated routes and registered sources are then
    listed by every site, besides its own. Read and checked at ``init_app``.

These keys are the settings of :mod:`sitemap_core.serve.settings`, one to one with the
middlewares' keyword arguments (``SITEMAP_GZIP`` is ``gzip=``; ``SITEMAP_ROBOTS_TXT`` is
``robots=``), with the same checks. All are checked by ``init_app``: a bad value raises
:class:`~sitemap_core.ConfigurationError` naming the key. Booleans are ``True`` /
``False``, ``1`` / ``0`` or the words ``true false yes no on off`` (environment values).

Values set after ``init_app`` are used and checked when they are next read: the base
URL, hosts and robots.txt settings on each request, the others when the first sitemap
is built. A bad one is logged (once) and the sitemap answers 500 until it is fixed,
while robots.txt keeps answering with the settings checked at ``init_app``.

**flask-sitemapper 1.8 apps** work unchanged (see ``docs/migrating-from-flask-sitemapper.md``):
``Sitemapper(app=None, https=None, master=False)`` (1.8's ``https=True`` default is
what ``generate()`` uses when ``https`` is left out), ``include(lastmod=, changefreq=,
priority=, url_variables=)`` above or below the route decorator, ``add_endpoint(...)``,
and a route of the app's own returning ``sitemapper.generate(gzip=False)``, which
answers with this package's core (valid, streamed, ETag / 304, gzip when asked for and
accepted); ``master=True`` makes ``generate()`` a ``<sitemapindex>`` of the endpoints
added. The app's own routes win over the package's: an app that routes
``/sitemap.xml`` itself keeps it, and the package's sitemap paths then answer 404 on
that app, as if unregistered (robots.txt still gets its ``Sitemap:`` line). Only the
first ``Sitemapper`` to ``init_app`` an app (and never a master) registers routes on
it; others serve through ``generate()``.
"""

from __future__ import annotations

import difflib
import logging
import threading
from collections import ChainMap
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import chain
from typing import Any, TypeVar, Unpack
from weakref import WeakKeyDictionary

from flask import (
    Flask,
    Request,
    Response,
    abort,
    current_app,
    has_request_context,
    request,
    stream_with_context,
)
from flask.globals import request_ctx
from werkzeug.exceptions import MethodNotAllowed
from werkzeug.routing import BaseConverter, MapAdapter

from sitemap_core.serve.front import (
    ALLOWED_METHODS,
    FEED_PATH,
    FLASK_PREFIX,
    LOOPBACK_HOSTS,
    OPTIONS,
    PAGE_NAME,
    BasePolicy,
    BaseURL,
    ChangeFreq,
    ConfigurationError,
    Languages,
    LastmodInput,
    PageCache,
    Reply,
    Settings,
    Site,
    Sites,
    SourceOptions,
    ThreadFlights,
    UntrustedHostError,
    UrlSource,
    accepts_gzip,
    answer_robots,
    check_allowed_hosts,
    check_host,
    check_name,
    count_index_parts,
    default_cache,
    environ_headers,
    key_file_path,
    method_not_allowed,
    not_found,
    plain_text,
    refuse_host,
    request_headers,
    respond,
)

from .compat import (
    PAGE_ARGUMENT,
    ChangefreqArgument,
    LastmodArgument,
    PriorityArgument,
    RouteSite,
    UrlVariables,
    check_master_fields,
    index_reply,
    is_legacy,
    legacy_params,
    page_path,
    without_vary,
)
from .multisite import SITES_KEY, check_sites, key_file_rule, make_sites
from .routes import Params, RoutesFingerprint, RouteSpec, route_entries, routes_newest

__all__ = ["Sitemapper"]

logger = logging.getLogger("flask_sitemapper")

F = TypeVar("F", bound=Callable[..., Any])

#: Where the Sitemapper serving an app keeps its state, in ``app.extensions`` (the
#: commands find a Flask app's sitemap by it).
EXTENSION_KEY = "sitemapper"


class _RootDocument(BaseConverter):
    """The ``xml``, ``txt`` or ``html`` (and ``.gz``) of ``/sitemap.<document>``.

    The root paths are one rule with this variable rather than static rules: Werkzeug
    tries an app's static rules before rules with variables, so an app's own
    ``@app.route("/sitemap.xml")`` (flask-sitemapper 1.8's way) wins whenever it was
    registered, while the package's root still wins over the app's ``/<slug>``.
    """

    regex = r"(?:xml|txt|html)(?:\.gz)?"


class _RootDocumentNoHtml(_RootDocument):
    """As :class:`_RootDocument`, without ``html`` (``SITEMAP_HTML = False``)."""

    regex = r"(?:xml|txt)(?:\.gz)?"


class _PageDocument(BaseConverter):
    """The ``<source>-<n>`` (or ``index-<n>``) of ``/sitemap-<page>.xml`` and its kin.

    Only that shape matches, so other paths go on to the app's own rules: a
    ``/sitemap-<name>.xml`` route declared after ``init_app`` (flask-sitemapper 1.8's
    child sitemaps) or a ``/<path:slug>`` catch-all serves ``/sitemap-archive.xml`` as
    it did before the package was added.
    """

    regex = PAGE_NAME


_CONVERTERS = {
    "sitemapper_root": _RootDocument,
    "sitemapper_root_xt": _RootDocumentNoHtml,
    "sitemapper_page": _PageDocument,
}
_PAGE_RULES = tuple(
    f"/sitemap-<sitemapper_page:page>.{fmt}{gz}"
    for fmt in ("xml", "txt", "html")
    for gz in ("", ".gz")
)


#: The config keys a Sitemapper reads (TRUSTED_HOSTS: the fallback of the host list;
#: SERVER_NAME: the host of the URLs without SITEMAP_BASE_URL, checked as they are).
#: The scheme of URLs built from the request's host, per ``Sitemapper(https=...)``.
_SCHEMES = {None: None, True: "https", False: "http"}

_KEYS = (*(option.key for option in OPTIONS), "TRUSTED_HOSTS", "SERVER_NAME")

_Snapshot = tuple[object, ...]


@dataclass
class _AppState:
    """What one ``Sitemapper`` keeps for one app."""

    #: The settings checked by init_app: robots.txt keeps them while a later value is bad.
    started: Settings
    #: The config values last read and what their check gave.
    seen: tuple[_Snapshot, Settings | ConfigurationError]
    #: This Sitemapper registered the package's routes on the app (the first to
    #: init_app it, and not a master); the others serve through generate() only.
    routes: bool = False
    #: The endpoints of those routes.
    endpoints: frozenset[str] = frozenset()
    site: Site[UrlSource] | None = None
    #: The site generate() serves from the app's own route (pages at ?page=).
    routed: RouteSite | None = None
    #: The page cache of this app's sites (one, shared by the two views of one site).
    cache: PageCache | None = None
    #: Methods of the app's own variable-free rules by path, once its routes are final.
    own_paths: dict[str, frozenset[str]] | None = None
    #: The Sitemapper this state belongs to (the commands find the sitemap by the app).
    owner: Sitemapper | None = None
    #: ``SITEMAP_SITES`` as checked by init_app, or None for one site.
    declared: Mapping[str, Any] | None = None
    #: The sites made of it (with the sources) when the first sitemap is served.
    sites: Sites[UrlSource] | None = None


class Sitemapper:
    """Serve ``/sitemap.xml``, its child pages and ``/robots.txt`` for a Flask app.

    Register URL sources with :meth:`include` (a decorator for routes) and
    :meth:`source` (a decorator for generator functions) or :meth:`add_source`.
    One ``Sitemapper`` may serve several apps through :meth:`init_app`.

    The arguments are flask-sitemapper 1.8's, for its apps: ``https`` fixes the scheme
    of URLs built from the request's host (True: ``https``, False: ``http``; None, the
    default: the request's own scheme on the package's routes, and ``https`` from
    :meth:`generate`, as 1.8 did); ``SITEMAP_BASE_URL``, when set, wins, scheme and all.
    ``master=True`` makes :meth:`generate` a ``<sitemapindex>`` of the routes given to
    :meth:`include` / :meth:`add_endpoint` (each serving a sitemap); a master
    registers no route and takes no :meth:`source`.
    """

    def __init__(
        self, app: Flask | None = None, https: bool | None = None, master: bool = False
    ) -> None:
        if not isinstance(https, bool | None):
            raise ConfigurationError(f"https must be True, False or None, got {https!r}")
        if not isinstance(master, bool):
            raise ConfigurationError(f"master must be True or False, got {master!r}")
        self._specs: dict[str, list[RouteSpec]] = {}
        self._sources: dict[str, UrlSource] = {}
        self._apps: list[Flask] = []
        self._states: WeakKeyDictionary[Flask, _AppState] = WeakKeyDictionary()
        self._lock = threading.Lock()
        # Set once a sitemap was built: sources registered later would be ignored by
        # the apps already serving, so registering then is refused.
        self._frozen = False
        #: The scheme of URLs built from the request's host: None for the request's own.
        self._scheme = _SCHEMES[https]
        # The walks of sources without a fingerprint that this process's threads
        # (gthread workers) need at once, each made once for all of them.
        self._flights = ThreadFlights()
        self.master = master
        if app is not None:
            self.init_app(app)

    def init_app(self, app: Flask) -> None:
        """Check the settings and, for the first Sitemapper of ``app``, register the
        sitemap routes and the robots.txt hook on it."""
        config = app.config
        for option in OPTIONS:
            config.setdefault(option.key, option.default)
        _warn_unknown_keys(config)
        # Fail at start-up, not on a crawl (values set after init_app are checked then).
        settings = _settings_of(config)
        if app in self._states:
            raise ConfigurationError("init_app() was already called with this app")
        self._apps.append(app)
        state = _AppState(settings, (_kept(_snapshot(config)), settings))
        state.declared = check_sites(config, settings)
        self._states[app] = state
        # One Sitemapper per app owns the paths: 1.8 apps make one per sitemap (and a
        # master for their index), each served from a route of the app's own.
        if self.master or EXTENSION_KEY in app.extensions:
            if not self.master:
                logger.info(
                    "app %r has a Sitemapper already: this one registers no route there"
                    " and is served by its generate() from a route of the app",
                    app.name,
                )
            return
        app.extensions[EXTENSION_KEY] = state
        state.routes = True
        state.owner = self
        endpoints = []
        for index, rule in enumerate(_sitemap_rules(app, settings, state.declared is not None)):
            endpoint = f"sitemapper.sitemap_{index}"
            # A rule without methods: every method, PROPFIND or BREW as well as POST,
            # reaches the view, so that the core answers the others with its own 405
            # (Allow: GET, HEAD), the same on every front. Flask's add_url_rule always
            # sets methods (GET by default), so the rule is added to the map directly.
            app.url_map.add(app.url_rule_class(rule, endpoint=endpoint, methods=None))
            app.view_functions[endpoint] = self._serve
            endpoints.append(endpoint)
        state.endpoints = frozenset(endpoints)
        app.after_request(self._robots_after_request)

    def _state(self, app: Flask) -> _AppState:
        state = self._states.get(app)
        if state is None:
            raise ConfigurationError(
                "this Sitemapper is not initialised for the current app: call"
                " Sitemapper(app) or sitemapper.init_app(app) first"
            )
        return state

    # Registration ------------------------------------------------------------------

    def include(
        self,
        lastmod: LastmodInput | LastmodArgument | None = None,
        changefreq: ChangeFreq | str | ChangefreqArgument | None = None,
        priority: float | PriorityArgument | None = None,
        url_variables: UrlVariables | None = None,
        *,
        params: Params | None = None,
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
        Routes are grouped into the source named ``source`` (``"pages"``). The
        decorator may go above or below the route decorator.

        hreflang: for a route whose URL variable ``hreflang`` holds the language
        (``/<lang>/about``), ``languages`` lists its values; each param item then gives
        one URL per language, every one listing all of them as alternates, plus
        ``x-default`` for the URL of ``x_default``. Per-URL fields may also carry
        ``images``, ``videos``, ``news`` or ``alternates``.

        flask-sitemapper 1.8's form works too: ``url_variables={"user_id": [1, 2]}``
        (or a function returning that mapping on each crawl) instead of ``params``,
        and ``lastmod`` / ``changefreq`` / ``priority`` as one value, a list of one
        value per URL, or a function returning either (see
        :func:`~flask_sitemapper.compat.legacy_params`).

        Bad arguments raise here, at import time.
        """
        if self.master:
            check_master_fields("include()", changefreq, priority)

        def decorator(view: F) -> F:
            self._check_open()
            label = getattr(view, "__qualname__", repr(view))
            group = Languages.build(hreflang, languages, x_default, label)
            spec = self._spec(
                view, label, params, lastmod, changefreq, priority, url_variables, group
            )
            self._add_spec(spec, source)
            return view

        return decorator

    def add_endpoint(
        self,
        view_func: Callable[..., Any] | str,
        lastmod: LastmodInput | LastmodArgument | None = None,
        changefreq: ChangeFreq | str | ChangefreqArgument | None = None,
        priority: float | PriorityArgument | None = None,
        url_variables: UrlVariables | None = None,
    ) -> None:
        """List a route in the sitemap without decorating it (flask-sitemapper 1.8's).

        ``view_func`` is the view function or its endpoint name (``"r_home"``,
        ``"blog.post"``); the other arguments are :meth:`include`'s. A master lists
        the sitemap routes of other Sitemappers this way.
        """
        self._check_open()
        if not isinstance(view_func, str) and not callable(view_func):
            raise ConfigurationError(
                f"add_endpoint() takes a view function or an endpoint name, got {view_func!r}"
            )
        label = getattr(view_func, "__qualname__", repr(view_func))  # a str has none
        spec = self._spec(view_func, label, None, lastmod, changefreq, priority, url_variables)
        self._add_spec(spec, "pages")

    def _spec(
        self,
        view: Callable[..., Any] | str,
        label: str,
        params: Params | None,
        lastmod: Any,
        changefreq: Any,
        priority: Any,
        url_variables: UrlVariables | None,
        group: Languages | None = None,
    ) -> RouteSpec:
        """The route spec of ``include`` / ``add_endpoint`` arguments, in either form."""
        if self.master:
            check_master_fields(label, changefreq, priority)
        fields_only = False
        if is_legacy(lastmod, changefreq, priority, url_variables):
            if params is not None:
                raise ConfigurationError(f"{label}: give params= or url_variables=, not both")
            params, defaults = legacy_params(label, lastmod, changefreq, priority, url_variables)
            lastmod = defaults.get("lastmod")
            changefreq = defaults.get("changefreq")
            priority = defaults.get("priority")
            # Per-crawl fields of a route without URL variables: checked as static.
            fields_only = params is not None and not url_variables
        if isinstance(view, str):
            return RouteSpec.for_endpoint(view, params, lastmod, changefreq, priority, fields_only)
        return RouteSpec.build(view, params, lastmod, changefreq, priority, group, fields_only)

    def _add_spec(self, spec: RouteSpec, source: str) -> None:
        if source in self._sources:
            raise ConfigurationError(f"source name {source!r} is already a source()")
        check_name(source)
        self._specs.setdefault(source, []).append(spec)

    def source(self, name: str, **options: Unpack[SourceOptions]) -> Callable[[F], F]:
        """Decorate a function returning entries (a generator) as the source ``name``.

        The function may yield :class:`~sitemap_core.Entry` objects or URL strings,
        and is called inside a request context bound to the base URL, so
        ``url_for(..., _external=True)`` works. Page N of a plain generator is served
        by skipping; give ``count`` (a cheap function) or use :meth:`add_source` with a
        sliceable object for big sources.
        """

        def decorator(func: F) -> F:
            self.add_source(name, func, **options)
            return func

        return decorator

    def add_source(self, name: str, source: Any, **options: Unpack[SourceOptions]) -> None:
        """Register ``source``: a callable returning an iterable, or a sized sliceable.

        A sliceable (``__len__`` + ``__getitem__(slice)``, e.g. a list or a query
        object doing ``LIMIT/OFFSET``) serves page N with one slice. ``fingerprint``
        and ``newest`` (or methods of those names on the source) make validators, 304s
        and caching cheap; ``page_size`` and ``max_entry_bytes`` bound this source's
        pages (see :class:`~sitemap_core.sources.base.Limits`). ``news=True`` makes it a news
        section: 1,000 entries a page, each with ``news=`` and of the last two days
        (see :mod:`sitemap_core.sources.newsroom`; select with ``news_cutoff()``).
        """
        self._check_open()
        if self.master:
            raise ConfigurationError(
                "a master Sitemapper lists sitemaps (include() / add_endpoint() on their"
                f" routes); it takes no source, got {name!r}"
            )
        if name in self._sources or name in self._specs:
            raise ConfigurationError(f"source name {name!r} is registered twice")
        self._sources[name] = UrlSource.from_object(name, source, **options)

    def _check_open(self) -> None:
        if self._frozen:
            raise ConfigurationError(
                "sources must be registered before the first sitemap is served"
            )

    # Serving -------------------------------------------------------------------------

    def _settings(self, app: Flask, state: _AppState | None = None) -> Settings:
        """The app's settings now; raises :class:`ConfigurationError` if one is bad.

        Checked again only when a value changed since the last look (one tuple
        comparison per request otherwise); a bad value is logged once. ``state`` is
        the app's, when the caller has it already.
        """
        if state is None:
            state = self._state(app)
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
            state.seen = (_kept(snapshot), outcome)
        if isinstance(outcome, ConfigurationError):
            raise ConfigurationError(str(outcome))
        return outcome

    def _site(self, app: Flask) -> Site[UrlSource]:
        state = self._state(app)
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
            cache = self._cache(state, settings)
            if state.declared is not None:
                # Several sites: each lists these sources and its own; the site of
                # the app as a whole (generate(), the commands without a host) is the
                # refusing one, which answers 400.
                state.sites = make_sites(state.declared, sources, settings, cache)
                state.site = state.sites.refusing.site
            else:
                state.site = settings.site(sources, cache)
        return state.site

    def _sites(self, app: Flask) -> Sites[UrlSource]:
        """The sites of ``SITEMAP_SITES``, made now if not yet (for the commands)."""
        state = self._state(app)
        self._site(app)
        if state.sites is None:
            raise ConfigurationError("this app declares no SITEMAP_SITES")
        return state.sites

    def _chosen(
        self, app: Flask, state: _AppState, req: Request
    ) -> tuple[Site[UrlSource], BasePolicy | None]:
        """The site of this request and where its base URL comes from: with
        ``SITEMAP_SITES``, the site its host names; else the app's, and None."""
        site = state.site or self._site(app)
        if state.sites is None:
            return site, None
        hosted = state.sites.choose(req.host)
        return hosted.site, hosted.policy

    def _routed_site(self, app: Flask) -> RouteSite:
        """The site :meth:`generate` serves: the same sources, pages at ``?page=``."""
        state = self._state(app)
        if state.routed is None:
            site = self._site(app)
            with self._lock:
                if state.routed is None:
                    state.routed = RouteSite.of(site)
        return state.routed

    @staticmethod
    def _cache(state: _AppState, settings: Settings) -> PageCache | None:
        # Cached pages are keyed by ETag, which names the document by its base URL and
        # path: the sites of one Sitemapper name the same documents alike, but another
        # Sitemapper of the app could give its own documents the same names (a source
        # called "pages" too), so only the app's first shares the configured cache.
        shareable = state.routes or settings.cache is None or settings.cache is True
        if state.cache is None and shareable:
            state.cache = default_cache(settings.cache)
        return state.cache

    def _present(self, app: Flask, specs: Iterable[RouteSpec]) -> Iterator[RouteSpec]:
        """The specs routed on ``app``, skipping those routed on another app of this
        Sitemapper; one routed on no app raises (:meth:`RouteSpec.endpoints`)."""
        for spec in specs:
            if spec.find_endpoints(app):
                yield spec
            elif not any(spec.find_endpoints(other) for other in self._apps):  # app: none
                # Decorated but a route of no app: a mistake to report, not to skip.
                spec.endpoints(app)

    def _route_source(self, app: Flask, name: str, specs: list[RouteSpec]) -> UrlSource:
        present = list(self._present(app, specs))
        return UrlSource(
            name,
            lambda: sum(spec.count(app) for spec in present),
            lambda start, stop: route_entries(app, present, start, stop),
            fingerprint=RoutesFingerprint(app, present),
            newest=lambda start, stop: routes_newest(app, present, name, start, stop),
        )

    @staticmethod
    def _base_url(
        app: Flask, settings: Settings, scheme: str | None = None, policy: BasePolicy | None = None
    ) -> BaseURL:
        """The base URL of a request: ``SITEMAP_BASE_URL``, else ``SERVER_NAME``, else
        the request's host if allowed; ``scheme`` (else the request's) for the last two.
        With ``policy`` (a site of ``SITEMAP_SITES``), that site's own base URL or host.
        """
        if policy is None and settings.base_url is not None:
            return settings.base_url
        req: Request = request._get_current_object()  # type: ignore[attr-defined]
        scheme = scheme or req.scheme
        if policy is not None:
            return policy.resolve(scheme, req.host, req.script_root)
        server_name = app.config.get("SERVER_NAME")
        hosts = ("*",) if server_name else settings.allowed_hosts
        return BaseURL.from_request(scheme, server_name or req.host, req.script_root, hosts)

    def _own_paths(self, app: Flask, state: _AppState) -> dict[str, frozenset[str]]:
        """The app's own rules without variables, by path, with their methods.

        Read once the app serves (its routes are final then; the package's views run
        only in requests, so that is always the case there).
        """
        if state.own_paths is not None:
            return state.own_paths
        paths: dict[str, frozenset[str]] = {}
        for rule in app.url_map.iter_rules():
            if rule.endpoint not in state.endpoints and not rule.arguments:
                paths[rule.rule] = paths.get(rule.rule, frozenset()).union(rule.methods or ())
        if app._got_first_request:
            state.own_paths = paths
        return paths

    def _stands_aside(self, app: Flask, state: _AppState) -> bool:
        """Whether the app routes ``/sitemap.xml`` itself (a flask-sitemapper 1.8 app
        returning ``generate()`` there): the package's sitemap paths are then its."""
        return _routes_sitemap_xml(self._own_paths(app, state))

    def _serve(
        self, page: str | None = None, document: str | None = None, key: str | None = None
    ) -> Response:
        """View of every sitemap path; ``page`` is parsed by the core, not here."""
        # The context's objects once, not through the proxies: this runs on every
        # revalidation, where a proxy lookup per attribute adds up.
        ctx = request_ctx._get_current_object()  # type: ignore[attr-defined]
        app: Flask = ctx.app
        req: Request = ctx.request
        path = req.path
        # Only the Sitemapper that owns the app's paths registers this view, and its
        # state is the app's extension entry: one dict lookup, where _state() makes a
        # weak reference to look the app up.
        state: _AppState = app.extensions[EXTENSION_KEY]
        own_paths = self._own_paths(app, state)
        own = own_paths.get(path)
        if own is not None:
            # The app's own route of this path did not take the method, so Werkzeug
            # went on to the package's rule: answer as the app would alone.
            raise MethodNotAllowed(valid_methods=sorted(own))
        if _routes_sitemap_xml(own_paths):
            abort(404)  # the package stands aside (the own paths read once, above)
        try:
            settings = self._settings(app, state)
        except ConfigurationError:  # logged when the value was first seen
            return _to_response(app, plain_text(500, "Internal Server Error\n", _is_head()))

        site, policy = self._chosen(app, state, req)

        def base_url() -> BaseURL:
            base = self._base_url(app, settings, self._scheme, policy)
            # url_for() (in sources too) builds URLs with the request's URL adapter:
            # binding it to the trusted base URL keeps any forged Host out of them.
            ctx.url_adapter = url_adapter(app, base)
            return base

        environ = req.environ
        headers = environ_headers(environ)
        protocol = environ.get("SERVER_PROTOCOL", "HTTP/1.1")
        reply = respond(site, req.method, path, base_url, headers, protocol, self._flights)
        if reply is None:
            abort(404)
        if reply.status == 304:
            # Nothing to send: no context to keep alive for it (and no ABC check, which
            # costs a 304 more than its own headers).
            return app.response_class((), status=304, headers=reply.headers)
        body = reply.body
        assert isinstance(body, Iterable)  # the sync core never gives an async body
        if isinstance(body, Iterator) and req.method != "HEAD":
            # Keeps this request's context (and its URL adapter) alive while the server
            # iterates; its teardown then runs once, after the last chunk.
            body = stream_with_context(body)
        return app.response_class(body, status=reply.status, headers=reply.headers)

    # flask-sitemapper 1.8: the app's own route -----------------------------------------

    def generate(self, gzip: bool = False) -> Response:
        """The sitemap as a response, for a route of the app's own (flask-sitemapper 1.8)::

            @app.route("/sitemap.xml")
            def sitemap():
                return sitemapper.generate()

        The document is the one the package's ``/sitemap.xml`` would be for this
        Sitemapper's routes and sources (a ``<sitemapindex>`` of the routes added
        when ``master=True``), written by the core: valid, with its length, ETag,
        Last-Modified, 304 and HEAD. ``gzip=True`` compresses it for clients whose
        Accept-Encoding allows it; ``gzip=False`` (1.8's default) never does. Past one
        file (50,000 URLs or 50 MiB) it is an index of this route's pages,
        ``?page=<source>-<n>``. URLs are absolute on ``SITEMAP_BASE_URL`` if set, else
        on ``SERVER_NAME`` or the request's host (if allowed; other hosts get 400),
        with the scheme of ``https`` (default ``https``, as in 1.8).

        Outside a request (a job writing the file, in an app context), the document
        is that of a GET of the app's root on ``SITEMAP_BASE_URL`` or ``SERVER_NAME``
        (one of them is needed: :class:`ConfigurationError` otherwise), read whole.
        """
        if not isinstance(gzip, bool):
            raise ConfigurationError(f"generate(gzip=...) must be True or False, got {gzip!r}")
        app = _current_app()
        if self._state(app).declared is not None:
            raise ConfigurationError(
                "generate() serves one site; with SITEMAP_SITES each site is served at"
                " its host by the package's routes"
            )
        if not has_request_context():
            return self._generated_outside_request(app, gzip)
        try:
            settings = self._settings(app)
        except ConfigurationError:  # logged when the value was first seen
            return _to_response(app, plain_text(500, "Internal Server Error\n", _is_head()))
        ctx = request_ctx._get_current_object()  # type: ignore[attr-defined]
        saved = ctx.url_adapter
        adapters: list[MapAdapter] = []
        scheme = self._scheme or "https"

        def base_url() -> BaseURL:
            base = self._base_url(app, settings, scheme)
            adapters.append(url_adapter(app, base))
            ctx.url_adapter = adapters[-1]
            return base

        headers = request_headers(request.headers.get)
        if not gzip:
            headers.pop("accept-encoding", None)
        try:
            if self.master:
                reply = self._master_reply(app, settings, base_url, headers, gzip)
            else:
                reply = self._routed_reply(app, base_url, headers)
        finally:
            # The view that called generate() keeps its own adapter.
            ctx.url_adapter = saved
        if not gzip:
            reply = without_vary(reply)
        body = reply.body
        assert isinstance(body, Iterable)  # the sync core never gives an async body
        return app.response_class(body, status=reply.status, headers=reply.headers)

    def _generated_outside_request(self, app: Flask, gzip: bool) -> Response:
        """What :meth:`generate` gives in an app context without a request: the
        document of a GET on the configured base URL, read whole while a request
        context for it lives."""
        base = app.config.get("SITEMAP_BASE_URL") or app.config.get("SERVER_NAME")
        if not base:
            raise ConfigurationError(
                "generate() outside a request needs SITEMAP_BASE_URL or SERVER_NAME, the"
                " host its URLs are on"
            )
        if "://" not in base:
            root = app.config.get("APPLICATION_ROOT") or "/"
            base = f"{self._scheme or 'https'}://{base}{root.rstrip('/')}"
        with app.test_request_context("/", base_url=base):
            response = self.generate(gzip)
            data = response.get_data()
        response.headers.remove("Content-Length")  # the new response sets its own
        return app.response_class(data, status=response.status_code, headers=response.headers)

    def _routed_reply(
        self, app: Flask, base_url: Callable[[], BaseURL], headers: Mapping[str, str]
    ) -> Reply:
        """The page of this Sitemapper's routes and sources that ``?page=`` names.

        Written whole (to a spool: a page at most) before the response leaves the view,
        as for an HTTP/1.0 client, with its length: its sources are read while the
        view's request context is there, and the body needs none afterwards, so
        responses of generate() read in any order, or not at all (a HEAD), never pop
        another request's context.
        """
        path = page_path(request.args.get(PAGE_ARGUMENT))
        protocol = "HTTP/1.0"
        site = self._routed_site(app)
        answered = None
        if path is not None:
            answered = respond(site, request.method, path, base_url, headers, protocol)
        return not_found(_is_head()) if answered is None else answered

    def _master_reply(
        self,
        app: Flask,
        settings: Settings,
        base_url: Callable[[], BaseURL],
        headers: Mapping[str, str],
        gzip: bool,
    ) -> Reply:
        """The ``<sitemapindex>`` of a master's routes (see :func:`index_reply`)."""
        if request.method not in ALLOWED_METHODS:
            return method_not_allowed()
        try:
            base = base_url()
        except UntrustedHostError as exc:
            return refuse_host(exc, _is_head())
        self._frozen = True

        specs = chain.from_iterable(self._specs.values())
        children = chain.from_iterable(spec.entries(app) for spec in self._present(app, specs))
        # Without gzip, generate() took Accept-Encoding out of the headers.
        coding = "gzip" if accepts_gzip(headers.get("accept-encoding")) else "identity"
        return index_reply(
            children,
            method=request.method,
            identity=f"{base.url}|{request.path}|master",
            request_headers=headers,
            coding=coding,
            gzip_offered=gzip,
            cache_control=settings.cache_control,
            origin=base.prefix if settings.same_host_only else None,
            label="master",
        )

    # robots.txt ---------------------------------------------------------------------------

    def _robots_settings(self, app: Flask) -> tuple[Settings, bool]:
        # A value changed after init_app that is not valid (logged by _settings) must
        # not fail robots.txt, which crawlers read as "disallow all" when it is a 5xx:
        # it keeps the settings init_app checked until the value is fixed (False: the
        # settings are those, not the current ones).
        try:
            return self._settings(app), True
        except ConfigurationError:
            return self._state(app).started, False

    def _robots_after_request(self, response: Response) -> Response:
        if request.path != "/robots.txt":
            return response
        app = _current_app()
        state = self._state(app)
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

        chosen = self._robots_site(app, state, current)
        if chosen is None:
            return response  # several sites, none made (the error is logged)
        own_site, policy = chosen
        ctx = request_ctx._get_current_object()  # type: ignore[attr-defined]
        # The Sitemap line of an app serving /sitemap.xml itself (with generate()) has
        # generate()'s scheme: https unless the Sitemapper says otherwise, as in 1.8.
        scheme = self._scheme
        if scheme is None and self._stands_aside(app, state):
            scheme = "https"

        def index_parts(base: BaseURL) -> int:
            # Counted best-effort (one part if a source fails): a misconfigured source
            # must not break robots.txt (crawlers read a failing one as "disallow all").
            # The sources' url_for needs the adapter bound to the base URL; the app's
            # own one comes back for the handlers that run after this one.
            if not current:
                return 1  # no site can be built from the bad value (already logged)
            if self._stands_aside(app, state):
                return 1  # /sitemap.xml is the app's own: its parts are not ours to count
            saved = ctx.url_adapter
            ctx.url_adapter = url_adapter(app, base)
            try:
                site = own_site or self._site(app)
            except Exception:
                logger.exception("the sitemap configuration failed; robots.txt lists one index")
                return 1
            else:
                return count_index_parts(site, base)
            finally:
                ctx.url_adapter = saved

        # A site of SITEMAP_SITES has its own rules and sitemaps; one site, the settings.
        shown: Settings | Site[UrlSource] = settings if own_site is None else own_site
        reply = answer_robots(
            response.status_code,
            list(response.headers.items()),
            read_body,
            lambda: self._base_url(app, settings, scheme, policy),
            shown.robots_rules,
            _is_head(),
            request_headers(request.headers.get),
            shown.cache_control,
            index_parts,
            shown.extra_sitemaps,
            shown.feed,
            shown.sitemaps_url,
        )
        return response if reply is None else _to_response(app, reply)

    def _robots_site(
        self, app: Flask, state: _AppState, current: bool
    ) -> tuple[Site[UrlSource] | None, BasePolicy | None] | None:
        """For robots.txt: the site of ``SITEMAP_SITES`` the request's host names and
        its base URL policy; (None, None) for one site; None when the sites cannot be
        made (logged), so that the app's robots.txt goes out as it is."""
        if state.declared is None:
            return None, None
        if not current:
            return None
        try:
            return self._chosen(app, state, request._get_current_object())  # type: ignore[attr-defined]
        except Exception:
            logger.exception("the sites of SITEMAP_SITES failed; robots.txt left to the app")
            return None


def _settings_of(config: Mapping[str, Any]) -> Settings:
    """The checked settings of a Flask config (errors name the ``SITEMAP_*`` key, or
    Flask's own ``SERVER_NAME`` / ``TRUSTED_HOSTS`` where the package reads them)."""
    hosts = _allowed_hosts(config)
    settings = Settings.from_config(ChainMap({"SITEMAP_ALLOWED_HOSTS": hosts}, dict(config)))
    server_name = config.get("SERVER_NAME")
    if server_name and settings.base_url is None:
        # The host of every sitemap URL then: a scheme or a path there would make each
        # sitemap request a 400, seen only when a crawler comes.
        check_host(server_name, "SERVER_NAME")
    return settings


def _snapshot(config: Mapping[str, Any]) -> _Snapshot:
    # The values as they are now, compared on each request with the copy kept of the
    # last ones checked (one C-level pass: this runs on every request).
    return tuple(map(config.get, _KEYS))


def _kept(snapshot: _Snapshot) -> _Snapshot:
    # Lists are copied, so a list changed in place no longer equals its copy.
    return tuple(list(value) if isinstance(value, list) else value for value in snapshot)


def _sitemap_rules(app: Flask, settings: Settings, several: bool = False) -> list[str]:
    # The paths the owning Sitemapper serves on ``app``, its path converter registered.
    converter = "sitemapper_root" if settings.html else "sitemapper_root_xt"
    app.url_map.converters[converter] = _CONVERTERS[converter]
    app.url_map.converters["sitemapper_page"] = _PageDocument
    rules = [f"/sitemap.<{converter}:document>"]
    rules += [rule for rule in _PAGE_RULES if settings.html or ".html" not in rule]
    if settings.feed:
        rules += [FEED_PATH, f"{FEED_PATH}.gz"]
    if several:
        # Each site has its own key, known only once its host is: every key-shaped
        # path is routed here, and the chosen site's core answers it or 404.
        rules.append(key_file_rule(app))
        return rules
    key = settings.indexnow()
    if key is not None:
        rules.append(key_file_path(key))
    return rules


def _warn_unknown_keys(config: Mapping[str, Any]) -> None:
    # A misspelt key would be silently ignored; other extensions may use the prefix
    # too, so it is a warning, not an error.
    known = [option.key for option in OPTIONS] + [SITES_KEY]
    for key in config:
        if isinstance(key, str) and key.startswith(FLASK_PREFIX) and key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            logger.warning("%s is not a setting of flask_sitemapper%s", key, hint)


def _routes_sitemap_xml(own_paths: Mapping[str, frozenset[str]]) -> bool:
    # The app's own rules (see Sitemapper._own_paths) answer GET /sitemap.xml.
    return "GET" in own_paths.get("/sitemap.xml", ())


def _is_head() -> bool:
    return request.method == "HEAD"


def _allowed_hosts(config: Mapping[str, Any]) -> tuple[str, ...]:
    # SITEMAP_ALLOWED_HOSTS when set (an empty list trusts no host, as on the
    # middlewares), else Flask's TRUSTED_HOSTS, else loopback; whichever is used is
    # checked under its own name. TRUSTED_HOSTS is Flask's own setting, read with
    # Werkzeug's rule: a string there is one host (ours refuses a bare string).
    value = config.get("SITEMAP_ALLOWED_HOSTS")
    if value is not None:
        return check_allowed_hosts(value, "SITEMAP_ALLOWED_HOSTS")
    trusted = config.get("TRUSTED_HOSTS")
    if trusted:
        return check_allowed_hosts(
            [trusted] if isinstance(trusted, str) else trusted, "TRUSTED_HOSTS"
        )
    return LOOPBACK_HOSTS


#: Where an app keeps its URL adapters bound to a base URL (in ``app.extensions``):
#: building one costs more than a 304's own work, and an adapter is only read when it
#: builds URLs.
_ADAPTERS_KEY = "flask_sitemapper.url_adapters"


def url_adapter(app: Flask, base: BaseURL) -> MapAdapter:
    """The app's URL map bound to ``base`` (its scheme, host and mount path), so that
    ``url_for`` builds the sitemap's URLs for that base URL outside a request too."""
    adapters: dict[str, MapAdapter] | None = app.extensions.get(_ADAPTERS_KEY)
    if adapters is None:
        adapters = app.extensions.setdefault(_ADAPTERS_KEY, {})
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
