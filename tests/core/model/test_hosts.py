"""Base URLs: configured ones, request-derived ones behind an allow-list, and forged hosts."""

from __future__ import annotations

import pytest

from sitemap_core import (
    LOOPBACK_HOSTS,
    BaseURL,
    ConfigurationError,
    Entry,
    UntrustedHostError,
    host_is_allowed,
)
from tests.core.helpers import get, locs, make_site

# --------------------------------------------------------------------------- parse


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("https://example.com", "https://example.com"),
        ("https://example.com/", "https://example.com"),
        ("https://Example.COM/", "https://example.com"),
        ("http://example.com:8080/", "http://example.com:8080"),
        ("https://example.com/blog/", "https://example.com/blog"),
        ("https://example.com/blog", "https://example.com/blog"),
        ("https://example.com/Blog/Sub///", "https://example.com/Blog/Sub"),
        ("  https://example.com/  ", "https://example.com"),
        ("http://[::1]:8000", "http://[::1]:8000"),
    ],
)
def test_parse(text: str, url: str) -> None:
    assert BaseURL.parse(text).url == url


@pytest.mark.parametrize(
    "text",
    [
        "ftp://example.com",
        "example.com",
        "/blog",
        "//example.com",
        "",
        "https://",
        "https://example.com/?a=1",
        "https://example.com/#top",
        "https://user:pw@example.com",
        "https://user@example.com",
        "https://example.com:99999",
        "https://example.com:port",
        "mailto:a@example.com",
    ],
)
def test_parse_refuses(text: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        BaseURL.parse(text)
    assert repr(text) in str(info.value)


def test_join_and_origin_prefix() -> None:
    base = BaseURL.parse("https://example.com:8443/blog/")
    assert base.join("/sitemap.xml") == "https://example.com:8443/blog/sitemap.xml"
    assert base.origin_prefix == "https://example.com:8443/"
    assert BaseURL.parse("http://example.com").origin_prefix == "http://example.com/"
    assert BaseURL.parse("http://[::1]:8000/x").origin_prefix == "http://[::1]:8000/"


def test_parse_idn_host_serves_its_own_entries() -> None:
    base = BaseURL.parse("https://bücher.de")
    site = make_site({"pages": ["https://bücher.de/a"]})
    got = get(site, "/sitemap.xml", base=lambda: base)
    assert got is not None and got.status == 200
    assert locs(got.body) == ["https://xn--bcher-kva.de/a"]


def test_parse_drops_default_port() -> None:
    base = BaseURL.parse("https://example.com:443")
    assert base.url == "https://example.com"
    site = make_site({"pages": ["https://example.com/a"]})
    got = get(site, "/sitemap.xml", base=lambda: base)
    assert got is not None and got.status == 200


# --------------------------------------------------------------------------- allow-list


@pytest.mark.parametrize(
    ("host", "allowed", "ok"),
    [
        ("example.com", ["example.com"], True),
        ("example.com:8080", ["example.com"], True),  # a bare host allows any port
        ("EXAMPLE.com", ["example.com"], True),
        ("example.com", ["EXAMPLE.COM"], True),
        ("example.com:8080", ["example.com:8080"], True),
        ("example.com:9090", ["example.com:8080"], False),
        ("example.com", ["example.com:8080"], False),
        ("www.example.com", ["example.com"], False),
        ("example.com", [".example.com"], True),
        ("www.example.com", [".example.com"], True),
        ("a.b.example.com:8000", [".example.com"], True),
        ("badexample.com", [".example.com"], False),
        ("example.com.evil.com", [".example.com"], False),
        ("evil.com", ["example.com", ".example.org"], False),
        ("localhost.evil.com", list(LOOPBACK_HOSTS), False),
        ("localhost:5000", list(LOOPBACK_HOSTS), True),
        ("127.0.0.1:8000", list(LOOPBACK_HOSTS), True),
        ("[::1]:8000", list(LOOPBACK_HOSTS), True),
        ("evil.com", ["*"], True),
        ("evil.com", [], False),
        ("a b", ["*"], False),
        ("", ["*"], False),
        ("example.com/evil", ["*"], False),
        ("example.com@evil.com", ["*"], False),
        ("example.com:80:80", ["*"], False),
        ("example.com:123456", ["*"], False),
        ("exa\nmple.com", ["*"], False),
    ],
)
def test_host_is_allowed(host: str, allowed: list[str], ok: bool) -> None:
    assert host_is_allowed(host, allowed) is ok


def test_loopback_hosts() -> None:
    assert set(LOOPBACK_HOSTS) == {"localhost", "127.0.0.1", "[::1]"}


# --------------------------------------------------------------------------- from_request


ALLOWED = ["example.com", "api.example.org:8443", ".example.net", *LOOPBACK_HOSTS]


@pytest.mark.parametrize(
    ("scheme", "host", "root", "url"),
    [
        ("https", "example.com", "", "https://example.com"),
        ("https", "example.com:443", "", "https://example.com"),
        ("http", "example.com:80", "", "http://example.com"),
        ("https", "example.com:80", "", "https://example.com:80"),
        ("http", "example.com:443", "", "http://example.com:443"),
        ("http", "example.com:8000", "", "http://example.com:8000"),
        ("https", "EXAMPLE.COM", "", "https://example.com"),
        ("https", "example.com", "/blog", "https://example.com/blog"),
        ("https", "example.com", "/blog/", "https://example.com/blog"),
        ("https", "example.com", "/", "https://example.com"),
        ("https", "api.example.org:8443", "", "https://api.example.org:8443"),
        ("https", "shop.example.net", "", "https://shop.example.net"),
        ("http", "localhost:5000", "", "http://localhost:5000"),
        ("http", "[::1]:80", "", "http://[::1]"),
        ("http", "[::1]:8080", "", "http://[::1]:8080"),
        ("http", "127.0.0.1", "", "http://127.0.0.1"),
    ],
)
def test_from_request(scheme: str, host: str, root: str, url: str) -> None:
    base = BaseURL.from_request(scheme, host, root, ALLOWED)
    assert base.url == url
    # what it produces is a usable site URL
    assert Entry(base.join("/sitemap.xml")).loc == url + "/sitemap.xml"


@pytest.mark.parametrize(
    "host",
    [
        "evil.com",
        "localhost.evil.com",
        "example.com.evil.com",
        "evilexample.com",
        "api.example.org",  # only port 8443 is allowed
        "api.example.org:443",
        "a b",
        "",
        "example.com:",
        "example.com/x",
        "example.com@evil.com",
        "evil.com#example.com",
        "example.com:99:99",
        "[::1",
        "x" * 10_000,
    ],
)
def test_forged_hosts_are_untrusted(host: str) -> None:
    with pytest.raises(UntrustedHostError) as info:
        BaseURL.from_request("https", host, "", ALLOWED)
    assert len(str(info.value)) < 200  # a huge header is not echoed whole


@pytest.mark.parametrize("scheme", ["ftp", "HTTPS", "", "javascript"])
def test_odd_scheme_is_untrusted(scheme: str) -> None:
    with pytest.raises(UntrustedHostError):
        BaseURL.from_request(scheme, "example.com", "", ALLOWED)


@pytest.mark.parametrize("host", ["example.com:99999", "example.com:65536"])
def test_out_of_range_port_is_untrusted(host: str) -> None:
    with pytest.raises(UntrustedHostError):
        BaseURL.from_request("https", host, "", ["example.com"])


def test_a_remembered_base_url_is_given_only_for_the_same_allow_list() -> None:
    # The request's base URL is remembered by host and allow-list together: a host
    # allowed by one site's list is still refused by another's, and a refused host is
    # refused again (errors are not remembered).
    assert BaseURL.from_request("https", "shop.test", "", ("shop.test",)).url == "https://shop.test"
    for _ in range(2):
        with pytest.raises(UntrustedHostError):
            BaseURL.from_request("https", "shop.test", "", ("other.test",))
    assert BaseURL.from_request("https", "shop.test", "", ["shop.test"]).url == "https://shop.test"


def test_trailing_dot_host_is_refused_or_normalised() -> None:
    site = make_site({"pages": ["https://example.com/a"]})

    def base() -> BaseURL:
        return BaseURL.from_request("https", "example.com.", "", ["example.com"])

    got = get(site, "/sitemap.xml", base=base)
    assert got is not None and got.status in (200, 400)
    if got.status == 200:
        assert locs(got.body) == ["https://example.com/a"]


@pytest.mark.parametrize("text", ["https://example.com/#", "https://example.com/?", "http://[::1"])
def test_parse_refuses_an_empty_query_or_fragment_and_a_broken_url(text: str) -> None:
    # From review: urlsplit reports an empty "?" or "#" as empty, yet it stays in the
    # URL (every entry then fell outside the site); an unclosed bracket raised a bare
    # ValueError.
    with pytest.raises(ConfigurationError) as info:
        BaseURL.parse(text)
    assert repr(text) in str(info.value)
