"""Checks of an Atom 1.0 feed (RFC 4287) as its subscribers would see it, for the test suite.

Three independent views of one document, so a feed bug cannot hide behind a single
checker's blind spot:

:func:`validate_atom`
    The RELAX NG grammar of RFC 4287 (Appendix B), kept verbatim in ``data/atom.rnc`` and
    converted with ``rnc2rng`` (lxml reads only the XML syntax of RELAX NG).
:func:`read_feed`
    The feed as an aggregator reads it: feedparser, which must not flag the document as
    broken ("bozo"); returns a :class:`FeedSummary`.
:func:`check_atom_rules`
    RFC 4287's prose rules that the grammar leaves out (counts across entries, IRIs,
    RFC 3339 dates, the author rule, alternate links), read with lxml.
:func:`check_newest_first`
    This project's own rule: entries are listed newest first.

Each raises ``AssertionError`` naming what is wrong. Without ``rnc2rng`` or ``feedparser``
(the ``dev`` extra), the calling test is skipped, or fails when ``CI`` is set.

Usage::

    from atom import check_atom_rules, check_newest_first, read_feed, validate_atom

    validate_atom(body)
    check_atom_rules(body)
    check_newest_first(body)
    feed = read_feed(body, content_type=response.headers["Content-Type"])
"""

from __future__ import annotations

import calendar
import functools
import importlib
import io
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Final, NamedTuple

import pytest
from browser import in_ci
from lxml import etree

ATOM_NS: Final = "http://www.w3.org/2005/Atom"

#: RFC 4287's grammar, as published (see the header of the file for its source).
GRAMMAR: Final = Path(__file__).resolve().parent / "data" / "atom.rnc"

# rnc2rng declares every namespace of the compact grammar as a prefix on the root element,
# including the grammar's ``namespace local = ""``; but a prefix cannot be bound to the
# empty name in XML 1.0, so lxml refuses the output. The prefix is unused in the
# converted grammar (``local:*`` becomes ``<nsName ns=""/>``), so the declaration goes.
_EMPTY_PREFIX_DECLARATION: Final = ' xmlns:local=""'

# RFC 4287 section 4.2.7.2: a bare relation name stands for this IRI plus the name.
_IANA_RELATIONS: Final = "http://www.iana.org/assignments/relation/"

# RFC 3339 section 5.6 "date-time", with RFC 4287 section 3.3's restriction that "T" and
# "Z" are upper case. The values' ranges are checked by parsing, after the shape.
_DATE_TIME: Final = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})T(?P<time>\d{2}:\d{2}):(?P<second>\d{2})"
    r"(?P<fraction>\.\d+)?(?P<zone>Z|[+-]\d{2}:\d{2})"
)

# An absolute IRI (RFC 3987): a scheme, a colon, then characters IRIs may hold. Atom ids
# "MUST NOT be a relative reference" (RFC 4287 section 4.2.6), and are compared character
# by character, so surrounding whitespace would make two equal ids differ.
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_ABSOLUTE_IRI: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[^\s<>\"{}|\\^`\x00-\x1f\x7f]+")

# (element, children it needs exactly once, children it may have at most once), from
# RFC 4287 sections 4.1.1 and 4.1.2.
_FEED_ONE: Final = ("id", "title", "updated")
_FEED_AT_MOST_ONE: Final = ("generator", "icon", "logo", "rights", "subtitle")
_ENTRY_ONE: Final = ("id", "title", "updated")
_ENTRY_AT_MOST_ONE: Final = ("content", "published", "rights", "source", "summary")


def _atom(name: str) -> str:
    return f"{{{ATOM_NS}}}{name}"


def _require(module: str) -> ModuleType:
    """Import a dev-extra module; skip the calling test without it (fail it under CI)."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        reason = (
            f"the Atom checks need {module}, from the dev extra (pip install -e '.[dev]'): {error}"
        )
        if in_ci():
            pytest.fail(f"{reason} (CI is set, so they may not be skipped)", pytrace=False)
        pytest.skip(reason)


def _safe_parser() -> etree.XMLParser:
    # A served document is untrusted input: never fetch anything, never expand entities.
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)


def _format_log(log: etree._ListErrorLog) -> str:
    return "\n".join(
        f"  line {entry.line}, column {entry.column}: {entry.message}" for entry in log
    )


def _parse(document: bytes) -> etree._Element:
    parser = _safe_parser()
    try:
        return etree.fromstring(document, parser)
    except etree.XMLSyntaxError as exc:
        # The parser's own log: the exception's also carries whatever else libxml2 logged
        # earlier in this thread (a previous document's validation errors, say).
        raise AssertionError(
            f"document is not well-formed XML:\n{_format_log(parser.error_log)}"
        ) from exc


def grammar_as_rng(rnc: str) -> str:
    """Convert RELAX NG compact syntax to the XML syntax lxml reads (exposed for tests)."""
    rnc2rng = _require("rnc2rng")
    rng: str = rnc2rng.dumps(rnc2rng.loads(rnc))
    return rng.replace(_EMPTY_PREFIX_DECLARATION, "", 1)


@functools.cache
def _schema() -> etree.RelaxNG:
    # Converting and compiling take a moment; one compiled grammar serves every test.
    rng = grammar_as_rng(GRAMMAR.read_text(encoding="utf-8"))
    return etree.RelaxNG(etree.fromstring(rng.encode("utf-8"), _safe_parser()))


def validate_atom(document: bytes) -> None:
    """Validate an Atom document against RFC 4287's RELAX NG grammar.

    Raises ``AssertionError`` with the validator's messages when ``document`` is not
    well-formed or is invalid. The grammar alone accepts some documents RFC 4287 forbids
    (dates without a zone, relative ids, an entry without an author); see
    :func:`check_atom_rules`. Its Schematron annotations (the author and alternate link
    rules) are not run by lxml's RELAX NG validator; :func:`check_atom_rules` covers them.

    Not thread-safe: the compiled grammar is shared and keeps its error log.
    """
    schema = _schema()
    root = _parse(document)
    if not schema.validate(root):
        raise AssertionError(
            f"document is invalid against RFC 4287's RELAX NG grammar ({GRAMMAR.name}):\n"
            f"{_format_log(schema.error_log)}"
        )


class FeedEntry(NamedTuple):
    """One entry as feedparser reads it: the tuple ``(link, id, updated)``."""

    link: str
    id: str
    updated: datetime


@dataclass(frozen=True)
class FeedSummary:
    """What a subscriber's aggregator makes of a feed (all times aware, in UTC)."""

    id: str
    title: str
    updated: datetime
    #: The ``rel="self"`` link's href, or ``None`` when the feed has none.
    self_link: str | None
    entries: list[FeedEntry]


def _utc(parsed: time.struct_time) -> datetime:
    # feedparser gives UTC struct_times; timegm and back also folds a leap second into
    # the next minute, which datetime() alone would refuse. Fractions of seconds are lost
    # in feedparser already.
    return datetime.fromtimestamp(calendar.timegm(parsed), UTC)


def read_feed(document: bytes, content_type: str = "application/atom+xml") -> FeedSummary:
    """Parse ``document`` with feedparser, as an aggregator would, and summarize it.

    ``content_type`` is the response's Content-Type header: feedparser judges the document
    by it too (a non-XML type makes it "bozo"). Raises ``AssertionError`` naming
    feedparser's complaint when it flags the document, when it does not read it as Atom
    1.0, or when the feed or an entry lacks what the summary holds.
    """
    feedparser = _require("feedparser")
    # A file object, never the bytes themselves: feedparser would try a string or bytes
    # value as a URL or a file name first.
    result = feedparser.parse(io.BytesIO(document), response_headers={"content-type": content_type})
    if result.bozo:
        exception = result.get("bozo_exception")
        raise AssertionError(
            f"feedparser flags the document (bozo): {type(exception).__name__}: {exception}"
        )
    # No version at all (an empty document, say) is not bozo to feedparser.
    version = result.get("version", "")
    if version != "atom10":
        raise AssertionError(f"feedparser reads the document as {version!r}, not Atom 1.0")
    feed = result.feed
    missing = [key for key in ("id", "title", "updated_parsed") if key not in feed]
    if missing:
        raise AssertionError(f"feedparser found no feed {', '.join(missing)}")
    self_links = [link["href"] for link in feed.get("links", []) if link.get("rel") == "self"]
    entries = []
    for index, entry in enumerate(result.entries, start=1):
        missing = [key for key in ("link", "id", "updated_parsed") if key not in entry]
        if missing:
            raise AssertionError(f"feedparser found no {', '.join(missing)} in entry {index}")
        entries.append(FeedEntry(entry["link"], entry["id"], _utc(entry["updated_parsed"])))
    return FeedSummary(
        id=feed["id"],
        title=feed["title"],
        updated=_utc(feed["updated_parsed"]),
        self_link=self_links[0] if self_links else None,
        entries=entries,
    )


def parse_date(value: str) -> datetime:
    """Parse an Atom Date construct's text: an RFC 3339 date-time with a zone.

    Raises ``ValueError`` saying why ``value`` is not one. A leap second (``:60``) is
    accepted and read as the second before it (Python's datetime has no leap seconds).
    """
    match = _DATE_TIME.fullmatch(value)
    if match is None:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?", value):
            raise ValueError(f"{value!r} has no time zone (RFC 3339 needs Z or +hh:mm)")
        raise ValueError(
            f"{value!r} is not an RFC 3339 date-time (YYYY-MM-DDThh:mm:ss[.f](Z|+hh:mm))"
        )
    second = min(int(match["second"]), 59)
    # Python takes at most six fractional digits; RFC 3339 allows any number.
    fraction = (match["fraction"] or "")[:7]
    zone = "+00:00" if match["zone"] == "Z" else match["zone"]
    try:
        return datetime.fromisoformat(
            f"{match['date']}T{match['time']}:{second:02d}{fraction}{zone}"
        )
    except ValueError as error:
        raise ValueError(f"{value!r} is not a valid date-time: {error}") from None


def _entry_name(index: int, entry: etree._Element) -> str:
    ids = entry.findall(_atom("id"))
    return f"entry {index} (id {ids[0].text!r})" if len(ids) == 1 else f"entry {index}"


def _is_alternate(link: etree._Element) -> bool:
    # RFC 4287 section 4.2.7.2: no rel means "alternate".
    rel = link.get("rel", "alternate")
    return rel in ("alternate", _IANA_RELATIONS + "alternate")


def _check_counts(
    element: etree._Element, name: str, one: tuple[str, ...], at_most_one: tuple[str, ...]
) -> list[str]:
    problems = []
    for child in one:
        count = len(element.findall(_atom(child)))
        if count != 1:
            problems.append(f"{name} has {count} atom:{child} elements; it needs exactly one")
    for child in at_most_one:
        count = len(element.findall(_atom(child)))
        if count > 1:
            problems.append(f"{name} has {count} atom:{child} elements; at most one is allowed")
    return problems


def _check_alternates(element: etree._Element, name: str) -> list[str]:
    # RFC 4287 sections 4.1.1 and 4.1.2: one alternate link per (type, hreflang).
    seen: set[tuple[str | None, str | None]] = set()
    problems = []
    for link in element.findall(_atom("link")):
        if not _is_alternate(link):
            continue
        key = (link.get("type"), link.get("hreflang"))
        if key in seen:
            problems.append(
                f'{name} has more than one rel="alternate" atom:link with type={key[0]!r}'
                f" and hreflang={key[1]!r}"
            )
        seen.add(key)
    return problems


def check_atom_rules(document: bytes) -> None:
    """Check the RFC 4287 rules for an Atom feed document that its grammar does not enforce.

    On ``atom:feed``: exactly one ``atom:id``, ``atom:title`` and ``atom:updated``, at most
    one of its other single-valued children, an ``atom:author`` on the feed or on every
    entry (or in that entry's ``atom:source``), at most one alternate link per type and
    hreflang. On each ``atom:entry``: exactly one ``atom:id``, ``atom:title`` and
    ``atom:updated``, at most one of its other single-valued children, an alternate link
    (``rel="alternate"`` or no ``rel``) when it has no ``atom:content``, at most one
    alternate link per type and hreflang. Everywhere: every ``atom:id`` is an absolute IRI,
    every ``atom:updated`` and ``atom:published`` an RFC 3339 date-time with a zone.

    Entry ids must be unique. RFC 4287 section 4.1.1 allows an id to repeat when the
    ``atom:updated`` values differ (revisions of one entry); this is stricter, as a feed of
    recently changed URLs lists each URL once.

    Raises ``AssertionError`` listing every rule broken.
    """
    root = _parse(document)
    if root.tag != _atom("feed"):
        raise AssertionError(f"root element is {root.tag!r}; expected {_atom('feed')!r}")
    problems = _check_counts(root, "the feed", _FEED_ONE, _FEED_AT_MOST_ONE)
    problems += _check_alternates(root, "the feed")
    feed_has_author = bool(root.findall(_atom("author")))

    first_seen: dict[str, int] = {}
    for index, entry in enumerate(root.findall(_atom("entry")), start=1):
        name = _entry_name(index, entry)
        problems += _check_counts(entry, name, _ENTRY_ONE, _ENTRY_AT_MOST_ONE)
        problems += _check_alternates(entry, name)
        if not (
            feed_has_author
            or entry.findall(_atom("author"))
            or entry.findall(f"{_atom('source')}/{_atom('author')}")
        ):
            problems.append(f"{name} has no atom:author, and neither has the feed")
        if entry.find(_atom("content")) is None and not any(
            _is_alternate(link) for link in entry.findall(_atom("link"))
        ):
            problems.append(f'{name} has neither atom:content nor a rel="alternate" atom:link')
        for id_element in entry.findall(_atom("id")):
            value = id_element.text or ""
            if value in first_seen:
                problems.append(
                    f"{name} repeats the atom:id {value!r} of entry {first_seen[value]}"
                )
            else:
                first_seen[value] = index

    for id_element in root.iter(_atom("id")):
        value = id_element.text or ""
        if not _ABSOLUTE_IRI.fullmatch(value):
            why = "an absolute IRI" if _SCHEME.match(value) else "absolute (it has no scheme)"
            problems.append(
                f"atom:id {value!r} (line {id_element.sourceline}) is not {why}; RFC 4287"
                " section 4.2.6 forbids relative references"
            )
    for date_element in root.iter(_atom("updated"), _atom("published")):
        try:
            parse_date(date_element.text or "")
        except ValueError as error:
            tag = etree.QName(date_element).localname
            problems.append(f"atom:{tag} on line {date_element.sourceline}: {error}")

    if problems:
        raise AssertionError(
            "document breaks RFC 4287:\n" + "\n".join(f"  - {problem}" for problem in problems)
        )


def check_newest_first(document: bytes) -> None:
    """Check this project's rule that entries come newest first (``atom:updated`` never rises).

    Equal times may come in any order. Times are compared as instants, so differing zone
    offsets do not matter. Raises ``AssertionError`` naming each pair out of order, or an
    entry whose ``atom:updated`` is missing or unreadable.
    """
    root = _parse(document)
    previous: tuple[str, datetime] | None = None
    problems = []
    for index, entry in enumerate(root.findall(_atom("entry")), start=1):
        name = _entry_name(index, entry)
        updated = entry.find(_atom("updated"))
        if updated is None:
            raise AssertionError(f"{name} has no atom:updated; entries cannot be ordered")
        try:
            when = parse_date(updated.text or "")
        except ValueError as error:
            raise AssertionError(f"{name}: entries cannot be ordered: {error}") from None
        if previous is not None and when > previous[1]:
            problems.append(
                f"{name}, updated {when.isoformat()}, is newer than {previous[0]} before it,"
                f" updated {previous[1].isoformat()}"
            )
        previous = (name, when)
    if problems:
        raise AssertionError(
            "entries are not newest first:\n" + "\n".join(f"  - {p}" for p in problems)
        )
