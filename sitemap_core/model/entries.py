"""Validated, normalised sitemap entries.

An :class:`Entry` is valid once built: everything the writers later put in a document
was checked and normalised here, so a document can never come out malformed or fail
the official XSD because of a value. Errors are :class:`InvalidEntryError` (a
``ValueError``) naming the field and the value.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from sitemap_core.model.alternates import Alternate, AlternatesInput
from sitemap_core.model.extensions import Extensions
from sitemap_core.model.images import Image
from sitemap_core.model.keyed import Keyed
from sitemap_core.model.news import News
from sitemap_core.model.values import (
    ChangeFreq,
    LastmodInput,
    normalise_changefreq,
    normalise_lastmod,
    normalise_priority,
    normalise_url,
)
from sitemap_core.model.videos import Video

__all__ = [
    "Alternate",
    "ChangeFreq",
    "Entry",
    "Image",
    "LastmodInput",
    "News",
    "Video",
    "normalise_lastmod",
    "normalise_url",
]


class Entry(Keyed):
    """One ``<url>`` of a sitemap: a location and its optional hints.

    Every argument is validated and normalised when the entry is built:

    * ``loc``: absolute http(s) URL, IRI converted to URI, at most 2,048 characters
      (see :func:`normalise_url`).
    * ``lastmod``: ``date``, ``datetime`` or ISO 8601 text (see :func:`normalise_lastmod`);
      stored as the W3C text that will be written.
    * ``changefreq``: a :class:`ChangeFreq` or one of its seven words (any case).
    * ``priority``: a number from 0.0 to 1.0.

    Each field has one validator, in :mod:`sitemap_core.model.values`.

    Google's extensions, keyword-only (see :class:`~sitemap_core.model.images.Image`,
    :class:`~sitemap_core.model.videos.Video`, :class:`~sitemap_core.model.news.News`,
    :class:`~sitemap_core.model.alternates.Alternate`):

    * ``images``: up to 1,000 :class:`Image` objects or image URLs;
    * ``videos``: :class:`Video` objects (or one);
    * ``news``: one :class:`News`;
    * ``alternates``: hreflang alternates, as :class:`Alternate` objects, ``(hreflang,
      href)`` pairs or a ``{hreflang: href}`` mapping; they must include this entry's
      own URL (see :func:`~sitemap_core.model.alternates.hreflang_cluster` to build a group).

    A bad value raises :class:`~sitemap_core.errors.InvalidEntryError`.

    A source may instead yield the tuple ``(loc, lastmod, changefreq, priority)``: it is
    validated exactly as ``Entry(*row)``, without building an entry when the XML is
    written (the fast path for big sources, see :mod:`sitemap_core.model.rows`).
    """

    __slots__ = ("changefreq", "extra", "lastmod", "loc", "priority")

    loc: str
    lastmod: str | None
    changefreq: ChangeFreq | None
    priority: float | None
    #: The entry's images, videos, news and alternates, or None (the common case).
    extra: Extensions | None

    def __init__(
        self,
        loc: str,
        lastmod: LastmodInput | None = None,
        changefreq: ChangeFreq | str | None = None,
        priority: float | Decimal | None = None,
        *,
        images: Iterable[Image | str] | None = None,
        videos: Iterable[Video] | Video | None = None,
        news: News | None = None,
        alternates: AlternatesInput | None = None,
    ) -> None:
        # One validator per field (the writer of tuple rows calls them in this order too).
        self.loc = normalise_url(loc)
        self.lastmod = None if lastmod is None else normalise_lastmod(lastmod)
        self.changefreq = None if changefreq is None else normalise_changefreq(changefreq)
        self.priority = None if priority is None else normalise_priority(priority)
        if images is None and videos is None and news is None and alternates is None:
            self.extra = None  # the common entry: nothing to check
        else:
            self.extra = Extensions.build(self.loc, images, videos, news, alternates)

    @classmethod
    def made(cls, loc: str, lastmod: str | None) -> Entry:
        """An entry of values checked and normalised where they were made, not checked
        again: an index's child, whose URL the site builds on its checked base URL and
        whose lastmod a source's facts gave, normalised there."""
        entry = cls.__new__(cls)
        entry.loc, entry.lastmod = loc, lastmod
        entry.changefreq = entry.priority = entry.extra = None
        return entry

    @property
    def images(self) -> tuple[Image, ...]:
        """The entry's images (empty if none)."""
        return () if self.extra is None else self.extra.images

    @property
    def videos(self) -> tuple[Video, ...]:
        """The entry's videos (empty if none)."""
        return () if self.extra is None else self.extra.videos

    @property
    def news(self) -> News | None:
        """The entry's news article, if any."""
        return None if self.extra is None else self.extra.news

    @property
    def alternates(self) -> tuple[Alternate, ...]:
        """The entry's hreflang alternates (empty if none)."""
        return () if self.extra is None else self.extra.alternates

    def _key(self) -> tuple[str, str | None, str | None, float | None, Extensions | None]:
        return (self.loc, self.lastmod, self.changefreq, self.priority, self.extra)

    def __repr__(self) -> str:
        fields = [f"{self.loc!r}"]
        if self.lastmod is not None:
            fields.append(f"lastmod={self.lastmod!r}")
        if self.changefreq is not None:
            fields.append(f"changefreq={self.changefreq.value!r}")
        if self.priority is not None:
            fields.append(f"priority={self.priority!r}")
        if self.extra is not None:
            fields.append(f"extra={self.extra!r}")
        return f"Entry({', '.join(fields)})"
