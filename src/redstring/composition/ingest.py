"""`ingest`: a stream of numbered records into the stores, batch by batch, never half a batch.

The input is consumed lazily, one batch at a time. Each batch is checked
whole before anything of it is written: an invalid line stops the load
before its batch (earlier batches stay written), or, with `skip_invalid`,
is reported and passed over. An entity whose text the embedding provider
refuses alone (`EntityTextRefusedError`) is an invalid line too, found as its
batch is embedded; passed over, the rest of the batch keeps the vectors that
call made. A batch's entities are embedded first
(`embed_documents`, so a provider failure writes nothing of the batch), but
for those whose stored vector is already the one their text embeds to
(`outdated`: a file loaded again costs no embedding of what it holds),
then the vectors of another text those had are deleted (`delete_replaced`:
renamed entities alone cost it), then the entities are written to the graph
store, and only then are their vectors written, beside the batch's
relationships (the two touch different nodes, and a remote store runs them
on two cores): a failure between the two stores leaves entities without
vectors (found lexically, repaired by running again), never a vector without
its entity nor one of an entity's old text, the order `build_graph` keeps too.
Both embed and write vectors through `EntityVectors`: an entity whose text
embeds to a vector without direction gets none, and loses the one it had as a
renamed entity does, before its entity is written. Both then read each batch back,
embed again what another writer of the same entities made differ, and delete the
vectors of entities deleted between the two writes (`settle`).

Batches overlap by one stage: while a batch's vectors and relationships are
written, the next batch is read, checked, embedded and its entities written.
Entities are still written in input order, and vectors too. Whatever fails,
the batch before is left to finish its writes (a Ctrl-C too), so the
batches a report counts as written are written whole; when those writes fail
too, one of the two errors is raised and names the other in a note.

A relationship whose end is not in the graph store yet (an entity of a
later batch, or none) waits for the end of the input and is then written
or reported, by the name the input gave the end when it comes as a
`NamedRelationship` (else by the end's id). Memory is one batch plus those waiting relationships, which
are the only records kept past their batch: a file whose relationships
follow their entities loads in constant memory whatever its length.

Every write is an idempotent upsert by id, so running the same input again
finishes an interrupted load and otherwise changes nothing.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import NamedTuple
from uuid import UUID

from redstring.composition.client import Redstring
from redstring.composition.concurrency import (
    concurrently,
    in_daemon_thread,
    note_failure_of,
    nothing,
    while_finishing,
)
from redstring.composition.embed_again import settle
from redstring.composition.entity_vectors import (
    EntityKey,
    EntityVectors,
    delete_replaced,
    embed_entities,
    keys_of,
    outdated,
)
from redstring.domain.arguments import positive_count_of
from redstring.domain.entity import Entity
from redstring.domain.errors import EntityTextRefusedError, MissingEndpointError
from redstring.domain.ids import EntityId, RelationshipId
from redstring.domain.relationship import Relationship

DEFAULT_INGEST_BATCH_SIZE = 1000
WAITING_LISTED = 10  # the deferred relationships a report names, of those it counts


@dataclass(frozen=True)
class InvalidLine:
    """A line that cannot be loaded: its number (from 1) and what is wrong with it; for an
    entity's line that names one, the id its entity would have had (`entity_id`), so that
    a relationship to it can say where its end went."""

    line_number: int
    reason: str
    entity_id: EntityId | None = None


EndName = tuple[str, str]  # an entity's (name, type), as the input wrote them


class NamedRelationship(NamedTuple):
    """A relationship with how its input named its ends, for the message about an end
    found neither in the input nor in the tenant.

    `source` and `target` are the `(name, type)` the input gave an end, or None
    when it gave the id (the message then shows the id). Plain strings, and
    formatted only for that message: a tuple of them costs a load next to
    nothing, where keeping the parsed line's objects alive made the collector's
    work grow with every batch.
    """

    relationship: Relationship
    source: EndName | None = None
    target: EndName | None = None


LoadRecord = Entity | Relationship | NamedRelationship  # what one line of input loads
NumberedLine = tuple[int, LoadRecord | InvalidLine]  # a line's number (from 1) and its record
NumberedRelationship = tuple[int, NamedRelationship]


@dataclass
class IngestReport:
    """What a load did.

    `entities` and `relationships` count the records written (a record given
    twice counts twice). `skipped` counts invalid lines passed over with
    `skip_invalid`; `invalid` those that were not, so a load with
    `invalid > 0` is incomplete. `deferred` counts relationships that had to
    wait for the end of the input. `batches` counts the batches written
    whole, and `last_line` is the number of the last line of the last of
    them (0 before the first): every line up to it is written, but for the
    deferred relationships that still wait. `waiting` counts those, and
    `first_waiting` holds the first `WAITING_LISTED` of them (line number
    and relationship, in line order), so that a load that ends before they
    are written can name them; both are 0 and empty once the load has
    written or reported every deferred relationship. `stopped_at_line` is
    the first line of the batch that an invalid line kept from being
    written (None when the load reached the end); `deferred_dropped` counts
    the deferred relationships that stop left unwritten (`waiting` then,
    named by `first_waiting`). `vectors_kept` counts the entities not embedded
    because their stored vector was already the one their text embeds to.
    """

    entities: int = 0
    relationships: int = 0
    skipped: int = 0
    invalid: int = 0
    deferred: int = 0
    stopped_at_line: int | None = None
    deferred_dropped: int = 0
    batches: int = 0
    last_line: int = 0
    waiting: int = 0
    first_waiting: tuple[NumberedRelationship, ...] = ()
    vectors_kept: int = 0

    @property
    def records(self) -> int:
        return self.entities + self.relationships


def _named(record: Relationship | NamedRelationship) -> NamedRelationship:
    return record if isinstance(record, NamedRelationship) else NamedRelationship(record)


def _end(entity_id: EntityId, name: EndName | None) -> str:
    """An end as the input named it: `"Acme Corp" (company)`, or its id."""
    if name is None:
        return str(entity_id)
    return f"{json.dumps(name[0], ensure_ascii=False)} ({name[1]})"


class MissingEnd(NamedTuple):
    """An end of a relationship found neither in the input nor in the tenant: `said`,
    as the input named it (`target "Acme Corp" (company)`), its id, and whether the
    input named it by name and type (`by_name`) rather than by id."""

    said: str
    entity_id: EntityId
    by_name: bool = False


def _missing_ends(named: NamedRelationship, missing: set[str]) -> list[MissingEnd]:
    """The ends of `named` that are `missing` (ids, as `MissingEndpointError.missing`
    spells them), source first."""
    relationship = named.relationship
    ends = (
        ("source", relationship.source_entity_id, named.source),
        ("target", relationship.target_entity_id, named.target),
    )
    return [
        MissingEnd(f"{end} {_end(i, name)}", i, by_name=name is not None)
        for end, i, name in ends
        if str(i) in missing
    ]


def describe_relationship(named: NamedRelationship) -> str:
    """A relationship as its input named it: `"Acme Corp" (company) -[SUPPLIES]-> "Bolt"
    (company)`, an end given by id shown by its id."""
    relationship = named.relationship
    source = _end(relationship.source_entity_id, named.source)
    target = _end(relationship.target_entity_id, named.target)
    return f"{source} -[{relationship.relationship_type}]-> {target}"


def missing_ends_reason(ends: Sequence[MissingEnd], skipped: Mapping[EntityId, int]) -> str:
    """Why a relationship line is not loaded: `ends` are in neither the input nor the
    tenant; of those, the ones whose own line was `skipped` as invalid (by id, its line
    number) say which line that was. An end named by name and type is the entity they
    derive the id of, which one given an id of its own is not: the reason says so."""
    gone = [end for end in ends if end.entity_id not in skipped]
    reasons = []
    if gone:
        named = any(end.by_name for end in gone)
        hint = " (an entity given an id of its own is named by that id)" if named else ""
        said = " and ".join(end.said for end in gone)
        reasons.append(f"{said} not found in the file or the tenant{hint}")
    reasons += [
        f"{end.said} is on line {skipped[end.entity_id]}, skipped as invalid"
        for end in ends
        if end.entity_id in skipped
    ]
    return "; ".join(reasons)


async def _write_relationships(
    services: Redstring, relationships: Sequence[NumberedRelationship]
) -> tuple[list[NumberedRelationship], list[tuple[NumberedRelationship, list[MissingEnd]]]]:
    """Write those relationships whose ends exist; return them, and the others with their
    missing ends. A store call is all or nothing, so a call that names a missing end is
    repeated without the relationships that need it."""
    pending = list(relationships)
    unresolved: list[tuple[NumberedRelationship, list[MissingEnd]]] = []
    while pending:
        try:
            await services.graph.upsert_relationships([r.relationship for _, r in pending])
        except MissingEndpointError as exc:
            missing = set(exc.missing)
            resolvable = []
            for numbered in pending:
                ends = _missing_ends(numbered[1], missing)
                if ends:
                    unresolved.append((numbered, ends))
                else:
                    resolvable.append(numbered)
            if len(resolvable) == len(pending):
                raise  # the store names ids that none of these relationships needs
            pending = resolvable
        else:
            break
    return pending, unresolved


def _refused_lines(
    numbered: Sequence[tuple[int, Entity]], refusal: EntityTextRefusedError
) -> list[InvalidLine]:
    """The lines of the entities whose text the provider refuses, in line order: of an id
    given on several lines, the last (whose text was embedded, as the last line of an id
    is the one written)."""
    last: dict[tuple[UUID, UUID], tuple[int, EntityId]] = {
        (entity.tenant_id, entity.id): (n, entity.id) for n, entity in numbered
    }
    lines: list[InvalidLine] = []
    for tenant_id, entity_id, answer in refusal.refused:
        number, of_line = last[(tenant_id, entity_id)]
        lines.append(InvalidLine(number, EntityTextRefusedError.of_one(answer), of_line))
    return sorted(lines, key=lambda line: line.line_number)


def _batches(records: Iterable[NumberedLine], size: int) -> Iterator[list[NumberedLine]]:
    stream = iter(records)
    while batch := list(islice(stream, size)):
        yield batch


def _until(stop: threading.Event, records: Iterable[NumberedLine]) -> Iterator[NumberedLine]:
    """`records` until `stop` is set: checked after each record, before the next is read
    (and, from a JSONL file, validated)."""
    for record in records:
        yield record
        if stop.is_set():
            return


# How long an ingest that ends while the next batch is read (a failure, Ctrl-C) waits for
# the reading thread to stop. Told to (`_until`), it stops after the record under way,
# read and checked in microseconds unless the input is a pipe nobody writes to: such a
# read, left behind, is ended at exit inside the read, which is safe.
_READ_STOP_WAIT = 2.0


async def _next_batch(
    batches: Iterator[list[NumberedLine]], finishing: asyncio.Future[None], stop: threading.Event
) -> list[NumberedLine]:
    """The next batch (`[]` after the last), read in a thread of its own while the batch
    before is finishing: a slow input (a pipe) holds neither that batch's writes nor a
    Ctrl-C, and a failure of those writes is raised as it comes, not after the read.

    A read given up so is stopped (`stop`, which `batches` checks between records) and
    waited for up to `_READ_STOP_WAIT`: left running, the thread would be validating
    lines in pydantic-core when the interpreter exits, and ended there it aborts the
    process (`in_daemon_thread`)."""
    read, reader = in_daemon_thread(lambda: next(batches, []), "redstring-ingest-read")
    batch: list[NumberedLine] | None = None
    try:
        await asyncio.wait((finishing, read), return_when=asyncio.FIRST_COMPLETED)
        if not read.done():
            finishing.result()  # it failed: raised here, the read stopped
        batch = await read
        return batch
    finally:
        if batch is None:  # given up: failed, or cancelled (which cancels `read` too)
            read.cancel()
            stop.set()
            reader.join(_READ_STOP_WAIT)


@dataclass(frozen=True)
class _Ready:
    """A checked and embedded batch whose entities are written, and nothing else yet."""

    entities: list[Entity]
    vectors: EntityVectors
    vectors_kept: int
    relationships: list[NumberedRelationship]
    skipped: int
    last_line: int


class _Load:
    """One run of `ingest`: its options, its report so far, and the deferred relationships."""

    def __init__(
        self,
        services: Redstring,
        *,
        skip_invalid: bool,
        on_invalid: Callable[[InvalidLine], None],
        on_batch: Callable[[IngestReport], None],
        on_writing: Callable[[], None],
    ) -> None:
        self.services = services
        self.skip_invalid = skip_invalid
        self.on_invalid = on_invalid
        self.on_batch = on_batch
        self.on_writing = on_writing
        self.report = IngestReport()
        # Keyed by id: a later line for the same relationship replaces the deferred one,
        # and one written in the meantime removes it, so the last line still wins.
        self.deferred: dict[RelationshipId, NumberedRelationship] = {}
        # The numbers of the earlier deferred lines a later one replaced, by id: each
        # is reported with it if its ends never come.
        self.replaced: dict[RelationshipId, list[int]] = {}
        # The entities of the batch whose vectors may be being written (`outdated`).
        self.writing: frozenset[EntityKey] = frozenset()
        # The line of each entity skipped as invalid (`skip_invalid`), by the id it would
        # have had: a relationship waiting for it then says so.
        self.skipped_entities: dict[EntityId, int] = {}

    async def start(
        self, batch: list[NumberedLine], finishing: asyncio.Future[None]
    ) -> _Ready | list[InvalidLine]:
        """Check and embed one batch, delete the vectors of another text its entities
        had (`delete_replaced`; those of the batch before's entities once `finishing`,
        that batch's writes, ends), then write its entities; or, when invalid lines
        stop the load before this batch, write nothing and return them."""
        bad = [record for _, record in batch if isinstance(record, InvalidLine)]
        for line in bad:
            self.on_invalid(line)
        if bad and not self.skip_invalid:
            return bad
        numbered = [(n, record) for n, record in batch if isinstance(record, Entity)]
        services = self.services
        known: dict[str, list[float]] = {}
        while True:  # once, but for each round of lines whose text the provider refuses
            entities = [entity for _, entity in numbered]
            found = await outdated(
                entities, services.embeddings, services.vectors, being_written=self.writing
            )
            try:  # before any write
                vectors = await embed_entities(found.entities, services.embeddings, known=known)
            except EntityTextRefusedError as refusal:
                refused = _refused_lines(numbered, refusal)
                for line in refused:
                    self.on_invalid(line)
                if not self.skip_invalid:
                    return refused
                bad += refused
                gone = {line.line_number for line in refused}
                numbered = [(n, entity) for n, entity in numbered if n not in gone]
                known = refusal.vectors
            else:
                break
        for line in bad:
            if line.entity_id is not None:
                self.skipped_entities[line.entity_id] = line.line_number
        self.writing = keys_of(entities)  # the next batch is read while these are written
        self.on_writing()
        await delete_replaced(found, services.vectors, batch_before=finishing)
        if entities:
            await services.graph.upsert_entities(entities)
        relationships = [
            (n, _named(r)) for n, r in batch if isinstance(r, Relationship | NamedRelationship)
        ]
        kept = len({(e.tenant_id, e.id) for e in entities}) - len(found.entities)
        return _Ready(
            entities, vectors, kept, relationships, skipped=len(bad), last_line=batch[-1][0]
        )

    def stop(self, batch: list[NumberedLine], bad: Sequence[InvalidLine]) -> None:
        """Report a load stopped before `batch` by its `bad` lines."""
        self.report.invalid += len(bad)
        self.report.stopped_at_line = batch[0][0]
        self.report.deferred_dropped = len(self.deferred)  # counted and named in `waiting`

    async def finish(self, ready: _Ready) -> None:
        """The rest of a batch whose entities are written: its vectors beside its
        relationships (after the entities, never before), then its report."""
        services = self.services
        relationships = self._relationships(ready.relationships)
        if ready.vectors.records:
            # Upserts alone: `delete_replaced` took what vectors the directionless had.
            await concurrently(relationships, ready.vectors.upsert(services.vectors))
        else:
            await relationships
        await settle(
            ready.entities,
            embeddings=services.embeddings,
            vectors=services.vectors,
            graph=services.graph,
            directionless=ready.vectors.directionless,
        )
        self.report.entities += len(ready.entities)
        self.report.vectors_kept += ready.vectors_kept
        self.report.skipped += ready.skipped
        self.report.batches += 1
        self.report.last_line = ready.last_line
        self._note_waiting()
        self.on_batch(self.report)

    def _note_waiting(self) -> None:
        """Count the deferred relationships in the report, and name the first of them."""
        self.report.waiting = len(self.deferred)
        self.report.first_waiting = tuple(islice(self.deferred.values(), WAITING_LISTED))

    async def _relationships(self, relationships: list[NumberedRelationship]) -> None:
        written, waiting = await _write_relationships(self.services, relationships)
        if self.deferred:  # nothing to look up otherwise: the usual case, and ids cost a hash
            for _, named in written:
                self.deferred.pop(named.relationship.id, None)
                self.replaced.pop(named.relationship.id, None)
        for (number, named), _ in waiting:
            key = named.relationship.id
            earlier = self.deferred.pop(key, None)  # re-inserted last: line order is kept
            if earlier is not None:
                self.replaced.setdefault(key, []).append(earlier[0])
            self.deferred[key] = (number, named)
        self.report.relationships += len(written)
        self.report.deferred += len(waiting)

    async def deferred_relationships(self, batch_size: int) -> None:
        """Write the relationships that waited for the end; report those whose ends never came."""
        waiting = list(self.deferred.values())
        self.deferred.clear()
        for start in range(0, len(waiting), batch_size):
            end = start + batch_size
            written, unresolved = await _write_relationships(self.services, waiting[start:end])
            self.report.relationships += len(written)
            self.report.waiting = max(len(waiting) - end, 0)
            self.report.first_waiting = tuple(waiting[end : end + WAITING_LISTED])
            lines = 0
            for (number, named), ends in unresolved:
                reason = missing_ends_reason(ends, self.skipped_entities)
                for line in (*self.replaced.pop(named.relationship.id, ()), number):
                    self.on_invalid(InvalidLine(line, reason))
                    lines += 1
            if self.skip_invalid:
                self.report.skipped += lines
            else:
                self.report.invalid += lines
            self.on_batch(self.report)


async def ingest(
    records: Iterable[NumberedLine],
    services: Redstring,
    *,
    batch_size: int = DEFAULT_INGEST_BATCH_SIZE,
    skip_invalid: bool = False,
    on_invalid: Callable[[InvalidLine], None] = lambda line: None,
    on_batch: Callable[[IngestReport], None] = lambda report: None,
    on_writing: Callable[[], None] = lambda: None,
) -> IngestReport:
    """Write `records` in batches of `batch_size` lines; see the module docstring.
    `records` is iterated in a thread of its own, a batch at a time (never two at once),
    so that a slow input holds no write; an ingest that fails or is cancelled meanwhile
    stops that iteration after the record under way before it ends (`_next_batch`).

    `on_invalid` hears of every invalid line as it is found, skipped or not,
    including (at the end) each relationship whose end never appeared;
    `on_batch` gets the report so far after each batch is written;
    `on_writing` is called as each batch begins to write, once it is checked
    and embedded: before its first call, nothing of the load is written. Store
    and provider errors propagate: the batches before the failing one are
    written but for the deferred relationships that the last report counts
    in `waiting`, and running the same records again finishes the load.
    """
    batch_size = positive_count_of(batch_size, "batch_size")
    load = _Load(
        services,
        skip_invalid=skip_invalid,
        on_invalid=on_invalid,
        on_batch=on_batch,
        on_writing=on_writing,
    )
    # Batch n's vectors and relationships are written while batch n+1 is read, embedded
    # and its entities written: two stages in flight at most.
    finishing: asyncio.Future[None] = asyncio.ensure_future(nothing())
    stop = threading.Event()
    batches = _batches(_until(stop, records), batch_size)
    try:
        while batch := await _next_batch(batches, finishing, stop):
            started = await while_finishing(finishing, load.start(batch, finishing))
            if not isinstance(started, _Ready):
                load.stop(batch, started)
                return load.report
            finishing = asyncio.ensure_future(load.finish(started))
            await asyncio.sleep(0)  # let its writes start before the next batch is read
        await while_finishing(finishing, nothing())
    except BaseException as failure:
        if not finishing.done():  # reading the next batch failed: finish this one first
            await asyncio.gather(finishing, return_exceptions=True)
        note_failure_of(finishing, on=failure)
        raise
    await load.deferred_relationships(batch_size)
    return load.report
