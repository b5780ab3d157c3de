"""What every peer driver shares: the data, the reference, the clocks, the checks.

This module imports nothing of this project's packages: a peer's driver runs in the
peer's own virtual environment, where ``flask_sitemapper`` is the PyPI package of that
name, so it cannot import ``benchmarks/bench_page.py`` (which imports ours). It takes
the data, the reference and the memory measure from ``benchmarks/reference.py`` and
``benchmarks/measure.py``, which import only the standard library, as
``bench_page.py`` does; ``bench_peers.py`` still checks, before it measures anything,
that both give byte-identical documents, so the peers serve the same 50,000 URLs as
this project's contenders and are compared to the same reference.

A driver builds its app, then calls :func:`serve` with one callable making a request.
``serve`` answers commands read from stdin, one JSON object per line, on a private
copy of the original stdout (the peer's own prints go to stderr):

* ``{"cmd": "check"}``: one request, its document checked (:func:`check_document`);
* ``{"cmd": "run"}``: the reference once, then the peer once, both timed;
* ``{"cmd": "memory"}``: peak traced memory of one reference and one request;
* ``{"cmd": "quit"}``.
"""

from __future__ import annotations

import asyncio
import gc
import io
import json
import os
import re
import sys
import time
import traceback
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, MutableMapping
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from typing import Any

# The folder above, after the drivers' own and before the environment's packages (so
# that no installed module of the same name stands in): its reference.py and measure.py
# import only the standard library.
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from measure import peak_memory
from reference import CHANGEFREQS, SITEMAP_NS, Raw, render_reference
from reference import build_raw as build_raw  # the drivers take it from here

BASE_URL = "https://example.com"
HOST = "example.com"


def path_of(loc: str) -> str:
    """The path and query of one of the data's absolute locations."""
    return loc[len(BASE_URL) :]


# One request: clocks from the call to the drained body ------------------------------


@dataclass
class Fetch:
    """One request: seconds (wall, CPU, to the first body byte), what the body gave."""

    wall: float = 0.0
    cpu: float = 0.0
    first_byte: float = 0.0
    chunks: int = 0
    size: int = 0
    status: int = 0
    headers: list[tuple[str, str]] = field(default_factory=list)

    def header(self, name: str) -> str | None:
        """The response header ``name`` (any case), or None."""
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def summary(self) -> dict[str, Any]:
        """The timings and sizes, without the headers (for the JSON answers)."""
        data = asdict(self)
        del data["headers"]
        return data


def wsgi_environ(path: str) -> dict[str, Any]:
    """A plain WSGI environ for ``GET https://example.com{path}``, no request headers.

    Standard library only, so every WSGI peer gets the same environ whatever its
    framework (no Accept-Encoding: identity bodies everywhere).
    """
    path_info, _, query = path.partition("?")
    return {
        "REQUEST_METHOD": "GET",
        "SCRIPT_NAME": "",
        "PATH_INFO": path_info,
        "QUERY_STRING": query,
        "SERVER_NAME": HOST,
        "SERVER_PORT": "443",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": HOST,
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "https",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }


def fetch_wsgi(app: Callable[..., Iterable[bytes]], path: str, sink: list[bytes] | None) -> Fetch:
    """Call the WSGI ``app`` directly and drain its body; keep chunks only if ``sink``.

    The clocks start at the call, after the environ is built, and stop once the body
    is drained and closed.
    """
    environ = wsgi_environ(path)
    record = Fetch()

    def start_response(
        status: str, headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Callable[[bytes], object]:
        record.status = int(status.split(" ", 1)[0])
        record.headers = [(str(k), str(v)) for k, v in headers]
        return lambda data: None

    cpu_started = time.process_time()
    started = time.perf_counter()
    body = app(environ, start_response)
    try:
        for chunk in body:
            if not chunk:
                continue
            if not record.chunks:
                record.first_byte = time.perf_counter() - started
            record.chunks += 1
            record.size += len(chunk)
            if sink is not None:
                sink.append(chunk)
    finally:
        close = getattr(body, "close", None)
        if close is not None:
            close()
    record.wall = time.perf_counter() - started
    record.cpu = time.process_time() - cpu_started
    return record


def asgi_scope(path: str) -> dict[str, Any]:
    """An ASGI HTTP scope for ``GET https://example.com{path}``, only a Host header."""
    path_only, _, query = path.partition("?")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "https",
        "path": path_only,
        "raw_path": path_only.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", HOST.encode())],
        "client": ("127.0.0.1", 50000),
        "server": (HOST, 443),
        "state": {},
    }


def fetch_asgi(
    loop: asyncio.AbstractEventLoop, app: Any, path: str, sink: list[bytes] | None
) -> Fetch:
    """Run the ASGI ``app`` on ``loop`` for one request and collect its body messages.

    ``receive`` gives the (empty) request body once, then waits as a client that
    stays connected. The clocks start at the call, after the scope is built.
    """
    scope = asgi_scope(path)
    record = Fetch()
    body_sent = False

    async def receive() -> MutableMapping[str, Any]:
        nonlocal body_sent
        if not body_sent:
            body_sent = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def call() -> None:
        started = time.perf_counter()
        cpu_started = time.process_time()

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                record.status = int(message["status"])
                record.headers = [
                    (bytes(k).decode("latin-1"), bytes(v).decode("latin-1"))
                    for k, v in message.get("headers", [])
                ]
            elif message.get("body"):
                if not record.chunks:
                    record.first_byte = time.perf_counter() - started
                record.chunks += 1
                record.size += len(message["body"])
                if sink is not None:
                    sink.append(bytes(message["body"]))

        await app(scope, receive, send)
        record.wall = time.perf_counter() - started
        record.cpu = time.process_time() - cpu_started

    loop.run_until_complete(call())
    return record


def timed_reference(raw: list[Raw]) -> Fetch:
    """The reference, timed as a request is: wall and CPU, its one "chunk"."""
    cpu_started = time.process_time()
    started = time.perf_counter()
    document = render_reference(raw)
    wall = time.perf_counter() - started
    return Fetch(wall, time.process_time() - cpu_started, wall, 1, len(document), 200)


def streamed(record: Fetch) -> bool:
    """Whether the body was streamed: several chunks, the first before half the time.

    A document rendered whole (or into a spool) before its first byte is not, however
    it is then cut into chunks.
    """
    return record.chunks > 1 and record.first_byte < record.wall / 2


# Checking a document ------------------------------------------------------------------

#: W3C Datetime (the protocol's lastmod format): a time needs a time zone designator.
_W3C = re.compile(r"\d{4}(-\d{2}(-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?)?)?")
#: A time without a zone, which xsd:dateTime accepts but W3C Datetime does not.
_NO_ZONE = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?")
_BARE_AMP = re.compile(rb"&(?!(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)")
_ORDER = ("loc", "lastmod", "changefreq", "priority")


class _Tally:
    """Counts of one kind of finding, with the first example."""

    def __init__(self) -> None:
        self.found: dict[str, list[Any]] = {}

    def add(self, message: str, example: str) -> None:
        entry = self.found.setdefault(message, [0, example])
        entry[0] += 1

    def lines(self) -> list[str]:
        return [
            f"{message}: {count:,} URLs (first: {example})"
            for message, (count, example) in self.found.items()
        ]


def _same_instant(text: str, source: datetime) -> str | None:
    """How the written lastmod ``text`` differs from the ``source`` datetime, or None."""
    if "T" not in text and " " not in text:
        written_date = date.fromisoformat(text) if len(text) == 10 else None
        if written_date == source.date():
            return "lastmod written as a date only (time of day dropped)"
        return "lastmod a date other than the source's own (shifted to another zone)"
    try:
        written = datetime.fromisoformat(text.replace(" ", "T"))
    except ValueError:
        return "lastmod unreadable as a datetime"
    if written.tzinfo is None:
        if written == source.replace(tzinfo=None):
            return None  # reported as a defect (no zone); the wall time is right
        return "lastmod a different wall time, no zone"
    if written != source:
        return "lastmod a different instant from the source"
    if written.utcoffset() != source.utcoffset():
        return "lastmod the same instant, rewritten in another zone"
    return None


def check_document(record: Fetch, body: bytes, raw: list[Raw]) -> dict[str, Any]:
    """Check one answer against the data it should list.

    ``defects`` make a document invalid for the protocol (not 200, not well-formed
    XML, a root other than ``<urlset>``, a ``<url>`` count other than the data's,
    children out of the XSD's order, a lastmod that is not W3C Datetime, a
    changefreq or priority out of range). ``losses`` keep it valid but lose or
    change what the data said (a priority or lastmod left out, a lastmod cut to a
    date or moved to another zone, a location other than the data's).
    """
    defects: list[str] = []
    tally, losses = _Tally(), _Tally()
    if record.status != 200:
        defects.append(f"status {record.status}")
    if record.header("Content-Encoding"):
        defects.append(f"Content-Encoding {record.header('Content-Encoding')} not asked for")
    root = _parsed(body, defects)
    if root is None:
        return {"valid": False, "urls": body.count(b"<url>"), "defects": defects}
    if root.tag != f"{{{SITEMAP_NS}}}urlset":
        defects.append(f"root element {root.tag}, not urlset")
    urls = root.findall(f"{{{SITEMAP_NS}}}url")
    if len(urls) != len(raw):
        defects.append(f"{len(urls):,} <url> elements, the data has {len(raw):,}")
    for url, item in zip(urls, raw, strict=False):
        _check_url(url, item, tally, losses)
    defects += tally.lines()
    return {
        "valid": not defects,
        "urls": len(urls),
        "defects": defects,
        "losses": losses.lines(),
    }


def _parsed(body: bytes, defects: list[str]) -> ET.Element | None:
    # The document's root, or None (a defect said) when it is not XML at all.
    try:
        return ET.fromstring(body)
    except ET.ParseError as error:
        repaired = _BARE_AMP.sub(b"&amp;", body)
        try:
            root = ET.fromstring(repaired)
        except ET.ParseError:
            defects.append(f"not well-formed XML ({error})")
            return None
        # Go on with the '&' escaped, so that the other checks still say something.
        defects.append(
            f"not well-formed XML: '&' written unescaped ({error}; the other checks ran "
            "with it escaped)"
        )
        return root


def _check_url(url: ET.Element, item: Raw, tally: _Tally, losses: _Tally) -> None:
    # One <url> against the data's row: its children's order, then each field.
    loc, lastmod, changefreq, priority = item
    names = [child.tag.rpartition("}")[2] for child in url]
    fields = {name: (child.text or "").strip() for child, name in zip(url, names, strict=True)}
    ranks = [_ORDER.index(name) if name in _ORDER else -1 for name in names]
    if ranks != sorted(ranks) or len(set(names)) != len(names) or -1 in ranks:
        tally.add("children not in the XSD's order loc, lastmod, changefreq, priority", loc)
    if fields.get("loc") != loc:
        losses.add("loc other than the data's", repr(fields.get("loc")))
    _check_lastmod(fields.get("lastmod"), lastmod, loc, tally, losses)
    word = fields.get("changefreq")
    if word is None:
        losses.add("changefreq left out", loc)
    elif word not in CHANGEFREQS:
        tally.add("changefreq not one of the seven words", word)
    elif word != changefreq:
        losses.add("changefreq other than the data's", word)
    _check_priority(fields.get("priority"), priority, loc, tally, losses)


def _check_lastmod(
    written: str | None, lastmod: Any, loc: str, tally: _Tally, losses: _Tally
) -> None:
    if written is None:
        losses.add("lastmod left out", loc)
        return
    if not _W3C.fullmatch(written):
        if _NO_ZONE.fullmatch(written) and "T" in written:
            tally.add("lastmod with a time but no time zone (not W3C Datetime)", written)
        else:
            tally.add("lastmod not W3C Datetime", written)
    difference = _same_instant(written, lastmod)
    if difference:
        losses.add(difference, f"{written} for {lastmod.isoformat()}")


def _check_priority(
    number: str | None, priority: float, loc: str, tally: _Tally, losses: _Tally
) -> None:
    if number is None:
        losses.add(f"priority left out (the data has {priority})", loc)
        return
    try:
        value = float(number)
    except ValueError:
        tally.add("priority not a number", number)
        return
    if not 0.0 <= value <= 1.0:
        tally.add("priority out of 0.0-1.0", number)
    elif value != priority:
        losses.add("priority other than the data's", number)


# The command loop of a driver ---------------------------------------------------------


def serve(
    name: str,
    request: Callable[[list[bytes] | None], Fetch],
    raw: list[Raw],
    versions: dict[str, str],
    notes: list[str],
    package_file: str,
) -> None:
    """Answer the benchmark's commands until ``quit`` (see the module docstring).

    ``request(sink)`` makes one request of the peer's page. The first answer, sent
    before any command, says the peer is ready (after one warm-up request), with the
    peer's versions, the notes on how it is used, and ``package_file``, where its
    package was imported from (the benchmark checks it is the peer's own venv).
    """
    # The protocol gets its own copy of stdout; anything the peer prints goes to stderr.
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())

    def answer(payload: dict[str, Any]) -> None:
        channel.write(json.dumps(payload) + "\n")

    try:
        request(None)  # warm-up: lazy set-up (templates compiled, imports, caches)
        timed_reference(raw)
    except Exception:
        answer({"ok": False, "error": traceback.format_exc()})
        return
    answer(
        {
            "ok": True,
            "name": name,
            "versions": versions,
            "notes": notes,
            "package_file": package_file,
        }
    )
    for line in sys.stdin:
        command = json.loads(line).get("cmd")
        try:
            if command == "quit":
                break
            if command == "check":
                sink: list[bytes] = []
                record = request(sink)
                body = b"".join(sink)
                checked = check_document(record, body, raw)
                checked.update(
                    fetch=record.summary(),
                    headers=record.headers,
                    reference_identical=body == render_reference(raw),
                    head=body[:600].decode("utf-8", "replace"),
                )
                answer({"ok": True, **checked})
            elif command == "run":
                gc.collect()
                reference = timed_reference(raw)
                gc.collect()
                record = request(None)
                answer({"ok": True, "reference": reference.summary(), "peer": record.summary()})
            elif command == "memory":
                answer(
                    {
                        "ok": True,
                        "reference": peak_memory(lambda: render_reference(raw)),
                        "peer": peak_memory(lambda: request(None)),
                    }
                )
            else:
                answer({"ok": False, "error": f"unknown command {command!r}"})
        except Exception:
            answer({"ok": False, "error": traceback.format_exc()})
