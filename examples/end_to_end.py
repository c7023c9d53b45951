"""Build a small graph in memory and run a hybrid retrieval of `Acme Corp`.

Run: `.venv/bin/python examples/end_to_end.py`
"""

from __future__ import annotations

import asyncio
import uuid

from redstring import (
    Entity,
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    Relationship,
    Retriever,
    TenantId,
    build_graph,
    entity_id_for,
    relationship_id_for,
)

TENANT = TenantId(uuid.UUID("00000000-0000-4000-8000-00000000e2e0"))


def entity(name: str, entity_type: str, description: str | None = None) -> Entity:
    return Entity(
        id=entity_id_for(TENANT, entity_type, name),
        tenant_id=TENANT,
        name=name,
        entity_type=entity_type,
        description=description,
    )


async def main() -> None:
    acme = entity("Acme Corp", "organization", "Maker of anvils and rocket skates")
    apex = entity("Apex Corporation", "organization", "Logistics company")
    widgets = entity("Acme Widgets", "organization", "Widget wholesaler")
    wile = entity("Wile E. Coyote", "person", "Acme's most loyal customer")
    entities = [acme, apex, widgets, wile]
    buys = Relationship(
        id=relationship_id_for(TENANT, wile.id, "CUSTOMER_OF", acme.id),
        tenant_id=TENANT,
        source_entity_id=wile.id,
        target_entity_id=acme.id,
        relationship_type="CUSTOMER_OF",
    )

    embeddings = HashingEmbeddingProvider(dimension=384)
    vectors = InMemoryVectorStore(dimension=384)
    graph = InMemoryGraphStore()
    await build_graph(entities, [buys], embeddings=embeddings, vectors=vectors, graph=graph)

    retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
    result = await retriever.retrieve("Acme Corp", TENANT, k=3)
    print(f"query: {result.query!r}")
    for rank, match in enumerate(result.matches, start=1):
        semantic = "-" if match.semantic is None else f"{match.semantic:.3f}"
        lexical = "-" if match.lexical is None else f"{match.lexical:.3f}"
        print(
            f"{rank}. {match.entity.name:<18} ({match.entity.entity_type})"
            f"  rrf={match.score:.5f}  semantic={semantic}  lexical={lexical}"
        )


if __name__ == "__main__":
    asyncio.run(main())
