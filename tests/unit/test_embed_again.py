"""`embed_again` and `rekey(vectors)`: stored vectors embedded again from the entities as
stored, with renames and deletions made meanwhile left as their writers left them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import pytest

from redstring import (
    DimensionMismatchError,
    Entity,
    EntityId,
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    Redstring,
    RekeyReport,
    StaticEmbeddingProvider,
    TenantId,
    VectorRecord,
)
from redstring.composition.embed_again import MAX_PASSES, EmbeddedAgain, embed_again, settle
from redstring.composition.entity_vectors import provider_identity
from redstring.composition.observer import NO_OBSERVER
from redstring.composition.rekey import rekey
from redstring.domain.vectors import vector_source
from redstring.testing import make_entity, new_tenant

DIMENSION = 64


class Embeddings(HashingEmbeddingProvider):
    """The hashing provider, counting the documents it embeds, and running `meanwhile`
    before it embeds: another writer's work."""

    def __init__(self) -> None:
        super().__init__(DIMENSION)
        self.documents = 0
        self.meanwhile: list[Callable[[], Awaitable[None]]] = []

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.documents += len(texts)
        while self.meanwhile:
            await self.meanwhile.pop(0)()
        return await super().embed_documents(texts)


async def _stored_as(vectors: InMemoryVectorStore, entity: Entity) -> bool:
    """Whether `entity`'s stored vector is the one of its `embedding_text`."""
    [vector] = await HashingEmbeddingProvider(DIMENSION).embed_documents([entity.embedding_text()])
    nearest = await vectors.search(vector, entity.tenant_id, k=1)
    return bool(nearest) and nearest[0].entity_id == entity.id and nearest[0].score > 0.9999


async def _has_vector(vectors: InMemoryVectorStore, entity_id: EntityId, tenant: TenantId) -> bool:
    [probe] = await HashingEmbeddingProvider(DIMENSION).embed_query(["anything"])
    return entity_id in {m.entity_id for m in await vectors.search(probe, tenant, k=100)}


async def _stores_with_stale_vectors(
    names: list[str],
) -> tuple[list[Entity], InMemoryGraphStore, InMemoryVectorStore, Embeddings]:
    """A tenant whose entities' vectors embed another text than theirs (a former version's)."""
    tenant = new_tenant()
    entities = [make_entity(tenant, name, "org") for name in names]
    graph, vectors, embeddings = InMemoryGraphStore(), InMemoryVectorStore(DIMENSION), Embeddings()
    await graph.upsert_entities(entities)
    olds = await HashingEmbeddingProvider(DIMENSION).embed_documents([e.name for e in entities])
    await vectors.upsert(
        [
            VectorRecord(entity_id=e.id, tenant_id=tenant, vector=old, entity_type=e.entity_type)
            for e, old in zip(entities, olds, strict=True)
        ]
    )
    return entities, graph, vectors, embeddings


async def test_every_vector_is_embedded_again_from_its_entity() -> None:
    entities, graph, vectors, embeddings = await _stores_with_stale_vectors(
        ["Acme Widgets", "Blue Harbour Bank", "Москва"]
    )
    assert not any([await _stored_as(vectors, e) for e in entities])

    again = await embed_again(entities, embeddings=embeddings, vectors=vectors, graph=graph)

    assert again == EmbeddedAgain(embedded=3, unsettled=0)
    assert all([await _stored_as(vectors, e) for e in entities])
    assert embeddings.documents == 3  # read back as embedded: one pass


async def test_a_rename_and_a_deletion_meanwhile_are_what_the_vectors_end_as() -> None:
    """Both happen, graph then vector as writers do, after the page was read and before
    its vectors are written: written blindly, the renamed entity would keep the old
    name's vector and the deleted one a vector of no entity."""
    entities, graph, vectors, embeddings = await _stores_with_stale_vectors(
        ["Acme Widgets", "Blue Harbour Bank", "Cobalt Mining"]
    )
    acme, blue, cobalt = entities
    renamed = make_entity(acme.tenant_id, "Northwind Traders", "org", entity_id=blue.id)

    async def rename_and_delete() -> None:
        await graph.upsert_entities([renamed])
        [vector] = await HashingEmbeddingProvider(DIMENSION).embed_documents(
            [renamed.embedding_text()]
        )
        await vectors.upsert(
            [
                VectorRecord(
                    entity_id=blue.id, tenant_id=blue.tenant_id, vector=vector, entity_type="org"
                )
            ]
        )
        await vectors.delete([cobalt.id], cobalt.tenant_id)
        await graph.delete_entities([cobalt.id], cobalt.tenant_id)

    embeddings.meanwhile.append(rename_and_delete)

    again = await embed_again(entities, embeddings=embeddings, vectors=vectors, graph=graph)

    assert again == EmbeddedAgain(embedded=3, unsettled=0)
    assert await _stored_as(vectors, acme)
    assert await _stored_as(vectors, renamed)
    assert not await _has_vector(vectors, cobalt.id, cobalt.tenant_id)


async def test_an_entity_renamed_on_every_read_back_is_left_unsettled() -> None:
    entities, _, vectors, embeddings = await _stores_with_stale_vectors(["Acme", "Blue"])

    class Renaming(InMemoryGraphStore):
        """Renames the first entity before answering each read-back of it (the read of
        the texts; those that differ are then read whole)."""

        renamed = 0

        async def embedding_texts(
            self, ids: Sequence[EntityId], tenant_id: TenantId
        ) -> dict[EntityId, str]:
            self.renamed += 1
            name = f"Acme {self.renamed}"
            await self.upsert_entities([entities[0].model_copy(update={"name": name})])
            return await super().embedding_texts(ids, tenant_id)

    graph = Renaming()
    await graph.upsert_entities(entities)

    again = await embed_again(entities, embeddings=embeddings, vectors=vectors, graph=graph)

    assert again == EmbeddedAgain(embedded=2, unsettled=1)
    assert graph.renamed == MAX_PASSES


class _ThenMeanwhile(InMemoryGraphStore):
    """Runs `meanwhile` (another writer's work) once, after answering its first read."""

    def __init__(self) -> None:
        super().__init__()
        self.meanwhile: list[Callable[[], Awaitable[None]]] = []

    async def get_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> list[Entity]:
        found = await super().get_entities(ids, tenant_id)
        while self.meanwhile:
            await self.meanwhile.pop(0)()
        return found


async def _written(entity: Entity, graph: InMemoryGraphStore, vectors: InMemoryVectorStore) -> None:
    """`entity` and its vector written, as a writer writes them: the entity first."""
    await graph.upsert_entities([entity])
    [vector] = await HashingEmbeddingProvider(DIMENSION).embed_documents([entity.embedding_text()])
    source = vector_source(provider_identity(Embeddings()), entity.embedding_text())
    await vectors.upsert(
        [
            VectorRecord(
                entity_id=entity.id,
                tenant_id=entity.tenant_id,
                vector=vector,
                entity_type=entity.entity_type,
                source=source,
            )
        ]
    )


async def test_settle_deletes_the_vector_of_an_entity_the_read_back_does_not_find() -> None:
    """A writer's vector landed after a delete of its entity (vector, then entity) ran
    whole: the read-back after the write finds no entity, and its vector goes."""
    tenant = new_tenant()
    graph, vectors, embeddings = _ThenMeanwhile(), InMemoryVectorStore(DIMENSION), Embeddings()
    acme, blue = make_entity(tenant, "Acme Widgets", "org"), make_entity(tenant, "Blue", "org")
    await _written(acme, graph, vectors)
    await _written(blue, graph, vectors)
    await graph.delete_entities([acme.id], tenant)  # the delete, then the vector write

    again = await settle([acme, blue], embeddings=embeddings, vectors=vectors, graph=graph)

    assert again == EmbeddedAgain(embedded=0, unsettled=0)
    assert await vectors.sources([acme.id, blue.id], tenant) == {
        blue.id: vector_source("hashing/64", blue.embedding_text())
    }
    assert embeddings.documents == 0


async def test_settle_embeds_an_entity_made_again_after_its_read_back_found_none() -> None:
    """Another writer makes the entity again (entity, then vector) between the read-back
    that found it gone and the deletion of its vector: read back again, it is embedded
    and keeps a vector of its text."""
    tenant = new_tenant()
    graph, vectors, embeddings = _ThenMeanwhile(), InMemoryVectorStore(DIMENSION), Embeddings()
    acme = make_entity(tenant, "Acme Widgets", "org")
    await _written(acme, graph, vectors)
    await graph.delete_entities([acme.id], tenant)
    again = make_entity(tenant, "Acme Widgets Reborn", "org", entity_id=acme.id)

    async def make_again() -> None:
        await _written(again, graph, vectors)

    graph.meanwhile.append(make_again)

    await settle([acme], embeddings=embeddings, vectors=vectors, graph=graph)

    assert await graph.get_entities([acme.id], tenant) == [again]
    assert await _stored_as(vectors, again)


@pytest.mark.parametrize("renamed", [False, True], ids=["as-written", "renamed"])
async def test_settle_leaves_a_directionless_entity_alone_until_renamed(renamed: bool) -> None:
    """An entity the writer found to embed to no direction has no vector and is left so
    while the graph holds the text it embedded; renamed meanwhile by another writer
    whose vector has not landed, it is embedded as it now is."""
    tenant = new_tenant()
    graph, vectors, embeddings = InMemoryGraphStore(), InMemoryVectorStore(DIMENSION), Embeddings()
    blank = make_entity(tenant, "Acme Widgets", "org")  # taken as without direction
    now = make_entity(tenant, "Zephyr Holdings", "org", entity_id=blank.id) if renamed else blank
    await graph.upsert_entities([now])

    again = await settle(
        [blank],
        embeddings=embeddings,
        vectors=vectors,
        graph=graph,
        directionless={tenant: [blank.id]},
    )

    assert again == EmbeddedAgain(embedded=int(renamed), unsettled=0)
    assert await _has_vector(vectors, blank.id, tenant) is renamed
    if renamed:
        assert await _stored_as(vectors, now)


async def test_settle_deletes_the_vector_of_an_entity_gone_before_it_is_read_whole() -> None:
    """The read-back of texts finds the entity renamed; it is deleted before the read of
    the entities that differ: its vector goes, nothing is embedded."""
    tenant = new_tenant()
    acme = make_entity(tenant, "Acme Widgets", "org")
    renamed = make_entity(tenant, "Zephyr Holdings", "org", entity_id=acme.id)

    class DeletedAfterTexts(InMemoryGraphStore):
        async def embedding_texts(
            self, ids: Sequence[EntityId], tenant_id: TenantId
        ) -> dict[EntityId, str]:
            found = await super().embedding_texts(ids, tenant_id)
            await self.delete_entities([acme.id], tenant)
            return found

    graph, vectors, embeddings = DeletedAfterTexts(), InMemoryVectorStore(DIMENSION), Embeddings()
    await _written(acme, graph, vectors)
    await graph.upsert_entities([renamed])  # another writer's, its vector not yet written

    again = await settle([acme], embeddings=embeddings, vectors=vectors, graph=graph)

    assert again == EmbeddedAgain(embedded=0, unsettled=0)
    assert not await _has_vector(vectors, acme.id, tenant)
    assert embeddings.documents == 0


async def test_rekey_with_vectors_embeds_those_not_made_as_stored() -> None:
    """Vectors stored without a source, or of another text, or by another model: each
    is embedded again once; a second run finds every vector current."""
    entities, graph, vectors, embeddings = await _stores_with_stale_vectors(
        [f"Acme {i}" for i in range(5)]
    )
    tenant = entities[0].tenant_id
    pages: list[RekeyReport] = []

    dry = await rekey(graph, tenant, dry_run=True, embeddings=embeddings, vectors=vectors)
    assert dry == RekeyReport(read=5, stale_vectors=5)
    assert embeddings.documents == 0

    report = await rekey(
        graph, tenant, page_size=2, embeddings=embeddings, vectors=vectors, on_page=pages.append
    )
    assert report == RekeyReport(read=5, stale_vectors=5, embedded=5)
    assert [page.embedded for page in pages] == [2, 4, 5]
    assert all([await _stored_as(vectors, e) for e in entities])
    assert await rekey(graph, tenant, embeddings=embeddings, vectors=vectors) == RekeyReport(read=5)
    assert embeddings.documents == 5

    renamed = entities[3].model_copy(update={"name": "Northwind"})
    await graph.upsert_entities([renamed])  # a writer that failed before its vector
    await vectors.delete([entities[4].id], tenant)
    report = await rekey(graph, tenant, embeddings=embeddings, vectors=vectors)
    assert report == RekeyReport(read=5, stale_vectors=2, embedded=2)
    assert await _stored_as(vectors, renamed)

    class OtherModel(Embeddings):
        identity = "another model of the same dimension"

    report = await rekey(graph, tenant, embeddings=OtherModel(), vectors=vectors)
    assert report == RekeyReport(read=5, stale_vectors=5, embedded=5)


async def test_rekey_leaves_an_entity_without_direction_and_without_a_vector_current() -> None:
    """Text that embeds to no direction is to have no vector (`EntityVectors`): without one
    it is current, on every run; with the vector of an earlier text it is stale, and that
    vector is deleted. An entity without a vector is embedded once a run, not once to
    tell whether it has a direction and again to write its vector."""
    tenant = new_tenant()
    graph, vectors, embeddings = InMemoryGraphStore(), InMemoryVectorStore(DIMENSION), Embeddings()
    acme = make_entity(tenant, "Acme Widgets", "org")
    bare = make_entity(tenant, "!", "…")  # the hashing provider embeds it to zeros
    was = make_entity(tenant, "Acme Gadgets", "org")
    blue = make_entity(tenant, "Blue Harbour Bank", "org")
    for entity in (acme, was):
        await _written(entity, graph, vectors)
    renamed = make_entity(tenant, "!!!", "…", entity_id=was.id)
    await graph.upsert_entities([bare, renamed, blue])  # `was` keeps its old name's vector

    dry = await rekey(graph, tenant, dry_run=True, embeddings=embeddings, vectors=vectors)
    assert dry == RekeyReport(read=4, stale_vectors=2)
    assert embeddings.documents == 2  # `bare` and `blue`, which have no vector

    report = await rekey(graph, tenant, embeddings=embeddings, vectors=vectors)
    assert report == RekeyReport(read=4, stale_vectors=2, embedded=2, directionless=1)
    assert embeddings.documents == 2 + 3  # `bare`, `blue` and `renamed`, once each
    ids = [acme.id, bare.id, was.id, blue.id]
    assert set(await vectors.sources(ids, tenant)) == {acme.id, blue.id}
    assert await _stored_as(vectors, blue)

    again = await rekey(graph, tenant, dry_run=True, embeddings=embeddings, vectors=vectors)
    assert again == RekeyReport(read=4)
    assert await rekey(graph, tenant, embeddings=embeddings, vectors=vectors) == RekeyReport(read=4)


async def test_rekey_embeds_with_both_parts_or_neither_and_of_one_dimension() -> None:
    graph, tenant = InMemoryGraphStore(), new_tenant()
    with pytest.raises(ValueError, match="both embeddings and vectors, or neither"):
        await rekey(graph, tenant, embeddings=Embeddings())
    with pytest.raises(DimensionMismatchError):
        await rekey(graph, tenant, embeddings=Embeddings(), vectors=InMemoryVectorStore(32))


async def test_what_a_client_writes_is_current_however_observed_or_cached() -> None:
    """The sources `upsert` stores are those `rekey` expects: wrappers (the query cache,
    an observed client, as `redstring serve` runs one) pass their provider's identity on."""
    tenant = new_tenant()
    entities = [make_entity(tenant, name, "org") for name in ("Acme", "Москва", "AT&T")]
    async with Redstring.in_memory(query_cache_size=8) as client:
        watched = client.observed(NO_OBSERVER)
        await watched.upsert(entities)
        report = await client.rekey(tenant, vectors=True)
        assert report == RekeyReport(read=3)
        identities = {provider_identity(c.embeddings) for c in (client, watched)}
        assert identities == {provider_identity(StaticEmbeddingProvider())}


def test_providers_name_their_model_and_sources_differ_by_each_part() -> None:
    assert StaticEmbeddingProvider().identity.startswith("static/shipped/")
    assert HashingEmbeddingProvider(64).identity != HashingEmbeddingProvider(32).identity
    assert provider_identity(Embeddings()) == "hashing/64"
    sources = {
        vector_source("hashing/64", "Acme. org"),
        vector_source("hashing/32", "Acme. org"),
        vector_source("hashing/64", "Acme (ACME). org"),
    }
    assert len(sources) == 3
    assert vector_source("hashing/64", "Acme. org") == vector_source("hashing/64", "Acme. org")
