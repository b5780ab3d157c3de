"""Which kind of place ``sitemap build`` writes to: a folder, or an object store's URL.

``TARGET`` is a folder unless it starts like a URL (``scheme:/``, a scheme of two
letters or more, so a Windows drive ``C:/`` stays a folder). A URL names an object
store the build publishes to (``s3://bucket/prefix``, ``gs://bucket/prefix``,
``az://container/prefix``), through the optional ``storage`` extra. Any other scheme,
or a store URL without the extra installed, is an error saying what to do: never a
local folder named ``s3:``.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass

from sitemap_commands.build import BuildError

__all__ = ["EXTRA", "SCHEMES", "StoreURL", "store_url"]

#: The store URL schemes a build publishes to, each with the store it names.
SCHEMES = {"s3": "Amazon S3 (or an S3-compatible store)", "gs": "Google Cloud Storage",
           "az": "Azure Blob Storage"}  # fmt: skip
#: The extra that brings the storage library (obstore).
EXTRA = 'pip install "dynamic-sitemaps[storage]"'

# Two letters or more before the colon: "C:/site" is a Windows folder, not a URL.
# One slash is enough to be refused: "s3:/bucket" is a mistyped URL, not a folder.
_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+):/")
_ALLOWED = ", ".join(f"{scheme}://" for scheme in SCHEMES)


@dataclass(frozen=True)
class StoreURL:
    """An object store's URL: the bucket (or container) and the prefix under it."""

    scheme: str
    bucket: str
    #: The keys' common prefix, without slashes around it ("" for the bucket's root).
    prefix: str

    def __str__(self) -> str:
        tail = f"/{self.prefix}" if self.prefix else ""
        return f"{self.scheme}://{self.bucket}{tail}"


def store_url(target: str) -> StoreURL | None:
    """The store ``target`` names, or None when it is a folder.

    Raises :class:`~sitemap_commands.build.BuildError` for a URL the build cannot
    write: a scheme it does not know, a store URL without a bucket, or a store URL
    while the storage library is not installed (the message names the extra).
    """
    match = _URL.match(target)
    if match is None:
        return None
    scheme = match.group(1).lower()
    if scheme not in SCHEMES:
        raise BuildError(
            f"cannot write to {target!r}: TARGET is a folder or an object store URL"
            f" ({_ALLOWED}), not {scheme}://"
        )
    rest = target[match.end() :]
    if not rest.startswith("/"):
        raise BuildError(f"{target!r} is not a store URL: write {scheme}://bucket/prefix")
    bucket, _, prefix = rest[1:].partition("/")
    if not bucket:
        raise BuildError(f"{target!r} names no bucket: write {scheme}://bucket/prefix")
    if importlib.util.find_spec("obstore") is None:
        raise BuildError(
            f"publishing to {scheme}:// ({SCHEMES[scheme]}) needs the storage library: {EXTRA}"
        )
    return StoreURL(scheme, bucket, prefix.strip("/"))
