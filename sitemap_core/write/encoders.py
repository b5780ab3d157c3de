"""Streaming writers: ``<urlset>``, ``<sitemapindex>`` and plain-text sitemaps.

The writers are push-style encoders with no I/O: a caller feeds batches of validated
entries and receives ``bytes`` chunks of about :data:`~sitemap_core.limits.CHUNK_BYTES`.
A synchronous and an asynchronous caller therefore share every line here and differ
only in how they pull entries. Memory held is one chunk, whatever the document's size.

Escaping is done here and only here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from itertools import repeat
from operator import attrgetter, itemgetter
from typing import Any

from sitemap_core.errors import InvalidEntryError, SitemapError, SitemapTooLargeError
from sitemap_core.limits import (
    CHUNK_BYTES,
    MAX_SITEMAP_BYTES,
    MAX_SITEMAPS_PER_INDEX,
    MAX_URLS_PER_SITEMAP,
)
from sitemap_core.model.entries import Entry
from sitemap_core.model.extensions import IMAGE_BIT, Extensions, declarations, plain_image_xml
from sitemap_core.model.namespaces import SITEMAP_NS
from sitemap_core.model.rows import (
    Row,
    RowBatch,
    entry_from_row,
    locs_test,
    refuse_outside,
    written_lastmod,
)
from sitemap_core.model.values import _CHANGEFREQ_TEXT
from sitemap_core.model.xmltext import escape, escape_uri

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


def format_priority(priority: float) -> str:
    """Return ``priority`` as ``xsd:decimal`` text (``0.5``, ``1.0``, ``0.25``).

    Never exponent notation, which the schema rejects; at most six decimals; ``-0.0``
    is written ``0.0``.
    """
    text = f"{priority + 0.0:.6f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


@lru_cache(maxsize=256)
def _hints(changefreq: str | None, priority: float | None) -> str:
    # The <changefreq> and <priority> of a <url>. Remembered per pair: a site gives few
    # distinct pairs, each repeated on many URLs (benchmarks/README.md: what it saves).
    word = "" if changefreq is None else f"<changefreq>{_CHANGEFREQ_TEXT[changefreq]}</changefreq>"
    return word if priority is None else f"{word}<priority>{format_priority(priority)}</priority>"


def _url_element(
    loc: str,
    lastmod: str | None,
    changefreq: str | None,
    priority: float | None,
    extension: str = "",
    head: str = "<url>",
) -> str:
    """One ``<url>`` element, of values already checked and in their written form.

    ``loc`` is a normalised URI as XML text (escaped by :func:`escape_uri`),
    ``lastmod`` its W3C text (empty or None: none), ``changefreq`` one of the seven
    words (or its ``ChangeFreq``) or None, ``priority`` from 0.0 to 1.0 or None.
    ``extension`` is the XML of the extensions, written last; ``head`` the opening tag
    (with the namespaces it declares, if any). The one writer of ``<url>``: entries
    and tuple rows alike.
    """
    hints = "" if changefreq is None and priority is None else _hints(changefreq, priority)
    if lastmod:
        return f"{head}<loc>{loc}</loc><lastmod>{lastmod}</lastmod>{hints}{extension}</url>\n"
    return f"{head}<loc>{loc}</loc>{hints}{extension}</url>\n"


def _url_head(declared: int | None, used: int) -> str:
    # The opening tag of a <url> whose extensions use the namespaces in ``used``: those
    # outside ``declared`` are declared on it. With ``declared`` None (the document's
    # first batch, whose mask the caller then declares on <urlset>) none is.
    missing = 0 if declared is None else used & ~declared
    return f"<url{declarations(missing)}>" if missing else "<url>"


def _url_elements(entries: Sequence[Entry], declared: int | None) -> tuple[str, int]:
    """The ``<url>`` elements of ``entries`` and the mask of the namespaces they use."""
    parts: list[str] = []
    mask = 0
    for entry, loc in zip(entries, _escaped(map(_ENTRY_LOC, entries)), strict=True):
        extra = entry.extra
        if extra is None:
            extension, head = "", "<url>"
        else:
            mask |= extra.mask
            extension, head = extra.xml, _url_head(declared, extra.mask)
        parts.append(
            _url_element(loc, entry.lastmod, entry.changefreq, entry.priority, extension, head)
        )
    return "".join(parts), mask


def _escaped(locs: Iterable[str]) -> list[str]:
    # escape_uri of each loc, in one pass over the batch: a checked loc holds no line
    # break, so each is one line of the whole.
    return escape_uri("\n".join(locs)).split("\n")


def _row_elements(
    rows: Sequence[Row], origin: str | None, source: str, extensions: Iterable[str] = repeat("")
) -> str:
    """Validate and write the ``<url>`` elements of four-field rows in one pass.

    The same bytes and the same errors as ``Entry(*row)`` written by
    :func:`_url_element`: a row whose every field is in a form ``Entry`` keeps as it is
    (:func:`locs_test`, :func:`written_lastmod`) is written as it is; any other row is
    built as an ``Entry``. Each row's ``extensions`` XML (its namespaces declared on
    ``<urlset>``) is written inside its ``<url>``. As with entries, a value error of
    any row of the batch comes before a row outside ``origin``.
    """
    xml_locs = _xml_locs(list(map(_LOC, rows)), locs_test(origin))
    parts: list[str] = []
    built: list[Entry] = []
    for row, loc, extension in zip(rows, xml_locs, extensions, strict=False):
        _, lastmod, changefreq, priority = row
        if loc is None or (written := written_lastmod(lastmod, changefreq, priority)) is None:
            entry = entry_from_row(row, source)
            built.append(entry)
            loc, written, changefreq = escape_uri(entry.loc), entry.lastmod, entry.changefreq
            priority = entry.priority
        parts.append(_url_element(loc, written, changefreq, priority, extension))
    refuse_outside(built, origin, source)
    return "".join(parts)


def _wide_row_elements(rows: Sequence[Row], origin: str | None, source: str) -> tuple[str, int]:
    """``<url>`` elements of five-field rows (the fifth: images), and the namespaces
    they use: the same bytes and errors as ``Entry(*row[:4], images=row[4])`` written
    by :func:`_url_element`, in a document that declares the image namespace on
    ``<urlset>`` (the caller's part).

    Each row's images are checked as ``Entry`` checks them, first; the four protocol
    fields then go through :func:`_row_elements` with the images' XML.
    """
    locs, lastmods, changefreqs, priorities, images = zip(*rows, strict=True)
    try:
        fragments = list(map(_images_xml, images))
    except InvalidEntryError:
        # Entry's own error, in Entry's order: row by row, each row's fields first.
        for row in rows:
            entry_from_row(row, source)
        raise
    fields = list(zip(locs, lastmods, changefreqs, priorities, strict=True))
    return _row_elements(fields, origin, source, fragments), IMAGE_BIT if any(fragments) else 0


def _xml_locs(
    locs: Sequence[Any], kept: Callable[[Sequence[object]], bool]
) -> Sequence[str | None]:
    # The locs of a batch as XML text; None for a loc that is not kept: Entry decides.
    if kept(locs):
        return _escaped(locs)
    return [escape_uri(loc) if kept((loc,)) else None for loc in locs]


#: An entry's loc, and a row's.
_ENTRY_LOC = attrgetter("loc")
_LOC = itemgetter(0)


def _images_xml(images: object) -> str:
    # The XML of a row's images ("" for none), as Entry(images=...) would write them.
    if type(images) is list and len(images) == 1:
        # The commonest: one image URL, written as Entry writes it, without the
        # Extensions object only an Entry needs (benchmarks/README.md).
        xml = plain_image_xml(images[0])
        if xml is not None:
            return xml
    extensions = Extensions.of_images(images)
    return "" if extensions is None else extensions.xml


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
        self._count(len(items))
        if max_item_bytes is None:
            block = self.render(items).encode()
        else:
            block = self._render_bounded(items, max_item_bytes, source)
        return self._push(block)

    def _count(self, items: int) -> None:
        self._items += items
        if self._items > self.max_items:
            raise SitemapTooLargeError(
                f"a {type(self).__name__} may hold at most {self.max_items} items"
            )

    def _push(self, block: bytes) -> bytes:
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

    #: Whether a document of no item is invalid (``<urlset>`` and ``<sitemapindex>``
    #: need one child by the schema).
    needs_items: bool = False

    def close(self) -> bytes:
        """Return what is left, closing tag included.

        Raises :class:`SitemapError` for an empty document that must not be empty: the
        source counted entries that it did not give, and an empty ``<urlset>`` would
        be invalid.
        """
        if self.needs_items and not self._items:
            raise SitemapError(
                "the sources gave no entry for a document that needs one (they counted"
                " entries they did not yield)"
            )
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
    :data:`~sitemap_core.model.extensions.NAMESPACES` bits) fixes the root's declarations
    up front instead.
    """

    head = f'{_XML_DECLARATION}<urlset xmlns="{SITEMAP_NS}">\n'
    tail = "</urlset>\n"
    needs_items = True

    def __init__(
        self,
        *,
        chunk_bytes: int = CHUNK_BYTES,
        max_bytes: int = MAX_SITEMAP_BYTES,
        namespaces: int | None = None,
    ) -> None:
        super().__init__(chunk_bytes=chunk_bytes, max_bytes=max_bytes)
        self._declared: int | None = None
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
        """As :meth:`DocumentEncoder.feed`, declaring the namespaces the entries use.

        A :class:`~sitemap_core.model.rows.RowBatch` of tuple rows is validated and written
        in one pass, without building entries (unless ``max_item_bytes`` asks for
        each item to be measured).
        """
        if type(items) is RowBatch and max_item_bytes is None and self._writes_rows(items):
            return self._write(len(items), *_batch_elements(items))
        if not items:
            return b""
        if max_item_bytes is None:
            return self._write(len(items), *_url_elements(items, self._declared))
        if self._declared is None:
            self._declare(_mask(items))
        return super().feed(items, max_item_bytes, source)

    def _writes_rows(self, batch: RowBatch) -> bool:
        # Whether the rows of ``batch`` are written as rows: four-field rows always;
        # rows with images unless they come after a first batch that declared no image
        # namespace (they are then written as entries, each <url> declaring it).
        declared = self._declared
        return bool(batch.rows) and (
            not batch.wide or declared is None or bool(declared & IMAGE_BIT)
        )

    def _write(self, items: int, text: str, mask: int) -> bytes:
        # Add ``items`` written as ``text``, whose extensions use the namespaces in
        # ``mask``: those of the first batch are declared on <urlset>.
        if self._declared is None:
            self._declare(mask)
        self._count(items)
        return self._push(text.encode())

    def render(self, items: Sequence[Entry]) -> str:
        """Return the ``<url>`` elements of ``items``."""
        return _url_elements(items, self._declared)[0]


def _batch_elements(batch: RowBatch) -> tuple[str, int]:
    # The <url> elements of a batch of rows and the namespaces they use.
    rows, origin, source = batch.rows, batch.origin, batch.source
    assert rows is not None  # unbuilt: see UrlsetEncoder._writes_rows
    if batch.wide:
        return _wide_row_elements(rows, origin, source)
    return _row_elements(rows, origin, source), 0


def _mask(entries: Iterable[Entry]) -> int:
    # The namespaces the extensions of ``entries`` use.
    mask = 0
    for entry in entries:
        if entry.extra is not None:
            mask |= entry.extra.mask
    return mask


class TextEncoder(DocumentEncoder):
    """Writes a plain-text sitemap: one URI per line, UTF-8, no markup."""

    def render(self, items: Sequence[Entry]) -> str:
        """Return one line per entry."""
        return "".join([entry.loc + "\n" for entry in items])


class IndexEncoder(DocumentEncoder):
    """Writes a ``<sitemapindex>`` from child locations (and optional lastmods)."""

    head = f'{_XML_DECLARATION}<sitemapindex xmlns="{SITEMAP_NS}">\n'
    tail = "</sitemapindex>\n"
    needs_items = True
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
