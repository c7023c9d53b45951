"""`WatchedFile`: what a credential file holds, read again whenever its `stat` changes.

The credential files (API keys, a JWKS) are checked on each request and read
again only when their signature differs from the one last read, so a change
takes effect at once without a restart, and costs one `stat` otherwise.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from redstring.domain.errors import InvalidInputError

logger = logging.getLogger("redstring.api")

T = TypeVar("T")

# A signature: inode, device, size, modification time (ns) and mode; None when the
# file cannot be stat'ed. A replaced file (`os.replace`) has a new inode.
Signature = tuple[int, int, int, int, int] | None


def file_signature(path: Path) -> Signature:
    """The signature of the file at `path`, or None when it is missing or unreadable."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_ino, stat.st_dev, stat.st_size, stat.st_mtime_ns, stat.st_mode)


class WatchedFile(Generic[T]):
    """The content `read` makes of the file at `path`, read at once (its
    `InvalidInputError` raised) and again by `current` whenever the file changed.

    A file that disappears or stops reading gives `empty` (logged at ERROR with
    `refusal`) until it is fixed: keeping what was read before would keep a
    credential removed from the file working. `on_read` sees each content read
    and the file's signature.
    """

    def __init__(
        self,
        path: Path,
        read: Callable[[Path], T],
        *,
        empty: T,
        refusal: str,
        on_read: Callable[[T, Signature], None] | None = None,
    ) -> None:
        self.path = path
        self._read, self._empty, self._refusal, self._on_read = read, empty, refusal, on_read
        self._content = empty
        self._seen: Signature | tuple[()] = ()  # () matches no file, present or not
        self._load(refuse=True)

    def current(self) -> T:
        """The file's content as it is now (`empty` while it cannot be read)."""
        self._load()
        return self._content

    def _load(self, *, refuse: bool = False) -> None:
        signature = file_signature(self.path)
        if signature == self._seen:
            return
        self._seen = signature
        try:
            content = self._read(self.path)
        except InvalidInputError as exc:
            if refuse:
                raise
            self._content = self._empty
            logger.error("%s: %s", self._refusal, exc)
            return
        self._content = content
        if self._on_read is not None:
            self._on_read(content, signature)
