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
from typing import Any

from sitemap_core.errors import InvalidEntryError, SitemapError, SitemapTooLargeError
from sitemap_core.limits import (
    CHUNK_BYTES,
    MAX_SITEMAP_BYTES,
    MAX_SITEMAPS_PER_INDEX,
    MAX_URLS_PER_SITEMAP,
)
from sitemap_core.model.entries import Entry
from sitemap_core.model.extensions import IMAGE_BIT, Extensions, declarations
from sitemap_core.model.images import image_urls_xml
from sitemap_core.model.namespaces import SITEMAP_NS
from sitemap_core.model.rows import Row, RowBatch, entry_from_row, not_under
from sitemap_core.model.values import (
    _CHANGEFREQ_TEXT,
    ChangeFreq,
    normalise_changefreq,
    normalise_lastmod,
    normalise_lastmods,
    normalise_priority,
    normalise_urls,
)
from sitemap_core.model.xmltext import escape, escape_uri
from sitemap_core.write.index_children import ChildBatch, entry_elements

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


# A site uses few distinct priorities, and formatting one is a large part of writing
# a <url> (benchmarks/README.md): remembered, on the project's one bounded memo.
@lru_cache(maxsize=1024)
def format_priority(priority: float) -> str:
    """Return ``priority`` as ``xsd:decimal`` text (``0.5``, ``1.0``, ``0.25``).

    Never exponent notation, which the schema rejects; at most six decimals.
    """
    text = f"{priority:.6f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def _url_elements(entries: Sequence[Entry], declared: int | None) -> tuple[str, int]:
    """The ``<url>`` elements of ``entries`` and the mask of the namespaces they use.

    An entry using a namespace outside ``declared`` declares it on its own ``<url>``;
    with ``declared`` None (the document's first batch, whose mask the caller then
    declares on ``<urlset>``) none does. The writer's hot path for sources that yield
    entries: the commonest shape, every field there, is written inline, with its
    extensions or without.
    """
    words = _CHANGEFREQ_TEXT
    parts: list[str] = []
    append = parts.append
    mask = 0
    for entry, loc in zip(entries, _escaped_uris([entry.loc for entry in entries]), strict=True):
        extra = entry.extra
        lastmod, changefreq, priority = entry.lastmod, entry.changefreq, entry.priority
        if lastmod is None or changefreq is None or priority is None:
            mask |= 0 if extra is None else extra.mask
            append(_url_element(entry, loc, declared))
        elif extra is None:
            append(
                f"<url><loc>{loc}</loc><lastmod>{lastmod}</lastmod>"
                f"<changefreq>{words[changefreq]}</changefreq><priority>"
                f"{format_priority(priority)}</priority></url>\n"
            )
        else:
            mask |= extra.mask
            missing = 0 if declared is None else extra.mask & ~declared
            append(
                f"{f'<url{declarations(missing)}>' if missing else '<url>'}<loc>{loc}</loc>"
                f"<lastmod>{lastmod}</lastmod><changefreq>{words[changefreq]}</changefreq>"
                f"<priority>{format_priority(priority)}</priority>{extra.xml}</url>\n"
            )
    return "".join(parts), mask


def _url_element(entry: Entry, loc: str, declared: int | None) -> str:
    """The ``<url>`` of an entry of any shape (``loc`` escaped): each optional field
    that is there, then its extensions, declaring the namespaces ``declared`` lacks."""
    head, tail = "<url>", "</url>\n"
    extra = entry.extra
    if extra is not None:
        missing = 0 if declared is None else extra.mask & ~declared
        head = f"<url{declarations(missing)}>" if missing else "<url>"
        tail = extra.xml + tail
    lastmod, changefreq, priority = entry.lastmod, entry.changefreq, entry.priority
    words = _CHANGEFREQ_TEXT
    return (
        f"{head}<loc>{loc}</loc>"
        f"{'' if lastmod is None else f'<lastmod>{lastmod}</lastmod>'}"
        f"{'' if changefreq is None else f'<changefreq>{words[changefreq]}</changefreq>'}"
        f"{'' if priority is None else f'<priority>{format_priority(priority)}</priority>'}"
        f"{tail}"
    )


def _row_elements(rows: list[Row], origin: str | None, source: str) -> str:
    """Validate and write the ``<url>`` elements of four-field tuple rows.

    The same bytes and the same errors as ``Entry(*row)`` written by
    :func:`_url_elements` after ``Plan.check``, without an ``Entry`` built (see
    :func:`_row_fields`).
    """
    return "".join(
        [
            f"<url><loc>{loc}</loc>{lastmod}{changefreq}{priority}</url>\n"
            for loc, lastmod, changefreq, priority in zip(
                *_row_fields(rows, origin, source), strict=True
            )
        ]
    )


def _row_fields(
    rows: Sequence[Row], origin: str | None, source: str
) -> tuple[Sequence[str], list[str], list[str], list[str]]:
    """The four fields of tuple rows as written: the escaped locs, and the other
    fields' elements ("" when absent).

    Each field of the batch goes through its validator at once (:func:`_row_columns`).
    A batch with a refused value is then built row by row as entries, so that the
    error is Entry's own for the first bad row, in Entry's order of fields; as with
    entries, a value error of any row of the batch comes before a row outside
    ``origin``.
    """
    try:
        locs, lastmods, changefreqs, priorities = _row_columns(rows)
    except (InvalidEntryError, TypeError):
        for row in rows:  # raises the error of the first bad row
            entry_from_row(row[:4], source)
        raise  # not reached: the columns' validators are the entry's
    if origin is not None and not all(map(str.startswith, locs, repeat(origin))):
        raise not_under(next(loc for loc in locs if not loc.startswith(origin)), origin, source)
    return _escaped_uris(locs), lastmods, changefreqs, priorities


def _row_columns(rows: Sequence[Row]) -> tuple[Sequence[str], list[str], list[str], list[str]]:
    """The rows' validated locs, and their other fields as elements ("" when absent),
    field by field; raises the error of a refused value."""
    if not rows:
        return [], [], [], []
    # A five-field row's fifth field (its images) is left to the caller.
    locs, lastmods, changefreqs, priorities, *_ = zip(*rows, strict=True)
    return (
        normalise_urls(locs),
        _lastmod_elements(lastmods),
        _elements(changefreqs, _changefreq_element, _WORD_TYPES),
        _elements(priorities, _priority_element, _NUMBER_TYPES),
    )


# Types whose equal values are written alike: a changefreq word and its member; 0.0
# and -0.0 (normalise_priority writes both as 0.0).
_WORD_TYPES: frozenset[type] = frozenset({str, ChangeFreq, type(None)})
_NUMBER_TYPES: frozenset[type] = frozenset({float, type(None)})


def _elements(
    values: Sequence[Any], element: Callable[[Any], str], types: frozenset[type]
) -> list[str]:
    """``[element(value) for value in values]``, each distinct value written once when
    all are of ``types``: the rows of a page carry a few changefreqs and priorities."""
    if types.issuperset(map(type, values)):
        texts = {value: element(value) for value in set(values)}
        return list(map(texts.__getitem__, values))
    return list(map(element, values))


def _lastmod_elements(values: Sequence[Any]) -> list[str]:
    """The ``<lastmod>`` elements of ``values`` ("" for None): a column without None
    through the batch form of the validator."""
    if type(None) in set(map(type, values)):
        return [_lastmod_element(value) for value in values]
    return [f"<lastmod>{text}</lastmod>" for text in normalise_lastmods(values)]


def _lastmod_element(value: Any) -> str:
    return "" if value is None else f"<lastmod>{normalise_lastmod(value)}</lastmod>"


def _changefreq_element(value: Any) -> str:
    if value is None:
        return ""
    return f"<changefreq>{_CHANGEFREQ_TEXT[normalise_changefreq(value)]}</changefreq>"


def _priority_element(value: Any) -> str:
    if value is None:
        return ""
    return f"<priority>{format_priority(normalise_priority(value))}</priority>"


def _escaped_uris(uris: Sequence[str]) -> Sequence[str]:
    """``uris`` escaped for XML text, at once: joined by newlines, which no normalised
    URI holds (see :func:`~sitemap_core.model.xmltext.escape_uri`)."""
    text = "\n".join(uris)
    if "&" not in text and "'" not in text:
        return uris
    return escape_uri(text).split("\n")


def _wide_row_elements(
    rows: list[Row], origin: str | None, source: str, declared: int | None
) -> tuple[str, int]:
    """``<url>`` elements of five-field rows (the fifth: images), and the namespaces
    they use: the same bytes and errors as ``Entry(*row[:4], images=row[4])`` written
    by :func:`_url_elements`.

    The four protocol fields go through :func:`_row_fields` (validated at once), and
    the rows' images through :func:`_image_fragments`. A batch with a refused value
    is built as entries, so that its error is Entry's own, in Entry's order (row by
    row, each row's fields before its images), naming the source.
    """
    fragments = _image_fragments([row[4] for row in rows])
    try:
        fields = _row_fields(rows, origin, source)
    except InvalidEntryError:
        _entries(rows, source)  # the first bad row's error, if any before the origin's
        raise
    if None in fragments:
        return _url_elements(_entries(rows, source), declared)
    head = (
        "<url>" if declared is None or declared & IMAGE_BIT else f"<url{declarations(IMAGE_BIT)}>"
    )
    # A row without images ("") writes no image namespace.
    return "".join(
        [
            f"{head if fragment else '<url>'}<loc>{loc}</loc>{lastmod}{changefreq}{priority}"
            f"{fragment}</url>\n"
            for loc, lastmod, changefreq, priority, fragment in zip(*fields, fragments, strict=True)
        ]
    ), IMAGE_BIT if any(fragments) else 0


def _entries(rows: list[Row], source: str) -> list[Entry]:
    return [entry_from_row(row, source) for row in rows]


def _image_fragments(column: list[Any]) -> list[str | None]:
    """The XML of each row's images ("" for none, None when Entry must say what is
    wrong): a column of one image URL a row through the batch forms of the URL's
    validator and of its XML (the commonest shape of a page of image rows)."""
    if set(map(type, column)) == {list} and set(map(len, column)) == {1}:
        try:
            return list(
                image_urls_xml(normalise_urls([images[0] for images in column], "image.loc"))
            )
        except InvalidEntryError:
            pass  # each row alone: its own error, in Entry's order
    return [_image_fragment(images) for images in column]


def _image_fragment(images: object) -> str | None:
    # The XML of a row's images: "" for none, None when Entry must say what is wrong.
    if images is None:
        return ""
    try:
        extensions = Extensions.of_images(images)
    except InvalidEntryError:
        return None
    return "" if extensions is None else extensions.xml


def _batch_elements(batch: RowBatch, rows: list[Row], declared: int | None) -> tuple[str, int]:
    """The ``<url>`` elements of the tuple ``rows`` of ``batch`` and the namespaces they
    use (four-field rows use none)."""
    if batch.wide:
        return _wide_row_elements(rows, batch.origin, batch.source, declared)
    return _row_elements(rows, batch.origin, batch.source), 0


def _namespaces(entries: Sequence[Entry]) -> int:
    """The mask of the extension namespaces ``entries`` use."""
    mask = 0
    for entry in entries:
        if entry.extra is not None:
            mask |= entry.extra.mask
    return mask


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
        if max_item_bytes is not None:
            if self._declared is None:
                self._declare(_namespaces(items))
            return super().feed(items, max_item_bytes, source)
        if not items:
            return b""
        self._count(len(items))
        if type(items) is RowBatch and items.rows:
            text, mask = _batch_elements(items, items.rows, self._declared)
        else:
            text, mask = _url_elements(items, self._declared)
        if self._declared is None:
            self._declare(mask)
        return self._push(text.encode())

    def render(self, items: Sequence[Entry]) -> str:
        """Return the ``<url>`` elements of ``items``."""
        return _url_elements(items, self._declared)[0]


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

    def feed(
        self, items: Sequence[Entry], max_item_bytes: int | None = None, source: str = ""
    ) -> bytes:
        """As :meth:`DocumentEncoder.feed`; a
        :class:`~sitemap_core.write.index_children.ChildBatch` is written from its pages,
        without entries (unless ``max_item_bytes`` asks for each item to be measured)."""
        if type(items) is not ChildBatch or max_item_bytes is not None or not items:
            return super().feed(items, max_item_bytes, source)
        self._count(len(items))
        return self._push(items.elements().encode())

    def render(self, items: Sequence[Entry]) -> str:
        """Return the ``<sitemap>`` elements; only ``loc`` and ``lastmod`` are used."""
        return entry_elements(items)


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
