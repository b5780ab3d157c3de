"""Fixtures and hooks shared by every test folder.

The browser fixtures (see ``browser.py``): ``chromium_browser`` is one headless Chromium
for the whole session, started only if a test asks for it; ``chromium`` is a fresh tab
with its own cookies and cache for one test. Both skip without Chromium, and fail instead
under CI.

A test that needs the XSD schemas when they are absent is skipped by ``xsd.py``, deep in
whatever helper validated a document; the skip is reported at the test itself.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest
import xsd
from browser import BrowserPage, Chromium, launch_chromium

_XSD_HELPER = Path(xsd.__file__).resolve()


@pytest.fixture(scope="session")
def chromium_browser() -> Iterator[Chromium]:
    """Headless Chromium, launched once per session on first use."""
    with launch_chromium() as browser:
        yield browser


@pytest.fixture
def chromium(chromium_browser: Chromium) -> Iterator[BrowserPage]:
    """A new, isolated browser tab for one test."""
    with chromium_browser.page() as page:
        yield page


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Report a skip raised inside ``xsd.py`` at the test that needed the schemas.

    Otherwise pytest names the line of ``xsd.py`` that raised it, and hundreds of skips
    point at one helper line instead of at their tests.
    """
    report = yield
    if report.skipped and isinstance(report.longrepr, tuple):
        where, _line, reason = report.longrepr
        if Path(where).resolve() == _XSD_HELPER:
            path, line = item.reportinfo()[:2]
            # reportinfo() counts lines from 0, the skip summary from 1.
            report.longrepr = (os.fspath(path), (line or 0) + 1, reason)
    return report
