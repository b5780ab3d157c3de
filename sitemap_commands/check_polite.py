"""Fetching a sample of a site's URLs politely (``sitemap check --sample``).

At most ``concurrency`` requests are in flight, and each host is asked at most
``rate`` times a second, or less often when its robots.txt asks for a
``Crawl-delay``: a request waits for its host's next free slot, whatever thread
sends it. A progress bar is drawn on a terminal (tqdm, when installed).
"""

from __future__ import annotations

import http.client
import importlib
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any

from sitemap_commands.check_page import Issue, inspect

__all__ = ["HostPacer", "fetch_all", "progress_bar"]


class HostPacer:
    """The next free slot of each host: at most one request per ``interval(host)``."""

    def __init__(self, interval: Callable[[str], float]) -> None:
        self._interval = interval
        self._next: dict[str, float] = {}
        self._lock = threading.Lock()

    def wait(self, host: str) -> None:
        """Block until ``host`` may be asked again, and take that slot."""
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next.get(host, now))
            self._next[host] = slot + self._interval(host)
        if slot > now:
            time.sleep(slot - now)


def progress_bar(total: int, out: IO[str]) -> Any:
    """A tqdm bar of ``total`` URLs on ``out`` when it is a terminal and tqdm is
    installed; else None (logs and pipes get no bar)."""
    if not out.isatty():
        return None
    try:
        tqdm = importlib.import_module("tqdm").tqdm
    except ImportError:
        return None
    # shutil's size: a fresh pseudo-terminal reports 0x0, where tqdm would draw nothing.
    size = shutil.get_terminal_size()
    return tqdm(
        total=total, unit="URL", file=out, desc="sitemap check --sample",
        ncols=size.columns, nrows=size.lines,
    )  # fmt: skip


def _inspected(url: str, timeout: float) -> list[Issue]:
    try:
        return inspect(url, timeout)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        return [("url-fetch", url, f"could not be fetched: {exc}")]


def fetch_all(
    urls: Iterable[tuple[str, str]],
    *,
    pacer: HostPacer,
    host_of: Callable[[str], str],
    concurrency: int,
    timeout: float,
    bar: Any = None,
) -> Iterator[tuple[str, list[Issue]]]:
    """Each ``(url, key)`` fetched, paced by host: ``(key, issues)``, in the given order."""

    def one(item: tuple[str, str]) -> tuple[str, list[Issue]]:
        url, key = item
        pacer.wait(host_of(url))
        return key, _inspected(url, timeout)

    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="sample") as pool:
        pending = list(urls)
        # A bounded window of submissions: --sample 0 on a big site queues no million
        # futures at once.
        window = max(concurrency * 8, 1)
        for start in range(0, len(pending), window):
            for result in pool.map(one, pending[start : start + window]):
                if bar is not None:
                    bar.update(1)
                yield result
    if bar is not None:
        bar.close()
