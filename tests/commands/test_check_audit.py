"""``sitemap check`` on what search engines report: a small site with each defect planted.

The site runs on a real HTTP server on 127.0.0.1. Its sitemaps list clean URLs and
one URL per defect (blocked by robots.txt for every crawler or for Googlebot only,
404 and 500, a redirect, noindex in a meta tag and in headers, another canonical in
a link tag and in a Link header, a lastmod in the future, an old news article,
retired image and video tags): each must be named in a finding of its rule, and no
clean URL in any finding. Every connection the checker opens is held to 127.0.0.1.
"""

from __future__ import annotations

import io
import itertools
import socket
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from sitemap_commands.check_polite import HostPacer, progress_bar
from sitemap_commands.check_sample import Sample

from .test_checker import SITEMAP, json_run, run, serving

IMAGE = "http://www.google.com/schemas/sitemap-image/1.1"
VIDEO = "http://www.google.com/schemas/sitemap-video/1.1"
NEWS = "http://www.google.com/schemas/sitemap-news/0.9"
CRAWL_DELAY = 0.05
ELSEWHERE = "http://192.0.2.1/elsewhere"

#: The defective URLs (path -> the rule that must name it).
DEFECTS = {
    "/private/report": "robots-blocked",
    "/no-google": "robots-blocked",
    "/missing": "url-status",
    "/broken": "url-status",
    "/brochure.pdf": "url-status",
    "/moved": "url-redirect",
    "/noindex-meta": "url-noindex",
    "/noindex-header": "url-noindex",
    "/noindex-googlebot": "url-noindex",
    "/copy": "url-canonical",
    "/copy-header": "url-canonical",
    "/future": "lastmod-future",
    "/photo": "image-retired",
    "/clip": "video-retired",
    "/old-story": "news-old",
}
#: The clean URLs: each answers 200 and says nothing against itself.
CLEAN = ("/", "/about", "/self-canonical", "/otherbot-noindex", "/guide.pdf", "/new-story")

ROBOTS = f"""User-agent: *
Disallow: /private/
Crawl-delay: {CRAWL_DELAY}

User-agent: Googlebot
Disallow: /private/
Disallow: /no-google
"""


def page(head: str = "") -> bytes:
    text = f"<!doctype html><html><head><title>t</title>{head}</head><body>hi</body></html>"
    return text.encode()


class DefectiveSite(BaseHTTPRequestHandler):
    """The site: robots.txt, an index of two sitemaps, and the pages."""

    protocol_version = "HTTP/1.1"
    #: (method, path, time) of every request, in order.
    log: ClassVar[list[tuple[str, str, float]]] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def host(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def do_HEAD(self) -> None:
        self.answer(with_body=False)

    def do_GET(self) -> None:
        self.answer(with_body=True)

    def answer(self, with_body: bool) -> None:
        self.log.append((self.command, self.path, time.monotonic()))
        status, headers, body = self.route(self.path)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def route(self, path: str) -> tuple[int, dict[str, str], bytes]:
        host = self.host
        html = {"Content-Type": "text/html; charset=utf-8"}
        documents = {
            "/robots.txt": f"{ROBOTS}\nSitemap: {host}/sitemap.xml\n",
            "/sitemap.xml": (
                f'<sitemapindex xmlns="{SITEMAP}">'
                f"<sitemap><loc>{host}/pages.xml</loc></sitemap>"
                f"<sitemap><loc>{host}/news.xml</loc></sitemap></sitemapindex>"
            ),
            "/pages.xml": pages_sitemap(host),
            "/news.xml": news_sitemap(host),
        }
        if path in documents:
            return 200, {"Content-Type": "text/plain"}, documents[path].encode()
        special: dict[str, tuple[int, dict[str, str], bytes]] = {
            "/missing": (404, html, page()),
            "/broken": (500, html, page()),
            "/brochure.pdf": (404, {"Content-Type": "text/plain"}, b"gone"),
            "/guide.pdf": (200, {"Content-Type": "application/pdf"}, b"%PDF-1.4"),
            "/moved": (301, {"Location": "/about"}, b""),
            "/noindex-meta": (200, html, page('<meta name="robots" content="noindex,follow">')),
            "/noindex-header": (200, {**html, "X-Robots-Tag": "noindex"}, page()),
            "/noindex-googlebot": (
                200, {**html, "X-Robots-Tag": "googlebot: noindex, nofollow"}, page()
            ),
            "/otherbot-noindex": (200, {**html, "X-Robots-Tag": "otherbot: noindex"}, page()),
            "/copy": (200, html, page(f'<link rel="canonical" href="{host}/about">')),
            "/copy-header": (200, {**html, "Link": '</about>; rel="canonical"'}, page()),
            "/self-canonical": (200, html, page('<link rel="canonical" href="/self-canonical">')),
        }  # fmt: skip
        return special.get(path, (200, html, page()))


def pages_sitemap(host: str) -> str:
    plain = [p for p in (*CLEAN, *DEFECTS) if p not in ("/new-story", "/old-story")]
    special = {"/future", "/photo", "/clip"}
    entries = [f"<url><loc>{host}{p}</loc></url>" for p in plain if p not in special]
    # Off the site (loc-host): never fetched, nor its robots.txt (loopback_only holds it).
    entries.append(f"<url><loc>{ELSEWHERE}</loc></url>")
    entries += [
        f"<url><loc>{host}/future</loc><lastmod>2999-01-01</lastmod></url>",
        f"<url><loc>{host}/photo</loc><image:image><image:loc>{host}/photo.png</image:loc>"
        "<image:title>Retired</image:title></image:image></url>",
        f"<url><loc>{host}/clip</loc><video:video>"
        f"<video:thumbnail_loc>{host}/clip.png</video:thumbnail_loc>"
        "<video:title>Clip</video:title><video:description>A clip.</video:description>"
        f'<video:player_loc allow_embed="yes">{host}/player</video:player_loc>'
        "</video:video></url>",
    ]
    return (
        f'<urlset xmlns="{SITEMAP}" xmlns:image="{IMAGE}" xmlns:video="{VIDEO}">'
        + "\n".join(entries)
        + "</urlset>"
    )


def news_sitemap(host: str) -> str:
    now = datetime.now(UTC).isoformat(timespec="seconds")
    entries = "".join(
        f"<url><loc>{host}{path}</loc><news:news><news:publication><news:name>N</news:name>"
        "<news:language>en</news:language></news:publication>"
        f"<news:publication_date>{when}</news:publication_date>"
        f"<news:title>{path}</news:title></news:news></url>"
        for path, when in (("/old-story", "2020-01-01"), ("/new-story", now))
    )
    return f'<urlset xmlns="{SITEMAP}" xmlns:news="{NEWS}">{entries}</urlset>'


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any connection to another address than 127.0.0.1 fails the test."""
    connect = socket.socket.connect

    def checked(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            assert address[0] == "127.0.0.1", f"fetched beyond 127.0.0.1: {address}"
        return connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", checked)


@pytest.fixture
def site() -> Iterator[str]:
    DefectiveSite.log = []
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), DefectiveSite)) as origin:
        yield origin


def test_each_defect_is_named_and_no_clean_url_is(
    site: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # As a user runs it: the HTTP rules too (this server sends no gzip nor validators,
    # warnings about its documents, never about a page).
    status, report = json_run(site, "--sample", "0", "--rate", "100", capsys=capsys)
    assert status == 1
    named: dict[str, set[str]] = {}
    for finding in report["findings"]:
        if finding["url"] == ELSEWHERE:
            assert finding["rule"] == "loc-host"
            continue
        assert finding["url"].startswith(site), finding
        named.setdefault(finding["url"][len(site) :], set()).add(finding["rule"])
    for path, rule in DEFECTS.items():
        assert rule in named.get(path, set()), (path, report["findings"])
    assert not set(CLEAN) & set(named), report["findings"]
    assert named["/moved"] == {"url-redirect"}
    redirect = next(f for f in report["findings"] if f["rule"] == "url-redirect")
    assert redirect["value"] == f"{site}/about"
    # every listed URL but the two robots.txt blocks was fetched once
    totals = report["totals"]
    assert totals["sampled"] == totals["urls"] - 3 == len(CLEAN) + len(DEFECTS) - 2
    assert report["notes"] == []


def test_sampling_is_polite(site: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, _ = json_run(site, "--sample", "0", "--no-http-checks", capsys=capsys)
    assert status == 1
    fetched = [(m, p, t) for m, p, t in DefectiveSite.log if not p.endswith((".xml", ".txt"))]
    paths = [p for _, p, _ in fetched]
    # robots.txt is obeyed: the blocked pages are never asked for
    assert "/private/report" not in paths and "/no-google" not in paths
    # HEAD for a file that is no page, GET for pages
    assert ("HEAD", "/guide.pdf") in {(m, p) for m, p, _ in fetched}
    assert ("GET", "/about") in {(m, p) for m, p, _ in fetched}
    # one host, robots.txt's Crawl-delay between two requests
    times = sorted(t for _, _, t in fetched)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert min(gaps) >= CRAWL_DELAY * 0.8, gaps


def test_a_sample_of_n_spreads_over_every_sitemap(
    site: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, report = json_run(site, "--sample", "4", "--no-http-checks", "--rate", "100", capsys=capsys)
    assert report["totals"]["sampled"] == 4
    fetched = {p for _, p, _ in DefectiveSite.log if not p.endswith((".xml", ".txt"))}
    assert fetched & {"/old-story", "/new-story"}  # the small news sitemap is sampled too


def test_the_human_output_names_the_url(site: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(site, "--sample", "0", "--no-http-checks", "--rate", "100", capsys=capsys)
    assert status == 1
    assert f"error [url-status] answered 404: '404' ({site}/missing)" in out
    assert out.splitlines()[-1].startswith("checked 3 document(s), 22 URL(s) (19 fetched):")


def test_fail_on_warning(site: str, capsys: pytest.CaptureFixture[str]) -> None:
    # The news sitemap alone: one warning (news-old), no error.
    status, report = json_run(f"{site}/news.xml", "--no-http-checks", capsys=capsys)
    assert (status, report["totals"]["errors"], report["totals"]["warnings"]) == (0, 0, 1)
    status, _ = json_run(
        f"{site}/news.xml", "--no-http-checks", "--fail-on", "warning", capsys=capsys
    )
    assert status == 1


def test_a_file_is_not_sampled(capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_text(f'<urlset xmlns="{SITEMAP}"><url><loc>https://a.test/</loc></url></urlset>')
    status, _, err = run(str(path), "--sample", "3", capsys=capsys)
    assert status == 2 and "--sample" in err


def test_the_sample_is_dealt_round_robin() -> None:
    sample = Sample(6)
    for document, count in (("a", 100), ("b", 5), ("c", 1)):
        for n in range(count):
            sample.add(f"https://x.test/{document}/{n}", document, n + 2)
    chosen = sample.chosen()
    by_document = {d: sum(1 for _, doc, _ in chosen if doc == d) for d in "abc"}
    assert by_document == {"a": 3, "b": 2, "c": 1}
    # the draw is seeded: the same site gives the same sample
    again = Sample(6)
    for document, count in (("a", 100), ("b", 5), ("c", 1)):
        for n in range(count):
            again.add(f"https://x.test/{document}/{n}", document, n + 2)
    assert again.chosen() == chosen


def test_the_host_pacer_spaces_requests() -> None:
    pacer = HostPacer(lambda host: 0.05)
    began = time.monotonic()
    for _ in range(5):
        pacer.wait("h")
    pacer.wait("other")  # another host has its own slots
    assert 0.2 <= time.monotonic() - began < 2


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_progress_bar_on_a_terminal_only() -> None:
    assert progress_bar(3, io.StringIO()) is None
    out = Terminal()
    bar = progress_bar(3, out)
    bar.update(3)
    bar.close()
    assert "sitemap check --sample" in out.getvalue() and "3/3" in out.getvalue()
