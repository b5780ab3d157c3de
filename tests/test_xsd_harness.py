"""The XSD harness must reject as surely as it accepts.

A validator that passes everything would hide every writer bug, so each invalid
document below is one small, deliberate defect, and each must raise. Namespace URIs
are written out literally here (not taken from ``xsd.py``) so a typo there cannot
cancel out in the tests.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
import xsd
from lxml import etree
from xsd import PROFILES, is_valid, validate

pytestmark = pytest.mark.usefixtures("_schemas")


@pytest.fixture
def _schemas() -> Path:
    return xsd.require_xsd()


XS = "http://www.w3.org/2001/XMLSchema"

NAMESPACES = (
    'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
    'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" '
    'xmlns:video="http://www.google.com/schemas/sitemap-video/1.1" '
    'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9" '
    'xmlns:xhtml="http://www.w3.org/1999/xhtml"'
)


def urlset(body: str) -> bytes:
    """A urlset declaring every extension namespace (unused declarations are harmless)."""
    text = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NAMESPACES}>\n{body}\n</urlset>\n'
    return text.encode()


def url(extra: str = "", loc: str = "https://example.com/page") -> str:
    return f"<url><loc>{loc}</loc>{extra}</url>"


# --- valid documents ---------------------------------------------------------------

PLAIN = urlset(
    "<url>"
    "<loc>https://example.com/</loc>"
    "<lastmod>2024-05-10T17:33:30+08:00</lastmod>"
    "<changefreq>daily</changefreq>"
    "<priority>0.8</priority>"
    "</url>\n" + url()
)

INDEX = b"""<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>https://example.com/sitemap-1.xml</loc><lastmod>2024-05-10</lastmod></sitemap>
  <sitemap><loc>https://example.com/sitemap-2.xml</loc></sitemap>
</sitemapindex>
"""

IMAGE = "<image:image><image:loc>https://example.com/a.jpg</image:loc></image:image>"

VIDEO = (
    "<video:video>"
    "<video:thumbnail_loc>https://example.com/t.jpg</video:thumbnail_loc>"
    "<video:title>Grilling steaks</video:title>"
    "<video:description>How to grill.</video:description>"
    "<video:content_loc>https://example.com/v.mp4</video:content_loc>"
    '<video:player_loc allow_embed="yes">https://example.com/player?v=1</video:player_loc>'
    "<video:duration>600</video:duration>"
    "<video:publication_date>2024-05-10T10:00:00+00:00</video:publication_date>"
    "<video:family_friendly>yes</video:family_friendly>"
    "<video:live>no</video:live>"
    "</video:video>"
)

NEWS = (
    "<news:news>"
    "<news:publication><news:name>The Example Times</news:name>"
    "<news:language>en</news:language></news:publication>"
    "<news:publication_date>2024-05-10T10:00:00Z</news:publication_date>"
    "<news:title>Something happened</news:title>"
    "</news:news>"
)

XHTML = (
    '<xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/"/>'
    '<xhtml:link rel="alternate" hreflang="x-default" href="https://example.com/"/>'
)

EXTENSIONS = {"image": IMAGE, "video": VIDEO, "news": NEWS, "xhtml": XHTML}

ALL_EXTENSIONS = urlset(
    url(
        "<lastmod>2024-05-10</lastmod>"
        + XHTML
        + IMAGE
        + IMAGE.replace("a.jpg", "b.jpg")
        + VIDEO
        + NEWS
    )
)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("document", [PLAIN, INDEX], ids=["urlset", "sitemapindex"])
def test_plain_documents_pass_every_profile(document: bytes, profile: str) -> None:
    validate(document, profile)
    assert is_valid(document, profile)


@pytest.mark.parametrize("profile", ["strict", "lax"])
@pytest.mark.parametrize("name", list(EXTENSIONS))
def test_each_extension_alone_passes(name: str, profile: str) -> None:
    validate(urlset(url(EXTENSIONS[name])), profile)


@pytest.mark.parametrize("profile", ["strict", "lax"])
def test_all_extensions_together_pass(profile: str) -> None:
    validate(ALL_EXTENSIONS, profile)


@pytest.mark.parametrize("name", list(EXTENSIONS))
def test_core_profile_knows_no_extension(name: str) -> None:
    # The official file alone has strict wildcards and no declarations to match them.
    with pytest.raises(AssertionError, match="No matching global element declaration"):
        validate(urlset(url(EXTENSIONS[name])), "core")


# --- invalid documents: each must fail under every profile -------------------------

INVALID = {
    "priority-before-changefreq": urlset(
        url("<priority>0.5</priority><changefreq>daily</changefreq>")
    ),
    "priority-above-one": urlset(url("<priority>1.5</priority>")),
    "month-13": urlset(url("<lastmod>2024-13-01</lastmod>")),
    # W3C Datetime allows hh:mm without seconds; xs:dateTime does not.
    "datetime-without-seconds": urlset(url("<lastmod>2024-05-10T10:00+00:00</lastmod>")),
    "bad-changefreq": urlset(url("<changefreq>sometimes</changefreq>")),
    "empty-urlset": urlset(""),
    "loc-11-chars": urlset(url(loc="http://a.b/")),
    "loc-2049-chars": urlset(url(loc="https://example.com/" + "a" * 2029)),
    "url-without-loc": urlset("<url><lastmod>2024-05-10</lastmod></url>"),
    "loc-in-wrong-namespace": urlset(
        '<url><loc xmlns="http://www.google.com/schemas/sitemap/0.84">'
        "https://example.com/</loc></url>"
    ),
    "video-children-out-of-order": urlset(
        url(
            VIDEO.replace(
                "<video:thumbnail_loc>https://example.com/t.jpg</video:thumbnail_loc>"
                "<video:title>Grilling steaks</video:title>",
                "<video:title>Grilling steaks</video:title>"
                "<video:thumbnail_loc>https://example.com/t.jpg</video:thumbnail_loc>",
            )
        )
    ),
    "video-title-over-100-chars": urlset(url(VIDEO.replace("Grilling steaks", "x" * 101))),
    "image-without-loc": urlset(
        url("<image:image><image:caption>A cat</image:caption></image:image>")
    ),
    "news-without-title": urlset(
        url(NEWS.replace("<news:title>Something happened</news:title>", ""))
    ),
    "news-language-uppercase": urlset(url(NEWS.replace(">en<", ">EN<"))),
    "hreflang-not-a-language": urlset(
        url('<xhtml:link rel="alternate" hreflang="de_DE" href="https://example.com/de/"/>')
    ),
    "extension-before-core-child": urlset(
        "<url><loc>https://example.com/</loc>" + IMAGE + "<lastmod>2024-05-10</lastmod></url>"
    ),
    "index-with-changefreq": INDEX.replace(
        b"<lastmod>2024-05-10</lastmod>",
        b"<lastmod>2024-05-10</lastmod><changefreq>daily</changefreq>",
    ),
    "empty-index": b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>',
}


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("document", INVALID.values(), ids=INVALID.keys())
def test_invalid_documents_fail(document: bytes, profile: str) -> None:
    with pytest.raises(AssertionError, match="invalid against"):
        validate(document, profile)
    assert not is_valid(document, profile)


# --- unknown namespaces: the one difference between strict and lax -----------------

UNKNOWN = urlset(url('<acme:rating xmlns:acme="https://acme.example/ns">5</acme:rating>'))


@pytest.mark.parametrize("profile", ["core", "strict"])
def test_unknown_namespace_rejected_by_strict_wildcards(profile: str) -> None:
    with pytest.raises(AssertionError, match=r"acme\.example"):
        validate(UNKNOWN, profile)


def test_unknown_namespace_accepted_by_lax() -> None:
    validate(UNKNOWN, "lax")


def test_lax_still_validates_known_extensions() -> None:
    with pytest.raises(AssertionError):
        validate(INVALID["video-children-out-of-order"], "lax")


# --- boundaries: the limits bite exactly where the schema says -------------------


def test_loc_length_bounds_are_inclusive() -> None:
    validate(urlset(url(loc="http://a.bc/")))  # 12 characters
    validate(urlset(url(loc="https://example.com/" + "a" * 2028)))  # 2048 characters


@pytest.mark.parametrize("value", ["0.0", "1.0", "1", ".5"])
def test_priority_range_is_inclusive(value: str) -> None:
    validate(urlset(url(f"<priority>{value}</priority>")))


@pytest.mark.parametrize(
    "value", ["2024-05-10", "2024-05-10T10:00:00Z", "2024-05-10T10:00:00.5-05:00"]
)
def test_lastmod_accepts_date_and_full_datetime(value: str) -> None:
    validate(urlset(url(f"<lastmod>{value}</lastmod>")))


# --- the harness itself ------------------------------------------------------------


def test_error_names_line_and_element() -> None:
    document = urlset(url("<priority>0.5</priority><changefreq>daily</changefreq>"))
    with pytest.raises(AssertionError) as caught:
        validate(document)
    message = str(caught.value)
    assert "line 3," in message
    assert "{http://www.sitemaps.org/schemas/sitemap/0.9}changefreq" in message
    assert "SCHEMAV_ELEMENT_CONTENT" in message


def test_malformed_xml_is_an_assertion_error() -> None:
    with pytest.raises(AssertionError, match="not well-formed"):
        validate(b"<urlset><url></urlset>")


@pytest.mark.parametrize(
    "document",
    [
        b"<html/>",
        # The pre-2006 Google namespace is not the sitemaps.org one.
        b'<urlset xmlns="http://www.google.com/schemas/sitemap/0.84">'
        b"<url><loc>https://example.com/</loc></url></urlset>",
        b"<urlset><url><loc>https://example.com/</loc></url></urlset>",
    ],
    ids=["html", "old-google-namespace", "no-namespace"],
)
def test_unknown_root_is_rejected(document: bytes) -> None:
    with pytest.raises(AssertionError, match="root element"):
        validate(document)


def test_external_entities_are_not_resolved(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("https://leaked.example/")
    document = (
        f'<?xml version="1.0"?>\n<!DOCTYPE urlset [<!ENTITY x SYSTEM "{secret.as_uri()}">]>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>&x;</loc></url></urlset>"
    ).encode()
    # Resolved, the entity would make a valid loc; unresolved, libxml2 cannot validate.
    with pytest.raises(AssertionError, match="entity reference"):
        validate(document)


def test_unknown_profile_is_a_usage_error() -> None:
    with pytest.raises(ValueError, match="unknown profile"):
        validate(PLAIN, "loose")


def test_schemas_are_compiled_once() -> None:
    validate(PLAIN, "strict")
    before = xsd._schema.cache_info()
    validate(PLAIN, "strict")
    after = xsd._schema.cache_info()
    assert after.misses == before.misses
    assert after.hits == before.hits + 1


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("root", [xsd.URLSET_TAG, xsd.SITEMAPINDEX_TAG])
def test_built_schemas_never_point_off_the_machine(root: str, profile: str, tmp_path: Path) -> None:
    entry = xsd.build_schema_dir(root, profile, tmp_path)
    assert entry.parent == tmp_path
    loading = [f"{{{XS}}}{name}" for name in ("import", "include", "redefine", "override")]
    for path in tmp_path.glob("*.xsd"):
        for element in etree.parse(str(path)).getroot().iter(*loading):
            location = element.get("schemaLocation")
            assert location is not None, f"{path.name}: import without schemaLocation"
            assert "://" not in location, f"{path.name} imports {location}"
            assert (tmp_path / location).is_file()
    core = "sitemap.xsd" if root == xsd.URLSET_TAG else "siteindex.xsd"
    wildcards = re.findall(r'processContents="(\w+)"', (tmp_path / core).read_text("utf-8"))
    assert wildcards, "the core schema should have wildcards"
    assert set(wildcards) == {"lax" if profile == "lax" else "strict"}


def test_xhtml_import_is_the_only_rewrite(tmp_path: Path, _schemas: Path) -> None:
    xsd.build_schema_dir(xsd.URLSET_TAG, "strict", tmp_path)
    for name in ("sitemap.xsd", "sitemap-image.xsd", "sitemap-video.xsd", "sitemap-news.xsd"):
        assert (tmp_path / name).read_bytes() == (_schemas / name).read_bytes()
    original = (_schemas / "xhtml1-strict.xsd").read_text("utf-8")
    assert 'schemaLocation="http://www.w3.org/2001/xml.xsd"' in original
    assert 'schemaLocation="xml.xsd"' in (tmp_path / "xhtml1-strict.xsd").read_text("utf-8")


def test_namespace_constants_match_the_schemas(_schemas: Path) -> None:
    expected = {
        "sitemap.xsd": xsd.SITEMAP_NS,
        "siteindex.xsd": xsd.SITEMAP_NS,
        "sitemap-image.xsd": xsd.IMAGE_NS,
        "sitemap-video.xsd": xsd.VIDEO_NS,
        "sitemap-news.xsd": xsd.NEWS_NS,
        "xhtml1-strict.xsd": xsd.XHTML_NS,
        "xml.xsd": xsd.XML_NS,
    }
    for name, namespace in expected.items():
        text = (_schemas / name).read_text("utf-8")
        assert f'targetNamespace="{namespace}"' in text, name


def test_shared_schemas_are_unmodified(_schemas: Path) -> None:
    sums = (_schemas / "SHA256SUMS").read_text("utf-8").split("\n")
    checked = 0
    for line in filter(None, sums):
        digest, name = line.split()
        assert hashlib.sha256((_schemas / name).read_bytes()).hexdigest() == digest, name
        checked += 1
    assert checked == 7


def test_locate_honours_the_environment(tmp_path: Path) -> None:
    assert xsd.locate_xsd_dir({"SITEMAP_XSD_DIR": str(tmp_path)}) == tmp_path
    default = xsd.locate_xsd_dir({})
    assert default == xsd.PROJECT_ROOT.parent / "shared" / "xsd"
    assert xsd.locate_xsd_dir({"SITEMAP_XSD_DIR": ""}) == default
