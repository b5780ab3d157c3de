"""Streaming writers: ``<urlset>``, ``<sitemapindex>`` and plain-text sitemaps.

The writers are push-style encoders with no I/O: a caller feeds batches of validated
entries and receives ``bytes`` chunks of about :data:`~sitemap_core.limits.CHUNK_BYTES`.
A synchronous and an asynchronous caller therefore share every line here and differ
only in how they pull entries. Memory held is one chunk, whatever the document's size.

Escaping is done here and only here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .entries import Entry
from .errors import InvalidEntryError, SitemapTooLargeError
from .extensions import declarations
from .limits import CHUNK_BYTES, MAX_SITEMAP_BYTES, MAX_SITEMAPS_PER_INDEX, MAX_URLS_PER_SITEMAP
from .namespaces import SITEMAP_NS
from .xmltext import escape, escape_uri

__all__ = [
    "SITEMAP_NS",
    "DocumentEncoder",
    "IndexEncoder",
    "TextEncoder",
    "UrlsetEncoder",
    "escape",
    "format_priority",
]

_XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'


_PRIORITY_TEXT: dict[float, str] = {}


def format_priority(priority: float) -> str:
    """Return ``priority`` as ``xsd:decimal`` text (``0.5``, ``1.0``, ``0.25``).

    Never exponent notation, which the schema rejects; at most six decimals.
    """
    text = _PRIORITY_TEXT.get(priority)
    if text is None:
        text = f"{priority:.6f}".rstrip("0")
        if text.endswith("."):
            text += "0"
        if len(_PRIORITY_TEXT) < 1024:  # a site uses few distinct priorities
            _PRIORITY_TEXT[priority] = text
    return text


def _url_element(entry: Entry) -> str:
    # One f-string per <url>: the writer's hot loop. A ChangeFreq formats as its word.
    loc = entry.loc
    if "&" in loc or "'" in loc:
        loc = escape_uri(loc)
    lastmod = entry.lastmod
    changefreq = entry.changefreq
    priority = entry.priority
    extra = entry.extra
    return (
        f"<url><loc>{loc}</loc>"
        f"{'' if lastmod is None else f'<lastmod>{lastmod}</lastmod>'}"
        f"{'' if changefreq is None else f'<changefreq>{changefreq}</changefreq>'}"
        f"{'' if priority is None else f'<priority>{format_priority(priority)}</priority>'}"
        f"{'' if extra is None else extra.xml}"
        "</url>\n"
    )


class DocumentEncoder:
    """Shared chunking and limit keeping; subclasses say how one item is written.

    ``feed`` takes a batch of items and returns a chunk once about ``chunk_bytes`` are
    buffered (else ``b""``); ``close`` returns the rest with the closing tag. Exceeding
    ``max_items`` or ``max_bytes`` raises instead of writing an invalid file.
    """

    head: str = ""
    tail: str = ""
    max_items: int = MAX_URLS_PER_SITEMAP

    def __init__(self, *, chunk_bytes: int = CHUNK_BYTES, max_bytes: int = MAX_SITEMAP_BYTES):
        self._chunk_bytes = chunk_bytes
        self._max_bytes = max_bytes
        head = self.head.encode()
        self._buffer: list[bytes] = [head]
        self._buffered = len(head)
        self._written = len(head) + len(self.tail.encode())
        self._items = 0

    @property
    def items(self) -> int:
        """How many items were fed so far."""
        return self._items

    def render(self, items: Sequence[Entry]) -> str:
        """Return the text of ``items``; overridden by each document kind."""
        raise NotImplementedError

    def feed(
        self, items: Sequence[Entry], max_item_bytes: int | None = None, source: str = ""
    ) -> bytes:
        """Add a batch; return a chunk when enough is buffered, else ``b""``.

        With ``max_item_bytes`` every item is measured, and one over the bound raises
        :class:`InvalidEntryError` naming it (the bound is what sized the page).
        """
        if not items:
            return b""
        self._items += len(items)
        if self._items > self.max_items:
            raise SitemapTooLargeError(
                f"a {type(self).__name__} may hold at most {self.max_items} items"
            )
        if max_item_bytes is None:
            block = self.render(items).encode()
        else:
            block = self._render_bounded(items, max_item_bytes, source)
        self._written += len(block)
        if self._written > self._max_bytes:
            raise SitemapTooLargeError(
                f"the document would exceed {self._max_bytes} bytes after {self._items} items"
            )
        self._buffer.append(block)
        self._buffered += len(block)
        if self._buffered < self._chunk_bytes:
            return b""
        return self._flush()

    def _render_bounded(self, items: Sequence[Entry], bound: int, source: str) -> bytes:
        parts = []
        for item in items:
            data = self.render([item]).encode()
            if len(data) > bound:
                raise InvalidEntryError(
                    "entry",
                    item.loc,
                    f"is {len(data)} bytes as written, over its source's max_entry_bytes {bound}",
                    source or None,
                )
            parts.append(data)
        return b"".join(parts)

    def close(self) -> bytes:
        """Return what is left, closing tag included."""
        self._buffer.append(self.tail.encode())
        return self._flush()

    def _flush(self) -> bytes:
        chunk = b"".join(self._buffer)
        self._buffer = []
        self._buffered = 0
        return chunk


class UrlsetEncoder(DocumentEncoder):
    """Writes a ``<urlset>`` document from :class:`Entry` batches.

    Extension namespaces (image, video, news, xhtml) are declared on ``<urlset>`` when
    the first batch uses them, and only then; an entry of a later batch that needs one
    more declares it on its own ``<url>`` element. Both are the same XML to a
    namespace-aware reader and valid against the schemas, and a document of plain
    entries stays free of unused declarations. ``namespaces`` (a mask of
    :data:`~sitemap_core.extensions.NAMESPACES` bits) fixes the root's declarations
    up front instead.
    """

    head = f'{_XML_DECLARATION}<urlset xmlns="{SITEMAP_NS}">\n'
    tail = "</urlset>\n"

    def __init__(
        self,
        *,
        chunk_bytes: int = CHUNK_BYTES,
        max_bytes: int = MAX_SITEMAP_BYTES,
        namespaces: int | None = None,
    ) -> None:
        super().__init__(chunk_bytes=chunk_bytes, max_bytes=max_bytes)
        self._declared: int | None = None
        self._missing = 0
        if namespaces is not None:
            self._declare(namespaces)

    def _declare(self, mask: int) -> None:
        self._declared = mask
        if mask:
            head = f'{_XML_DECLARATION}<urlset xmlns="{SITEMAP_NS}"{declarations(mask)}>\n'.encode()
            self._written += len(head) - len(self._buffer[0])
            self._buffered += len(head) - len(self._buffer[0])
            self._buffer[0] = head

    def feed(
        self, items: Sequence[Entry], max_item_bytes: int | None = None, source: str = ""
    ) -> bytes:
        """As :meth:`DocumentEncoder.feed`, declaring the namespaces the entries use."""
        mask = 0
        for entry in items:
            extra = entry.extra
            if extra is not None:
                mask |= extra.mask
        if self._declared is None:
            if not items:
                return b""
            self._declare(mask)
        assert self._declared is not None
        self._missing = mask & ~self._declared
        return super().feed(items, max_item_bytes, source)

    def render(self, items: Sequence[Entry]) -> str:
        """Return the ``<url>`` elements of ``items``."""
        if not self._missing:
            return "".join([_url_element(entry) for entry in items])
        declared = self._declared or 0
        parts = []
        for entry in items:
            text = _url_element(entry)
            extra = entry.extra
            if extra is not None and extra.mask & ~declared:
                text = "<url" + declarations(extra.mask & ~declared) + text[4:]
            parts.append(text)
        return "".join(parts)


class TextEncoder(DocumentEncoder):
    """Writes a plain-text sitemap: one URI per line, UTF-8, no markup."""

    def render(self, items: Sequence[Entry]) -> str:
        """Return one line per entry."""
        return "".join([entry.loc + "\n" for entry in items])


class IndexEncoder(DocumentEncoder):
    """Writes a ``<sitemapindex>`` from child locations (and optional lastmods)."""

    head = f'{_XML_DECLARATION}<sitemapindex xmlns="{SITEMAP_NS}">\n'
    tail = "</sitemapindex>\n"
    max_items = MAX_SITEMAPS_PER_INDEX

    def render(self, items: Sequence[Entry]) -> str:
        """Return the ``<sitemap>`` elements; only ``loc`` and ``lastmod`` are used."""
        parts: list[str] = []
        for entry in items:
            parts += ("<sitemap><loc>", escape_uri(entry.loc), "</loc>")
            if entry.lastmod is not None:
                parts += ("<lastmod>", entry.lastmod, "</lastmod>")
            parts.append("</sitemap>\n")
        return "".join(parts)


def encode_all(encoder: DocumentEncoder, entries: Iterable[Entry], batch: int = 256) -> bytes:
    """Render a whole document at once (tests and exports; serving streams instead)."""
    chunks: list[bytes] = []
    pending: list[Entry] = []
    for entry in entries:
        pending.append(entry)
        if len(pending) == batch:
            chunks.append(encoder.feed(pending))
            pending = []
    chunks.append(encoder.feed(pending))
    chunks.append(encoder.close())
    return b"".join(chunks)
