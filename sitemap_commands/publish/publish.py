"""``sitemap build APP s3://bucket/prefix``: a build published to an object store.

The documents are built as for a folder (:func:`~sitemap_commands.build.build`, with
its progress, its jobs and its checks), into a temporary folder; then they are
published:

* **Nothing before the build is complete.** A source failing halfway, or Ctrl-C,
  stops the build before the first upload: the store is as it was.
* **Pages, then the index, then robots.txt** (see :mod:`~.plan`): a crawler never
  reads an index naming a page not yet there. Each object is one atomic put.
* **Incremental.** An object whose bytes and headers are those the last build
  published, and that the store still holds (same ETag), is not uploaded again: the
  manifest (:mod:`~.manifest`) records both.
* **Deleted last.** Pages the site no longer has are deleted once the new index is in
  place; only keys a build of ours published are ever deleted.
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from sitemap_commands.build import BuildError, BuildResult, Built, Progress, build
from sitemap_commands.build_robots import RobotsVerdict
from sitemap_commands.publish.manifest import KEY, Record, read_records, records_bytes
from sitemap_commands.publish.plan import Plan, items_of, make_plan
from sitemap_commands.publish.store import Store, open_store
from sitemap_commands.publish.target import StoreURL
from sitemap_commands.publish.upload import Uploader

if TYPE_CHECKING:
    from sitemap_commands.cli import Served

__all__ = ["PartialPublishError", "PublishInterrupted", "PublishResult", "publish"]

_MANIFEST_ATTRIBUTES = {"Content-Type": "application/json", "Cache-Control": "no-store"}


class PartialPublishError(BuildError):
    """The store failed during the uploads: some objects may be new, some old."""


class PublishInterrupted(KeyboardInterrupt):
    """Ctrl-C during the uploads: some objects may be new, some old."""


@dataclass
class PublishResult:
    """What a publishing build uploaded, kept and deleted (or would, in a dry run)."""

    target: str
    uploaded: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    urls: int = 0
    size: int = 0
    seconds: float = 0.0
    dry_run: bool = False
    #: The app's robots.txt tested against the URLs listed (as for a folder build).
    robots: RobotsVerdict | None = None

    @property
    def files(self) -> int:
        """Objects of the site (the manifest aside)."""
        return len(self.uploaded) + len(self.kept)

    def summary(self) -> str:
        """One line: objects uploaded, kept and deleted, URLs, bytes, time."""
        if self.dry_run:
            counts = (
                f"{len(self.uploaded):,} to upload, {len(self.kept):,} unchanged,"
                f" {len(self.deleted):,} to delete"
            )
            return f"sitemap build (dry run): {self.files:,} files ({counts}) -> {self.target}"
        counts = (
            f"{len(self.uploaded):,} uploaded, {len(self.kept):,} kept,"
            f" {len(self.deleted):,} deleted"
        )
        return (
            f"sitemap build: {self.files:,} files ({counts}), {self.urls:,} URLs,"
            f" {self.size:,} bytes in {self.seconds:.1f} s -> {self.target}"
        )


@dataclass
class _Rendered(BuildResult):
    # The local half of the build, summed up as such (its folder is temporary).
    target: str = ""

    def summary(self) -> str:
        return (
            f"sitemap build: {len(self.documents):,} documents rendered, {self.urls:,} URLs,"
            f" {self.size:,} bytes in {self.seconds:.1f} s; publishing to {self.target}"
        )


class _Rendering:
    # The build's progress, shown as for a folder, ending on the rendering's summary.
    def __init__(self, inner: Progress, target: str) -> None:
        self.inner = inner
        self.target = target

    def start(self, total: int) -> None:
        self.inner.start(total)

    def advance(self, built: Built) -> None:
        self.inner.advance(built)

    def finish(self, result: BuildResult) -> None:
        done = _Rendered(
            out_dir=result.out_dir, documents=result.documents, seconds=result.seconds,
            target=self.target,
        )  # fmt: skip
        self.inner.finish(done)


def publish(
    served: Served,
    target: StoreURL,
    *,
    gzip: bool = False,
    jobs: int = 1,
    cache_control: str | None = None,
    dry_run: bool = False,
    progress: Progress,
    out: IO[str] | None = None,
    store: Store | None = None,
) -> PublishResult:
    """Build ``served`` and publish it to ``target``; what was uploaded, kept, deleted.

    ``cache_control`` is the Cache-Control of every object; None gives the app's own
    (its ``cache_control`` setting, ``SITEMAP_CACHE_CONTROL``). ``dry_run`` builds and
    compares, lists what would change on ``out``, and writes nothing to the store.
    Raises :class:`~sitemap_commands.build.BuildError` (the store untouched), or
    :class:`PartialPublishError` when the store failed during the uploads
    (:class:`PublishInterrupted` for Ctrl-C then).
    """
    out = out or sys.stdout
    began = time.monotonic()
    store = store or open_store(target)
    # Read first: a wrong bucket or credentials fail before anything is rendered.
    records = read_records(store)
    listing = store.listing()
    base = served.base.url
    with tempfile.TemporaryDirectory(prefix="sitemap-build-") as staging:
        built = build(
            served, Path(staging) / "site", gzip=gzip, jobs=jobs,
            progress=_Rendering(progress, str(target)),
        )  # fmt: skip
        assert served.site is not None  # build() refuses a front without a site
        items = items_of(built, cache_control or served.site.cache_control)
        plan = make_plan(items, records, listing)
        result = PublishResult(
            str(target), [i.key for i in plan.upload], [i.key for i in plan.keep],
            list(plan.delete), built.urls, built.size, dry_run=dry_run, robots=built.robots,
        )  # fmt: skip
        if dry_run:
            _list(plan, records, out)
        else:
            _apply(store, plan, records, base, out)
    result.seconds = time.monotonic() - began
    print(result.summary(), file=out, flush=True)
    return result


def _list(plan: Plan, records: dict[str, Record], out: IO[str]) -> None:
    for item in plan.upload:
        why = "changed" if item.key in records else "new"
        print(f"would upload {item.key} ({why}, {item.size:,} bytes)", file=out)
    for key in plan.delete:
        print(f"would delete {key}", file=out)


def _apply(store: Store, plan: Plan, records: dict[str, Record], base: str, out: IO[str]) -> None:
    # Upload in the plan's order, delete, then record what the store now holds.
    current = {item.key: records[item.key] for item in plan.keep}
    new = {item.key: Record(None, None) for item in plan.upload if item.key not in records}
    uploads = Uploader(store, out)
    try:
        if new:
            # Owned before they exist: a build stopped midway leaves no key that the
            # next one would not know to delete.
            store.write(KEY, records_bytes(base, {**records, **new}), _MANIFEST_ATTRIBUTES)
        uploads.run(plan.upload)
        current.update((item.key, Record(item.digest, etag)) for item, etag in uploads.done)
        store.delete(plan.delete)
        for key in plan.delete:
            print(f"deleted {key}", file=out, flush=True)
        if current != records:
            # Unwritten when nothing changed: an unchanged site leaves the store as it was.
            store.write(KEY, records_bytes(base, current), _MANIFEST_ATTRIBUTES)
    except BuildError as exc:
        raise PartialPublishError(f"{exc} ({_so_far(uploads, plan)})") from exc
    except KeyboardInterrupt as exc:
        raise PublishInterrupted(f"interrupted ({_so_far(uploads, plan)})") from exc


def _so_far(uploads: Uploader, plan: Plan) -> str:
    # What a publication stopped midway leaves, for the command's message.
    return (
        f"after {len(uploads.done)} of {len(plan.upload)} uploads; pages go first and the"
        " index last, so the published index names only pages that exist; the next"
        " build completes the publication"
    )
