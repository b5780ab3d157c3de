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
writes the rows in one pass (:func:`~sitemap_core.write.encoders.UrlsetEncoder.feed`), by
the tests here (:func:`locs_test`, :func:`written_lastmod`): a row in the forms ``Entry``
keeps as they are is written with no object made for it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime
from typing import Any, TypeAlias

from sitemap_core.errors import InvalidEntryError
from sitemap_core.limits import MAX_URL_LENGTH, MIN_URL_LENGTH
from sitemap_core.model.entries import Entry
from sitemap_core.model.values import (
    _CHANGEFREQ_TEXT,
    _COMMON_URL,
    _STRAY_PERCENT,
    _ZONE_SUFFIX,
    _lastmod_text,
    _zoned_text,
)

__all__ = [
    "Row",
    "RowBatch",
    "entry_from_row",
    "is_row_batch",
    "locs_test",
    "not_under",
    "refuse_outside",
    "split_batch",
    "written_lastmod",
]

#: A source row: ``(loc, lastmod, changefreq, priority[, images])``, or a prefix of it.
Row: TypeAlias = tuple[Any, ...]

#: The characters ``_COMMON_URL`` allows after the host's ``/`` (a test keeps the two
#: in step).
PATH_CHARS = r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]"

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


def refuse_outside(entries: Iterable[Entry], origin: str | None, source: str) -> None:
    """Raise :func:`not_under`'s error for the first entry not under ``origin`` (None:
    every entry is accepted)."""
    if origin is None:
        return
    for entry in entries:
        if not entry.loc.startswith(origin):
            raise not_under(entry.loc, origin, source)


def locs_test(origin: str | None) -> Callable[[Sequence[object]], bool]:
    """The test that every one of some locs is a ``loc`` ``Entry`` keeps as it is.

    True only when each is a ``str`` of 12 to 2,048 characters in the commonest valid
    form (``Entry``'s own first test: ``_COMMON_URL``, and no stray ``%``) that starts
    with ``origin`` (None: on any host). The locs are tested as one text, a line each,
    by one regex: a batch's locs at once, or one loc. For an origin of another shape
    (a port, an IPv6 host) it is always False: every row then takes ``Entry``'s full
    path and the plain ``startswith`` test of :func:`refuse_outside`, with the same
    results.
    """
    lines = _lines_pattern(origin)

    def kept(locs: Sequence[object]) -> bool:
        if lines is None:
            return False
        try:
            text = "\n".join(locs) + "\n"  # type: ignore[arg-type]
        except TypeError:  # a loc that is not a str
            return False
        return (
            text.count("\n") == len(locs)  # no loc holds a line break of its own
            and lines.fullmatch(text) is not None
            and ("%" not in text or _STRAY_PERCENT.search(text) is None)
        )

    return kept


def _lines_pattern(origin: str | None) -> re.Pattern[str] | None:
    # Lines of kept locs; None for an origin no kept loc can start with. The length of
    # a loc is bounded by a lookahead after a host of any length, and by the count of
    # characters after a fixed origin.
    if origin is None:
        host_loc = _COMMON_URL.pattern.removesuffix(r"\Z")
        return re.compile(rf"(?:(?=[^\n]{{{MIN_URL_LENGTH},{MAX_URL_LENGTH}}}\n){host_loc}\n)*")
    if _COMMON_URL.match(origin) is None:
        return None
    # origin is scheme://host/path-chars*, so origin + path-chars* is too.
    least, most = max(0, MIN_URL_LENGTH - len(origin)), MAX_URL_LENGTH - len(origin)
    return re.compile(rf"(?:{re.escape(origin)}{PATH_CHARS}{{{least},{most}}}\n)*")


def written_lastmod(lastmod: object, changefreq: object, priority: object) -> str | None:
    """The text ``Entry`` stores for a row's ``lastmod`` (``""`` for none), when the
    row's ``lastmod``, ``changefreq`` and ``priority`` are each in a form ``Entry``
    keeps as it is; None when ``Entry`` must decide (any other form, valid or not).

    The forms: a lastmod that is None, a datetime in a zone already seen, ISO text as a
    database gives it, or a date; a changefreq that is None or one of the seven words;
    a priority that is None or a float from 0.0 to 1.0. Checked in ``Entry``'s order,
    so that a value only ``Entry`` refuses never stops a check of a field before it.
    """
    text: str | None
    if lastmod is None:
        text = ""
    elif type(lastmod) is datetime:
        suffix = _ZONE_SUFFIX.get(lastmod.tzinfo)
        text = None if suffix is None else _zoned_text(lastmod, suffix)
    elif type(lastmod) is str:
        text = _lastmod_text(lastmod)
    elif type(lastmod) is date:
        text = lastmod.isoformat()
    else:
        return None
    if (
        text is None
        or changefreq not in _CHANGEFREQS
        or not (priority is None or (type(priority) is float and 0.0 <= priority <= 1.0))
    ):
        return None
    return text


#: The changefreqs ``Entry`` keeps as they are: one of the seven words (or its
#: ``ChangeFreq``, equal to it), or None.
_CHANGEFREQS = frozenset([None, *_CHANGEFREQ_TEXT])


class RowBatch(list[Entry]):
    """A batch of source rows that is a ``list[Entry]`` built on first use.

    Until something reads it as a list, the batch holds only ``rows``; any list
    operation first validates every row as ``Entry(*row)`` (errors name ``source``),
    refuses one outside ``origin`` when an origin was set (by ``Plan.check``), and
    fills the list. The ``<urlset>`` writer reads ``rows`` directly instead, validating
    and writing in one pass with the same results. ``len()`` needs no entries.
    """

    __slots__ = ("origin", "rows", "source")

    def __init__(self, rows: list[Row], source: str) -> None:
        super().__init__()
        #: The rows, each of four fields; None once the entries are built.
        self.rows: list[Row] | None = rows
        self.source = source
        #: Every loc must start with this, or None (set by ``Plan.check``).
        self.origin: str | None = None

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
        refuse_outside(entries, origin, source)
        list.extend(self, entries)
        self.rows = None

    def __len__(self) -> int:
        rows = self.rows
        return len(rows) if rows is not None else list.__len__(self)

    def __reduce__(self) -> tuple[Any, ...]:
        self.build()
        return (list, (list(self),))


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

    def built_first(self: RowBatch, *args: Any, **kwargs: Any) -> Any:
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
    setattr(RowBatch, _name, _building(_name))
del _name


def is_row_batch(items: object) -> bool:
    """Whether ``items`` is a :class:`RowBatch` whose entries are not built yet."""
    return type(items) is RowBatch and items.rows is not None
