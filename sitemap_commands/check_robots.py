"""A site's robots.txt rules, as search engines read them, for ``sitemap check`` and builds.

Parsing robots.txt is left to Protego (the parser Scrapy uses: Google's matching of
``*`` and ``$``, the longest rule winning, ``Allow`` over ``Disallow`` at equal
length), an optional dependency: ``pip install "dynamic-sitemaps[check]"``. Without
it, :func:`parse` returns None and the rules are not checked (the caller says so).
"""

from __future__ import annotations

import importlib
from typing import Any, Final

__all__ = ["AGENTS", "RobotsRules", "available", "parse"]

#: The crawlers a listed URL must be open to: any crawler, and Google's, whose own
#: group (when a robots.txt has one) replaces the ``*`` group for it.
AGENTS: Final = ("*", "Googlebot")

#: The name ``--sample`` fetches under, for the crawl-delay it honours.
CHECK_AGENT: Final = "sitemap-check"


def _protego() -> Any:
    try:
        return importlib.import_module("protego").Protego
    except ImportError:
        return None


def available() -> bool:
    """Whether Protego is installed (robots.txt rules can be checked)."""
    return _protego() is not None


class RobotsRules:
    """The rules of one robots.txt."""

    def __init__(self, parser: Any) -> None:
        self._parser = parser

    def blocked_for(self, url: str) -> str | None:
        """The first of :data:`AGENTS` that may not fetch ``url``, or None when all may."""
        for agent in AGENTS:
            if not self._parser.can_fetch(url, agent):
                return agent
        return None

    def crawl_delay(self) -> float:
        """Seconds between two requests the file asks of this checker (0 when it asks none)."""
        delay = self._parser.crawl_delay(CHECK_AGENT)
        return float(delay) if delay else 0.0


def parse(text: str) -> RobotsRules | None:
    """The rules of robots.txt ``text``, or None when Protego is not installed."""
    protego = _protego()
    if protego is None:
        return None
    return RobotsRules(protego.parse(text))
