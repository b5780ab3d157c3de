"""Uploading a plan: stage after stage, the objects of one stage at once.

The stages (:mod:`~.plan`) are what keeps a crawler safe: a stage starts only once the
one before it is complete, so the index is never put before a page it names. Inside a
stage the objects do not depend on each other, and a store answers each put after a
round trip: :data:`UPLOADS_AT_ONCE` puts run together, in threads (obstore releases
the GIL while it waits).
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from itertools import groupby
from typing import IO

from sitemap_commands.publish.plan import Item
from sitemap_commands.publish.store import Store

__all__ = ["UPLOADS_AT_ONCE", "Uploader"]

#: Puts in flight at once within a stage.
UPLOADS_AT_ONCE = 8


@dataclass
class Uploader:
    """Uploads items to ``store``, saying each on ``out``; :attr:`done` holds each
    uploaded item with the ETag the store gave it, as they complete."""

    store: Store
    out: IO[str]
    done: list[tuple[Item, str | None]] = field(default_factory=list)

    def run(self, items: list[Item]) -> None:
        """Upload ``items`` (in the plan's order) stage by stage; the first failure
        stops the upload (puts already in flight end first) and is raised."""
        for _, stage in groupby(items, key=lambda item: item.stage):
            self._stage(list(stage))

    def _stage(self, items: list[Item]) -> None:
        with ThreadPoolExecutor(max_workers=min(UPLOADS_AT_ONCE, len(items))) as pool:
            futures: dict[Future[str | None], Item] = {
                pool.submit(self.store.write, item.key, item.file, item.attributes): item
                for item in items
            }
            try:
                for future in as_completed(futures):
                    item = futures[future]
                    self.done.append((item, future.result()))
                    print(f"uploaded {item.key} ({item.size:,} bytes)", file=self.out, flush=True)
            except BaseException:
                for pending in futures:
                    pending.cancel()
                raise
