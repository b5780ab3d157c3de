"""LeastRecent: the bounded memory the page cache and the remembered renders share."""

from __future__ import annotations

import threading

from sitemap_core.memory.lru import LeastRecent


def test_the_least_recently_used_go_first() -> None:
    memory: LeastRecent[str] = LeastRecent(2)
    memory.put("a", "1")
    memory.put("b", "2")
    assert memory.get("a") == "1"  # now b is the least recent
    memory.put("c", "3")
    assert (memory.get("a"), memory.get("b"), memory.get("c")) == ("1", None, "3")
    assert len(memory) == 2


def test_a_weight_bounds_what_is_held() -> None:
    memory: LeastRecent[bytes] = LeastRecent(10, len)
    memory.put("a", b"12345")
    memory.put("b", b"1234")
    assert memory.held == 9
    memory.put("a", b"1")  # replaced: its old weight is given back
    assert memory.held == 5
    memory.put("c", b"1234567")
    assert memory.get("b") is None and memory.held == 8


def test_update_sees_and_replaces_in_one_step() -> None:
    memory: LeastRecent[int] = LeastRecent(100)
    memory.update("n", lambda before: None)
    assert memory.get("n") is None and len(memory) == 0

    def add() -> None:
        for _ in range(500):
            memory.update("n", lambda before: (before or 0) + 1)

    threads = [threading.Thread(target=add) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert memory.get("n") == 2000
