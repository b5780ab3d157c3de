"""Keyed: equality and hashing by the key tuple, between instances of one class."""

from __future__ import annotations

from sitemap_core.model.keyed import Keyed


class _Pair(Keyed):
    __slots__ = ("a", "b")

    def __init__(self, a: int, b: int) -> None:
        self.a, self.b = a, b

    def _key(self) -> tuple[object, ...]:
        return (self.a, self.b)


class _Other(Keyed):
    __slots__ = ("a", "b")

    def __init__(self, a: int, b: int) -> None:
        self.a, self.b = a, b

    def _key(self) -> tuple[object, ...]:
        return (self.a, self.b)


def test_equal_keys_are_equal_and_hash_alike() -> None:
    assert _Pair(1, 2) == _Pair(1, 2)
    assert hash(_Pair(1, 2)) == hash(_Pair(1, 2))
    assert _Pair(1, 2) != _Pair(2, 1)


def test_another_class_with_the_same_key_is_not_equal() -> None:
    assert _Pair(1, 2) != _Other(1, 2)
    assert _Pair(1, 2) != (1, 2)
