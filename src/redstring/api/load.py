"""`load_file`: a JSONL file (see `redstring.api.jsonl`) into the configured stores.

The whole file is checked before anything is written, so a malformed line
writes nothing and every bad line is reported at once. Entities are written
before relationships, so a relationship may name an entity from a later line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from redstring.api.jsonl import LineError, Record, parse_line
from redstring.composition import writes
from redstring.composition.build_graph import DEFAULT_BATCH_SIZE
from redstring.composition.services import Services
from redstring.domain.entity import Entity
from redstring.domain.errors import MissingEndpointError
from redstring.domain.ids import TenantId
from redstring.domain.relationship import Relationship

Advance = Callable[[int], None]


@dataclass
class LoadReport:
    """What a load did: records written, or the lines that stopped it."""

    entities: int = 0
    relationships: int = 0
    errors: list[LineError] = field(default_factory=list)


@dataclass
class ParsedFile:
    """Every record of a file with the line it came from, and every bad line."""

    entities: list[tuple[int, Entity]] = field(default_factory=list)
    relationships: list[tuple[int, Relationship]] = field(default_factory=list)
    errors: list[LineError] = field(default_factory=list)

    @property
    def records(self) -> int:
        return len(self.entities) + len(self.relationships)


def parse_lines(lines: Iterable[str], tenant_id: TenantId) -> ParsedFile:
    """Parse numbered lines (from 1), collecting bad lines instead of stopping at the first."""
    parsed = ParsedFile()
    for number, text in enumerate(lines, start=1):
        try:
            record: Record | None = parse_line(text, number, tenant_id)
        except LineError as exc:
            parsed.errors.append(exc)
            continue
        if isinstance(record, Entity):
            parsed.entities.append((number, record))
        elif isinstance(record, Relationship):
            parsed.relationships.append((number, record))
    return parsed


def _missing_endpoint_errors(
    error: MissingEndpointError, batch: list[tuple[int, Relationship]]
) -> list[LineError]:
    missing = set(error.missing)
    return [
        LineError(number, f"relationship endpoint not found in this tenant: {end}")
        for number, rel in batch
        for end in (str(rel.source_entity_id), str(rel.target_entity_id))
        if end in missing
    ]


async def load_parsed(
    parsed: ParsedFile,
    services: Services,
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    advance: Advance = lambda n: None,
) -> LoadReport:
    """Write a parsed file in batches, calling `advance(n)` after each batch of `n` records.

    A relationship batch naming a missing entity is not written and its lines
    are reported; the batches before it stay written (running the load again
    after fixing the file finishes it, since every write is idempotent).
    """
    if parsed.errors:
        return LoadReport(errors=list(parsed.errors))
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    report = LoadReport()
    for start in range(0, len(parsed.entities), batch_size):
        entity_batch = [e for _, e in parsed.entities[start : start + batch_size]]
        await writes.upsert_entities(services, entity_batch, batch_size=batch_size)
        report.entities += len(entity_batch)
        advance(len(entity_batch))
    for start in range(0, len(parsed.relationships), batch_size):
        batch = parsed.relationships[start : start + batch_size]
        try:
            await writes.upsert_relationships(services, [r for _, r in batch])
        except MissingEndpointError as exc:
            report.errors.extend(_missing_endpoint_errors(exc, batch))
            return report
        report.relationships += len(batch)
        advance(len(batch))
    return report


def read_file(path: Path, tenant_id: TenantId) -> ParsedFile:
    """Parse the JSONL file at `path` (UTF-8)."""
    with path.open(encoding="utf-8") as lines:
        return parse_lines(lines, tenant_id)
