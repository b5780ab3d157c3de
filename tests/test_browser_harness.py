"""The browser harness (``browser.py``) against a real HTTP server on 127.0.0.1.

Two small pages are served from ``tmp_path`` by :class:`http.server.ThreadingHTTPServer`
on an ephemeral port: page one links to page two. Each helper of the ``chromium``
fixture must see what a person would: the title, the text, the links, the page a click
leads to, a screenshot, the errors in the console.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from browser import BrowserPage, Chromium

PAGE_ONE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Page one</title></head>
<body>
  <h1>First page</h1>
  <p id="intro">Hello from <em>page one</em>.</p>
  <nav>
    <a href="two.html">Go to page two</a>
    <a href="/away.html">Elsewhere</a>
  </nav>
</body>
</html>
"""

PAGE_TWO = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Page two</title></head>
<body><h1>Second page</h1><p id="body">You made it.</p></body>
</html>
"""

BROKEN = """<!doctype html>
<html><head><title>Broken</title></head>
<body><script>console.error("logged on purpose"); undefinedFunction();</script></body>
</html>
"""

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@dataclass
class Site:
    """The running server: its base URL and the ``Accept`` header of every GET, in order."""

    base: str
    accepts: list[tuple[str, str]] = field(default_factory=list)


class _Handler(SimpleHTTPRequestHandler):
    site: Site

    def do_GET(self) -> None:
        self.site.accepts.append((self.path, self.headers.get("Accept", "")))
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep pytest's output clean


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    (tmp_path / "one.html").write_text(PAGE_ONE, encoding="utf-8")
    (tmp_path / "two.html").write_text(PAGE_TWO, encoding="utf-8")
    (tmp_path / "broken.html").write_text(BROKEN, encoding="utf-8")
    handler = type("Handler", (_Handler,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(tmp_path)))
    host, port = server.server_address[:2]
    handler.site = site = Site(base=f"http://{host!s}:{port}")
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.05},
        name="harness-http",
        daemon=True,
    )
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
    assert not thread.is_alive()


def test_reads_page_one(chromium: BrowserPage, site: Site) -> None:
    assert chromium.goto(f"{site.base}/one.html") == 200
    assert chromium.title() == "Page one"
    assert chromium.current_url() == f"{site.base}/one.html"
    assert chromium.text("h1") == "First page"
    assert chromium.text("#intro") == "Hello from page one."
    assert chromium.texts("nav a") == ["Go to page two", "Elsewhere"]
    assert chromium.links() == [
        ("Go to page two", "two.html"),
        ("Elsewhere", "/away.html"),
    ]
    assert chromium.links("nav a", absolute=True)[0] == ("Go to page two", f"{site.base}/two.html")
    assert chromium.response_headers()["content-type"].startswith("text/html")
    assert chromium.console_errors() == []
    assert "<h1>First page</h1>" in chromium.html()


def test_navigation_sends_a_browser_accept_header(chromium: BrowserPage, site: Site) -> None:
    chromium.goto(f"{site.base}/one.html")
    accept = dict(site.accepts)["/one.html"]
    assert accept.startswith("text/html"), accept


def test_click_on_link_text_lands_on_page_two(chromium: BrowserPage, site: Site) -> None:
    chromium.goto(f"{site.base}/one.html")
    assert chromium.click(link="Go to page two") == 200
    assert chromium.current_url() == f"{site.base}/two.html"
    assert chromium.title() == "Page two"
    assert chromium.text("#body") == "You made it."
    assert chromium.links() == []


def test_click_on_selector(chromium: BrowserPage, site: Site) -> None:
    chromium.goto(f"{site.base}/one.html")
    assert chromium.click('a[href="two.html"]') == 200
    assert chromium.text("h1") == "Second page"
    with pytest.raises(TypeError):
        chromium.click()


def test_missing_page_status(chromium: BrowserPage, site: Site) -> None:
    assert chromium.goto(f"{site.base}/nope.html") == 404


def test_screenshot_is_a_png(chromium: BrowserPage, site: Site, tmp_path: Path) -> None:
    chromium.goto(f"{site.base}/one.html")
    path = chromium.screenshot(tmp_path / "shots" / "one.png")
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC)
    assert len(data) > 1000


def test_console_errors(chromium: BrowserPage, site: Site) -> None:
    chromium.goto(f"{site.base}/broken.html")
    errors = chromium.console_errors()
    assert len(errors) == 2, errors
    assert errors[0].startswith("logged on purpose")
    assert errors[1].startswith("uncaught:") and "undefinedFunction" in errors[1]


def test_extra_headers(chromium_browser: Chromium, site: Site) -> None:
    with chromium_browser.page(headers={"Accept": "application/xml"}) as page:
        assert page.goto(f"{site.base}/two.html") == 200
    assert dict(site.accepts)["/two.html"] == "application/xml"
    assert chromium_browser.version.split(".")[0].isdigit()
