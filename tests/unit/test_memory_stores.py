"""The in-memory adapters pass the compliance suites shipped in redstring.testing."""

from __future__ import annotations

import numpy as np
import pytest

from redstring import (
    GraphStore,
    InMemoryGraphStore,
    InMemoryVectorStore,
    VectorRecord,
    VectorStore,
)
from redstring.testing import (
    GraphStoreCompliance,
    VectorStoreCompliance,
    make_entity,
    new_tenant,
)


class TestInMemoryGraphStore(GraphStoreCompliance):
    @pytest.fixture
    def graph_store(self) -> GraphStore:
        return InMemoryGraphStore()


class TestInMemoryVectorStore(VectorStoreCompliance):
    @pytest.fixture
    def vector_store(self) -> VectorStore:
        return InMemoryVectorStore(16)


async def test_search_equals_brute_force_after_deletes() -> None:
    """Swap-removal keeps rows, ids and types aligned: compare with a plain numpy search."""
    rng = np.random.default_rng(3)
    store = InMemoryVectorStore(8)
    tenant = new_tenant()
    records = []
    for i in range(200):
        entity = make_entity(tenant, f"e{i}", "odd" if i % 2 else "even")
        records.append((entity, rng.normal(size=8)))
    await store.upsert(
        [
            VectorRecord(
                entity_id=e.id, tenant_id=tenant, vector=tuple(v), entity_type=e.entity_type
            )
            for e, v in records
        ]
    )
    await store.delete([e.id for e, _ in records[::3]], tenant)
    kept = [(e, v) for i, (e, v) in enumerate(records) if i % 3]
    query = rng.normal(size=8)
    found = await store.search(query.tolist(), tenant, k=10, entity_types=["odd"])
    odd = [(e, v) for e, v in kept if e.entity_type == "odd"]
    cosine = [float(v @ query / np.linalg.norm(v) / np.linalg.norm(query)) for _, v in odd]
    best = sorted(zip(cosine, [e.id for e, _ in odd], strict=True), reverse=True)[:10]
    assert [m.entity_id for m in found] == [entity_id for _, entity_id in best]
    assert [m.score for m in found] == pytest.approx([(1 + c) / 2 for c, _ in best], abs=1e-5)
