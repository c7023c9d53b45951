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
from typing import Generic, NamedTuple, TypeVar

from redstring.domain.errors import InvalidInputError

logger = logging.getLogger("redstring.api")

T = TypeVar("T")


class FileSignature(NamedTuple):
    """What tells one state of a file from another without reading it. A replaced file
    (`os.replace`) has a new inode; a file edited in place within one tick of a coarse
    modification time, to the same size, differs by its change time (every write and
    `utime` moves it, and no user call sets it back)."""

    inode: int
    device: int
    size: int
    mtime_ns: int
    ctime_ns: int
    mode: int
    owner: int
    group: int


# None when the file cannot be stat'ed.
Signature = FileSignature | None


def file_signature(path: Path) -> Signature:
    """The signature of the file at `path`, or None when it is missing or unreadable."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return FileSignature(
        inode=stat.st_ino,
        device=stat.st_dev,
        size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
        ctime_ns=stat.st_ctime_ns,
        mode=stat.st_mode,
        owner=stat.st_uid,
        group=stat.st_gid,
    )


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
