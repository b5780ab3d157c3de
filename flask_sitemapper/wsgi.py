"""WSGI middleware: sitemaps and robots.txt in front of any WSGI application.

::

    app = SitemapMiddleware(app, {"posts": all_posts}, base_url="https://example.com")
    # several sites, by host, each with its own sources:
    app = SitemapMiddleware(app, sites={"blog.example.com": {"posts": all_posts}})

Paths that are not the sitemap's go to the wrapped app untouched. For ``/robots.txt``
the app is asked first: its own file is kept and gets the ``Sitemap:`` line; when it
answers 404 the middleware serves a robots.txt of its own. Put Werkzeug's ``ProxyFix``
outside this middleware so that a request's scheme and host are the public ones.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from http import HTTPStatus
from types import TracebackType
from typing import TYPE_CHECKING, Any, Unpack

from sitemap_core.serve.front import (
    BasePolicy,
    BaseURL,
    ConfigurationError,
    Hosted,
    PageCache,
    Reply,
    Settings,
    SettingsArguments,
    Site,
    Sites,
    ThreadFlights,
    UrlSource,
    answer_robots,
    classify,
    close_now,
    count_index_parts,
    default_cache,
    environ_headers,
    plain_text,
    respond,
    sources_of,
)

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

__all__ = ["SitemapMiddleware"]

logger = logging.getLogger("flask_sitemapper")

_ExcInfo = tuple[type[BaseException], BaseException, TracebackType] | tuple[None, None, None]


class SitemapMiddleware:
    """Serve ``/sitemap.xml``, its pages and ``/robots.txt`` for a WSGI app.

    ``sources`` maps source names to sources (callables returning iterables, or sized
    sliceable objects), or is a list of :class:`~sitemap_core.UrlSource` for sources
    with a ``count=``. The settings are keyword arguments, the same on every front
    (see :mod:`sitemap_core.serve.settings`): ``base_url`` fixes the origin of the site's
    URLs; without it the request's host is used when it is in ``allowed_hosts``
    (default: loopback only), and other hosts get 400; ``robots=False`` leaves
    robots.txt alone; ``page_size``, ``robots_rules``, ``same_host_only``,
    ``cache_control``, ``cache``, ``gzip``, ``index_size``, ``extra_sitemaps`` and
    ``html`` shape the documents. Each is checked here: a bad one raises
    :class:`~sitemap_core.ConfigurationError` naming it.

    ``sites`` serves several sites, each on its own host with its own sources (and
    ``sources`` are then listed by every site): see :mod:`sitemap_core.serve.sites`
    and ``docs/multisite.md``. Hosts no site claims get 400 on the sitemap paths.
    """

    def __init__(
        self,
        app: WSGIApplication,
        sources: Mapping[str, Any] | Iterable[UrlSource] = (),
        *,
        sites: Mapping[str, Any] | None = None,
        **settings: Unpack[SettingsArguments],
    ) -> None:
        self.app = app
        self.settings = Settings.from_arguments(settings)
        url_sources = sources_of(sources, UrlSource.from_object)
        cache = default_cache(self.settings.cache)
        #: The declared sites, or None for one site (the request's host, if allowed).
        self.sites: Sites[UrlSource] | None = None
        if sites is not None:
            self.sites = _sites(sites, url_sources, self.settings, cache, settings)
            self.site, self.base_policy = self.sites.refusing.site, self.sites.refusing.policy
        else:
            self.site = self.settings.site(url_sources, cache)
            self.base_policy = self.settings.base_policy()
        self.robots = self.settings.robots
        # The walks of sources without a fingerprint that the server's threads need at
        # once, each made once for all of them.
        self._flights = ThreadFlights()

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        """Answer sitemap paths; pass everything else to the wrapped app."""
        path = environ.get("PATH_INFO", "")
        method = environ.get("REQUEST_METHOD", "GET")
        site, policy = self.site, self.base_policy
        if self.sites is not None:
            if not self.sites.may_serve(path):
                return self.app(environ, start_response)
            # The site the (validated) host names: its own sources and memories.
            site, policy = _chosen(self.sites.choose(_host(environ)))
        action = classify(site, path, method, self.robots)
        if action == "app":
            return self.app(environ, start_response)
        if action == "robots":
            return self._robots(environ, start_response, site, policy)
        try:
            reply = respond(
                site,
                method,
                path,
                lambda: self._base(environ, policy),
                _wsgi_headers(environ),
                environ.get("SERVER_PROTOCOL", "HTTP/1.1"),
                self._flights,
            )
        except Exception:
            logger.exception("sitemap %s failed before the response started", path)
            reply = plain_text(500, "Internal Server Error\n", method == "HEAD")
        assert reply is not None  # match() said the path is the site's
        return _send(reply, start_response)

    def _base(self, environ: WSGIEnvironment, policy: BasePolicy) -> BaseURL:
        return policy.resolve(
            environ.get("wsgi.url_scheme", "http"),
            _host(environ),
            environ.get("SCRIPT_NAME", ""),
        )

    def _robots(
        self,
        environ: WSGIEnvironment,
        start_response: StartResponse,
        site: Site[UrlSource],
        policy: BasePolicy,
    ) -> Iterable[bytes]:
        head = environ.get("REQUEST_METHOD") == "HEAD"
        captured = _Captured()
        # Asked with GET even for HEAD: an app answers HEAD without a body, and the body
        # is what the Sitemap line is merged into (and what the length must describe).
        # Without Accept-Encoding or Range, so that the body comes back whole and plain.
        sub_environ = {
            k: v for k, v in environ.items() if k not in ("HTTP_ACCEPT_ENCODING", "HTTP_RANGE")
        }
        app_body = self.app({**sub_environ, "REQUEST_METHOD": "GET"}, captured.start_response)
        read: list[bytes] = []
        if not captured.started:
            # PEP 3333 lets an app call start_response at its first chunk: read first.
            read.append(_read_all(app_body))

        def read_body() -> bytes:
            if not read:
                read.append(_read_all(app_body))
            return read[0]

        reply = answer_robots(
            captured.status_code,
            captured.headers,
            read_body,
            lambda: self._base(environ, policy),
            site.robots_rules,
            head,
            _wsgi_headers(environ),
            site.cache_control,
            lambda base: count_index_parts(site, base),
            site.extra_sitemaps,
            site.feed,
            site.sitemaps_url,
        )
        if reply is None:
            return captured.replay(read or app_body, start_response, head)
        if not read:
            close_now(app_body)
        return _send(reply, start_response)


def _sites(
    declared: Mapping[str, Any],
    shared: list[UrlSource],
    settings: Settings,
    cache: PageCache | None,
    given: Mapping[str, object],
) -> Sites[UrlSource]:
    # The declared sites; their hosts are the allowed ones, so allowed_hosts is refused.
    if "allowed_hosts" in given:
        raise ConfigurationError(
            "allowed_hosts= with sites=: the hosts of sites are the allowed hosts; drop one"
        )
    return Sites(
        declared, shared=shared, settings=settings, adapt=UrlSource.from_object, cache=cache
    )


def _chosen(hosted: Hosted[UrlSource]) -> tuple[Site[UrlSource], BasePolicy]:
    return hosted.site, hosted.policy


def _host(environ: WSGIEnvironment) -> str:
    return environ.get("HTTP_HOST") or _server_host(environ)


def _wsgi_headers(environ: WSGIEnvironment) -> dict[str, str]:
    return environ_headers(environ)


def _server_host(environ: WSGIEnvironment) -> str:
    name = str(environ.get("SERVER_NAME", ""))
    port = str(environ.get("SERVER_PORT", ""))
    return f"{name}:{port}" if port else name


def _send(reply: Reply, start_response: StartResponse) -> Iterable[bytes]:
    status = f"{reply.status} {HTTPStatus(reply.status).phrase}"
    start_response(status, reply.headers)
    body = reply.body
    assert isinstance(body, Iterable)  # the sync core never gives an async body
    return body


class _Captured:
    """Holds what the wrapped app passed to ``start_response``."""

    def __init__(self) -> None:
        self.status = "500 Internal Server Error"
        self.headers: list[tuple[str, str]] = []
        self.exc_info: _ExcInfo | None = None
        self.started = False

    def start_response(
        self,
        status: str,
        headers: list[tuple[str, str]],
        exc_info: _ExcInfo | None = None,
        /,
    ) -> Callable[[bytes], object]:
        self.status, self.headers, self.exc_info = status, headers, exc_info
        self.started = True
        return _refuse_write

    @property
    def status_code(self) -> int:
        try:
            return int(self.status.split(" ", 1)[0])
        except ValueError:
            return 500

    def replay(
        self, body: Iterable[bytes], start_response: StartResponse, head: bool
    ) -> Iterable[bytes]:
        start_response(self.status, self.headers, self.exc_info)
        if head:
            close_now(body)
            return []
        return body


def _refuse_write(data: bytes) -> object:
    # The legacy write() callable cannot be captured without buffering the app's
    # whole output; robots.txt apps do not use it.
    raise RuntimeError("write() is not supported by SitemapMiddleware for /robots.txt")


def _read_all(body: Iterable[bytes]) -> bytes:
    # Whole, even past the size limit: an oversized file is passed on intact, not cut.
    try:
        return b"".join(body)
    finally:
        close_now(body)
