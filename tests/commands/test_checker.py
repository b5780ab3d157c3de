"""``sitemap check``: one broken document per rule, the HTTP rules, streaming, output, exit.

The broken documents are in ``tests/data/check/``, one per rule, named after it; each is
checked as a file published at ``https://example.com/blog/sitemap.xml`` (so that the
site and folder rules apply, and an index's children are read beside it).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from socketserver import BaseServer
from typing import Any

import pytest

from sitemap_commands.checker import add_check_command, check
from sitemap_commands.checker_rules import RULES, DigestSet, check_lastmod, digest

DATA = Path(__file__).resolve().parents[1] / "data" / "check"
XSD_DIR = Path(__file__).resolve().parents[3] / "shared" / "xsd"
BASE = "https://example.com/blog/sitemap.xml"
SITEMAP = "http://www.sitemaps.org/schemas/sitemap/0.9"

#: Rules shown by a file of tests/data/check (named after the rule) or built by a test.
FILE_RULES = sorted(p.stem for p in DATA.glob("*.xml") if "." not in p.stem and p.stem != "clean")
HTTP_RULES = {"http-validators", "http-conditional", "http-gzip", "http-vary", "http-status"}
BUILT_RULES = {"limit-urls", "limit-bytes", "limit-sitemaps", "robots-sitemap", "news-count"}
#: Rules about the listed URLs of a served site (tests/commands/test_check_audit.py).
SITE_RULES = {
    "robots-blocked",
    "url-fetch",
    "url-status",
    "url-redirect",
    "url-noindex",
    "url-canonical",
}


def run(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Parse ``sitemap check ...`` as the console script will, run it; status, out, err."""
    parser = argparse.ArgumentParser(prog="sitemap")
    add_check_command(parser.add_subparsers(dest="command", required=True))
    arguments = parser.parse_args(["check", *argv])
    status = arguments.func(arguments)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def json_run(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    status, out, _ = run(*argv, "--json", capsys=capsys)
    return status, json.loads(out)


def rules_of(report: dict[str, Any]) -> set[str]:
    return {finding["rule"] for finding in report["findings"]}


def test_every_rule_has_a_broken_document_or_a_test() -> None:
    covered = set(FILE_RULES) | HTTP_RULES | BUILT_RULES | SITE_RULES
    assert covered == set(RULES), set(RULES) ^ covered


def test_the_clean_document_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(str(DATA / "clean.xml"), "--base-url", BASE, capsys=capsys)
    assert status == 0
    assert out == "checked 1 document(s), 2 URL(s): 0 error(s), 0 warning(s)\n"


@pytest.mark.parametrize("rule", FILE_RULES)
def test_each_broken_document_is_caught_by_its_rule(
    rule: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [str(DATA / f"{rule}.xml"), "--base-url", BASE]
    if rule == "xsd":
        if not XSD_DIR.is_dir():
            pytest.skip(f"no XSD schemas in {XSD_DIR}")
        argv += ["--xsd", str(XSD_DIR)]
    status, report = json_run(*argv, capsys=capsys)
    found = [f for f in report["findings"] if f["rule"] == rule]
    assert found, report["findings"]
    severity = RULES[rule][0]
    assert {f["severity"] for f in found} == {severity}
    assert status == (1 if report["totals"]["errors"] else 0)
    for finding in found:
        assert finding["document"].endswith(".xml")
        if rule not in ("empty", "fetch", "index-nested"):
            assert isinstance(finding["line"], int) and finding["line"] >= 2, finding


def test_findings_name_the_document_line_rule_and_value(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(str(DATA / "lastmod-zone.xml"), "--base-url", BASE, capsys=capsys)
    assert status == 1
    first = out.splitlines()[0]
    assert first == (
        f"{DATA / 'lastmod-zone.xml'}:3: error [lastmod-zone]"
        " <lastmod> has a time but no time zone: '2024-05-01T10:00:00'"
        " (https://example.com/blog/a)"
    )


def test_the_clean_documents_pass_the_official_schemas(
    capsys: pytest.CaptureFixture[str],
) -> None:
    if not XSD_DIR.is_dir():
        pytest.skip(f"no XSD schemas in {XSD_DIR}")
    status, report = json_run(
        str(DATA / "clean.xml"), "--base-url", BASE, "--xsd", str(XSD_DIR), capsys=capsys
    )
    assert (status, report["findings"]) == (0, [])


def test_a_gzipped_file_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "sitemap.xml.gz"
    path.write_bytes(gzip.compress((DATA / "priority-range.xml").read_bytes()))
    status, report = json_run(str(path), "--base-url", BASE, capsys=capsys)
    assert status == 1
    assert rules_of(report) == {"priority-range"}


def test_the_lastmod_forms() -> None:
    assert check_lastmod("2024-05-01") is None
    assert check_lastmod("2024-05-01T10:00Z") is None
    assert check_lastmod("2024-05-01T10:00:00.5-05:00") is None
    assert check_lastmod("2024-05-01T10:00:00") == "lastmod-zone"
    for text in ("2024", "2024-02-30", "2024-05-01T25:00Z", "May 1st", "2024-05-01 10:00Z"):
        assert check_lastmod(text) == "lastmod-format", text


def test_the_digest_set() -> None:
    members = DigestSet()
    values = [digest(f"https://example.com/{n}") for n in range(5000)]
    assert all(members.add(value) for value in values)
    assert not any(members.add(value) for value in values)
    assert len(members) == 5000 and values[0] in members and 0 not in members
    assert members.add(0) and not members.add(0)


# -- the limits ------------------------------------------------------------------------


def urlset(locs: Iterator[str], padding: str = "") -> bytes:
    body = "".join(f"<url><loc>{loc}</loc></url>\n" for loc in locs)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP}">\n'
        f"{padding}{body}</urlset>\n"
    ).encode()


def test_more_than_50000_urls(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_bytes(urlset(f"https://example.com/blog/{n}" for n in range(50_001)))
    status, report = json_run(str(path), "--base-url", BASE, capsys=capsys)
    assert status == 1 and rules_of(report) == {"limit-urls"}
    (finding,) = report["findings"]
    assert finding["line"] == 3 + 50_000


def test_more_than_50_mib(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "sitemap.xml.gz"
    padding = (" " * 1023 + "\n") * 51_200  # 50 MiB of whitespace between elements
    path.write_bytes(gzip.compress(urlset(iter(["https://example.com/blog/a"]), padding), 1))
    status, report = json_run(str(path), "--base-url", BASE, capsys=capsys)
    assert status == 1 and rules_of(report) == {"limit-bytes"}


def test_more_than_50000_sitemaps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "child.xml").write_bytes(urlset(iter(["https://example.com/blog/a"])))
    # Every child is the same file under another query: read once each, quickly.
    children = "".join(
        f"<sitemap><loc>https://example.com/blog/child.xml?n={n}</loc></sitemap>\n"
        for n in range(50_001)
    )
    path = tmp_path / "sitemap.xml"
    path.write_text(f'<sitemapindex xmlns="{SITEMAP}">\n{children}</sitemapindex>\n')
    report = check(str(path), base_url=BASE)
    assert report.by_rule.get("limit-sitemaps") == 1


def test_more_than_1000_news_entries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Fresh articles (so news-old stays silent): only the count is wrong.
    from datetime import UTC, datetime

    now = datetime.now(UTC).isoformat(timespec="seconds")
    news = "http://www.google.com/schemas/sitemap-news/0.9"
    entries = "".join(
        f"<url><loc>https://example.com/blog/{n}</loc><news:news><news:publication>"
        "<news:name>Blog</news:name><news:language>en</news:language></news:publication>"
        f"<news:publication_date>{now}</news:publication_date><news:title>{n}</news:title>"
        "</news:news></url>\n"
        for n in range(1_001)
    )
    path = tmp_path / "sitemap.xml"
    path.write_text(f'<urlset xmlns="{SITEMAP}" xmlns:news="{news}">\n{entries}</urlset>\n')
    status, report = json_run(str(path), "--base-url", BASE, capsys=capsys)
    assert status == 1 and rules_of(report) == {"news-count"}
    (finding,) = report["findings"]
    assert finding["url"] == "https://example.com/blog/1000"


# -- over HTTP -------------------------------------------------------------------------


@dataclass
class Behaviour:
    """What the tiny server does right."""

    validators: bool = True
    conditional: bool = True
    gzip: bool = True
    vary: bool = True
    robots: bool = True
    child_status: int = 200


class TinyHandler(BaseHTTPRequestHandler):
    behaviour = Behaviour()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        host = f"http://127.0.0.1:{self.server.server_address[1]}"
        rules = self.behaviour
        if self.path == "/robots.txt":
            line = f"Sitemap: {host}/sitemap.xml\n" if rules.robots else ""
            self.reply(200, f"User-agent: *\nDisallow:\n{line}".encode(), "text/plain")
        elif self.path == "/sitemap.xml":
            body = (
                f'<sitemapindex xmlns="{SITEMAP}"><sitemap><loc>{host}/pages.xml</loc>'
                "</sitemap></sitemapindex>"
            ).encode()
            self.reply(200, body)
        elif self.path == "/pages.xml" and rules.child_status == 200:
            self.reply(200, urlset(iter([f"{host}/", f"{host}/about"])))
        else:
            self.reply(rules.child_status if self.path == "/pages.xml" else 404, b"no")

    def reply(self, status: int, body: bytes, kind: str = "application/xml") -> None:
        rules = self.behaviour
        zipped = rules.gzip and "gzip" in self.headers.get("Accept-Encoding", "")
        etag = '"gz-1"' if zipped else '"1"'
        if status == 200 and rules.conditional and self.headers.get("If-None-Match") == etag:
            self.send_response(304)
            self.send_header("ETag", etag)
            self.end_headers()
            return
        if zipped:
            body = gzip.compress(body)
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        if rules.validators:
            self.send_header("ETag", etag)
        if zipped:
            self.send_header("Content-Encoding", "gzip")
            if rules.vary:
                self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def serving(server: BaseServer) -> Iterator[str]:
    """``server`` (bound to a port of 127.0.0.1) serving in a thread: its origin."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def tiny() -> Iterator[tuple[str, Behaviour]]:
    """A tiny site on 127.0.0.1: its URL and the behaviour to change."""
    behaviour = Behaviour()
    handler = type("Handler", (TinyHandler,), {"behaviour": behaviour})
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as origin:
        yield origin, behaviour


def test_a_well_served_site_is_clean(
    tiny: tuple[str, Behaviour], capsys: pytest.CaptureFixture[str]
) -> None:
    url, _ = tiny
    status, report = json_run(url + "/", capsys=capsys)
    assert (status, report["findings"]) == (0, [])
    assert report["totals"]["documents"] == 2 and report["totals"]["urls"] == 2


@pytest.mark.parametrize(
    ("change", "rule"),
    [
        ({"validators": False}, "http-validators"),
        ({"conditional": False}, "http-conditional"),
        ({"gzip": False}, "http-gzip"),
        ({"vary": False}, "http-vary"),
        ({"child_status": 500}, "http-status"),
        ({"robots": False}, "robots-sitemap"),
    ],
)
def test_the_http_rules(
    tiny: tuple[str, Behaviour],
    change: dict[str, Any],
    rule: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, behaviour = tiny
    for name, value in change.items():
        setattr(behaviour, name, value)
    status, report = json_run(url, capsys=capsys)
    assert rules_of(report) == {rule}
    assert status == (1 if RULES[rule][0] == "error" else 0)
    if rule.startswith("http-"):
        assert {f["document"] for f in report["findings"]} <= {
            f"{url}/sitemap.xml",
            f"{url}/pages.xml",
        }
    # --strict counts the warnings as errors
    status, _ = json_run(url, "--strict", capsys=capsys)
    assert status == 1


def test_a_sitemap_url_is_checked_itself(
    tiny: tuple[str, Behaviour], capsys: pytest.CaptureFixture[str]
) -> None:
    url, _ = tiny
    status, report = json_run(url + "/pages.xml", capsys=capsys)
    assert (status, report["totals"]["documents"], report["totals"]["urls"]) == (0, 1, 2)


# -- output and exit statuses ------------------------------------------------------------


def test_the_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        str(DATA / "duplicate-loc.xml"), "--base-url", BASE, "--json", capsys=capsys
    )
    assert status == 1
    report = json.loads(out)
    assert out.count("\n") == 1  # one object, one line
    assert set(report) == {"findings", "totals", "notes", "ok"}
    assert report["notes"] == []
    assert report["ok"] is False
    assert report["totals"] == {
        "documents": 1,
        "urls": 2,
        "sampled": 0,
        "errors": 1,
        "warnings": 0,
        "omitted": 0,
        "by_rule": {"duplicate-loc": 1},
    }
    assert report["findings"] == [
        {
            "rule": "duplicate-loc",
            "severity": "error",
            "url": "https://example.com/blog/a",
            "document": str(DATA / "duplicate-loc.xml"),
            "line": 4,
            "value": "https://example.com/blog/a",
            "message": "listed before (in this sitemap or another)",
        }
    ]


def test_findings_are_capped_per_rule_but_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_bytes(urlset(f"https://example.org/{n}" for n in range(300)))
    status, report = json_run(str(path), "--base-url", BASE, "--max-findings", "5", capsys=capsys)
    assert status == 1
    assert len(report["findings"]) == 5
    assert report["totals"]["errors"] == 300 and report["totals"]["omitted"] == 295


def test_exit_statuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(str(DATA / "clean.xml"), "--base-url", BASE, capsys=capsys)[0] == 0
    assert run(str(DATA / "priority-range.xml"), "--base-url", BASE, capsys=capsys)[0] == 1
    # warnings alone: 0
    assert run(str(DATA / "loc-ascii.xml"), "--base-url", BASE, capsys=capsys)[0] == 0
    # bad usage, unreachable starts: 2, with a message on stderr
    status, out, err = run(str(tmp_path / "missing.xml"), capsys=capsys)
    assert (status, out) == (2, "") and "no such file" in err
    assert run(capsys=capsys)[0] == 2
    assert run("ftp://example.com/sitemap.xml", capsys=capsys)[0] == 2
    assert run("https://example.com/", "--base-url", BASE, capsys=capsys)[0] == 2
    assert run(str(DATA / "clean.xml"), "--xsd", str(tmp_path), capsys=capsys)[0] == 2
    closed = _closed_port()
    status, _, err = run(f"http://127.0.0.1:{closed}/", "--timeout", "5", capsys=capsys)
    assert status == 2 and "robots.txt" in err
    with pytest.raises(SystemExit) as exited:
        run("--timeout", "soon", "x.xml", capsys=capsys)
    assert exited.value.code == 2


def test_a_missing_start_sitemap_is_unreachable(
    tiny: tuple[str, Behaviour], capsys: pytest.CaptureFixture[str]
) -> None:
    url, _ = tiny
    status, _, err = run(url + "/nope.xml", capsys=capsys)
    assert status == 2 and "HTTP 404" in err


def test_xsd_without_lxml_names_the_install(tmp_path: Path) -> None:
    script = (
        "import sys, argparse; sys.modules['lxml'] = None\n"
        "from sitemap_commands.checker import add_check_command\n"
        "p = argparse.ArgumentParser(); add_check_command(p.add_subparsers())\n"
        f"a = p.parse_args(['check', {str(DATA / 'clean.xml')!r}, '--xsd', '.'])\n"
        "sys.exit(a.func(a))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 2 and "pip install lxml" in done.stderr


def test_rules_are_listed(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run("--rules", capsys=capsys)
    assert status == 0
    assert [line.split()[0] for line in out.splitlines()] == list(RULES)
    assert all(re.fullmatch(r"[a-z]+(-[a-z]+)*", rule) for rule in RULES)


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- streaming -------------------------------------------------------------------------

BIG_FILES = 20
BIG_PER_FILE = 50_000


def test_a_million_urls_with_flat_memory(tmp_path: Path) -> None:
    """1,000,000 URLs in 20 files served by http.server: memory is the digests only."""
    server = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "--bind", "127.0.0.1", "0"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(re.search(r"port (\d+)", server.stdout.readline()).group(1))  # type: ignore[union-attr]
        host = f"http://127.0.0.1:{port}"
        total = _write_site(tmp_path, host)
        tracemalloc.start()
        started = time.perf_counter()
        report = check(host + "/", max_findings=0)
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        server.terminate()
        server.wait(10)
    assert report.urls == BIG_FILES * BIG_PER_FILE
    assert report.documents == BIG_FILES + 1
    assert report.errors == 0
    # http.server has Last-Modified (and answers 304) but never gzips.
    assert set(report.by_rule) == {"http-gzip"}
    per_url = peak / report.urls
    print(
        f"\n{report.urls:,} URLs, {total / 2**20:.0f} MiB of XML in {elapsed:.1f} s"
        f" (tracemalloc on): peak {peak / 2**20:.1f} MiB, {per_url:.1f} bytes per URL"
    )
    # The documents are 100 MiB; the run holds the digest table (16 MiB at 1,000,000,
    # 24 MiB while it doubles) and one chunk of one document.
    assert peak < 32 * 2**20
    assert peak < total / 3


def _write_site(folder: Path, host: str) -> int:
    total = 0
    children = []
    for number in range(1, BIG_FILES + 1):
        start = (number - 1) * BIG_PER_FILE
        body = "".join(
            f"<url><loc>{host}/items/{n}</loc><lastmod>2024-05-01T10:00:00+00:00</lastmod></url>\n"
            for n in range(start, start + BIG_PER_FILE)
        )
        data = (
            f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP}">\n{body}</urlset>\n'
        ).encode()
        (folder / f"sitemap-{number}.xml").write_bytes(data)
        total += len(data)
        children.append(f"<sitemap><loc>{host}/sitemap-{number}.xml</loc></sitemap>\n")
    index = f'<sitemapindex xmlns="{SITEMAP}">\n{"".join(children)}</sitemapindex>\n'
    (folder / "sitemap.xml").write_text(index)
    (folder / "robots.txt").write_text(f"User-agent: *\nDisallow:\nSitemap: {host}/sitemap.xml\n")
    return total + len(index)


def test_a_feed_is_read_as_well_formed_xml_only(capsys: pytest.CaptureFixture[str]) -> None:
    # robots.txt may list an Atom or RSS feed: Google reads it as a sitemap.
    status, report = json_run(str(DATA / "feed.atom"), capsys=capsys)
    assert (status, report["findings"], report["totals"]["documents"]) == (0, [], 1)
