"""HTTP caching through every front: validators, conditional requests, gzip, the page
cache and Cache-Control. Run once per front registered in ``conftest.FRONTS``.

Sources are recording fakes of a database table: :class:`Table` (no fingerprint: its
documents are spooled) and :class:`FactTable` (``fingerprint`` and ``newest``: its
documents stream and are cached). ``slices`` counts the reads of entries, so a test can
prove that a 304, a HEAD, an index or a cached page read none.
"""

from __future__ import annotations

import gzip
import hashlib
import inspect
import json
import logging
import os
import re
import socket
import subprocess
import sys
import zlib
from collections.abc import Callable, Iterator, Mapping
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from lxml import etree
from redis_server import redis_server
from xsd import SITEMAP_NS, validate

from sitemap_core import Entry, MemoryCache, RedisCache
from sitemap_core.serve.site import DEFAULT_CACHE_CONTROL

from .conftest import BASE, FRONTS, Front

MakeClient = Callable[..., httpx.Client]

NS = {"sm": SITEMAP_NS}
IDENTITY = {"accept-encoding": "identity"}
GZIP = {"accept-encoding": "gzip"}
#: Strong for identity documents; weak (gzip bytes may differ between zlib builds) and
#: "-gz" for gzipped ones.
STRONG_ETAG = re.compile(r'"[A-Za-z0-9_-]{24}"')
GZIP_ETAG = re.compile(r'W/"[A-Za-z0-9_-]{24}-gz"')
IMF_FIXDATE = re.compile(
    r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-3][0-9] "
    r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{4} "
    r"[0-2][0-9]:[0-5][0-9]:[0-6][0-9] GMT"
)
DAY0 = date(2024, 1, 1)


def lastmod_of(i: int) -> date:
    """Row ``i`` was last modified on DAY0 + i days: later rows are newer."""
    return DAY0 + timedelta(days=i)


# -- fakes -------------------------------------------------------------------------------


class Table:
    """A sized sliceable of ``n`` rows under ``BASE/<section>/``, recording reads.

    ``slices`` counts ``__getitem__`` calls, ``pulled`` the rows handed out; the row at
    ``fail_at`` raises. No fingerprint: documents of it are rendered to a spool first.
    """

    def __init__(self, n: int, section: str = "item", origin: str = BASE) -> None:
        self.n = n
        self.section = section
        self.origin = origin
        self.slices = 0
        self.pulled = 0
        self.fail_at: int | None = None

    def url(self, i: int) -> str:
        return f"{self.origin}/{self.section}/{i}"

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: slice) -> Iterator[Entry]:
        self.slices += 1
        start, stop, _ = index.indices(self.n)
        return self._rows(start, stop)

    def _rows(self, start: int, stop: int) -> Iterator[Entry]:
        for i in range(start, stop):
            if i == self.fail_at:
                raise RuntimeError(f"database went away at row {i}")
            self.pulled += 1
            yield Entry(self.url(i), lastmod=lastmod_of(i))


class FactTable(Table):
    """A :class:`Table` with cheap facts: ``(section, version, n)`` and the newest row."""

    def __init__(self, n: int, section: str = "item", origin: str = BASE) -> None:
        super().__init__(n, section, origin)
        self.version = 1

    def fingerprint(self, start: int, stop: int) -> tuple[str, int, int]:
        return (self.section, self.version, self.n)

    def newest(self, start: int, stop: int) -> date:
        return lastmod_of(stop - 1)


class BadFingerprint(Table):
    def fingerprint(self) -> dict[str, int]:
        return {"rows": self.n}


# -- helpers -------------------------------------------------------------------------------


def raw(
    client: httpx.Client, path: str, method: str = "GET", headers: Mapping[str, str] = IDENTITY
) -> tuple[httpx.Response, bytes]:
    """A response and its body exactly as sent (not decoded by httpx)."""
    with client.stream(method, path, headers=dict(headers)) as response:
        body = b"".join(response.iter_raw())
    return response, body


def headers_of(response: httpx.Response, *drop: str) -> list[tuple[str, str]]:
    """The headers to compare between two responses (Date always differs)."""
    dropped = {"date", *drop}
    return sorted((k.lower(), v) for k, v in response.headers.multi_items() if k not in dropped)


def with_request_headers(app: Any, headers: Mapping[str, str]) -> Any:
    """``app`` seeing ``headers`` in every request (for ``front.raw_body``)."""
    if inspect.iscoroutinefunction(type(app).__call__):
        extra = [(k.lower().encode(), v.encode()) for k, v in headers.items()]

        async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
            await app({**scope, "headers": [*scope["headers"], *extra]}, receive, send)

        return asgi
    environ_extra = {"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()}

    def wsgi(environ: dict[str, Any], start_response: Any) -> Any:
        return app({**environ, **environ_extra}, start_response)

    return wsgi


def child_lastmods(index: bytes) -> list[tuple[str | None, str | None]]:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    root = etree.fromstring(index, parser)
    return [
        (child.findtext("sm:loc", namespaces=NS), child.findtext("sm:lastmod", namespaces=NS))
        for child in root.iterfind("sm:sitemap", NS)
    ]


def locs(body: bytes) -> list[str]:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    return [str(loc.text) for loc in etree.fromstring(body, parser).iterfind(".//sm:loc", NS)]


# -- validators on every document -----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "last_modified"),
    [
        ("/sitemap.xml", None),  # index: "plain" cannot tell its newest row
        ("/sitemap-facts-2.xml", "Sat, 20 Jan 2024 00:00:00 GMT"),  # newest(10, 20)
        ("/sitemap-facts-3.txt", "Thu, 25 Jan 2024 00:00:00 GMT"),
        ("/sitemap-plain-1.xml", "Sun, 07 Jan 2024 00:00:00 GMT"),  # spooled: from content
        ("/robots.txt", None),
    ],
)
@pytest.mark.parametrize("headers", [IDENTITY, GZIP], ids=["identity", "gzip"])
def test_every_document_carries_validators(
    make_client: MakeClient, path: str, last_modified: str | None, headers: dict[str, str]
) -> None:
    client = make_client({"facts": FactTable(25, "facts"), "plain": Table(7, "plain")}, 10)
    response, _ = raw(client, path, headers=headers)
    assert response.status_code == 200
    etag = response.headers.get("etag")
    pattern = GZIP_ETAG if headers is GZIP and path != "/robots.txt" else STRONG_ETAG
    assert etag is not None and pattern.fullmatch(etag), etag
    assert response.headers.get("last-modified") == last_modified
    if last_modified is not None:
        assert IMF_FIXDATE.fullmatch(last_modified)
    assert raw(client, path, headers=headers)[0].headers["etag"] == etag


@pytest.mark.parametrize("path", ["/sitemap.xml", "/sitemap.txt"])
def test_a_root_document_that_fits_carries_validators(make_client: MakeClient, path: str) -> None:
    # One source without fingerprint: the document is spooled and its Last-Modified is
    # the newest lastmod rendered (plain row 8: 9 January).
    client = make_client({"facts": FactTable(5, "facts"), "plain": Table(9, "plain")})
    response = client.get(path, headers=IDENTITY)
    assert response.status_code == 200
    assert STRONG_ETAG.fullmatch(response.headers["etag"])
    assert response.headers["last-modified"] == "Tue, 09 Jan 2024 00:00:00 GMT"
    assert response.headers["content-length"] == str(len(response.content))
    # Fingerprints only: from newest(0, 5), nothing rendered.
    table = FactTable(5, "facts")
    facts_only = make_client({"facts": table})
    response = facts_only.head(path, headers=IDENTITY)
    assert response.headers["last-modified"] == "Fri, 05 Jan 2024 00:00:00 GMT"
    assert STRONG_ETAG.fullmatch(response.headers["etag"])
    assert table.slices == 0


def test_the_index_reads_no_entry_and_its_lastmods_come_from_newest(
    make_client: MakeClient,
) -> None:
    posts, pages = FactTable(25, "posts"), FactTable(12, "pages")
    client = make_client({"posts": posts, "pages": pages}, 10)
    for headers in (IDENTITY, GZIP):
        response = client.get("/sitemap.xml", headers=headers)
        assert response.status_code == 200
        validate(response.content)
        assert child_lastmods(response.content) == [
            (f"{BASE}/sitemap-posts-1.xml", "2024-01-10"),
            (f"{BASE}/sitemap-posts-2.xml", "2024-01-20"),
            (f"{BASE}/sitemap-posts-3.xml", "2024-01-25"),
            (f"{BASE}/sitemap-pages-1.xml", "2024-01-10"),
            (f"{BASE}/sitemap-pages-2.xml", "2024-01-12"),
        ]
        assert response.headers["last-modified"] == "Thu, 25 Jan 2024 00:00:00 GMT"
    assert posts.slices == pages.slices == 0


@pytest.mark.parametrize(
    ("path", "page_size"),
    [
        ("/sitemap-facts-2.xml", 10),
        ("/sitemap-facts-1.txt", 10),
        ("/sitemap.xml", 10),
        ("/sitemap.xml", 100),
    ],
)
def test_with_a_fingerprint_head_and_304_read_no_entry(
    make_client: MakeClient, path: str, page_size: int
) -> None:
    table = FactTable(25, "facts")
    client = make_client({"facts": table}, page_size)
    for headers in (IDENTITY, GZIP):
        head = client.head(path, headers=headers)
        assert head.status_code == 200 and head.content == b""
        etag, last_modified = head.headers["etag"], head.headers["last-modified"]
        for condition in ({"if-none-match": etag}, {"if-modified-since": last_modified}):
            for method in ("GET", "HEAD"):
                response = client.request(method, path, headers={**headers, **condition})
                assert response.status_code == 304, (method, condition)
                assert response.content == b""
    assert table.slices == 0 and table.pulled == 0


def test_the_etag_changes_with_the_fingerprint(make_client: MakeClient) -> None:
    table = FactTable(25, "facts")
    client = make_client({"facts": table}, 10, cache=False)
    before = client.head("/sitemap-facts-1.xml", headers=IDENTITY).headers["etag"]
    assert client.head("/sitemap-facts-1.xml", headers=IDENTITY).headers["etag"] == before
    table.version = 2
    after = client.get("/sitemap-facts-1.xml", headers={**IDENTITY, "if-none-match": before})
    assert after.status_code == 200
    assert after.headers["etag"] != before


def test_etags_differ_between_hosts(make_client: MakeClient) -> None:
    client = make_client(
        {"facts": FactTable(25, "facts"), "plain": Table(7, "plain")},
        10,
        allowed_hosts=["a.example", "b.example"],
        same_host_only=False,
    )
    for path in ("/sitemap.xml", "/sitemap-facts-1.xml", "/sitemap-plain-1.xml", "/robots.txt"):
        a = client.get(path, headers={**IDENTITY, "Host": "a.example"})
        b = client.get(path, headers={**IDENTITY, "Host": "b.example"})
        assert a.status_code == b.status_code == 200
        assert a.headers["etag"] != b.headers["etag"], path
        # The other host's tag is no match.
        cond = {**IDENTITY, "Host": "b.example", "If-None-Match": a.headers["etag"]}
        assert client.get(path, headers=cond).status_code == 200


def test_etags_differ_between_configured_base_urls(make_client: MakeClient) -> None:
    tags = []
    for base_url in ("https://a.example", "https://b.example", "https://a.example/shop"):
        client = make_client(
            {"plain": Table(5, "plain", "https://a.example")},
            base_url=base_url,
            same_host_only=False,
        )
        tags.append(client.get("/sitemap.xml", headers=IDENTITY).headers["etag"])
    assert len(set(tags)) == 3


def test_a_fingerprint_of_an_unsupported_type_is_a_500(
    make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    client = make_client({"bad": BadFingerprint(5, "bad")})
    response = client.get("/sitemap.xml", headers=IDENTITY)
    assert response.status_code == 500
    assert b"/bad/" not in response.content
    assert any(
        r.levelno >= logging.ERROR and r.exc_info and "fingerprint" in str(r.exc_info[1])
        for r in caplog.records
    )


def front_etags() -> dict[str, dict[str, str]]:
    """Per front: the ETags and body digests of a fixed site, from fresh apps.

    Run here and in a fresh process: the values must agree, and agree between fronts.
    """
    out: dict[str, dict[str, str]] = {}
    for name, front in FRONTS.items():
        sources = {"facts": FactTable(25, "facts"), "plain": Table(7, "plain")}
        client = front.client(front.build_app(sources, 10))
        try:
            values: dict[str, str] = {}
            for path in (
                "/sitemap.xml",
                "/sitemap-facts-2.xml",
                "/sitemap-plain-1.txt",
                "/robots.txt",
            ):
                for coding, headers in (("identity", IDENTITY), ("gzip", GZIP)):
                    response, body = raw(client, path, headers=headers)
                    values[f"{path} {coding}"] = response.headers["etag"]
                    values[f"{path} {coding} body"] = hashlib.sha256(body).hexdigest()
        finally:
            client.close()
        out[name] = values
    return out


def test_every_front_gives_the_same_etags_and_bytes() -> None:
    etags = front_etags()
    first, *others = etags.values()
    assert all(other == first for other in others), etags
    assert len(set(first.values())) == len(first) - 2  # robots identity == gzip (never gzipped)


def test_etags_are_the_same_in_a_fresh_process() -> None:
    tests_dir = Path(__file__).resolve().parents[1]
    code = (
        "import json\n"
        "from fronts.test_caching import front_etags\n"
        "print(json.dumps(front_etags()))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "977", "PYTHONPATH": str(tests_dir)}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tests_dir.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == front_etags()


# -- conditional requests ------------------------------------------------------------------


def if_none_match_forms(etag: str) -> dict[str, str]:
    return {
        "exact": etag,
        "weak": f"W/{etag}",
        "list": f'"nope", {etag}',
        "list-spaces": f'  W/"nope"  ,   {etag}  ',
        "comma-in-quotes": f'"a,b", "c, {etag[1:-1]}", {etag}',
        "star": "*",
    }


@pytest.mark.parametrize("form", list(if_none_match_forms('"x"')))
@pytest.mark.parametrize("path", ["/sitemap-facts-1.xml", "/sitemap-plain-1.xml", "/sitemap.xml"])
def test_if_none_match_forms_get_304(make_client: MakeClient, form: str, path: str) -> None:
    client = make_client({"facts": FactTable(25, "facts"), "plain": Table(7, "plain")}, 10)
    etag = client.head(path, headers=IDENTITY).headers["etag"]
    header = if_none_match_forms(etag)[form]
    response = client.get(path, headers={**IDENTITY, "If-None-Match": header})
    assert response.status_code == 304, header
    assert response.content == b""


@pytest.mark.parametrize(
    "header", ['"nope"', 'W/"nope", "other"', '"a,b"'], ids=["other", "list", "comma"]
)
def test_if_none_match_without_a_match_gets_the_document(
    make_client: MakeClient, header: str
) -> None:
    client = make_client({"facts": FactTable(25, "facts")}, 10)
    response = client.get("/sitemap-facts-1.xml", headers={**IDENTITY, "If-None-Match": header})
    assert response.status_code == 200
    assert len(locs(response.content)) == 10


def test_an_etag_of_the_other_coding_does_not_match(make_client: MakeClient) -> None:
    client = make_client({"facts": FactTable(25, "facts")}, 10)
    gzip_tag = client.head("/sitemap-facts-1.xml", headers=GZIP).headers["etag"]
    response = client.get("/sitemap-facts-1.xml", headers={**IDENTITY, "If-None-Match": gzip_tag})
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("since", "status"),
    [
        ("Sat, 20 Jan 2024 00:00:00 GMT", 304),  # equal
        ("Sat, 20 Jan 2024 00:00:01 GMT", 304),  # later
        ("Sat, 20 Jan 2024 02:00:00 +0200", 304),  # the same instant
        ("Fri, 19 Jan 2024 23:59:59 GMT", 200),  # earlier
        ("not a date", 200),  # invalid: ignored
    ],
)
@pytest.mark.parametrize("kind", ["fingerprinted", "spooled"])
def test_if_modified_since(make_client: MakeClient, since: str, status: int, kind: str) -> None:
    table = FactTable(20, "t") if kind == "fingerprinted" else Table(20, "t")
    client = make_client({"t": table})
    ok = client.get("/sitemap-t-1.xml", headers=IDENTITY)
    assert ok.headers["last-modified"] == "Sat, 20 Jan 2024 00:00:00 GMT"
    response = client.get("/sitemap-t-1.xml", headers={**IDENTITY, "If-Modified-Since": since})
    assert response.status_code == status
    assert (response.content == b"") is (status == 304)


def test_if_none_match_takes_precedence_over_if_modified_since(make_client: MakeClient) -> None:
    client = make_client({"facts": FactTable(25, "facts")}, 10)
    etag = client.head("/sitemap-facts-1.xml", headers=IDENTITY).headers["etag"]
    later, earlier = "Mon, 01 Jan 2035 00:00:00 GMT", "Mon, 01 Jan 2001 00:00:00 GMT"
    mismatch = {**IDENTITY, "If-None-Match": '"other"', "If-Modified-Since": later}
    assert client.get("/sitemap-facts-1.xml", headers=mismatch).status_code == 200
    match = {**IDENTITY, "If-None-Match": etag, "If-Modified-Since": earlier}
    assert client.get("/sitemap-facts-1.xml", headers=match).status_code == 304


@pytest.mark.parametrize("path", ["/sitemap-facts-1.xml", "/sitemap-plain-1.xml", "/sitemap.xml"])
@pytest.mark.parametrize("headers", [IDENTITY, GZIP], ids=["identity", "gzip"])
def test_a_304_has_etag_cache_control_and_vary_and_no_body(
    make_client: MakeClient, path: str, headers: dict[str, str]
) -> None:
    client = make_client(
        {"facts": FactTable(25, "facts"), "plain": Table(7, "plain")},
        10,
        cache_control="max-age=60",
    )
    ok, _ = raw(client, path, headers=headers)
    response, body = raw(client, path, headers={**headers, "If-None-Match": ok.headers["etag"]})
    assert response.status_code == 304
    assert body == b""
    assert response.headers["etag"] == ok.headers["etag"]
    assert response.headers["cache-control"] == "max-age=60"
    assert response.headers["vary"] == "Accept-Encoding"
    # A Content-Length on a 304 may only be the 200's.
    assert response.headers.get("content-length") in (None, ok.headers.get("content-length"))
    assert "content-encoding" not in response.headers or headers is GZIP


@pytest.mark.parametrize("path", ["/sitemap-facts-1.xml", "/sitemap-plain-1.xml", "/sitemap.xml"])
def test_a_304_has_the_validators(front: Front, make_client: MakeClient, path: str) -> None:
    sources: dict[str, Table] = {"facts": FactTable(25, "facts")}
    if path != "/sitemap.xml":  # an index child without lastmod would leave it unknown
        sources["plain"] = Table(7, "plain")
    client = make_client(sources, 10)
    ok = client.get(path, headers=IDENTITY)
    response = client.get(path, headers={**IDENTITY, "If-None-Match": ok.headers["etag"]})
    assert response.status_code == 304
    assert response.headers["etag"] == ok.headers["etag"]
    # The same on every front: RFC 9110 15.4.5 asks a 304 with an ETag for no other
    # representation metadata (and Werkzeug strips Last-Modified from a 304 anyway).
    assert ok.headers["last-modified"]
    assert "last-modified" not in response.headers


@pytest.mark.parametrize("path", ["/sitemap-facts-1.xml", "/sitemap.xml", "/sitemap-facts-2.txt"])
@pytest.mark.parametrize("headers", [IDENTITY, GZIP], ids=["identity", "gzip"])
def test_head_of_a_fingerprinted_document_has_the_get_headers(
    make_client: MakeClient, path: str, headers: dict[str, str]
) -> None:
    table = FactTable(25, "facts")
    client = make_client({"facts": table}, 10, cache=False)
    head = client.head(path, headers=headers)
    assert table.slices == 0
    get, _ = raw(client, path, headers=headers)
    assert head.status_code == get.status_code == 200
    assert head.content == b""
    # Streamed: the length is not known in advance, for GET as for HEAD.
    assert headers_of(head) == headers_of(get)


@pytest.mark.parametrize("path", ["/sitemap-plain-1.xml", "/sitemap-plain-2.txt"])
@pytest.mark.parametrize("headers", [IDENTITY, GZIP], ids=["identity", "gzip"])
def test_head_of_a_spooled_document_has_the_get_headers_and_length(
    make_client: MakeClient, path: str, headers: dict[str, str]
) -> None:
    client = make_client({"plain": Table(25, "plain")}, 10)
    get, body = raw(client, path, headers=headers)
    head = client.head(path, headers=headers)
    assert head.content == b""
    assert headers_of(head) == headers_of(get)
    assert get.headers["content-length"] == str(len(body))


@pytest.mark.parametrize(
    "own", [None, b"User-agent: *\nDisallow: /private\n"], ids=["ours", "apps"]
)
def test_robots_txt_answers_if_none_match(make_client: MakeClient, own: bytes | None) -> None:
    client = make_client({"facts": FactTable(5, "facts")}, app_robots=own)
    ok = client.get("/robots.txt")
    etag = ok.headers["etag"]
    assert STRONG_ETAG.fullmatch(etag)
    for method in ("GET", "HEAD"):
        response = client.request(method, "/robots.txt", headers={"If-None-Match": etag})
        assert response.status_code == 304 and response.content == b""
        assert response.headers["etag"] == etag
        assert response.headers["cache-control"] == DEFAULT_CACHE_CONTROL
    for header in (f"W/{etag}", f'"x", {etag}', "*"):
        assert client.get("/robots.txt", headers={"If-None-Match": header}).status_code == 304
    other = client.get("/robots.txt", headers={"If-None-Match": '"other"'})
    assert other.status_code == 200 and other.content == ok.content


def test_an_if_none_match_list_over_two_header_lines(make_client: MakeClient) -> None:
    client = make_client({"facts": FactTable(25, "facts")}, 10)
    etag = client.head("/sitemap-facts-1.xml", headers=IDENTITY).headers["etag"]
    lines = [("accept-encoding", "identity"), ("if-none-match", '"other"'), ("if-none-match", etag)]
    assert client.get("/sitemap-facts-1.xml", headers=lines).status_code == 304


# -- compression -----------------------------------------------------------------------------


NEGOTIABLE = [
    "/sitemap.xml",
    "/sitemap-facts-2.xml",
    "/sitemap-plain-1.txt",
    "/sitemap-facts-3.txt",
]


@pytest.mark.parametrize("path", NEGOTIABLE)
def test_gzip_is_negotiated_and_decompresses_to_the_identity_body(
    make_client: MakeClient, path: str
) -> None:
    client = make_client({"facts": FactTable(25, "facts"), "plain": Table(7, "plain")}, 10)
    plain, plain_body = raw(client, path, headers=IDENTITY)
    gzipped, gzip_body = raw(client, path, headers=GZIP)
    assert plain.status_code == gzipped.status_code == 200
    assert "content-encoding" not in plain.headers
    assert gzipped.headers["content-encoding"] == "gzip"
    assert plain.headers["vary"] == gzipped.headers["vary"] == "Accept-Encoding"
    assert plain.headers["content-type"] == gzipped.headers["content-type"]
    assert gzip.decompress(gzip_body) == plain_body
    if path.endswith(".xml"):
        validate(plain_body)


@pytest.mark.parametrize(
    "accept", ["gzip", "GZIP", "x-gzip", "gzip;q=0.5, identity;q=0.1", "identity;q=0, gzip", "*"]
)
def test_clients_that_accept_gzip_get_it(make_client: MakeClient, accept: str) -> None:
    client = make_client({"facts": FactTable(25, "facts")}, 10)
    response, body = raw(client, "/sitemap-facts-1.xml", headers={"accept-encoding": accept})
    assert response.headers.get("content-encoding") == "gzip"
    assert len(locs(gzip.decompress(body))) == 10


@pytest.mark.parametrize(
    "accept", ["identity", "gzip;q=0", "gzip;q=0.5, identity;q=1", "*;q=0", "br", "gzip;q=junk"]
)
def test_clients_that_do_not_accept_gzip_get_identity(make_client: MakeClient, accept: str) -> None:
    client = make_client({"facts": FactTable(25, "facts")}, 10)
    response, body = raw(client, "/sitemap-facts-1.xml", headers={"accept-encoding": accept})
    assert "content-encoding" not in response.headers
    assert response.headers["vary"] == "Accept-Encoding"
    assert len(locs(body)) == 10


def test_gzip_output_is_deterministic(make_client: MakeClient) -> None:
    bodies = set()
    for _ in range(2):  # fresh apps: nothing cached, rendered twice
        client = make_client({"facts": FactTable(25, "facts"), "plain": Table(7, "plain")}, 10)
        for path in ("/sitemap-facts-1.xml", "/sitemap-plain-1.xml", "/sitemap.xml"):
            response, body = raw(client, path, headers=GZIP)
            assert response.headers["content-encoding"] == "gzip"
            bodies.add((path, body))
    assert len(bodies) == 3


def test_a_gzipped_page_streams(make_app: Any, front: Front) -> None:
    # A full page: a worker thread reads up to ~2 hand-overs (of 2,048) ahead.
    total = 50_000
    table = FactTable(total, "big")
    app = with_request_headers(make_app({"big": table}), GZIP)
    started = front.raw_body(app, "/sitemap.xml")
    assert started.status == 200
    assert ("content-encoding", "gzip") in [(k.lower(), v) for k, v in started.headers]
    first = next(started.chunks)
    # The first compressed chunk was sent when a small part of the table was read.
    assert table.pulled < total // 5, table.pulled
    decoder = zlib.decompressobj(31)
    assert decoder.decompress(first).startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n<urlset')
    chunks = [first, *started.chunks]
    assert len(chunks) >= 10
    document = gzip.decompress(b"".join(chunks))
    validate(document)
    assert len(locs(document)) == total


@pytest.mark.parametrize(
    ("path", "uncompressed"),
    [
        ("/sitemap.xml.gz", "/sitemap.xml"),
        ("/sitemap-facts-2.xml.gz", "/sitemap-facts-2.xml"),
        ("/sitemap-facts-2.txt.gz", "/sitemap-facts-2.txt"),
        ("/sitemap-plain-1.txt.gz", "/sitemap-plain-1.txt"),
    ],
)
def test_gz_paths_are_gzip_files(make_client: MakeClient, path: str, uncompressed: str) -> None:
    client = make_client({"facts": FactTable(25, "facts"), "plain": Table(7, "plain")}, 10)
    for headers in (IDENTITY, GZIP):
        response, body = raw(client, path, headers=headers)
        assert response.status_code == 200, response.status_code
        assert response.headers["content-type"] == "application/gzip"
        assert "content-encoding" not in response.headers
        assert "vary" not in response.headers
        assert GZIP_ETAG.fullmatch(response.headers["etag"])
        assert response.headers["cache-control"] == DEFAULT_CACHE_CONTROL
        _, document = raw(client, uncompressed, headers=IDENTITY)
        assert gzip.decompress(body) == document


@pytest.mark.parametrize("path", NEGOTIABLE)
def test_gzip_false_never_compresses(make_client: MakeClient, path: str) -> None:
    client = make_client(
        {"facts": FactTable(25, "facts"), "plain": Table(7, "plain")}, 10, gzip=False
    )
    for accept in ("gzip", "identity;q=0, gzip", "*"):
        response, body = raw(client, path, headers={"accept-encoding": accept})
        assert response.status_code == 200
        assert "content-encoding" not in response.headers
        assert "vary" not in response.headers
        assert not body.startswith(b"\x1f\x8b")


# -- Cache-Control -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/sitemap.xml", "/sitemap-facts-1.xml", "/sitemap-plain-1.txt", "/robots.txt"]
)
@pytest.mark.parametrize("setting", [None, "no-cache", "public, max-age=60"])
def test_cache_control_on_200_head_and_304(
    make_client: MakeClient, path: str, setting: str | None
) -> None:
    client = make_client(
        {"facts": FactTable(25, "facts"), "plain": Table(7, "plain")}, 10, cache_control=setting
    )
    # The default: crawlers and CDNs keep a document an hour, then revalidate.
    expected = "public, max-age=3600, s-maxage=3600" if setting is None else setting
    ok = client.get(path, headers=IDENTITY)
    head = client.head(path, headers=IDENTITY)
    not_modified = client.get(path, headers={**IDENTITY, "If-None-Match": ok.headers["etag"]})
    assert (ok.status_code, head.status_code, not_modified.status_code) == (200, 200, 304)
    for response in (ok, head, not_modified):
        assert response.headers.get_list("cache-control") == [expected]


# -- the page cache ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/sitemap-facts-2.xml", "/sitemap.xml"])
def test_a_second_get_is_served_from_the_cache(make_client: MakeClient, path: str) -> None:
    table = FactTable(25, "facts")
    client = make_client({"facts": table}, 10 if path != "/sitemap.xml" else 100)
    first, first_body = raw(client, path)
    assert table.slices == 1
    assert "content-length" not in first.headers  # streamed
    again, again_body = raw(client, path)
    assert table.slices == 1  # not read again
    assert again_body == first_body
    assert again.headers["content-length"] == str(len(first_body))
    assert headers_of(again, "content-length") == headers_of(first)


def test_a_given_memory_cache_is_used(make_client: MakeClient) -> None:
    cache = MemoryCache()
    table = FactTable(25, "facts")
    client = make_client({"facts": table}, 10, cache=cache)
    _, body = raw(client, "/sitemap-facts-1.xml")
    assert cache.size == len(body)
    raw(client, "/sitemap-facts-1.xml")
    assert table.slices == 1


def test_cache_false_renders_every_time(make_client: MakeClient) -> None:
    table = FactTable(25, "facts")
    client = make_client({"facts": table}, 10, cache=False)
    bodies = {raw(client, "/sitemap-facts-1.xml")[1] for _ in range(3)}
    assert table.slices == 3 and len(bodies) == 1


def test_a_cut_transfer_caches_nothing(make_app: Any, front: Front) -> None:
    table = FactTable(5000, "big")
    cache = MemoryCache()
    app = make_app({"big": table}, cache=cache)
    started = front.raw_body(app, "/sitemap.xml")
    assert started.status == 200
    next(started.chunks)
    started.chunks.close()  # type: ignore[attr-defined]  # the client went away
    assert cache.size == 0
    client = front.client(app)
    _, body = raw(client, "/sitemap.xml")
    client.close()
    assert table.slices == 2  # rendered again, not a truncated copy
    assert len(locs(body)) == 5000
    assert cache.size == len(body)


def test_a_failed_transfer_caches_nothing(make_client: MakeClient) -> None:
    table = FactTable(5000, "big")
    table.fail_at = 4000
    client = make_client({"big": table})
    with pytest.raises(Exception):  # noqa: B017 - cut however the front cuts it
        raw(client, "/sitemap.xml")
    table.fail_at = None  # the database is back; the fingerprint is the same
    response, body = raw(client, "/sitemap.xml")
    assert response.status_code == 200
    assert table.slices == 2
    assert len(locs(body)) == 5000


def test_a_changed_fingerprint_serves_fresh_content(make_client: MakeClient) -> None:
    table = FactTable(25, "facts")
    client = make_client({"facts": table}, 10)
    old, _ = raw(client, "/sitemap-facts-1.xml")
    table.section, table.version = "renamed", 2  # the rows changed and the fingerprint too
    new, new_body = raw(client, "/sitemap-facts-1.xml")
    assert table.slices == 2
    assert new.headers["etag"] != old.headers["etag"]
    assert locs(new_body) == [f"{BASE}/renamed/{i}" for i in range(10)]
    assert b"/facts/" not in new_body
    # Cached in its turn.
    assert raw(client, "/sitemap-facts-1.xml")[1] == new_body
    assert table.slices == 2


def test_gzip_and_identity_are_cached_separately(make_client: MakeClient) -> None:
    table = FactTable(25, "facts")
    client = make_client({"facts": table}, 10)
    _, plain_body = raw(client, "/sitemap-facts-1.xml", headers=IDENTITY)
    _, gzip_body = raw(client, "/sitemap-facts-1.xml", headers=GZIP)
    assert table.slices == 2
    plain_hit, plain_hit_body = raw(client, "/sitemap-facts-1.xml", headers=IDENTITY)
    gzip_hit, gzip_hit_body = raw(client, "/sitemap-facts-1.xml", headers=GZIP)
    assert table.slices == 2
    assert plain_hit_body == plain_body and "content-encoding" not in plain_hit.headers
    assert gzip_hit_body == gzip_body and gzip_hit.headers["content-encoding"] == "gzip"
    assert gzip.decompress(gzip_hit_body) == plain_hit_body
    assert gzip_hit.headers["etag"] != plain_hit.headers["etag"]


def test_sources_without_fingerprint_are_spooled_and_never_cached(make_client: MakeClient) -> None:
    urls = [f"{BASE}/plain/{i}" for i in range(7)]
    table = Table(7, "plain")
    client = make_client({"plain": table, "listed": list(urls)}, 10)
    etags = set()
    for number, headers in enumerate((IDENTITY, IDENTITY, GZIP)):
        response, body = raw(client, "/sitemap-plain-1.xml", headers=headers)
        # The first is spooled (its length known); the next stream on the validators
        # it found (sitemap_core.memory.recall).
        length = response.headers.get("content-length")
        assert length == (str(len(body)) if number == 0 else None)
        etags.add(response.headers["etag"])
    assert table.slices == 3  # every GET renders, once
    assert len(etags) == 2  # one per coding, stable
    # The ETag is the content's: another source with the same content has the same.
    plain = raw(client, "/sitemap-plain-1.xml")
    listed = raw(client, "/sitemap-listed-1.xml")
    assert locs(plain[1]) == locs(listed[1]) == urls
    table.n = 6
    assert raw(client, "/sitemap-plain-1.xml")[0].headers["etag"] != plain[0].headers["etag"]


def test_without_fingerprint_a_failure_anywhere_is_a_500_before_any_byte(
    make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    table = Table(3000, "plain")
    table.fail_at = 2999  # the very last row
    client = make_client({"plain": table})
    response, body = raw(client, "/sitemap.xml")
    assert response.status_code == 500
    assert b"<urlset" not in body and b"/plain/" not in body
    assert any(r.levelno >= logging.ERROR for r in caplog.records)


# -- Redis ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as server:
        yield server.url


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    yield client
    client.close()


def test_two_workers_share_pages_through_redis(
    make_client: MakeClient, redis_client: redis.Redis, redis_url: str
) -> None:
    one, two = FactTable(25, "facts"), FactTable(25, "facts")
    first = make_client({"facts": one}, 10, cache=RedisCache(url=redis_url))
    second = make_client({"facts": two}, 10, cache=RedisCache(url=redis_url))
    rendered, rendered_body = raw(first, "/sitemap-facts-2.xml")
    served, served_body = raw(second, "/sitemap-facts-2.xml")
    assert (one.slices, two.slices) == (1, 0)
    assert served_body == rendered_body
    assert served.headers["etag"] == rendered.headers["etag"]
    assert served.headers["content-length"] == str(len(rendered_body))
    assert redis_client.get("sitemap:" + rendered.headers["etag"].strip('"')) == rendered_body


def test_a_redis_url_setting_caches_in_redis(
    make_client: MakeClient, redis_client: redis.Redis, redis_url: str
) -> None:
    one, two = FactTable(25, "facts"), FactTable(25, "facts")
    first = make_client({"facts": one}, 10, cache=redis_url)
    second = make_client({"facts": two}, 10, cache=redis_url)
    rendered, rendered_body = raw(first, "/sitemap-facts-2.xml")
    assert rendered.status_code == 200
    _, served_body = raw(second, "/sitemap-facts-2.xml")
    assert (one.slices, two.slices) == (1, 0)
    assert served_body == rendered_body
    assert redis_client.dbsize() == 1


def test_an_unreachable_redis_costs_no_response(
    make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    table = FactTable(25, "facts")
    client = make_client({"facts": table}, 10, cache=f"redis://127.0.0.1:{port}/0")
    for _ in range(2):
        response, body = raw(client, "/sitemap-facts-2.xml")
        assert response.status_code == 200
        assert locs(body) == [f"{BASE}/facts/{i}" for i in range(10, 20)]
    assert table.slices == 2  # rendered each time: the cache is a miss, not an error
    assert any(r.levelname == "WARNING" and "cache" in r.getMessage() for r in caplog.records)
