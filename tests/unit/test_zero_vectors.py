"""Vectors without direction (text that embeds to zeros) are never stored or searched with,
and the lexical channel answers as if the semantic one were off."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from redstring import (
    EmbeddingProvider,
    Entity,
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    RetrievalMode,
    Retriever,
    TenantId,
    VectorRecord,
    VectorStore,
    build_graph,
)
from redstring.composition.client import Redstring
from redstring.composition.ingest import ingest
from redstring.domain.vectors import has_direction, rows_with_direction, vector_source
from redstring.testing import make_entity, new_tenant

from .doubles import (
    CountingDeletes,
    DirectionlessFor,
    OverflowingFor,
    RefusingDirectionlessVectors,
)

DIM = 64
# Name and type both without letters or digits: the hashing provider embeds them to zeros.
FEATURELESS = (("!", "…"), ("🙂", "🙂"), ("\u0301", "--"))


@pytest.mark.parametrize(
    ("component", "direction"),
    [
        (0.0, False),
        (-0.0, False),
        (1e-300, False),
        (2.0**-150, False),  # rounds to float32 zero: lost in a store
        (2.0**-149, True),  # float32's smallest subnormal
        (-1e-30, True),
        (1.0, True),
    ],
)
def test_a_direction_is_a_component_nonzero_at_float32(component: float, direction: bool) -> None:
    vector = [0.0, component, 0.0]
    assert has_direction(vector) is direction
    assert has_direction(np.asarray(vector, dtype=np.float32)) is direction
    matrix = np.array([vector, [0.0, 0.0, 1.0], [0.0] * 3])
    assert rows_with_direction(matrix).tolist() == [direction, True, False]


@pytest.mark.parametrize("text", ["!", "...", "🙂", "\u0301", "!. …"])
async def test_the_hashing_provider_embeds_featureless_text_without_direction(text: str) -> None:
    [vector] = await HashingEmbeddingProvider(DIM).embed_query([text])
    assert not has_direction(vector)


async def _retriever(
    embeddings: EmbeddingProvider, vectors: VectorStore, *names: tuple[str, str]
) -> tuple[Retriever, TenantId]:
    tenant = new_tenant()
    entities = [make_entity(tenant, name, entity_type) for name, entity_type in names]
    graph = InMemoryGraphStore()
    await build_graph(entities, embeddings=embeddings, vectors=vectors, graph=graph)
    retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
    return retriever, tenant


NAMES = (("Acme Corp", "org"), ("Acme Widgets", "org"), ("Apex Corporation", "org"))


async def test_a_query_without_direction_gets_exactly_the_lexical_ranking() -> None:
    # "ACME" (upper case) marks the query alone: the entities' texts keep their vectors.
    embeddings = DirectionlessFor(DIM, "ACME")
    retriever, tenant = await _retriever(
        embeddings, RefusingDirectionlessVectors(DIM), *NAMES, ("Ada Lovelace", "person")
    )
    lexical = await retriever.retrieve("ACME Corp", tenant, k=10, mode=RetrievalMode.LEXICAL)
    hybrid = await retriever.retrieve("ACME Corp", tenant, k=10, mode=RetrievalMode.HYBRID)
    assert [m.entity.name for m in lexical.matches] == ["Acme Corp", "Acme Widgets"]
    assert hybrid.matches == lexical.matches
    assert all(m.semantic is None and m.lexical is not None for m in hybrid.matches)
    semantic = await retriever.retrieve("ACME Corp", tenant, k=10, mode=RetrievalMode.SEMANTIC)
    assert semantic.matches == ()
    # The same query with a direction still gets a semantic channel.
    normal = await retriever.retrieve("Acme Corp", tenant, k=10, mode=RetrievalMode.HYBRID)
    assert all(m.semantic is not None for m in normal.matches)


@pytest.mark.parametrize("store", [InMemoryVectorStore, RefusingDirectionlessVectors])
async def test_entities_without_direction_break_no_retrieve_of_their_tenant(
    store: type[InMemoryVectorStore],
) -> None:
    retriever, tenant = await _retriever(
        HashingEmbeddingProvider(DIM), store(DIM), *NAMES, *FEATURELESS
    )
    featureless = {name for name, _ in FEATURELESS}
    for mode in RetrievalMode:
        found = await retriever.retrieve("Acme Corp", tenant, k=10, mode=mode)
        assert found.matches
        assert not featureless & {m.entity.name for m in found.matches}, mode
        for query in ("...", "!", "🙂"):
            assert (await retriever.retrieve(query, tenant, k=10, mode=mode)).matches == ()


async def test_an_entity_without_direction_is_still_found_lexically() -> None:
    # "Zero" marks the document text of one entity; queries never hold it.
    embeddings = DirectionlessFor(DIM, "Zero")
    retriever, tenant = await _retriever(
        embeddings, RefusingDirectionlessVectors(DIM), *NAMES, ("Acme Zero", "org")
    )
    found = await retriever.retrieve("acme zero", tenant, k=10, mode=RetrievalMode.HYBRID)
    [zero] = [m for m in found.matches if m.entity.name == "Acme Zero"]
    assert zero.semantic is None
    assert zero.lexical is not None
    semantic = await retriever.retrieve("acme zero", tenant, k=10, mode=RetrievalMode.SEMANTIC)
    assert "Acme Zero" not in {m.entity.name for m in semantic.matches}


@pytest.mark.parametrize("store", [InMemoryVectorStore, RefusingDirectionlessVectors])
@pytest.mark.parametrize("path", ["build_graph", "ingest"])
async def test_an_entity_renamed_to_text_without_direction_loses_its_old_vector(
    store: type[InMemoryVectorStore], path: str
) -> None:
    embeddings, vectors, graph = HashingEmbeddingProvider(DIM), store(DIM), InMemoryGraphStore()
    tenant = new_tenant()
    acme = make_entity(tenant, "Acme Corp", "org")
    renamed = make_entity(tenant, "!", "…", entity_id=acme.id)
    services = Redstring(embeddings=embeddings, vectors=vectors, graph=graph)
    for batch in ([acme], [make_entity(tenant, "Acme Corp", "?"), renamed]):
        if path == "build_graph":
            await build_graph(batch, embeddings=embeddings, vectors=vectors, graph=graph)
        else:
            await ingest(enumerate(batch, start=1), services)
    [query] = await embeddings.embed_query(["Acme Corp. org"])
    found = await vectors.search(query, tenant, k=10)
    assert acme.id not in {m.entity_id for m in found}
    assert len(found) == 1  # the other entity's vector is written beside the deletion
    # The last of an id in one batch decides: back to a name with a direction.
    back = make_entity(tenant, "Acme Corp", "org", entity_id=acme.id)
    await build_graph([renamed, back], embeddings=embeddings, vectors=vectors, graph=graph)
    assert acme.id in {m.entity_id for m in await vectors.search(query, tenant, k=10)}


async def _write(
    path: str, batch: list[Entity], services: Redstring, *, batch_size: int = 10
) -> None:
    if path == "build_graph":
        await build_graph(
            batch,
            embeddings=services.embeddings,
            vectors=services.vectors,
            graph=services.graph,
            batch_size=batch_size,
        )
    else:
        await ingest(enumerate(batch, start=1), services, batch_size=batch_size)


@pytest.mark.parametrize("path", ["build_graph", "ingest"])
@pytest.mark.parametrize("batches", ["apart", "one after the other"])
async def test_an_entity_renamed_to_text_without_direction_costs_one_vector_delete(
    path: str, batches: str
) -> None:
    """Deleted once, before its entity is written (`delete_replaced`), as a renamed
    entity's vector is; written again as it is, it costs no delete at all. "one after
    the other": the rename comes in the batch after the one writing its vector."""
    embeddings, vectors = HashingEmbeddingProvider(DIM), CountingDeletes(DIM)
    services = Redstring(embeddings=embeddings, vectors=vectors, graph=InMemoryGraphStore())
    tenant = new_tenant()
    acme, apex = make_entity(tenant, "Acme Corp", "org"), make_entity(tenant, "Apex", "org")
    renamed = make_entity(tenant, "!", "…", entity_id=acme.id)
    if batches == "apart":
        await _write(path, [acme, apex], services)
        await _write(path, [renamed, make_entity(tenant, "Zeta", "org")], services)
    else:
        await _write(path, [acme, apex, renamed], services, batch_size=2)
    assert vectors.deleted == [(tenant, [acme.id])]
    assert await vectors.sources([acme.id, apex.id], tenant) == {
        apex.id: vector_source(embeddings.identity, apex.embedding_text())
    }
    await _write(path, [renamed], services)
    assert vectors.deleted == [(tenant, [acme.id])]
    assert await services.graph.get_entities([acme.id], tenant) == [renamed]


class _VectorLandingFirst(InMemoryGraphStore):
    """A graph store that, before writing an entity named `name`, lets another writer's
    vector of that entity (of its text before) land in `vectors`: after the writer's
    `delete_replaced`, before its entity write."""

    def __init__(self, vectors: InMemoryVectorStore, name: str, vector: list[float]) -> None:
        super().__init__()
        self.vectors, self.name, self.vector = vectors, name, vector

    async def upsert_entities(self, entities: Sequence[Entity]) -> None:
        for entity in entities:
            if entity.name == self.name:
                record = VectorRecord(
                    entity_id=entity.id,
                    tenant_id=entity.tenant_id,
                    vector=self.vector,
                    entity_type="org",
                    source="another writer's",
                )
                await self.vectors.upsert([record])
        await super().upsert_entities(entities)


@pytest.mark.parametrize("path", ["build_graph", "ingest"])
async def test_a_vector_landing_before_a_rename_to_text_without_direction_is_deleted(
    path: str,
) -> None:
    """Another writer's vector of the old name, written between this writer's delete and
    its entity write: its read-back (`settle`) finds it and deletes it."""
    embeddings, vectors = HashingEmbeddingProvider(DIM), InMemoryVectorStore(DIM)
    tenant = new_tenant()
    acme = make_entity(tenant, "Acme Corp", "org")
    [old] = await embeddings.embed_documents([acme.embedding_text()])
    graph = _VectorLandingFirst(vectors, "!", old)
    services = Redstring(embeddings=embeddings, vectors=vectors, graph=graph)
    await _write(path, [acme], services)
    await _write(path, [make_entity(tenant, "!", "…", entity_id=acme.id)], services)
    assert await vectors.sources([acme.id], tenant) == {}
    assert await vectors.search(old, tenant, k=10) == []


@pytest.mark.parametrize("path", ["build_graph", "ingest"])
async def test_an_embedding_infinite_at_float32_is_refused_before_any_write(path: str) -> None:
    embeddings, vectors, graph = (
        OverflowingFor(DIM, "Huge"),
        InMemoryVectorStore(DIM),
        InMemoryGraphStore(),
    )
    tenant = new_tenant()
    batch = [make_entity(tenant, "Acme Corp", "org"), make_entity(tenant, "Huge Corp", "org")]
    services = Redstring(embeddings=embeddings, vectors=vectors, graph=graph)
    write = (
        build_graph(batch, embeddings=embeddings, vectors=vectors, graph=graph)
        if path == "build_graph"
        else ingest(enumerate(batch, start=1), services)
    )
    with pytest.raises(ValueError, match="infinite"):
        await write
    assert await graph.get_entities([e.id for e in batch], tenant) == []
