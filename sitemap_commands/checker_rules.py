"""The rules of ``sitemap check``, and the streaming reader that applies them to one document.

Every rule has a short stable id (:data:`RULES`), a severity and a one-line meaning.
:class:`DocumentReader` is fed the bytes of one sitemap or sitemap index, chunk by
chunk, through expat: no tree is built, each ``<url>`` is checked when it closes and
then forgotten, so memory does not grow with the document. What a whole run must
remember (duplicates, hreflang links) lives in :class:`Memory`, as compact digests.

Standard library only, as the rest of ``sitemap check`` (lxml only for ``--xsd``).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from hashlib import blake2b
from typing import Final, Literal
from urllib.parse import urlsplit
from xml.parsers import expat

from sitemap_commands.check_entries import EntryAudit
from sitemap_core.limits import (
    MAX_NEWS_URLS,
    MAX_SITEMAP_BYTES,
    MAX_SITEMAPS_PER_INDEX,
    MAX_URL_LENGTH,
    MAX_URLS_PER_SITEMAP,
)
from sitemap_core.model.namespaces import SITEMAP_NS, XHTML_NS

__all__ = [
    "RULES",
    "DocumentReader",
    "DocumentResult",
    "Finding",
    "Memory",
    "Report",
    "Scope",
    "Severity",
    "check_lastmod",
    "check_priority",
    "digest",
]

Severity = Literal["error", "warning"]

#: Every rule: id -> (severity, what it checks). Ids are stable: scripts may filter on them.
RULES: Final[dict[str, tuple[Severity, str]]] = {
    # reaching the documents
    "fetch": ("error", "a document could not be fetched or read"),
    "robots-sitemap": ("error", "robots.txt lists no Sitemap line, or a relative one"),
    "http-status": ("error", "a sitemap answered another status than 200"),
    "http-validators": ("warning", "no ETag nor Last-Modified on a sitemap response"),
    "http-conditional": ("warning", "If-None-Match / If-Modified-Since not answered 304"),
    "http-gzip": ("warning", "Accept-Encoding: gzip not honoured (no Content-Encoding: gzip)"),
    "http-vary": ("warning", "a gzip-negotiated response lacks Vary: Accept-Encoding"),
    # the document
    "xml-well-formed": ("error", "the document is not well-formed XML"),
    "root": ("error", "the root is not <urlset> or <sitemapindex> of the sitemap namespace"),
    "index-nested": ("error", "a sitemap index lists another sitemap index"),
    "element-unknown": ("error", "an element of the sitemap namespace where none is allowed"),
    "element-order": ("error", "elements repeated or out of the protocol's order"),
    "loc-missing": ("error", "a <url> or <sitemap> without a <loc>"),
    "empty": ("warning", "a <urlset> or <sitemapindex> with no entry"),
    "xsd": ("error", "the document is invalid against the official XSD (--xsd)"),
    # the values
    "loc-absolute": ("error", "<loc> is not an absolute http(s) URL"),
    "loc-host": ("error", "<loc> is on another site (scheme, host, port) than its sitemap"),
    "loc-path": ("error", "<loc> is not under the folder of its sitemap (sitemaps.org)"),
    "loc-length": ("error", f"<loc> is longer than {MAX_URL_LENGTH:,} characters"),
    "loc-escape": ("error", "<loc> holds a space, a control or another character URIs forbid"),
    "loc-ascii": ("warning", "<loc> holds non-ASCII characters not percent-encoded (an IRI)"),
    "loc-whitespace": ("warning", "<loc> text has leading or trailing whitespace"),
    "lastmod-format": ("error", "<lastmod> is not a W3C datetime (YYYY-MM-DD or a date-time)"),
    "lastmod-zone": ("error", "<lastmod> has a time but no time zone"),
    "changefreq-value": ("error", "<changefreq> is not one of the seven words"),
    "priority-range": ("error", "<priority> is not a number from 0.0 to 1.0"),
    # the limits
    "limit-urls": ("error", f"more than {MAX_URLS_PER_SITEMAP:,} <url> in one sitemap"),
    "limit-bytes": ("error", f"a document over {MAX_SITEMAP_BYTES:,} bytes uncompressed"),
    "limit-sitemaps": ("error", f"more than {MAX_SITEMAPS_PER_INDEX:,} <sitemap> in one index"),
    # across documents
    "duplicate-loc": ("error", "the same <loc> is listed twice (in one sitemap or two)"),
    "hreflang-attributes": ("error", "an xhtml:link alternate lacks rel, hreflang or href"),
    "hreflang-reciprocal": ("error", "A lists B as an alternate but B does not list A"),
    "hreflang-unlisted": ("warning", "an alternate is in no sitemap checked: not verifiable"),
    # what search engines distrust, read from the documents and robots.txt
    "robots-blocked": ("error", "robots.txt disallows a listed URL for * or Googlebot"),
    "lastmod-future": ("warning", "<lastmod> is in the future"),
    "news-old": ("warning", "a news:publication_date older than two days"),
    "news-count": ("error", f"more than {MAX_NEWS_URLS:,} news:news in one sitemap"),
    "image-retired": ("warning", "image:caption, title, geo_location or license (retired 2022)"),
    "video-retired": (
        "warning",
        "video:category, gallery_loc, price, tvshow or player_loc's allow_embed / autoplay"
        " (retired 2022)",
    ),
    # the listed URLs, fetched (--sample)
    "url-fetch": ("error", "a listed URL could not be fetched (--sample)"),
    "url-status": ("error", "a listed URL answered 4xx or 5xx (--sample)"),
    "url-redirect": ("warning", "a listed URL redirects: list its target (--sample)"),
    "url-noindex": ("error", "a listed URL says noindex (meta robots, X-Robots-Tag; --sample)"),
    "url-canonical": ("warning", "a listed URL names another canonical URL (--sample)"),
}

#: Findings keep this much of a value (a <loc> may be 2,048 characters, or garbage).
VALUE_CHARS: Final = 200

#: The seven words of ``<changefreq>`` (case-sensitive in the official XSD).
CHANGEFREQS: Final = frozenset(
    {"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"}
)

# The children of <url> and <sitemap> in the order the protocol's XSD fixes.
_URL_ORDER: Final = {"loc": 0, "lastmod": 1, "changefreq": 2, "priority": 3}
_SITEMAP_ORDER: Final = {"loc": 0, "lastmod": 1}

# expat reports "namespace local" with this separator.
_NS_PREFIX: Final = SITEMAP_NS + " "
_XHTML_LINK: Final = XHTML_NS + " link"
_FEED_ROOTS: Final = frozenset({"http://www.w3.org/2005/Atom feed", "rss"})

# A date, or a date-time (minutes at least, seconds and fractions optional) with its zone.
_LASTMOD = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-](\d{2}):(\d{2}))?)?\Z"
)
_PRIORITY = re.compile(r"\+?(?:\d+(?:\.\d*)?|\.\d+)\Z")
# Characters RFC 3986 allows in a URI, a valid %XX, nothing else.
_URI_CHARS = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#\[\]]|%[0-9A-Fa-f]{2})*\Z")
_FORBIDDEN = re.compile(r"[\x00-\x20\x7f<>\"{}|\\^`]|%(?![0-9A-Fa-f]{2})")
_DEFAULT_PORTS: Final = {"http": "80", "https": "443"}


def digest(text: str) -> int:
    """A 64-bit blake2b digest of ``text``: what the run keeps of each <loc> (8 bytes).

    Two different URLs share a digest with a chance of about n^2 / 2^65: one in 36
    million for a 1,000,000-URL site, where the cost is one false duplicate report.
    """
    return int.from_bytes(blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest())


class DigestSet:
    """A set of 64-bit digests in one flat ``array('Q')``: 16 to 32 bytes per member.

    Open addressing with linear probing; a Python ``set`` of ints would cost about
    70 bytes per member (an int object and a hash slot), four times as much.
    """

    def __init__(self) -> None:
        self._table = array("Q", [0]) * 1024
        self._mask = 1023
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, value: int) -> bool:
        """Add ``value``; return False when it was already there."""
        value = value or 1  # 0 marks an empty slot
        table, mask = self._table, self._mask
        slot = value & mask
        while True:
            found = table[slot]
            if found == value:
                return False
            if not found:
                break
            slot = (slot + 1) & mask
        table[slot] = value
        self._count += 1
        if self._count * 2 > mask:  # keep the table at most half full: short probes
            self._grow()
        return True

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, int):
            return False
        value = value or 1
        table, mask = self._table, self._mask
        slot = value & mask
        while True:
            found = table[slot]
            if found == value:
                return True
            if not found:
                return False
            slot = (slot + 1) & mask

    def _grow(self) -> None:
        old = self._table
        # Repeating a one-item array allocates the table once (no temporary bytes).
        self._table = array("Q", [0]) * (2 * len(old))
        self._mask = 2 * len(old) - 1
        self._count = 0
        for value in old:
            if value:
                self.add(value)

    @property
    def nbytes(self) -> int:
        """The bytes the table holds (what the run pays for duplicate detection)."""
        return len(self._table) * 8


@dataclass(frozen=True)
class Finding:
    """One problem found: which rule, where (document and line), about which value."""

    rule: str
    severity: Severity
    document: str
    line: int | None
    value: str
    message: str
    #: The URL the finding is about: a listed URL for an entry's finding, else the
    #: document (None: the document).
    url: str | None = None

    @property
    def about(self) -> str:
        """The URL (or file) the finding is about."""
        return self.document if self.url is None else self.url

    def as_dict(self) -> dict[str, object]:
        """The finding as the JSON output writes it."""
        return {
            "rule": self.rule,
            "severity": self.severity,
            "url": self.about,
            "document": self.document,
            "line": self.line,
            "value": self.value,
            "message": self.message,
        }

    def __str__(self) -> str:
        where = self.document if self.line is None else f"{self.document}:{self.line}"
        shown = f": {self.value!r}" if self.value else ""
        url = "" if self.url is None or self.url == self.value else f" ({self.url})"
        return f"{where}: {self.severity} [{self.rule}] {self.message}{shown}{url}"


@dataclass
class Report:
    """What a run found: counts of everything, and the findings (at most ``per_rule`` each).

    The cap keeps memory flat on a site with a million bad entries: the counts keep
    going, the JSON output says how many findings were left out.
    """

    per_rule: int = 100
    strict: bool = False
    documents: int = 0
    urls: int = 0
    errors: int = 0
    warnings: int = 0
    omitted: int = 0
    findings: list[Finding] = field(default_factory=list)
    by_rule: dict[str, int] = field(default_factory=dict)
    #: Listed URLs fetched by ``--sample``.
    sampled: int = 0
    #: What the run could not check, and why (a missing optional parser).
    notes: list[str] = field(default_factory=list)
    #: Called with each finding as it is made (the human output prints as it goes).
    listener: Callable[[Finding], None] | None = None

    def add(
        self, rule: str, document: str, line: int | None, value: str, message: str,
        url: str | None = None,
    ) -> None:  # fmt: skip
        """Record one finding of ``rule`` (its severity is the rule's, or error if strict);
        ``url`` is the listed URL it is about, when it is about one."""
        severity: Severity = "error" if self.strict else RULES[rule][0]
        if severity == "error":
            self.errors += 1
        else:
            self.warnings += 1
        seen = self.by_rule.get(rule, 0)
        self.by_rule[rule] = seen + 1
        if self.per_rule and seen >= self.per_rule:
            self.omitted += 1
            return
        if len(value) > VALUE_CHARS:
            value = value[: VALUE_CHARS - 3] + "..."
        finding = Finding(rule, severity, document, line, value, message, url)
        self.findings.append(finding)
        if self.listener is not None:
            self.listener(finding)


@dataclass
class _Links:
    """One URL's xhtml:link alternates, kept for the reciprocity check at the end."""

    loc: str
    document: str
    line: int
    #: (href, digest of href) of each alternate.
    alternates: tuple[tuple[str, int], ...]


class Memory:
    """What the whole run remembers: a digest per <loc>, and the hreflang links.

    Duplicates: one 8-byte digest per URL in a :class:`DigestSet` (16-32 bytes each
    with the table's slack): about 24 MB for a 1,000,000-URL site. hreflang: each URL
    that has alternates is kept with its alternates (strings), since reciprocity can
    only be judged once every sitemap is read; sites without alternates pay nothing.
    """

    def __init__(self) -> None:
        self.locs = DigestSet()
        self.links: dict[int, _Links] = {}
        #: Told of each listed URL once checked, with its document and line (the
        #: robots.txt rules and the sample of ``--sample`` read them here).
        self.listed: Callable[[str, str, int], None] | None = None

    def check_hreflang(self, report: Report) -> None:
        """Report every alternate whose page does not link back (call after the last page)."""
        for key, links in self.links.items():
            for href, other in links.alternates:
                if other == key:
                    continue
                back = self.links.get(other)
                if back is not None:
                    if any(target == key for _, target in back.alternates):
                        continue
                    message = f"lists {href} as an alternate, which does not list it back"
                elif other in self.locs:
                    message = f"lists {href} as an alternate, which lists no alternates"
                else:
                    report.add(
                        "hreflang-unlisted",
                        links.document,
                        links.line,
                        href,
                        f"{links.loc} lists an alternate that no sitemap checked lists",
                    )
                    continue
                report.add("hreflang-reciprocal", links.document, links.line, links.loc, message)


@dataclass(frozen=True)
class Scope:
    """Where the <loc> of one document may point: sites (origins) and a folder.

    ``origins`` are ``scheme://host[:port]`` (lowercase, default port dropped); empty
    means "learn it from the first absolute <loc>" (a local file with no --base-url).
    ``folder`` is the path prefix the URLs must start with, or ``""`` for any path.
    """

    origins: tuple[str, ...]
    folder: str = ""


def origin_of(url: str) -> tuple[str, str] | None:
    """``(origin, path)`` of an absolute http(s) URL, or None for anything else."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    host = parts.hostname
    if ":" in host:
        host = f"[{host}]"
    if port is not None and str(port) != _DEFAULT_PORTS[scheme]:
        host = f"{host}:{port}"
    return f"{scheme}://{host}", parts.path or "/"


def folder_of(url: str) -> str:
    """The folder of a sitemap's URL (its path up to the last ``/``)."""
    found = origin_of(url)
    return "/" if found is None else found[1][: found[1].rfind("/") + 1]


def check_lastmod(text: str) -> str | None:
    """The rule ``text`` breaks as a <lastmod> (``lastmod-format`` / ``-zone``), or None."""
    match = _LASTMOD.match(text)
    if match is None:
        return "lastmod-format"
    year, month, day, hour, minute, second, zone, zone_hour, zone_minute = match.groups()
    try:
        date(int(year), int(month), int(day))
    except ValueError:
        return "lastmod-format"
    if hour is None:
        return None
    if int(hour) > 23 or int(minute) > 59 or (second is not None and int(second) > 59):
        return "lastmod-format"
    if zone is None:
        return "lastmod-zone"
    if zone_hour is not None and (int(zone_hour) > 14 or int(zone_minute) > 59):
        return "lastmod-format"
    return None


def check_priority(text: str) -> bool:
    """Whether ``text`` is a valid <priority>: a decimal from 0.0 to 1.0."""
    return _PRIORITY.match(text) is not None and 0.0 <= float(text) <= 1.0


@dataclass
class DocumentResult:
    """What reading one document found, for the caller that walks the site."""

    #: "urlset", "sitemapindex", "feed" (RSS or Atom), or None (not a sitemap, or not
    #: well-formed at the root).
    root: str | None = None
    #: The <loc> (stripped) and line of each <sitemap> of an index (at most the index
    #: limit), relative ones included.
    children: list[tuple[str, int]] = field(default_factory=list)
    entries: int = 0
    size: int = 0
    #: False once the XML is found not well-formed (reading stops there).
    well_formed: bool = True


class DocumentReader:
    """Checks one sitemap or sitemap index as its bytes arrive (:meth:`feed`, :meth:`close`).

    expat calls back per element; the reader keeps the current entry only, so the
    memory it needs is that of one ``<url>``, whatever the document's size.
    """

    def __init__(self, name: str, scope: Scope, report: Report, memory: Memory) -> None:
        self.name = name
        self.report = report
        self.memory = memory
        self.result = DocumentResult()
        self._origins = set(scope.origins)
        self._folder = scope.folder
        self._fast: re.Pattern[str] | None = None
        self._compile_fast()
        self._parser = expat.ParserCreate(namespace_separator=" ")
        self._parser.buffer_text = True
        self._parser.StartElementHandler = self._start
        self._parser.EndElementHandler = self._end
        self._parser.CharacterDataHandler = self._text
        self._depth = 0
        self._entry_tag = ""  # "url" or "sitemap" once the root is known
        self._order: dict[str, int] = {}
        # The current entry: its line, last position in the order, fields, alternates.
        self._entry_line = 0
        self._position = -1
        self._extension_seen = False
        self._fields: dict[str, tuple[str, int]] = {}
        self._alternates: list[tuple[str, int]] = []
        self._collect: str | None = None
        self._line = 0
        self._chunks: list[str] = []
        self._over_limit = False
        # The URL the current entry's findings are about, once its <loc> is read.
        self._entry_url: str | None = None
        self._audit = EntryAudit(self._add_audit)

    @property
    def origins(self) -> tuple[str, ...]:
        """The sites this document's URLs may be on (learned from the first, for a file)."""
        return tuple(sorted(self._origins))

    def _compile_fast(self) -> None:
        # The common <loc> (an ASCII URL of the expected site, nothing to escape) passes
        # one regular expression; anything else takes the slow path that says why.
        if self._origins:
            heads = "|".join(re.escape(o + self._folder.rstrip("/")) for o in self._origins)
            self._fast = re.compile(
                rf"(?:{heads})/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#]|%[0-9A-Fa-f]{{2}})*\Z"
            )

    # -- feeding ------------------------------------------------------------------------

    def feed(self, chunk: bytes) -> bool:
        """Read ``chunk``; False once the document is known not well-formed (stop feeding)."""
        if not self.result.well_formed:
            return False
        self.result.size += len(chunk)
        if self.result.size > MAX_SITEMAP_BYTES and not self._over_limit:
            self._over_limit = True
            self._add("limit-bytes", None, str(MAX_SITEMAP_BYTES), "over the size limit")
        try:
            self._parser.Parse(chunk, False)
        except expat.ExpatError as exc:
            self._broken(exc)
        return self.result.well_formed

    def close(self) -> DocumentResult:
        """End the document; the per-document rules (counts, emptiness) run here."""
        if self.result.well_formed:
            try:
                self._parser.Parse(b"", True)
            except expat.ExpatError as exc:
                self._broken(exc)
        if self.result.well_formed and self._entry_tag and not self.result.entries:
            self._add("empty", None, "", f"<{self.result.root}> lists nothing")
        # The parser's handlers hold this reader: a cycle that would keep expat's buffers
        # until the garbage collector runs. A blank parser breaks it now.
        self._parser = expat.ParserCreate()
        return self.result

    def _broken(self, exc: expat.ExpatError) -> None:
        self.result.well_formed = False
        self._add("xml-well-formed", exc.lineno, "", expat.ErrorString(exc.code))

    def _add(self, rule: str, line: int | None, value: str, message: str) -> None:
        self.report.add(rule, self.name, line, value, message, self._entry_url)

    def _add_audit(self, rule: str, line: int, value: str, message: str) -> None:
        # An extension's element comes after <loc> (the protocol's order): its URL is known.
        loc = self._fields.get("loc")
        url = loc[0].strip() if loc is not None else None
        self.report.add(rule, self.name, line, value, message, url)

    # -- expat callbacks ----------------------------------------------------------------

    def _start(self, tag: str, attributes: dict[str, str]) -> None:
        depth = self._depth = self._depth + 1
        if depth == 1:
            self._root(tag)
        elif depth == 2:
            self._entry_start(tag)
        elif depth >= 3 and self._entry_tag:
            if depth == 3:
                self._field_start(tag, attributes)
            if not tag.startswith(_NS_PREFIX):
                self._audit.start(tag, attributes, self._parser.CurrentLineNumber)

    def _end(self, tag: str) -> None:
        depth = self._depth
        self._depth = depth - 1
        if depth >= 3:
            self._audit.end(tag)
        if depth == 3 and self._collect is not None:
            self._fields[self._collect] = ("".join(self._chunks), self._line)
            self._collect = None
            self._chunks.clear()
        elif depth == 2 and self._entry_tag and tag == _NS_PREFIX + self._entry_tag:
            self._entry_end()

    def _text(self, data: str) -> None:
        if self._collect is not None:
            self._chunks.append(data)
        else:
            self._audit.text(data)

    def _root(self, tag: str) -> None:
        line = self._parser.CurrentLineNumber
        if tag == _NS_PREFIX + "urlset":
            self.result.root, self._entry_tag, self._order = "urlset", "url", _URL_ORDER
        elif tag == _NS_PREFIX + "sitemapindex":
            self.result.root, self._entry_tag = "sitemapindex", "sitemap"
            self._order = _SITEMAP_ORDER
            # An index may list sitemaps anywhere on its site (sitemaps.org): no folder.
            self._folder = ""
            self._compile_fast()
        elif tag in _FEED_ROOTS:
            # Google reads an RSS 2.0 or Atom 1.0 feed listed in robots.txt as a sitemap:
            # such a document is read for well-formedness only (no protocol rules).
            self.result.root = "feed"
        else:
            name = "{" + tag.replace(" ", "}", 1) if " " in tag else tag
            self._add("root", line, name, f"expected <urlset> or <sitemapindex> in {SITEMAP_NS}")

    def _entry_start(self, tag: str) -> None:
        if not self._entry_tag:
            return
        line = self._parser.CurrentLineNumber
        if tag != _NS_PREFIX + self._entry_tag:
            if tag.startswith(_NS_PREFIX):
                local = tag[len(_NS_PREFIX) :]
                self._add("element-unknown", line, local, f"<{local}> in <{self.result.root}>")
            return
        self._entry_line = line
        self._position = -1
        self._extension_seen = False
        self._fields.clear()
        self._alternates.clear()

    def _field_start(self, tag: str, attributes: dict[str, str]) -> None:
        line = self._parser.CurrentLineNumber
        if not tag.startswith(_NS_PREFIX):
            self._extension_seen = True
            if tag == _XHTML_LINK:
                self._link(attributes, line)
            return
        local = tag[len(_NS_PREFIX) :]
        position = self._order.get(local)
        if position is None:
            self._add("element-unknown", line, local, f"<{local}> in <{self._entry_tag}>")
            return
        if position <= self._position or self._extension_seen:
            self._add("element-order", line, local, f"<{local}> repeated or out of order")
        self._position = max(position, self._position)
        if local not in self._fields:
            self._collect = local
            self._line = line

    def _link(self, attributes: dict[str, str], line: int) -> None:
        rel, hreflang, href = (attributes.get(n) for n in ("rel", "hreflang", "href"))
        if rel != "alternate":
            return  # other xhtml:link relations are not hreflang alternates
        if not hreflang or not href:
            self._add("hreflang-attributes", line, href or "", "alternate without hreflang/href")
            return
        self._alternates.append((href.strip(), line))

    def _entry_end(self) -> None:
        self.result.entries += 1
        entries = self.result.entries
        index = self._entry_tag == "sitemap"
        limit = MAX_SITEMAPS_PER_INDEX if index else MAX_URLS_PER_SITEMAP
        if entries == limit + 1:
            rule = "limit-sitemaps" if index else "limit-urls"
            self._add(rule, self._entry_line, str(limit), f"more than {limit:,} entries")
        fields = self._fields
        found = fields.get("loc")
        self._entry_url = found[0].strip() if found is not None else None
        if found is None:
            self._add("loc-missing", self._entry_line, "", f"<{self._entry_tag}> has no <loc>")
        else:
            loc = self._check_loc(*found)
            if index:
                # Even a relative one: the children of a local index may be file paths.
                if len(self.result.children) < MAX_SITEMAPS_PER_INDEX:
                    self.result.children.append((loc or found[0].strip(), found[1]))
            elif loc is not None:
                self._remember(loc, found[1])
        lastmod = fields.get("lastmod")
        if lastmod is not None:
            broken = check_lastmod(lastmod[0].strip())
            if broken is not None:
                self._add(broken, lastmod[1], lastmod[0], RULES[broken][1])
            else:
                self._audit.lastmod(lastmod[0], lastmod[1])
        changefreq = fields.get("changefreq")
        if changefreq is not None and changefreq[0].strip() not in CHANGEFREQS:
            self._add("changefreq-value", changefreq[1], changefreq[0], "not a changefreq word")
        priority = fields.get("priority")
        if priority is not None and not check_priority(priority[0].strip()):
            self._add("priority-range", priority[1], priority[0], "not from 0.0 to 1.0")
        self._entry_url = None

    def _remember(self, loc: str, line: int) -> None:
        key = digest(loc)
        if not self.memory.locs.add(key):
            self._add("duplicate-loc", line, loc, "listed before (in this sitemap or another)")
        if self._alternates:
            alternates = tuple((href, digest(href)) for href, _ in self._alternates)
            self.memory.links[key] = _Links(loc, self.name, line, alternates)
        if self.memory.listed is not None and self._on_site(loc):
            self.memory.listed(loc, self.name, line)

    def _on_site(self, loc: str) -> bool:
        # Only the site's own URLs go on to robots.txt and --sample: a URL on another
        # host is a loc-host error already, and no reason to fetch from that host.
        found = origin_of(loc)
        return found is not None and found[0] in self._origins

    def _check_loc(self, text: str, line: int) -> str | None:
        """The <loc> to remember (stripped), or None when it is not an absolute URL."""
        fast = self._fast
        if fast is not None and len(text) <= MAX_URL_LENGTH and fast.match(text):
            return text
        loc = text.strip()
        if loc != text:
            self._add("loc-whitespace", line, text, "whitespace around the URL")
        found = origin_of(loc)
        if found is None:
            self._add("loc-absolute", line, loc, "not an absolute http(s) URL")
            return None
        origin, path = found
        if len(loc) > MAX_URL_LENGTH:
            self._add("loc-length", line, loc, f"{len(loc):,} characters")
        if _FORBIDDEN.search(loc):
            self._add("loc-escape", line, loc, "not a valid URI (escape it)")
        elif not loc.isascii():
            self._add("loc-ascii", line, loc, "non-ASCII characters: percent-encode them")
        elif not _URI_CHARS.match(loc):
            self._add("loc-escape", line, loc, "not a valid URI (escape it)")
        if not self._origins:
            # A local file with no --base-url: its first URL names the site.
            self._origins.add(origin)
            self._compile_fast()
        if origin not in self._origins:
            sites = ", ".join(sorted(self._origins))
            self._add("loc-host", line, loc, f"not on the site of this sitemap ({sites})")
        elif self._folder and not path.startswith(self._folder):
            self._add("loc-path", line, loc, f"not under {self._folder}")
        return loc
