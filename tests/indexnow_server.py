"""A real IndexNow endpoint, and a real site serving a key file, on 127.0.0.1.

:class:`IndexNowServer` answers POSTs to ``/indexnow`` as the protocol says an engine
does, from what it receives:

* 400 for a body that is not JSON, a ``Content-Type`` other than
  ``application/json; charset=utf-8``, or fields of the wrong shape;
* 422 for a key that does not match the schema, URLs not on ``host`` (or not under
  the key file's folder), or a ``keyLocation`` on another host;
* 403 when the key file, fetched over HTTP from the site, is missing or does not hold
  the key: sites are reached through ``sites``, which maps a host as URLs name it
  (``www.example.com``) to the loopback origin of a server the test runs (there is no
  TLS here, and no DNS), so the check is a real fetch of a real file;
* 200 (or ``accept_status``) otherwise.

``throttle=N`` answers the first N requests 429 with ``retry_after`` (seconds or an
HTTP date; None sends no header) and ``fail=N`` the next N 503: the answers of a busy
engine. ``scripted`` answers the first requests with given statuses and bodies (None: answer
as usual): for the answers a correct client cannot provoke (it checks URLs and keys
before sending); the checks above are tested with raw requests. Every request is recorded in
:attr:`IndexNowServer.received`.

:class:`SiteServer` serves fixed files (a key file made by ``key_file_body``) and
records the paths asked for.
"""

from __future__ import annotations

import json
import re
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

_KEY = re.compile(r"[a-zA-Z0-9-]{8,128}")
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass(frozen=True)
class Received:
    """One request the endpoint received, and its answer."""

    method: str
    path: str
    content_type: str | None
    body: bytes
    payload: Any
    status: int


@dataclass
class _Config:
    sites: Mapping[str, str]
    throttle: int
    retry_after: str | None
    fail: int
    accept_status: int
    scripted: list[tuple[int, str] | None]
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _serve(handler: type[BaseHTTPRequestHandler]) -> tuple[ThreadingHTTPServer, threading.Thread]:
    # Port 0: the kernel picks a free port, so parallel runs never collide.
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    # A short poll: shutdown() waits for it, and tests start and stop many servers.
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    return server, thread


class IndexNowServer:
    """The endpoint: start with ``with IndexNowServer(...) as server``; POST to
    :attr:`endpoint`."""

    def __init__(
        self,
        *,
        sites: Mapping[str, str] | None = None,
        throttle: int = 0,
        retry_after: str | None = "1",
        fail: int = 0,
        accept_status: int = 200,
        scripted: Sequence[tuple[int, str] | None] = (),
    ) -> None:
        self._config = _Config(
            dict(sites or {}), throttle, retry_after, fail, accept_status, list(scripted)
        )
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def received(self) -> list[Received]:
        """Every request so far, in order."""
        with self._config.lock:
            return list(self._config.received)

    @property
    def posts(self) -> list[Received]:
        """The requests that reached the protocol's checks (POST /indexnow)."""
        return [r for r in self.received if r.method == "POST" and r.path == "/indexnow"]

    @property
    def endpoint(self) -> str:
        """``http://127.0.0.1:<port>/indexnow``."""
        assert self._server is not None, "not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/indexnow"

    def __enter__(self) -> IndexNowServer:
        self._server, self._thread = _serve(_endpoint_handler(self._config))
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def _endpoint_handler(config: _Config) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the records are the log; stderr noise would hide test output

        def do_GET(self) -> None:
            self._finish(b"", None, 405, "use POST")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            status, text, payload, headers = self._decide(body)
            self._finish(body, payload, status, text, headers)

        def _decide(self, body: bytes) -> tuple[int, str, Any, dict[str, str]]:
            if self.path != "/indexnow":
                return 404, "no such endpoint", None, {}
            with config.lock:
                answer = config.scripted.pop(0) if config.scripted else None
                if answer is not None:
                    return answer[0], answer[1], _loads(body), {}
                if config.throttle > 0:
                    config.throttle -= 1
                    after = (
                        {} if config.retry_after is None else {"Retry-After": config.retry_after}
                    )
                    return 429, "Too Many Requests", _loads(body), after
                if config.fail > 0:
                    config.fail -= 1
                    return 503, "Service Unavailable", _loads(body), {}
            content_type = self.headers.get("Content-Type", "")
            if content_type.replace(" ", "").lower() != "application/json;charset=utf-8":
                return 400, f"Content-Type {content_type!r} is not JSON in UTF-8", None, {}
            try:
                payload = json.loads(body.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as exc:
                return 400, f"invalid JSON: {exc}", None, {}
            status, text = _check(payload, config.sites)
            if status == 200:
                status = config.accept_status
            return status, text, payload, {}

        def _finish(
            self,
            body: bytes,
            payload: Any,
            status: int,
            text: str,
            headers: Mapping[str, str] | None = None,
        ) -> None:
            record = Received(
                self.command, self.path, self.headers.get("Content-Type"), body, payload, status
            )
            with config.lock:
                config.received.append(record)
            data = text.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _loads(body: bytes) -> Any:
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None


def _check(payload: Any, sites: Mapping[str, str]) -> tuple[int, str]:
    """The protocol's checks of a decoded body: (status, response text)."""
    if not isinstance(payload, dict):
        return 400, "the body is not a JSON object"
    host, key, urls = payload.get("host"), payload.get("key"), payload.get("urlList")
    location = payload.get("keyLocation")
    if not isinstance(host, str) or not isinstance(key, str):
        return 400, "host and key must be strings"
    if not isinstance(urls, list) or not urls or not all(isinstance(u, str) for u in urls):
        return 400, "urlList must be a non-empty list of strings"
    if len(urls) > 10_000:
        return 400, f"urlList holds {len(urls)} URLs; at most 10000"
    if location is not None and not isinstance(location, str):
        return 400, "keyLocation must be a string"
    if not _KEY.fullmatch(key):
        return 422, "the key does not match the schema"
    if location is None:
        location = f"https://{host}/{key}.txt"
    if urlsplit(location).netloc != host:
        return 422, f"keyLocation {location} is not on {host}"
    folder = location[: location.rindex("/") + 1].partition("://")[2]
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or parts.netloc != host:
            return 422, f"URL {url} does not belong to {host}"
        if not url.partition("://")[2].startswith(folder):
            return 422, f"URL {url} is not under the key file's folder"
    served = _fetch(location, sites)
    if served is None:
        return 403, f"key file not found at {location}"
    if served.strip() != key:
        return 403, f"key file at {location} does not hold the key"
    return 200, "OK"


def _fetch(location: str, sites: Mapping[str, str]) -> str | None:
    """The body of the key file at ``location``, fetched from the site's loopback
    origin; None if it cannot be found (unknown host, an error status)."""
    parts = urlsplit(location)
    origin = sites.get(parts.netloc)
    if origin is None:
        return None
    target = origin + parts.path + (f"?{parts.query}" if parts.query else "")
    try:
        with _NO_PROXY.open(target, timeout=5) as response:
            data: bytes = response.read(1024)
    except (urllib.error.URLError, OSError):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


class SiteServer:
    """A site serving fixed files (path -> body, as ``text/plain; charset=utf-8``);
    404 for anything else. :attr:`requested` lists the paths asked for."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.files = dict(files)
        self.requested: list[str] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:<port>``."""
        assert self._server is not None, "not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> SiteServer:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                site.requested.append(self.path)
                body = site.files.get(self.path)
                self.send_response(404 if body is None else 200)
                data = b"not found" if body is None else body
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server, self._thread = _serve(Handler)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


@contextmanager
def site_and_endpoint(
    host: str, files: Mapping[str, bytes], **options: Any
) -> Iterator[tuple[SiteServer, IndexNowServer]]:
    """A site for ``host`` serving ``files``, and an endpoint that fetches key files
    from it (``options`` go to :class:`IndexNowServer`)."""
    with SiteServer(files) as site, IndexNowServer(sites={host: site.origin}, **options) as end:
        yield site, end
