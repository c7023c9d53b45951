"""`build_graph`: embed entities and write them to a graph store and a vector store."""

from __future__ import annotations

from collections.abc import Sequence

from redstring.composition.entity_vectors import check_batch_size, check_fits, embed_entities
from redstring.domain.entity import Entity
from redstring.domain.relationship import Relationship
from redstring.ports.embedding_provider import EmbeddingProvider
from redstring.ports.graph_store import GraphStore
from redstring.ports.vector_store import VectorStore

# Entities embedded and written per step. A Neo4j vector store makes each call's
# vectors one or more Lucene segments, and searches walk every segment, so large
# steps keep later searches fast (docs/neo4j.md, "Vector batches and index segments").
DEFAULT_BATCH_SIZE = 5000


async def build_graph(
    entities: Sequence[Entity],
    relationships: Sequence[Relationship] = (),
    *,
    embeddings: EmbeddingProvider,
    vectors: VectorStore,
    graph: GraphStore,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> None:
    """Embed every entity's text and write entities, relationships, then vectors.

    The graph store is written before the vector store, so a failure between
    the two leaves entities without vectors (still found lexically, repaired
    by running again), never vectors pointing at no entity. An entity whose
    text embeds to a vector without direction gets no vector, and loses the
    one it had (`EntityVectors`). Raises `DimensionMismatchError` before any
    embedding call when the provider and the vector store disagree on the
    dimension.
    """
    check_fits(embeddings, vectors)
    check_batch_size(batch_size)
    for start in range(0, len(entities), batch_size):
        batch = entities[start : start + batch_size]
        embedded = await embed_entities(batch, embeddings)
        await graph.upsert_entities(batch)
        await embedded.write(vectors)
    for start in range(0, len(relationships), batch_size):
        await graph.upsert_relationships(relationships[start : start + batch_size])
