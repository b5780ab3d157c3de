"""The sitemap as a web page, for people: ``/sitemap.html`` and its child pages.

Same documents as the XML, paginated the same way, written by the same push-style
encoders (:class:`~sitemap_core.write.encoders.DocumentEncoder`), so a page of 50,000 URLs
streams in chunks like its XML twin. Every text and URL is escaped; the page loads
nothing from anywhere (one inline style sheet, no script, no remote image), and the
fronts send a Content-Security-Policy that says so.

Why a separate path rather than content negotiation on ``/sitemap.xml``: crawlers
(Googlebot among them) send ``Accept`` headers that rank ``text/html`` above XML, so
negotiating on the sitemap's own URL could hand a crawler a web page. ``.xml`` always
answers XML; ``.html`` always answers HTML; each links to the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sitemap_core.limits import CHUNK_BYTES, MAX_SITEMAP_BYTES, MAX_SITEMAPS_PER_INDEX
from sitemap_core.model.entries import Entry
from sitemap_core.model.xmltext import escape
from sitemap_core.write.encoders import DocumentEncoder, format_priority

__all__ = ["CONTENT_SECURITY_POLICY", "HtmlEncoder", "HtmlIndexEncoder", "HtmlView"]

#: Sent with every HTML page: nothing may load but the page's own inline styles.
CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'"

_STYLE = (
    "body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:75rem;"
    "padding:0 1rem;color:#1d1d1f}"
    "h1{font-size:1.5rem;margin:0 0 .25rem}"
    ".meta{color:#555;margin:0 0 1rem}"
    "nav a{margin-right:1rem}"
    "table{border-collapse:collapse;width:100%;margin:1rem 0}"
    "th,td{text-align:left;vertical-align:top;padding:.35rem .5rem;"
    "border-bottom:1px solid #ddd}"
    "th{background:#f5f5f7;position:sticky;top:0}"
    "td.n,th:first-child{width:1%;color:#888;text-align:right}"
    "td.t,th{white-space:nowrap}"
    "td a{word-break:break-all}"
    "ul{margin:0;padding-left:1.1rem}"
    ".x{color:#555;font-size:.9em}"
)


@dataclass(frozen=True)
class HtmlView:
    """What the page says around its rows: title, summary, navigation.

    ``links`` are (label, href) pairs shown above and below the table (the XML twin,
    the site's index, previous / next page), relative to the page: every sitemap
    document sits beside the others, so the links work on whatever host or prefix
    the browser used. ``first`` is the number of the first row (pages continue the
    numbering of the pages before them).
    """

    title: str
    summary: str
    links: Sequence[tuple[str, str]] = field(default_factory=tuple)
    first: int = 1
    #: The feed of recent changes, relative as the links are, when the site serves it:
    #: announced in the head, where browsers and feed readers look for it.
    feed: str | None = None


def _nav(view: HtmlView) -> str:
    if not view.links:
        return ""
    items = "".join(f'<a href="{escape(href)}">{escape(label)}</a>' for label, href in view.links)
    return f"<nav>{items}</nav>\n"


def _head(view: HtmlView, columns: Sequence[str]) -> str:
    cells = "".join(f"<th>{name}</th>" for name in columns)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # Useful to people; the XML is what search engines should read.
        '<meta name="robots" content="noindex, follow">'
        f"<title>{escape(view.title)}</title>{_feed_link(view)}<style>{_STYLE}</style></head>\n"
        f"<body><header><h1>{escape(view.title)}</h1>"
        f'<p class="meta">{escape(view.summary)}</p>{_nav(view)}</header>\n'
        f"<table><thead><tr><th>#</th>{cells}</tr></thead><tbody>\n"
    )


def _feed_link(view: HtmlView) -> str:
    if view.feed is None:
        return ""
    return (
        '<link rel="alternate" type="application/atom+xml" title="Recent changes"'
        f' href="{escape(view.feed)}">'
    )


def _tail(view: HtmlView) -> str:
    return f"</tbody></table>\n<footer>{_nav(view)}</footer></body></html>\n"


def _link(url: str, text: str | None = None) -> str:
    return f'<a href="{escape(url)}">{escape(url if text is None else text)}</a>'


def _extensions(entry: Entry) -> str:
    extra = entry.extra
    if extra is None:
        return ""
    items: list[str] = []
    for image in extra.images:
        items.append(f"<li>image: {_link(image.loc)}</li>")
    for video in extra.videos:
        target = video.content_loc or video.player_loc or video.thumbnail_loc
        duration = "" if video.duration is None else f" ({video.duration} s)"
        items.append(f"<li>video: {_link(target, video.title)}{duration}</li>")
    if extra.news is not None:
        news = extra.news
        items.append(
            f"<li>news: {escape(news.title)}, {escape(news.publication_name)} "
            f"({escape(news.language)}), {escape(news.publication_date)}</li>"
        )
    for alternate in extra.alternates:
        items.append(f"<li>{escape(alternate.hreflang)}: {_link(alternate.href)}</li>")
    return f'<ul class="x">{"".join(items)}</ul>'


class HtmlEncoder(DocumentEncoder):
    """Writes a page of entries as an HTML table: URL, lastmod, changefreq, priority
    and the entry's images, videos, news and alternates."""

    def __init__(
        self,
        view: HtmlView,
        *,
        chunk_bytes: int = CHUNK_BYTES,
        max_bytes: int = MAX_SITEMAP_BYTES * 4,
    ) -> None:
        # The byte limit is the protocol's for XML; a page of people's HTML is bounded
        # by the XML page it mirrors, with room for its markup.
        self.head = _head(view, ("URL", "Last modified", "Change frequency", "Priority", "More"))
        self.tail = _tail(view)
        self._number = view.first
        super().__init__(chunk_bytes=chunk_bytes, max_bytes=max_bytes)

    def render(self, items: Sequence[Entry]) -> str:
        """Return one table row per entry."""
        rows = []
        number = self._number
        for entry in items:
            priority = "" if entry.priority is None else format_priority(entry.priority)
            rows.append(
                f'<tr><td class="n">{number}</td><td>{_link(entry.loc)}</td>'
                f'<td class="t">{entry.lastmod or ""}</td><td>{entry.changefreq or ""}</td>'
                f"<td>{priority}</td><td>{_extensions(entry)}</td></tr>\n"
            )
            number += 1
        self._number = number
        return "".join(rows)


class HtmlIndexEncoder(DocumentEncoder):
    """Writes the site's index as an HTML table of its child pages.

    The children's ``loc`` are the pages' HTML URLs; each row links to the page and to
    its XML twin (the same URL ending in ``.xml``).
    """

    max_items = MAX_SITEMAPS_PER_INDEX

    def __init__(self, view: HtmlView, *, chunk_bytes: int = CHUNK_BYTES) -> None:
        self.head = _head(view, ("Sitemap", "Last modified", "XML"))
        self.tail = _tail(view)
        self._number = view.first
        super().__init__(chunk_bytes=chunk_bytes, max_bytes=MAX_SITEMAP_BYTES * 4)

    def render(self, items: Sequence[Entry]) -> str:
        """Return one table row per child page."""
        rows = []
        number = self._number
        for child in items:
            # Linked by file name: the pages are siblings of the index (see HtmlView).
            page = child.loc.rsplit("/", 1)[-1]
            name = page.removesuffix(".html")
            rows.append(
                f'<tr><td class="n">{number}</td><td>{_link(page, name)}</td>'
                f'<td class="t">{child.lastmod or ""}</td>'
                f"<td>{_link(name + '.xml', 'XML')}</td></tr>\n"
            )
            number += 1
        self._number = number
        return "".join(rows)
