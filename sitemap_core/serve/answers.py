"""The validators of documents, remembered while their sources' fingerprints hold.

A 304 is what a sitemap server answers most: crawlers revalidate far more often than a
site changes. Once every source of a document has a fingerprint, everything its
validators depend on (counts, the plan, each range's fingerprint and newest lastmod) is
remembered under the sources' whole-source fingerprints already (see
:mod:`sitemap_core.memory.known`); working the plan and the ETag out again from those facts on
every request cost more than the rest of a 304 together. So the outcome, the headers
of the document and its validators, is kept under the request's document (target, base
URL, coding, protocol) and those fingerprints: while they hold, a 304, a HEAD or a
cached 200 costs the fingerprints and one dictionary lookup.

The newest lastmod is kept as it is, not as the Last-Modified sent: that is clamped to
the time of each request (a future lastmod must not make a future Last-Modified).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sitemap_core.serve.validators import Validators, not_modified_headers

__all__ = ["Answer", "Answers"]

#: Documents remembered per site: a site of 200 child pages in two codings and three
#: formats asks for about 1,200; past the bound the memo starts again.
_MAX_ANSWERS = 4_096


@dataclass(frozen=True, slots=True)
class Answer:
    """What a document's requests have in common while its sources are unchanged."""

    #: The headers of the document's 200 but the validators and the length.
    headers: Sequence[tuple[str, str]]
    etag: str
    #: The newest lastmod of the document as an instant, not yet clamped to now.
    newest: datetime | None
    #: The document's key in the page cache.
    cache_key: str | None
    #: The headers of its 304 (see :func:`~sitemap_core.serve.validators.not_modified_headers`),
    #: made once.
    not_modified: tuple[tuple[str, str], ...] = field(init=False)
    #: Its ETag and Last-Modified headers while ``newest`` is not in the future (then
    #: Last-Modified is clamped to each request's time): formatting an HTTP date cost
    #: a cached 200 more than the rest of its headers.
    validator_headers: tuple[tuple[str, str], ...] = field(init=False)

    def __post_init__(self) -> None:
        validators = Validators(self.etag, self.newest)
        object.__setattr__(
            self, "not_modified", tuple(not_modified_headers(validators, self.headers))
        )
        object.__setattr__(self, "validator_headers", tuple(validators.headers()))


class Answers:
    """A site's remembered :class:`Answer` s, by document and source fingerprints."""

    def __init__(self) -> None:
        self._answers: dict[Hashable, Answer] = {}
        self._lock = threading.Lock()

    @staticmethod
    def key(
        document: tuple[object, ...], sources: Sequence[str], whole: Mapping[str, object]
    ) -> Hashable | None:
        """The key of ``document`` with the whole-source fingerprints in ``whole``.

        None when a source has no fingerprint (nothing proves it unchanged): such
        documents are worked out each time. Fingerprints are keyed by type as well as
        value, as ETags encode them (1 and 1.0 name one version to Python's equality,
        not to a fingerprint); see :func:`_typed`.
        """
        fingerprints = []
        for name in sources:
            value = whole.get(name)
            if value is None:
                return None
            fingerprints.append(value)
        return (document, _typed(tuple(fingerprints)))

    def get(self, key: Hashable) -> Answer | None:
        """The answer remembered under ``key``, or None."""
        return self._answers.get(key)

    def put(self, key: Hashable, answer: Answer) -> None:
        """Remember ``answer`` under ``key``."""
        with self._lock:
            if len(self._answers) >= _MAX_ANSWERS:
                self._answers.clear()  # a plain bound: the working set refills at once
            self._answers[key] = answer


def _typed(value: object) -> object:
    # A hashable key equal only for values stable_bytes encodes alike (the ETag's
    # encoding). Python's equality is looser: 1 == 1.0 == True, 0.0 == -0.0,
    # Decimal("1.0") == Decimal("1"), and two datetimes at different offsets naming one
    # instant; so the type is part of the key, and any value but these exact types is
    # keyed by its repr (which also makes an unhashable value, a list, a key).
    kind = type(value)
    if kind is tuple or kind is list:
        return (kind, tuple(_typed(item) for item in value))  # type: ignore[attr-defined]
    if value is None or kind is str or kind is bytes or kind is int or kind is bool:
        return (kind, value)
    return (kind, repr(value))
