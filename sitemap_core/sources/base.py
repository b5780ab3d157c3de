"""Where entries come from.

A :class:`UrlSource` answers two questions: how many entries there are, and which
entries lie in ``[start, stop)``. Two kinds of user object are adapted to it:

* a **sliceable** object, one with ``__len__`` and ``__getitem__(slice)`` (a list, or
  a query wrapper doing ``COUNT(*)`` and ``LIMIT/OFFSET``). Page N then costs one slice
  and the index costs one count: the path for big sites.
* a **callable** returning an iterable (typically a generator function). Counting
  walks it and page N skips N-1 pages of it: the small-site path. Pass ``count=`` to
  make counting cheap.

Items may be :class:`Entry` objects, plain URL strings, or tuples
``(loc, lastmod, changefreq, priority)`` (trailing fields may be left out), as a
database cursor gives them: the fast path for big sources. A row is validated exactly
as ``Entry(*row)`` would be, but the ``<urlset>`` writer checks and writes it in one
pass instead of building an ``Entry`` (see :mod:`sitemap_core.model.rows`).
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sized
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from itertools import islice
from typing import Any, Protocol, TypeAlias, TypedDict, TypeVar, runtime_checkable

from sitemap_core.errors import ConfigurationError, InvalidEntryError
from sitemap_core.limits import MAX_SITEMAP_BYTES, MAX_URLS_PER_SITEMAP
from sitemap_core.model.entries import Entry, normalise_lastmod
from sitemap_core.model.recent import NewestEntries, Recent, merge_recent
from sitemap_core.model.rows import Row, RowBatch, entry_from_row
from sitemap_core.sources.newsroom import news_epoch
from sitemap_core.sources.pages import Page, Summary, checked_pages, streamed_pages, summarised

__all__ = [
    "BATCH_SIZE",
    "RESERVED_NAMES",
    "SECTION_NAME",
    "WHOLE",
    "Item",
    "Limits",
    "Sliceable",
    "SourceOptions",
    "UrlSource",
    "check_name",
    "checked_count",
    "close_now",
    "coerce_batch",
    "named",
    "naming",
    "sources_of",
    "walk_count",
]

_S = TypeVar("_S")

#: How many entries are pulled from a source and rendered at a time.
BATCH_SIZE = 256

#: The stop of a range that reaches every entry: ``fingerprint(0, WHOLE)`` is the
#: whole source's fingerprint.
WHOLE = sys.maxsize

#: What a source may yield: a validated entry, a bare URL, or a row
#: ``(loc, lastmod, changefreq, priority)`` (see :mod:`sitemap_core.model.rows`).
Item: TypeAlias = Entry | str | Row

#: Section names appear in child URLs (``sitemap-<name>-<n>.xml``), so they are kept
#: to lower-case URL-safe words.
SECTION_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")

#: Names no source may take, because the site's own paths use them.
RESERVED_NAMES = frozenset({"index"})


@dataclass(frozen=True)
class Limits:
    """How a source's entries are split into pages, for the protocol's two limits.

    ``page_size`` caps the entries of one page below the site's setting.
    ``max_entry_bytes`` declares the most bytes one ``<url>`` of this source can take
    (long URLs, many images or alternates): its pages then hold at most
    ``(52,428,800 - overhead) // max_entry_bytes`` entries, so no page can pass 50 MiB
    whatever the entries carry, and an entry over the bound is an error, never
    dropped. Without it the writer still refuses to pass 50 MiB in a page (a typed
    error), which a site of ordinary URLs (under ~1 KiB each) never meets.

    ``news`` makes the source a news section (see :mod:`sitemap_core.sources.newsroom`): at
    most 1,000 entries a page, each with ``news=`` and of the last two days.

    ``stable`` marks a source that decides its own pages, which keep their URLs (see
    :mod:`sitemap_core.sources.pages`): set for an object with ``stable_pages()``.
    """

    page_size: int | None = None
    max_entry_bytes: int | None = None
    news: bool = False
    stable: bool = False

    def __post_init__(self) -> None:
        if self.page_size is not None and not _whole_within(
            self.page_size, 1, MAX_URLS_PER_SITEMAP
        ):
            raise ConfigurationError(
                f"page_size {self.page_size!r} must be between 1 and {MAX_URLS_PER_SITEMAP}"
            )
        if not isinstance(self.news, bool):
            raise ConfigurationError(f"news {self.news!r} must be True or False")
        if self.max_entry_bytes is not None and not _whole_within(
            self.max_entry_bytes, MIN_ENTRY_BYTES, MAX_SITEMAP_BYTES // 2
        ):
            raise ConfigurationError(
                f"max_entry_bytes {self.max_entry_bytes!r} must be between {MIN_ENTRY_BYTES}"
                f" and {MAX_SITEMAP_BYTES // 2}"
            )


def _whole_within(value: object, low: int, high: int) -> bool:
    # An int (not a bool) from ``low`` to ``high``.
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


#: The smallest ``<url>`` element the writer can produce (a 12-character loc).
MIN_ENTRY_BYTES = len("<url><loc>http://a.bc/</loc></url>\n")


def check_name(name: str) -> str:
    """Return ``name`` if it can name a source, else raise :class:`ConfigurationError`."""
    if not isinstance(name, str) or not SECTION_NAME.fullmatch(name):
        raise ConfigurationError(
            f"source name {name!r} must be 1-64 lower-case letters, digits, '_' or '-'"
            " and start with a letter or digit (it appears in sitemap URLs)"
        )
    if name in RESERVED_NAMES:
        raise ConfigurationError(
            f"source name {name!r} is reserved: /sitemap-{name}-N.xml names the parts of"
            " a sitemap index split above 50,000 children"
        )
    return name


def sources_of(
    given: Mapping[str, Any] | Iterable[_S], adapt: Callable[[str, Any], _S]
) -> list[_S]:
    """The sources a middleware is given: built already, or a mapping of names to
    objects, each adapted with ``adapt(name, obj)`` (a ``from_object``)."""
    if isinstance(given, Mapping):
        return [adapt(name, obj) for name, obj in given.items()]
    return list(given)


def close_now(iterator: object) -> None:
    """Close ``iterator`` now if it is a generator (or has ``close``).

    The sync twin of :func:`sitemap_core.sources.aio.aclose`: an abandoned generator is
    otherwise closed by the garbage collector, late, while it may hold a cursor.
    """
    close = getattr(iterator, "close", None)
    if close is not None:
        close()


class SourceOptions(TypedDict, total=False):
    """The keyword arguments a source is registered with (see :meth:`UrlSource.from_object`)."""

    count: Callable[[], int] | None
    fingerprint: Callable[..., Any] | None
    newest: Callable[..., Any] | None
    page_size: int | None
    max_entry_bytes: int | None
    news: bool


@runtime_checkable
class Sliceable(Protocol):
    """A sized object whose ``[start:stop]`` returns the items of that range."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: slice, /) -> Iterable[Item]: ...


def coerce_batch(items: list[Any], source: str) -> list[Entry]:
    """Return ``items`` as entries, building :class:`Entry` from URL strings and rows.

    A batch of tuple rows only becomes a :class:`~sitemap_core.model.rows.RowBatch`: its
    rows are validated when it is written (or read as a list), errors naming the
    source. Anything else raises :class:`InvalidEntryError` naming the source.
    """
    # A cursor's rows: all tuples (named tuples included), seen from one set of types.
    if (
        items
        and isinstance(items[0], tuple)
        and all(issubclass(kind, tuple) for kind in set(map(type, items)))
    ):
        return RowBatch.of(items, source)
    # An Entry (the common item) is taken as it is, without a call.
    return [item if type(item) is Entry else _coerced(item, source) for item in items]


def _coerced(item: object, source: str) -> Entry:
    # Any other item: a URL string, an Entry subclass or a row.
    if isinstance(item, str):
        try:
            return Entry(item)
        except InvalidEntryError as exc:
            raise exc.with_source(source) from None
    if isinstance(item, Entry):
        return item
    if isinstance(item, tuple):
        return entry_from_row(item, source)
    raise InvalidEntryError(
        "item",
        item,
        "a source must yield Entry objects, URL strings or (loc, lastmod,"
        " changefreq, priority) tuples",
        source,
    )


class UrlSource:
    """A named source of entries with counting and range access.

    Build one with :meth:`from_object`; the fronts do this for every registered source.
    """

    def __init__(
        self,
        name: str,
        count: Callable[[], int],
        entries: Callable[[int, int], Iterable[Item]],
        *,
        fingerprint: RangeFact | None = None,
        newest: RangeFact | None = None,
        limits: Limits | None = None,
        recent: Callable[[int], Iterable[Item] | None] | None = None,
        pages: Callable[[int, int], Iterable[Page]] | None = None,
        summary: Callable[[], Summary] | None = None,
    ) -> None:
        self.name = name
        self._count = count
        self._entries = entries
        self._fingerprint = fingerprint
        self._newest = newest
        self._recent = recent
        self._pages = pages
        self._summary = summary
        self.limits = limits or Limits(stable=pages is not None)

    @classmethod
    def from_object(
        cls,
        name: str,
        obj: Any,
        count: Callable[[], int] | None = None,
        *,
        fingerprint: Callable[..., Any] | None = None,
        newest: Callable[..., Any] | None = None,
        page_size: int | None = None,
        max_entry_bytes: int | None = None,
        news: bool = False,
        recent: Callable[[int], Iterable[Item] | None] | None = None,
    ) -> UrlSource:
        """Adapt a sliceable object or a callable returning an iterable.

        ``fingerprint`` and ``newest`` (or methods of those names on a sliceable) make
        caching cheap; see :meth:`fingerprint` and :meth:`newest`. Each takes no
        argument (the whole source) or ``(start, stop)`` (one page). ``recent`` (or a
        ``recent`` method) lists the source's most recent changes for the feed; see
        :meth:`recent`.

        Raises :class:`ConfigurationError` at registration time for anything else
        (notably a generator *object*, which could be iterated only once).
        """
        check_name(name)
        if count is not None and not callable(count):
            raise ConfigurationError(f"count= of source {name!r} must be a callable")
        stable = stable_pages(name, obj)
        facts: dict[str, Any] = {
            "fingerprint": range_fact(name, "fingerprint", fingerprint, obj),
            "newest": range_fact(name, "newest", newest, obj),
            "limits": Limits(page_size, max_entry_bytes, news, stable is not None),
            "recent": recent_lister(name, recent, obj),
        }
        counter, entries = _reading(name, obj, stable is not None)
        summary = getattr(obj, "stable_summary", None) if stable is not None else None
        return cls(name, count or counter, entries, pages=stable, summary=summary, **facts)

    def count(self) -> int:
        """Return how many entries the source holds now."""
        with naming(self.name):  # an entry built while walking to count
            return checked_count(self._count(), self.name)

    def fingerprint(self, start: int, stop: int) -> object | None:
        """A cheap value that changes whenever the entries in ``[start, stop)`` change.

        Best: a version number that triggers bump on every insert, update and delete
        (exact, and one tiny query). ``MAX(updated_at)`` with ``COUNT(*)`` is enough only
        while edits always move ``updated_at`` forward and rows are not replaced.
        It becomes part of the ETag and of the cache key, so validators and cached
        pages cost no rendering. None: the source has none (documents are then
        rendered to compute their validators, and never cached).
        """
        if self._fingerprint is None:
            return None
        value = self._fingerprint(start, stop)
        # A news section's pages change as articles age out, without a write.
        return (value, news_epoch()) if self.limits.news and value is not None else value

    def newest(self, start: int, stop: int) -> str | None:
        """The newest ``lastmod`` in ``[start, stop)`` from a cheap query, normalised;
        None when the source cannot tell. Feeds Last-Modified and the index's lastmods.
        """
        if self._newest is None:
            return None
        value = self._newest(start, stop)
        return None if value is None else normalise_lastmod(value)

    def pages(self, first: int, stop: int) -> list[Page]:
        """The source's stable pages numbered ``[first, stop)`` that list entries, in
        order: one small query of the facts its database keeps (see
        :mod:`sitemap_core.sources.pages`). Only for a source with ``limits.stable``;
        for a few pages (the index streams them: :meth:`stream`)."""
        return checked_pages(self._stable(first, stop), self.name, first, stop)

    def stream(self, first: int, stop: int) -> Iterator[Page]:
        """As :meth:`pages`, as an iterator that reads and checks the pages as they
        are pulled (close it when done early)."""
        return streamed_pages(self._stable(first, stop), self.name, first, stop)

    def summary(self, first: int = 1, stop: int = WHOLE) -> Summary:
        """The :class:`~sitemap_core.sources.pages.Summary` of the stable pages numbered
        ``[first, stop)``: of all of them, the source's own ``stable_summary()`` (one
        aggregate query) when it has one, else one walk of the pages."""
        if self._summary is not None and (first, stop) == (1, WHOLE):
            return checked_summary(self._summary(), self.name)
        pages = self.stream(first, stop)
        try:
            return summarised(pages)
        finally:
            close_now(pages)

    def _stable(self, first: int, stop: int) -> Iterable[Page]:
        if self._pages is None:
            raise ConfigurationError(f"source {self.name!r} has no stable pages")
        return self._pages(first, stop)

    def recent(self, limit: int, since: datetime | None = None) -> list[Recent]:
        """The source's ``limit`` most recently changed dated entries (changed after
        ``since``), newest first, for the feed of recent changes.

        From the source's own ``recent(limit)`` when it has one (which returns at most
        ``limit`` items, newest first, validated here as any entry is, or None when it
        cannot tell); otherwise from one walk of all its entries keeping the newest (see
        :class:`~sitemap_core.model.recent.NewestEntries`).
        """
        listed = None if self._recent is None else self._recent(limit)
        if listed is not None:
            return newest_listed(listed, limit, since, self.name)
        kept = NewestEntries(limit, since)
        # One walk to the end, without counting first (a count of a plain generator
        # is a walk of its own).
        for batch in self.batches(0, WHOLE):
            kept.add(batch)
        return kept.newest_first()

    def entries(self, start: int, stop: int) -> Iterator[Item]:
        """Return an iterator over the items in ``[start, stop)``."""
        return iter(self._entries(start, stop))

    def batches(
        self, start: int, stop: int, size: int = 256, then: int | None = None
    ) -> Iterator[list[Entry]]:
        """Yield the entries of ``[start, stop)`` as validated lists of at most ``size``
        (``then``, if given, after the first list).

        Yields no more than ``stop - start`` entries even if the source gives more.
        """
        iterator = islice(self.entries(start, stop), stop - start)
        step = size
        while batch := list(islice(iterator, step)):
            yield coerce_batch(batch, self.name)
            step = then or size


#: A per-range fact of a source: ``fact(start, stop)``.
RangeFact = Callable[[int, int], Any]


def recent_lister(
    name: str, given: Callable[[int], Iterable[Item] | None] | None, obj: object
) -> Callable[[int], Iterable[Item] | None] | None:
    """``recent=`` if given, else the object's own ``recent`` method, else None."""
    if given is not None:
        if not callable(given):
            raise ConfigurationError(f"recent= of source {name!r} must be a callable")
        return given
    method = getattr(obj, "recent", None)
    return method if callable(method) and not inspect.isclass(obj) else None


def _reading(
    name: str, obj: Any, stable: bool
) -> tuple[Callable[[], int], Callable[[int, int], Iterable[Item]]]:
    """How a source object is counted and read: a source with stable pages reads a
    page's window, a sliceable is sliced, a callable's iterable is walked."""
    if stable:
        return lambda: len(obj), obj.stable_items
    if isinstance(obj, Sliceable) and not isinstance(obj, str | bytes):
        sliceable = obj
        return lambda: len(sliceable), lambda start, stop: sliceable[start:stop]
    if isinstance(obj, Iterator):
        raise ConfigurationError(
            f"source {name!r} is an iterator, which can be read only once; "
            "pass the generator function (or a list) instead of calling it"
        )
    if not callable(obj):
        raise ConfigurationError(
            f"source {name!r} must be a callable returning an iterable, or a sized "
            f"sliceable object; got {type(obj).__name__}"
        )
    factory: Callable[[], Iterable[Item]] = obj
    return lambda: walk_count(factory()), lambda start, stop: _skip_slice(factory(), start, stop)


def stable_pages(name: str, obj: object) -> Callable[[int, int], Iterable[Page]] | None:
    """The object's ``stable_pages`` method when it has stable pages, else None.

    Such an object also needs ``stable_items(start, stop)`` and ``len()``: refused at
    registration (:class:`ConfigurationError`) without them.
    """
    method = getattr(obj, "stable_pages", None)
    if method is None or inspect.isclass(obj):
        return None
    if not (callable(method) and callable(getattr(obj, "stable_items", None))):
        raise ConfigurationError(
            f"source {name!r} has stable_pages but no stable_items(start, stop) to read"
            " a page's items"
        )
    if not isinstance(obj, Sized):
        raise ConfigurationError(f"source {name!r} has stable pages but no len()")
    pages: Callable[[int, int], Iterable[Page]] = method
    return pages


def checked_summary(summary: object, source: str) -> Summary:
    """A source's ``stable_summary()`` answer, checked, its lastmod normalised."""
    if not (isinstance(summary, Summary) and all(map(_whole, summary[:2] + summary[3:]))):
        raise ConfigurationError(f"stable_summary() of source {source!r} gave {summary!r}")
    lastmod = summary.lastmod
    return summary if lastmod is None else summary._replace(lastmod=normalise_lastmod(lastmod))


def _whole(value: object) -> bool:
    # A whole number (not a bool).
    return type(value) is int and value >= 0


def range_fact(
    name: str, kind: str, given: Callable[..., Any] | None, obj: Any
) -> RangeFact | None:
    """Adapt ``fingerprint`` / ``newest``: given, or a method of ``obj``; 0 or 2 args."""
    func = given if given is not None else getattr(obj, kind, None)
    if func is None:
        return None
    if not callable(func):
        raise ConfigurationError(f"{kind}= of source {name!r} must be a callable")
    try:
        arity = len(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        arity = 2
    if arity == 0:
        whole: Callable[[], Any] = func
        return lambda start, stop: whole()
    if arity != 2:
        raise ConfigurationError(
            f"{kind} of source {name!r} must take no argument or (start, stop)"
        )
    return func


def walk_count(items: Iterable[Any]) -> int:
    """How many items there are: ``len()`` when sized, else by walking them."""
    if isinstance(items, Sized):
        return len(items)
    return sum(1 for _ in items)


def _skip_slice(items: Iterable[Item], start: int, stop: int) -> Iterable[Item]:
    if isinstance(items, Sliceable):
        return items[start:stop]
    return islice(items, start, stop)


def recent_changes(
    sources: Iterable[UrlSource], limit: int, since: datetime | None = None
) -> list[Recent]:
    """The ``limit`` most recent changes across ``sources``, newest first, each URL
    once (see :meth:`UrlSource.recent`): what the feed lists and IndexNow submits."""
    return merge_recent([source.recent(limit, since) for source in sources], limit)


def newest_listed(
    listed: Iterable[Item], limit: int, since: datetime | None, source: str
) -> list[Recent]:
    """A source's own ``recent(limit)`` answer: at most ``limit`` items, validated as
    any entry is, those changed after ``since``, newest first."""
    kept = NewestEntries(limit, since)
    kept.add(coerce_batch(list(islice(iter(listed), limit)), source))
    return kept.newest_first()


def named(error: InvalidEntryError, source: str) -> InvalidEntryError:
    """``error`` naming ``source``: an ``Entry`` built in the source's own code could not
    say where it came from."""
    return error if error.source is not None else error.with_source(source)


@contextmanager
def naming(source: str) -> Iterator[None]:
    """Raise an :class:`InvalidEntryError` from inside the block :func:`named` ``source``."""
    try:
        yield
    except InvalidEntryError as exc:
        raise named(exc, source) from exc


def checked_count(total: object, source: str) -> int:
    """``total``, a source's count, if it is a whole number; else the error saying so."""
    if isinstance(total, bool) or not isinstance(total, int) or total < 0:
        raise ConfigurationError(
            f"count of source {source!r} returned {total!r}, not a whole number"
        )
    return total
