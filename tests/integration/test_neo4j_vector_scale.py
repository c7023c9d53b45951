"""Filters before `k` at scale, and the vector index's recall against exact search."""

from __future__ import annotations

import uuid

import neo4j
import numpy as np

from redstring import EntityId, TenantId, VectorRecord
from redstring.adapters.neo4j import Neo4jVectorStore, VectorSearchMode
from redstring.testing import new_tenant

from .conftest import run_label

DIMENSION = 64
SCALE_LABEL = run_label("ScaleVector64")
RECALL_LABEL = run_label("RecallVector64")
PLAN_LABEL = run_label("PlanVector64")


def _records(tenant: TenantId, vectors: np.ndarray, entity_type: str) -> list[VectorRecord]:
    return [
        VectorRecord(
            entity_id=EntityId(uuid.uuid4()),
            tenant_id=tenant,
            vector=tuple(float(x) for x in row),
            entity_type=entity_type,
        )
        for row in vectors
    ]


def _near(rng: np.random.Generator, query: np.ndarray, n: int, noise: float) -> np.ndarray:
    return query + noise * rng.normal(size=(n, DIMENSION))


async def test_a_small_tenant_keeps_its_k_under_a_nearer_flood(driver: neo4j.AsyncDriver) -> None:
    rng = np.random.default_rng(11)
    query = rng.normal(size=DIMENSION)
    store = Neo4jVectorStore(driver, DIMENSION, label=SCALE_LABEL)
    await store.ensure_schema()
    small, big = new_tenant(), new_tenant()
    mine = _records(small, _near(rng, query, 5, 3.0), "person")
    flood = _records(big, _near(rng, query, 20_000, 0.05), "person")
    same_tenant_flood = _records(small, _near(rng, query, 3_000, 0.05), "org")
    await store.upsert(flood + same_tenant_flood + mine)

    found = await store.search(query.tolist(), small, k=5, entity_types=["person"])
    assert {m.entity_id for m in found} == {r.entity_id for r in mine}
    only_small = Neo4jVectorStore(driver, DIMENSION, label=SCALE_LABEL)
    by_tenant = await only_small.search(query.tolist(), big, k=5)
    assert len(by_tenant) == 5
    flood_ids = {r.entity_id for r in flood}
    assert all(m.entity_id in flood_ids for m in by_tenant)

    # The same filters answered inside the index (both filters pass > exact_below records).
    indexed = Neo4jVectorStore(driver, DIMENSION, label=SCALE_LABEL, exact_below=100)
    typed = await indexed.search(query.tolist(), small, k=5, entity_types=["org"])
    same_ids = {r.entity_id for r in same_tenant_flood}
    assert len(typed) == 5
    assert all(m.entity_id in same_ids for m in typed)
    by_index = await indexed.search(query.tolist(), big, k=5)
    assert len(by_index) == 5
    assert all(m.entity_id in flood_ids for m in by_index)


async def test_index_recall_at_10_against_exact_search(driver: neo4j.AsyncDriver) -> None:
    rng = np.random.default_rng(5)
    tenant = new_tenant()
    centres = rng.normal(size=(50, DIMENSION))
    assignment = rng.integers(0, len(centres), size=50_000)
    vectors = centres[assignment] + 0.6 * rng.normal(size=(50_000, DIMENSION))
    records = _records(tenant, vectors, "thing")
    store = Neo4jVectorStore(driver, DIMENSION, label=RECALL_LABEL, exact_below=0)
    await store.ensure_schema()
    await store.upsert(records)
    exact = Neo4jVectorStore(
        driver, DIMENSION, label=RECALL_LABEL, search_mode=VectorSearchMode.EXACT
    )
    queries = centres[rng.integers(0, len(centres), size=40)] + 0.6 * rng.normal(
        size=(40, DIMENSION)
    )
    hits = 0
    for query in queries:
        approximate = {m.entity_id for m in await store.search(query.tolist(), tenant, k=10)}
        truth = {m.entity_id for m in await exact.search(query.tolist(), tenant, k=10)}
        hits += len(approximate & truth)
    recall = hits / (10 * len(queries))
    print(f"\nNeo4j vector index recall@10 on 50,000 vectors (dimension {DIMENSION}): {recall:.3f}")
    assert recall >= 0.95


_SEEKS = ("NodeIndexSeek", "NodeUniqueIndexSeek")


def _index_seek_rows(plan: object) -> int:
    """Rows produced by every index seek of a PROFILEd plan (the tenant's identity index)."""
    rows = plan["rows"] if plan["operatorType"].startswith(_SEEKS) else 0  # type: ignore[index]
    return int(rows) + sum(_index_seek_rows(c) for c in plan.get("children", []))  # type: ignore[attr-defined]


def _operators(plan: object) -> list[str]:
    children = plan.get("children", [])  # type: ignore[attr-defined]
    return [plan["operatorType"], *(o for c in children for o in _operators(c))]  # type: ignore[index]


async def test_an_indexed_search_reads_no_more_than_the_count(driver: neo4j.AsyncDriver) -> None:
    """Above `exact_below` the index answers, and the exact scan's branch reads nothing:
    the tenant's identity index is read only to count, up to `exact_below + 1`
    records, and no label is scanned."""
    from redstring.adapters.neo4j import cypher

    rng = np.random.default_rng(12)
    store = Neo4jVectorStore(driver, DIMENSION, label=PLAN_LABEL, exact_below=100)
    await store.ensure_schema()
    tenant = new_tenant()
    await store.upsert(_records(tenant, rng.normal(size=(400, DIMENSION)), "person"))
    query = rng.normal(size=DIMENSION).tolist()
    assert len(await store.search(query, tenant, k=5)) == 5

    for typed, types in ((False, None), (True, ["person"])):
        statement = cypher.search_vectors(PLAN_LABEL, typed=typed)
        params = {"vector": query, "tenant_id": str(tenant), "k": 5, "types": types}
        async with driver.session() as session:
            result = await session.run(
                statement.replace("CYPHER 25", "CYPHER 25 PROFILE", 1),
                {**params, "exact_below": 100, "index_k": 5},
            )
            [record] = [r async for r in result]
            assert len(record["matches"]) == 5
            summary = await result.consume()
        assert summary.profile is not None
        assert 0 < _index_seek_rows(summary.profile) <= 101
        assert not any("LabelScan" in o for o in _operators(summary.profile))
