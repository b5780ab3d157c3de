"""An index's ``<sitemap>`` elements, and the children of stable pages written in one pass.

A child of an index whose source has stable pages (see
:mod:`sitemap_core.serve.children`) is its page's URL, made from a
:class:`ChildTemplate` (the site's checked base URL and the source's name around the
page's number, made once per source in the index), and its page's lastmod, normalised
text once the page's check has seen it. A batch of them travels as a
:class:`ChildBatch`: a ``list[Entry]`` whose entries are made only when something asks
for them (the HTML view, an observer, a probe's cut); the ``<sitemapindex>`` writer
reads its pages instead and writes each child's element in one step, so a child costs
its database row, its page and its check, and the text of its element.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from sitemap_core.model.entries import Entry
from sitemap_core.model.rows import DeferredBatch, not_under
from sitemap_core.model.xmltext import escape_uri

__all__ = ["ChildBatch", "ChildTemplate", "entry_elements"]


def entry_elements(entries: Iterable[Entry]) -> str:
    """The ``<sitemap>`` elements of ``entries``: only ``loc`` and ``lastmod`` are used."""
    return "".join(
        [
            f"<sitemap><loc>{escape_uri(entry.loc)}</loc></sitemap>\n"
            if entry.lastmod is None
            else f"<sitemap><loc>{escape_uri(entry.loc)}</loc>"
            f"<lastmod>{entry.lastmod}</lastmod></sitemap>\n"
            for entry in entries
        ]
    )


class ChildTemplate(NamedTuple):
    """A page's URL is ``prefix``, its number, ``suffix``; ``loc_prefix`` and
    ``loc_suffix`` are the same as the XML text of a ``<loc>`` (a number needs no
    escaping, so escaping the parts escapes the whole URL)."""

    prefix: str
    suffix: str
    loc_prefix: str
    loc_suffix: str

    @classmethod
    def of(cls, prefix: str, suffix: str) -> ChildTemplate:
        """The template of the URLs ``prefix``, a number, ``suffix``."""
        return cls(prefix, suffix, escape_uri(prefix), escape_uri(suffix))


class ChildBatch(DeferredBatch):
    """The children of checked stable ``pages`` (their lastmods normalised), URLs from
    ``template``, as a ``list[Entry]`` built on first use (see
    :class:`~sitemap_core.model.rows.DeferredBatch`). A page is a
    :class:`~sitemap_core.sources.pages.Page`, a tuple of which only the number (first)
    and the lastmod (fifth) are read here: the writers sit below the sources."""

    __slots__ = ("template",)

    def __init__(self, pages: list[Any], template: ChildTemplate, source: str) -> None:
        super().__init__(pages, source)
        self.template = template

    def build(self) -> None:
        """Fill the list with the children's entries (once); one outside ``origin``
        raises, as any entry there does."""
        pages = self.rows
        if pages is None:
            return
        prefix, suffix, made = self.template.prefix, self.template.suffix, Entry.made
        entries = [made(f"{prefix}{page[0]}{suffix}", page[4]) for page in pages]
        origin = self.origin
        if origin is not None:
            for entry in entries:
                if not entry.loc.startswith(origin):
                    raise not_under(entry.loc, origin, self.source)
        list.extend(self, entries)
        self.rows = None

    def elements(self) -> str:
        """The children's ``<sitemap>`` elements."""
        pages, (prefix, _, loc_prefix, loc_suffix) = self.rows, self.template
        origin = self.origin
        if pages is None or (origin is not None and not prefix.startswith(origin)):
            # Every URL is checked then (the template alone does not tell).
            return entry_elements(self)
        return "".join(
            [
                f"<sitemap><loc>{loc_prefix}{number}{loc_suffix}</loc></sitemap>\n"
                if lastmod is None
                else f"<sitemap><loc>{loc_prefix}{number}{loc_suffix}</loc>"
                f"<lastmod>{lastmod}</lastmod></sitemap>\n"
                for number, _, _, _, lastmod, _ in pages
            ]
        )
