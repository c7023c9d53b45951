"""`load_jsonl`: the lines of a JSONL file (see `redstring.api.jsonl`) streamed into the stores.

The batching, the all-or-nothing check of each batch, the deferral of
relationships and the write order are `redstring.composition.ingest`'s;
this module only turns bytes into numbered records and counts the bytes
read, so a progress bar can be sized by the file and advanced by the lines
written.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator

from redstring.api.jsonl import numbered_records
from redstring.composition.client import Redstring
from redstring.composition.ingest import (
    DEFAULT_INGEST_BATCH_SIZE,
    IngestReport,
    InvalidLine,
    ingest,
)
from redstring.domain.ids import TenantId


class CountedLines:
    """The lines of a binary file, counting the bytes handed out so far (`bytes_read`) and
    the bytes up to the end of each line (`bytes_through`), the line numbers being those
    `numbered_records` gives.

    It keeps one number per line handed out since the line last asked about: asked
    after each batch is written, that is the lines read ahead of the written ones.
    """

    def __init__(self, lines: Iterable[bytes]) -> None:
        self._lines = lines
        self.bytes_read = 0
        self._ends: deque[int] = deque()  # bytes up to the end of lines _first, _first + 1, ...
        self._first = 1

    def __iter__(self) -> Iterator[bytes]:
        ends = self._ends
        for line in self._lines:
            self.bytes_read += len(line)
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
