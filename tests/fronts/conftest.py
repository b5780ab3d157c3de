"""Fixtures and app factories for the front-end tests.

Every front (the Flask extension, the WSGI middleware, the ASGI middleware) is
built by one factory from the SAME source definitions and settings, so the checks in
``test_conformance.py`` are shared rather than copied. A factory has the signature::

    build_xxx_app(sources, page_size=50_000, *, base_url=None, allowed_hosts=None,
                  robots=True, robots_rules=None, same_host_only=True, app_robots=None,
                  cache=None, cache_control=None, gzip=None)

* ``sources``: ``{name: obj}`` where ``obj`` is anything both fronts accept as a source
  (a list / sized sliceable, or a callable returning an iterable of URLs or entries);
* ``base_url`` / ``allowed_hosts`` / ``robots`` / ``robots_rules`` / ``same_host_only``:
  the front's settings, translated to its own spelling (``SITEMAP_*`` config keys for
  Flask, keyword arguments for the middleware); ``None`` means "the front's default";
* ``cache`` / ``cache_control`` / ``gzip``: the HTTP-caching settings (``SITEMAP_CACHE``,
  ``SITEMAP_CACHE_CONTROL``, ``SITEMAP_GZIP`` for Flask; ``cache=``, ``cache_control=``,
  ``gzip=`` for the middleware); ``cache`` is a page cache, ``False`` or a ``redis://``
  URL, passed through as given;
* ``app_robots``: the bytes of the robots.txt the wrapped application serves itself
  (``text/plain; charset=utf-8``), or ``None`` when the application has none (404).

The wrapped application answers ``GET /`` with ``hello`` and 404 for everything else.

To add a front, write its factory and register a :class:`Front` in :data:`FRONTS`:
``client`` turns the app into a synchronous ``httpx.Client`` (for ASGI:
``starlette.testclient.TestClient(app, base_url=BASE)``, which is an ``httpx.Client``),
and ``raw_body`` starts a GET and returns the status and the body exactly as the
app hands it to the server, chunk by chunk (for ASGI: the ``http.response.body``
messages), so streaming can be checked even when the client buffers. ``raw_body`` must
be lazy: a chunk is produced only when the test pulls it (the streaming test checks
that the source was not read ahead), and an error the app raises mid-body must come
out of the iteration after the chunks sent before it. :data:`FRONTS` is read when the
``front`` fixture is defined, so register new fronts in its literal.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.from_thread
import httpx
import pytest
from click.testing import Result
from flask import Flask, Response
from flask.cli import FlaskGroup

with warnings.catch_warnings():
    # Starlette 1.x asks for a newer HTTP client in its test client; httpx is what the
    # project's other tests use, and the test client works with it.
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient
from werkzeug.test import create_environ

import asgi_sitemap
from flask_sitemapper import SitemapMiddleware, Sitemapper
from tests.asgi_scope import get_scope

BASE = "http://localhost"

#: The settings a test may leave out (None: the front's default), as the middlewares
#: name them; ``SITEMAP_<NAME>`` on Flask.
OPTIONAL_SETTINGS = (
    "allowed_hosts",
    "robots_rules",
    "cache",
    "cache_control",
    "gzip",
    "html",
    "feed",
    "feed_size",
    "feed_max_days",
    "indexnow_key",
    "extra_sitemaps",
    "sitemaps_url",
)


#: Settings every factory understands (see the module docstring).
SETTINGS = ("base_url", "robots", "same_host_only", "app_robots", *OPTIONAL_SETTINGS)


# -- the flask command -----------------------------------------------------------------


def flask_sitemap(app: Flask, *args: str) -> Result:
    """``flask sitemap ARGS`` on ``app``, as the ``flask`` command runs it: a real
    FlaskGroup, which loads the ``flask.commands`` plugins (``sitemap`` among them)."""
    # FlaskGroup sets FLASK_RUN_FROM_CLI in os.environ; naming it here makes the runner
    # put it back as it was, so it does not leak into later tests.
    return app.test_cli_runner().invoke(
        FlaskGroup(create_app=lambda: app), ["sitemap", *args], env={"FLASK_RUN_FROM_CLI": None}
    )


# -- source definitions shared by every front ------------------------------------------


def url_list(origin: str, section: str, n: int) -> list[str]:
    """``n`` distinct absolute URLs under ``origin``."""
    return [f"{origin}/{section}/{i}" for i in range(n)]


def generator_source(urls: list[str]) -> Callable[[], Iterator[str]]:
    """A plain generator function over ``urls`` (the small-site, walked path)."""

    def entries() -> Iterator[str]:
        yield from urls

    return entries


def standard_sources(origin: str = BASE) -> dict[str, Any]:
    """Two sources of both kinds: 13 URLs as a list, 25 from a generator function."""
    return {
        "pages": url_list(origin, "pages", 13),
        "posts": generator_source(url_list(origin, "posts", 25)),
    }


#: How many URLs :func:`standard_sources` holds, per source, in registration order.
STANDARD_COUNTS = {"pages": 13, "posts": 25}


# -- the wrapped application -----------------------------------------------------------


def hello_wsgi_app(app_robots: bytes | None = None) -> Callable[..., Any]:
    """A WSGI app: ``/`` says hello, ``/robots.txt`` is ``app_robots`` if given, else 404.

    Like Werkzeug, it sends the GET headers and no body for HEAD.
    """

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == "/":
            status, body = "200 OK", b"hello"
        elif path == "/robots.txt" and app_robots is not None:
            status, body = "200 OK", app_robots
        else:
            status, body = "404 Not Found", b"Not Found"
        start_response(
            status,
            [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))],
        )
        return [] if environ.get("REQUEST_METHOD") == "HEAD" else [body]

    return app


def hello_asgi_app(app_robots: bytes | None = None) -> Callable[..., Any]:
    """The ASGI twin of :func:`hello_wsgi_app` (no body for HEAD, as Starlette does)."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        path = scope["path"]
        if path == "/":
            status, body = 200, b"hello"
        elif path == "/robots.txt" and app_robots is not None:
            status, body = 200, app_robots
        else:
            status, body = 404, b"Not Found"
        headers = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(body)).encode()),
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send(
            {"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body}
        )

    return app


# -- factories -------------------------------------------------------------------------


#: Settings whose None a test gives as a value (to see it refused), not as "unset".
NONE_IS_GIVEN = ("extra_sitemaps",)


def given(**settings: Any) -> dict[str, Any]:
    """The optional settings a test gave (not None): the others keep their defaults."""
    unknown = settings.keys() - set(OPTIONAL_SETTINGS)
    assert not unknown, f"unknown settings {unknown}"
    return {
        name: value
        for name, value in settings.items()
        if value is not None or name in NONE_IS_GIVEN
    }


def build_flask_app(
    sources: Mapping[str, Any],
    page_size: int = 50_000,
    *,
    base_url: str | None = None,
    robots: bool = True,
    same_host_only: bool = True,
    app_robots: bytes | None = None,
    **settings: Any,
) -> Flask:
    """A Flask app with the ``Sitemapper`` extension serving ``sources``."""
    app = Flask("conformance_flask")
    # Errors must come out as HTTP 500, as in production, not as test exceptions.
    app.testing = False
    app.config["PROPAGATE_EXCEPTIONS"] = False
    app.config["SITEMAP_PAGE_SIZE"] = page_size
    app.config["SITEMAP_BASE_URL"] = base_url
    app.config["SITEMAP_ALLOWED_HOSTS"] = settings.pop("allowed_hosts", None)
    app.config["SITEMAP_ROBOTS_TXT"] = robots
    app.config["SITEMAP_SAME_HOST_ONLY"] = same_host_only
    for name, value in given(**settings).items():
        app.config[f"SITEMAP_{name.upper()}"] = value

    @app.get("/")
    def hello() -> str:
        return "hello"

    if app_robots is not None:
        robots_body = app_robots

        @app.get("/robots.txt")
        def robots_txt() -> Response:
            return Response(robots_body, content_type="text/plain; charset=utf-8")

    sitemapper = Sitemapper(app)
    for name, source in sources.items():
        sitemapper.add_source(name, source)
    return app


def build_wsgi_app(
    sources: Mapping[str, Any],
    page_size: int = 50_000,
    *,
    base_url: str | None = None,
    robots: bool = True,
    same_host_only: bool = True,
    app_robots: bytes | None = None,
    **settings: Any,
) -> SitemapMiddleware:
    """``SitemapMiddleware`` serving ``sources`` in front of :func:`hello_wsgi_app`."""
    return SitemapMiddleware(
        hello_wsgi_app(app_robots),
        dict(sources),
        base_url=base_url,
        page_size=page_size,
        robots=robots,
        same_host_only=same_host_only,
        **given(**settings),
    )


def build_asgi_app(
    sources: Mapping[str, Any],
    page_size: int = 50_000,
    *,
    base_url: str | None = None,
    robots: bool = True,
    same_host_only: bool = True,
    app_robots: bytes | None = None,
    **settings: Any,
) -> asgi_sitemap.SitemapMiddleware:
    """``asgi_sitemap.SitemapMiddleware`` serving ``sources`` before :func:`hello_asgi_app`."""
    return asgi_sitemap.SitemapMiddleware(
        hello_asgi_app(app_robots),
        dict(sources),
        base_url=base_url,
        page_size=page_size,
        robots=robots,
        same_host_only=same_host_only,
        **given(**settings),
    )


def asgi_client(app: Any) -> httpx.Client:
    """A synchronous client talking to an ASGI app in-process (Starlette's)."""
    # The middleware answers errors before the first byte with a 500 itself; an error
    # that escapes it is one a real server shows by cutting the transfer, which the
    # test client shows by raising.
    return TestClient(app, base_url=BASE)


def asgi_raw_body(app: Any, path: str) -> RawBody:
    """Run an ASGI app for ``GET path``; each body message is produced when pulled.

    The app's ``send`` waits until the test takes the message (a zero-buffer stream),
    so a chunk the test has not asked for has not been rendered.
    """
    portal_cm = anyio.from_thread.start_blocking_portal()
    portal = portal_cm.__enter__()
    sender, receiver = anyio.create_memory_object_stream[dict[str, Any] | BaseException](0)
    scope = get_scope(path)

    async def receive() -> dict[str, Any]:
        await anyio.sleep_forever()  # the request has no body and the client never leaves
        raise AssertionError("unreachable")

    async def run() -> None:
        try:
            await app(scope, receive, sender.send)
        except BaseException as exc:  # handed to the test, which re-raises it in order
            await sender.send(exc)
        finally:
            await sender.aclose()

    future = portal.start_task_soon(run)

    def take() -> dict[str, Any] | BaseException | None:
        try:
            return portal.call(receiver.receive)
        except anyio.EndOfStream:
            return None

    start = take()
    if isinstance(start, BaseException):
        raise start
    assert start is not None and start["type"] == "http.response.start"
    headers = [(k.decode(), v.decode()) for k, v in start.get("headers", [])]

    def chunks() -> Iterator[bytes]:
        try:
            while (message := take()) is not None:
                if isinstance(message, BaseException):
                    raise message
                if message.get("body"):
                    yield message["body"]
                if not message.get("more_body", False):
                    break
        finally:
            future.cancel()
            portal_cm.__exit__(None, None, None)

    return RawBody(int(start["status"]), headers, chunks())


def wsgi_client(app: Any) -> httpx.Client:
    """A synchronous client talking to a WSGI app in-process."""
    return httpx.Client(transport=httpx.WSGITransport(app=app), base_url=BASE)


@dataclass
class RawBody:
    """A started response: status code and the body's chunks as the app yields them."""

    status: int
    headers: list[tuple[str, str]]
    chunks: Iterator[bytes]


def wsgi_raw_body(app: Any, path: str) -> RawBody:
    """Call a WSGI app directly for ``GET path``; the body is not read yet."""
    environ = create_environ(path, BASE)
    started: list[Any] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        started[:] = [status, headers]
        return lambda data: None

    iterable = app(environ, start_response)

    def chunks() -> Iterator[bytes]:
        try:
            yield from iterable
        finally:
            close = getattr(iterable, "close", None)
            if close is not None:
                close()

    iterator = chunks()
    # WSGI lets an app call start_response as late as its first chunk.
    if not started:
        first = next(iterator)

        def with_first() -> Iterator[bytes]:
            yield first
            yield from iterator

        iterator = with_first()
    return RawBody(int(started[0].split(" ", 1)[0]), list(started[1]), iterator)


@dataclass(frozen=True)
class Front:
    """One way of serving the sitemap, as the conformance suite sees it."""

    name: str
    build_app: Callable[..., Any]
    client: Callable[[Any], httpx.Client]
    raw_body: Callable[[Any, str], RawBody]


FRONTS: dict[str, Front] = {
    "flask-extension": Front("flask-extension", build_flask_app, wsgi_client, wsgi_raw_body),
    "wsgi-middleware": Front("wsgi-middleware", build_wsgi_app, wsgi_client, wsgi_raw_body),
    "asgi-middleware": Front("asgi-middleware", build_asgi_app, asgi_client, asgi_raw_body),
}


# -- fixtures --------------------------------------------------------------------------


@pytest.fixture(params=list(FRONTS))
def front(request: pytest.FixtureRequest) -> Front:
    """Each registered front in turn."""
    return FRONTS[request.param]


@pytest.fixture
def make_app(front: Front) -> Callable[..., Any]:
    """``make_app(sources, page_size=..., **settings)`` for the current front."""
    return front.build_app


@pytest.fixture
def make_client(front: Front) -> Iterator[Callable[..., httpx.Client]]:
    """``make_client(sources, page_size=..., **settings)`` -> a client of a fresh app."""
    clients: list[httpx.Client] = []

    def make(sources: Mapping[str, Any], page_size: int = 50_000, **settings: Any) -> httpx.Client:
        unknown = set(settings) - set(SETTINGS)
        assert not unknown, f"unknown settings {unknown}"
        client = front.client(front.build_app(sources, page_size, **settings))
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def client(make_client: Callable[..., httpx.Client]) -> httpx.Client:
    """The standard site (38 URLs in two sources) with 10 URLs per page: an index."""
    return make_client(standard_sources(), page_size=10)
