"""Google's image sitemap extension: a validated :class:`Image` that renders once.

Every argument is checked and normalised in ``__init__``; the ``<image:image>``
fragment that goes inside ``<url>`` is rendered there too and kept, so
:meth:`Image.to_xml` costs nothing per request. A bad value raises
:class:`~sitemap_core.errors.InvalidEntryError` whose ``field`` is dotted
(``"image.loc"``).

The video extension lives in :mod:`sitemap_core.model.videos`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from sitemap_core.model.fields import (
    _element,
    _optional_text,
    _optional_url,
    _text,
    _Value,
)
from sitemap_core.model.namespaces import IMAGE_NS
from sitemap_core.model.values import normalise_url
from sitemap_core.model.xmltext import escape_uri

__all__ = ["Image", "image_url_xml", "image_urls_xml"]


def image_url_xml(url: str) -> str:
    """The ``<image:image>`` of an image given by its normalised URL alone."""
    return f"<image:image><image:loc>{escape_uri(url)}</image:loc></image:image>"


def image_urls_xml(urls: Sequence[str]) -> Sequence[str]:
    """``[image_url_xml(url) for url in urls]``, the URLs escaped at once: joined by
    newlines, which no normalised URL holds."""
    text = "\n".join(urls)
    if "&" in text or "'" in text:
        urls = escape_uri(text).split("\n")
    return [f"<image:image><image:loc>{url}</image:loc></image:image>" for url in urls]


# --- images -------------------------------------------------------------------------------


class Image(_Value):
    """One ``<image:image>`` of a page: the location of an image and, optionally, its details.

    * ``loc``: absolute http(s) URL of the image (any host: images often live on a CDN),
      normalised as :func:`~sitemap_core.model.values.normalise_url` does.
    * ``caption``, ``title``, ``geo_location``: text XML can hold, stripped, not empty.
    * ``license``: absolute http(s) URL of the image's licence.

    Google stopped reading ``caption``, ``title``, ``geo_location`` and ``license`` in 2022
    and now ignores them. They are still valid under the official XSD, so they are
    accepted and written, for other readers.

    A page may carry up to 1,000 images (``sitemap_core.limits.MAX_IMAGES_PER_URL``). An
    ``Image`` cannot check that; whoever collects the images of an entry does.
    """

    # The four optional fields live in one slot, None for the common image (a URL and
    # nothing else), which is then built with three stores instead of six: each store
    # of an immutable value is an object.__setattr__ call.
    __slots__ = ("_details", "loc")

    #: Namespace of the image extension.
    NAMESPACE: ClassVar[str] = IMAGE_NS
    #: Prefix the fragment is written with; the writer binds it to :attr:`NAMESPACE`.
    PREFIX: ClassVar[str] = "image"

    loc: str
    # (caption, title, geo_location, license), or None when all four are None.
    _details: tuple[str | None, str | None, str | None, str | None] | None

    def __init__(
        self,
        loc: str,
        *,
        caption: str | None = None,
        title: str | None = None,
        geo_location: str | None = None,
        license: str | None = None,
    ) -> None:
        # Checked in the order of the arguments, loc first: with two bad values, the
        # error names the first.
        url = normalise_url(loc, "image.loc")
        store = object.__setattr__
        store(self, "loc", url)
        if caption is None and title is None and geo_location is None and license is None:
            store(self, "_details", None)  # the common image: a URL and nothing else
            store(self, "_xml", image_url_xml(url))
            return
        details = (
            _optional_text(caption, "image.caption"),
            _optional_text(title, "image.title"),
            _optional_text(geo_location, "image.geo_location"),
            _optional_url(license, "image.license"),
        )
        store(self, "_details", details)
        store(self, "_xml", _detailed_xml(url, *details))

    @property
    def caption(self) -> str | None:
        """The image's caption, or None."""
        return None if self._details is None else self._details[0]

    @property
    def title(self) -> str | None:
        """The image's title, or None."""
        return None if self._details is None else self._details[1]

    @property
    def geo_location(self) -> str | None:
        """Where the image was taken (free text), or None."""
        return None if self._details is None else self._details[2]

    @property
    def license(self) -> str | None:
        """The URL of the image's licence, or None."""
        return None if self._details is None else self._details[3]

    def to_xml(self) -> str:
        """Return the ``<image:image>`` fragment (rendered once, when the image was built)."""
        return self._xml

    def _arguments(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (self.loc,), {
            "caption": self.caption,
            "title": self.title,
            "geo_location": self.geo_location,
            "license": self.license,
        }


def _detailed_xml(
    url: str, caption: str | None, title: str | None, geo_location: str | None, license: str | None
) -> str:
    # The XSD's sequence: loc, caption, geo_location, title, license.
    parts = ["<image:image>", _element("image", "loc", escape_uri(url))]
    if caption is not None:
        parts.append(_element("image", "caption", _text(caption)))
    if geo_location is not None:
        parts.append(_element("image", "geo_location", _text(geo_location)))
    if title is not None:
        parts.append(_element("image", "title", _text(title)))
    if license is not None:
        parts.append(_element("image", "license", escape_uri(license)))
    parts.append("</image:image>")
    return "".join(parts)
