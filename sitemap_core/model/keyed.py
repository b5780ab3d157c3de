"""Equality and hashing by a key: the frame of the entry and of its extensions.

A value that is its fields compares and hashes by the tuple of them; written once here
rather than as the same three methods in each class.
"""

from __future__ import annotations

__all__ = ["Keyed"]


class Keyed:
    """Equal when the :meth:`_key` tuples are, between instances of one class."""

    __slots__ = ()

    def _key(self) -> tuple[object, ...]:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())
