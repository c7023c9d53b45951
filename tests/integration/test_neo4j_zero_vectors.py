"""Text that embeds to a vector without direction ("!", "...", an emoji) through the GraphQL
API over Neo4j: never stored, never searched with, and a zero vector already in the
database (written before they were kept out) breaks no retrieve of its tenant."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import neo4j
import pytest

from redstring import EntityId, HashingEmbeddingProvider, VectorRecord
from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jVectorStore, VectorSearchMode
from redstring.api import create_app
from redstring.api.settings import Settings
from redstring.composition.client import Redstring
from redstring.testing import new_tenant

from .conftest import run_label

# The store and label of test_neo4j_retrieval: no index is made for this test alone.
LABEL, DIMENSION = run_label("RetrievalVector128"), 128

UPSERT = """mutation ($t: ID!, $entities: [EntityInput!]!) {
  upsertEntities(tenantId: $t, entities: $entities) { ids }
}"""
RETRIEVE = """query ($t: ID!, $q: String!) {
  semantic: retrieve(query: $q, tenantId: $t, k: 10, mode: SEMANTIC) { ...matches }
  hybrid: retrieve(query: $q, tenantId: $t, k: 10, mode: HYBRID) { ...matches }
  lexical: retrieve(query: $q, tenantId: $t, k: 10, mode: LEXICAL) { ...matches }
}
fragment matches on RetrievalResult { matches { score semantic lexical entity { id name } } }"""

NORMAL = [
    {"name": "Acme Corp", "entityType": "org"},
    {"name": "Acme Widgets", "entityType": "org"},
    {"name": "Ada Lovelace", "entityType": "person"},
]
# Name and type without letters or digits: the hashing provider embeds them to zeros.
FEATURELESS = [
    {"name": "!", "entityType": "…"},
    {"name": "🙂", "entityType": "🙂"},
    {"name": "\u0301", "entityType": "--"},
]


@pytest.fixture(params=[VectorSearchMode.INDEX, VectorSearchMode.EXACT], ids=str)
async def client(
    request: pytest.FixtureRequest, driver: neo4j.AsyncDriver
) -> AsyncIterator[httpx.AsyncClient]:
    """The API over Neo4j stores; a small tenant is scanned exactly in either mode."""
    graph = Neo4jGraphStore(driver)
    vectors = Neo4jVectorStore(driver, DIMENSION, label=LABEL, search_mode=request.param)
    await graph.ensure_schema()
    await vectors.ensure_schema()
    services = Redstring(
        embeddings=HashingEmbeddingProvider(DIMENSION), vectors=vectors, graph=graph
    )
    app = create_app(Settings(), services=services)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
    ) as http:
        yield http


async def _data(http: httpx.AsyncClient, query: str, **variables: Any) -> dict[str, Any]:
    response = await http.post("/graphql", json={"query": query, "variables": variables})
    body: dict[str, Any] = response.json()
    assert response.status_code == 200, body
    assert "errors" not in body, body["errors"]
    data: dict[str, Any] = body["data"]
    return data


async def _vector_ids(driver: neo4j.AsyncDriver, tenant: str) -> set[str]:
    records, _, _ = await driver.execute_query(
        f"MATCH (v:{LABEL} {{tenant_id: $t}}) RETURN v.entity_id AS id", t=tenant
    )
    return {record["id"] for record in records}


async def test_featureless_entities_and_queries_break_no_retrieve(
    client: httpx.AsyncClient, driver: neo4j.AsyncDriver
) -> None:
    tenant = str(new_tenant())
    ids = (await _data(client, UPSERT, t=tenant, entities=NORMAL + FEATURELESS))["upsertEntities"]
    normal_ids = ids["ids"][: len(NORMAL)]
    found = await _data(client, RETRIEVE, t=tenant, q="Acme Corp")
    for mode in ("semantic", "hybrid"):
        names = [m["entity"]["name"] for m in found[mode]["matches"]]
        assert names[0] == "Acme Corp", mode
        assert not {e["name"] for e in FEATURELESS} & set(names)
    for query in ("...", "!", "🙂"):
        nothing = await _data(client, RETRIEVE, t=tenant, q=query)
        assert all(nothing[mode]["matches"] == [] for mode in ("semantic", "hybrid", "lexical"))
    assert await _vector_ids(driver, tenant) == set(normal_ids)


async def test_an_entity_renamed_to_featureless_text_loses_its_vector(
    client: httpx.AsyncClient, driver: neo4j.AsyncDriver
) -> None:
    tenant = str(new_tenant())
    [acme, ada] = (await _data(client, UPSERT, t=tenant, entities=NORMAL[::2]))["upsertEntities"][
        "ids"
    ]
    await _data(client, UPSERT, t=tenant, entities=[{"id": acme, "name": "!", "entityType": "…"}])
    assert await _vector_ids(driver, tenant) == {ada}
    found = await _data(client, RETRIEVE, t=tenant, q="Acme Corp")
    assert acme not in {m["entity"]["id"] for m in found["semantic"]["matches"]}


async def test_a_zero_vector_stored_before_the_fix_breaks_no_retrieve(
    client: httpx.AsyncClient, driver: neo4j.AsyncDriver
) -> None:
    tenant = str(new_tenant())
    ids = (await _data(client, UPSERT, t=tenant, entities=NORMAL + FEATURELESS[:1]))[
        "upsertEntities"
    ]["ids"]
    # What an upsert of "!" wrote before zero vectors were kept out.
    await driver.execute_query(
        f"MERGE (v:{LABEL} {{tenant_id: $t, entity_id: $e}}) SET v.entity_type = '…' "
        "WITH v CALL db.create.setNodeVectorProperty(v, 'embedding', $zeros)",
        t=tenant,
        e=ids[-1],
        zeros=[0.0] * DIMENSION,
    )
    assert ids[-1] in await _vector_ids(driver, tenant)
    found = await _data(client, RETRIEVE, t=tenant, q="Acme Corp")
    for mode in ("semantic", "hybrid"):
        names = [m["entity"]["name"] for m in found[mode]["matches"]]
        assert names[0] == "Acme Corp", mode
        assert "!" not in names


async def test_the_store_deletes_the_node_of_a_directionless_record(
    driver: neo4j.AsyncDriver,
) -> None:
    """The port's contract seen in the database: no node keeps a zero vector, though
    a search could not tell (the index skips them and the exact scan filters them)."""
    vectors = Neo4jVectorStore(driver, DIMENSION, label=LABEL)
    tenant = new_tenant()
    record = VectorRecord(
        entity_id=EntityId(uuid.uuid4()),
        tenant_id=tenant,
        vector=(1.0,) + (0.0,) * (DIMENSION - 1),
        entity_type="org",
    )
    other = record.model_copy(update={"entity_id": EntityId(uuid.uuid4())})
    await vectors.upsert([record, other])
    zero = record.model_copy(update={"vector": (0.0,) * DIMENSION})
    await vectors.upsert([zero, other])
    assert await _vector_ids(driver, str(tenant)) == {str(other.entity_id)}
