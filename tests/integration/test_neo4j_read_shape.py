"""Every read statement of the retrieval path answers in one record, and a vector
search in one statement where it can.

The async driver costs about 0.07 ms of client CPU per record received
(docs/neo4j.md), and a round trip a few milliseconds, so a statement that
starts answering one record per row, or a search that takes two statements
for a common case, is a regression even when its results stay right.
"""

from __future__ import annotations

import math
import uuid
from typing import Any

import neo4j
import pytest

from redstring import EntityId, HashingEmbeddingProvider, VectorRecord, build_graph
from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jVectorStore, cypher
from redstring.domain.ids import id_order_key
from redstring.testing import make_entity, make_relationship, new_tenant

from .conftest import COMPLIANCE_DIMENSION, COMPLIANCE_LABEL


async def _records(driver: neo4j.AsyncDriver, statement: str, **params: object) -> int:
    async with driver.session() as session:
        result = await session.run(statement, params)
        return len([record async for record in result])


async def test_read_statements_answer_in_one_record(driver: neo4j.AsyncDriver) -> None:
    graph = Neo4jGraphStore(driver)
    vectors = Neo4jVectorStore(driver, COMPLIANCE_DIMENSION, label=COMPLIANCE_LABEL)
    await graph.ensure_schema()
    await vectors.ensure_schema()
    tenant = new_tenant()
    entities = [make_entity(tenant, name, "org") for name in ("Acme Corp", "Acme Widgets", "Apex")]
    relationships = [make_relationship(entities[0], e, "SUPPLIES") for e in entities[1:]]
    await build_graph(
        entities,
        relationships,
        embeddings=HashingEmbeddingProvider(COMPLIANCE_DIMENSION),
        vectors=vectors,
        graph=graph,
    )
    ids = [str(e.id) for e in entities]
    query = [1.0] * COMPLIANCE_DIMENSION
    search = {
        "vector": query,
        "tenant_id": str(tenant),
        "k": 3,
        "index_k": 3,
        "exact_below": 0,
    }

    assert await _records(driver, cypher.GET_ENTITIES, ids=ids, tenant_id=str(tenant)) == 1
    keys = ["w:acme", "p:acme", "w:apex"]
    for types in (None, ["org"], ["nothing"]):
        found = await _records(
            driver,
            cypher.FIND_LEXICAL_CANDIDATES,
            keys=keys,
            prefixes=["w:acm"],
            tenant_id=str(tenant),
            limit=10,
            prefix_limit=10,
            types=types,
        )
        assert found == 1
    for statement in cypher.RELATIONSHIPS_OF.values():
        rows = await _records(
            driver, statement, ids=ids, tenant_id=str(tenant), types=None, limit=10
        )
        assert rows == 1
    for typed, types in ((False, None), (True, ["org"])):
        statement = cypher.search_vectors(COMPLIANCE_LABEL, typed=typed)
        assert await _records(driver, statement, **search, types=types) == 1
    exact = cypher.search_vectors_exact(COMPLIANCE_LABEL)
    assert await _records(driver, exact, **search, types=None) == 1


async def test_a_tie_just_past_the_cut_is_settled_by_the_first_search(
    driver: neo4j.AsyncDriver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Equal vectors (entities of the same name, type and description) tied at the
    `k`-th place are settled without a second round trip: the store asks for more
    than `k + 1` to begin with."""
    vectors = Neo4jVectorStore(driver, COMPLIANCE_DIMENSION, label=COMPLIANCE_LABEL)
    await vectors.ensure_schema()
    tenant = new_tenant()

    def tilted(weight: float) -> tuple[float, ...]:
        rest = [0.0] * (COMPLIANCE_DIMENSION - 2)
        return (weight, math.sqrt(1 - weight * weight), *rest)

    weights = [0.99, 0.98, 0.97, 0.96, 0.95, 0.94, 0.93, 0.9, 0.9, 0.5, 0.4, 0.3]
    records = [
        VectorRecord(
            entity_id=EntityId(uuid.uuid4()), tenant_id=tenant, vector=tilted(w), entity_type="org"
        )
        for w in weights
    ]
    await vectors.upsert(records)
    searches = 0
    nearest = vectors._nearest

    async def counted(*args: Any) -> list[tuple[EntityId, float]]:
        nonlocal searches
        searches += 1
        return await nearest(*args)

    monkeypatch.setattr(vectors, "_nearest", counted)
    found = await vectors.search(tilted(1.0), tenant, k=8)
    twins = sorted((r.entity_id for r in records[7:9]), key=id_order_key)
    assert [m.entity_id for m in found] == [r.entity_id for r in records[:7]] + twins[:1]
    assert searches == 1
