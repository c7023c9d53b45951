"""`ingest`: batches checked whole, graph before vectors, deferred relationships, re-runs."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator, Sequence
from dataclasses import replace

import pytest

from redstring import (
    DimensionMismatchError,
    Entity,
    EntityId,
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    Relationship,
    RelationshipId,
    RetrievalMode,
    StoreUnavailableError,
    TenantId,
    VectorRecord,
)
from redstring.composition.client import Redstring
from redstring.composition.entity_vectors import provider_identity
from redstring.composition.ingest import IngestReport, InvalidLine, NumberedLine, ingest
from redstring.domain.errors import EmbeddingUnavailableError, InvalidInputError
from redstring.domain.ids import entity_id_for, relationship_id_for
from redstring.domain.vectors import vector_source
from redstring.testing import new_tenant
from tests.ingest.support import (
    DIMENSION,
    GatedDeletes,
    GatedVectorWrites,
    GraphStoreFailingAt,
    SlowVectorWrites,
    VectorStoreDownAt,
    VectorStoreFailingAt,
    numbered,
    raised_notes,
    services_over,
    snapshot,
)


def company(tenant: TenantId, i: int) -> Entity:
    name = f"Company {i:04d} Holdings"
    return Entity(
        id=entity_id_for(tenant, "company", name),
        tenant_id=tenant,
        name=name,
        entity_type="company",
        description=f"number {i}",
    )


def link(source: Entity, target: Entity, confidence: float = 1.0) -> Relationship:
    return Relationship(
        id=RelationshipId(relationship_id_for(source.tenant_id, source.id, "SUPPLIES", target.id)),
        tenant_id=source.tenant_id,
        source_entity_id=source.id,
        target_entity_id=target.id,
        relationship_type="SUPPLIES",
        confidence=confidence,
    )


def chain(tenant: TenantId, count: int) -> list[Entity | Relationship]:
    """`count` companies, each after the first followed by a link from the previous one."""
    out: list[Entity | Relationship] = []
    for i in range(count):
        out.append(company(tenant, i))
        if i:
            out.append(link(company(tenant, i - 1), company(tenant, i)))
    return out


def ids(tenant: TenantId, count: int) -> list[EntityId]:
    return [company(tenant, i).id for i in range(count)]


async def test_a_load_writes_every_record_and_reports_each_batch() -> None:
    tenant = new_tenant()
    services = services_over()
    records = numbered(*chain(tenant, 10))  # 10 entities, 9 relationships
    seen: list[int] = []
    report = await ingest(
        records, services, batch_size=4, on_batch=lambda r: seen.append(r.records)
    )
    assert (report.entities, report.relationships, report.skipped, report.invalid) == (10, 9, 0, 0)
    assert report.deferred == 0
    assert seen == [4, 8, 12, 16, 19]
    state = await snapshot(services, tenant, ids(tenant, 10))
    assert len(state.entities) == 10
    assert len(state.relationships) == 9
    assert state.vector_ids == {e.id for e in state.entities}


async def test_each_report_counts_the_batches_written_and_their_last_line() -> None:
    tenant = new_tenant()
    c = [company(tenant, i) for i in range(4)]
    # Numbered as a file with blank lines would be: the numbers skip.
    records: list[NumberedLine] = [(1, c[0]), (3, c[1]), (4, link(c[0], c[1])), (7, c[2])]
    seen: list[tuple[int, int]] = []
    report = await ingest(
        records,
        services_over(),
        batch_size=2,
        on_batch=lambda r: seen.append((r.batches, r.last_line)),
    )
    assert seen == [(1, 3), (2, 7)]
    assert (report.batches, report.last_line) == (2, 7)

    stopped = await ingest(
        [*records, (8, c[3]), (9, InvalidLine(9, "not valid JSON"))],
        services_over(),
        batch_size=2,
    )
    assert (stopped.batches, stopped.last_line, stopped.stopped_at_line) == (2, 7, 8)


async def test_input_is_read_one_batch_at_a_time() -> None:
    tenant = new_tenant()
    read: list[int] = []
    graph = GraphStoreFailingAt(fail_at=None)
    writes_after: list[int] = []
    upsert = graph.upsert_entities

    async def recording_upsert(entities: list[Entity]) -> None:
        writes_after.append(len(read))
        await upsert(entities)

    graph.upsert_entities = recording_upsert  # type: ignore[method-assign]

    def stream() -> Iterator[NumberedLine]:
        for number, record in numbered(*(company(tenant, i) for i in range(20))):
            read.append(number)
            yield number, record

    await ingest(stream(), services_over(graph=graph), batch_size=5)
    assert writes_after == [5, 10, 15, 20]


async def test_a_bad_line_stops_the_load_before_its_batch_and_nothing_of_it_is_written() -> None:
    tenant = new_tenant()
    services = services_over()
    c = [company(tenant, i) for i in range(5)]
    records = numbered(
        c[0], c[1], link(c[0], c[1]),                       # batch 1: written
        c[2], link(c[0], c[2]), "not valid JSON",           # batch 2: holds the bad line
        c[3], c[4],                                         # batch 3: never read
    )  # fmt: skip
    heard: list[InvalidLine] = []
    report = await ingest(records, services, batch_size=3, on_invalid=heard.append)
    assert heard == [InvalidLine(6, "not valid JSON")]
    assert (report.stopped_at_line, report.invalid) == (4, 1)
    assert (report.entities, report.relationships) == (2, 1)
    state = await snapshot(services, tenant, [e.id for e in c])
    assert {e.id for e in state.entities} == {c[0].id, c[1].id}
    assert [r.target_entity_id for r in state.relationships] == [c[1].id]  # not c[2]'s link
    assert state.vector_ids == {c[0].id, c[1].id}


async def test_every_bad_line_of_the_stopping_batch_is_reported() -> None:
    tenant = new_tenant()
    records = numbered(company(tenant, 0), "bad one", "bad two", company(tenant, 1), "bad three")
    heard: list[InvalidLine] = []
    report = await ingest(records, services_over(), batch_size=10, on_invalid=heard.append)
    assert [line.line_number for line in heard] == [2, 3, 5]
    assert report.entities == 0


async def test_skip_invalid_reports_every_skipped_line_and_loads_the_rest() -> None:
    tenant = new_tenant()
    services = services_over()
    c = [company(tenant, i) for i in range(4)]
    records = numbered(c[0], "bad one", c[1], c[2], "bad two", link(c[0], c[3]), c[3])
    heard: list[InvalidLine] = []
    report = await ingest(
        records, services, batch_size=2, skip_invalid=True, on_invalid=heard.append
    )
    assert [line.line_number for line in heard] == [2, 5]
    assert (report.entities, report.relationships, report.skipped) == (4, 1, 2)
    assert report.stopped_at_line is None
    state = await snapshot(services, tenant, [e.id for e in c])
    assert len(state.entities) == 4
    assert len(state.relationships) == 1


async def test_a_relationship_waits_for_an_entity_of_a_later_batch() -> None:
    tenant = new_tenant()
    services = services_over()
    c = [company(tenant, i) for i in range(4)]
    # The link to c[3] comes first, three batches before c[3] itself.
    records = numbered(c[0], link(c[0], c[3]), c[1], c[2], link(c[1], c[2]), c[3])
    report = await ingest(records, services, batch_size=2)
    assert (report.relationships, report.deferred, report.invalid) == (2, 1, 0)
    state = await snapshot(services, tenant, [e.id for e in c])
    assert {r.target_entity_id for r in state.relationships} == {c[3].id, c[2].id}


async def test_a_relationship_to_an_entity_already_stored_is_not_deferred() -> None:
    tenant = new_tenant()
    services = services_over()
    c = [company(tenant, i) for i in range(2)]
    await ingest(numbered(c[0]), services)
    report = await ingest(numbered(c[1], link(c[1], c[0])), services)
    assert (report.relationships, report.deferred) == (1, 0)


async def test_the_last_line_of_a_relationship_wins_even_when_the_first_was_deferred() -> None:
    tenant = new_tenant()
    services = services_over()
    c = [company(tenant, i) for i in range(2)]
    records = numbered(link(c[0], c[1], 0.1), c[0], c[1], link(c[0], c[1], 0.9))
    await ingest(records, services, batch_size=1)
    state = await snapshot(services, tenant, [c[0].id, c[1].id])
    assert [r.confidence for r in state.relationships] == [0.9]


@pytest.mark.parametrize("skip_invalid", [False, True])
async def test_a_relationship_whose_end_never_appears_is_reported_with_its_line(
    skip_invalid: bool,
) -> None:
    tenant = new_tenant()
    services = services_over()
    c = [company(tenant, i) for i in range(3)]
    ghost = company(tenant, 99)
    records = numbered(c[0], link(c[0], ghost), c[1], link(c[0], c[1]), c[2])
    heard: list[InvalidLine] = []
    report = await ingest(
        records, services, batch_size=2, skip_invalid=skip_invalid, on_invalid=heard.append
    )
    assert [line.line_number for line in heard] == [2]
    # Plain `Relationship` records name their ends by id only: the message gives the id.
    assert heard[0].reason == f"target {ghost.id} not found in the file or the tenant"
    assert (report.invalid, report.skipped) == ((0, 1) if skip_invalid else (1, 0))
    assert (report.entities, report.relationships) == (3, 1)
    assert report.stopped_at_line is None


@pytest.mark.parametrize("skip_invalid", [False, True])
async def test_every_line_of_a_relationship_whose_end_never_appears_is_reported(
    skip_invalid: bool,
) -> None:
    tenant = new_tenant()
    c = [company(tenant, i) for i in range(2)]
    ghost = company(tenant, 99)
    records = numbered(link(c[0], ghost), c[0], link(c[0], ghost, 0.5), c[1], link(c[0], ghost))
    heard: list[InvalidLine] = []
    report = await ingest(
        records, services_over(), batch_size=2, skip_invalid=skip_invalid, on_invalid=heard.append
    )
    assert [line.line_number for line in heard] == [1, 3, 5]
    assert {line.reason for line in heard} == {
        f"target {ghost.id} not found in the file or the tenant"
    }
    assert (report.invalid, report.skipped) == ((0, 3) if skip_invalid else (3, 0))


async def test_a_relationship_deferred_then_written_by_a_later_line_reports_no_line() -> None:
    tenant = new_tenant()
    c = [company(tenant, i) for i in range(2)]
    records = numbered(link(c[0], c[1]), link(c[0], c[1]), c[0], c[1], link(c[0], c[1]))
    heard: list[InvalidLine] = []
    report = await ingest(records, services_over(), batch_size=2, on_invalid=heard.append)
    assert (heard, report.invalid, report.relationships) == ([], 0, 1)


async def test_each_report_counts_the_waiting_relationships_and_names_the_first_ten() -> None:
    tenant = new_tenant()
    c = [company(tenant, i) for i in range(14)]
    later = company(tenant, 99)
    # c[i] then its link to `later`, which comes last: all but the last link wait for it.
    records = numbered(*(r for i in range(13) for r in (c[i], link(c[i], later))), later)
    seen: list[tuple[int, list[int]]] = []
    report = await ingest(
        records,
        services_over(),
        batch_size=6,
        on_batch=lambda r: seen.append((r.waiting, [n for n, _ in r.first_waiting])),
    )
    evens = list(range(2, 25, 2))  # the lines of the 12 links that wait
    assert seen == [
        (3, evens[:3]), (6, evens[:6]), (9, evens[:9]), (12, evens[:10]), (12, evens[:10]),
        (6, evens[6:]), (0, []),  # the end of the input: the 12 are written, 6 at a time
    ]  # fmt: skip
    assert (report.relationships, report.waiting, report.first_waiting) == (13, 0, ())
    assert report.deferred == 12


async def test_a_stop_counts_and_names_the_relationships_it_leaves_waiting() -> None:
    tenant = new_tenant()
    c = [company(tenant, i) for i in range(13)]
    ghost = company(tenant, 99)
    records = numbered(*(r for i in range(12) for r in (c[i], link(c[i], ghost))), c[12], "bad")
    report = await ingest(records, services_over(), batch_size=4)
    assert (report.stopped_at_line, report.deferred_dropped, report.waiting) == (25, 12, 12)
    assert [n for n, _ in report.first_waiting] == list(range(2, 21, 2))
    assert report.first_waiting[0][1].relationship == link(c[0], ghost)


class _CountingProvider(HashingEmbeddingProvider):
    """The hashing provider (its identity too), keeping the size of each document call."""

    def __init__(self) -> None:
        super().__init__(DIMENSION)
        self.documents: list[int] = []

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.documents.append(len(texts))
        return await super().embed_documents(texts)


def _counting_over(services: Redstring) -> Redstring:
    """`services`' stores, embedded into by a `_CountingProvider`."""
    return Redstring(embeddings=_CountingProvider(), vectors=services.vectors, graph=services.graph)


async def test_a_second_run_changes_nothing_and_embeds_nothing() -> None:
    tenant = new_tenant()
    services = services_over()
    records = numbered(*chain(tenant, 12))
    first = await ingest(records, services, batch_size=5)
    before = await snapshot(services, tenant, ids(tenant, 12))
    counting = _counting_over(services)
    second = await ingest(records, counting, batch_size=5)
    assert await snapshot(services, tenant, ids(tenant, 12)) == before
    assert (first.vectors_kept, second.vectors_kept) == (0, 12)
    assert replace(first, vectors_kept=12) == second
    assert counting.embeddings.documents == []  # type: ignore[attr-defined]


async def test_only_the_entities_whose_text_changed_are_embedded_again() -> None:
    tenant = new_tenant()
    services = services_over()
    entities = [company(tenant, i) for i in range(6)]
    await ingest(numbered(*entities), services)
    renamed = entities[2].model_copy(update={"description": "now a bakery"})
    counting = _counting_over(services)
    report = await ingest(numbered(*entities[:2], renamed, *entities[3:]), counting)
    assert report.vectors_kept == 5
    assert counting.embeddings.documents == [1]  # type: ignore[attr-defined]
    [match] = await services.vectors.search(
        (await services.embeddings.embed_documents([renamed.embedding_text()]))[0], tenant, k=1
    )
    assert (match.entity_id, round(match.score, 6)) == (renamed.id, 1.0)


async def stored_source(services: Redstring, entity: Entity) -> str | None:
    """The source of `entity`'s stored vector (None: none, or no source)."""
    [source] = (await services.vectors.sources([entity.id], entity.tenant_id)).values()
    return source


def source_of(services: Redstring, entity: Entity) -> str:
    """The source `services`' provider gives `entity`'s vector."""
    return vector_source(provider_identity(services.embeddings), entity.embedding_text())


async def test_an_entity_changed_and_changed_back_in_the_next_batch_keeps_its_last_vector() -> None:
    # Batch 2 is read while batch 1's vectors are still being written: its entity's
    # stored vector is the one batch 1 replaces, not the one to compare with.
    tenant = new_tenant()
    services = services_over(vectors=SlowVectorWrites(DIMENSION))
    entity = company(tenant, 1)
    await ingest(numbered(entity), services)
    renamed = entity.model_copy(update={"description": "now a bakery"})
    report = await ingest(numbered(renamed, entity), services, batch_size=1)
    assert (await services.graph.get_entities([entity.id], tenant))[0] == entity
    assert await stored_source(services, entity) == source_of(services, entity)
    assert report.vectors_kept == 0


async def test_a_load_interrupted_half_way_is_finished_by_running_it_again() -> None:
    tenant = new_tenant()
    records = numbered(*chain(tenant, 12))
    reference = services_over()
    await ingest(records, reference, batch_size=5)

    graph = GraphStoreFailingAt(fail_at=3)
    services = services_over(graph=graph)
    done: list[IngestReport] = []
    with pytest.raises(StoreUnavailableError):
        await ingest(records, services, batch_size=5, on_batch=done.append)
    assert done[-1].records == 10  # two whole batches written before the failure
    partial = await snapshot(services, tenant, ids(tenant, 12))
    assert 0 < len(partial.entities) < 12

    graph.fail_at = None
    await ingest(records, services, batch_size=5)
    assert await snapshot(services, tenant, ids(tenant, 12)) == await snapshot(
        reference, tenant, ids(tenant, 12)
    )


async def test_vectors_failing_leave_entities_found_lexically_and_no_vector_without_entity() -> (
    None
):
    tenant = new_tenant()
    vectors = VectorStoreFailingAt(DIMENSION, fail_at=2)  # the second batch's vectors fail
    services = services_over(vectors=vectors)
    records = numbered(*(company(tenant, i) for i in range(6)))
    with pytest.raises(StoreUnavailableError):
        await ingest(records, services, batch_size=3)

    state = await snapshot(services, tenant, ids(tenant, 6))
    assert state.vector_ids <= {e.id for e in state.entities}
    unvectored = company(tenant, 4)
    assert unvectored.id not in state.vector_ids
    found = await services.retriever.retrieve(
        unvectored.name, tenant, k=1, mode=RetrievalMode.LEXICAL
    )
    assert [m.entity.id for m in found.matches] == [unvectored.id]

    vectors.fail_at = None
    await ingest(records, services, batch_size=3)  # running again repairs it
    assert (await snapshot(services, tenant, ids(tenant, 6))).vector_ids == set(ids(tenant, 6))


async def test_the_graph_failing_leaves_no_vector_without_its_entity() -> None:
    tenant = new_tenant()
    services = services_over(graph=GraphStoreFailingAt(fail_at=2))
    records = numbered(*(company(tenant, i) for i in range(6)))
    with pytest.raises(StoreUnavailableError):
        await ingest(records, services, batch_size=3)
    state = await snapshot(services, tenant, ids(tenant, 6))
    assert len(state.entities) == 3
    assert state.vector_ids == {e.id for e in state.entities}


async def test_a_delete_between_a_batch_s_two_writes_leaves_no_vector() -> None:
    """The batch's entity is written; a whole delete (vector, then entity) runs; then the
    batch's vector write lands: the read-back after it finds no entity and deletes it."""
    tenant = new_tenant()
    vectors = GatedVectorWrites(DIMENSION)
    services = services_over(vectors=vectors)
    acme = company(tenant, 1)
    load = asyncio.ensure_future(ingest(numbered(acme), services))
    await asyncio.wait_for(vectors.reached.wait(), timeout=5)  # the entity is written
    assert await services.graph.get_entities([acme.id], tenant) == [acme]
    assert await services.delete([acme.id], tenant) == 1
    vectors.gate.set()
    await asyncio.wait_for(load, timeout=5)
    assert await services.vectors.sources([acme.id], tenant) == {}


@pytest.mark.parametrize("writer", ["ingest", "upsert"])
async def test_a_vector_written_inside_a_delete_is_deleted_by_it(writer: str) -> None:
    """The batch's entity is written; the delete removes the vectors; the batch's vector
    write lands and its read-back still finds the entity; then the delete removes the
    entity, and the vectors again after it."""
    tenant = new_tenant()
    graph, vectors = GatedDeletes(), GatedVectorWrites(DIMENSION)
    services = services_over(graph=graph, vectors=vectors)
    acme = company(tenant, 1)
    write = ingest(numbered(acme), services) if writer == "ingest" else services.upsert([acme])
    load = asyncio.ensure_future(write)
    await asyncio.wait_for(vectors.reached.wait(), timeout=5)  # the entity is written
    delete = asyncio.ensure_future(services.delete([acme.id], tenant))
    await asyncio.wait_for(graph.reached.wait(), timeout=5)  # the vectors are deleted
    vectors.gate.set()
    await asyncio.wait_for(load, timeout=5)  # written, and read back with its entity
    assert list(await services.vectors.sources([acme.id], tenant)) == [acme.id]
    graph.gate.set()
    assert await asyncio.wait_for(delete, timeout=5) == 1
    assert await services.vectors.sources([acme.id], tenant) == {}


async def test_a_delete_whose_second_vector_delete_fails_answers_its_count_and_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The entities are gone when the vector delete after them fails: the count is the
    delete's answer (raising it would tell a caller that a delete which happened failed,
    and a retry would count 0), and the failure a WARNING naming the tenant and how many
    ids. The vector it could leave is skipped by retrieval (docs/adr/0004)."""
    tenant = new_tenant()
    vectors = VectorStoreFailingAt(DIMENSION, fail_at=None, method="delete")
    services = services_over(vectors=vectors)
    acme, apex = company(tenant, 1), company(tenant, 2)
    await services.upsert([acme, apex])
    vectors.fail_at = vectors.calls + 2  # the delete's second
    ids = [acme.id, apex.id, entity_id_for(tenant, "never written", "company")]
    with caplog.at_level(logging.WARNING, logger="redstring.composition.client"):
        assert await services.delete(ids, tenant) == 2
    assert vectors.calls == vectors.fail_at
    [warning] = caplog.records
    assert warning.levelno == logging.WARNING
    message = warning.getMessage()
    assert message == (
        f"tenant {tenant}: a delete of 3 ids deleted 2 entities, then deleting their vectors "
        "again failed (a vector written meanwhile is left, which retrieval skips): "
        "StoreUnavailableError: the vector store went away"
    )
    assert await services.graph.get_entities(ids, tenant) == []
    assert await services.vectors.sources(ids, tenant) == {}  # the first delete's work
    assert await services.delete(ids, tenant) == 0


async def test_a_delete_cancelled_in_its_second_vector_delete_is_cancelled(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Only an `Exception` is logged and passed over: a cancellation ends the delete."""
    tenant = new_tenant()
    vectors = VectorStoreFailingAt(DIMENSION, fail_at=2, method="delete")
    vectors.failure = asyncio.CancelledError
    services = services_over(vectors=vectors)
    acme = company(tenant, 1)
    await services.graph.upsert_entities([acme])
    with caplog.at_level(logging.WARNING), pytest.raises(asyncio.CancelledError):
        await services.delete([acme.id], tenant)
    assert caplog.records == []
    assert await services.graph.get_entities([acme.id], tenant) == []


async def test_a_rename_whose_vectors_fail_leaves_no_vector_of_the_old_text() -> None:
    """The renamed (and retyped) entity is written, then the vector store fails: it has
    no vector, where the old text's would still find it by the old name and type."""
    tenant = new_tenant()
    vectors = VectorStoreFailingAt(DIMENSION, fail_at=2)
    services = services_over(vectors=vectors)
    acme = company(tenant, 1)
    await ingest(numbered(acme), services)
    renamed = Entity(id=acme.id, tenant_id=tenant, name="Zephyr Holdings", entity_type="person")
    with pytest.raises(StoreUnavailableError):
        await ingest(numbered(renamed), services)
    assert await services.graph.get_entities([acme.id], tenant) == [renamed]
    assert await services.vectors.sources([acme.id], tenant) == {}
    semantic = await services.retriever.retrieve(
        acme.name, tenant, k=3, entity_types=["company"], mode=RetrievalMode.SEMANTIC
    )
    assert semantic.matches == ()


@pytest.mark.parametrize("writer", ["ingest", "upsert"])
async def test_a_store_down_for_both_stages_raises_the_first_failure_and_notes_the_second(
    writer: str,
) -> None:
    """The vector store goes down at batch 1's vector write, so batch 2's read of its
    sources, beside it, fails too: batch 1's error is raised, with batch 2's in a note,
    and asyncio is left no failed task to log ("exception was never retrieved")."""
    tenant = new_tenant()
    vectors = VectorStoreDownAt(DIMENSION, fail_at=1)
    services = services_over(vectors=vectors)
    entities = [company(tenant, i) for i in range(6)]
    write = (
        ingest(numbered(*entities), services, batch_size=3)
        if writer == "ingest"
        else services.upsert(entities, batch_size=3)
    )
    notes = await raised_notes(write, StoreUnavailableError, "went away")
    assert len(notes) == 1
    assert "StoreUnavailableError: the vector store is still down" in notes[0]


class _SlowVectorWritesFailingAt(VectorStoreFailingAt):
    """`VectorStoreFailingAt` whose writes end many loop turns after they start."""

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        for _ in range(100):
            await asyncio.sleep(0)
        await super().upsert(records)


async def test_an_entity_renamed_in_two_batches_whose_second_vectors_fail_has_no_vector() -> None:
    """Batch 1's vector of the entity is written while batch 2 renames it again; batch
    2's vectors fail. Batch 1's vector is of a text the entity no longer has: it is
    deleted once written, before batch 2's entity write."""
    tenant = new_tenant()
    vectors = _SlowVectorWritesFailingAt(DIMENSION, fail_at=3)
    services = services_over(vectors=vectors)
    acme = company(tenant, 1)
    await ingest(numbered(acme), services)
    apex = acme.model_copy(update={"description": "now a bakery"})
    zephyr = Entity(id=acme.id, tenant_id=tenant, name="Zephyr Holdings", entity_type="person")
    with pytest.raises(StoreUnavailableError):
        await ingest(numbered(apex, zephyr), services, batch_size=1)
    assert await services.graph.get_entities([acme.id], tenant) == [zephyr]
    assert await services.vectors.sources([acme.id], tenant) == {}


class _CountingDeletes(InMemoryVectorStore):
    def __init__(self) -> None:
        super().__init__(DIMENSION)
        self.deleted: list[int] = []

    async def delete(self, entity_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
        self.deleted.append(len(entity_ids))
        await super().delete(entity_ids, tenant_id)


async def test_only_a_renamed_entity_costs_a_vector_delete() -> None:
    tenant = new_tenant()
    vectors = _CountingDeletes()
    services = services_over(vectors=vectors)
    entities = [company(tenant, i) for i in range(5)]
    await ingest(numbered(*entities), services, batch_size=2)
    await ingest(numbered(*entities), services, batch_size=2)
    assert vectors.deleted == []  # new, then unchanged
    renamed = [e.model_copy(update={"description": "renamed"}) for e in entities[1:3]]
    report = await ingest(numbered(entities[0], *renamed, *entities[3:]), services, batch_size=2)
    assert (vectors.deleted, report.vectors_kept) == ([1, 1], 3)
    for entity in renamed:
        assert await stored_source(services, entity) == source_of(services, entity)


@pytest.mark.parametrize(
    ("batch_size", "said"),
    [
        (0, "batch_size must be at least 1, got 0"),
        (-1, "batch_size must not be negative, got -1"),
        ("5", "batch_size must be an integer, got '5'"),
        (2.5, "batch_size must be an integer, got 2.5"),
        (True, "batch_size must be an integer, got True"),
        (None, "batch_size must be an integer, got None"),
    ],
)
async def test_batch_size_is_a_count_of_one_or_more(batch_size: object, said: str) -> None:
    """As every count of the library (`count_of`): an `InvalidInputError` naming it,
    where a string or float met a comparison's `TypeError` and `True` was taken."""
    services = services_over()
    with pytest.raises(InvalidInputError) as refused:
        await ingest([], services, batch_size=batch_size)  # type: ignore[arg-type]
    assert str(refused.value).startswith(said)
    entity = Entity.create(new_tenant(), "Acme Corp", "org")
    with pytest.raises(InvalidInputError) as refused:
        await services.upsert([entity], batch_size=batch_size)  # type: ignore[arg-type]
    assert str(refused.value).startswith(said)


class ProviderFailingAt(HashingEmbeddingProvider):
    """The hashing provider, except that its `fail_at`-th `embed_documents` call raises."""

    def __init__(self, dimension: int, fail_at: int) -> None:
        super().__init__(dimension)
        self.fail_at = fail_at
        self.calls = 0

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        if self.calls == self.fail_at:
            raise EmbeddingUnavailableError("the model server went away", attempts=3)
        return await super().embed_documents(texts)


async def test_an_embedding_failure_writes_nothing_of_its_batch() -> None:
    tenant = new_tenant()
    c = [company(tenant, i) for i in range(4)]
    services = Redstring(
        embeddings=ProviderFailingAt(DIMENSION, fail_at=2),
        vectors=InMemoryVectorStore(DIMENSION),
        graph=InMemoryGraphStore(),
    )
    records = numbered(c[0], c[1], c[2], link(c[0], c[2]), c[3])
    with pytest.raises(EmbeddingUnavailableError):
        await ingest(records, services, batch_size=2)
    state = await snapshot(services, tenant, [e.id for e in c])
    assert {e.id for e in state.entities} == {c[0].id, c[1].id}
    assert state.relationships == ()


async def test_on_writing_comes_before_each_batch_s_first_write_and_never_before_it() -> None:
    """Before its first call nothing of the load is written (what `redstring load` says
    when it fails): a first batch whose embedding fails makes no call."""
    tenant = new_tenant()
    c = [company(tenant, i) for i in range(4)]
    events: list[str] = []

    class Graph(InMemoryGraphStore):
        async def upsert_entities(self, entities: Sequence[Entity]) -> None:
            events.append("entities")
            await super().upsert_entities(entities)

    class Vectors(InMemoryVectorStore):
        async def delete(self, entity_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
            events.append("delete")
            await super().delete(entity_ids, tenant_id)

    graph, vectors = Graph(), Vectors(DIMENSION)
    failing = Redstring(
        embeddings=ProviderFailingAt(DIMENSION, fail_at=1), vectors=vectors, graph=graph
    )
    with pytest.raises(EmbeddingUnavailableError):
        await ingest(
            numbered(*c), failing, batch_size=2, on_writing=lambda: events.append("writing")
        )
    assert events == []

    services = services_over(graph=graph, vectors=vectors)
    await ingest(numbered(*c), services, batch_size=2, on_writing=lambda: events.append("writing"))
    assert events == ["writing", "entities", "writing", "entities"]
    events.clear()
    renamed = c[1].model_copy(update={"description": "renamed"})  # its old vector deleted
    await ingest(numbered(renamed), services, on_writing=lambda: events.append("writing"))
    assert events == ["writing", "delete", "entities"]


def test_a_provider_of_another_dimension_is_refused_before_anything_is_read() -> None:
    """`ingest` writes through a `Redstring`, which cannot be built over a provider and a
    vector store of different dimensions."""
    with pytest.raises(DimensionMismatchError):
        Redstring(
            embeddings=HashingEmbeddingProvider(DIMENSION + 1),
            vectors=InMemoryVectorStore(DIMENSION),
            graph=InMemoryGraphStore(),
        )


class _MeetingStores:
    """A graph store whose relationship writes wait for the vector write of the same
    batch to start: a load that wrote them one after the other would never finish."""

    def __init__(self) -> None:
        self.vectors_started = asyncio.Event()
        meeting = self

        class Graph(InMemoryGraphStore):
            async def upsert_relationships(self, relationships: Sequence[Relationship]) -> None:
                await meeting.vectors_started.wait()
                await super().upsert_relationships(relationships)

        class Vectors(InMemoryVectorStore):
            async def upsert(self, records: Sequence[VectorRecord]) -> None:
                meeting.vectors_started.set()
                await asyncio.sleep(0)
                await super().upsert(records)

        self.graph, self.vectors = Graph(), Vectors(DIMENSION)


async def test_a_batch_writes_its_vectors_beside_its_relationships() -> None:
    tenant = new_tenant()
    stores = _MeetingStores()
    services = services_over(graph=stores.graph, vectors=stores.vectors)
    report = await asyncio.wait_for(
        ingest(numbered(*chain(tenant, 4)), services, batch_size=10), timeout=10
    )
    assert (report.entities, report.relationships) == (4, 3)
    state = await snapshot(services, tenant, ids(tenant, 4))
    assert state.vector_ids == set(ids(tenant, 4))


class _OverlappingStores:
    """A vector store whose first write waits for the graph store to start writing the
    next batch's entities: a load that finished each batch before reading the next
    would never finish."""

    def __init__(self) -> None:
        self.second_entities = asyncio.Event()
        overlap = self

        class Graph(InMemoryGraphStore):
            calls = 0

            async def upsert_entities(self, entities: Sequence[Entity]) -> None:
                Graph.calls += 1
                if Graph.calls == 2:
                    overlap.second_entities.set()
                await super().upsert_entities(entities)

        class Vectors(InMemoryVectorStore):
            calls = 0

            async def upsert(self, records: Sequence[VectorRecord]) -> None:
                Vectors.calls += 1
                if Vectors.calls == 1:
                    await overlap.second_entities.wait()
                await super().upsert(records)

        self.graph, self.vectors = Graph(), Vectors(DIMENSION)


async def test_the_next_batch_is_written_while_this_one_writes_its_vectors() -> None:
    tenant = new_tenant()
    stores = _OverlappingStores()
    services = services_over(graph=stores.graph, vectors=stores.vectors)
    done: list[int] = []
    report = await asyncio.wait_for(
        ingest(
            numbered(*chain(tenant, 9)),
            services,
            batch_size=5,
            on_batch=lambda r: done.append(r.records),
        ),
        timeout=10,
    )
    assert (report.entities, report.relationships) == (9, 8)
    assert done == [5, 10, 15, 17]  # each batch reported once it is written whole
    state = await snapshot(services, tenant, ids(tenant, 9))
    assert state.vector_ids == set(ids(tenant, 9))


async def test_a_read_error_lets_the_batch_before_finish_its_writes() -> None:
    tenant = new_tenant()
    services = services_over()

    def stream() -> Iterator[NumberedLine]:
        yield from numbered(*(company(tenant, i) for i in range(3)))
        raise OSError("the disk went away")

    with pytest.raises(OSError, match="disk"):
        await ingest(stream(), services, batch_size=3)
    state = await snapshot(services, tenant, ids(tenant, 3))
    assert state.vector_ids == set(ids(tenant, 3))  # written whole before the error


async def test_a_read_error_raised_notes_the_batch_before_failing_meanwhile() -> None:
    """The input fails while the batch before's vector write is under way, and that
    write fails next: the read's error is raised, naming the write's in a note."""
    tenant = new_tenant()
    vectors = GatedVectorWrites(DIMENSION, failing=True)
    services = services_over(vectors=vectors)
    failed_in: list[threading.Thread] = []
    failing = threading.Event()

    def stream() -> Iterator[NumberedLine]:
        yield from numbered(*(company(tenant, i) for i in range(3)))
        failed_in.append(threading.current_thread())
        failing.set()
        raise OSError("the disk went away")

    def read_ended() -> None:
        failing.wait(5)
        failed_in[0].join(5)  # the thread hands its failure to the loop before it ends

    async def fail_the_write_once_the_read_failed() -> None:
        await asyncio.to_thread(read_ended)
        vectors.gate.set()

    opener = asyncio.ensure_future(fail_the_write_once_the_read_failed())
    loading = asyncio.wait_for(ingest(stream(), services, batch_size=3), timeout=5)
    notes = await raised_notes(loading, OSError, "disk")
    await opener
    assert len(notes) == 1
    assert "StoreUnavailableError: the vector store went away" in notes[0]


class _Pipe:
    """An input that sends its first `sent` lines, then nothing until `go_on` is set (a
    pipe whose writer is slow): 10 s at most, so that a load reading it on the event
    loop fails the test instead of hanging it."""

    def __init__(self, lines: Sequence[NumberedLine], sent: int) -> None:
        self.lines, self.sent = lines, sent
        self.go_on = threading.Event()
        self.waited_out = False

    def __iter__(self) -> Iterator[NumberedLine]:
        yield from self.lines[: self.sent]
        self.waited_out = not self.go_on.wait(10)
        yield from self.lines[self.sent :]


async def test_a_slow_input_holds_neither_the_batch_before_nor_its_report() -> None:
    """While the input sends nothing, the batch before is written whole and reported."""
    tenant = new_tenant()
    services = services_over()
    pipe = _Pipe(numbered(*(company(tenant, i) for i in range(5))), sent=3)
    await asyncio.wait_for(
        ingest(pipe, services, batch_size=3, on_batch=lambda report: pipe.go_on.set()),
        timeout=20,
    )
    assert not pipe.waited_out
    state = await snapshot(services, tenant, ids(tenant, 5))
    assert state.vector_ids == set(ids(tenant, 5))


async def test_the_batch_before_failing_is_raised_while_the_input_sends_nothing() -> None:
    tenant = new_tenant()
    services = services_over(vectors=VectorStoreFailingAt(DIMENSION, fail_at=1))
    pipe = _Pipe(numbered(*(company(tenant, i) for i in range(5))), sent=3)
    try:
        with pytest.raises(StoreUnavailableError, match="went away"):
            await asyncio.wait_for(ingest(pipe, services, batch_size=3), timeout=5)
    finally:
        pipe.go_on.set()


async def test_a_load_waiting_for_its_input_is_cancelled_at_once() -> None:
    """Ctrl-C cancels the load: the read is left to its thread, the batch before finished."""
    tenant = new_tenant()
    services = services_over()
    pipe = _Pipe(numbered(*(company(tenant, i) for i in range(5))), sent=3)
    reported = asyncio.Event()
    load = asyncio.ensure_future(
        ingest(pipe, services, batch_size=3, on_batch=lambda report: reported.set())
    )
    try:
        await asyncio.wait_for(reported.wait(), timeout=5)
        load.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(load, timeout=5)
    finally:
        pipe.go_on.set()
    state = await snapshot(services, tenant, ids(tenant, 3))
    assert state.vector_ids == set(ids(tenant, 3))
