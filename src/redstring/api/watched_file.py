"""`WatchedFile`: what a credential file holds, read again whenever its `stat` changes.

The credential files (API keys, a JWKS) are checked on each request and read
again only when their signature differs from the one last read, so a change
takes effect at once without a restart, and costs one `stat` otherwise.
`read_regular_file` reads one without waiting on whatever else is at its path.
"""

from __future__ import annotations

import logging
import os
import stat
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

# Reading without waiting (a FIFO waits for a writer), without taking a terminal for the
# process, not inherited, byte for byte: each flag where the platform has it.
_READ_FLAGS = os.O_RDONLY | sum(
    getattr(os, name, 0) for name in ("O_NONBLOCK", "O_NOCTTY", "O_CLOEXEC", "O_BINARY")
)


def read_regular_file(path: Path) -> bytes | None:
    """What the regular file at `path` (links followed) holds; None when something else is
    there (a FIFO, a device, a folder), which is not read; `OSError` when it cannot be
    opened or read.

    It is looked at before it is opened (opening a FIFO wakes a writer waiting at its
    other end, opening a device may act on it), then opened without blocking and
    checked again (`fstat`) before any read: a FIFO opened to read waits for a writer,
    and would hang a command or a server's request.
    """
    if not stat.S_ISREG(os.stat(path).st_mode):
        return None
    descriptor = os.open(path, _READ_FLAGS)
    try:
        # Before `open`, which refuses a folder in words of its own.
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        with open(descriptor, "rb", closefd=False) as file:
            return file.read()
    finally:
        os.close(descriptor)


def file_signature(path: Path) -> Signature:
    """The signature of the file at `path`, or None when it is missing or unreadable."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return FileSignature(
        inode=status.st_ino,
        device=status.st_dev,
        size=status.st_size,
        mtime_ns=status.st_mtime_ns,
        ctime_ns=status.st_ctime_ns,
        mode=status.st_mode,
        owner=status.st_uid,
        group=status.st_gid,
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
