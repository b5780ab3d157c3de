"""What several benchmark scripts measure alike: one call's wall time and peak memory.

Imported by the scripts of this folder (``python benchmarks/bench_x.py`` puts it first
on ``sys.path``). Each collects garbage first, so that no contender pays for what the
one before it left behind.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Callable


def timed(func: Callable[[], object]) -> float:
    """Wall seconds of one call of ``func``."""
    gc.collect()
    started = time.perf_counter()
    func()
    return time.perf_counter() - started


def peak_memory(func: Callable[[], object]) -> int:
    """Peak bytes allocated by one call of ``func``, measured with tracemalloc."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        func()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - base
