"""The listed URLs as search engines judge them: robots.txt rules, and ``--sample``.

:class:`Audit` is told of every URL the sitemaps list, as they are read. It reports
at once each URL the site's own robots.txt disallows for ``*`` or Googlebot
(``robots-blocked``; robots.txt of each site is read once), and keeps a
:class:`~sitemap_commands.check_sample.Sample` of the others. :meth:`Audit.finish`
fetches the sample politely and reports what the pages say.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from sitemap_commands import check_robots
from sitemap_commands.check_polite import HostPacer, fetch_all, progress_bar
from sitemap_commands.check_robots import RobotsRules
from sitemap_commands.check_sample import Sample
from sitemap_commands.checker_rules import Report, origin_of

__all__ = ["Audit", "SampleOptions"]

#: Reads a site's robots.txt: its text, or None when there is none (not 200).
ReadRobots = Callable[[str], str | None]

_NO_PROTEGO = (
    'robots.txt rules not checked: Protego is not installed (pip install "dynamic-sitemaps[check]")'
)


@dataclass(frozen=True)
class SampleOptions:
    """How ``--sample`` fetches: how many URLs (0: all), how many at once, how fast."""

    size: int
    concurrency: int = 4
    #: Requests per second to one host, at most (robots.txt's Crawl-delay may ask less).
    rate: float = 5.0
    timeout: float = 30.0
    #: Where the progress bar goes (drawn only on a terminal).
    progress: IO[str] | None = None


class Audit:
    """The robots.txt rules and the sample of one run (see the module)."""

    def __init__(
        self, report: Report, read_robots: ReadRobots, sample: SampleOptions | None
    ) -> None:
        self.report = report
        self._read_robots = read_robots
        self._rules: dict[str, RobotsRules | None] = {}
        self._options = sample
        self._sample = Sample(sample.size) if sample is not None else None
        if not check_robots.available():
            report.notes.append(_NO_PROTEGO)

    def know_robots(self, origin: str, text: str) -> None:
        """robots.txt of ``origin``, read already (the check's start)."""
        self._rules[origin] = check_robots.parse(text)

    def listed(self, url: str, document: str, line: int) -> None:
        """A URL a sitemap lists: blocked by robots.txt (reported), or a candidate."""
        found = origin_of(url)
        if found is None:
            return
        rules = self._rules_of(found[0])
        agent = rules.blocked_for(url) if rules is not None else None
        if agent is not None:
            message = f"robots.txt disallows it for {agent}"
            self.report.add("robots-blocked", document, line, url, message, url)
        elif self._sample is not None:
            self._sample.add(url, document, line)

    def _rules_of(self, origin: str) -> RobotsRules | None:
        if origin not in self._rules:
            text = self._read_robots(origin + "/robots.txt")
            self._rules[origin] = None if text is None else check_robots.parse(text)
        return self._rules[origin]

    def finish(self) -> None:
        """Fetch the sample (when asked for) and report each URL's problems."""
        if self._sample is None or self._options is None:
            return
        options = self._options
        chosen = self._sample.chosen()
        self.report.sampled = len(chosen)
        where = {str(i): (url, doc, line) for i, (url, doc, line) in enumerate(chosen)}
        results = fetch_all(
            ((url, key) for key, (url, _, _) in where.items()),
            pacer=HostPacer(self._interval),
            host_of=self._host,
            concurrency=options.concurrency,
            timeout=options.timeout,
            bar=progress_bar(len(chosen), options.progress or sys.stderr),
        )
        for key, issues in results:
            url, document, line = where[key]
            for rule, value, message in issues:
                self.report.add(rule, document, line, value, message, url)

    @staticmethod
    def _host(url: str) -> str:
        found = origin_of(url)
        return found[0] if found is not None else url

    def _interval(self, host: str) -> float:
        assert self._options is not None
        rules = self._rules.get(host)
        delay = rules.crawl_delay() if rules is not None else 0.0
        return max(1.0 / self._options.rate, delay)
