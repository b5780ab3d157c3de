"""What a publishing build uploads, keeps and deletes, and in which order.

Each document of the local build becomes an :class:`Item`: its key, its file, the
headers the store is to serve it with, and a digest of both. Against the last build's
records and the store's listing, :func:`make_plan` sorts the items into those to
upload (new or changed) and those to keep, and names the keys to delete.

The order is what makes a publication safe for a crawler reading it meanwhile, in
stages: the pages (child sitemaps, text pages, the feed, the key file), then the
index's further parts, then ``sitemap.xml`` (which names them), then robots.txt or
its lines: an index is never published before a page it names. Deletion comes after
all of them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sitemap_commands.build import ROBOTS_LINES, BuildError, BuildResult, Built
from sitemap_commands.publish.manifest import KEY, Record
from sitemap_core.serve.document import GZIP_TYPE

__all__ = ["PAGES", "PARTS", "ROBOTS", "ROOT", "Item", "Plan", "items_of", "make_plan"]

#: The stages of a publication, in order (:attr:`Item.stage`).
PAGES, PARTS, ROOT, ROBOTS = 0, 1, 2, 3

# Letters only: Azure takes metadata names that are C# identifiers (no "-").
_METADATA_DIGEST = "sitemapdigest"


@dataclass(frozen=True)
class Item:
    """One object to publish."""

    key: str
    file: Path
    #: Content-Type, Cache-Control, and the digest as user metadata.
    attributes: Mapping[str, str]
    digest: str
    stage: int
    size: int
    urls: int = 0


@dataclass
class Plan:
    """The items to upload (in publishing order), those kept, the keys to delete."""

    upload: list[Item] = field(default_factory=list)
    keep: list[Item] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)


def _stage(name: str) -> int:
    if name in ("robots.txt", ROBOTS_LINES):
        return ROBOTS
    plain = name.removesuffix(".gz")
    if plain == "sitemap.xml":
        return ROOT
    return PARTS if plain.startswith("sitemap-index-") else PAGES


def _order(item: Item) -> tuple[int, str, bool]:
    # By stage; by name within one (a twin just before its document).
    return (item.stage, item.key.removesuffix(".gz"), not item.key.endswith(".gz"))


def _digest(file: Path, attributes: Mapping[str, str]) -> str:
    # Of the bytes and the headers: a new Cache-Control publishes again, as it must.
    digest = hashlib.sha256()
    with file.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    for name, value in sorted(attributes.items()):
        digest.update(f"\n{name}: {value}".encode())
    return digest.hexdigest()


def _item(key: str, file: Path, content_type: str, cache_control: str, doc: Built) -> Item:
    attributes = {"Content-Type": content_type, "Cache-Control": cache_control}
    digest = _digest(file, attributes)
    attributes[_METADATA_DIGEST] = digest  # readable by anyone's tools, for the record
    urls = doc.urls if file.suffix != ".gz" else 0  # each URL counted once
    return Item(key, file, attributes, digest, _stage(key), file.stat().st_size, urls)


def items_of(result: BuildResult, cache_control: str) -> list[Item]:
    """An item per file of ``result`` (its ``.gz`` twins included).

    Each object is served as the app serves its path: the document's Content-Type;
    a ``.gz`` twin as ``application/gzip`` without Content-Encoding, since the app
    serves ``<path>.gz`` as a gzip file, not as a coding of the document (a client
    then saves the gzip file it asked for, as it would from the app).
    """
    items = []
    for doc in result.documents:
        if doc.content_type is None:
            raise BuildError(f"the app served {doc.path} without a Content-Type")
        file = result.out_dir / doc.name
        items.append(_item(doc.name, file, doc.content_type, cache_control, doc))
        if doc.gzipped:
            twin = file.with_name(doc.name + ".gz")
            items.append(_item(twin.name, twin, GZIP_TYPE, cache_control, doc))
    return items


def make_plan(
    items: list[Item], records: Mapping[str, Record], listing: Mapping[str, str | None]
) -> Plan:
    """Sort ``items`` against the last build's ``records`` and the store's ``listing``.

    An item is kept when its digest is the one recorded and the store still holds the
    object recorded (same ETag); otherwise it is uploaded. A recorded key that no
    item has any more is deleted, if it is still in the store.
    """
    plan = Plan()
    for item in sorted(items, key=_order):
        record = records.get(item.key)
        unchanged = (
            record is not None
            and record.digest == item.digest
            and record.etag is not None
            and listing.get(item.key) == record.etag
        )
        (plan.keep if unchanged else plan.upload).append(item)
    names = {item.key for item in items}
    plan.delete = sorted(key for key in records if key not in names and key in listing)
    assert KEY not in names  # the manifest is written apart, never planned
    return plan
