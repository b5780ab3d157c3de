"""HTTP helpers for the end-to-end tests: bytes as they are on the wire, fresh cache keys.

httpx undoes ``Content-Encoding: gzip`` on ``response.content``; the caching tests need
the bytes the server sent (to compare gzip streams between workers, or a cache hit with
the miss before it), so :func:`get_raw` reads them with ``iter_raw``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

import httpx

#: Ports named in :func:`fresh_host` Host headers; nothing listens there, and nothing
#: needs to: the request still goes to the server under test.
_HOST_PORTS = itertools.count(20_000)


def fresh_host() -> str:
    """A ``Host`` header for the server under test that no request of this session used.

    A document's ETag and cache key include its base URL, which comes from the Host
    header (a loopback name is trusted). A Host never sent before therefore names a
    document that no worker has in its cache yet: the next GET of it is a cache miss,
    whatever other tests fetched from the same long-lived server before. The document's
    URLs then start with ``http://localhost:<that port>``.
    """
    return f"localhost:{next(_HOST_PORTS)}"


@dataclass(frozen=True)
class Raw:
    """A response whose body was read as sent: not gunzipped, not decoded."""

    status: int
    headers: httpx.Headers
    body: bytes
    http_version: str

    @property
    def streamed(self) -> bool:
        """Sent chunked, with no Content-Length: rendered while it was sent."""
        return (
            "content-length" not in self.headers
            and self.headers.get("transfer-encoding") == "chunked"
        )

    @property
    def sized(self) -> bool:
        """Sent with a Content-Length that matches the body (a cache hit, or a spool)."""
        length: str | None = self.headers.get("content-length")
        return length == str(len(self.body))


def request_raw(
    client: httpx.Client,
    method: str,
    url: str,
    headers: Mapping[str, str | None] | None = None,
) -> Raw:
    """Send a request and read the body without decoding it.

    A header given as None is removed from the client's defaults: ``{"Accept-Encoding":
    None}`` sends no Accept-Encoding at all (httpx sends ``gzip, deflate, br`` otherwise).
    """
    request = client.build_request(method, url)
    for name, value in (headers or {}).items():
        if value is None:
            request.headers.pop(name, None)
        else:
            request.headers[name] = value
    response = client.send(request, stream=True)
    try:
        body = b"".join(response.iter_raw())
    finally:
        response.close()
    return Raw(response.status_code, response.headers, body, response.http_version)


def get_raw(client: httpx.Client, url: str, headers: Mapping[str, str | None] | None = None) -> Raw:
    """GET ``url``; see :func:`request_raw`."""
    return request_raw(client, "GET", url, headers)
