"""The object store a build publishes to: the four operations it needs, and obstore's.

:class:`Store` is what the publishing needs of a store: list the keys under the prefix
with their ETags, read one small object (the manifest), write one object with its
headers, delete keys. :func:`open_store` gives obstore's store for a
:class:`~sitemap_commands.publish.target.StoreURL`, configured as the stores' own tools
are: from the environment (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION``, ``AWS_PROFILE`` ...; ``GOOGLE_*``;
``AZURE_STORAGE_*``).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from sitemap_commands.build import BuildError
from sitemap_commands.publish.target import StoreURL

__all__ = ["Store", "open_store"]


class Store(Protocol):
    """The operations of an object store a build uses; keys are under its prefix."""

    def listing(self) -> dict[str, str | None]:
        """Every key under the prefix, with its ETag (unquoted; None if the store
        gives none)."""
        ...

    def read(self, key: str) -> bytes | None:
        """The bytes of ``key``, or None when there is no such object."""
        ...

    def write(self, key: str, source: Path | bytes, attributes: Mapping[str, str]) -> str | None:
        """Store ``source`` (a file or bytes) at ``key`` in one atomic put, with
        ``attributes`` (Content-Type, Cache-Control, and user metadata); its ETag,
        spelt as :meth:`listing` spells it."""
        ...

    def delete(self, keys: Sequence[str]) -> None:
        """Remove ``keys`` (a key already gone is no error)."""
        ...


def _etag(value: str | None) -> str | None:
    # One spelling of an ETag: Azure quotes it in a put's answer but not in a listing.
    return None if value is None else value.strip().removeprefix("W/").strip('"')


def _short(exc: BaseException) -> str:
    # obstore's messages carry a multi-line debug dump after the first paragraph.
    return str(exc).split("\n\n", 1)[0].strip() or type(exc).__name__


class _Obstore:
    """A :class:`Store` over an obstore store; every failure is a BuildError."""

    def __init__(self, url: StoreURL) -> None:
        # Imported here: obstore is the optional `storage` extra (target.py has
        # checked that it is installed, and says which extra otherwise).
        self._obstore: Any = importlib.import_module("obstore")
        stores = importlib.import_module("obstore.store")
        self.url = url
        try:
            # Everything else (credentials, region, endpoint) from the environment.
            # An http:// endpoint is one the user wrote (a local MinIO, an emulator),
            # and the stores' own tools honour it: obstore refuses it unless told.
            self._store = stores.from_url(str(url), client_options={"allow_http": True})
        except Exception as exc:
            raise BuildError(f"cannot open {url}: {_short(exc)}") from exc

    def listing(self) -> dict[str, str | None]:
        found: dict[str, str | None] = {}
        try:
            for batch in self._obstore.list(self._store, chunk_size=1000):
                found.update((meta["path"], _etag(meta["e_tag"])) for meta in batch)
        except Exception as exc:
            raise BuildError(f"cannot list {self.url}: {_short(exc)}") from exc
        return found

    def read(self, key: str) -> bytes | None:
        try:
            return bytes(self._obstore.get(self._store, key).bytes())
        except FileNotFoundError:
            return None
        except Exception as exc:
            raise BuildError(f"cannot read {self.url}/{key}: {_short(exc)}") from exc

    def write(self, key: str, source: Path | bytes, attributes: Mapping[str, str]) -> str | None:
        try:
            done = self._obstore.put(self._store, key, source, attributes=dict(attributes))
        except Exception as exc:
            raise BuildError(f"cannot upload {self.url}/{key}: {_short(exc)}") from exc
        return _etag(done["e_tag"])

    def delete(self, keys: Sequence[str]) -> None:
        if not keys:
            return
        try:
            self._obstore.delete(self._store, list(keys))
        except Exception as exc:
            raise BuildError(f"cannot delete from {self.url}: {_short(exc)}") from exc


def open_store(url: StoreURL) -> Store:
    """obstore's store for ``url``, configured from the environment."""
    return _Obstore(url)
