"""Issue 11, item 2: over HTTP/1.0 every 200 has its length; a failure is a 500.

HTTP/1.0 has no chunked coding: a body without a Content-Length ends when the
connection closes, so a transfer cut by a failing source would look complete. Such
requests get the document rendered whole first (a spool, memory bounded), sent with
its length and the same validators as over HTTP/1.1.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Iterator

import pytest

from sitemap_core import Entry, Site, UrlSource, respond
from sitemap_core.serve.request import is_sized
from tests.core.helpers import BASE, locs, url


class Pages:
    """A sized sliceable with a fingerprint (so HTTP/1.1 streams it); may fail late."""

    def __init__(self, n: int, fail_at: int | None = None) -> None:
        self.n, self.fail_at = n, fail_at

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, window: slice) -> Iterator[Entry]:
        for i in range(*window.indices(self.n)):
            if i == self.fail_at:
                raise RuntimeError(f"row {i} failed")
            yield Entry(url(i))

    def fingerprint(self) -> str:
        return "v1"


def plain(n: int) -> object:
    def entries() -> Iterator[str]:
        yield from (url(i) for i in range(n))

    return entries


def read(site: Site[UrlSource], path: str, protocol: str, coding: str = "identity") -> tuple:
    reply = respond(site, "GET", path, lambda: BASE, {"accept-encoding": coding}, protocol)
    assert reply is not None
    assert isinstance(reply.body, Iterable)
    return reply, b"".join(reply.body)


@pytest.mark.parametrize(
    ("protocol", "sized"),
    [
        ("HTTP/1.0", True),
        ("1.0", True),
        ("HTTP/0.9", True),
        ("HTTP/1.1", False),
        ("2", False),
        ("1.1", False),
    ],
)
def test_which_protocols_need_a_length(protocol: str, sized: bool) -> None:
    assert is_sized(protocol) is sized


@pytest.mark.parametrize(
    "path", ["/sitemap.xml", "/sitemap.txt", "/sitemap.html", "/sitemap.xml.gz"]
)
@pytest.mark.parametrize("coding", ["identity", "gzip"])
def test_a_streamed_document_has_its_length_and_the_same_etag(path: str, coding: str) -> None:
    site = Site([UrlSource.from_object("pages", Pages(3_000))], page_size=50_000, cache=None)
    streamed, streamed_body = read(site, path, "HTTP/1.1", coding)
    assert streamed.header("Content-Length") is None
    sized, sized_body = read(site, path, "HTTP/1.0", coding)
    assert sized.header("Content-Length") == str(len(sized_body))
    assert sized_body == streamed_body
    assert sized.header("ETag") == streamed.header("ETag")


@pytest.mark.parametrize(
    "path", ["/sitemap.xml", "/sitemap.txt", "/sitemap.html", "/sitemap.xml.gz"]
)
def test_a_late_failure_raises_before_any_byte(path: str, caplog: pytest.LogCaptureFixture) -> None:
    site = Site([UrlSource.from_object("pages", Pages(3_000, fail_at=2_999))], page_size=50_000)
    with pytest.raises(RuntimeError, match="row 2999"):
        respond(site, "GET", path, lambda: BASE, {}, "HTTP/1.0")
    # Nothing was sent: the front answers 500; no transfer was cut, so none is logged.
    assert not [r for r in caplog.records if "mid-response" in r.getMessage()]


def test_a_remembered_document_is_not_streamed_to_http_1_0() -> None:
    site = Site([UrlSource.from_object("feed", plain(3_000))], page_size=50_000)
    _, body = read(site, "/sitemap.xml", "HTTP/1.1")  # spooled, remembered
    again, _ = read(site, "/sitemap.xml", "HTTP/1.1")
    assert again.header("Content-Length") is None  # a remembered document streams...
    old, old_body = read(site, "/sitemap.xml", "HTTP/1.0", "gzip")
    assert old.header("Content-Length") == str(len(old_body))  # ...but not to HTTP/1.0
    assert gzip.decompress(old_body) == body
    assert len(locs(body)) == 3_000
