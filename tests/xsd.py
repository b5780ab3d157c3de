"""Offline XSD validation of sitemap documents, for the test suite.

The official schemas live outside the repository, read-only, in ``../shared/xsd``
(see ``SOURCES.md`` there). They are never copied into the project nor edited: every
variant a profile needs is written to a temporary directory, compiled once, and cached.

Profiles:

``core``
    The official ``sitemap.xsd`` or ``siteindex.xsd`` alone. Its ``processContents="strict"``
    wildcards have no declarations to match, so *any* extension element fails here.
``strict``
    The core schema plus the image, video, news and XHTML schemas: extension elements are
    validated against their schemas and elements from unknown namespaces are rejected.
``lax``
    As ``strict``, with the core schema's wildcards switched to ``processContents="lax"``:
    known extensions are still validated, unknown namespaces are skipped (as Google does).

One compiled schema cannot hold both ``sitemap.xsd`` and ``siteindex.xsd`` (they share a
target namespace), so the schema is picked from the document's root element.

Usage::

    from xsd import validate

    validate(body)                  # strict profile; AssertionError with lxml's log if invalid
    validate(body, profile="lax")
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import pytest
from lxml import etree

# Namespace URIs exactly as the schemas declare them (their targetNamespace).
SITEMAP_NS: Final = "http://www.sitemaps.org/schemas/sitemap/0.9"
IMAGE_NS: Final = "http://www.google.com/schemas/sitemap-image/1.1"
VIDEO_NS: Final = "http://www.google.com/schemas/sitemap-video/1.1"
NEWS_NS: Final = "http://www.google.com/schemas/sitemap-news/0.9"
XHTML_NS: Final = "http://www.w3.org/1999/xhtml"
XML_NS: Final = "http://www.w3.org/XML/1998/namespace"
_XS_NS: Final = "http://www.w3.org/2001/XMLSchema"

#: The validation profiles :func:`validate` accepts.
PROFILES: Final = ("core", "strict", "lax")

URLSET_TAG: Final = f"{{{SITEMAP_NS}}}urlset"
SITEMAPINDEX_TAG: Final = f"{{{SITEMAP_NS}}}sitemapindex"

# Root element -> the official schema that declares it.
_CORE_SCHEMA: Final[Mapping[str, str]] = {
    URLSET_TAG: "sitemap.xsd",
    SITEMAPINDEX_TAG: "siteindex.xsd",
}

# Extension namespace -> schema file, imported by the strict and lax profiles.
_EXTENSIONS: Final[Mapping[str, str]] = {
    IMAGE_NS: "sitemap-image.xsd",
    VIDEO_NS: "sitemap-video.xsd",
    NEWS_NS: "sitemap-news.xsd",
    XHTML_NS: "xhtml1-strict.xsd",
}

# xhtml1-strict.xsd imports the XML namespace (for xml:lang) from this file.
_XML_XSD: Final = "xml.xsd"
_XHTML_XSD: Final = _EXTENSIONS[XHTML_NS]

# The entry point written next to the schema copies.
_WRAPPER: Final = "wrapper.xsd"

# Elements whose schemaLocation makes libxml2 load another file.
_LOADING_ELEMENTS: Final = tuple(
    f"{{{_XS_NS}}}{name}" for name in ("import", "include", "redefine")
)

#: The repository root: this file is ``<root>/tests/xsd.py``.
PROJECT_ROOT: Final = Path(os.path.abspath(__file__)).parent.parent


def locate_xsd_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Return where the schema folder should be, whether or not it exists.

    ``SITEMAP_XSD_DIR`` (if set and non-empty) wins; otherwise the folder is
    ``../shared/xsd`` beside the repository root.
    """
    env = os.environ if environ is None else environ
    override = env.get("SITEMAP_XSD_DIR", "")
    if override:
        return Path(override).expanduser().absolute()
    return PROJECT_ROOT.parent / "shared" / "xsd"


#: Where the schemas were looked for (named in skip messages).
XSD_SEARCHED: Final = locate_xsd_dir()

#: The schema folder, or ``None`` when it is absent.
XSD_DIR: Final[Path | None] = XSD_SEARCHED if XSD_SEARCHED.is_dir() else None


#: The files :func:`build_schema_dir` reads from the schema folder.
SCHEMA_FILES: Final = (*_CORE_SCHEMA.values(), *_EXTENSIONS.values(), _XML_XSD)


def missing_reason(searched: Path = XSD_SEARCHED) -> str:
    """Why a test needing the schemas is skipped: where they were looked for, where they come from.

    The schemas are test data kept outside the repository (never copied into it), so a
    clone alone does not have them; the message says where to put them.
    """
    return (
        f"needs the official sitemap XSD schemas, not found in {searched}: they are test data"
        " kept outside the repository, in ../shared/xsd (SOURCES.md there says where each"
        f" comes from) or in $SITEMAP_XSD_DIR, holding {', '.join(SCHEMA_FILES)}"
    )


def require_xsd() -> Path:
    """Return :data:`XSD_DIR`, or skip the calling test when the schemas are absent.

    The skip is raised here, but ``conftest.py`` reports it at the test that needed the
    schemas, not at this line.
    """
    if XSD_DIR is None:
        pytest.skip(missing_reason())
    return XSD_DIR


def _safe_parser() -> etree.XMLParser:
    # Documents under test and schema files alike: never fetch anything, never expand
    # entities (no XXE, no billion laughs).
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)


def _rewrite_xml_import(tree: etree._ElementTree) -> int:
    """Point the ``xs:import`` of the XML namespace at the local ``xml.xsd``.

    The official file says ``schemaLocation="http://www.w3.org/2001/xml.xsd"``; left as
    is, libxml2 would try the network (or fail offline). Returns how many were rewritten.
    """
    count = 0
    for element in tree.getroot().iter(f"{{{_XS_NS}}}import"):
        if element.get("namespace") == XML_NS:
            element.set("schemaLocation", _XML_XSD)
            count += 1
    return count


def _make_wildcards_lax(tree: etree._ElementTree) -> int:
    """Switch every ``processContents="strict"`` wildcard to ``lax``; return how many."""
    count = 0
    for element in tree.getroot().iter(f"{{{_XS_NS}}}any", f"{{{_XS_NS}}}anyAttribute"):
        if element.get("processContents") == "strict":
            element.set("processContents", "lax")
            count += 1
    return count


def _write(tree: etree._ElementTree, path: Path) -> None:
    tree.write(str(path), xml_declaration=True, encoding="UTF-8")


def _check_offline(dest: Path) -> None:
    """Fail unless every schemaLocation in ``dest`` names a file inside ``dest``.

    This is what keeps compilation offline: libxml2 resolves imports itself, outside
    our parser's ``no_network`` setting, so no remote location may survive.
    """
    for path in sorted(dest.glob("*.xsd")):
        tree = etree.parse(str(path), _safe_parser())
        for element in tree.getroot().iter(*_LOADING_ELEMENTS):
            location = element.get("schemaLocation")
            if location is None:
                continue
            if "/" in location or ":" in location or not (dest / location).is_file():
                raise RuntimeError(
                    f"{path.name} would load {location!r}; only files beside it are allowed"
                )


def build_schema_dir(root_tag: str, profile: str, dest: Path) -> Path:
    """Write the schema files for ``root_tag`` under ``profile`` into ``dest``.

    Returns the file to compile. Originals are copied byte for byte unless the profile
    needs a variant; ``dest`` must be an existing, empty directory. Exposed so tests can
    inspect exactly what gets compiled.
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; expected one of {PROFILES}")
    try:
        core = _CORE_SCHEMA[root_tag]
    except KeyError:
        raise ValueError(f"no schema declares root element {root_tag!r}") from None
    source = require_xsd()

    if profile == "core":
        # The official file alone: it has no imports, so an exact copy is the schema.
        shutil.copyfile(source / core, dest / core)
        return dest / core

    if profile == "lax":
        tree = etree.parse(str(source / core), _safe_parser())
        if _make_wildcards_lax(tree) == 0:
            # Otherwise "lax" would silently be "strict" under another name.
            raise RuntimeError(f"{core} has no strict wildcard to relax")
        _write(tree, dest / core)
    else:
        shutil.copyfile(source / core, dest / core)

    for name in _EXTENSIONS.values():
        if name != _XHTML_XSD:
            shutil.copyfile(source / name, dest / name)
    xhtml = etree.parse(str(source / _XHTML_XSD), _safe_parser())
    if _rewrite_xml_import(xhtml) != 1:
        raise RuntimeError(f"{_XHTML_XSD}: expected exactly one import of {XML_NS}")
    _write(xhtml, dest / _XHTML_XSD)
    shutil.copyfile(source / _XML_XSD, dest / _XML_XSD)

    # A no-namespace schema that only imports: the one way to put several target
    # namespaces into a single compiled lxml schema.
    wrapper = etree.Element(f"{{{_XS_NS}}}schema", nsmap={"xs": _XS_NS})
    for namespace, name in ((SITEMAP_NS, core), *_EXTENSIONS.items()):
        etree.SubElement(wrapper, f"{{{_XS_NS}}}import", namespace=namespace, schemaLocation=name)
    _write(etree.ElementTree(wrapper), dest / _WRAPPER)

    _check_offline(dest)
    return dest / _WRAPPER


@functools.cache
def _schema(root_tag: str, profile: str) -> etree.XMLSchema:
    # Compiling the XHTML schema is the slow part; do it once per (root, profile) and
    # keep the compiled object, which no longer needs the temporary files.
    with tempfile.TemporaryDirectory(prefix="sitemap-xsd-") as tmp:
        entry = build_schema_dir(root_tag, profile, Path(tmp))
        return etree.XMLSchema(etree.parse(str(entry), _safe_parser()))


def _format_log(log: etree._ListErrorLog) -> str:
    return "\n".join(
        f"  line {entry.line}, column {entry.column}: {entry.message} [{entry.type_name}]"
        for entry in log
    )


def validate(document: bytes, profile: str = "strict") -> None:
    """Validate a serialized sitemap or sitemap index against the official schemas.

    Raises ``AssertionError`` carrying lxml's full error log when ``document`` is not
    well-formed, has a root other than ``urlset``/``sitemapindex`` in the sitemap
    namespace, is invalid under ``profile``, or holds entity references (they are never
    expanded, and libxml2 cannot validate around them). Raises ``ValueError`` for an unknown
    profile and skips the calling test when the schemas are absent.

    Not thread-safe: compiled schemas are shared and keep their error log.
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; expected one of {PROFILES}")
    require_xsd()
    try:
        root = etree.fromstring(document, _safe_parser())
    except etree.XMLSyntaxError as exc:
        raise AssertionError(
            f"document is not well-formed XML:\n{_format_log(exc.error_log)}"
        ) from exc
    if root.tag not in _CORE_SCHEMA:
        raise AssertionError(
            f"root element is {root.tag!r}; expected {URLSET_TAG!r} or {SITEMAPINDEX_TAG!r}"
        )
    schema = _schema(root.tag, profile)
    where = f"{_CORE_SCHEMA[root.tag]} (profile {profile!r})"
    try:
        valid = schema.validate(root)
    except etree.XMLSchemaValidateError as exc:
        # libxml2 refuses to walk a tree holding entity references, which is what an
        # unexpanded entity leaves behind; a sitemap has no business declaring any.
        raise AssertionError(
            f"document could not be validated against {where}:\n{_format_log(exc.error_log)}"
        ) from exc
    if not valid:
        raise AssertionError(
            f"document is invalid against {where}:\n{_format_log(schema.error_log)}"
        )


def is_valid(document: bytes, profile: str = "strict") -> bool:
    """Return whether :func:`validate` accepts ``document`` under ``profile``."""
    try:
        validate(document, profile)
    except AssertionError:
        return False
    return True
