"""`build_graph`: embed entities and write them to a graph store and a vector store."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from redstring.composition.concurrency import nothing, while_finishing
from redstring.composition.embed_again import settle
from redstring.composition.entity_vectors import (
    EntityKey,
    EntityVectors,
    check_fits,
    delete_replaced,
    embed_entities,
    keys_of,
    outdated,
)
from redstring.domain.arguments import items_of, positive_count_of
from redstring.domain.entity import Entity
from redstring.domain.relationship import Relationship
from redstring.ports.embedding_provider import EmbeddingProvider
from redstring.ports.graph_store import GraphStore
from redstring.ports.vector_store import VectorStore

# Entities embedded and written per step. A Neo4j vector store makes each call's
# vectors one or more Lucene segments, and searches walk every segment, so large
# steps keep later searches fast (docs/neo4j.md, "Vector batches and index segments").
DEFAULT_BATCH_SIZE = 5000


async def _entities_then(
    batch: Sequence[Entity],
    embeddings: EmbeddingProvider,
    stores: tuple[VectorStore, GraphStore],
    batch_before: tuple[frozenset[EntityKey], asyncio.Future[None]],
) -> EntityVectors:
    """Embed those of `batch` whose vectors are not current (`outdated`), delete the
    vectors of another text they had (`delete_replaced`: those of the batch before's
    entities once its writes end), write its entities, and hand back the vectors to
    write."""
    vectors, graph = stores
    being_written, finishing = batch_before
    found = await outdated(batch, embeddings, vectors, being_written=being_written)
    embedded = await embed_entities(found.entities, embeddings)
    await delete_replaced(found, vectors, batch_before=finishing)
    await graph.upsert_entities(batch)
    return embedded


async def _vectors_then_settle(
    embedded: EntityVectors,
    batch: Sequence[Entity],
    embeddings: EmbeddingProvider,
    stores: tuple[VectorStore, GraphStore],
) -> None:
    """Write a batch's vectors (upserts alone: the vectors its directionless entities had
    went before their entities were written, `delete_replaced`), then read the batch
    back and repair what another writer of the same entities made differ (`settle`)."""
    vectors, graph = stores
    await embedded.upsert(vectors)
    await settle(
        batch,
        embeddings=embeddings,
        vectors=vectors,
        graph=graph,
        directionless=embedded.directionless,
    )


async def build_graph(
    entities: Sequence[Entity],
    relationships: Sequence[Relationship] = (),
    *,
    embeddings: EmbeddingProvider,
    vectors: VectorStore,
    graph: GraphStore,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> None:
    """Embed entities' texts and write entities, then vectors, then relationships.

    Only an entity whose stored vector is not of its present text and the
    provider's model (`outdated`: one read of the vector store's sources a
    batch) is embedded and its vector written: writing the same entities again,
    or changing only properties the embedded text leaves out, calls the
    provider for none of them but those whose text embeds to no direction
    (they have no vector to compare with).

    Each batch is then read back, and an entity whose stored vector is not of the
    text the graph holds (another writer's upsert of it interleaved with this one)
    is embedded again, and the vector of one the graph no longer holds (a delete
    run between this batch's graph and vector writes) deleted (`settle`).

    Batch by batch, the graph store is written before the vector store (batch
    n's vectors while batch n+1's entities are written), so a failure between
    the two leaves entities without vectors (still found lexically, repaired
    by running again), never vectors pointing at no entity. An entity that has a
    vector of another text (renamed, retyped, described otherwise) loses it
    before its entity is written (`delete_replaced`, one more vector store call
    a batch that holds such entities; one of the batch before waits for that
    batch's vector write), so such a failure leaves it no vector rather than
    its old text's, which would still find it by its old name and type; until
    its new vector is written, the semantic channel does not find it (nor, when
    the entity write itself fails, the entity as it was: running again repairs it). An entity
    whose text embeds to a vector without direction gets no vector, and loses the
    one it had as a renamed entity does (`delete_replaced`). Raises
    `DimensionMismatchError` before any embedding call when the provider and the
    vector store disagree on the dimension, and `InvalidInputError` before any call when `entities` or
    `relationships` is not a sequence of `Entity` or of `Relationship`.
    """
    entities = items_of(entities, Entity, "entities")
    relationships = items_of(relationships, Relationship, "relationships")
    check_fits(embeddings, vectors)
    batch_size = positive_count_of(batch_size, "batch_size")
    # Batch n's vectors are written while batch n+1 is embedded and its entities are
    # written (two stores busy at once, as `ingest` does); each batch's entities are
    # written before its vectors start.
    finishing: asyncio.Future[None] = asyncio.ensure_future(nothing())
    writing: frozenset[EntityKey] = frozenset()
    try:
        for start in range(0, len(entities), batch_size):
            batch = entities[start : start + batch_size]
            embedded = await while_finishing(
                finishing,
                _entities_then(batch, embeddings, (vectors, graph), (writing, finishing)),
            )
            writing = keys_of(batch)
            finishing = asyncio.ensure_future(
                _vectors_then_settle(embedded, batch, embeddings, (vectors, graph))
            )
        await finishing
    finally:
        if not finishing.done():  # cancelled while a batch's vectors were written
            finishing.cancel()
            await asyncio.gather(finishing, return_exceptions=True)
    for start in range(0, len(relationships), batch_size):
        await graph.upsert_relationships(relationships[start : start + batch_size])
