"""HTTP caching of every example, against its real server: validators and compression.

* Conditional requests: ``If-None-Match`` (exact, weak ``W/`` form, in a list, ``*``)
  gives a 304 with the 200's validators and caching headers and no body; a tag of
  another representation or of nothing gives the 200. ``If-Modified-Since`` is compared
  with Last-Modified (to the second) only when there is no ``If-None-Match``.
* Content coding: gzip when Accept-Encoding allows it (by name, through ``*``, or as the
  only acceptable coding), identity otherwise; the gzip body is deterministic and
  decompresses to the identity body; each coding has its own ETag; ``.gz`` URLs are
  the gzipped files themselves; both crawlers read them.

The documents are robots.txt (ETag: digest of the bytes), the index (ETag from the
children's locs and lastmods), the routes' page (no fingerprint: rendered first, ETag
from the bytes) and the first item page (ETag from the source's fingerprint, and the
only one with Last-Modified: the routes' entries have no lastmod, so neither has the
index).
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime

import httpx
import pytest
import requests
from scrapy.utils.gz import gunzip
from scrapy.utils.sitemap import Sitemap
from usp.fetch_parse import SitemapFetcher
from usp.web_client.requests_client import RequestsWebClient

from .sites import SITES, ExampleSite, ServedExample, each
from .wire import Raw, get_raw, request_raw

GZIP_TYPE = "application/gzip"
#: What a 304 must repeat from the 200 (RFC 9110 15.4.5): the validator and the headers
#: that steer caches.
REPEATED_ON_304 = ("etag", "cache-control", "vary")


def conditional_documents(site: ExampleSite) -> tuple[str, ...]:
    """One document of each kind of ETag (see the module docstring)."""
    return ("/robots.txt", "/sitemap.xml", "/sitemap-pages-1.xml", site.first_item_page)


def _ok(served: ServedExample, http: httpx.Client, path: str, coding: str) -> Raw:
    response = get_raw(http, served.url(path), {"Accept-Encoding": coding})
    assert response.status == 200, path
    # Identity bodies have strong tags; gzip ones weak tags (zlib builds may differ).
    weak = response.headers.get("content-encoding") == "gzip"
    assert response.headers["etag"].startswith('W/"' if weak else '"'), response.headers
    return response


def _assert_not_modified(response: Raw, ok: Raw, site: ExampleSite) -> None:
    assert response.status == 304, response.headers
    assert response.body == b""
    for name in REPEATED_ON_304:
        assert response.headers.get(name) == ok.headers.get(name), name
    # The same 304 on every server: the ETag, Cache-Control and Vary of the 200, and no
    # other representation metadata (RFC 9110 15.4.5; Werkzeug strips Last-Modified
    # from a 304 anyway, so the middlewares leave it out too).
    assert response.headers["etag"] == ok.headers["etag"]
    assert "last-modified" not in response.headers


# If-None-Match ---------------------------------------------------------------------------


@each(conditional_documents)
@pytest.mark.parametrize("coding", ["identity", "gzip"])
def test_if_none_match_gives_304_for_the_current_tag_in_any_form(
    served: ServedExample, http: httpx.Client, path: str, coding: str
) -> None:
    ok = _ok(served, http, path, coding)
    etag = ok.headers["etag"]
    opaque = etag.removeprefix("W/")
    # Weak comparison: the tag as sent, its weak and its strong spelling all match.
    forms = [etag, f"W/{opaque}", opaque, f'"elsewhere", {etag}', f'W/"old",{etag} , "new"', "*"]
    for method in ("GET", "HEAD"):
        for form in forms:
            response = request_raw(
                http,
                method,
                served.url(path),
                {"Accept-Encoding": coding, "If-None-Match": form},
            )
            _assert_not_modified(response, ok, served.site)


@each(conditional_documents)
@pytest.mark.parametrize("coding", ["identity", "gzip"])
def test_if_none_match_gives_200_for_any_other_tag(
    served: ServedExample, http: httpx.Client, path: str, coding: str
) -> None:
    ok = _ok(served, http, path, coding)
    etag = ok.headers["etag"]
    other = "gzip" if coding == "identity" else "identity"
    other_etag = _ok(served, http, path, other).headers["etag"]
    wrong = [
        '"nope"',
        'W/"nope", "also-nope"',
        etag[:-2] + '"',  # the tag less its last character
        etag.upper() if etag != etag.upper() else etag.lower(),  # tags are case-sensitive
    ]
    if path != "/robots.txt":  # robots.txt is not negotiated: one tag for both
        # The other coding's tag names another representation: a 304 would tell the
        # client to reuse bytes in a coding it did not get this time.
        assert other_etag != etag
        wrong.append(other_etag)
    for form in wrong:
        response = get_raw(
            http, served.url(path), {"Accept-Encoding": coding, "If-None-Match": form}
        )
        assert response.status == 200, form
        assert response.body == ok.body, form
        assert response.headers["etag"] == etag


# If-Modified-Since -------------------------------------------------------------------------


def _http_date(moment: datetime) -> str:
    return format_datetime(moment, usegmt=True)


@pytest.mark.parametrize("example", SITES, indirect=True, ids=str, scope="session")
def test_if_modified_since_is_compared_with_last_modified(
    served: ServedExample, http: httpx.Client
) -> None:
    url = served.url(served.site.first_item_page)
    ok = get_raw(http, url)  # gzip (httpx's default): a small body for each 200 below
    last_modified = ok.headers["last-modified"]
    etag = ok.headers["etag"]
    moment = parsedate_to_datetime(last_modified)

    def status(**headers: str) -> int:
        response = get_raw(http, url, {k.replace("_", "-"): v for k, v in headers.items()})
        if response.status == 304:
            _assert_not_modified(response, ok, served.site)
        else:
            assert response.body == ok.body
        return response.status

    assert status(if_modified_since=last_modified) == 304
    assert status(if_modified_since=_http_date(moment + timedelta(days=1))) == 304
    assert status(if_modified_since=_http_date(moment - timedelta(seconds=1))) == 200
    # An unreadable date is ignored (RFC 9110 13.1.3): the full response.
    assert status(if_modified_since="yesterday") == 200
    # If-None-Match wins over If-Modified-Since, both ways (RFC 9110 13.2.2).
    assert status(if_none_match='"nope"', if_modified_since=last_modified) == 200
    assert status(if_none_match=etag, if_modified_since=_http_date(moment - timedelta(1))) == 304
    # HEAD is answered the same way.
    head = request_raw(http, "HEAD", url, {"If-Modified-Since": last_modified})
    _assert_not_modified(head, ok, served.site)


@each(lambda site: ("/robots.txt", "/sitemap.xml", "/sitemap-pages-1.xml"))
def test_if_modified_since_without_last_modified_is_a_200(
    served: ServedExample, http: httpx.Client, path: str
) -> None:
    # None of these has a Last-Modified (the routes' entries have no lastmod), so there
    # is nothing to compare a date with: even a date in the future gets the document.
    ok = get_raw(http, served.url(path))
    assert "last-modified" not in ok.headers
    response = get_raw(
        http, served.url(path), {"If-Modified-Since": "Fri, 01 Jan 2100 00:00:00 GMT"}
    )
    assert response.status == 200
    assert response.body == ok.body


# Content coding --------------------------------------------------------------------------

#: Accept-Encoding values (None: no header at all) and the coding each must get.
NEGOTIATION = [
    (None, "identity"),  # no header: identity (a client that cannot gunzip)
    ("identity", "identity"),
    ("gzip;q=0, identity", "identity"),
    ("deflate, br", "identity"),  # only codings the server does not make
    ("gzip", "gzip"),
    ("identity;q=0, gzip", "gzip"),
    ("*", "gzip"),
    ("gzip, deflate, br, zstd", "gzip"),  # what requests sends (so usp gets gzip)
]


def compression_documents(site: ExampleSite) -> tuple[str, ...]:
    """Each kind of negotiable document (robots.txt is never compressed)."""
    return ("/sitemap.xml", "/sitemap-pages-1.xml", "/sitemap-pages-1.txt", site.first_item_page)


@each(compression_documents)
def test_gzip_is_sent_when_accept_encoding_allows_it(
    served: ServedExample, http: httpx.Client, path: str
) -> None:
    answers: dict[str, list[Raw]] = {"identity": [], "gzip": []}
    for accept, coding in NEGOTIATION:
        response = get_raw(http, served.url(path), {"Accept-Encoding": accept})
        assert response.status == 200, accept
        assert response.headers.get("content-encoding") == ("gzip" if coding == "gzip" else None), (
            accept
        )
        assert response.headers.get("vary") == "Accept-Encoding", accept
        answers[coding].append(response)

    plain, zipped = answers["identity"], answers["gzip"]
    # One representation per coding: the same bytes and ETag whatever the header said
    # (and the gzip bytes are the same every time: no timestamp in the gzip header).
    assert {r.body for r in plain} == {plain[0].body}
    assert {r.body for r in zipped} == {zipped[0].body}
    assert {r.headers["etag"] for r in plain} == {plain[0].headers["etag"]}
    assert {r.headers["etag"] for r in zipped} == {zipped[0].headers["etag"]}
    assert {r.headers["content-type"] for r in [*plain, *zipped]} == {
        plain[0].headers["content-type"]
    }
    # The gzip body is the identity body, compressed; and they are told apart by ETag.
    assert zipped[0].body[:3] == b"\x1f\x8b\x08"
    assert gzip.decompress(zipped[0].body) == plain[0].body
    assert len(zipped[0].body) < len(plain[0].body)
    assert zipped[0].headers["etag"] != plain[0].headers["etag"]
    assert zipped[0].headers["etag"].endswith('-gz"')
    assert not plain[0].headers["etag"].endswith('-gz"')


@each(lambda site: ("/robots.txt",))
def test_robots_txt_is_not_negotiated(served: ServedExample, http: httpx.Client, path: str) -> None:
    # A few hundred bytes, read by every crawler: sent as it is, and so with no Vary.
    plain = get_raw(http, served.url(path), {"Accept-Encoding": None})
    zipped = get_raw(http, served.url(path), {"Accept-Encoding": "gzip"})
    assert plain.status == zipped.status == 200
    assert "content-encoding" not in zipped.headers
    assert zipped.body == plain.body
    assert zipped.headers["etag"] == plain.headers["etag"]


def _gz_cases(paths: Callable[[ExampleSite], Iterable[str]]) -> list[object]:
    return [
        pytest.param(
            site,
            path,
            id=f"{site.name}:{path}",
        )
        for site in SITES
        for path in paths(site)
    ]


@pytest.mark.parametrize(
    ("example", "path"), _gz_cases(compression_documents), indirect=["example"], scope="session"
)
def test_gz_url_is_the_gzipped_file(served: ServedExample, http: httpx.Client, path: str) -> None:
    plain = get_raw(http, served.url(path), {"Accept-Encoding": None})
    assert plain.status == 200
    answers = [
        get_raw(http, served.url(path + ".gz"), {"Accept-Encoding": accept})
        for accept in (None, "gzip", "gzip;q=0, identity")
    ]
    for response in answers:
        assert response.status == 200, response.headers
        # The file itself: its type says gzip, and no content coding is to be undone.
        assert response.headers["content-type"] == GZIP_TYPE
        assert "content-encoding" not in response.headers
        assert "vary" not in response.headers  # the same bytes for every client
        assert response.headers["etag"] == answers[0].headers["etag"]
        assert response.body == answers[0].body
    assert gzip.decompress(answers[0].body) == plain.body
    head = request_raw(http, "HEAD", served.url(path + ".gz"))
    assert head.status == 200
    assert head.body == b""
    for name in ("content-type", "etag", "cache-control"):
        assert head.headers.get(name) == answers[0].headers.get(name), name


@pytest.mark.parametrize(
    ("example", "path"),
    _gz_cases(lambda site: (site.first_item_page,)),
    indirect=["example"],
    scope="session",
)
def test_crawlers_read_the_gz_file(served: ServedExample, path: str) -> None:
    url = served.url(path + ".gz")
    expected = served.expected_locs(path)
    # usp fetches and parses one sitemap URL as it would from an index.
    session = requests.Session()
    session.trust_env = False
    try:
        sitemap = SitemapFetcher(url, 0, RequestsWebClient(session=session)).sitemap()
    finally:
        session.close()
    assert [page.url for page in sitemap.all_pages()] == expected, type(sitemap).__name__
    # Scrapy's SitemapSpider gunzips a body with the gzip magic, then parses it.
    with httpx.Client(trust_env=False, timeout=60) as client:
        response = client.get(url)
    assert response.status_code == 200
    sitemap_body = gunzip(response.content)
    assert [entry["loc"] for entry in Sitemap(sitemap_body)] == expected
