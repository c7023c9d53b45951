"""`Neo4jVectorStore(search_ratio=...)`: an indexed search, alone or in the joint candidate
statement, asks the index for `search_ratio` times what it keeps, which brings it
nearer the exact nearest.

The index's approximation shows on a few hundred vectors only in a poor HNSW graph,
so the index here is built with two links per vector and a candidate list of two
(`hnsw_m=2`, `hnsw_ef_construction=2`). Asked for at least as many matches as its
filter passes, the index searches exactly (Lucene's filtered search does).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import neo4j
import numpy as np
import pytest

from redstring import VectorRecord
from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jVectorStore, VectorSearchMode, cypher
from redstring.domain.ids import EntityId, TenantId
from redstring.testing import new_tenant

DIMENSION = 32
RECORDS = 1000
K = 5
# The first fetch for k=5 is 7 (`_first_fetch`): 7 * 150 = 1,050 asked of the index,
# more than the tenant's 1,000 records.
WIDE = 150
POOR_GRAPH = {"hnsw_m": 2, "hnsw_ef_construction": 2}


@pytest.fixture
async def poor_index(driver: neo4j.AsyncDriver) -> AsyncIterator[tuple[str, TenantId]]:
    """A label of its own whose index holds one tenant's 1,000 random vectors; dropped
    with its nodes afterwards."""
    label = f"SearchRatio{uuid.uuid4().hex[:8]}"
    store = Neo4jVectorStore(driver, DIMENSION, label=label, **POOR_GRAPH)
    await store.ensure_schema()
    tenant = new_tenant()
    vectors = np.random.default_rng(7).normal(size=(RECORDS, DIMENSION))
    try:
        await store.upsert(
            [
                VectorRecord(
                    entity_id=EntityId(uuid.uuid4()),
                    tenant_id=tenant,
                    vector=tuple(vector),
                    entity_type="thing",
                )
                for vector in vectors.tolist()
            ]
        )
        yield label, tenant
    finally:
        async with driver.session() as session:
            for statement in (
                f"MATCH (v:{label}) DETACH DELETE v",
                f"DROP INDEX {cypher.vector_index_name(label)} IF EXISTS",
                f"DROP CONSTRAINT {cypher.vector_constraint_name(label)} IF EXISTS",
            ):
                await (await session.run(statement)).consume()


async def test_a_wider_search_ratio_finds_the_exact_nearest_that_ratio_one_misses(
    driver: neo4j.AsyncDriver, poor_index: tuple[str, TenantId]
) -> None:
    label, tenant = poor_index

    def store(**options: Any) -> Neo4jVectorStore:
        return Neo4jVectorStore(driver, DIMENSION, label=label, **POOR_GRAPH, **options)

    exact = store(search_mode=VectorSearchMode.EXACT)
    narrow = store(exact_below=0, search_ratio=1)
    wide = store(exact_below=0, search_ratio=WIDE)
    joint = Neo4jGraphStore(driver).candidate_reader(wide)
    assert joint is not None
    queries = np.random.default_rng(11).normal(size=(20, DIMENSION)).tolist()
    missed_narrow = 0
    for query in queries:
        nearest = [m.entity_id for m in await exact.search(query, tenant, k=K)]
        assert [m.entity_id for m in await wide.search(query, tenant, k=K)] == nearest
        both = await joint.find_candidates(tenant, vector=query, k=K, keys=[])
        assert [m.entity_id for m in both.semantic] == nearest
        missed_narrow += [m.entity_id for m in await narrow.search(query, tenant, k=K)] != nearest
    # The graph is poor enough that asking for the first fetch alone misses: without
    # this, the wide store's answers would prove nothing about its ratio.
    assert missed_narrow > 0


@pytest.mark.parametrize("ratio", [0, -1])
def test_a_search_ratio_below_one_is_refused(driver: neo4j.AsyncDriver, ratio: int) -> None:
    with pytest.raises(ValueError, match="search_ratio"):
        Neo4jVectorStore(driver, DIMENSION, search_ratio=ratio)
