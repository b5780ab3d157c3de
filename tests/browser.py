"""Headless Chromium for the test suite, driven through Playwright.

The browser is Debian's Chromium (``/usr/bin/chromium``, installed by ``scripts/test``
through ``scripts/_chromium.sh``), never a browser that Playwright downloads:
``playwright install`` fails on this project's machines, and is never called. Playwright's
wheel brings its own driver; it is pointed at the system binary with ``executable_path``.
Set ``CHROMIUM_PATH`` to use another Chromium binary.

Fixtures (defined in ``tests/conftest.py``, so every test module can ask for them):

``chromium``
    A fresh :class:`BrowserPage` (its own browser context: no cookies, cache or history
    from another test), closed after the test.
``chromium_browser``
    The test module's :class:`Chromium`, launched once per module;
    ``chromium_browser.page(headers=...)`` opens more pages, for instance with other
    request headers.

Use them from plain (synchronous) tests: Playwright's sync API refuses to run inside a
running asyncio loop, so not from ``async def`` tests.

Without Chromium (or Playwright) the tests that use them are skipped, except under CI
(``CI`` set to ``true``/``1``/``yes``), where they fail: CI must never pass by running
no browser test.

Usage::

    def test_home(chromium: BrowserPage) -> None:
        assert chromium.goto("http://127.0.0.1:8000/") == 200
        assert chromium.title() == "Home"
        chromium.click(link="About")
        assert chromium.current_url().endswith("/about")
        assert chromium.console_errors() == []
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import (
        Browser,
        ConsoleMessage,
        Error,
        Page,
        Request,
        Response,
        Route,
    )

#: The Chromium binary the tests drive (Debian's package unless ``CHROMIUM_PATH`` says).
CHROMIUM_PATH: Final = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))

#: Command-line switches for every launch. Headless and a fresh, empty profile come from
#: Playwright itself (it makes a temporary ``--user-data-dir`` per launch and deletes it
#: on close); without the background-networking switches Chromium keeps calling hosts
#: that this closed network refuses. ``--no-sandbox``: the tests run as root.
CHROMIUM_ARGS: Final = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)

#: Milliseconds a navigation (``goto``, a click that navigates) may take.
NAVIGATION_TIMEOUT_MS: Final = 15_000
#: Milliseconds any other action (finding an element, reading text, clicking) may take.
ACTION_TIMEOUT_MS: Final = 5_000
#: How long the browser itself may take to start.
LAUNCH_TIMEOUT_MS: Final = 30_000


def in_ci() -> bool:
    """Whether the ``CI`` environment variable says this is a CI run."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def _unavailable(reason: str) -> None:
    """Skip the calling test, or fail it under CI."""
    if in_ci():
        pytest.fail(f"{reason} (CI is set, so browser tests may not be skipped)", pytrace=False)
    pytest.skip(reason)


def require_chromium() -> Path:
    """Return :data:`CHROMIUM_PATH`; skip the calling test (fail it under CI) without it.

    Also checks that Playwright is importable (it is in the ``dev`` extra).
    """
    if not (CHROMIUM_PATH.is_file() and os.access(CHROMIUM_PATH, os.X_OK)):
        _unavailable(
            f"Chromium not found at {CHROMIUM_PATH} (scripts/test installs Debian's "
            "'chromium' package when run as root; or set CHROMIUM_PATH)"
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as error:
        _unavailable(f"Playwright is not installed ({error}); pip install -e '.[dev]'")
    return CHROMIUM_PATH


class BrowserPage:
    """One browser tab with its own context (cookies, cache), and the helpers tests need.

    Every method waits as Playwright does: an element is waited for up to
    :data:`ACTION_TIMEOUT_MS`, a navigation up to :data:`NAVIGATION_TIMEOUT_MS`. The
    underlying Playwright page is :attr:`page`, for anything not wrapped here.
    """

    def __init__(self, page: Page) -> None:
        self.page = page
        self._console_errors: list[str] = []
        self._last_response: Response | None = None
        page.set_default_timeout(ACTION_TIMEOUT_MS)
        page.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
        page.on("console", self._on_console)
        page.on("pageerror", self._on_page_error)

    def _on_console(self, message: ConsoleMessage) -> None:
        if message.type != "error":
            return
        # Chromium asks every site for /favicon.ico on its own; a site without one is no
        # error of the page under test.
        if message.location.get("url", "").endswith("/favicon.ico"):
            return
        where = message.location.get("url", "")
        self._console_errors.append(f"{message.text} ({where})" if where else message.text)

    def _on_page_error(self, error: Error) -> None:
        self._console_errors.append(f"uncaught: {error.message}")

    def goto(self, url: str) -> int | None:
        """Load ``url`` and wait for its ``load`` event; return the HTTP status.

        ``None`` when there is no HTTP response (``about:blank``, a ``data:`` URL, a
        navigation to the same URL with a fragment). A 4xx or 5xx status is returned, not
        raised; a refused connection or a timeout raises Playwright's ``Error``.
        """
        self._last_response = self.page.goto(url, wait_until="load")
        return None if self._last_response is None else self._last_response.status

    def response_headers(self) -> dict[str, str]:
        """Headers (lower-case names) of the last navigation's response, as the browser got them.

        Empty when there was none. Updated by :meth:`goto` and by a navigating :meth:`click`.
        """
        return {} if self._last_response is None else self._last_response.all_headers()

    def title(self) -> str:
        """The document's ``<title>``, or ``""``."""
        return self.page.title()

    def current_url(self) -> str:
        """The URL of the page now shown (after any redirect or click)."""
        return self.page.url

    def html(self) -> str:
        """The serialized DOM (not the bytes the server sent)."""
        return self.page.content()

    def text(self, selector: str = "body") -> str:
        """The rendered text (``innerText``) of the first element matching ``selector``.

        ``selector`` is a CSS selector (or any Playwright selector). Raises Playwright's
        ``TimeoutError`` if nothing matches within :data:`ACTION_TIMEOUT_MS`.
        """
        return self.page.locator(selector).first.inner_text()

    def texts(self, selector: str) -> list[str]:
        """The rendered text of every element matching ``selector``, in document order."""
        return self.page.locator(selector).all_inner_texts()

    def links(self, selector: str = "a", *, absolute: bool = False) -> list[tuple[str, str]]:
        """``(text, href)`` of every element matching ``selector`` that has an ``href``.

        ``text`` is the link's rendered text, stripped. ``href`` is the attribute as written
        in the page, or with ``absolute=True`` as the browser resolves it against the
        document's base URL.
        """
        found: list[list[str]] = self.page.eval_on_selector_all(
            selector,
            """(elements, absolute) => elements
                .filter((e) => e.hasAttribute("href"))
                .map((e) => [
                    (e.innerText || e.textContent || "").trim(),
                    absolute ? e.href : e.getAttribute("href"),
                ])""",
            absolute,
        )
        return [(text, href) for text, href in found]

    def click(
        self, selector: str | None = None, *, link: str | None = None, navigates: bool = True
    ) -> int | None:
        """Click an element and, if ``navigates``, wait until the next page has loaded.

        Give exactly one of ``selector`` (CSS or any Playwright selector; the first match is
        clicked) or ``link`` (the exact, whole text of a link, as a person would read it).
        Returns the HTTP status of the page the click led to (``None`` if there was no
        HTTP response or ``navigates`` is false). A click expected to navigate that does
        not raises Playwright's ``TimeoutError`` after :data:`NAVIGATION_TIMEOUT_MS`.
        """
        if (selector is None) == (link is None):
            raise TypeError("click() takes exactly one of selector= or link=")
        if link is not None:
            target = self.page.get_by_role("link", name=link, exact=True)
        else:
            assert selector is not None
            target = self.page.locator(selector)
        if not navigates:
            target.first.click()
            return None
        with self.page.expect_navigation(wait_until="load") as navigation:
            target.first.click()
        self._last_response = navigation.value
        return None if self._last_response is None else self._last_response.status

    def screenshot(self, path: Path | str, *, full_page: bool = True) -> Path:
        """Save a PNG of the page (all of it unless ``full_page=False``) and return its path."""
        path = Path(path)
        self.page.screenshot(path=str(path), full_page=full_page, type="png")
        return path

    def console_errors(self) -> list[str]:
        """Console errors and uncaught exceptions seen so far, oldest first.

        Includes failed resource loads (a 404 stylesheet, say), but not the browser's own
        ``/favicon.ico`` request.
        """
        return list(self._console_errors)

    def close(self) -> None:
        """Close the tab and its context."""
        self.page.context.close()


class Chromium:
    """A running headless Chromium; :meth:`page` opens isolated tabs in it."""

    def __init__(self, browser: Browser) -> None:
        self.browser = browser

    @property
    def version(self) -> str:
        """The browser's version, e.g. ``"156.0.8078.79"``."""
        return self.browser.version

    @contextmanager
    def page(
        self, *, headers: Mapping[str, str] | None = None, **context_options: Any
    ) -> Iterator[BrowserPage]:
        """A new tab in a new context (its own cookies and cache), closed when the block ends.

        ``headers`` are sent with every request of the tab on top of the browser's own
        (``{"Accept": "application/xml"}`` replaces the browser's ``Accept``). Further
        keyword arguments go to Playwright's ``Browser.new_context`` (``viewport``,
        ``locale``, ``java_script_enabled``...).
        """
        context = self.browser.new_context(**context_options)
        if headers:
            # Not extra_http_headers: Chromium lets those through for subresources but keeps
            # its own Accept on navigations. A route rewrites every request, navigations too.
            extra = {name.lower(): value for name, value in headers.items()}

            def rewrite(route: Route, request: Request) -> None:
                route.continue_(headers={**request.headers, **extra})

            context.route("**/*", rewrite)
        try:
            yield BrowserPage(context.new_page())
        finally:
            context.close()


@contextmanager
def launch_chromium() -> Iterator[Chromium]:
    """Start Playwright and headless Chromium; stop both when the block ends.

    Skips the calling test (fails it under CI) when Chromium or Playwright is missing.
    Launching takes about a second, so tests share one browser through the session-scoped
    ``chromium_browser`` fixture rather than calling this each.
    """
    executable = require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(executable),
            headless=True,
            args=list(CHROMIUM_ARGS),
            timeout=LAUNCH_TIMEOUT_MS,
        )
        try:
            yield Chromium(browser)
        finally:
            browser.close()
