"""The site: which path names which document, and the replies respond() gives."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from xsd import validate

from sitemap_core import (
    BaseURL,
    ConfigurationError,
    Entry,
    InvalidEntryError,
    Site,
    Target,
    UntrustedHostError,
    UrlSource,
    respond,
)
from tests.core.helpers import BASE, SM, get, locs, make_site, parse, url

XML = "application/xml; charset=utf-8"
TEXT = "text/plain; charset=utf-8"


def posts(n: int) -> list[str]:
    return [url(i, "posts") for i in range(n)]


def pages(n: int) -> list[str]:
    return [url(i, "pages") for i in range(n)]


# --------------------------------------------------------------------------- match


@pytest.mark.parametrize(
    ("path", "target"),
    [
        ("/robots.txt", Target("robots")),
        ("/sitemap.xml", Target("root", "xml")),
        ("/sitemap.txt", Target("root", "txt")),
        ("/sitemap-posts-1.xml", Target("page", "xml", "posts", 1)),
        ("/sitemap-posts-12.txt", Target("page", "txt", "posts", 12)),
        ("/sitemap-my_posts-2-3.xml", Target("page", "xml", "my_posts-2", 3)),
        ("/sitemap-0-1.xml", Target("page", "xml", "0", 1)),
        (f"/sitemap-{'x' * 64}-1.xml", Target("page", "xml", "x" * 64, 1)),
        (f"/sitemap-posts-{'9' * 18}.xml", Target("page", "xml", "posts", int("9" * 18))),
    ],
)
def test_match(path: str, target: Target) -> None:
    assert make_site({}).match(path) == target


@pytest.mark.parametrize(
    "path",
    [
        "/sitemap-posts-0.xml",
        "/sitemap-posts-01.xml",
        "/sitemap-posts-007.xml",
        "/sitemap-posts-abc.xml",
        "/sitemap-posts-1.5.xml",
        "/sitemap-posts-+1.xml",
        "/sitemap-posts- 1.xml",
        "/sitemap-posts-" + "1" + "0" * 20 + ".xml",  # 10**20
        "/sitemap-posts-" + "7" * 1000 + ".xml",
        "/sitemap-Posts-1.xml",
        "/sitemap-POSTS-1.xml",
        f"/sitemap-{'x' * 65}-1.xml",
        "/sitemap-posts-1.XML",
        "/sitemap-posts-1.html.gz",
        "/sitemap-posts-1.xml.gzip",
        "/sitemap-posts-1.gz",
        "/sitemap-posts-1.xml.gz.gz",
        "/sitemap-posts-1",
        "/sitemap-posts.xml",
        "/sitemap-.xml",
        "/sitemap--1.xml",
        "/sitemap.xml/",
        "/Sitemap.xml",
        "/sitemap.XML",
        "/sitemap.xml?x=1",
        "sitemap.xml",
        "//sitemap.xml",
        "/robots.txt/",
        "/ROBOTS.TXT",
        "/",
        "",
        "/sitemap-posts-1.xml\n",
    ],
)
def test_match_refuses(path: str) -> None:
    assert make_site({}).match(path) is None


def test_gz_paths_name_the_gzipped_documents() -> None:
    site = make_site({})
    page = site.match("/sitemap-posts-3.xml.gz")
    assert page == Target("page", "xml", "posts", 3, gz=True)
    assert page is not None and page.path == "/sitemap-posts-3.xml"
    root = site.match("/sitemap.txt.gz")
    assert root == Target("root", "txt", gz=True)
    assert root is not None and root.path == "/sitemap.txt"


def test_negative_page_is_never_a_page_of_the_source() -> None:
    # "/sitemap-posts--1.xml" is page 1 of a source named "posts-" (a legal name), so
    # match() may name it; what matters is that it is not page -1 of "posts".
    site = make_site({"posts": posts(3)})
    target = site.match("/sitemap-posts--1.xml")
    assert target is None or (target.source, target.page) == ("posts-", 1)
    got = get(site, "/sitemap-posts--1.xml")
    assert got is None or got.status == 404


def test_a_thousand_digit_page_does_not_raise() -> None:
    site = make_site({"posts": posts(3)})
    for digits in ("7" * 1000, "1" + "0" * 20, "9" * 19):
        path = f"/sitemap-posts-{digits}.xml"
        assert site.match(path) is None
        assert respond(site, "GET", path, lambda: BASE) is None


def test_unknown_path_is_none_whatever_the_method() -> None:
    site = make_site({"posts": posts(3)})

    def never() -> BaseURL:
        raise AssertionError("base_url must not be called for a path that is not ours")

    for method in ("GET", "POST", "DELETE"):
        assert respond(site, method, "/index.html", never) is None


# --------------------------------------------------------------------------- methods


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "get"])
@pytest.mark.parametrize("path", ["/sitemap.xml", "/robots.txt", "/sitemap-posts-1.xml"])
def test_other_methods_are_405(method: str, path: str) -> None:
    site = make_site({"posts": posts(3)})
    got = get(site, path, method)
    assert got is not None
    assert got.status == 405
    assert got.header("Allow") == "GET, HEAD"


@pytest.mark.parametrize("path", ["/sitemap.xml", "/sitemap.txt", "/sitemap-posts-2.xml"])
def test_head_has_the_get_headers_and_no_body(path: str) -> None:
    site = make_site({"posts": posts(15)}, page_size=10 if "posts-2" in path else 50)
    reply = respond(site, "HEAD", path, lambda: BASE)
    assert reply is not None
    assert reply.status == 200
    assert reply.header("Content-Type") in (XML, TEXT)
    assert not hasattr(reply.body, "__len__"), "a sized empty body reads as Content-Length: 0"
    assert list(reply.body) == []  # type: ignore[arg-type]
    # The same GET has a body and the same headers. The HEAD rendered the document to
    # learn its ETag, so it knows the length; the GET streams on the validators that
    # render found (sitemap_core.memory.recall), so it sends none.
    got = get(site, path)
    assert got is not None and got.status == 200 and got.body
    for name in ("Content-Type", "ETag", "Cache-Control", "Vary"):
        assert got.header(name) == reply.header(name), name
    assert reply.header("Content-Length") == str(len(got.body))
    assert got.header("Content-Length") is None


def test_head_of_a_streamed_document_has_no_content_length() -> None:
    site = make_site(
        [UrlSource.from_object("posts", posts(15), fingerprint=lambda: "v1")], page_size=50
    )
    reply = respond(site, "HEAD", "/sitemap.xml", lambda: BASE)
    assert reply is not None and reply.status == 200
    assert reply.header("Content-Length") is None  # unknown until streamed
    assert reply.header("ETag") is not None
    assert list(reply.body) == []  # type: ignore[arg-type]


def test_head_robots_has_the_get_length_and_no_body() -> None:
    site = make_site({"posts": posts(3)})
    head = get(site, "/robots.txt", "HEAD")
    body = get(site, "/robots.txt")
    assert head is not None and body is not None
    assert head.status == 200 and head.body == b""
    assert head.header("Content-Length") == str(len(body.body)) != "0"


@pytest.mark.parametrize("path", ["/sitemap.xml", "/sitemap-posts-9.xml"])
def test_head_404_has_no_body(path: str) -> None:
    site = make_site({"posts": posts(3)} if "posts" in path else {})
    got = get(site, path, "HEAD")
    assert got is not None and got.status == 404 and got.body == b""


# --------------------------------------------------------------------------- root and index


def test_one_urlset_while_total_fits_a_page() -> None:
    site = make_site({"posts": posts(6), "pages": pages(4)}, page_size=10)
    got = get(site, "/sitemap.xml")
    assert got is not None
    assert got.status == 200
    assert got.header("Content-Type") == XML
    assert parse(got.body).tag.endswith("}urlset")
    assert locs(got.body) == posts(6) + pages(4)
    validate(got.body)


def test_index_once_total_exceeds_a_page() -> None:
    site = make_site({"posts": posts(25), "pages": pages(10), "empty": []}, page_size=10)
    got = get(site, "/sitemap.xml")
    assert got is not None
    assert got.status == 200
    assert got.header("Content-Type") == XML
    assert parse(got.body).tag.endswith("}sitemapindex")
    assert locs(got.body) == [
        "https://example.com/sitemap-posts-1.xml",
        "https://example.com/sitemap-posts-2.xml",
        "https://example.com/sitemap-posts-3.xml",
        "https://example.com/sitemap-pages-1.xml",
    ]
    validate(got.body)
    validate(got.body, profile="core")


def test_index_children_are_under_the_base_path() -> None:
    site = make_site({"posts": posts(11)}, page_size=10)
    base = BaseURL.parse("https://example.com/blog/")
    got = get(site, "/sitemap.xml", base=lambda: base)
    assert got is not None
    assert locs(got.body) == [
        "https://example.com/blog/sitemap-posts-1.xml",
        "https://example.com/blog/sitemap-posts-2.xml",
    ]


def test_every_index_child_is_served_and_pages_cover_the_source_once() -> None:
    site = make_site({"posts": posts(25), "pages": pages(10)}, page_size=10)
    index = get(site, "/sitemap.xml")
    assert index is not None
    served: list[str] = []
    for child in locs(index.body):
        got = get(site, child.removeprefix("https://example.com"))
        assert got is not None and got.status == 200, child
        validate(got.body)
        served += locs(got.body)
    assert served == posts(25) + pages(10)


def test_pages_are_one_based_and_the_last_is_partial() -> None:
    site = make_site({"posts": posts(25)}, page_size=10)
    expected = {1: posts(25)[0:10], 2: posts(25)[10:20], 3: posts(25)[20:25]}
    for number, want in expected.items():
        got = get(site, f"/sitemap-posts-{number}.xml")
        assert got is not None and got.status == 200
        assert got.header("Content-Type") == XML
        assert locs(got.body) == want
        validate(got.body)


@pytest.mark.parametrize("path", ["/sitemap-posts-4.xml", "/sitemap-posts-999999999999.xml"])
def test_page_past_the_end_is_404(path: str) -> None:
    site = make_site({"posts": posts(25)}, page_size=10)
    got = get(site, path)
    assert got is not None
    assert got.status == 404
    assert got.header("Content-Type") == TEXT
    assert b"<urlset" not in got.body


def test_page_of_unknown_or_empty_source_is_404() -> None:
    site = make_site({"posts": posts(5), "empty": []}, page_size=10)
    for path in ("/sitemap-nosuch-1.xml", "/sitemap-empty-1.xml", "/sitemap-nosuch-1.txt"):
        got = get(site, path)
        assert got is not None and got.status == 404, path


def test_page_size_boundary() -> None:
    exactly = make_site({"posts": posts(10)}, page_size=10)
    got = get(exactly, "/sitemap.xml")
    assert got is not None and parse(got.body).tag.endswith("}urlset")
    assert len(locs(got.body)) == 10
    over = make_site({"posts": posts(10), "pages": pages(1)}, page_size=10)
    got = get(over, "/sitemap.xml")
    assert got is not None and parse(got.body).tag.endswith("}sitemapindex")
    assert len(locs(got.body)) == 2


@pytest.mark.parametrize("sources", [{}, {"posts": [], "pages": []}])
def test_empty_site_is_404(sources: dict[str, list[str]]) -> None:
    site = make_site(sources)
    for path in ("/sitemap.xml", "/sitemap.txt"):
        got = get(site, path)
        assert got is not None and got.status == 404, path
    robots = get(site, "/robots.txt")
    assert robots is not None and robots.status == 200


# --------------------------------------------------------------------------- text sitemaps


def test_text_sitemap_when_single_page() -> None:
    site = make_site({"posts": posts(3), "pages": ["https://example.com/a?b=1&c=2"]})
    got = get(site, "/sitemap.txt")
    assert got is not None
    assert got.status == 200
    assert got.header("Content-Type") == TEXT
    assert got.body.decode("utf-8").splitlines() == [*posts(3), "https://example.com/a?b=1&c=2"]


def test_text_sitemap_is_404_when_multi_page_but_its_pages_are_served() -> None:
    site = make_site({"posts": posts(15)}, page_size=10)
    got = get(site, "/sitemap.txt")
    assert got is not None and got.status == 404
    page = get(site, "/sitemap-posts-2.txt")
    assert page is not None and page.status == 200
    assert page.header("Content-Type") == TEXT
    assert page.body.decode().splitlines() == posts(15)[10:]


# --------------------------------------------------------------------------- hosts


def test_untrusted_host_is_400() -> None:
    site = make_site({"posts": posts(3)})

    def forged() -> BaseURL:
        return BaseURL.from_request("https", "evil.com", "", ["example.com"])

    for path in ("/sitemap.xml", "/robots.txt", "/sitemap-posts-1.xml"):
        got = get(site, path, base=forged)
        assert got is not None
        assert got.status == 400, path
        assert got.body.startswith(b"Bad Request")
        assert b"evil.com" not in got.body  # request data is logged, never echoed
        assert got.header("Content-Type") == TEXT
        head = get(site, path, "HEAD", base=forged)
        assert head is not None and head.status == 400 and head.body == b""


def test_base_url_errors_other_than_untrusted_host_propagate() -> None:
    site = make_site({"posts": posts(3)})

    def broken() -> BaseURL:
        raise RuntimeError("misconfigured")

    with pytest.raises(RuntimeError):
        respond(site, "GET", "/sitemap.xml", broken)
    assert issubclass(UntrustedHostError, Exception)


def test_entries_on_another_origin_are_refused_by_default() -> None:
    site = make_site({"posts": [url(0), "https://other.example/x"]})
    with pytest.raises(InvalidEntryError) as info:
        get(site, "/sitemap.xml")
    assert info.value.field == "loc"
    assert info.value.value == "https://other.example/x"
    assert info.value.source == "posts"
    assert "https://example.com/" in str(info.value)


@pytest.mark.parametrize(
    "foreign",
    [
        "http://example.com/x",  # other scheme
        "https://example.com:8443/x",  # other port
        "https://example.com.evil.com/x",  # prefix of the host name
        "https://www.example.com/x",  # subdomain
    ],
)
def test_same_host_means_same_origin(foreign: str) -> None:
    site = make_site({"posts": [foreign]})
    with pytest.raises(InvalidEntryError):
        get(site, "/sitemap.xml")


def test_other_origins_allowed_when_same_host_only_is_false() -> None:
    entries = [url(0), "https://other.example/x", "http://cdn.example.net/y"]
    site = make_site({"posts": entries}, same_host_only=False)
    got = get(site, "/sitemap.xml")
    assert got is not None and got.status == 200
    assert locs(got.body) == entries
    validate(got.body)


def test_foreign_entry_on_a_page_is_refused() -> None:
    site = make_site({"posts": [*posts(10), "https://evil.com/x"]}, page_size=10)
    assert get(site, "/sitemap-posts-1.xml") is not None
    with pytest.raises(InvalidEntryError):
        get(site, "/sitemap-posts-2.xml")


# --------------------------------------------------------------------------- failing sources


def test_source_raising_before_the_first_byte_raises_from_respond() -> None:
    def broken() -> Iterator[str]:
        yield url(0)
        raise RuntimeError("database is down")

    site = make_site([UrlSource.from_object("posts", broken, count=lambda: 5)])
    with pytest.raises(RuntimeError, match="database is down"):
        respond(site, "GET", "/sitemap.xml", lambda: BASE)


def test_source_raising_while_counting_raises_from_respond() -> None:
    def broken() -> int:
        raise ConnectionError("no database")

    site = make_site([UrlSource.from_object("posts", posts(3), count=broken)])
    with pytest.raises(ConnectionError):
        respond(site, "GET", "/sitemap.xml", lambda: BASE)


def test_bad_entry_before_the_first_byte_raises_from_respond() -> None:
    site = make_site({"posts": [url(0), "not a url"]})
    with pytest.raises(InvalidEntryError) as info:
        respond(site, "GET", "/sitemap.xml", lambda: BASE)
    assert info.value.source == "posts"


def test_source_raising_after_the_first_chunk_raises_while_streaming() -> None:
    total = 5_000

    def late_failure() -> Iterator[str]:
        yield from posts(total)
        raise RuntimeError("connection lost")

    site = make_site(
        [
            UrlSource.from_object(
                "posts", late_failure, count=lambda: total + 10, fingerprint=lambda: "v1"
            )
        ],
        page_size=50_000,
    )
    reply = respond(site, "GET", "/sitemap.xml", lambda: BASE)
    assert reply is not None and reply.status == 200
    body = iter(reply.body)  # type: ignore[arg-type]
    received = [next(body)]
    assert received[0].startswith(b"<?xml")
    with pytest.raises(RuntimeError, match="connection lost"):
        received.extend(body)
    sent = b"".join(received)
    assert len(sent) > 16_000
    assert b"</urlset>" not in sent  # never a complete-looking document


def test_without_fingerprint_a_late_failure_is_raised_before_any_byte() -> None:
    # The page is spooled to compute its ETag, so a source failing anywhere in it fails
    # the request before the response starts: a clean 500, not a cut transfer.
    def late_failure() -> Iterator[str]:
        yield from posts(5_000)
        raise RuntimeError("connection lost")

    site = make_site([UrlSource.from_object("posts", late_failure)], page_size=50_000)
    with pytest.raises(RuntimeError, match="connection lost"):
        respond(site, "GET", "/sitemap.xml", lambda: BASE)


def test_short_source_logs_and_still_gives_a_valid_document(
    caplog: pytest.LogCaptureFixture,
) -> None:
    site = make_site([UrlSource.from_object("posts", lambda: posts(3), count=lambda: 5)])
    with caplog.at_level("WARNING", logger="sitemap_core"):
        got = get(site, "/sitemap.xml")
    assert got is not None and got.status == 200
    assert locs(got.body) == posts(3)
    validate(got.body)
    assert "'posts'" in caplog.text and "promised 5" in caplog.text


# --------------------------------------------------------------------------- validity


def test_every_served_document_validates() -> None:
    rich = [
        Entry(url(0, "posts"), lastmod="2024-03-10", changefreq="daily", priority=0.5),
        Entry("https://example.com/q?a=1&b='x'&c=<>", lastmod="2024-05-01 10:00:00"),
        Entry("https://example.com/ünïcode/路径", changefreq="NEVER", priority=1e-05),
        "https://EXAMPLE.com/upper%",
        *posts(20),
    ]
    site = make_site({"rich": rich, "pages": pages(7)}, page_size=10)
    seen = 0
    for path in (
        "/sitemap.xml",
        "/sitemap-rich-1.xml",
        "/sitemap-rich-2.xml",
        "/sitemap-rich-3.xml",
        "/sitemap-pages-1.xml",
    ):
        got = get(site, path)
        assert got is not None and got.status == 200, path
        assert got.header("Content-Type") == XML
        validate(got.body)
        validate(got.body, profile="core")
        seen += len(locs(got.body)) if "sitemap-" in path else 0
    assert seen == len(rich) + 7
    single = make_site({"rich": rich}, page_size=50)
    got = get(single, "/sitemap.xml")
    assert got is not None
    validate(got.body)
    assert len(parse(got.body).findall("sm:url", SM)) == len(rich)


# --------------------------------------------------------------------------- settings


@pytest.mark.parametrize("size", [0, -1, 50_001, True, 1.5, "10"])
def test_bad_page_size(size: object) -> None:
    with pytest.raises(ConfigurationError):
        Site([], page_size=size)  # type: ignore[arg-type]


def test_page_size_bounds_are_accepted() -> None:
    assert Site([], page_size=1).page_size == 1
    assert Site([], page_size=50_000).page_size == 50_000


def test_duplicate_source_names() -> None:
    with pytest.raises(ConfigurationError, match="posts"):
        Site([UrlSource.from_object("posts", []), UrlSource.from_object("posts", [])])


def test_page_size_one() -> None:
    site = make_site({"posts": posts(3)}, page_size=1)
    index = get(site, "/sitemap.xml")
    assert index is not None and len(locs(index.body)) == 3
    got = get(site, "/sitemap-posts-3.xml")
    assert got is not None and locs(got.body) == [posts(3)[2]]
