"""``sitemap check URL|FILE``: read a site's sitemaps as a crawler does, and report problems.

A URL starts from ``<origin>/robots.txt`` and its ``Sitemap:`` lines when its path is
empty, ``/`` or ends in ``/robots.txt``; any other URL is taken as a sitemap (or an
index) itself. A FILE is a local sitemap or index (gzip too, found by its magic bytes);
an RSS or Atom feed (which Google reads as a sitemap) is only checked to be
well-formed XML. The children of a local index are files beside it when they are
relative paths, else fetched (or, with ``--base-url``, read beside it when they are
under that URL's folder).

Every rule has a stable id (see :data:`~sitemap_commands.checker_rules.RULES`,
and ``sitemap check --rules``); each finding names the document, the line, the rule
and the value. Not a percent-encoded URI: a space, a control, a character RFC 3986 forbids or a
stray ``%`` is an error (``loc-escape``: crawlers read such URLs differently);
non-ASCII text (an IRI) is a warning (``loc-ascii``: Google reads IRIs, the protocol
asks for escaping). The HTTP rules (validators, 304, gzip, Vary) are warnings: the
protocol does not ask for them, crawlers' bandwidth does. ``--strict`` makes every
warning an error.

It streams: each document goes through expat chunk by chunk and each entry is
forgotten once checked. What the run keeps per URL is an 8-byte blake2b digest of its
``<loc>`` in a flat hash table (16-32 bytes per URL), to find duplicates across
documents; and, for URLs with hreflang alternates only, the URL and its alternates,
to check that they link back. ``--xsd DIR`` spools each document to a temporary file
and validates it with lxml (imported only then) against the official schemas in DIR.

A site read over HTTP is also judged as search engines judge it
(:mod:`~sitemap_commands.check_audit`): each listed URL against the site's robots.txt,
and with ``--sample N`` N listed URLs fetched politely, their status, redirects,
noindex and canonical reported; the entries' future lastmods, stale news and retired
image / video tags come from :mod:`~sitemap_commands.check_entries`. Every finding
names the URL it is about.

Exit status: 0 clean (warnings allowed; ``--fail-on warning``: none), 1 any error, 2
bad usage or the start (the file, robots.txt, the first sitemap) unreachable.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final, TextIO
from urllib.parse import unquote, urlsplit

from sitemap_commands.check_audit import Audit, SampleOptions
from sitemap_commands.checker_rules import (
    RULES,
    DocumentReader,
    DocumentResult,
    Memory,
    Report,
    Scope,
    folder_of,
    origin_of,
)
from sitemap_core.limits import MAX_ROBOTS_BYTES
from sitemap_core.model.namespaces import IMAGE_NS, NEWS_NS, SITEMAP_NS, VIDEO_NS, XHTML_NS

__all__ = ["StartError", "add_check_command", "check", "run_check"]

#: Bytes read from the network or a file at a time.
CHUNK: Final = 65_536
_GZIP_MAGIC: Final = b"\x1f\x8b"
_USER_AGENT: Final = "sitemap-check (+https://www.sitemaps.org/protocol.html)"
_LOOPBACK: Final = frozenset({"127.0.0.1", "localhost", "::1"})

# The schema files --xsd looks for in DIR: the core ones by root, the extensions by
# namespace (each imported only when its file is there).
_CORE_XSD: Final = {"urlset": "sitemap.xsd", "sitemapindex": "siteindex.xsd"}
_EXTENSION_XSD: Final = {
    IMAGE_NS: "sitemap-image.xsd",
    VIDEO_NS: "sitemap-video.xsd",
    NEWS_NS: "sitemap-news.xsd",
    XHTML_NS: "xhtml1-strict.xsd",
}
_XML_XSD_URL: Final = "http://www.w3.org/2001/xml.xsd"
#: Entries validated at a time under --xsd (the memory of one batch, then cleared).
_XSD_BATCH: Final = 1_000


class StartError(Exception):
    """The check cannot start: bad usage, or its first document is unreachable (exit 2)."""


@dataclass(frozen=True)
class _Options:
    timeout: float
    base_url: str | None
    http_checks: bool = True
    #: --sample: how the listed URLs are fetched, or None to fetch none.
    sample: SampleOptions | None = None


# -- reading bytes --------------------------------------------------------------------


def _gunzip(chunks: Iterator[bytes]) -> Iterator[bytes]:
    # Output is bounded per call (max_length), so a small gzip bomb cannot fill memory:
    # the reader counts the bytes and the size rule fires, chunk by chunk.
    inflater = zlib.decompressobj(wbits=31)
    pending = False
    for chunk in chunks:
        while chunk:
            pending = True
            out = inflater.decompress(chunk, CHUNK)
            if out:
                yield out
            if inflater.eof:  # a further gzip member may follow (concatenated files)
                chunk = inflater.unused_data
                inflater = zlib.decompressobj(wbits=31)
                pending = False
            else:
                chunk = inflater.unconsumed_tail
        while pending and not inflater.eof:
            out = inflater.decompress(b"", CHUNK)
            if not out:
                break
            yield out
    if pending:
        raise zlib.error("the gzip stream ends before its end")


def _decoded(chunks: Iterator[bytes]) -> tuple[Iterator[bytes], bool]:
    """The chunks, gunzipped when they start with gzip's magic bytes; and whether they did."""
    head = b""
    for chunk in chunks:
        head += chunk
        if len(head) >= 2:
            break
    rest = itertools.chain((head,), chunks)
    if head[:2] == _GZIP_MAGIC:
        return _gunzip(rest), True
    return rest, False


def _read_chunks(stream: IO[bytes]) -> Iterator[bytes]:
    while chunk := stream.read(CHUNK):
        yield chunk


def _open(url: str, headers: dict[str, str], timeout: float) -> Any:
    """The response to GET ``url`` (an error status is a response too, not an exception)."""
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT, **headers})
    # The loopback is never reached through a proxy (a test server, a local preview).
    direct = urlsplit(url).hostname in _LOOPBACK
    handlers = [urllib.request.ProxyHandler({})] if direct else []
    opener = urllib.request.build_opener(*handlers)
    try:
        return opener.open(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        return exc  # carries status, headers and body; 304 lands here too


def _sitemap_lines(robots: bytes) -> list[tuple[str, int]]:
    """The URL and line number of each ``Sitemap:`` line of a robots.txt."""
    sitemaps: list[tuple[str, int]] = []
    for number, raw in enumerate(robots.decode("utf-8", "replace").splitlines(), 1):
        name, colon, value = raw.partition("#")[0].partition(":")
        if colon and name.strip().lower() == "sitemap":
            sitemaps.append((value.strip(), number))
    return sitemaps


# -- the schemas (--xsd) -----------------------------------------------------------------


class _Schemas:
    """The official XSDs of a folder, compiled with lxml (imported here only)."""

    def __init__(self, folder: str) -> None:
        try:
            from lxml import etree
        except ImportError:
            raise StartError("--xsd needs lxml: pip install lxml") from None
        self._etree: Any = etree
        self._folder = Path(folder)
        missing = [n for n in _CORE_XSD.values() if not (self._folder / n).is_file()]
        if missing:
            raise StartError(f"--xsd {folder}: no {' nor '.join(missing)} there")
        self._compiled: dict[str, Any] = {}

    def _schema(self, root: str) -> Any:
        if root not in self._compiled:
            self._compiled[root] = self._compile(root)
        return self._compiled[root]

    def _compile(self, root: str) -> Any:
        etree = self._etree
        parser = etree.XMLParser(no_network=True, resolve_entities=False)
        with tempfile.TemporaryDirectory(prefix="sitemap-check-xsd-") as folder:
            work = Path(folder)
            imports = [(SITEMAP_NS, _CORE_XSD[root])]
            for namespace, name in _EXTENSION_XSD.items():
                if (self._folder / name).is_file():
                    imports.append((namespace, name))
            for _, name in imports:
                text = (self._folder / name).read_bytes()
                # xhtml1-strict.xsd imports xml.xsd from w3.org: point it at the local
                # copy (no network), or leave the import to fail if there is none.
                if name == _EXTENSION_XSD[XHTML_NS] and (self._folder / "xml.xsd").is_file():
                    shutil.copyfile(self._folder / "xml.xsd", work / "xml.xsd")
                    text = text.replace(_XML_XSD_URL.encode(), b"xml.xsd")
                (work / name).write_bytes(text)
            # A schema that only imports: the one way to compile several namespaces at once.
            lines = [f'<xs:import namespace="{ns}" schemaLocation="{n}"/>' for ns, n in imports]
            wrapper = (
                '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">'
                + "".join(lines)
                + "</xs:schema>"
            )
            (work / "wrapper.xsd").write_text(wrapper, encoding="utf-8")
            try:
                return etree.XMLSchema(etree.parse(str(work / "wrapper.xsd"), parser))
            except (etree.XMLSchemaParseError, etree.XMLSyntaxError) as exc:
                raise StartError(f"--xsd {self._folder}: cannot compile: {exc}") from None

    def validate(self, name: str, spool: IO[bytes], root: str, report: Report) -> None:
        """Validate the spooled document against the schema of its root, streaming.

        Validation while parsing (lxml's ``iterparse(schema=...)``) says what is wrong
        but not on which line. So the entries are moved, a batch at a time, under a
        copy of the root and that small tree is validated: each error names the line
        of its element, and memory holds one batch, whatever the document's size.
        """
        etree = self._etree
        schema = self._schema(root)
        spool.seek(0)
        try:
            for batch, root_line in self._batches(spool):
                if not schema.validate(batch):
                    for error in schema.error_log:
                        report.add("xsd", name, error.line or root_line, "", error.message)
                del batch[:]
        except etree.XMLSyntaxError as exc:  # checked by expat already; lxml may be stricter
            report.add("xsd", name, exc.lineno or None, "", str(exc))

    def _batches(self, spool: IO[bytes]) -> Iterator[tuple[Any, int]]:
        # The document's entries, _XSD_BATCH at a time, moved under a copy of its root,
        # with the root's line; the root alone when it has no entry. The caller empties
        # each batch before the next is filled.
        etree = self._etree
        depth = 0
        batch: Any = None
        root_line = 1
        batches = 0
        events = etree.iterparse(
            spool, events=("start", "end"), no_network=True, resolve_entities=False,
            huge_tree=True,
        )  # fmt: skip
        for event, element in events:
            if event == "start":
                depth += 1
                if depth == 1:
                    root_line = element.sourceline or 1
                    batch = etree.Element(element.tag, dict(element.attrib), element.nsmap)
                continue
            depth -= 1
            if depth == 1:
                batch.append(element)  # moved: it leaves the parsed tree
                if len(batch) == _XSD_BATCH:
                    batches += 1
                    yield batch, root_line
            elif depth == 0 and (len(batch) or not batches):
                batches += 1
                yield batch, root_line  # the last batch; or the root alone if it is empty


# -- walking a site ----------------------------------------------------------------------

#: What every document is asked with: a crawler takes gzip.
_ACCEPT_GZIP: Final = {"Accept-Encoding": "gzip"}


@dataclass(frozen=True)
class _Got:
    # A document fetched and read, and the response headers the HTTP rules look at.
    result: DocumentResult | None
    #: Sent with Content-Encoding: gzip.
    coded: bool
    #: Its bytes were gzip (a .gz file sent as it is), whatever the header said.
    gzipped: bool
    vary: str
    etag: str | None
    modified: str | None


class _Checker:
    """One run: the documents seen, the report, what is remembered across documents."""

    def __init__(self, report: Report, options: _Options, schemas: _Schemas | None) -> None:
        self.report = report
        self.options = options
        self.schemas = schemas
        self.memory = Memory()
        self._seen: set[str] = set()
        # The sites the last document read may point to (a file learns its own).
        self._scope_origins: tuple[str, ...] = ()
        # robots.txt rules and --sample: for a site read over HTTP (a file is not fetched).
        self._audit: Audit | None = None

    def start(self, target: str) -> None:
        """Check everything reachable from ``target`` (raises StartError when it is not)."""
        if "://" in target:
            if self.options.base_url is not None:
                raise StartError("--base-url is for a FILE; a URL is its own base")
            found = origin_of(target)
            if found is None:
                raise StartError(f"not an http(s) URL: {target!r}")
            origin, path = found
            self._audit = Audit(self.report, self._robots_text, self.options.sample)
            self.memory.listed = self._audit.listed
            if path == "/" or path.endswith("/robots.txt"):
                self._robots(origin)
            else:
                self._url(target, Scope((origin,), folder_of(target)), start=True)
        else:
            file = Path(target)
            if not file.is_file():
                raise StartError(f"no such file: {target}")
            scope = Scope(())
            if self.options.base_url is not None:
                found = origin_of(self.options.base_url)
                if found is None:
                    raise StartError(f"--base-url: not an http(s) URL: {self.options.base_url!r}")
                scope = Scope((found[0],), folder_of(self.options.base_url))
            self._file(file, scope, start=True)
        self.memory.check_hreflang(self.report)
        if self._audit is not None:
            self._audit.finish()

    def _robots_text(self, url: str) -> str | None:
        # A robots.txt the audit asks for (a site a sitemap's URLs are on): its text,
        # or None when it cannot be read or is not there (nothing disallowed).
        try:
            with _open(url, {}, self.options.timeout) as response:
                if response.status != 200:
                    return None
                body: bytes = response.read(MAX_ROBOTS_BYTES)
        except (OSError, http.client.HTTPException, ValueError):
            return None
        return body.decode("utf-8", "replace")

    def _robots(self, origin: str) -> None:
        url = origin + "/robots.txt"
        try:
            with _open(url, {}, self.options.timeout) as response:
                status = response.status
                body = response.read(MAX_ROBOTS_BYTES)
        except (OSError, http.client.HTTPException, ValueError) as exc:
            raise StartError(f"{url}: {exc}") from None
        if status != 200:
            raise StartError(f"{url}: HTTP {status}")
        if self._audit is not None:
            self._audit.know_robots(origin, body.decode("utf-8", "replace"))
        sitemaps = _sitemap_lines(body)
        if not sitemaps:
            self.report.add("robots-sitemap", url, None, "", "no Sitemap: line")
        for sitemap, number in sitemaps:
            found = origin_of(sitemap)
            if found is None:
                self.report.add("robots-sitemap", url, number, sitemap, "not an absolute URL")
                continue
            # robots.txt vouches for a sitemap on another host: its URLs may be on either.
            same = found[0] == origin
            origins = (found[0],) if same else (found[0], origin)
            self._url(sitemap, Scope(origins, folder_of(sitemap) if same else ""), start=False)

    def _url(self, url: str, scope: Scope, *, start: bool = False, in_index: bool = False) -> None:
        if url in self._seen:
            return
        self._seen.add(url)
        got = self._get(url, scope, start)
        if got is None:
            return
        if self.options.http_checks:
            self._http_rules(url, got)
        self._after(url, got.result, scope, in_index, base=None)

    def _get(self, url: str, scope: Scope, start: bool) -> _Got | None:
        # GET ``url`` (gzip accepted) and read it; None when it cannot be read (reported,
        # or a StartError for the first document).
        try:
            response = _open(url, _ACCEPT_GZIP, self.options.timeout)
        except (OSError, http.client.HTTPException, ValueError) as exc:
            self._unreachable(start, f"{url}: {exc}", "fetch", url, url, str(exc))
            return None
        with response:
            if response.status != 200:
                status = str(response.status)
                self._unreachable(
                    start, f"{url}: HTTP {status}", "http-status", url, status, "not 200"
                )
                return None
            encoding = (response.headers.get("Content-Encoding") or "").strip().lower()
            if encoding not in ("", "identity", "gzip"):
                self.report.add("fetch", url, None, encoding, "unknown Content-Encoding")
                return None
            chunks = _read_chunks(response)
            coded = encoding == "gzip"
            result, gzipped = self._read(url, _gunzip(chunks) if coded else chunks, scope)
            headers = response.headers
            vary = (headers.get("Vary") or "").lower()
            return _Got(
                result, coded, gzipped, vary, headers.get("ETag"), headers.get("Last-Modified")
            )

    def _unreachable(
        self, start: bool, message: str, rule: str, name: str, value: str, text: str
    ) -> None:
        # A document that cannot be read: the end of the check when it is the first.
        if start:
            raise StartError(message) from None
        self.report.add(rule, name, None, value, text)

    def _http_rules(self, url: str, got: _Got) -> None:
        # What crawlers' bandwidth asks: gzip on request, Vary with it, a 304 on the
        # document's own validators.
        if not got.coded and not got.gzipped:
            self.report.add(
                "http-gzip", url, None, "", "sent uncompressed to Accept-Encoding: gzip"
            )
        if got.coded and "accept-encoding" not in got.vary and "*" not in got.vary:
            self.report.add("http-vary", url, None, got.vary, "gzip without Vary: Accept-Encoding")
        self._conditional(url, _ACCEPT_GZIP, got.etag, got.modified)

    def _conditional(
        self, url: str, headers: dict[str, str], etag: str | None, modified: str | None
    ) -> None:
        if etag is None and modified is None:
            self.report.add("http-validators", url, None, "", "no ETag nor Last-Modified")
            return
        condition = {"If-None-Match": etag} if etag is not None else {}
        if modified is not None and etag is None:
            condition = {"If-Modified-Since": modified}
        shown = f"{next(iter(condition))}: {next(iter(condition.values()))}"
        try:
            with _open(url, {**headers, **condition}, self.options.timeout) as response:
                status = response.status
        except (OSError, http.client.HTTPException, ValueError) as exc:
            self.report.add("http-conditional", url, None, shown, f"failed: {exc}")
            return
        if status != 304:
            self.report.add("http-conditional", url, None, shown, f"answered {status}, not 304")

    def _file(
        self, path: Path, scope: Scope, *, start: bool = False, in_index: bool = False
    ) -> None:
        name = str(path)
        key = str(path.resolve())
        if key in self._seen:
            return
        self._seen.add(key)
        try:
            stream = path.open("rb")
        except OSError as exc:
            if start:
                raise StartError(f"{name}: {exc.strerror}") from None
            self.report.add("fetch", name, None, name, str(exc.strerror))
            return
        with stream:
            result, _ = self._read(name, _read_chunks(stream), scope)
        self._after(name, result, scope, in_index, base=path)

    def _read(
        self, name: str, chunks: Iterator[bytes], scope: Scope
    ) -> tuple[DocumentResult | None, bool]:
        reader = DocumentReader(name, scope, self.report, self.memory)
        # With --xsd the decoded bytes also go to a temporary file (disk, not memory),
        # validated once the document is read.
        spool = tempfile.TemporaryFile() if self.schemas is not None else None  # noqa: SIM115
        try:
            decoded, gzipped = _decoded(chunks)
            for chunk in decoded:
                if spool is not None:
                    spool.write(chunk)
                if not reader.feed(chunk):
                    break
            result = reader.close()
            self.report.documents += 1
            if result.root == "urlset":
                self.report.urls += result.entries
            if spool is not None:
                self._validate(name, spool, result)
            self._scope_origins = reader.origins
            return result, gzipped
        except (OSError, zlib.error, http.client.HTTPException) as exc:
            self.report.add("fetch", name, None, "", f"reading failed: {exc}")
            return None, False
        finally:
            if spool is not None:
                spool.close()

    def _validate(self, name: str, spool: IO[bytes], result: DocumentResult) -> None:
        # --xsd: a well-formed sitemap or index (not a feed) against its schema.
        root = result.root or ""
        if self.schemas is not None and root in _CORE_XSD and result.well_formed:
            self.schemas.validate(name, spool, root, self.report)

    def _after(
        self, name: str, result: DocumentResult | None, scope: Scope, in_index: bool,
        base: Path | None,
    ) -> None:  # fmt: skip
        if result is None or result.root != "sitemapindex":
            return
        if in_index:
            self.report.add("index-nested", name, None, name, "an index listed by an index")
            return
        # The children share the index's site (learned from its first URL for a file).
        origins = scope.origins or self._scope_origins
        for loc, line in result.children:
            if origin_of(loc) is None:
                if base is not None:  # a local index: a relative path, or a file: URL
                    path = unquote(loc[7:] if loc.startswith("file://") else loc)
                    self._file(base.parent / path, Scope(origins), in_index=True)
            elif loc in self._seen:
                self.report.add("duplicate-loc", name, line, loc, "this sitemap is listed twice")
            else:
                self._child(loc, Scope(origins, folder_of(loc)), base)
        # An HTTP index's relative children are left: loc-absolute reported them.

    def _child(self, loc: str, scope: Scope, base: Path | None) -> None:
        # A child of an index at an absolute URL: a file beside a local index when
        # --base-url says so, else fetched.
        local = self._local(loc, base)
        if local is not None:
            self._seen.add(loc)
            self._file(local, scope, in_index=True)
        else:
            self._url(loc, scope, in_index=True)

    def _local(self, loc: str, base: Path | None) -> Path | None:
        # With --base-url, a local index's children under that URL's folder are files.
        base_url = self.options.base_url
        if base is None or base_url is None:
            return None
        folder = base_url[: base_url.rfind("/") + 1]
        if not loc.startswith(folder):
            return None
        return base.parent / unquote(urlsplit(loc[len(folder) :]).path)


# -- the command -------------------------------------------------------------------------


def check(
    target: str,
    *,
    xsd: str | None = None,
    base_url: str | None = None,
    timeout: float = 30.0,
    max_findings: int = 100,
    strict: bool = False,
    http_checks: bool = True,
    sample: SampleOptions | None = None,
    out: TextIO | None = None,
) -> Report:
    """Check the site or file ``target``; the report (findings also printed to ``out``).

    ``sample`` fetches listed URLs of a site (see :mod:`sitemap_commands.check_audit`).
    Raises :class:`StartError` when it cannot start (see the module).
    """
    report = Report(per_rule=max_findings, strict=strict)
    if out is not None:
        stream = out
        report.listener = lambda finding: print(finding, file=stream)
    schemas = _Schemas(xsd) if xsd is not None else None
    if sample is not None and "://" not in target:
        raise StartError("--sample fetches a site's URLs: give the site's URL, not a FILE")
    options = _Options(timeout=timeout, base_url=base_url, http_checks=http_checks, sample=sample)
    _Checker(report, options, schemas).start(target)
    return report


def summary(report: Report) -> str:
    """The last line of the human output."""
    fetched = f" ({report.sampled:,} fetched)" if report.sampled else ""
    return (
        f"checked {report.documents:,} document(s), {report.urls:,} URL(s){fetched}:"
        f" {report.errors:,} error(s), {report.warnings:,} warning(s)"
        + (f" ({report.omitted:,} finding(s) not shown)" if report.omitted else "")
    )


def as_json(report: Report) -> dict[str, object]:
    """The ``--json`` output: the findings and the totals."""
    return {
        "findings": [finding.as_dict() for finding in report.findings],
        "totals": {
            "documents": report.documents,
            "urls": report.urls,
            "sampled": report.sampled,
            "errors": report.errors,
            "warnings": report.warnings,
            "omitted": report.omitted,
            "by_rule": dict(sorted(report.by_rule.items())),
        },
        "notes": report.notes,
        "ok": report.errors == 0,
    }


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"not a positive number: {text!r}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"not a whole number >= 0: {text!r}")
    return value


def rules_text() -> str:
    """Every rule id, its severity and meaning (``sitemap check --rules``)."""
    width = max(map(len, RULES))
    return "\n".join(f"{rule:<{width}}  {sev:<7}  {text}" for rule, (sev, text) in RULES.items())


def add_check_command(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``check URL|FILE`` and its options to the ``sitemap`` command's subparsers."""
    parser = subparsers.add_parser(
        "check",
        help="check a site's sitemaps (URL) or a sitemap file (FILE) and report problems",
        description=(
            "Read robots.txt and the sitemaps it lists (URL of a site), a sitemap or index"
            " (any other URL) or a local file, and report problems by rule. Exit status:"
            " 0 clean, 1 errors found, 2 bad usage or unreachable start."
        ),
    )
    parser.add_argument("target", metavar="URL|FILE", nargs="?", help="a site, sitemap or file")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    parser.add_argument("--xsd", metavar="DIR", help="also validate with the XSDs in DIR (lxml)")
    parser.add_argument(
        "--base-url", metavar="URL",
        help="the URL a FILE is published at (site and folder rules; children read beside it)",
    )  # fmt: skip
    parser.add_argument(
        "--timeout", type=_positive_float, default=30.0, help="seconds per request (30)"
    )
    parser.add_argument(
        "--max-findings", type=_count, default=100, metavar="N",
        help="findings listed per rule (100; 0 = all); the counts are always complete",
    )  # fmt: skip
    parser.add_argument("--strict", action="store_true", help="count warnings as errors")
    parser.add_argument(
        "--no-http-checks", action="store_true",
        help="skip the validator, 304, gzip and Vary rules",
    )  # fmt: skip
    parser.add_argument("--rules", action="store_true", help="list the rules and exit")
    _add_sample_options(parser)
    parser.add_argument(
        "--fail-on", choices=("error", "warning"), default="error",
        help="exit 1 on errors (default), or on warnings too",
    )  # fmt: skip
    parser.set_defaults(func=run_check)


def _add_sample_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sample", type=_count, metavar="N",
        help="fetch N listed URLs spread over every sitemap (0 = all) and report status,"
        " redirects, noindex and other canonicals",
    )  # fmt: skip
    parser.add_argument(
        "--concurrency", type=_positive_int, default=4, metavar="N",
        help="--sample: requests in flight at most (4)",
    )  # fmt: skip
    parser.add_argument(
        "--rate", type=_positive_float, default=5.0, metavar="R",
        help="--sample: requests per second to one host at most (5; a Crawl-delay slows it)",
    )  # fmt: skip


def _positive_int(text: str) -> int:
    value = _count(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"not a whole number >= 1: {text!r}")
    return value


def _sample_options(arguments: argparse.Namespace) -> SampleOptions | None:
    if arguments.sample is None:
        return None
    return SampleOptions(
        size=arguments.sample,
        concurrency=arguments.concurrency,
        rate=arguments.rate,
        timeout=arguments.timeout,
        progress=sys.stderr,
    )


def run_check(arguments: argparse.Namespace) -> int:
    """Run ``sitemap check`` as parsed; the exit status (0, 1 or 2)."""
    out = sys.stdout
    if arguments.rules:
        print(rules_text(), file=out)
        return 0
    if not arguments.target:
        print("sitemap check: error: give a URL or a FILE", file=sys.stderr)
        return 2
    try:
        report = check(
            arguments.target,
            xsd=arguments.xsd,
            base_url=arguments.base_url,
            timeout=arguments.timeout,
            max_findings=arguments.max_findings,
            strict=arguments.strict,
            http_checks=not arguments.no_http_checks,
            sample=_sample_options(arguments),
            out=None if arguments.json else out,
        )
    except StartError as exc:
        print(f"sitemap check: error: {exc}", file=sys.stderr)
        return 2
    if arguments.json:
        json.dump(as_json(report), out, indent=None)
        out.write("\n")
    else:
        for note in report.notes:
            print(f"note: {note}", file=out)
        print(summary(report), file=out)
    failed = report.errors or (arguments.fail_on == "warning" and report.warnings)
    return 1 if failed else 0


def _main() -> int:  # pragma: no cover - ``python -m sitemap_commands.checker``
    parser = argparse.ArgumentParser(prog="sitemap")
    add_check_command(parser.add_subparsers(dest="command", required=True))
    arguments = parser.parse_args()
    status: int = arguments.func(arguments)
    return status


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(_main())
