"""The C heap given back when a crowd of sitemap responses has left (issue 22).

A crowd of slow readers grows an asyncio server's C heap: each connection's transport
holds what its reader has not taken yet (up to the server's high-water mark, some 64
KiB, plus the chunk on its way), and the crowd's renders, gzip codings and tasks come
and go among those buffers. glibc gives back only the free memory at the top of its
heap, so once the crowd has left, any block still in use above the freed buffers keeps
megabytes of free memory resident: a plain ASGI app sending the same bytes from memory
keeps them too (``benchmarks/README.md``, "Memory after the readers leave").

:class:`Crowd` counts the sitemap responses in flight. When the last response of a
crowd ends (at least :data:`CROWD` were in flight at once since the heap was last given
back), nothing of what this middleware served the crowd is held any more, and glibc is
asked to return its free pages to the system (``malloc_trim``). That moment is known,
not guessed: it is the middleware's own count falling to zero. Without glibc (musl,
macOS, Windows) nothing is done.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

__all__ = ["CROWD", "Crowd", "malloc_trim"]

#: Sitemap responses in flight at once that make a crowd worth giving the heap back after.
CROWD = 32


def malloc_trim() -> Callable[[], object] | None:
    """glibc's ``malloc_trim(0)``: every free page of every arena back to the system;
    None where the C library has no such call."""
    try:
        libc = ctypes.CDLL(None)
    except (OSError, TypeError):  # TypeError: Windows has no handle for the process
        return None
    trim = getattr(libc, "malloc_trim", None)
    if trim is None:
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: trim(0)


class Crowd:
    """Sitemap responses in flight, and the heap given back when a crowd of them ends.

    Counted in the event loop's thread only (one middleware, one loop).
    """

    def __init__(self, trim: Callable[[], object] | None = None, crowd: int = CROWD) -> None:
        self._trim = trim
        self._crowd = crowd
        #: Responses in flight now.
        self.open = 0
        #: The most in flight at once since the heap was last given back.
        self.peak = 0
        #: How many times the heap was given back.
        self.trims = 0

    def enter(self) -> None:
        """A sitemap response begins."""
        self.open += 1
        self.peak = max(self.peak, self.open)

    def leave(self) -> None:
        """A sitemap response ended (sent, cut or failed); the last of a crowd gives
        the heap back."""
        self.open -= 1
        if self.open == 0 and self.peak >= self._crowd:
            self.peak = 0
            self.trims += 1
            if self._trim is not None:
                self._trim()
