"""Immutable values: the base of the extension values (images, videos, news, alternates).

Each value validates and renders itself once, in ``__init__``, through
``object.__setattr__``; afterwards every assignment is refused, so the fragment it
rendered can never disagree with its fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["Frozen"]


class Frozen:
    """A ``__slots__`` value whose attributes cannot change once it is built."""

    __slots__ = ()

    if not TYPE_CHECKING:
        # Hidden from type checkers: a visible __setattr__ would make them accept
        # assignment to any attribute name, misspelt ones included.

        def __setattr__(self, name: str, value: object) -> None:
            raise AttributeError(f"{type(self).__name__} is immutable")

        def __delattr__(self, name: str) -> None:
            raise AttributeError(f"{type(self).__name__} is immutable")

    def __setstate__(self, state: tuple[None, dict[str, Any]] | None) -> None:
        # pickle and copy restore slots through setattr, which is refused above.
        slots = {} if state is None else state[1]
        for name, value in slots.items():
            object.__setattr__(self, name, value)

    def __copy__(self) -> Frozen:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Frozen:
        return self
