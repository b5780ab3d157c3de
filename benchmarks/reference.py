"""What the benchmarks' plain-Python references share: the data of a 50,000-URL page,
its reference rendering and their XML escaping.

Each benchmark compares the library with plain Python writing the same document with
f-strings; this is the escaping every such reference uses, so that all of them pay the
same for it. It imports only the standard library, so the peers' drivers
(``peers/peercommon.py``), which run in the peers' own virtual environments, render
the very reference that ``bench_page.py`` and the others render. Imported by the
scripts of this folder (``python benchmarks/bench_x.py`` puts it first on
``sys.path``).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
CHANGEFREQS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
#: A non-UTC offset with minutes, so ``isoformat`` writes ``+05:30``.
TZ = timezone(timedelta(hours=5, minutes=30))

#: One URL's raw data: location, aware lastmod, changefreq word, priority.
Raw = tuple[str, datetime, str, float]


def build_raw(n: int) -> list[Raw]:
    """Return ``n`` raw URL tuples, built once and shared by every contender."""
    start = datetime(2024, 5, 1, 12, 0, 0, tzinfo=TZ)
    return [
        (
            f"https://example.com/posts/{i}?ref=feed&x={i % 7}",
            start + timedelta(seconds=37 * i),
            CHANGEFREQS[(i // 3) % 7],
            (i % 11) / 10,
        )
        for i in range(n)
    ]


def xml_escape(text: str) -> str:
    """Escape the five XML special characters with chained ``str.replace``."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def render_reference(raw: list[Raw]) -> bytes:
    """Render the whole ``<urlset>`` in memory and return it encoded."""
    head = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}">\n'
    body = "".join(
        [
            f"<url><loc>{xml_escape(loc)}</loc><lastmod>{lastmod.isoformat()}</lastmod>"
            f"<changefreq>{changefreq}</changefreq><priority>{priority}</priority></url>\n"
            for loc, lastmod, changefreq, priority in raw
        ]
    )
    return (head + body + "</urlset>\n").encode()
