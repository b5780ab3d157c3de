"""What the middleware must leave alone, and the robots.txt it shares with the app.

* ``lifespan`` and ``websocket`` scopes go to the app untouched, on any path (even
  ``/sitemap.xml``): the very same scope, receive and send objects, and the middleware
  sends nothing of its own. Checked with a raw ASGI call and, end to end, with
  Starlette's TestClient on a Starlette app and a FastAPI app (lifespan state, hooks,
  websocket echo).
* A robots.txt the app serves keeps its bytes and its other headers, and gets the
  ``Sitemap:`` line exactly once: appended when missing, not repeated when present.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import AsyncIterator, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from fastapi import FastAPI
from fastapi import WebSocket as FastAPIWebSocket
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

with warnings.catch_warnings():
    # Starlette 1.x announces that its TestClient will need `httpx2` instead of
    # `httpx`; the client works as it did, and httpx2 is not a dependency here.
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from starlette.testclient import TestClient

from asgi_sitemap import SitemapMiddleware

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]

#: TestClient's requests carry ``Host: localhost``, a host the middleware trusts.
BASE = "http://localhost"
OUR_SITEMAP = f"{BASE}/sitemap.xml"
SOURCES = {"extra": [f"{BASE}/extra"]}


# Raw ASGI ------------------------------------------------------------------------------

NON_HTTP_SCOPES: dict[str, Scope] = {
    "lifespan": {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}},
    "websocket": {"type": "websocket", "path": "/ws", "headers": [], "subprotocols": []},
    # A websocket on the sitemap's own paths is still the app's business.
    "websocket-sitemap-path": {
        "type": "websocket",
        "path": "/sitemap.xml",
        "headers": [],
        "subprotocols": [],
    },
    "websocket-robots-path": {
        "type": "websocket",
        "path": "/robots.txt",
        "headers": [],
        "subprotocols": [],
    },
}


class RecordingApp:
    """An ASGI app that records every call and answers nothing."""

    def __init__(self) -> None:
        self.calls: list[tuple[Scope, Any, Any]] = []

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        self.calls.append((scope, receive, send))


@pytest.mark.parametrize("name", list(NON_HTTP_SCOPES))
def test_non_http_scopes_reach_the_app_untouched(name: str) -> None:
    scope = {**NON_HTTP_SCOPES[name]}
    snapshot = repr(scope)
    inner = RecordingApp()
    sent: list[Message] = []

    async def receive() -> Message:
        raise AssertionError("the middleware must not read this scope's messages")

    async def send(message: Message) -> None:
        sent.append(message)

    async def call() -> None:
        await SitemapMiddleware(inner, SOURCES)(scope, receive, send)

    anyio.run(call)
    assert len(inner.calls) == 1
    got_scope, got_receive, got_send = inner.calls[0]
    assert got_scope is scope
    assert repr(scope) == snapshot  # not modified in place either
    assert got_receive is receive
    assert got_send is send
    assert sent == []


# Starlette and FastAPI, through TestClient -----------------------------------------------


def starlette_app(events: list[str]) -> Starlette:
    """A Starlette app with a lifespan (hooks and state), websockets and the middleware."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, str]]:
        events.append("startup")
        yield {"greeting": "hello from the lifespan"}
        events.append("shutdown")

    async def state(request: Request) -> PlainTextResponse:
        return PlainTextResponse(request.state.greeting)

    async def echo(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.send_text((await websocket.receive_text()).upper())
        await websocket.close()

    return Starlette(
        routes=[
            Route("/state", state),
            WebSocketRoute("/ws", echo),
            WebSocketRoute("/sitemap.xml", echo),
        ],
        middleware=[Middleware(SitemapMiddleware, sources=SOURCES)],
        lifespan=lifespan,
    )


def fastapi_app(events: list[str]) -> FastAPI:
    """The same app built the FastAPI way (``add_middleware``, decorators)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, str]]:
        events.append("startup")
        yield {"greeting": "hello from the lifespan"}
        events.append("shutdown")

    app = FastAPI(lifespan=lifespan)
    app.add_middleware(SitemapMiddleware, sources=SOURCES)

    @app.get("/state", response_class=PlainTextResponse)
    async def state(request: Request) -> str:
        greeting: str = request.state.greeting
        return greeting

    async def echo(websocket: FastAPIWebSocket) -> None:
        await websocket.accept()
        await websocket.send_text((await websocket.receive_text()).upper())
        await websocket.close()

    app.add_api_websocket_route("/ws", echo)
    app.add_api_websocket_route("/sitemap.xml", echo)
    return app


@pytest.mark.parametrize("build", [starlette_app, fastapi_app], ids=["starlette", "fastapi"])
def test_lifespan_and_websockets_work_through_the_middleware(
    build: Callable[[list[str]], Any],
) -> None:
    events: list[str] = []
    with TestClient(build(events), base_url=BASE) as client:
        assert events == ["startup"]
        # The lifespan's state reached the request: the lifespan scope was passed on.
        assert client.get("/state").text == "hello from the lifespan"
        for path in ("/ws", "/sitemap.xml"):
            with client.websocket_connect(path) as websocket:
                websocket.send_text(f"hi on {path}")
                assert websocket.receive_text() == f"HI ON {path.upper()}"
        # HTTP on the same path is still the sitemap.
        response = client.get("/sitemap.xml")
        assert response.status_code == 200
        assert f"<loc>{BASE}/extra</loc>" in response.text
    assert events == ["startup", "shutdown"]


# The app's own robots.txt --------------------------------------------------------------

ROBOTS_FILES = {
    "without-sitemap": "User-agent: *\nDisallow: /private/\n",
    "no-final-newline": "User-agent: *\nDisallow: /private/",
    "already-declared": f"User-agent: *\nDisallow:\n\nSitemap: {OUR_SITEMAP}\n",
    # The directive's name is case-insensitive (RFC 9309); spacing and comments vary.
    "declared-differently": f"User-agent: *\nDisallow:\nsitemap:   {OUR_SITEMAP}   # ours\n",
    "other-sitemap": "User-agent: *\nDisallow:\nSitemap: https://cdn.example.com/feeds.xml\n",
}
_DIRECTIVE = re.compile(r"^\s*sitemap\s*:\s*(\S+)", re.IGNORECASE | re.MULTILINE)


def robots_app(text: str) -> Starlette:
    """An app serving ``text`` as its robots.txt, with caching headers of its own."""

    async def robots(request: Request) -> PlainTextResponse:
        return PlainTextResponse(
            text, headers={"Cache-Control": "public, max-age=3600", "ETag": '"robots-v1"'}
        )

    return Starlette(
        routes=[Route("/robots.txt", robots)],
        middleware=[Middleware(SitemapMiddleware, sources=SOURCES)],
    )


@pytest.mark.parametrize("case", list(ROBOTS_FILES))
def test_own_robots_txt_gets_the_sitemap_line_once(case: str) -> None:
    own = ROBOTS_FILES[case]
    with TestClient(robots_app(own), base_url=BASE) as client:
        response = client.get("/robots.txt")
        again = client.get("/robots.txt")
        head = client.head("/robots.txt")
    body = response.text
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    # The app's bytes come first, unchanged (a missing final newline is supplied).
    assert body.startswith(own if own.endswith("\n") else own + "\n"), body
    declared = _DIRECTIVE.findall(body)
    assert declared.count(OUR_SITEMAP) == 1, body
    # Every Sitemap line of the app's own is still there.
    assert [url for url in declared if url != OUR_SITEMAP] == [
        url for url in _DIRECTIVE.findall(own) if url != OUR_SITEMAP
    ]
    if OUR_SITEMAP in own:
        assert body == own  # nothing to add: the file as the app wrote it
    # The app's other headers are kept; the length describes the merged file.
    assert response.headers["cache-control"] == "public, max-age=3600"
    assert int(response.headers["content-length"]) == len(response.content)
    # Stateless: the next request gets the same file, not a second line.
    assert again.text == body
    # HEAD: the GET's headers, no body.
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == response.headers["content-length"]
    assert head.headers["cache-control"] == response.headers["cache-control"]
