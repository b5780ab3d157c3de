"""Issue 22: a page answered from the cache reaches the server in slices.

A cached page is one bytes object of megabytes. Handed to the server in one message,
it went whole into the connection's write buffer, so each slow reader of a cached page
held all of it that its reader had not taken (200 readers: 63 MiB of unsent bytes, and
the process 43 MiB over its start after two crowds). In slices, the server's flow
control waits for the reader before taking the next one, as for a streamed page.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from asgi_sitemap import SitemapMiddleware
from sitemap_core import Entry
from sitemap_core.limits import CHUNK_BYTES
from tests.asgi_scope import get_scope

BASE = "http://localhost"


class Posts:
    """A sliceable with a fingerprint: its pages go to the page cache."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.slices = 0

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, window: slice) -> Iterator[Entry]:
        self.slices += 1
        for i in range(window.start, min(window.stop, self.count)):
            yield Entry(f"{BASE}/posts/{i}", lastmod="2024-05-01T10:00:00+00:00")

    def fingerprint(self) -> int:
        return 1


async def app_404(scope: Any, receive: Any, send: Any) -> None:
    raise AssertionError("only sitemap paths are asked")


async def ask(app: SitemapMiddleware, path: str, coding: str) -> tuple[int, list[bytes]]:
    """GET ``path``; its status and the body messages' bodies, as the server got them."""
    bodies: list[bytes] = []
    status = 0

    async def receive() -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError  # pragma: no cover

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        else:
            bodies.append(bytes(message.get("body", b"")))

    await app(get_scope(path, (b"accept-encoding", coding.encode())), receive, send)
    return status, bodies


@pytest.mark.parametrize("coding", ["identity", "gzip"])
def test_a_cached_page_is_sent_in_slices_of_the_chunk_size(coding: str) -> None:
    async def main() -> None:
        posts = Posts(12_000)
        app = SitemapMiddleware(app_404, {"posts": posts}, base_url=BASE, page_size=10_000)
        first = await ask(app, "/sitemap-posts-1.xml", coding)
        rendered = posts.slices
        status, bodies = await ask(app, "/sitemap-posts-1.xml", coding)
        assert posts.slices == rendered  # the second came from the cache
        assert status == first[0] == 200
        body = b"".join(bodies)
        assert body == b"".join(first[1])
        text = gzip.decompress(body) if coding == "gzip" else body
        assert text.count(b"<url>") == 10_000
        # Every message but the last a full slice, none larger (the identity page is
        # some 900 KB: 28 slices; its gzip coding some 28 KB: one).
        assert len(bodies) == -(-len(body) // CHUNK_BYTES)
        assert all(len(b) == CHUNK_BYTES for b in bodies[:-1])
        assert 0 < len(bodies[-1]) <= CHUNK_BYTES
        assert coding == "gzip" or len(bodies) > 2

    anyio.run(main)


def test_a_small_cached_page_is_one_message() -> None:
    async def main() -> None:
        app = SitemapMiddleware(app_404, {"posts": Posts(3)}, base_url=BASE)
        await ask(app, "/sitemap.xml", "identity")  # rendered, and cached
        status, bodies = await ask(app, "/sitemap.xml", "identity")
        assert status == 200 and len(bodies) == 1 and bodies[0].count(b"<url>") == 3

    anyio.run(main)
