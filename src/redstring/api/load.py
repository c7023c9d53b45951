"""`load_jsonl`: the lines of a JSONL file (see `redstring.api.jsonl`) streamed into the stores.

The batching, the all-or-nothing check of each batch, the deferral of
relationships and the write order are `redstring.composition.ingest`'s;
this module only turns bytes into numbered records and counts the bytes
read, so a progress bar can be sized by the file and advanced by the lines
written. A gzip file (or input) is read through `gzip`, as it streams, and
counted by its compressed bytes: the file's size is that of the bytes on disk.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO

from redstring.api.jsonl import numbered_records
from redstring.composition.client import Redstring
from redstring.composition.ingest import (
    DEFAULT_INGEST_BATCH_SIZE,
    IngestReport,
    InvalidLine,
    ingest,
)
from redstring.domain.ids import TenantId

GZIP_MAGIC = b"\x1f\x8b"  # the first two bytes of a gzip stream; no JSON text starts so
_READ_STEP = 16_384


class _CountedReads:
    """A binary file's `read`, counting the bytes read (`count`): a gzip reader's input."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        # In steps of at most 16 KiB (gzip asks for 128): a compressed byte may stand for
        # twenty of text, and the share read advances by the bytes read.
        data = self._file.read(size if size < 0 else min(size, _READ_STEP))
        self.count += len(data)
        return data

    def seek(self, offset: int, /) -> int:
        """Refused: the lines are read once, in order (a gzip reader seeks to rewind)."""
        raise io.UnsupportedOperation("the input is read once, in order")


def _decompressed(lines: Iterable[bytes]) -> Iterator[bytes]:
    """`lines` of a gzip file, a fault of its data said as an `OSError` (as a read error
    is): `zlib` raises its own error for a corrupt block, `gzip` `EOFError` for a stream
    cut short."""
    try:
        yield from lines
    except EOFError:
        raise OSError(
            "the gzip input ends before its end marker (a file cut short, or still being written?)"
        ) from None
    except zlib.error as exc:
        raise OSError(f"the gzip input is corrupt: {exc}") from None


class CountedLines:
    """The lines of a binary file, counting the bytes handed out so far (`bytes_read`) and
    the bytes up to the end of each line (`bytes_through`), the line numbers being those
    `numbered_records` gives; and how many lines were handed out (`lines_read`).

    It keeps one number per line handed out since the line last asked about: asked
    after each batch is written, that is the lines read ahead of the written ones.
    Given `position`, the bytes counted are what it answers after each line (the
    compressed bytes read, for a gzip file's lines) rather than the lines' own.
    """

    def __init__(self, lines: Iterable[bytes], position: Callable[[], int] | None = None) -> None:
        self._lines = lines
        self._position = position
        self.bytes_read = 0
        self.lines_read = 0
        self._ends: deque[int] = deque()  # bytes up to the end of lines _first, _first + 1, ...
        self._first = 1

    @classmethod
    def of_file(cls, file: BinaryIO) -> CountedLines:
        """The lines of `file`, decompressed when it starts as gzip data does (whatever
        its name; standard input too), and then counted by the compressed bytes read."""
        head = file.peek(2)[:2] if isinstance(file, io.BufferedReader) else b""
        if head != GZIP_MAGIC:
            return cls(file)
        reads = _CountedReads(file)
        unzipped = gzip.GzipFile(fileobj=reads, mode="rb")
        return cls(_decompressed(unzipped), position=lambda: reads.count)

    def __iter__(self) -> Iterator[bytes]:
        ends, position = self._ends, self._position
        for line in self._lines:
            self.bytes_read = self.bytes_read + len(line) if position is None else position()
            self.lines_read += 1
            ends.append(self.bytes_read)
            yield line

    def bytes_through(self, line_number: int) -> int:
        """The bytes of lines 1 to `line_number` (0 for 0), a line already handed out.

        The lines before it are forgotten: a later call asks for it or a later line.
        """
        if line_number < 1:
            return 0
        if not self._first <= line_number < self._first + len(self._ends):
            raise ValueError(
                f"line {line_number} is not among the lines read and not forgotten "
                f"({self._first} to {self._first + len(self._ends) - 1})"
            )
        for _ in range(line_number - self._first):
            self._ends.popleft()
        self._first = line_number
        return self._ends[0]


async def load_jsonl(
    lines: Iterable[bytes],
    tenant_id: TenantId,
    services: Redstring,
    *,
    batch_size: int = DEFAULT_INGEST_BATCH_SIZE,
    skip_invalid: bool = False,
    on_invalid: Callable[[InvalidLine], None] = lambda line: None,
    on_batch: Callable[[IngestReport], None] = lambda report: None,
    on_writing: Callable[[], None] = lambda: None,
) -> IngestReport:
    """Load JSONL `lines` (bytes, as a file opened `rb` yields them) into `tenant_id`.

    See `redstring.composition.ingest.ingest` for what is written when, and
    what the callbacks hear.
    """
    return await ingest(
        numbered_records(lines, tenant_id),
        services,
        batch_size=batch_size,
        skip_invalid=skip_invalid,
        on_invalid=on_invalid,
        on_batch=on_batch,
        on_writing=on_writing,
    )
