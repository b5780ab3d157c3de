"""What an entry carries besides its four protocol fields: images, videos, news, alternates.

An :class:`Extensions` holds the validated values and their XML, rendered once when the
entry is built, plus the set of namespaces that XML uses (a bit mask), so that the
writer's per-request work for an extended entry is one string and one mask test.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from sitemap_core.errors import InvalidEntryError
from sitemap_core.limits import MAX_IMAGES_PER_URL
from sitemap_core.model.alternates import Alternate, AlternatesInput, check_alternates
from sitemap_core.model.images import Image, image_url_xml
from sitemap_core.model.keyed import Keyed
from sitemap_core.model.namespaces import IMAGE_NS, NEWS_NS, VIDEO_NS, XHTML_NS
from sitemap_core.model.news import News
from sitemap_core.model.values import normalise_url
from sitemap_core.model.videos import Video

__all__ = ["ALL_NAMESPACES", "NAMESPACES", "Extensions", "declarations"]

#: Namespace bits, in the order the declarations are written.
IMAGE_BIT: Final = 1
VIDEO_BIT: Final = 2
NEWS_BIT: Final = 4
XHTML_BIT: Final = 8

#: (bit, prefix, URI) of every extension namespace.
NAMESPACES: Final = (
    (IMAGE_BIT, "image", IMAGE_NS),
    (VIDEO_BIT, "video", VIDEO_NS),
    (NEWS_BIT, "news", NEWS_NS),
    (XHTML_BIT, "xhtml", XHTML_NS),
)

#: The mask of every extension namespace.
ALL_NAMESPACES: Final = IMAGE_BIT | VIDEO_BIT | NEWS_BIT | XHTML_BIT


def declarations(mask: int) -> str:
    """The ``xmlns:prefix="uri"`` attributes of the namespaces in ``mask``."""
    return "".join(f' xmlns:{prefix}="{uri}"' for bit, prefix, uri in NAMESPACES if mask & bit)


def _videos(value: Any) -> tuple[Video, ...]:
    if value is None:
        return ()
    if isinstance(value, Video):
        return (value,)
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidEntryError("videos", value, "must be a list of Video objects")
    videos = tuple(value)
    for video in videos:
        if not isinstance(video, Video):
            raise InvalidEntryError("videos", video, "must be a Video")
    return videos


def _alternates_of(loc: str, alternates: AlternatesInput | None) -> tuple[Alternate, ...]:
    """The checked alternates of the entry at ``loc``, which must list ``loc`` itself."""
    found = check_alternates(alternates)
    if found and all(alternate.href != loc for alternate in found):
        raise InvalidEntryError(
            "alternates",
            [alternate.href for alternate in found],
            f"must include the entry's own URL {loc!r} (hreflang groups are reciprocal)",
        )
    return found


def _image_items(value: Any) -> tuple[tuple[Image | str, ...], str]:
    """The images of an entry (None, or an iterable of at most 1,000) and their XML.

    An image given as a URL is checked (and normalised) as ``Image(url)`` checks it and
    kept as that URL: its fragment is all a sitemap needs, and the :class:`Image` is
    built only if something reads :attr:`Extensions.images`. The same errors, in the
    same order, as building each ``Image``.
    """
    if value is None:
        return (), ""
    # A list or tuple, what nearly everyone passes, skips the ABC check.
    if type(value) not in (list, tuple) and (
        isinstance(value, str | Image) or not isinstance(value, Iterable)
    ):
        raise InvalidEntryError("images", value, "must be a list of Image objects or URLs")
    items: list[Image | str] = []
    parts: list[str] = []
    for item in value:
        if len(items) == MAX_IMAGES_PER_URL:
            raise InvalidEntryError(
                "images", value, f"has more than {MAX_IMAGES_PER_URL:,} images; Google's limit"
            )
        if type(item) is str:
            url = normalise_url(item, "image.loc")
            items.append(url)
            parts.append(image_url_xml(url))
        else:
            image = item if isinstance(item, Image) else Image(item)
            items.append(image)
            parts.append(image.to_xml())
    return tuple(items), "".join(parts)


class Extensions(Keyed):
    """The images, videos, news and alternates of one entry, validated and rendered.

    Build it with :meth:`build`, which returns None when there is nothing to carry (the
    common case costs no object). ``xml`` is the text written inside ``<url>`` after
    the protocol fields; ``mask`` the namespaces it needs (see :data:`NAMESPACES`).
    """

    __slots__ = ("_images", "alternates", "mask", "news", "videos", "xml")

    # The images, an image given as a URL kept as that (normalised) URL until read.
    _images: tuple[Image | str, ...]
    videos: tuple[Video, ...]
    news: News | None
    alternates: tuple[Alternate, ...]
    xml: str
    mask: int

    def __init__(
        self,
        images: tuple[Image | str, ...],
        image_xml: str,
        videos: tuple[Video, ...],
        news: News | None,
        alternates: tuple[Alternate, ...],
    ) -> None:
        self._images = images
        self.videos = videos
        self.news = news
        self.alternates = alternates
        others: tuple[Video | News | Alternate, ...] = (
            (*videos, *alternates) if news is None else (*videos, news, *alternates)
        )
        self.xml = image_xml + "".join([other.to_xml() for other in others])
        self.mask = (
            IMAGE_BIT * bool(images)
            | VIDEO_BIT * bool(videos)
            | NEWS_BIT * (news is not None)
            | XHTML_BIT * bool(alternates)
        )

    @property
    def images(self) -> tuple[Image, ...]:
        """The entry's images (an image given as a URL is built on first read)."""
        items = self._images
        if all(isinstance(item, Image) for item in items):
            return items  # type: ignore[return-value]
        # Each URL was checked and normalised already: Image() keeps it as it is.
        images = tuple(item if isinstance(item, Image) else Image(item) for item in items)
        self._images = images
        return images

    @classmethod
    def of_images(cls, images: Any) -> Extensions | None:
        """``build(loc, images, None, None, None)``: an entry's images alone, the
        commonest extension, by a shorter path (the same result and errors)."""
        found, xml = _image_items(images)
        if not found:
            return None
        extensions = cls.__new__(cls)
        extensions._images, extensions.xml, extensions.mask = found, xml, IMAGE_BIT
        extensions.videos = extensions.alternates = ()
        extensions.news = None
        return extensions

    @classmethod
    def build(
        cls,
        loc: str,
        images: Iterable[Image | str] | None,
        videos: Iterable[Video] | Video | None,
        news: News | None,
        alternates: AlternatesInput | None,
    ) -> Extensions | None:
        """Validate the extension arguments of the entry at ``loc``; None if all empty.

        Raises :class:`InvalidEntryError` naming the field: more than 1,000 images,
        something that is not an :class:`Image` / URL, :class:`Video` or :class:`News`,
        a repeated hreflang, or alternates that leave out the entry's own URL (every
        page of a hreflang group must list itself, or Google ignores the group).
        """
        if videos is None and news is None and alternates is None:
            return cls.of_images(images)
        found_images, image_xml = _image_items(images)
        found_videos = _videos(videos)
        if news is not None and not isinstance(news, News):
            raise InvalidEntryError("news", news, "must be a News")
        extensions = cls(
            found_images, image_xml, found_videos, news, _alternates_of(loc, alternates)
        )
        return extensions if extensions.mask else None

    def _key(self) -> tuple[object, ...]:
        return (self.images, self.videos, self.news, self.alternates)

    def __repr__(self) -> str:
        return (
            f"Extensions(images={len(self._images)}, videos={len(self.videos)}, "
            f"news={self.news is not None}, alternates={len(self.alternates)})"
        )
