"""Fixtures shared by every test folder.

The browser fixtures (see ``browser.py``): ``chromium_browser`` is one headless Chromium
for the whole session, started only if a test asks for it; ``chromium`` is a fresh tab
with its own cookies and cache for one test. Both skip without Chromium, and fail instead
under CI.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from browser import BrowserPage, Chromium, launch_chromium


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
