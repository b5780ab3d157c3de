"""hreflang alternates: code validation, the xhtml:link fragment, and reciprocal clusters."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree
from xsd import validate

from sitemap_core.errors import InvalidEntryError
from sitemap_core.model.alternates import (
    ISO_639_1,
    ISO_3166_1,
    X_DEFAULT,
    Alternate,
    check_alternates,
    hreflang_cluster,
    normalise_hreflang,
)
from sitemap_core.model.namespaces import XHTML_NS

LOC = "https://example.com/"


def document(*fragments: str, loc: str = LOC) -> bytes:
    """A one-URL urlset holding ``fragments``, with the news and xhtml prefixes declared."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
        ' xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"'
        ' xmlns:xhtml="http://www.w3.org/1999/xhtml">'
        f"<url><loc>{loc}</loc>{''.join(fragments)}</url></urlset>"
    ).encode()


def links(body: bytes) -> list[tuple[str | None, str | None, str | None]]:
    """(rel, hreflang, href) of every xhtml:link, as a parser reads them."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    root = etree.fromstring(body, parser)
    return [
        (el.get("rel"), el.get("hreflang"), el.get("href"))
        for el in root.iter(f"{{{XHTML_NS}}}link")
    ]


# --------------------------------------------------------------------------- codes


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("en", "en"),
        ("EN", "en"),
        ("de-AT", "de-AT"),
        ("de-at", "de-AT"),
        ("pt_BR", "pt-BR"),  # locale names use "_"
        ("zh-hant", "zh-Hant"),
        ("ZH-HANS-cn", "zh-Hans-CN"),
        ("sr_latn_RS", "sr-Latn-RS"),
        ("x-default", "x-default"),
        ("X-Default", "x-default"),
        ("x_DEFAULT", "x-default"),
        ("  fr-CA \n", "fr-CA"),
        ("he", "he"),
        ("en-GB", "en-GB"),
    ],
)
def test_hreflang_normalised(given: str, expected: str) -> None:
    assert normalise_hreflang(given) == expected
    assert normalise_hreflang(expected) == expected
    assert Alternate(given, "https://example.com/a").hreflang == expected


@pytest.mark.parametrize(
    ("given", "in_reason"),
    [
        ("english", "ISO 639-1"),
        ("en-UK", "GB"),
        ("xx", "ISO 639-1"),
        ("en-US-x", "language[-Script][-REGION]"),
        ("", "empty"),
        ("   ", "empty"),
        ("en-", "region"),
        ("-en", "language"),
        ("en--US", "region"),
        ("e1", "language"),
        ("fil", "639-2/3"),
        ("es-419", "M.49"),
        ("en-ZZ", "ISO 3166-1"),
        ("en-EU", "ISO 3166-1"),
        ("zh-Ha1t", "ISO 15924"),
        ("x-klingon", "ISO 639-1"),
        ("iw", "'he'"),
        ("ên", "language"),
        ("en-ÜS", "region"),
        ("de-DE-1996", "language[-Script][-REGION]"),
        ("en-Latn-US-u-ca", "language[-Script][-REGION]"),
        (None, "str"),
        (42, "str"),
    ],
)
def test_hreflang_refused(given: object, in_reason: str) -> None:
    with pytest.raises(InvalidEntryError) as caught:
        normalise_hreflang(given)
    assert caught.value.field == "alternate.hreflang"
    assert in_reason in caught.value.reason
    with pytest.raises(InvalidEntryError) as caught:
        Alternate(given, "https://example.com/")  # type: ignore[arg-type]
    assert caught.value.field == "alternate.hreflang"


def test_en_uk_names_the_mistake_and_the_fix() -> None:
    with pytest.raises(InvalidEntryError) as caught:
        Alternate("en-UK", "https://example.com/uk")
    reason = caught.value.reason
    assert "'UK' is not an ISO 3166-1" in reason
    assert "'GB'" in reason
    assert "en-UK" in str(caught.value)


def test_code_lists_hold_the_real_codes() -> None:
    assert len(ISO_639_1) == 184
    assert len(ISO_3166_1) == 249
    assert {"en", "de", "zh", "he", "id", "yi", "nb", "nn"} <= ISO_639_1
    assert not {"iw", "in", "ji", "xx", "uk_"} & ISO_639_1
    assert {"GB", "US", "AT", "TW", "HK", "SS", "XK"} - ISO_3166_1 == {"XK"}
    assert "UK" not in ISO_3166_1
    assert all(len(c) == 2 and c.islower() for c in ISO_639_1)
    assert all(len(c) == 2 and c.isupper() for c in ISO_3166_1)


_ISO_CODES = Path("/usr/share/iso-codes/json")


@pytest.mark.skipif(not _ISO_CODES.is_dir(), reason="Debian's iso-codes data is not installed")
def test_code_lists_match_debian_iso_codes() -> None:
    # An independent copy of the same registries, when the machine has one.
    languages = json.loads((_ISO_CODES / "iso_639-2.json").read_text("utf-8"))["639-2"]
    countries = json.loads((_ISO_CODES / "iso_3166-1.json").read_text("utf-8"))["3166-1"]
    assert {x["alpha_2"] for x in languages if "alpha_2" in x} == ISO_639_1
    assert {x["alpha_2"] for x in countries} == ISO_3166_1


# --------------------------------------------------------------------------- Alternate


def test_alternate_fields_and_parts() -> None:
    alt = Alternate("zh_hant_tw", "HTTPS://Example.COM/zh")
    assert alt.hreflang == "zh-Hant-TW"
    assert alt.href == "https://example.com/zh"
    assert (alt.language, alt.script, alt.region) == ("zh", "Hant", "TW")
    assert (Alternate("de-AT", LOC).language, Alternate("de-AT", LOC).region) == ("de", "AT")
    assert Alternate("sr-Latn", LOC).script == "Latn"
    default = Alternate("X-DEFAULT", LOC)
    assert (default.language, default.script, default.region) == (None, None, None)
    assert (Alternate.NAMESPACE, Alternate.PREFIX) == (XHTML_NS, "xhtml")


def test_alternate_fragment() -> None:
    alt = Alternate("de-at", "https://example.com/de-at/")
    assert alt.to_xml() == (
        '<xhtml:link rel="alternate" hreflang="de-AT" href="https://example.com/de-at/"/>'
    )
    assert alt.to_xml() is alt.to_xml()  # rendered once


@pytest.mark.parametrize(
    "href", ["/relative", "ftp://example.com/", "javascript:alert(1)", "", None, "https://"]
)
def test_bad_href_names_the_field(href: object) -> None:
    with pytest.raises(InvalidEntryError) as caught:
        Alternate("en", href)  # type: ignore[arg-type]
    assert caught.value.field == "alternate.href"


def test_alternates_are_xsd_valid() -> None:
    alternates = [
        Alternate("en", "https://example.com/"),
        Alternate("en-GB", "https://example.com/gb/"),
        Alternate("zh-Hant", "https://example.com/zh-hant/"),
        Alternate("zh-Hans-CN", "https://example.com/zh-cn/"),
        Alternate("sr-Latn", "https://example.com/sr/"),
        Alternate("x-default", "https://example.com/"),
    ]
    body = document(*(a.to_xml() for a in alternates))
    validate(body, profile="strict")
    assert links(body) == [("alternate", a.hreflang, a.href) for a in alternates]


def test_href_escaping() -> None:
    alt = Alternate("en", "https://example.com/a b?x=1&y='2'&z=\"<3>\"")
    xml = alt.to_xml()
    assert "&amp;y=&apos;2&apos;" in xml
    assert "<3>" not in xml and '"<' not in xml
    body = document(xml)
    validate(body, profile="strict")
    assert links(body) == [("alternate", "en", alt.href)]
    assert alt.href == "https://example.com/a%20b?x=1&y='2'&z=%22%3C3%3E%22"


def test_alternate_value_semantics() -> None:
    a = Alternate("en_gb", "https://example.com/gb")
    b = Alternate("en-GB", "https://EXAMPLE.com/gb")
    assert a == b and hash(a) == hash(b)
    assert a != Alternate("en-GB", "https://example.com/uk")
    assert a != "en-GB"
    assert len({a, b}) == 1
    assert repr(a) == "Alternate('en-GB', 'https://example.com/gb')"
    with pytest.raises(AttributeError):
        a.hreflang = "fr"
    with pytest.raises(AttributeError):
        del a.href
    with pytest.raises(AttributeError):
        a.other = 1
    for clone in (pickle.loads(pickle.dumps(a)), copy.copy(a), copy.deepcopy(a)):
        assert clone == a and clone.to_xml() == a.to_xml() and clone.region == "GB"


# --------------------------------------------------------------------------- check_alternates


def test_check_alternates_accepts_every_form() -> None:
    expected = (Alternate("en", LOC), Alternate("de", "https://example.com/de"))
    assert check_alternates({"en": LOC, "de": "https://example.com/de"}) == expected
    assert check_alternates([("en", LOC), ("de", "https://example.com/de")]) == expected
    assert check_alternates([expected[0], ("DE", "https://example.com/de")]) == expected
    assert check_alternates(iter(expected)) == expected
    assert check_alternates(None) == ()
    assert check_alternates([]) == ()


@pytest.mark.parametrize(
    "alternates",
    [
        {"en-GB": LOC, "en_gb": "https://example.com/other"},
        [("en", LOC), ("EN", LOC)],
        [Alternate("x-default", LOC), ("X-Default", LOC)],
    ],
)
def test_check_alternates_refuses_duplicates(alternates: object) -> None:
    with pytest.raises(InvalidEntryError) as caught:
        check_alternates(alternates)  # type: ignore[arg-type]
    assert caught.value.field == "alternate.hreflang"
    assert "appears twice" in caught.value.reason


@pytest.mark.parametrize(
    "alternates", ["en", b"en", 42, [("en",)], [("en", LOC, "x")], ["en"], [["en", LOC]]]
)
def test_check_alternates_refuses_other_shapes(alternates: object) -> None:
    with pytest.raises(InvalidEntryError) as caught:
        check_alternates(alternates)  # type: ignore[arg-type]
    assert caught.value.field == "alternates"


# --------------------------------------------------------------------------- hreflang_cluster

GROUP = {
    "en": "https://example.com/en/",
    "en-GB": "https://example.com/gb/",
    "de": "https://example.com/de/",
    "de-AT": "https://example.com/at/",
    "x-default": "https://example.com/en/",
}


def test_cluster_is_reciprocal() -> None:
    pages = hreflang_cluster(GROUP)
    everything = {Alternate(code, url) for code, url in GROUP.items()}
    assert [url for url, _ in pages] == [
        "https://example.com/en/",
        "https://example.com/gb/",
        "https://example.com/de/",
        "https://example.com/at/",
    ]
    for url, alternates in pages:
        # Every page lists every version, itself and x-default included.
        assert set(alternates) == everything
        assert len(alternates) == len(GROUP)
        assert any(alt.href == url for alt in alternates)
        assert any(alt.hreflang == X_DEFAULT for alt in alternates)
        body = document(*(alt.to_xml() for alt in alternates), loc=url)
        validate(body, profile="strict")


def test_cluster_order_is_declaration_order() -> None:
    pairs = [
        ("x-default", "https://example.com/"),
        ("fr", "https://example.com/fr"),
        ("en", "https://example.com/"),
        ("it", "https://example.com/it"),
    ]
    pages = hreflang_cluster(pairs)
    assert [url for url, _ in pages] == [
        "https://example.com/",
        "https://example.com/fr",
        "https://example.com/it",
    ]
    assert [a.hreflang for a in pages[0][1]] == ["x-default", "fr", "en", "it"]
    assert hreflang_cluster(pairs) == pages
    assert hreflang_cluster(dict(pairs)) == pages


def test_cluster_shared_url_is_one_page() -> None:
    pages = hreflang_cluster(
        {
            "en": "https://Example.com/home",
            "en-US": "https://example.com/home",
            "x-default": "https://example.com/home",
            "es": "https://example.com/es",
        }
    )
    assert [url for url, _ in pages] == ["https://example.com/home", "https://example.com/es"]
    assert all(len(alternates) == 4 for _, alternates in pages)


def test_cluster_refuses_duplicates() -> None:
    with pytest.raises(InvalidEntryError) as caught:
        hreflang_cluster([("en-gb", LOC), ("fr", "https://example.com/fr"), ("en_GB", LOC)])
    assert caught.value.field == "alternate.hreflang"
    assert "appears twice" in caught.value.reason


@pytest.mark.parametrize("pages", [{}, {"x-default": LOC}, [("X-DEFAULT", LOC)]])
def test_cluster_needs_a_language(pages: object) -> None:
    with pytest.raises(InvalidEntryError) as caught:
        hreflang_cluster(pages)  # type: ignore[arg-type]
    assert caught.value.field == "alternates"


def test_cluster_reports_bad_values() -> None:
    with pytest.raises(InvalidEntryError) as caught:
        hreflang_cluster({"en": LOC, "en-UK": "https://example.com/uk"})
    assert caught.value.field == "alternate.hreflang"
    with pytest.raises(InvalidEntryError) as caught:
        hreflang_cluster({"en": LOC, "fr": "/fr"})
    assert caught.value.field == "alternate.href"


def test_single_language_cluster() -> None:
    assert hreflang_cluster({"en": LOC}) == [(LOC, (Alternate("en", LOC),))]


# --------------------------------------------------------------------------- properties

_PLAUSIBLE = st.from_regex(r"(?i)[a-z]{1,4}([-_][a-z0-9]{1,5}){0,3}|x[-_]default", fullmatch=True)


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.text(max_size=24), _PLAUSIBLE))
def test_any_string_is_a_code_or_an_invalid_entry(text: str) -> None:
    try:
        code = normalise_hreflang(text)
    except InvalidEntryError as exc:
        assert exc.field == "alternate.hreflang"
        return
    assert normalise_hreflang(code) == code
    assert code == X_DEFAULT or code.split("-")[0] in ISO_639_1
    alt = Alternate(code, LOC)
    assert Alternate(text, LOC) == alt
    body = document(alt.to_xml())
    validate(body, profile="strict")
    assert links(body) == [("alternate", code, LOC)]


_CODES = st.builds(
    lambda lang, region: f"{lang}-{region}" if region else lang,
    st.sampled_from(sorted(ISO_639_1)),
    st.one_of(st.none(), st.sampled_from(sorted(ISO_3166_1))),
)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(_CODES, st.integers(0, 5)), min_size=1, max_size=8))
def test_cluster_property(declared: list[tuple[str, int]]) -> None:
    pairs = [(code, f"https://example.com/p{n}") for code, n in declared]
    codes = [code for code, _ in pairs]
    if len(set(codes)) != len(codes):
        with pytest.raises(InvalidEntryError):
            hreflang_cluster(pairs)
        return
    pages = hreflang_cluster(pairs)
    urls = list(dict.fromkeys(url for _, url in pairs))
    assert [url for url, _ in pages] == urls
    full = tuple(Alternate(code, url) for code, url in pairs)
    assert all(alternates == full for _, alternates in pages)
