"""`load_jsonl`: the lines of a JSONL file (see `redstring.api.jsonl`) streamed into the stores.

The batching, the all-or-nothing check of each batch, the deferral of
relationships and the write order are `redstring.composition.ingest`'s;
this module only turns bytes into numbered records and counts the bytes
read, so a progress bar can be sized by the file.
"""

from __future__ import annotations

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
    """The lines of a binary file, counting the bytes handed out so far."""

    def __init__(self, lines: Iterable[bytes]) -> None:
        self._lines = lines
        self.bytes_read = 0

    def __iter__(self) -> Iterator[bytes]:
        for line in self._lines:
            self.bytes_read += len(line)
            yield line


async def load_jsonl(
    lines: Iterable[bytes],
    tenant_id: TenantId,
    services: Redstring,
    *,
    batch_size: int = DEFAULT_INGEST_BATCH_SIZE,
    skip_invalid: bool = False,
    on_invalid: Callable[[InvalidLine], None] = lambda line: None,
    on_batch: Callable[[IngestReport], None] = lambda report: None,
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
    )
