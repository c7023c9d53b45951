"""Records, store doubles and store snapshots shared by the ingestion tests."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
from collections.abc import Awaitable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from redstring import (
    Entity,
    EntityId,
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    Relationship,
    StoreUnavailableError,
    TenantId,
    VectorRecord,
)
from redstring.composition.client import Redstring
from redstring.composition.ingest import InvalidLine, NumberedLine
from redstring.domain.ids import entity_id_for

DIMENSION = 32


def entity_line(name: str, entity_type: str = "company", **more: object) -> str:
    return json.dumps({"kind": "entity", "name": name, "entity_type": entity_type, **more})


def relationship_line(
    source: tuple[str, str], target: tuple[str, str], relationship_type: str = "RELATED_TO",
    **more: object,
) -> str:  # fmt: skip
    """A relationship line naming both ends by `(name, type)`."""
    return json.dumps(
        {
            "kind": "relationship",
            "relationship_type": relationship_type,
            "source": {"name": source[0], "type": source[1]},
            "target": {"name": target[0], "type": target[1]},
            **more,
        }
    )


def numbered(*records: Entity | Relationship | str) -> list[NumberedLine]:
    """Records numbered from 1 in order; a string stands for a bad line with that reason."""
    return [
        (number, InvalidLine(number, record) if isinstance(record, str) else record)
        for number, record in enumerate(records, start=1)
    ]


class GraphStoreFailingAt(InMemoryGraphStore):
    """An in-memory graph store whose `fail_at`-th `upsert_entities` call raises before
    writing, as a server that goes down mid-load would; `fail_at = None` heals it.

    With `failure = KeyboardInterrupt` the call is Ctrl-C instead: SIGINT to this
    process, which `asyncio.run` turns into cancelling the load, as a user's key
    press would be."""

    def __init__(self, fail_at: int | None) -> None:
        super().__init__()
        self.fail_at = fail_at
        self.entity_calls = 0
        self.failure: type[BaseException] = StoreUnavailableError

    async def upsert_entities(self, entities: Sequence[Entity]) -> None:
        self.entity_calls += 1
        if self.entity_calls == self.fail_at:
            if self.failure is KeyboardInterrupt:
                os.kill(os.getpid(), signal.SIGINT)
                await asyncio.sleep(60)  # cancelled long before
            raise self.failure("the graph store went away")
        await super().upsert_entities(entities)


class VectorStoreFailingAt(InMemoryVectorStore):
    """An in-memory vector store whose `fail_at`-th call of `method` (`upsert`, or
    `delete`) raises `failure` before writing; `calls` counts that method's calls."""

    def __init__(self, dimension: int, fail_at: int | None, *, method: str = "upsert") -> None:
        super().__init__(dimension)
        self.fail_at, self.method = fail_at, method
        self.calls = 0
        self.failure: type[BaseException] = StoreUnavailableError

    def _called(self, method: str) -> None:
        if method == self.method:
            self.calls += 1
            if self.calls == self.fail_at:
                raise self.failure("the vector store went away")

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        self._called("upsert")
        await super().upsert(records)

    async def delete(self, entity_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
        self._called("delete")
        await super().delete(entity_ids, tenant_id)


class VectorStoreDownAt(VectorStoreFailingAt):
    """`VectorStoreFailingAt` that stays down once its `fail_at`-th `upsert` call has
    failed: every later call, reads of sources too, raises."""

    down = False

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        if self.down:
            raise StoreUnavailableError("the vector store is still down")
        try:
            await super().upsert(records)
        except StoreUnavailableError:
            self.down = True
            raise

    async def sources(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, str | None]:
        if self.down:
            raise StoreUnavailableError("the vector store is still down")
        return await super().sources(entity_ids, tenant_id)


@contextmanager
def loop_errors() -> Iterator[list[dict[str, Any]]]:
    """What the running loop's exception handler is given meanwhile: "Task exception was
    never retrieved" among them, once such a task is collected (`gc.collect()`)."""
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _, context: reported.append(context))
    try:
        yield reported
    finally:
        loop.set_exception_handler(previous)


async def raised_notes(
    work: Awaitable[object], expected: type[BaseException], match: str
) -> list[str]:
    """The notes of the error `work` raises (an `expected` whose message matches
    `match`), once asyncio had the chance to report a task whose failure nothing
    retrieved: none may be reported."""
    with loop_errors() as reported:
        with pytest.raises(expected, match=match) as raised:
            await work
        notes: list[str] = getattr(raised.value, "__notes__", [])
        del raised  # the traceback holds the tasks' frames
        gc.collect()
        await asyncio.sleep(0)
    assert [context["message"] for context in reported] == []
    return notes


class SlowVectorWrites(InMemoryVectorStore):
    """An in-memory vector store whose `upsert` lets the event loop run many turns before
    writing, as a remote store's round trip would: work started meanwhile (the next
    batch's reads) sees the vectors as they were before the write."""

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        for _ in range(100):
            await asyncio.sleep(0)
        await super().upsert(records)


class GatedVectorWrites(InMemoryVectorStore):
    """An in-memory vector store whose `upsert` sets `reached` and waits for `gate` before
    writing, as a round trip that other writers overtake; with `failing`, it then raises
    instead."""

    def __init__(self, dimension: int, *, failing: bool = False) -> None:
        super().__init__(dimension)
        self.reached, self.gate = asyncio.Event(), asyncio.Event()
        self.failing = failing

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        self.reached.set()
        await self.gate.wait()
        if self.failing:
            raise StoreUnavailableError("the vector store went away")
        await super().upsert(records)


class GatedDeletes(InMemoryGraphStore):
    """An in-memory graph store whose `delete_entities` sets `reached` and waits for
    `gate` before deleting, as a delete's round trip that other writers overtake."""

    def __init__(self) -> None:
        super().__init__()
        self.reached, self.gate = asyncio.Event(), asyncio.Event()

    async def delete_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> int:
        self.reached.set()
        await self.gate.wait()
        return await super().delete_entities(ids, tenant_id)


class ProviderChangingDimensionAt(HashingEmbeddingProvider):
    """The hashing provider, except that from its `from_call`-th `embed_documents` call on
    its vectors have one component more, as a model server switched to another model would
    answer."""

    def __init__(self, dimension: int, from_call: int) -> None:
        super().__init__(dimension)
        self.from_call = from_call
        self.calls = 0

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        vectors = await super().embed_documents(texts)
        return [[*v, 0.0] for v in vectors] if self.calls >= self.from_call else vectors


def services_over(
    graph: InMemoryGraphStore | None = None, vectors: InMemoryVectorStore | None = None
) -> Redstring:
    """Redstring with the hashing provider over these in-memory stores (fresh ones by default)."""
    return Redstring(
        embeddings=HashingEmbeddingProvider(DIMENSION),
        vectors=vectors or InMemoryVectorStore(DIMENSION),
        graph=graph or InMemoryGraphStore(),
    )


@dataclass(frozen=True)
class Snapshot:
    """Everything a tenant holds about the given entity ids, comparable with `==`."""

    entities: tuple[Entity, ...]
    relationships: tuple[Relationship, ...]
    vector_ids: frozenset[EntityId]
    vector_scores: tuple[tuple[EntityId, float], ...]


async def snapshot(services: Redstring, tenant: TenantId, ids: Sequence[EntityId]) -> Snapshot:
    entities = await services.graph.get_entities(ids, tenant)
    outgoing = await services.graph.relationships_of(ids, tenant)
    relationships = {r.id: r for rels in outgoing.values() for r in rels}
    probe = [1.0] + [0.0] * (services.vectors.dimension - 1)
    matches = await services.vectors.search(probe, tenant, k=1_000_000)
    return Snapshot(
        entities=tuple(sorted(entities, key=lambda e: str(e.id))),
        relationships=tuple(sorted(relationships.values(), key=lambda r: str(r.id))),
        vector_ids=frozenset(m.entity_id for m in matches),
        vector_scores=tuple(sorted((m.entity_id, m.score) for m in matches)),
    )


def ids_of(tenant: TenantId, names: Sequence[tuple[str, str]]) -> list[EntityId]:
    return [entity_id_for(tenant, entity_type, name) for name, entity_type in names]


def company_names(count: int) -> list[tuple[str, str]]:
    """`(name, type)` of `count` distinct companies."""
    return [(f"Company {i:04d} Holdings", "company") for i in range(count)]


def chain_lines(count: int) -> Iterator[str]:
    """`count` companies, each line after the first followed by a relationship to the
    previous company: a file whose relationships never wait for a later batch."""
    names = company_names(count)
    for i, (name, entity_type) in enumerate(names):
        yield entity_line(name, entity_type, description=f"number {i}")
        if i:
            yield relationship_line(names[i - 1], names[i], "SUPPLIES", confidence=0.5)
