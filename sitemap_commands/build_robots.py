"""Does the app's own robots.txt disallow URLs its sitemaps list? (``sitemap build``)

A sitemap that lists pages robots.txt forbids sends search engines mixed signals
(Search Console reports them as "Submitted URL blocked by robots.txt"). After a
build, the app's robots.txt is read with the same parser ``sitemap check`` uses
(:mod:`sitemap_commands.check_robots`) and tested against a sample of the URLs of
each page written: at most :data:`PER_PAGE` of them, spread evenly over the page, so
the check costs the same on a site of any size.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final
from xml.etree import ElementTree

from sitemap_commands.check_robots import parse
from sitemap_core.model.namespaces import SITEMAP_NS

__all__ = ["PER_PAGE", "RobotsVerdict", "blocked_listed_urls"]

#: URLs tested per sitemap page at most.
PER_PAGE: Final = 1_000
_LOC: Final = f"{{{SITEMAP_NS}}}loc"
_URL: Final = f"{{{SITEMAP_NS}}}url"


@dataclass
class RobotsVerdict:
    """What the test found: URLs tested, those disallowed (with the crawler), and
    whether it could run at all (Protego installed)."""

    tested: int = 0
    blocked: list[tuple[str, str]] = field(default_factory=list)
    checked: bool = True

    def warning(self) -> str | None:
        """One line for the build's output, or None when nothing is blocked."""
        if not self.blocked:
            return None
        url, agent = self.blocked[0]
        return (
            f"robots.txt disallows {len(self.blocked):,} of {self.tested:,} listed URLs"
            f" tested (e.g. {url} for {agent}): fix robots.txt or the sources"
        )


def _spread(file: Path, urls: int) -> Iterator[str]:
    # Every step-th <loc> of a urlset file, read streaming (memory stays flat).
    step = max(1, urls // PER_PAGE)
    seen = 0
    for _, element in ElementTree.iterparse(file):
        if element.tag == _LOC:
            if seen % step == 0:
                yield (element.text or "").strip()
            seen += 1
        elif element.tag == _URL:
            element.clear()


def blocked_listed_urls(robots_text: str, pages: Iterable[tuple[Path, int]]) -> RobotsVerdict:
    """Test a sample of the URLs of ``pages`` (a urlset file and its URL count each)
    against ``robots_text``."""
    rules = parse(robots_text)
    verdict = RobotsVerdict(checked=rules is not None)
    if rules is None:
        return verdict
    for file, urls in pages:
        for url in _spread(file, urls):
            verdict.tested += 1
            agent = rules.blocked_for(url)
            if agent is not None:
                verdict.blocked.append((url, agent))
    return verdict
