"""How the stores write: one loop per lookup key, no type keys; failed batches undone;
batches in flight two at a time; a rewrite of keys waits for a write in flight."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import neo4j
import numpy as np
import pytest

from redstring import Entity, EntityId, TenantId, VectorRecord
from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jSettings, Neo4jVectorStore, cypher
from redstring.adapters.neo4j.connection import Neo4jConnection
from redstring.adapters.neo4j.records import entity_row
from redstring.domain.errors import MissingEndpointError
from redstring.testing import make_entity, make_relationship, new_tenant

from .conftest import COMPLIANCE_DIMENSION, COMPLIANCE_LABEL


async def _edges_by_key(driver: neo4j.AsyncDriver, entity: Entity) -> dict[str, int]:
    """How many `LOOKUP_KEY` loops `entity` has for each key (each checked to name it)."""
    async with driver.session() as session:
        result = await session.run(
            "MATCH (e:Entity {tenant_id: $t, id: $id})-[k:LOOKUP_KEY]->(e) "
            "WHERE k.tenant_id = $t AND k.entity_id = $id "
            "RETURN k.key AS key, count(*) AS edges",
            t=str(entity.tenant_id),
            id=str(entity.id),
        )
        return {record["key"]: record["edges"] async for record in result}


async def _tenant_keys(driver: neo4j.AsyncDriver, tenant: TenantId) -> set[str]:
    async with driver.session() as session:
        result = await session.run(
            "MATCH ()-[k:LOOKUP_KEY {tenant_id: $t}]->() RETURN DISTINCT k.key AS key",
            t=str(tenant),
        )
        return {record["key"] async for record in result}


def _lookup(entity: Entity) -> dict[str, int]:
    return {k: 1 for k in entity.blocking_keys if not k.startswith("t:")}


async def test_type_keys_get_no_loop(driver: neo4j.AsyncDriver) -> None:
    store = Neo4jGraphStore(driver)
    await store.ensure_schema()
    tenant = new_tenant()
    entity = make_entity(tenant, "Acme Corp", "org")
    await store.upsert_entities([entity])

    assert "t:org" in entity.blocking_keys
    assert await _tenant_keys(driver, tenant) == set(_lookup(entity))
    [stored] = await store.get_entities([entity.id], tenant)
    assert stored.blocking_keys == entity.blocking_keys  # the entity keeps all its keys


async def test_one_loop_per_key_however_the_entity_is_written(driver: neo4j.AsyncDriver) -> None:
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
    assert "w:corporation" not in await _tenant_keys(driver, tenant)

    names = ["Globex Alpha", "Globex Beta", "Globex Gamma", "Globex Delta"]
    versions = [make_entity(tenant, n, "org", entity_id=first.id) for n in names * 3]
    await asyncio.gather(*(store.upsert_entities([v]) for v in versions))
    [last] = await store.get_entities([first.id], tenant)
    assert await _edges_by_key(driver, first) == _lookup(last)


async def test_deleting_an_entity_deletes_its_loops(driver: neo4j.AsyncDriver) -> None:
    store = Neo4jGraphStore(driver)
    await store.ensure_schema()
    tenant = new_tenant()
    kept, gone = make_entity(tenant, "Acme Corp"), make_entity(tenant, "Acme Labs")
    await store.upsert_entities([kept, gone])

    assert await store.delete_entities([gone.id], tenant) == 1
    assert await _tenant_keys(driver, tenant) == set(_lookup(kept))
    found = await store.find_lexical_candidates(["w:acme"], tenant)
    assert [c.id for c in found] == [kept.id]


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


async def test_entity_batches_written_two_at_a_time_leave_what_one_by_one_would(
    driver: neo4j.AsyncDriver,
) -> None:
    """Small batches, two in flight: every entity is written once, with its last value
    and one loop per lookup key, and none of the batches deadlocks the other."""
    settings = Neo4jSettings(batch_size=2, write_concurrency=2)
    store = Neo4jGraphStore(driver, settings=settings)
    await store.ensure_schema()
    tenant = new_tenant()
    entities = [make_entity(tenant, f"Acme Widget {i}", "org") for i in range(9)]
    renamed = make_entity(tenant, "Acme Gadget", "org", entity_id=entities[1].id)
    # The rename would land in the batch after the original's: the two are in flight at once.
    await store.upsert_entities([*entities[:2], renamed, *entities[2:]])

    stored = {e.id: e for e in await store.get_entities([e.id for e in entities], tenant)}
    assert len(stored) == 9
    assert stored[renamed.id] == renamed
    for entity in [*entities[:1], renamed, *entities[2:]]:
        assert await _edges_by_key(driver, entity) == _lookup(entity)


async def test_vector_batches_written_two_at_a_time_leave_what_one_by_one_would(
    driver: neo4j.AsyncDriver,
) -> None:
    settings = Neo4jSettings(vector_batch_size=2, write_concurrency=2)
    store = Neo4jVectorStore(
        driver, COMPLIANCE_DIMENSION, label=COMPLIANCE_LABEL, settings=settings
    )
    await store.ensure_schema()
    tenant = new_tenant()

    def axis(i: int) -> tuple[float, ...]:
        return tuple(1.0 if j == i else 0.0 for j in range(COMPLIANCE_DIMENSION))

    records = [
        VectorRecord(
            entity_id=EntityId(uuid.uuid4()), tenant_id=tenant, vector=axis(i), entity_type="org"
        )
        for i in range(9)
    ]
    moved = records[1].model_copy(update={"vector": axis(12)})
    # The move would land in the batch after the original's: the two are in flight at once.
    await store.upsert([*records[:2], moved, *records[2:]])

    for i, record in enumerate(records):
        expected = 12 if i == 1 else i
        [best] = await store.search(axis(expected), tenant, k=1)
        assert best.entity_id == record.entity_id
        assert best.score == pytest.approx(1.0, abs=1e-3)
    assert len(await store.search(axis(0), tenant, k=20)) == 9


async def _embeddings(driver: neo4j.AsyncDriver, tenant: TenantId) -> dict[str, list[float]]:
    async with driver.session() as session:
        result = await session.run(
            f"MATCH (v:{COMPLIANCE_LABEL} {{tenant_id: $t}}) RETURN v.entity_id AS id, "
            "v.embedding AS embedding",
            t=str(tenant),
        )
        return {record["id"]: record["embedding"] async for record in result}


@pytest.mark.parametrize("exact_below", [0, 2000], ids=["index", "exact-scan"])
async def test_packed_and_list_vectors_are_stored_and_searched_alike(
    driver: neo4j.AsyncDriver, exact_below: int
) -> None:
    """Bolt 6 servers get `Vector` parameters; older ones float lists. The two must
    store the same float32 values and give the same matches and scores."""
    packed = Neo4jVectorStore(
        driver, COMPLIANCE_DIMENSION, label=COMPLIANCE_LABEL, exact_below=exact_below
    )
    await packed.ensure_schema()
    assert await packed._db.packs_vectors()  # the test server speaks Bolt 6
    listed = Neo4jVectorStore(
        driver, COMPLIANCE_DIMENSION, label=COMPLIANCE_LABEL, exact_below=exact_below
    )
    listed._db._packs_vectors = False  # as with a server before Bolt 6
    rng = np.random.default_rng(11)
    matrix = rng.standard_normal((40, COMPLIANCE_DIMENSION))
    ids = [EntityId(uuid.uuid4()) for _ in matrix]
    tenants = {"packed": new_tenant(), "listed": new_tenant()}
    for name, store in (("packed", packed), ("listed", listed)):
        await store.upsert(
            [
                VectorRecord(
                    entity_id=i, tenant_id=tenants[name], vector=tuple(row), entity_type="org"
                )
                for i, row in zip(ids, matrix.tolist(), strict=True)
            ]
        )

    stored = {name: await _embeddings(driver, tenant) for name, tenant in tenants.items()}
    assert stored["packed"] == stored["listed"]
    assert stored["packed"][str(ids[0])] == matrix[0].astype(np.float32).tolist()
    query = rng.standard_normal(COMPLIANCE_DIMENSION).tolist()
    for store in (packed, listed):
        found = {name: await store.search(query, tenant, k=10) for name, tenant in tenants.items()}
        assert found["packed"] == found["listed"]
        assert len(found["packed"]) == 10
    assert await packed.search(query, tenants["packed"], k=10) == await listed.search(
        query, tenants["packed"], k=10
    )


def _count_transactions(connection: Neo4jConnection) -> list[int]:
    """Count `connection`'s write transactions (each still runs on the server)."""
    count = [0]
    write = connection.write

    async def counting(work: Any) -> Any:
        count[0] += 1
        return await write(work)

    connection.write = counting  # type: ignore[method-assign]
    return count


async def test_vectors_are_batched_by_vector_batch_size_and_entities_by_batch_size(
    driver: neo4j.AsyncDriver,
) -> None:
    settings = Neo4jSettings(batch_size=2, vector_batch_size=4)
    graph = Neo4jGraphStore(driver, settings=settings)
    vectors = Neo4jVectorStore(
        driver, COMPLIANCE_DIMENSION, label=COMPLIANCE_LABEL, settings=settings
    )
    await graph.ensure_schema()
    await vectors.ensure_schema()
    tenant = new_tenant()
    entities = [make_entity(tenant, f"Entity {i}", "org") for i in range(9)]
    records = [
        VectorRecord(
            entity_id=e.id,
            tenant_id=tenant,
            vector=tuple(float(j == i) for j in range(COMPLIANCE_DIMENSION)),
            entity_type="org",
        )
        for i, e in enumerate(entities)
    ]
    graph_transactions = _count_transactions(graph._db)
    vector_transactions = _count_transactions(vectors._db)
    await graph.upsert_entities(entities)
    await vectors.upsert(records)

    assert graph_transactions == [5]  # 9 entities in batches of 2
    assert vector_transactions == [3]  # 9 vectors in batches of 4
    assert len(await graph.get_entities([e.id for e in entities], tenant)) == 9
    assert len(await vectors.search(records[0].vector, tenant, k=20)) == 9


def _stale(entity: Entity) -> Entity:
    """`entity` as an earlier version's rules keyed it: `ł` and `ø` dropped."""
    return entity.model_copy(
        update={"normalized_name": "odz rsted", "blocking_keys": ("t:org", "w:odz", "w:rsted")}
    )


async def test_rewritten_keys_are_one_loop_each(driver: neo4j.AsyncDriver) -> None:
    store = Neo4jGraphStore(driver)
    await store.ensure_schema()
    current = make_entity(new_tenant(), "Łódź Ørsted", "org", properties={"aliases": ("ŁØ",)})
    await store.upsert_entities([_stale(current)])
    assert await _edges_by_key(driver, current) == {"w:odz": 1, "w:rsted": 1}

    assert await store.rewrite_keys(await store.entity_page(current.tenant_id, limit=5)) == 1
    assert await _edges_by_key(driver, current) == _lookup(current)


async def test_a_rewrite_waits_for_a_write_in_flight_and_leaves_it(
    driver: neo4j.AsyncDriver,
) -> None:
    """An upsert of the entity that has not committed when the rewrite reaches it: the
    rewrite waits for its lock, then reads the renamed entity and leaves it. Without the
    lock taken before the checks, they read the committed old name, pass, and the rewrite
    then writes the old name's keys over the new name's."""
    store = Neo4jGraphStore(driver)
    await store.ensure_schema()
    tenant = new_tenant()
    current = make_entity(tenant, "Łódź Ørsted", "org")
    await store.upsert_entities([_stale(current)])
    read = await store.entity_page(tenant, limit=5)
    renamed = make_entity(tenant, "Kraków Mills", "org", entity_id=current.id)

    async with driver.session() as session:
        tx = await session.begin_transaction()
        await (await tx.run(cypher.UPSERT_ENTITIES, rows=[entity_row(renamed)])).consume()
        rewrite = asyncio.ensure_future(store.rewrite_keys(read))
        await asyncio.sleep(1.0)
        assert not rewrite.done()  # waiting for the node's lock
        await tx.commit()
    assert await rewrite == 0
    assert await store.get_entities([current.id], tenant) == [renamed]
    assert await _edges_by_key(driver, current) == _lookup(renamed)
