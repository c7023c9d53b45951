"""How the graph store writes: one edge per lookup key, no type keys; failed batches undone."""

from __future__ import annotations

import asyncio

import neo4j
import pytest

from redstring import Entity, TenantId
from redstring.adapters.neo4j import Neo4jGraphStore
from redstring.domain.errors import MissingEndpointError
from redstring.testing import make_entity, make_relationship, new_tenant


async def _edges_by_key(driver: neo4j.AsyncDriver, entity: Entity) -> dict[str, int]:
    """How many `BLOCKS` edges reach `entity` from each key node."""
    async with driver.session() as session:
        result = await session.run(
            "MATCH (b:BlockingKey)-[:BLOCKS]->(:Entity {tenant_id: $t, id: $id}) "
            "RETURN b.key AS key, count(*) AS edges",
            t=str(entity.tenant_id),
            id=str(entity.id),
        )
        return {record["key"]: record["edges"] async for record in result}


async def _key_nodes(driver: neo4j.AsyncDriver, tenant: TenantId) -> set[str]:
    async with driver.session() as session:
        result = await session.run(
            "MATCH (b:BlockingKey {tenant_id: $t}) RETURN b.key AS key", t=str(tenant)
        )
        return {record["key"] async for record in result}


def _lookup(entity: Entity) -> dict[str, int]:
    return {k: 1 for k in entity.blocking_keys if not k.startswith("t:")}


async def test_type_keys_get_no_key_node(driver: neo4j.AsyncDriver) -> None:
    store = Neo4jGraphStore(driver)
    await store.ensure_schema()
    tenant = new_tenant()
    entity = make_entity(tenant, "Acme Corp", "org")
    await store.upsert_entities([entity])

    assert "t:org" in entity.blocking_keys
    assert await _key_nodes(driver, tenant) == set(_lookup(entity))
    [stored] = await store.get_entities([entity.id], tenant)
    assert stored.blocking_keys == entity.blocking_keys  # the entity keeps all its keys


async def test_one_edge_per_key_however_the_entity_is_written(driver: neo4j.AsyncDriver) -> None:
    store = Neo4jGraphStore(driver)
    await store.ensure_schema()
    tenant = new_tenant()
    first = make_entity(tenant, "Globex Corporation", "org")
    renamed = make_entity(tenant, "Globex Initech", "org", entity_id=first.id)

    await store.upsert_entities([first])
    await store.upsert_entities([first])
    assert await _edges_by_key(driver, first) == _lookup(first)

    await store.upsert_entities([first, renamed])  # twice in one batch, the last wins
    assert await _edges_by_key(driver, first) == _lookup(renamed)
    assert "w:corporation" not in await _key_nodes(driver, tenant)  # emptied, so removed

    names = ["Globex Alpha", "Globex Beta", "Globex Gamma", "Globex Delta"]
    versions = [make_entity(tenant, n, "org", entity_id=first.id) for n in names * 3]
    await asyncio.gather(*(store.upsert_entities([v]) for v in versions))
    [last] = await store.get_entities([first.id], tenant)
    assert await _edges_by_key(driver, first) == _lookup(last)


async def test_a_type_key_edge_of_the_earlier_layout_goes_on_the_next_upsert(
    driver: neo4j.AsyncDriver,
) -> None:
    store = Neo4jGraphStore(driver)
    await store.ensure_schema()
    tenant = new_tenant()
    entity = make_entity(tenant, "Umbrella", "org")
    await store.upsert_entities([entity])
    async with driver.session() as session:  # as earlier versions wrote it
        await session.run(
            "MATCH (e:Entity {tenant_id: $t, id: $id}) "
            "CREATE (:BlockingKey {tenant_id: $t, key: 't:org'})-[:BLOCKS]->(e)",
            t=str(tenant),
            id=str(entity.id),
        )
    assert "t:org" in await _edges_by_key(driver, entity)

    await store.upsert_entities([make_entity(tenant, "Umbrella Corp", "org", entity_id=entity.id)])
    assert "t:org" not in await _edges_by_key(driver, entity)
    assert "t:org" not in await _key_nodes(driver, tenant)


async def test_a_failed_relationship_batch_leaves_the_replaced_edge(
    driver: neo4j.AsyncDriver,
) -> None:
    store = Neo4jGraphStore(driver)
    await store.ensure_schema()
    tenant = new_tenant()
    a, b = make_entity(tenant, "A"), make_entity(tenant, "B")
    await store.upsert_entities([a, b])
    edge = make_relationship(a, b, "KNOWS")
    await store.upsert_relationships([edge])
    ghost = make_entity(tenant, "Ghost")  # never written
    moved = edge.model_copy(update={"target_entity_id": ghost.id})
    fresh = make_relationship(b, a, "KNOWS")

    with pytest.raises(MissingEndpointError) as raised:
        await store.upsert_relationships([fresh, moved])
    assert raised.value.missing == [str(ghost.id)]
    found = await store.relationships_of([a.id], tenant)
    assert [(r.id, r.target_entity_id) for r in found[a.id]] == [(edge.id, b.id)]
