"""The input of `redstring load`: a file, a named FIFO or standard input, read in a
thread that may be left blocked in a read when the load ends first (Ctrl-C, SIGTERM, a
store failure) while the input stays open and idle.

Such a read holds the lock of the buffered reader it runs in. Closing that reader waits
for the lock, so for as long as the writer keeps the input open; and for
`sys.stdin.buffer`, which the interpreter flushes at exit, the wait at shutdown aborts
the process (`Fatal Python error: _enter_buffered_busy`, status 134). So the input is
read from a reader of its own (over a duplicate of stdin's descriptor for stdin), whose raw
reads wait on the input and on a wake-up pipe together: closing it wakes the read under
way first (it then reads as the input's end), so the lock is released and the thread
runs out.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import select
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

STDIN_PATH = "-"  # `redstring load -` reads its standard input
_BUFFER_SIZE = 65_536  # one wait on the input per 64 KiB read, not per 8 KiB


class _WakeableReads(io.RawIOBase):
    """The reads of descriptor `fd` (owned: closed with it), each waiting until the
    input has bytes or `wake` was called, after which every read is the input's end."""

    def __init__(self, fd: int, name: str) -> None:
        self._fd = fd
        self.name = name
        self._wake_read, self._wake_write = os.pipe()
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)
        self._poll.register(self._wake_read, select.POLLIN)

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        while True:
            ready = {fd for fd, _ in self._poll.poll()}
            if self._wake_read in ready:
                return 0
            if ready:  # the input: bytes, its end, or an error the read raises
                break
        into = memoryview(buffer).cast("B")
        data = os.read(self._fd, len(into))
        into[: len(data)] = data
        return len(data)

    def wake(self) -> None:
        """End the read under way, and every later one, as the input's end."""
        with contextlib.suppress(OSError):  # woken already: the pipe holds a byte
            os.write(self._wake_write, b"\0")

    def close(self) -> None:
        if not self.closed:
            super().close()
            for fd in (self._fd, self._wake_read, self._wake_write):
                os.close(fd)


def open_input(path: Path) -> contextlib.AbstractContextManager[BinaryIO]:
    """`path` (standard input for `-`) opened now to read bytes, buffered (`peek` and
    lines work), as a context that closes it on leaving, a read still under way in
    another thread woken first. Raises `OSError` when it cannot be opened (a path that
    does not exist or is a directory, stdin closed)."""
    if str(path) == STDIN_PATH:
        if sys.stdin is None:  # descriptor 0 was closed when Python started
            raise OSError(errno.EBADF, "standard input is closed")
        # A duplicate: the process's own stdin is left open and untouched.
        fd, name = os.dup(sys.stdin.fileno()), "<stdin>"
    else:
        fd, name = os.open(path, os.O_RDONLY | os.O_CLOEXEC), str(path)
    try:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
        reads = _WakeableReads(fd, name)
    except BaseException:
        os.close(fd)
        raise
    return _closing(io.BufferedReader(reads, buffer_size=_BUFFER_SIZE), reads)


@contextlib.contextmanager
def _closing(file: io.BufferedReader, reads: _WakeableReads) -> Iterator[BinaryIO]:
    try:
        yield file
    finally:
        reads.wake()  # else `close` would wait for the read under way
        file.close()
