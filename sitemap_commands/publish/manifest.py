"""The record a publishing build keeps in the store, beside the documents.

Under the target's prefix, :data:`~sitemap_commands.build.MANIFEST` holds, for every
object a build published, the digest of what was published (bytes and headers) and
the ETag the store gave it. It says two things to the next build:

* **what is unchanged**: an object whose digest is the same, and whose ETag in the
  store is still the one recorded (nobody replaced it since), is not uploaded again;
* **what is ours**: only keys recorded here are ever deleted, so a build never removes
  an object it did not publish, whatever else shares the prefix.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sitemap_commands.publish.store import Store

__all__ = ["KEY", "Record", "read_records", "records_bytes"]

#: The manifest's key under the prefix (the folder build's name, for the same idea).
KEY = ".sitemap-build.json"

_VERSION = 1


@dataclass(frozen=True)
class Record:
    """One published object: the digest of its bytes and headers, and its ETag."""

    digest: str | None
    etag: str | None


def read_records(store: Store) -> dict[str, Record]:
    """The objects the last build recorded; none when there is no readable manifest
    (then every document is uploaded and nothing is deleted)."""
    data = store.read(KEY)
    if data is None:
        return {}
    try:
        parsed: Any = json.loads(data)
    except ValueError:
        return {}
    if not isinstance(parsed, dict) or parsed.get("version") != _VERSION:
        return {}
    objects = parsed.get("objects")
    if not isinstance(objects, dict):
        return {}
    return {
        key: Record(_text(value.get("digest")), _text(value.get("etag")))
        for key, value in objects.items()
        if isinstance(key, str) and isinstance(value, dict)
    }


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def records_bytes(base: str, records: Mapping[str, Record]) -> bytes:
    """The manifest holding ``records``, for the build of ``base``."""
    objects = {key: {"digest": r.digest, "etag": r.etag} for key, r in sorted(records.items())}
    data = {"version": _VERSION, "base": base, "objects": objects}
    return (json.dumps(data, indent=1, sort_keys=True) + "\n").encode("utf-8")
