"""`Redstring.check_vector_provenance`: a sample of the stored vectors' sources against
those the configured provider gives their entities' text now, in memory."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest

from redstring import (
    Entity,
    EntityId,
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    InvalidInputError,
    Provenance,
    Redstring,
    SourceSamples,
    TenantId,
    VectorProvenance,
    VectorRecord,
)
from redstring.composition.entity_vectors import provider_identity
from redstring.testing import make_entity, new_tenant
from tests.unit.test_observation import RecordingObserver

DIMENSION = 64


class OtherModel(HashingEmbeddingProvider):
    """Another model of the same dimension: vectors alike, another identity."""

    identity = "another model of the same dimension"  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__(DIMENSION)


def _client(
    embeddings: HashingEmbeddingProvider,
    vectors: InMemoryVectorStore,
    graph: InMemoryGraphStore,
) -> Redstring:
    return Redstring(embeddings=embeddings, vectors=vectors, graph=graph)


async def _written(
    names: Sequence[str], *, tenants: int = 1, entity_type: str = "org"
) -> tuple[InMemoryVectorStore, InMemoryGraphStore, list[Entity]]:
    """Stores holding `names` in each of `tenants` tenants, embedded by the hashing provider."""
    vectors, graph = InMemoryVectorStore(DIMENSION), InMemoryGraphStore()
    made = [new_tenant() for _ in range(tenants)]
    entities = [make_entity(tenant, name, entity_type) for tenant in made for name in names]
    await _client(HashingEmbeddingProvider(DIMENSION), vectors, graph).upsert(entities)
    return vectors, graph, entities


NAMES = ["Acme Corp", "Globex", "Initech", "Umbrella", "Hooli"]


async def test_vectors_of_another_model_of_the_same_dimension_are_outdated() -> None:
    vectors, graph, _ = await _written(NAMES, tenants=2)
    found = await _client(OtherModel(), vectors, graph).check_vector_provenance()
    assert found == VectorProvenance(
        OtherModel.identity, sampled=10, differing=10, tenants=2, stale_tenants=2
    )
    assert found.verdict is Provenance.OUTDATED
    warning = found.warning()
    assert warning is not None
    assert warning.startswith("stored vectors: none of the 10 sampled (of 2 tenants)")
    assert "(another model of the same dimension)" in warning
    assert "`redstring rekey --all-tenants --vectors`" in warning
    assert "configure the provider they were made with" in warning


async def test_vectors_of_the_configured_provider_are_current_and_say_nothing() -> None:
    vectors, graph, _ = await _written(NAMES, tenants=2)
    same = HashingEmbeddingProvider(DIMENSION)
    found = await _client(same, vectors, graph).check_vector_provenance()
    assert found == VectorProvenance("hashing/64", sampled=10, current=10, tenants=2)
    assert found.verdict is Provenance.CURRENT
    assert found.warning() is None


async def test_empty_stores_have_nothing_to_say() -> None:
    client = Redstring.in_memory(HashingEmbeddingProvider(DIMENSION))
    found = await client.check_vector_provenance()
    assert found == VectorProvenance("hashing/64")
    assert found.verdict is Provenance.NO_VECTORS
    assert found.warning() is None


async def test_the_sample_is_bounded_and_read_once_with_one_entity_read_a_tenant() -> None:
    vectors, graph, _ = await _written(NAMES, tenants=6)
    observer = RecordingObserver()
    watched = _client(OtherModel(), vectors, graph).observed(observer)
    assert isinstance(watched.vectors, SourceSamples)
    found = await watched.check_vector_provenance(sample_size=4)
    assert (found.sampled, found.differing, found.tenants) == (4, 4, 4)
    assert Counter(observer.store_calls) == {
        ("vector", "sample_sources", False): 1,
        ("graph", "get_entities", False): 4,
        ("vector", "sources", False): 4,  # each differing vector read again
    }
    assert observer.embeddings == []  # nothing is embedded
    with pytest.raises(InvalidInputError, match=r"^sample_size must be at least 1"):
        await watched.check_vector_provenance(sample_size=0)


async def test_a_tenant_re_keyed_and_another_not_is_a_mixed_sample() -> None:
    vectors, graph, entities = await _written(NAMES, tenants=2)
    client = _client(OtherModel(), vectors, graph)
    await client.rekey(entities[0].tenant_id, vectors=True)
    found = await client.check_vector_provenance()
    assert found == VectorProvenance(
        OtherModel.identity, sampled=10, current=5, differing=5, tenants=2, stale_tenants=1
    )
    assert found.verdict is Provenance.MIXED
    warning = found.warning()
    assert warning is not None
    assert warning.startswith("stored vectors: 5 of the 10 sampled (in 1 of 2 tenants) are not")
    assert "and 5 are" in warning
    assert "A re-keying not finished" in warning
    await client.rekey(entities[-1].tenant_id, vectors=True)
    assert (await client.check_vector_provenance()).verdict is Provenance.CURRENT


async def test_vectors_stored_without_a_source_cannot_be_told_and_say_so() -> None:
    """Stored by a version before sources were, or by a caller of the bare store."""
    embeddings = HashingEmbeddingProvider(DIMENSION)
    vectors, graph, entities = await _written(NAMES[:2])
    tenant = entities[0].tenant_id
    bare = [make_entity(tenant, name, "org") for name in ("Vandelay", "Wonka")]
    await graph.upsert_entities(bare)
    made = await embeddings.embed_documents([e.embedding_text() for e in bare])
    await vectors.upsert(
        [
            VectorRecord(entity_id=e.id, tenant_id=tenant, vector=v, entity_type=e.entity_type)
            for e, v in zip(bare, made, strict=True)
        ]
    )
    found = await _client(embeddings, vectors, graph).check_vector_provenance()
    assert (found.current, found.unsourced, found.verdict) == (2, 2, Provenance.MIXED)
    warning = found.warning()
    assert warning is not None
    assert "2 stored without a source" in warning

    await vectors.delete([e.id for e in entities], tenant)
    alone = await _client(embeddings, vectors, graph).check_vector_provenance()
    assert (alone.unsourced, alone.verdict) == (2, Provenance.OUTDATED)
    assert "Whether this provider made them cannot be told" in (alone.warning() or "")


async def test_vectors_whose_entity_is_gone_and_texts_without_a_vector_are_not_judged() -> None:
    """A vector left behind by a delete (docs/adr/0004) judges nothing, nor does an
    entity whose text embeds to no direction (`!!!. …`), which has no vector to sample."""
    vectors, graph, entities = await _written(["Acme Corp", "!!!"], entity_type="…")
    tenant = entities[0].tenant_id
    await graph.delete_entities([entities[0].id], tenant)  # its vector stays
    found = await _client(OtherModel(), vectors, graph).check_vector_provenance()
    assert found == VectorProvenance(OtherModel.identity, sampled=1, gone=1)
    assert found.verdict is Provenance.NO_VECTORS
    assert found.warning() is None


class _WrittenMeanwhile(InMemoryGraphStore):
    """A graph store that lets another writer finish (`writes`) before its next read."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[Sequence[Entity]] = []
        self.writer: Redstring | None = None

    async def get_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> list[Entity]:
        while self.writes and self.writer is not None:
            await self.writer.upsert(self.writes.pop(0))
        return await super().get_entities(ids, tenant_id)


async def test_an_entity_renamed_between_the_sample_and_its_read_is_current() -> None:
    """The writer deletes the sampled vector, writes the entity, then the new vector: the
    source read again after the entity is the one of its new text."""
    embeddings = HashingEmbeddingProvider(DIMENSION)
    vectors, graph = InMemoryVectorStore(DIMENSION), _WrittenMeanwhile()
    client = _client(embeddings, vectors, graph)
    tenant = new_tenant()
    entities = [make_entity(tenant, name, "org") for name in NAMES]
    await client.upsert(entities)
    graph.writer = client
    graph.writes.append([entities[1].model_copy(update={"name": "Globex Corporation"})])
    found = await client.check_vector_provenance()
    assert found == VectorProvenance("hashing/64", sampled=5, current=5, tenants=1)


async def test_a_vector_store_that_reads_no_sample_is_not_checked() -> None:
    class Plain(InMemoryVectorStore):
        """What a vector store of one's own written before `SourceSamples` looks like."""

        sample_sources = None  # type: ignore[assignment]

    vectors = Plain(DIMENSION)
    assert not isinstance(vectors, SourceSamples)
    client = _client(HashingEmbeddingProvider(DIMENSION), vectors, InMemoryGraphStore())
    watched = client.observed(RecordingObserver())
    assert not isinstance(watched.vectors, SourceSamples)
    found = await watched.check_vector_provenance()
    assert found == VectorProvenance("hashing/64", checked=False)
    assert found.verdict is Provenance.UNCHECKED
    assert found.warning() is None
    assert found.summary().startswith("not checked")


def test_the_report_names_the_provider_as_sources_do() -> None:
    provider = HashingEmbeddingProvider(DIMENSION)
    assert VectorProvenance(provider_identity(provider)).provider == provider.identity
