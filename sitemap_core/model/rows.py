"""Tuple rows: the fast way for a big source to give its entries.

A source may yield plain tuples ``(loc, lastmod, changefreq, priority)`` (shorter
tuples leave the last fields out; named tuples work too), which is what a database
cursor gives, instead of building an :class:`~sitemap_core.model.entries.Entry` per URL.
Every value of a row is validated and normalised exactly as ``Entry(*row)`` would do
it, with the same :class:`~sitemap_core.errors.InvalidEntryError`, named after the
source; only no ``Entry`` object is made where none is needed. A fifth field, when
given, holds the row's images (a list of image URLs or :class:`Image` objects, or
None), checked and written as ``Entry(*row[:4], images=row[4])`` would be.

A batch of rows travels as a :class:`RowBatch`: a ``list[Entry]`` whose entries are
built only when something asks for them (the text and HTML writers, a spool's
observer, a per-entry byte bound). The ``<urlset>`` writer instead validates and
writes each row in one pass (:func:`~sitemap_core.write.encoders.UrlsetEncoder.feed`), which
is what makes a 50,000-row page cost about what hand-written f-strings cost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeAlias

from sitemap_core.errors import InvalidEntryError
from sitemap_core.model.entries import Entry

__all__ = [
    "DeferredBatch",
    "Row",
    "RowBatch",
    "entry_from_row",
    "is_row_batch",
    "not_under",
    "split_batch",
]

#: A source row: ``(loc, lastmod, changefreq, priority[, images])``, or a prefix of it.
Row: TypeAlias = tuple[Any, ...]

ROW_SHAPE = "a row must be (loc[, lastmod[, changefreq[, priority[, images]]]])"


def not_under(loc: str, origin: str, source: str) -> InvalidEntryError:
    """The error of an entry outside the site's base URL (see ``Site.same_host_only``)."""
    return InvalidEntryError("loc", loc, f"is not under this site's base URL {origin!r}", source)


def entry_from_row(row: Row, source: str) -> Entry:
    """``Entry(*row)``, its error naming ``source``: the reference for every row.

    A tuple of no field or of more than five raises :class:`InvalidEntryError`; a fifth
    field is the entry's ``images``.
    """
    if not 1 <= len(row) <= 5:
        raise InvalidEntryError("item", row, ROW_SHAPE, source)
    try:
        if len(row) == 5:
            return Entry(*row[:4], images=row[4])
        return Entry(*row)
    except InvalidEntryError as exc:
        raise exc.with_source(source) from None


class DeferredBatch(list[Entry]):
    """A ``list[Entry]`` whose entries are built on first use, from ``rows``.

    Until something reads it as a list, the batch holds only ``rows`` (what its
    entries are made of); any list operation but ``len()`` first calls :meth:`build`,
    which fills the list and sets ``rows`` to None. A writer that knows the kind of
    batch reads ``rows`` directly instead. ``origin`` is what every loc must start
    with, or None (set by ``Plan.check``, refused when the entries are built).
    """

    __slots__ = ("origin", "rows", "source")

    def __init__(self, rows: list[Any], source: str) -> None:
        super().__init__()
        #: What the entries are made of; None once they are built.
        self.rows: list[Any] | None = rows
        self.source = source
        self.origin: str | None = None

    def build(self) -> None:
        """Fill the list with the entries of ``rows`` (once)."""
        raise NotImplementedError

    def __len__(self) -> int:
        rows = self.rows
        return len(rows) if rows is not None else list.__len__(self)

    def __reduce__(self) -> tuple[Any, ...]:
        self.build()
        return (list, (list(self),))


class RowBatch(DeferredBatch):
    """A batch of source rows that is a ``list[Entry]`` built on first use.

    Until something reads it as a list, the batch holds only ``rows``; any list
    operation first validates every row as ``Entry(*row)`` (errors name ``source``),
    refuses one outside ``origin`` when an origin was set (by ``Plan.check``), and
    fills the list. The ``<urlset>`` writer reads ``rows`` directly instead, validating
    and writing in one pass with the same results. ``len()`` needs no entries.
    """

    __slots__ = ()

    def __init__(self, rows: list[Row], source: str) -> None:
        #: The rows, each of four fields; None once the entries are built.
        super().__init__(rows, source)

    @classmethod
    def of(cls, items: list[Any], source: str) -> RowBatch:
        """A batch of ``items`` (tuples), each padded to four fields, or to five when a
        row of the batch has images (see :attr:`wide`).

        A tuple of no field or of more than five raises :class:`InvalidEntryError`.
        """
        widths = set(map(len, items))
        if widths != {4} and widths != {5}:
            width = 5 if 5 in widths else 4
            items = [_padded(row, source, width) for row in items]
        return cls(items, source)

    @property
    def wide(self) -> bool:
        """Whether the rows carry a fifth field, their images (every row then has five)."""
        rows = self.rows
        return bool(rows) and len(rows[0]) == 5  # type: ignore[index]

    def build(self) -> None:
        """Validate the rows and fill the list with their entries (once)."""
        rows = self.rows
        if rows is None:
            return
        source, origin = self.source, self.origin
        entries = [entry_from_row(row, source) for row in rows]
        if origin is not None:
            for entry in entries:
                if not entry.loc.startswith(origin):
                    raise not_under(entry.loc, origin, source)
        list.extend(self, entries)
        self.rows = None


def split_batch(batch: list[Entry], size: int) -> list[list[Entry]]:
    """``batch`` in parts of at most ``size`` entries, rows kept unbuilt.

    A worker thread hands a sync source's entries to the event loop in big batches (a
    round trip each); the writer takes them in parts of the usual size, so the chunks
    it sends stay tens of KiB.
    """
    if len(batch) <= size:
        return [batch]
    if type(batch) is RowBatch and batch.rows is not None:
        rows, source = batch.rows, batch.source
        return [RowBatch(rows[i : i + size], source) for i in range(0, len(rows), size)]
    return [batch[i : i + size] for i in range(0, len(batch), size)]


def _padded(row: tuple[Any, ...], source: str, width: int = 4) -> Row:
    size = len(row)
    if size == width:
        return row
    if not 1 <= size <= 5:
        raise InvalidEntryError("item", row, ROW_SHAPE, source)
    return (*row, *(None,) * (width - size))


def _building(name: str) -> Callable[..., Any]:
    method = getattr(list, name)

    def built_first(self: DeferredBatch, *args: Any, **kwargs: Any) -> Any:
        if self.rows is not None:
            self.build()
        return method(self, *args, **kwargs)

    built_first.__name__ = name
    built_first.__doc__ = method.__doc__
    return built_first


# Every list operation but len() needs the entries. (CPython's fast paths that read a
# list's storage directly are taken for exact lists only, so a subclass is always
# read through these methods.)
_LIST_METHODS: Iterable[str] = (
    "__add__",
    "__contains__",
    "__delitem__",
    "__eq__",
    "__ge__",
    "__getitem__",
    "__gt__",
    "__iadd__",
    "__imul__",
    "__iter__",
    "__le__",
    "__lt__",
    "__mul__",
    "__ne__",
    "__repr__",
    "__reversed__",
    "__rmul__",
    "__setitem__",
    "append",
    "clear",
    "copy",
    "count",
    "extend",
    "index",
    "insert",
    "pop",
    "remove",
    "reverse",
    "sort",
)
for _name in _LIST_METHODS:
    setattr(DeferredBatch, _name, _building(_name))
del _name


def is_row_batch(items: object) -> bool:
    """Whether ``items`` is a :class:`RowBatch` whose entries are not built yet."""
    return type(items) is RowBatch and items.rows is not None
