"""The IndexNow key a site serves: checked, made once, and served as its key file.

IndexNow (https://www.indexnow.org/documentation) proves that a site owns its URLs by
a key (8 to 128 characters of ``a-z A-Z 0-9 -``) served as a UTF-8 text file whose
body is the key: at ``/<key>.txt`` (:func:`key_file_path`, :func:`key_file_body`), or
at a ``keyLocation`` URL on the same host, which then covers only the URLs under its
folder. :func:`check_key` checks a configured key; :func:`load_or_create_key` makes
one once and keeps it in a file the user names.

This is the half of the protocol that serving needs (the settings read the key, the
site routes its file, the flow answers it). Submitting URLs is a command's work and
lives with the commands (``sitemap_commands.indexnow``), never on the serving path.
Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import tempfile
from pathlib import Path
from typing import Final

from sitemap_core.errors import ConfigurationError, shorten

__all__ = [
    "KEY_FILE_CONTENT_TYPE",
    "MAX_KEY_LENGTH",
    "MIN_KEY_LENGTH",
    "InvalidKeyError",
    "check_key",
    "generate_key",
    "key_file_body",
    "key_file_path",
    "load_or_create_key",
    "write_temporary",
]

#: How the key file is served.
KEY_FILE_CONTENT_TYPE: Final = "text/plain; charset=utf-8"

#: Shortest and longest key the protocol allows.
MIN_KEY_LENGTH: Final = 8
MAX_KEY_LENGTH: Final = 128

_KEY = re.compile(r"[a-zA-Z0-9-]+")
_KEY_ACCEPTED = (
    f"{MIN_KEY_LENGTH} to {MAX_KEY_LENGTH} characters of a-z, A-Z, 0-9 and '-'"
    " (generate_key() makes one)"
)


class InvalidKeyError(ConfigurationError):
    """An IndexNow key does not match the protocol's schema.

    ``setting`` names where the key came from (a setting, a file), ``value`` is the
    rejected key and ``reason`` what is wrong with it.
    """

    def __init__(self, setting: str, value: object, reason: str) -> None:
        self.setting = setting
        self.value = value
        self.reason = reason
        super().__init__(f"{setting}={shorten(value)} {reason}; accepted: {_KEY_ACCEPTED}")


def check_key(value: object, setting: str = "indexnow_key") -> str:
    """Return ``value`` if it is a valid IndexNow key, else raise :class:`InvalidKeyError`
    naming ``setting`` and what is wrong."""
    if not isinstance(value, str):
        raise InvalidKeyError(setting, value, f"is a {type(value).__name__}, not a str")
    if value != value.strip():
        # Refused, not stripped: the key file must hold exactly the key, so a key with
        # a stray newline would be served and compared as something else.
        raise InvalidKeyError(setting, value, "has white space around it")
    if len(value) < MIN_KEY_LENGTH:
        raise InvalidKeyError(setting, value, f"is {len(value)} characters long (too short)")
    if len(value) > MAX_KEY_LENGTH:
        raise InvalidKeyError(setting, value, f"is {len(value)} characters long (too long)")
    if not _KEY.fullmatch(value):
        bad = next(c for c in value if not _KEY.fullmatch(c))
        raise InvalidKeyError(setting, value, f"holds the character {bad!r}")
    return value


def generate_key() -> str:
    """A new random key: 32 hexadecimal characters (128 bits from :mod:`secrets`)."""
    # The key is public once served; what matters is that nobody else can have guessed
    # it beforehand to claim the host, hence a CSPRNG rather than random.
    return secrets.token_hex(16)


def key_file_path(key: str) -> str:
    """The path at which the site serves its key file: ``/<key>.txt``."""
    return f"/{check_key(key, 'key')}.txt"


def key_file_body(key: str) -> bytes:
    """The key file's body: the key, in UTF-8, and nothing else (no newline: engines
    compare the body with the key). Serve it as :data:`KEY_FILE_CONTENT_TYPE`."""
    return check_key(key, "key").encode("utf-8")


def load_or_create_key(path: str | os.PathLike[str]) -> str:
    """The key kept in the file at ``path``; on the first call, a new one stored there.

    Later runs (and every worker, every machine sharing the file) read the same key, so
    the key file the site serves stays valid. The file is created whole or not at all:
    two processes starting at once both end up with the one key that was written
    first. A file holding something that is not a key raises :class:`InvalidKeyError`
    naming the file; surrounding white space (an editor's final newline) is allowed.
    """
    target = Path(path)
    stored = _read_key(target)
    if stored is not None:
        return stored
    key = generate_key()
    temporary = write_temporary(target, key + "\n")
    try:
        # link() fails if the name exists, where replace() would overwrite a key that
        # another process has just created and perhaps already served.
        os.link(temporary, target)
    except FileExistsError:
        pass
    finally:
        os.unlink(temporary)
    stored = _read_key(target)
    if stored is None:  # pragma: no cover - removed between link() and the read
        raise ConfigurationError(f"the IndexNow key file {os.fspath(target)!r} vanished")
    return stored


def _read_key(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(
            f"the IndexNow key file {os.fspath(path)!r} cannot be read: {exc}"
        ) from None
    return check_key(text.strip(), f"key file {os.fspath(path)!r}")


def write_temporary(target: Path, text: str) -> str:
    """``text`` in a new file beside ``target`` (same file system: a rename is atomic),
    flushed to disk; its name."""
    descriptor, name = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or None
    )
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise
    return name
