"""Fixtures and hooks shared by every test folder.

The browser fixtures (see ``browser.py``): ``chromium_browser`` is one headless Chromium
per test module, started only if a test asks for it; ``chromium`` is a fresh tab
with its own cookies and cache for one test. Both skip without Chromium, and fail instead
under CI.

A test that needs the XSD schemas (or the Atom grammar's tools) when they are absent is
skipped by ``xsd.py`` (or ``atom.py``), deep in whatever helper validated a document; the
skip is reported at the test itself.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Generator, Iterator
from pathlib import Path

import atom
import pytest
import xsd
from browser import BrowserPage, Chromium, launch_chromium

#: Helpers whose skips are reported at the test that called them.
_SKIPPING_HELPERS = {Path(xsd.__file__).resolve(), Path(atom.__file__).resolve()}


@pytest.fixture(scope="module")
def chromium_browser() -> Iterator[Chromium]:
    """Headless Chromium, launched once per test module on first use.

    Not once per session: Playwright's sync API keeps an asyncio loop marked running
    in the main thread while it is open, and every later test that runs a loop of its
    own (``anyio.run``, Django's async-safety check) would fail on it.
    """
    with launch_chromium() as browser:
        yield browser


@pytest.fixture
def chromium(chromium_browser: Chromium) -> Iterator[BrowserPage]:
    """A new, isolated browser tab for one test."""
    with chromium_browser.page() as page:
        yield page


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """SIGINT answered as Python answers it by default (KeyboardInterrupt), in the test
    and in the processes it starts (exec resets a caught signal to its default).

    A test run started in the background by a shell without job control inherits
    SIGINT ignored, and so would every command it starts: a test of Ctrl-C asks for
    this fixture instead of depending on how the suite was launched.
    """
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.fixture(autouse=True)
def _no_flask_context_left() -> Iterator[None]:
    """End a test with no Flask app context current, or fail it.

    A streamed Flask response keeps its request context pushed until its body is read
    to the end or closed (``stream_with_context``; a server always closes it). A test
    that reads only the headers leaves it current for as long as the response lives,
    and past the test's end when a reference cycle holds the response: Flask keeps an
    ``abort()`` as a local of its own frame, whose traceback holds every caller's frame,
    the test's too. The garbage collector then pops that context whenever it runs,
    perhaps inside a later test, which sees the wrong ``current_app`` meanwhile (a CLI
    command once ran against an earlier test's app). Collecting here closes such
    responses at the end of the test that made them; a context still current after
    that is held by something the test kept, and fails the test.
    """
    yield
    flask = sys.modules.get("flask")  # a test that never imported Flask left no context
    if flask is None or not flask.has_app_context():
        return
    gc.collect()
    if flask.has_app_context():
        name = flask.current_app.name
        raise AssertionError(
            f"this test left app {name!r}'s context pushed: close, or read to the end, "
            "every streamed response it keeps"
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Report a skip raised inside ``xsd.py`` or ``atom.py`` at the test that needed it.

    Otherwise pytest names the helper's line that raised it, and hundreds of skips
    point at one helper line instead of at their tests.
    """
    report = yield
    if report.skipped and isinstance(report.longrepr, tuple):
        where, _line, reason = report.longrepr
        if Path(where).resolve() in _SKIPPING_HELPERS:
            path, line = item.reportinfo()[:2]
            # reportinfo() counts lines from 0, the skip summary from 1.
            report.longrepr = (os.fspath(path), (line or 0) + 1, reason)
    return report
