"""Content coding: choosing gzip, gzipping a stream, ``.gz`` paths, ``gzip=False``."""

from __future__ import annotations

import asyncio
import gzip
import zlib
from collections.abc import AsyncIterator, Generator, Iterable, Iterator, Mapping

import pytest
from xsd import validate

from sitemap_core import respond
from sitemap_core.serve.compress import GzipStream, accepts_gzip, agzip_chunks, gzip_chunks
from tests.core.helpers import BASE, locs, url
from tests.core.serve.test_validators import GZIP, IDENTITY, FactRows, Rows, fetch, site_of

# -- accepts_gzip ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, False),  # no header: some clients cannot gunzip
        ("", False),  # an empty header asks for identity only
        ("gzip", True),
        ("GZIP", True),
        ("Gzip", True),
        ("x-gzip", True),
        ("identity", False),
        ("deflate, br", False),
        ("gzip, deflate, br, zstd", True),
        ("gzip;q=0", False),
        ("gzip; q=0", False),
        ("gzip;Q=0", False),
        ("gzip;q=0.000", False),
        ("gzip;q=1", True),
        ("gzip;q=0.5, identity;q=1", False),  # identity is preferred: it wins
        ("gzip;q=0.5, identity;q=0.5", True),  # a tie: the smaller body
        ("gzip;q=0.9, identity;q=0.8", True),
        ("identity;q=0, gzip", True),
        ("identity;q=0, gzip;q=0.1", True),
        ("*", True),
        ("*;q=0", False),  # nothing acceptable: identity, never an error
        ("*;q=0, identity", False),
        ("*;q=0, gzip", True),
        ("gzip;q=0, *", False),  # the named coding wins over the wildcard
        ("x-gzip;q=0, gzip", True),
        ("deflate, gzip;q=1.0, *;q=0.5", True),
        ("gzip;q=abc", False),  # an unreadable weight is no permission
        ("gzip;q=", False),
        ("gzip;q=0x1", False),
        ("gzip;q=-1", False),
        (" , gzip , ", True),
        ("gzip;level=9", True),  # other parameters are ignored
    ],
)
def test_accepts_gzip(header: str | None, expected: bool) -> None:
    assert accepts_gzip(header) is expected


# -- the gzip stream ---------------------------------------------------------------------

DOCUMENT = b"".join(b"<url><loc>https://example.com/%d</loc></url>\n" % i for i in range(5000))


def chunked(data: bytes, size: int = 32_768) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def gzip_all(chunks: list[bytes]) -> bytes:
    stream = GzipStream()
    return b"".join([*(stream.feed(chunk) for chunk in chunks), stream.close()])


def test_the_gzip_stream_round_trips_and_is_a_gzip_file() -> None:
    data = gzip_all(chunked(DOCUMENT))
    assert gzip.decompress(data) == DOCUMENT
    assert len(data) < len(DOCUMENT) // 4
    # magic, deflate, no flags (no file name), mtime 0: no trace of time or place.
    assert data[:4] == b"\x1f\x8b\x08\x00"
    assert data[4:8] == b"\x00\x00\x00\x00"


def test_the_gzip_stream_is_deterministic() -> None:
    assert gzip_all(chunked(DOCUMENT)) == gzip_all(chunked(DOCUMENT))


def test_each_fed_chunk_can_be_decompressed_at_once() -> None:
    # A sync flush per chunk: what was fed so far is fully decodable from what was
    # produced so far, so a client sees the document as it streams.
    stream = GzipStream()
    decoder = zlib.decompressobj(31)
    seen = b""
    fed = b""
    for chunk in chunked(DOCUMENT, 10_000):
        fed += chunk
        seen += decoder.decompress(stream.feed(chunk))
        assert seen == fed
    seen += decoder.decompress(stream.close())
    assert seen == DOCUMENT and decoder.eof


class Upstream:
    """Chunks handed out one by one, counting pulls and noting whether it was closed."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.pulled = 0
        self.closed = False

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self.chunks:
                self.pulled += 1
                yield chunk
        finally:
            self.closed = True

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            for chunk in self.chunks:
                self.pulled += 1
                await asyncio.sleep(0)
                yield chunk
        finally:
            self.closed = True


def test_gzip_chunks_is_lazy_and_complete() -> None:
    upstream = Upstream(chunked(DOCUMENT))
    out = gzip_chunks(iter(upstream))
    first = next(out)
    assert upstream.pulled == 1 and first
    rest = list(out)
    assert upstream.pulled == len(upstream.chunks)
    assert len(rest) >= len(upstream.chunks) - 1
    assert gzip.decompress(first + b"".join(rest)) == DOCUMENT
    assert upstream.closed


def test_closing_gzip_chunks_closes_the_upstream() -> None:
    upstream = Upstream(chunked(DOCUMENT))
    out = gzip_chunks(iter(upstream))
    assert isinstance(out, Generator)
    next(out)
    out.close()
    assert upstream.closed
    assert upstream.pulled == 1


def test_agzip_chunks_is_lazy_complete_and_closes_the_upstream() -> None:
    async def run() -> None:
        upstream = Upstream(chunked(DOCUMENT))
        out = agzip_chunks(aiter(upstream))
        first = await anext(out)
        assert upstream.pulled == 1
        rest = [chunk async for chunk in out]
        assert gzip.decompress(first + b"".join(rest)) == DOCUMENT
        assert upstream.closed
        assert first + b"".join(rest) == gzip_all(upstream.chunks)

        cut = Upstream(chunked(DOCUMENT))
        partial = agzip_chunks(aiter(cut))
        await anext(partial)
        await partial.aclose()  # type: ignore[attr-defined]
        assert cut.closed and cut.pulled == 1

    asyncio.run(run())


# -- negotiation through respond -------------------------------------------------------------


NEGOTIABLE = [
    ("/sitemap.xml", 10),  # index
    ("/sitemap.xml", 50),  # urlset of everything
    ("/sitemap.txt", 50),
    ("/sitemap-facts-2.xml", 10),  # streamed
    ("/sitemap-plain-1.txt", 10),  # spooled
]


@pytest.mark.parametrize(("path", "page_size"), NEGOTIABLE)
def test_gzip_is_negotiated_and_decompresses_to_the_identity_body(
    path: str, page_size: int
) -> None:
    site = site_of(("facts", FactRows(25)), ("plain", Rows(7, "plain")), page_size=page_size)
    plain = fetch(site, path, headers=IDENTITY)
    gzipped = fetch(site, path, headers=GZIP)
    assert plain.status == gzipped.status == 200
    assert plain.header("Content-Encoding") is None
    assert gzipped.header("Content-Encoding") == "gzip"
    assert plain.header("Content-Type") == gzipped.header("Content-Type")
    assert plain.header("Vary") == gzipped.header("Vary") == "Accept-Encoding"
    assert gzip.decompress(gzipped.body) == plain.body
    # Rendered again: the same bytes, for both codings.
    assert fetch(site, path, headers=GZIP).body == gzipped.body
    assert fetch(site, path, headers=IDENTITY).body == plain.body


def test_without_accept_encoding_the_document_is_not_compressed() -> None:
    site = site_of(("facts", FactRows(25)))
    got = fetch(site, "/sitemap-facts-1.xml", headers={})
    assert got.header("Content-Encoding") is None
    assert got.header("Vary") == "Accept-Encoding"
    validate(got.body)


@pytest.mark.parametrize(
    ("path", "uncompressed"),
    [
        ("/sitemap-facts-2.xml.gz", "/sitemap-facts-2.xml"),
        ("/sitemap-facts-2.txt.gz", "/sitemap-facts-2.txt"),
        ("/sitemap-plain-1.xml.gz", "/sitemap-plain-1.xml"),
        ("/sitemap.xml.gz", "/sitemap.xml"),
    ],
)
@pytest.mark.parametrize("headers", [IDENTITY, GZIP, {}], ids=["identity", "gzip", "none"])
def test_gz_paths_are_gzip_files(path: str, uncompressed: str, headers: Mapping[str, str]) -> None:
    site = site_of(("facts", FactRows(25)), ("plain", Rows(7, "plain")))
    got = fetch(site, path, headers=headers)
    assert got.status == 200
    assert got.header("Content-Type") == "application/gzip"
    assert got.header("Content-Encoding") is None
    assert got.header("Vary") is None  # the file is the same whatever the client accepts
    assert got.header("ETag") is not None
    assert got.header("Cache-Control") is not None
    assert gzip.decompress(got.body) == fetch(site, uncompressed, headers=IDENTITY).body


def test_a_text_root_gz_of_a_site_that_needs_an_index_is_404() -> None:
    site = site_of(("facts", FactRows(25)))
    assert fetch(site, "/sitemap.txt.gz").status == 404


@pytest.mark.parametrize(("path", "page_size"), NEGOTIABLE)
def test_gzip_false_never_compresses(path: str, page_size: int) -> None:
    site = site_of(
        ("facts", FactRows(25)), ("plain", Rows(7, "plain")), page_size=page_size, gzip=False
    )
    for headers in (GZIP, {"accept-encoding": "gzip;q=1, identity;q=0"}, {"accept-encoding": "*"}):
        got = fetch(site, path, headers=headers)
        assert got.status == 200
        assert got.header("Content-Encoding") is None
        assert got.header("Vary") is None  # nothing varies
        assert not got.body.startswith(b"\x1f\x8b")
        assert not str(got.header("ETag")).endswith('-gz"')


def test_robots_txt_is_never_compressed() -> None:
    site = site_of(("facts", FactRows(5)))
    got = fetch(site, "/robots.txt", headers=GZIP)
    assert got.header("Content-Encoding") is None and got.header("Vary") is None
    assert got.body.startswith(b"User-agent")


def test_a_gzipped_page_streams() -> None:
    total = 20_000
    rows = FactRows(total)
    site = site_of(("facts", rows), page_size=total)
    reply = respond(site, "GET", "/sitemap-facts-1.xml", lambda: BASE, dict(GZIP))
    assert reply is not None and reply.status == 200
    assert reply.header("Content-Encoding") == "gzip"
    assert reply.header("Content-Length") is None  # not known before the end
    assert isinstance(reply.body, Iterable)
    chunks = iter(reply.body)
    first = next(chunks)
    # The first compressed chunk left when a small part of the page was read.
    assert rows.pulled < total // 5, rows.pulled
    decoder = zlib.decompressobj(31)
    assert decoder.decompress(first).startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n<urlset')
    rest = list(chunks)
    assert len(rest) >= 10
    body = first + b"".join(rest)
    document = gzip.decompress(body)
    validate(document)
    assert locs(document)[-1] == url(total - 1)
    assert rows.pulled == total
