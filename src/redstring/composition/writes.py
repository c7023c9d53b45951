"""Writes to a tenant's graph that keep the vector store in step with the graph store."""

from __future__ import annotations

from collections.abc import Sequence

from redstring.composition.build_graph import DEFAULT_BATCH_SIZE, build_graph
from redstring.composition.services import Services
from redstring.domain.entity import Entity
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.relationship import Relationship


async def upsert_entities(
    services: Services, entities: Sequence[Entity], *, batch_size: int = DEFAULT_BATCH_SIZE
) -> None:
    """Embed and write entities (graph first, then vectors: see `build_graph`)."""
    await build_graph(
        entities,
        embeddings=services.embeddings,
        vectors=services.vectors,
        graph=services.graph,
        batch_size=batch_size,
    )


async def upsert_relationships(services: Services, relationships: Sequence[Relationship]) -> None:
    """Write relationships in one atomic call; a missing endpoint raises
    `MissingEndpointError` and writes nothing."""
    await services.graph.upsert_relationships(relationships)


async def delete_entities(services: Services, ids: Sequence[EntityId], tenant_id: TenantId) -> int:
    """Delete entities, their vectors and every relationship touching them; how many existed.

    Vectors go first, so a failure between the two stores leaves entities
    without vectors (still found lexically), never vectors of deleted entities.
    """
    await services.vectors.delete(ids, tenant_id)
    return await services.graph.delete_entities(ids, tenant_id)
