"""`embed_again`: the vectors of entities as stored, embedded anew and written over theirs.

A vector is derived from an entity's `embedding_text` when the entity is
written. When a version embeds other text (aliases, a romanised name), or a
store's vectors came from another model of the same dimension, the stored
vectors stay as they were until their entities are written again; this
writes them again from the entities as the graph store holds them.

The vector store cannot check what the graph store holds, so a write is
not made conditional; it is checked after. Writers write an entity before
its vector, so once the entity read after our vector write embeds the text
we wrote, any later change of it is followed by its writer's vector write.
When it embeds another text (renamed meanwhile), or the entity is gone,
that state is written and read back in turn, until it holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from redstring.composition.entity_vectors import (
    EntityVectors,
    embed_entities,
    ids_by_tenant,
    provider_identity,
)
from redstring.domain.entity import Entity
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.vectors import vector_source
from redstring.ports.embedding_provider import EmbeddingProvider
from redstring.ports.graph_store import GraphReader, embedding_texts_of
from redstring.ports.vector_store import VectorStore

# How many times an entity's vector is written and read back before it is left to the
# writer that keeps changing it (`EmbeddedAgain.unsettled`).
MAX_PASSES = 5


@dataclass(frozen=True)
class EmbeddedAgain:
    """`embedded`: entities whose vectors were embedded and written again; `unsettled`:
    those of them still changed by another writer after `MAX_PASSES` writes."""

    embedded: int
    unsettled: int


NOTHING_EMBEDDED = EmbeddedAgain(embedded=0, unsettled=0)


async def embed_again(
    entities: Sequence[Entity],
    *,
    embeddings: EmbeddingProvider,
    vectors: VectorStore,
    graph: GraphReader,
    embedded: EntityVectors | None = None,
) -> EmbeddedAgain:
    """Embed `entities` (one tenant's, as read from `graph`) and write their vectors,
    then read them back from `graph` until each is stored as the text last embedded:
    one renamed meanwhile is embedded again, one deleted meanwhile loses its vector.
    `embedded`, when given, is `embed_entities` of `entities`, made already: the
    first write is of it, and nothing of `entities` is embedded twice.

    A vector we write after a delete removed the vectors and before it removed the
    entity, read back before that removal, goes with the delete's second removal
    of the vectors, after the entities (`Redstring.delete`)."""
    if not entities:
        return NOTHING_EMBEDDED
    unsettled = await _write_until_read_back(
        entities[0].tenant_id,
        list(entities),
        [],
        embeddings=embeddings,
        vectors=vectors,
        graph=graph,
        embedded=embedded,
    )
    return EmbeddedAgain(embedded=len(entities), unsettled=unsettled)


async def _write_until_read_back(
    tenant_id: TenantId,
    to_embed: list[Entity],
    to_delete: list[EntityId],
    *,
    embeddings: EmbeddingProvider,
    vectors: VectorStore,
    graph: GraphReader,
    embedded: EntityVectors | None = None,
) -> int:
    """Write the vectors of `to_embed` (the first time `embedded`, when given) and delete
    those of `to_delete` (ids the graph lacks), then read all of them back from `graph`
    (their texts, `embedding_texts_of`; whole, those that differ) and do the same for
    those that differ: renamed, deleted, or made again since. How many still differ
    after `MAX_PASSES` writes."""
    written: dict[EntityId, str | None] = {}  # None: the vector was deleted
    for _ in range(MAX_PASSES):
        if embedded is None:
            embedded = await embed_entities(to_embed, embeddings)
        await embedded.write(vectors)
        embedded = None
        if to_delete:
            await vectors.delete(to_delete, tenant_id)
        written.update((e.id, e.embedding_text()) for e in to_embed)
        written.update(dict.fromkeys(to_delete))
        ids = [e.id for e in to_embed] + to_delete
        texts = await embedding_texts_of(graph, ids, tenant_id)
        differing = [i for i in ids if i in texts and texts[i] != written[i]]
        to_delete = [i for i in ids if i not in texts and written[i] is not None]
        # Only those that differ are read whole, to be embedded; one gone by then is
        # another whose vector goes.
        to_embed = await graph.get_entities(differing, tenant_id) if differing else []
        found = {e.id for e in to_embed}
        to_delete += [i for i in differing if i not in found and written[i] is not None]
        if not to_embed and not to_delete:
            break
    return len(to_embed) + len(to_delete)


async def settle(
    entities: Sequence[Entity],
    *,
    embeddings: EmbeddingProvider,
    vectors: VectorStore,
    graph: GraphReader,
    directionless: Mapping[TenantId, Sequence[EntityId]] | None = None,
) -> EmbeddedAgain:
    """After a writer has written `entities` and their vectors: read them back from
    `graph`, and embed again those whose stored vector is not of the text the graph
    now holds (its source is another, `vector_source`), and delete the vectors of
    those it no longer holds,
    until the read-back agrees (`embed_again`'s loop: an entity made again meanwhile
    is embedded). Two writers of one entity each embed, write the graph, then the
    vector, and nothing orders the two pairs, so one's vector can land over the
    other's later graph write; the writer whose read-back comes last sees what both
    wrote and repairs it. A delete (vectors, then entities) run whole between a
    writer's graph write and its vector write leaves a vector of no entity: the
    writer's read-back finds the entity gone and deletes it. Two reads a batch: the
    texts the graph holds (`embedding_texts_of`, not the entities whole), and their
    vectors' sources; where they differ, a read of those entities whole and one more
    write.

    A vector written after a delete removed the vectors but before it removed the
    entity, when the read-back comes before that removal, is left to the delete,
    which removes the vectors again after the entities (`Redstring.delete`).

    `directionless` (`EntityVectors.directionless`) names the entities whose text the
    writer found to embed to no direction: they are to have no vector, so no source,
    and are left alone while the graph still holds the text the writer embedded and
    they have none. One that has one (another writer's, landed after this writer
    deleted it, `delete_replaced`, and before its entity write) loses it."""
    no_direction = {
        (tenant_id, entity_id)
        for tenant_id, of_tenant in (directionless or {}).items()
        for entity_id in of_tenant
    }
    # The text the writer embedded, of those (the last entity of an id decides).
    written = {
        key: e.embedding_text() for e in entities if (key := (e.tenant_id, e.id)) in no_direction
    }
    identity = provider_identity(embeddings)
    embedded, unsettled = 0, 0
    for tenant_id, of_tenant in ids_by_tenant((e.tenant_id, e.id) for e in entities).items():
        # The texts alone (`embedding_texts_of`), then the sources of their vectors.
        texts = await embedding_texts_of(graph, of_tenant, tenant_id)
        gone = [entity_id for entity_id in of_tenant if entity_id not in texts]
        sources = await vectors.sources(list(texts), tenant_id) if texts else {}
        differing = [
            entity_id
            for entity_id, text in texts.items()
            if not _as_written(
                text, sources, entity_id, identity, written.get((tenant_id, entity_id))
            )
        ]
        # Those read whole to be embedded again; one gone by then loses its vector.
        stale = await graph.get_entities(differing, tenant_id) if differing else []
        found = {entity.id for entity in stale}
        gone += [entity_id for entity_id in differing if entity_id not in found]
        if stale or gone:
            unsettled += await _write_until_read_back(
                tenant_id, stale, gone, embeddings=embeddings, vectors=vectors, graph=graph
            )
        embedded += len(stale)
    return EmbeddedAgain(embedded, unsettled)


def _as_written(
    text: str,
    sources: Mapping[EntityId, str | None],
    entity_id: EntityId,
    identity: str,
    without_direction: str | None,
) -> bool:
    """Whether an entity whose stored text is `text` needs nothing from `settle`: its
    vector is the one that text embeds to (`vector_source`), or it is one the writer
    found to embed to no direction (`without_direction`, the text it embedded) that
    still holds that text and has no vector (no source read in `sources`)."""
    if entity_id in sources:
        return sources[entity_id] == vector_source(identity, text)
    return without_direction is not None and text == without_direction
