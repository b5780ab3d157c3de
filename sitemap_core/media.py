"""Google's image sitemap extension: a validated :class:`Image` that renders once.

Every argument is checked and normalised in ``__init__``; the ``<image:image>``
fragment that goes inside ``<url>`` is rendered there too and kept, so
:meth:`Image.to_xml` costs nothing per request. A bad value raises
:class:`~sitemap_core.errors.InvalidEntryError` whose ``field`` is dotted
(``"image.loc"``).

The video extension lives in :mod:`sitemap_core.videos`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from .fields import (
    _element,
    _optional_text,
    _optional_url,
    _text,
    _Value,
)
from .limits import MAX_URL_LENGTH
from .namespaces import IMAGE_NS
from .values import _COMMON_URL, _STRAY_PERCENT, normalise_url
from .xmltext import escape_uri

__all__ = ["Image"]

# --- images -------------------------------------------------------------------------------


class Image(_Value):
    """One ``<image:image>`` of a page: the location of an image and, optionally, its details.

    * ``loc``: absolute http(s) URL of the image (any host: images often live on a CDN),
      normalised as :func:`~sitemap_core.values.normalise_url` does.
    * ``caption``, ``title``, ``geo_location``: text XML can hold, stripped, not empty.
    * ``license``: absolute http(s) URL of the image's licence.

    Google stopped reading ``caption``, ``title``, ``geo_location`` and ``license`` in 2022
    and now ignores them. They are still valid under the official XSD, so they are
    accepted and written, for other readers.

    A page may carry up to 1,000 images (``sitemap_core.limits.MAX_IMAGES_PER_URL``). An
    ``Image`` cannot check that; whoever collects the images of an entry does.
    """

    __slots__ = ("caption", "geo_location", "license", "loc", "title")

    #: Namespace of the image extension.
    NAMESPACE: ClassVar[str] = IMAGE_NS
    #: Prefix the fragment is written with; the writer binds it to :attr:`NAMESPACE`.
    PREFIX: ClassVar[str] = "image"

    loc: str
    caption: str | None
    title: str | None
    geo_location: str | None
    license: str | None

    def __init__(
        self,
        loc: str,
        *,
        caption: str | None = None,
        title: str | None = None,
        geo_location: str | None = None,
        license: str | None = None,
    ) -> None:
        if caption is None and title is None and geo_location is None and license is None:
            # The common image: a plain URL, by Entry's inlined check (same result as
            # normalise_url for the URLs it accepts), in one f-string.
            if (
                type(loc) is str
                and 12 <= len(loc) <= MAX_URL_LENGTH
                and _COMMON_URL.match(loc) is not None
                and ("%" not in loc or _STRAY_PERCENT.search(loc) is None)
            ):
                url = loc
            else:
                url = normalise_url(loc, "image.loc")
            store = object.__setattr__
            store(self, "loc", url)
            store(self, "caption", None)
            store(self, "title", None)
            store(self, "geo_location", None)
            store(self, "license", None)
            store(
                self, "_xml", f"<image:image><image:loc>{escape_uri(url)}</image:loc></image:image>"
            )
            return
        self._freeze(
            loc=normalise_url(loc, "image.loc"),
            caption=_optional_text(caption, "image.caption"),
            title=_optional_text(title, "image.title"),
            geo_location=_optional_text(geo_location, "image.geo_location"),
            license=_optional_url(license, "image.license"),
        )
        # The XSD's sequence: loc, caption, geo_location, title, license.
        parts = ["<image:image>", _element("image", "loc", escape_uri(self.loc))]
        if self.caption is not None:
            parts.append(_element("image", "caption", _text(self.caption)))
        if self.geo_location is not None:
            parts.append(_element("image", "geo_location", _text(self.geo_location)))
        if self.title is not None:
            parts.append(_element("image", "title", _text(self.title)))
        if self.license is not None:
            parts.append(_element("image", "license", escape_uri(self.license)))
        parts.append("</image:image>")
        self._freeze(_xml="".join(parts))

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
