"""Benchmark: what one value costs to build, against plain Python doing the same storing.

Per value, in one process, the library's validated constructors against a plain-Python
equivalent that keeps (and formats) the same data without checking anything:

* ``Image(url)`` against the ``<image:image>`` fragment written by hand (an f-string
  and five chained ``str.replace``), which is all an unvalidated image amounts to;
* ``Entry(loc, lastmod=..., changefreq=..., priority=...)`` with the lastmod as an
  aware ``datetime``, as ISO text in ``isoformat()``'s shape and in ``str()``'s
  (a space for the "T", what PostgreSQL and SQLite give as text), and as a ``date``,
  against a plain ``__slots__`` class storing the four values, the datetime formatted
  by ``isoformat()`` (text and dates stored as they are);
* ``Entry(loc)`` alone, and an entry with one image.

Reported: microseconds per value (the minimum over the repeats, and the median), the
ratio to the plain equivalent, and the ratio of text lastmods to datetime lastmods.
Every figure is for one value built over and over, so caches are warm: the lastmods
fall on one day, as many of a sitemap page's do (``bench_page.py`` measures a whole
page). The load average is printed beside the figures: other work on the machine
moves them.

Run from the repository root::

    .venv/bin/python benchmarks/bench_values.py [--number 100000] [--repeat 9] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import timeit
from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reference import xml_escape

from sitemap_core import Entry, Image

TZ = timezone(timedelta(hours=5, minutes=30))
LOC = "https://example.com/posts/1234?ref=feed&x=5"
IMAGE = "https://cdn.example.com/img/1234.jpg?w=800&h=600"
MOMENT = datetime(2024, 5, 1, 12, 34, 56, tzinfo=TZ)
ISO_TEXT = MOMENT.isoformat()  # "2024-05-01T12:34:56+05:30"
STR_TEXT = str(MOMENT)  # "2024-05-01 12:34:56+05:30", as PostgreSQL writes it
DAY = date(2024, 5, 1)


def plain_image(url: str) -> str:
    """An image as plain Python would keep it: its fragment, escaped, unvalidated."""
    return f"<image:image><image:loc>{xml_escape(url)}</image:loc></image:image>"


class PlainEntry:
    """The four values of a ``<url>`` kept without a check, a datetime formatted."""

    __slots__ = ("changefreq", "lastmod", "loc", "priority")

    def __init__(
        self,
        loc: str,
        lastmod: datetime | date | str | None = None,
        changefreq: str | None = None,
        priority: float | None = None,
    ) -> None:
        self.loc = loc
        self.lastmod = lastmod.isoformat() if isinstance(lastmod, date) else lastmod
        self.changefreq = changefreq
        self.priority = priority


#: name -> (library call, plain-Python equivalent, label)
CASES: dict[str, tuple[Callable[[], object], Callable[[], object], str]] = {
    "image": (lambda: Image(IMAGE), lambda: plain_image(IMAGE), "Image(url)"),
    "entry_loc": (lambda: Entry(LOC), lambda: PlainEntry(LOC), "Entry(loc)"),
    "entry_datetime": (
        lambda: Entry(LOC, lastmod=MOMENT, changefreq="daily", priority=0.5),
        lambda: PlainEntry(LOC, lastmod=MOMENT, changefreq="daily", priority=0.5),
        "Entry(loc, lastmod=aware datetime, changefreq, priority)",
    ),
    "entry_iso_text": (
        lambda: Entry(LOC, lastmod=ISO_TEXT, changefreq="daily", priority=0.5),
        lambda: PlainEntry(LOC, lastmod=ISO_TEXT, changefreq="daily", priority=0.5),
        "Entry(loc, lastmod='2024-05-01T12:34:56+05:30', ...)",
    ),
    "entry_str_text": (
        lambda: Entry(LOC, lastmod=STR_TEXT, changefreq="daily", priority=0.5),
        lambda: PlainEntry(LOC, lastmod=STR_TEXT, changefreq="daily", priority=0.5),
        "Entry(loc, lastmod='2024-05-01 12:34:56+05:30', ...) (database text)",
    ),
    "entry_date": (
        lambda: Entry(LOC, lastmod=DAY, changefreq="daily", priority=0.5),
        lambda: PlainEntry(LOC, lastmod=DAY, changefreq="daily", priority=0.5),
        "Entry(loc, lastmod=date, ...)",
    ),
    "entry_image": (
        lambda: Entry(LOC, lastmod=MOMENT, changefreq="daily", priority=0.5, images=[IMAGE]),
        lambda: (
            PlainEntry(LOC, lastmod=MOMENT, changefreq="daily", priority=0.5),
            plain_image(IMAGE),
        ),
        "Entry(loc, lastmod=datetime, ..., images=[url])",
    ),
}


def per_value(func: Callable[[], object], number: int, repeat: int) -> list[float]:
    """Microseconds per call of ``func``, one figure per repeat."""
    return [t / number * 1e6 for t in timeit.repeat(func, number=number, repeat=repeat)]


def run(number: int, repeat: int) -> dict[str, Any]:
    """Time every case and its plain equivalent, interleaved, and return plain data."""
    for library, plain, _ in CASES.values():  # warm-up: zone and day memos, caches
        library()
        plain()
    library_us: dict[str, list[float]] = {name: [] for name in CASES}
    plain_us: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(repeat):
        for name, (library, plain, _) in CASES.items():
            library_us[name] += per_value(library, number, 1)
            plain_us[name] += per_value(plain, number, 1)
    cases = {}
    for name, (_, _, label) in CASES.items():
        best, plain_best = min(library_us[name]), min(plain_us[name])
        cases[name] = {
            "label": label,
            "us_min": best,
            "us_median": statistics.median(library_us[name]),
            "plain_us_min": plain_best,
            "ratio_to_plain": best / plain_best,
        }
    datetime_us = cases["entry_datetime"]["us_min"]
    return {
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
        },
        "load_average": _load(),
        "number": number,
        "repeat": repeat,
        "cases": cases,
        "text_vs_datetime": {
            "iso_text": cases["entry_iso_text"]["us_min"] / datetime_us,
            "str_text": cases["entry_str_text"]["us_min"] / datetime_us,
        },
    }


def _load() -> str:
    """The 1, 5 and 15 minute load averages, as text."""
    try:
        return " ".join(f"{load:.2f}" for load in os.getloadavg())
    except OSError:
        return "unknown"


def table(results: dict[str, Any]) -> str:
    """The results as a Markdown table."""
    lines = [
        "| Value | us per value (min) | median | plain Python (min) | vs plain |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in results["cases"].values():
        lines.append(
            f"| {row['label']} | {row['us_min']:.3f} | {row['us_median']:.3f} | "
            f"{row['plain_us_min']:.3f} | {row['ratio_to_plain']:.2f}x |"
        )
    text = results["text_vs_datetime"]
    lines += [
        "",
        f"ISO text lastmod / datetime lastmod: {text['iso_text']:.2f}x (isoformat's shape), "
        f"{text['str_text']:.2f}x (a space for the T)",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run, print the table, write JSON if asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--number", type=int, default=100_000, help="calls per timing")
    parser.add_argument("--repeat", type=int, default=9, help="timings of each (>= 1)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write results here")
    args = parser.parse_args(argv)
    if args.number < 1 or args.repeat < 1:
        parser.error("--number and --repeat must be at least 1")
    results = run(args.number, args.repeat)
    info = results["machine"]
    print(
        f"Machine: {info['processor']}, {info['cpu_count']} CPUs, CPython {info['python']}, "
        f"{info['platform']}; load average {results['load_average']}"
    )
    print()
    print(table(results))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\nResults written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
