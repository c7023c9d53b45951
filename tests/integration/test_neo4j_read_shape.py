"""Every read statement of the retrieval path answers in one record.

The async driver costs about 0.07 ms of client CPU per record received
(docs/neo4j.md), so a statement that starts answering one record per row
is a regression even when its results stay right.
"""

from __future__ import annotations

import neo4j

from redstring import HashingEmbeddingProvider, build_graph
from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jVectorStore, cypher
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
    search = {"vector": query, "tenant_id": str(tenant), "k": 3, "exact_below": 0}

    assert await _records(driver, cypher.GET_ENTITIES, ids=ids, tenant_id=str(tenant)) == 1
    keys = ["w:acme", "p:acme", "w:apex"]
    for lookup in (cypher.FIND_BY_BLOCKING_KEYS, cypher.FIND_LEXICAL_CANDIDATES):
        for types in (None, ["org"], ["nothing"]):
            found = await _records(
                driver, lookup, keys=keys, tenant_id=str(tenant), limit=10, types=types
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
