"""Build a small graph in memory and run a hybrid retrieval of `Acme Corp`.

Run: `.venv/bin/python examples/end_to_end.py`
"""

from __future__ import annotations

import asyncio
import uuid

from redstring import Entity, HashingEmbeddingProvider, Redstring, Relationship

TENANT = uuid.UUID("00000000-0000-4000-8000-00000000e2e0")


async def main() -> None:
    acme = Entity.create(
        TENANT, "Acme Corp", "organization", description="Maker of anvils and rocket skates"
    )
    apex = Entity.create(
        TENANT, "Apex Corporation", "organization", description="Logistics company"
    )
    widgets = Entity.create(TENANT, "Acme Widgets", "organization", description="Widget wholesaler")
    wile = Entity.create(
        TENANT, "Wile E. Coyote", "person", description="Acme's most loyal customer"
    )
    buys = Relationship.create(TENANT, wile.id, "CUSTOMER_OF", acme.id)

    # The hashing provider is offline and deterministic, so the figures below never change.
    async with Redstring.in_memory(HashingEmbeddingProvider(dimension=384)) as rs:
        await rs.upsert([acme, apex, widgets, wile], [buys])
        result = await rs.retrieve("Acme Corp", TENANT, k=3)
        print(f"query: {result.query!r}")
        for rank, match in enumerate(result.matches, start=1):
            semantic = "-" if match.semantic is None else f"{match.semantic:.3f}"
            lexical = "-" if match.lexical is None else f"{match.lexical:.3f}"
            print(
                f"{rank}. {match.entity.name:<18} ({match.entity.entity_type})"
                f"  rrf={match.score:.5f}  semantic={semantic}  lexical={lexical}"
            )
        names = {e.id: e.name for e in (acme, apex, widgets, wile)}
        edges = await rs.relationships([acme.id], TENANT)
        for edge in edges[acme.id]:
            source, target = names[edge.source_entity_id], names[edge.target_entity_id]
            print(f"{source} -[{edge.relationship_type}]-> {target}")


if __name__ == "__main__":
    asyncio.run(main())
