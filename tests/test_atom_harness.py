"""The Atom harness (``atom.py``) must reject as surely as it accepts.

A checker that passes everything would hide every feed bug, so each broken document
below is the valid one with one deliberate defect, and each must raise with a message
naming that defect. The Atom namespace is written out literally here (not taken from
``atom.py``) so a typo there cannot cancel out in the tests.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import atom
import pytest
from atom import (
    FeedEntry,
    FeedSummary,
    check_atom_rules,
    check_newest_first,
    grammar_as_rng,
    parse_date,
    read_feed,
    validate_atom,
)

# The shape the project's /sitemap-recent.atom takes: a self link, one feed-level author,
# entries with an alternate link and no content. The second entry's offset differs from
# the first's, so ordering compares instants, not text.
VALID = b"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <id>https://example.com/sitemap-recent.atom</id>
  <title>Recently changed pages</title>
  <updated>2024-05-10T12:00:00+02:00</updated>
  <author><name>example.com</name></author>
  <link rel="self" type="application/atom+xml" href="https://example.com/sitemap-recent.atom"/>
  <link rel="alternate" type="text/html" href="https://example.com/"/>
  <entry>
    <id>https://example.com/news/b</id>
    <title>https://example.com/news/b</title>
    <updated>2024-05-10T12:00:00+02:00</updated>
    <link rel="alternate" href="https://example.com/news/b"/>
  </entry>
  <entry>
    <id>https://example.com/news/a</id>
    <title>https://example.com/news/a</title>
    <updated>2024-05-10T09:30:00Z</updated>
    <link href="https://example.com/news/a"/>
  </entry>
</feed>
"""

FIRST_ENTRY = b"""  <entry>
    <id>https://example.com/news/b</id>
    <title>https://example.com/news/b</title>
    <updated>2024-05-10T12:00:00+02:00</updated>
    <link rel="alternate" href="https://example.com/news/b"/>
  </entry>
"""

# Most of the grammar at once (every construct is one the RFC defines): if the grammar
# were mangled in conversion, something here would stop validating.
RICH = b"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:ext="urn:example:ext"
      xml:lang="en" xml:base="https://example.com/">
  <title type="text">Rich</title>
  <subtitle type="html">&lt;b&gt;all&lt;/b&gt; the parts</subtitle>
  <updated>2024-05-10T12:00:00.250Z</updated>
  <id>tag:example.com,2024:feed</id>
  <link rel="alternate" type="text/html" hreflang="en" href="/"/>
  <link rel="alternate" type="text/html" hreflang="fr" href="/fr/"/>
  <link rel="http://example.com/rel/custom" href="/custom" length="10" title="t"/>
  <rights type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Mine</p></div></rights>
  <generator uri="https://example.com/gen" version="1.0">gen</generator>
  <icon>/favicon.ico</icon>
  <logo>/logo.png</logo>
  <category term="news" scheme="https://example.com/cats" label="News"/>
  <contributor><name>C</name><email>c@example.com</email><uri>https://c.example/</uri></contributor>
  <ext:simple>value</ext:simple>
  <ext:structured a="1"><ext:inner/></ext:structured>
  <entry>
    <id>urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a</id>
    <title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">Entry <em>one</em></div></title>
    <updated>2024-05-10T11:00:00Z</updated>
    <published>2024-05-09T11:00:00-05:00</published>
    <author><name>A</name><ext:nick>a</ext:nick></author>
    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Hi</p></div></content>
    <summary>Short</summary>
    <source>
      <id>tag:example.org,2024:other</id>
      <title>Other</title>
      <updated>2024-05-01T00:00:00Z</updated>
      <author><name>S</name></author>
    </source>
  </entry>
  <entry>
    <id>urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6b</id>
    <title>Two</title>
    <updated>2024-05-10T10:00:00Z</updated>
    <author><name>B</name></author>
    <content type="image/png" src="/two.png"/>
    <summary>A picture</summary>
  </entry>
</feed>
"""

ALL_CHECKS: tuple[Callable[[bytes], object], ...] = (
    validate_atom,
    read_feed,
    check_atom_rules,
    check_newest_first,
)


def broken(old: bytes, new: bytes, document: bytes = VALID) -> bytes:
    """``document`` with ``old`` replaced by ``new``, which must occur exactly once."""
    # Otherwise a typo in ``old`` would leave the valid document under test, and a
    # "must fail" test would fail for the wrong reason (or, inverted, pass for one).
    assert document.count(old) == 1, old
    return document.replace(old, new)


# --- valid documents ---------------------------------------------------------------


@pytest.mark.parametrize("check", ALL_CHECKS, ids=lambda check: check.__name__)
def test_the_valid_feed_passes(check: Callable[[bytes], object]) -> None:
    check(VALID)


def test_read_feed_summarizes_what_an_aggregator_sees() -> None:
    assert read_feed(VALID) == FeedSummary(
        id="https://example.com/sitemap-recent.atom",
        title="Recently changed pages",
        updated=datetime(2024, 5, 10, 10, 0, tzinfo=UTC),
        self_link="https://example.com/sitemap-recent.atom",
        entries=[
            FeedEntry(
                "https://example.com/news/b",
                "https://example.com/news/b",
                datetime(2024, 5, 10, 10, 0, tzinfo=UTC),
            ),
            FeedEntry(
                "https://example.com/news/a",
                "https://example.com/news/a",
                datetime(2024, 5, 10, 9, 30, tzinfo=UTC),
            ),
        ],
    )


def test_read_feed_times_are_aware_and_in_utc() -> None:
    summary = read_feed(VALID)
    for when in (summary.updated, *(entry.updated for entry in summary.entries)):
        assert when.utcoffset() is not None
        assert when.tzinfo == UTC


def test_read_feed_without_a_self_link_says_none() -> None:
    document = broken(
        b'  <link rel="self" type="application/atom+xml"'
        b' href="https://example.com/sitemap-recent.atom"/>\n',
        b"",
    )
    assert read_feed(document).self_link is None


@pytest.mark.parametrize("check", [validate_atom, check_atom_rules, check_newest_first])
def test_a_feed_using_most_of_the_grammar_passes(check: Callable[[bytes], object]) -> None:
    check(RICH)


def test_entries_with_equal_times_may_come_in_any_order() -> None:
    document = broken(b"2024-05-10T09:30:00Z", b"2024-05-10T10:00:00Z")
    check_newest_first(document)
    assert read_feed(document).entries[0].updated == read_feed(document).entries[1].updated


def test_an_author_on_every_entry_replaces_the_feed_author() -> None:
    document = broken(b"  <author><name>example.com</name></author>\n", b"")
    for entry_id in (b"news/b</id>", b"news/a</id>"):
        document = broken(entry_id, entry_id + b"<author><name>E</name></author>", document)
    check_atom_rules(document)
    validate_atom(document)


def test_dates_in_rfc_3339_forms_are_read() -> None:
    assert parse_date("2024-05-10T12:00:00+02:00") == datetime(2024, 5, 10, 10, tzinfo=UTC)
    assert parse_date("2024-05-10T10:00:00.123456789Z") == datetime(
        2024, 5, 10, 10, 0, 0, 123456, tzinfo=UTC
    )
    # A leap second is valid RFC 3339; it is read as the second before it.
    assert parse_date("2016-12-31T23:59:60Z") == datetime(2016, 12, 31, 23, 59, 59, tzinfo=UTC)


# --- broken documents ----------------------------------------------------------------

NOT_WELL_FORMED = broken(b"</feed>", b"</fed>")


@pytest.mark.parametrize("check", ALL_CHECKS, ids=lambda check: check.__name__)
def test_a_document_that_is_not_well_formed_fails_every_check(
    check: Callable[[bytes], object],
) -> None:
    # feedparser's word for it is "bozo" and its SAX error; lxml's is "not well-formed".
    with pytest.raises(AssertionError, match=r"not well-formed|bozo.*SAXParseException"):
        check(NOT_WELL_FORMED)


MISSING_FEED_ID = broken(b"  <id>https://example.com/sitemap-recent.atom</id>\n", b"")


def test_a_feed_without_an_id_is_invalid_by_the_grammar() -> None:
    with pytest.raises(AssertionError, match=r"RELAX NG grammar(.|\n)*element id"):
        validate_atom(MISSING_FEED_ID)


def test_a_feed_without_an_id_breaks_the_rules() -> None:
    with pytest.raises(AssertionError, match=r"the feed has 0 atom:id elements"):
        check_atom_rules(MISSING_FEED_ID)


def test_a_feed_without_an_id_is_no_feed_to_read() -> None:
    with pytest.raises(AssertionError, match=r"found no feed id"):
        read_feed(MISSING_FEED_ID)


MISSING_ENTRY_UPDATED = broken(b"    <updated>2024-05-10T09:30:00Z</updated>\n", b"")


def test_an_entry_without_updated_is_invalid_by_the_grammar() -> None:
    with pytest.raises(AssertionError, match=r"RELAX NG grammar(.|\n)*element updated"):
        validate_atom(MISSING_ENTRY_UPDATED)


def test_an_entry_without_updated_breaks_the_rules() -> None:
    with pytest.raises(
        AssertionError,
        match=r"entry 2 \(id 'https://example.com/news/a'\) has 0 atom:updated elements",
    ):
        check_atom_rules(MISSING_ENTRY_UPDATED)


def test_an_entry_without_updated_cannot_be_read_or_ordered() -> None:
    with pytest.raises(AssertionError, match=r"no updated_parsed in entry 2"):
        read_feed(MISSING_ENTRY_UPDATED)
    with pytest.raises(AssertionError, match=r"entry 2 .* has no atom:updated"):
        check_newest_first(MISSING_ENTRY_UPDATED)


NO_ZONE = broken(b"2024-05-10T09:30:00Z", b"2024-05-10T09:30:00")


def test_a_date_without_a_zone_breaks_the_rules() -> None:
    with pytest.raises(AssertionError, match=r"'2024-05-10T09:30:00' has no time zone"):
        check_atom_rules(NO_ZONE)
    with pytest.raises(AssertionError, match=r"has no time zone"):
        check_newest_first(NO_ZONE)


@pytest.mark.parametrize(
    ("date", "reason"),
    [
        (b"2024-05-10t09:30:00Z", "not an RFC 3339 date-time"),  # RFC 4287 3.3: upper case T
        (b"2024-05-10T09:30:00z", "not an RFC 3339 date-time"),  # and upper case Z
        (b"2024-05-10 09:30:00Z", "not an RFC 3339 date-time"),
        (b"2024-05-10", "not an RFC 3339 date-time"),
        (b"Fri, 10 May 2024 09:30:00 GMT", "not an RFC 3339 date-time"),
        (b"2024-13-10T09:30:00Z", "not a valid date-time"),
        (b"2024-05-10T09:30:00+24:00", "not a valid date-time"),
    ],
)
def test_dates_that_are_not_rfc_3339_break_the_rules(date: bytes, reason: str) -> None:
    with pytest.raises(AssertionError, match=reason):
        check_atom_rules(broken(b"2024-05-10T09:30:00Z", date))


def test_a_published_date_is_checked_too() -> None:
    document = broken(
        b"<updated>2024-05-10T09:30:00Z</updated>",
        b"<updated>2024-05-10T09:30:00Z</updated><published>2024-05-10</published>",
    )
    with pytest.raises(AssertionError, match=r"atom:published on line \d+: '2024-05-10'"):
        check_atom_rules(document)


@pytest.mark.parametrize(
    ("entry_id", "reason"),
    [
        (b"/news/a", r"'/news/a' .* is not absolute \(it has no scheme\)"),
        (b"news/a", r"'news/a' .* is not absolute"),
        (b" https://example.com/news/a", r"' https://example.com/news/a' .* is not absolute"),
        (b"https://example.com/news a", r"'https://example.com/news a' .* not an absolute IRI"),
    ],
)
def test_an_id_that_is_not_an_absolute_iri_breaks_the_rules(entry_id: bytes, reason: str) -> None:
    document = broken(b"<id>https://example.com/news/a</id>", b"<id>" + entry_id + b"</id>")
    with pytest.raises(AssertionError, match=reason):
        check_atom_rules(document)


def test_a_relative_feed_id_breaks_the_rules() -> None:
    document = broken(
        b"<id>https://example.com/sitemap-recent.atom</id>", b"<id>sitemap-recent.atom</id>"
    )
    with pytest.raises(AssertionError, match=r"atom:id 'sitemap-recent.atom' .* not absolute"):
        check_atom_rules(document)


def test_a_duplicate_entry_id_breaks_the_rules() -> None:
    document = broken(
        b"<id>https://example.com/news/a</id>", b"<id>https://example.com/news/b</id>"
    )
    with pytest.raises(
        AssertionError,
        match=r"entry 2 \(id 'https://example.com/news/b'\) repeats the atom:id"
        r" 'https://example.com/news/b' of entry 1",
    ):
        check_atom_rules(document)


WRONG_ORDER = broken(b"2024-05-10T09:30:00Z", b"2024-05-10T10:00:01Z")


def test_entries_out_of_order_break_the_project_rule() -> None:
    with pytest.raises(
        AssertionError,
        match=r"entry 2 \(id 'https://example.com/news/a'\), updated 2024-05-10T10:00:01\+00:00,"
        r" is newer than entry 1",
    ):
        check_newest_first(WRONG_ORDER)


def test_order_is_the_project_rule_alone() -> None:
    # RFC 4287 does not order entries: only check_newest_first may complain.
    validate_atom(WRONG_ORDER)
    check_atom_rules(WRONG_ORDER)


UNKNOWN_IN_FEED = broken(b"  <author>", b"  <bogus>x</bogus>\n  <author>")
UNKNOWN_IN_ENTRY = broken(
    b'<link href="https://example.com/news/a"/>',
    b'<link href="https://example.com/news/a"/><changed>yes</changed>',
)


@pytest.mark.parametrize(
    ("document", "element"),
    [(UNKNOWN_IN_FEED, "bogus"), (UNKNOWN_IN_ENTRY, "changed")],
    ids=["in the feed", "in an entry"],
)
def test_an_unknown_atom_element_is_invalid_by_the_grammar(document: bytes, element: str) -> None:
    # The grammar lets extension elements in only from other namespaces (element * - atom:*).
    with pytest.raises(AssertionError, match=rf"RELAX NG grammar(.|\n)*{element}"):
        validate_atom(document)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        # Each is a different part of the converted grammar: a required attribute, the
        # order of metadata and entries, an xhtml construct, a datatype pattern.
        (b'<link href="https://example.com/news/a"/>', b"<link/>", "link failed to validate attr"),
        (b"  <author>", b"  <entry/>\n  <author>", "entry"),
        (b"<title>Recently changed pages</title>", b'<title type="xhtml">text</title>', "title"),
        (b'<link rel="alternate" type="text/html"', b'<link rel="alternate" type="html"', "type"),
    ],
    ids=["link without href", "entry before the feed's title", "xhtml without div", "bad type"],
)
def test_the_grammar_rejects_what_rfc_4287_forbids(old: bytes, new: bytes, message: str) -> None:
    with pytest.raises(AssertionError, match=rf"RELAX NG grammar(.|\n)*{message}"):
        validate_atom(broken(old, new))


def test_the_same_element_in_another_namespace_is_a_valid_extension() -> None:
    validate_atom(broken(b"  <author>", b'  <bogus xmlns="urn:example:x">x</bogus>\n  <author>'))


def test_an_unknown_unqualified_attribute_is_invalid_by_the_grammar() -> None:
    # undefinedAttribute excludes local:* (no namespace): the part of the grammar that
    # rnc2rng's output needed mending for must still reject.
    document = broken(b'<link href="https://example.com/news/a"/>', b'<link href="x" foo="1"/>')
    with pytest.raises(AssertionError, match=r"RELAX NG grammar(.|\n)*foo"):
        validate_atom(document)


def test_an_attribute_in_a_foreign_namespace_is_valid() -> None:
    validate_atom(
        broken(
            b'<link href="https://example.com/news/a"/>',
            b'<link xmlns:x="urn:x" x:foo="1" href="https://example.com/news/a"/>',
        )
    )


def test_no_author_anywhere_breaks_the_rules() -> None:
    document = broken(b"  <author><name>example.com</name></author>\n", b"")
    with pytest.raises(AssertionError, match=r"entry 1 .* has no atom:author, and neither"):
        check_atom_rules(document)


def test_an_entry_without_content_needs_an_alternate_link() -> None:
    document = broken(
        b'<link rel="alternate" href="https://example.com/news/b"/>',
        b'<link rel="related" href="https://example.com/news/b"/>',
    )
    with pytest.raises(AssertionError, match=r'entry 1 .* neither atom:content nor a rel="alt'):
        check_atom_rules(document)


def test_two_alternate_links_of_one_type_break_the_rules() -> None:
    document = broken(
        b'<link rel="alternate" type="text/html" href="https://example.com/"/>',
        b'<link rel="alternate" type="text/html" href="https://example.com/"/>'
        b'<link type="text/html" href="https://example.com/other"/>',
    )
    with pytest.raises(
        AssertionError, match=r"the feed has more than one rel=\"alternate\".*'text/html'"
    ):
        check_atom_rules(document)


def test_two_titles_on_an_entry_break_the_rules() -> None:
    document = broken(
        b"<title>https://example.com/news/a</title>",
        b"<title>https://example.com/news/a</title><title>again</title>",
    )
    with pytest.raises(AssertionError, match=r"entry 2 .* has 2 atom:title elements"):
        check_atom_rules(document)


def test_an_entry_document_is_not_a_feed() -> None:
    document = FIRST_ENTRY.replace(b"<entry>", b'<entry xmlns="http://www.w3.org/2005/Atom">')
    with pytest.raises(AssertionError, match=r"root element is .*entry"):
        check_atom_rules(document)


def test_every_problem_is_listed_at_once() -> None:
    document = broken(b"2024-05-10T09:30:00Z", b"2024-05-10T09:30:00", MISSING_FEED_ID)
    with pytest.raises(AssertionError) as raised:
        check_atom_rules(document)
    assert "0 atom:id" in str(raised.value)
    assert "no time zone" in str(raised.value)


# --- what the grammar alone lets through ---------------------------------------------


@pytest.mark.parametrize(
    "document",
    [
        NO_ZONE,
        broken(b"<id>https://example.com/news/a</id>", b"<id>/news/a</id>"),
        broken(b"  <author><name>example.com</name></author>\n", b""),
    ],
    ids=["date without a zone", "relative id", "no author"],
)
def test_the_grammar_alone_misses_what_the_rules_catch(document: bytes) -> None:
    # Why check_atom_rules exists: xsd:dateTime allows no zone, atomUri is any text, and
    # the author rule is a Schematron annotation lxml does not run.
    validate_atom(document)
    with pytest.raises(AssertionError):
        check_atom_rules(document)


# --- what a subscriber's parser makes of it -----------------------------------------


def test_a_non_xml_content_type_makes_feedparser_complain() -> None:
    with pytest.raises(AssertionError, match=r"bozo.*NonXMLContentType"):
        read_feed(VALID, content_type="text/html; charset=utf-8")


@pytest.mark.parametrize(
    ("document", "version"),
    [
        (
            b'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title></channel></rss>',
            "rss20",
        ),
        (b"", ""),
    ],
    ids=["RSS 2.0", "empty"],
)
def test_a_non_atom_document_is_not_read_as_atom(document: bytes, version: str) -> None:
    with pytest.raises(AssertionError, match=rf"reads the document as '{version}', not Atom 1.0"):
        read_feed(document)


# --- the grammar and the harness's own plumbing ------------------------------------------


def test_the_grammar_is_rfc_4287_appendix_b() -> None:
    text = atom.GRAMMAR.read_text(encoding="utf-8")
    assert "# RELAX NG Compact Syntax Grammar for the\n# Atom Format Specification Version 11" in (
        text
    )
    assert text.rstrip().endswith("# EOF")
    rng = grammar_as_rng(text)
    # Every named pattern of the RFC's grammar survives the conversion.
    for name in (
        "atomFeed",
        "atomEntry",
        "atomDateConstruct",
        "extensionElement",
        "undefinedAttribute",
        "xhtmlDiv",
    ):
        assert f'<define name="{name}">' in rng, name
    assert 'xmlns:local=""' not in rng


@pytest.mark.parametrize(
    ("ci", "outcome"), [("", pytest.skip.Exception), ("true", pytest.fail.Exception)]
)
def test_a_missing_dependency_skips_or_fails_under_ci(
    monkeypatch: pytest.MonkeyPatch, ci: str, outcome: type[BaseException]
) -> None:
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match=r"need no_such_module_for_atom.*pip install -e"):
        atom._require("no_such_module_for_atom")
