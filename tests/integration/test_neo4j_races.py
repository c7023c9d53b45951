"""The stores under concurrent writers of the same entities.

A write that finds an entity, or its vector, which a concurrent delete then commits
away is run again (and a relationship whose end is gone then raises
`MissingEndpointError`); a read skips what was deleted while it ran; concurrent
upserts of one relationship id leave one edge and raise nothing; concurrent deletes of
one entity count it once between them.

Where one interleaving is the defect, a transaction held open in a second session
forces it: the write waits for the delete's lock, and the delete commits under it.
Where the defect needs a statement to be overtaken in its middle, which nothing
outside it can hold, the test runs racing rounds and asserts that none fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import neo4j
import pytest
from neo4j import exceptions as neo4j_errors

from redstring import (
    Entity,
    EntityId,
    HashingEmbeddingProvider,
    Redstring,
    Relationship,
    RetrievalMode,
    TenantId,
    TextReads,
    VectorRecord,
)
from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jVectorStore, cypher
from redstring.adapters.neo4j.connection import Neo4jConnection, Neo4jSettings
from redstring.adapters.neo4j.graph_store import replaced_under_it
from redstring.adapters.neo4j.records import relationship_row
from redstring.domain.errors import MissingEndpointError
from redstring.testing import make_entity, new_tenant

DIMENSION = 384  # the dimension of the shared database's vector index
_WAIT = 0.5  # long enough for a statement to reach the lock the held transaction has
_LOCKING_SEEK = "MATCH ()-[old:RELATES {tenant_id: row.tenant_id, id: row.id}]->()"
# `STARTS WITH` on the whole id: a seek of the identity constraint's index, unlocked.
_UNLOCKED_SEEK = (
    "MATCH ()-[old:RELATES]->() WHERE old.tenant_id = row.tenant_id AND old.id STARTS WITH row.id"
)


def _without_the_seek_lock() -> str:
    """`cypher.UPSERT_RELATIONSHIPS` looking up the edge to replace without its lock."""
    assert _LOCKING_SEEK in cypher.UPSERT_RELATIONSHIPS
    return cypher.UPSERT_RELATIONSHIPS.replace(_LOCKING_SEEK, _UNLOCKED_SEEK)


def _vector(tenant: TenantId, entity_id: EntityId) -> VectorRecord:
    return VectorRecord(
        entity_id=entity_id,
        tenant_id=tenant,
        vector=(1.0,) + (0.0,) * (DIMENSION - 1),
        entity_type="org",
    )


async def under_held(
    driver: neo4j.AsyncDriver,
    statement: str,
    parameters: dict[str, Any],
    write: Callable[[], Awaitable[object]],
    *,
    meanwhile: Callable[[], Awaitable[None]] | None = None,
) -> Awaitable[object]:
    """`write` started while a transaction of a session of its own has run `statement`,
    which commits once `write` waits for it (and `meanwhile`, other work, has run);
    `write`, still to be awaited."""
    async with driver.session() as session:
        held = await session.begin_transaction()
        await (await held.run(statement, parameters)).consume()
        waiting = asyncio.ensure_future(write())
        await asyncio.sleep(_WAIT)
        assert not waiting.done()  # waiting for the lock of the node the held one holds
        if meanwhile is not None:
            await meanwhile()
            assert not waiting.done()
        await held.commit()
    return waiting


async def _loops(driver: neo4j.AsyncDriver, entity: Entity) -> list[str]:
    records, _, _ = await driver.execute_query(
        "MATCH (e:Entity {tenant_id: $t, id: $id})-[k:LOOKUP_KEY]->(e) "
        "RETURN k.key AS key ORDER BY key",
        t=str(entity.tenant_id),
        id=str(entity.id),
    )
    return [record["key"] for record in records]


async def test_an_entity_upsert_overtaken_by_a_delete_writes_the_entity_again(
    driver: neo4j.AsyncDriver,
) -> None:
    """The upsert's `MERGE` finds the entity and waits for its lock, which a delete holds;
    once the delete commits, the node it found is gone. Run again, the upsert creates
    the entity afresh, with its lookup keys."""
    graph = Neo4jGraphStore(driver)
    await graph.ensure_schema()
    tenant = new_tenant()
    first = make_entity(tenant, "Acme Corp", "org")
    renamed = make_entity(tenant, "Globex Initech", "org", entity_id=first.id)
    await graph.upsert_entities([first])

    upsert = await under_held(
        driver,
        cypher.DELETE_ENTITIES,
        {"ids": [str(first.id)], "tenant_id": str(tenant)},
        lambda: graph.upsert_entities([renamed]),
    )
    await upsert

    assert await graph.get_entities([first.id], tenant) == [renamed]
    wanted = sorted(k for k in renamed.blocking_keys if not k.startswith("t:"))
    assert await _loops(driver, renamed) == wanted


async def test_a_vector_upsert_overtaken_by_a_delete_writes_the_vector_again(
    driver: neo4j.AsyncDriver,
) -> None:
    """`db.create.setNodeVectorProperty` on a vector node that a delete committed away
    while the upsert waited for its lock: run again, the upsert writes a new node."""
    vectors = Neo4jVectorStore(driver, DIMENSION)
    await vectors.ensure_schema()
    tenant = new_tenant()
    entity_id = EntityId(uuid.uuid4())
    await vectors.upsert([_vector(tenant, entity_id)])
    again = _vector(tenant, entity_id).model_copy(update={"source": "again"})

    upsert = await under_held(
        driver,
        cypher.delete_vectors(vectors.label),
        {"ids": [str(entity_id)], "tenant_id": str(tenant)},
        lambda: vectors.upsert([again]),
    )
    await upsert

    assert await vectors.sources([entity_id], tenant) == {entity_id: "again"}
    [match] = await vectors.search(again.vector, tenant, k=3)
    assert match.entity_id == entity_id


async def test_a_relationship_upsert_whose_end_a_delete_takes_names_the_missing_end(
    driver: neo4j.AsyncDriver,
) -> None:
    """The upsert matched both ends and waits for the lock of the one a delete holds; once
    the delete commits, the end is missing, as if it had been missing before."""
    graph = Neo4jGraphStore(driver)
    await graph.ensure_schema()
    tenant = new_tenant()
    kept, deleted = make_entity(tenant, "Acme Corp", "org"), make_entity(tenant, "Globex", "org")
    await graph.upsert_entities([kept, deleted])
    relationship = Relationship.create(tenant, kept.id, "SUPPLIES", deleted.id)

    upsert = await under_held(
        driver,
        cypher.DELETE_ENTITIES,
        {"ids": [str(deleted.id)], "tenant_id": str(tenant)},
        lambda: graph.upsert_relationships([relationship]),
    )
    with pytest.raises(MissingEndpointError) as missing:
        await upsert

    assert str(deleted.id) in str(missing.value)
    assert await graph.relationships_of([kept.id], tenant) == {kept.id: []}


async def test_a_delete_overtaken_by_a_delete_of_its_entity_does_not_count_it(
    driver: neo4j.AsyncDriver,
) -> None:
    """The delete found the entity and waits for its lock, which another delete holds;
    once that one commits, the entity is gone, and only that one counts it. An entity
    the delete alone takes is counted."""
    graph = Neo4jGraphStore(driver)
    await graph.ensure_schema()
    tenant = new_tenant()
    taken, left = make_entity(tenant, "Acme Corp", "org"), make_entity(tenant, "Globex", "org")
    await graph.upsert_entities([taken, left])

    delete = await under_held(
        driver,
        cypher.DELETE_ENTITIES,
        {"ids": [str(taken.id)], "tenant_id": str(tenant)},
        lambda: graph.delete_entities([taken.id, left.id], tenant),
    )

    assert await delete == 1
    assert await graph.get_entities([taken.id, left.id], tenant) == []


async def test_concurrent_deletes_of_the_same_entities_count_each_once(
    driver: neo4j.AsyncDriver,
) -> None:
    """Rounds of four deletes at once of one round's entities (and an id that never
    was), each in another order: their counts add up to the entities there were."""
    graph = Neo4jGraphStore(driver)
    await graph.ensure_schema()
    tenant = new_tenant()
    counted: list[tuple[int, list[int]]] = []
    for round_ in range(30):
        entities = [make_entity(tenant, f"Racer {round_} {i}", "org") for i in range(6)]
        await graph.upsert_entities(entities)
        ids = [e.id for e in entities] + [EntityId(uuid.uuid4())]
        orders = [ids, ids[::-1], ids[1::2] + ids[::2], ids[3:] + ids[:3]]
        counts = await asyncio.gather(*(graph.delete_entities(o, tenant) for o in orders))
        counted.append((len(entities), list(counts)))
        assert await graph.get_entities(ids, tenant) == []
    assert [sum(counts) for _, counts in counted] == [there for there, _ in counted], counted


def _counted(
    statement: str, tenant: str
) -> tuple[list[int], Callable[[neo4j.AsyncTransaction], Awaitable[None]]]:
    """A work that runs `statement` with `$t` the tenant, and the count of its runs."""
    runs: list[int] = []

    async def work(tx: neo4j.AsyncTransaction) -> None:
        runs.append(1)
        await (await tx.run(statement, t=tenant)).consume()

    return runs, work


async def test_a_write_failing_on_its_own_client_error_is_not_tried_again(
    driver: neo4j.AsyncDriver,
) -> None:
    """Only a node deleted under a write, or (a relationship upsert) an edge of the same
    id committed under it, is taken for a race: the vector procedure failing on its
    argument, or an entity created twice, is the caller's error, raised at once."""
    graph = Neo4jGraphStore(driver)
    await graph.ensure_schema()
    connection = Neo4jConnection(driver, database=None, settings=Neo4jSettings(), owned=False)
    tenant = str(new_tenant())

    runs, work = _counted(
        "CREATE (e:Entity {tenant_id: $t, id: 'probe'}) "
        "WITH e CALL db.create.setNodeVectorProperty(e, 'embedding', 'no vector')",
        tenant,
    )
    with pytest.raises(neo4j_errors.ClientError) as refused:
        await connection.write(work)
    assert refused.value.code == "Neo.ClientError.Procedure.ProcedureCallFailed"
    assert len(runs) == 1

    runs, work = _counted(
        "UNWIND [1, 2] AS n CREATE (:Entity {tenant_id: $t, id: 'twice'})", tenant
    )
    with pytest.raises(neo4j_errors.ConstraintError):
        await connection.write(work, conflict=replaced_under_it)
    assert len(runs) == 1


async def test_writes_racing_deletes_of_their_entities_raise_nothing(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> None:
    """Rounds of an entity's delete racing its upsert, its vector's upsert and delete, and
    an upsert of a relationship to it: every write succeeds, or (the relationship)
    raises `MissingEndpointError`."""
    uri, auth = neo4j_auth
    tenant = new_tenant()
    failures: list[str] = []
    async with Redstring.neo4j(uri, auth, embeddings=HashingEmbeddingProvider(DIMENSION)) as rs:
        graph, vectors = rs.graph, rs.vectors
        fixed = Entity.create(tenant, "Fixed End", "org")
        await graph.upsert_entities([fixed])

        async def call(write: Awaitable[object]) -> None:
            try:
                await write
            except MissingEndpointError:
                pass
            except Exception as exc:  # every other failure is the defect
                failures.append(f"{type(exc).__name__}: {exc}")

        for round_ in range(25):
            entity = make_entity(tenant, f"Racer {round_}", "org")
            await graph.upsert_entities([entity])
            await vectors.upsert([_vector(tenant, entity.id)])
            renamed = entity.model_copy(update={"name": f"Renamed {round_}"})
            await asyncio.gather(
                call(graph.delete_entities([entity.id], tenant)),
                call(vectors.delete([entity.id], tenant)),
                call(graph.upsert_entities([renamed])),
                call(vectors.upsert([_vector(tenant, entity.id)])),
                call(
                    graph.upsert_relationships(
                        [Relationship.create(tenant, entity.id, "KNOWS", fixed.id)]
                    )
                ),
            )
    assert failures == []


async def test_reads_racing_deletes_and_upserts_skip_what_was_deleted(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> None:
    """Every read, over entities deleted and upserted again while it runs: none fails,
    and none answers an entity, a relationship or a match that is not one of the
    tenant's (a node deleted mid-statement comes back without its properties)."""
    uri, auth = neo4j_auth
    tenant = new_tenant()
    failures: list[str] = []
    async with Redstring.neo4j(uri, auth, embeddings=HashingEmbeddingProvider(DIMENSION)) as rs:
        graph, vectors = rs.graph, rs.vectors
        assert isinstance(graph, TextReads)
        texts = graph
        racers = [Entity.create(tenant, f"Racer Number {i}", "org") for i in range(100)]
        hub = Entity.create(tenant, "Hub", "org")
        relationships = [Relationship.create(tenant, hub.id, "KNOWS", e.id) for e in racers]
        ids = [e.id for e in racers]
        known = {hub.id, *ids}
        await rs.upsert([hub, *racers], relationships)
        [query] = await rs.embeddings.embed_query(["Racer Number"])
        churning = True

        async def churn() -> None:
            """Deletes the racers, their vectors and relationships, and writes them again."""
            while churning:
                await rs.delete(ids, tenant)
                # Another churner may have deleted some racers in between.
                with contextlib.suppress(MissingEndpointError):
                    await rs.upsert(racers, relationships)

        async def churn_nodes() -> None:
            """Deletes the racers and writes them again, and nothing else: sooner."""
            while churning:
                await graph.delete_entities(ids, tenant)
                await graph.upsert_entities(racers)

        def check(answered: object) -> None:
            found: set[object] = set()
            if isinstance(answered, list):
                found = {getattr(x, "id", getattr(x, "entity_id", None)) for x in answered}
            elif isinstance(answered, dict):
                found = set(answered)
            assert found <= known, found

        async def read(name: str, reader: Callable[[], Awaitable[object]], times: int) -> None:
            for _ in range(times):
                try:
                    check(await reader())
                except Exception as exc:  # every failure is the defect
                    failures.append(f"{name}: {exc!r}"[:200])

        async def retrieved(mode: RetrievalMode) -> list[object]:
            found = await rs.retrieve("Racer Number", tenant, k=10, mode=mode)
            return [match.entity for match in found.matches]

        async def ends() -> dict[EntityId, Entity]:
            return (await graph.relationships_with_ends([hub.id], tenant)).entities

        async def tenants() -> list[object]:
            assert tenant in await graph.tenants()  # the hub is never deleted
            return []

        async def types(limit: int | None = None) -> list[object]:
            counted = await graph.entity_types(tenant, limit=limit)
            assert set(counted) == {"org"}  # the hub's type
            assert 1 <= counted["org"] <= len(known)
            return []

        readers: dict[str, tuple[Callable[[], Awaitable[object]], int]] = {
            "get_entities": (lambda: graph.get_entities(ids, tenant), 80),
            "embedding_texts": (lambda: texts.embedding_texts(ids, tenant), 80),
            "entity_page": (lambda: graph.entity_page(tenant, limit=100), 80),
            "relationships_of": (lambda: graph.relationships_of([hub.id, *ids], tenant), 80),
            "relationships_with_ends": (ends, 80),
            "search": (lambda: vectors.search(query, tenant, k=10), 80),
            "sources": (lambda: vectors.sources(ids, tenant), 80),
            "hybrid": (lambda: retrieved(RetrievalMode.HYBRID), 80),
            "lexical": (lambda: retrieved(RetrievalMode.LEXICAL), 80),
            "semantic": (lambda: retrieved(RetrievalMode.SEMANTIC), 80),
            "tenants": (tenants, 10),
            "entity_types": (types, 40),
            "first_entity_types": (lambda: types(limit=1), 40),
        }
        churners = [asyncio.ensure_future(c()) for c in (churn, churn_nodes, churn_nodes)]
        try:
            await asyncio.gather(*(read(n, r, times) for n, (r, times) in readers.items()))
        finally:
            churning = False
            await asyncio.gather(*churners)
    assert failures == []


async def _upsert_racing_rounds(
    driver: neo4j.AsyncDriver, graph: Neo4jGraphStore, rounds: int
) -> list[str]:
    """Rounds of eight upserts at once of one relationship id, with four different pairs of
    ends; each round's id names one edge, between ends one of them gave. The failures
    raised."""
    tenant = new_tenant()
    a, b, c = (make_entity(tenant, name, "org") for name in ("Alpha", "Beta", "Gamma"))
    await graph.upsert_entities([a, b, c])
    ends = [(a, b), (a, c), (b, c), (c, a)]
    failures: list[str] = []

    async def upsert(relationship: Relationship) -> None:
        try:
            await graph.upsert_relationships([relationship])
        except Exception as exc:  # every failure is the defect
            failures.append(f"{type(exc).__name__}: {exc}")

    for _ in range(rounds):
        rid = uuid.uuid4()
        variants = [
            Relationship.create(tenant, source.id, "KNOWS", target.id, id=rid)
            for source, target in ends
        ]
        await asyncio.gather(*(upsert(variants[i % len(variants)]) for i in range(8)))
        records, _, _ = await driver.execute_query(
            "MATCH (s)-[r:RELATES {tenant_id: $t, id: $id}]->(o) RETURN s.id AS s, o.id AS o",
            t=str(tenant),
            id=str(rid),
        )
        assert len(records) == 1
        assert (records[0]["s"], records[0]["o"]) in {
            (str(source.id), str(target.id)) for source, target in ends
        }
    return failures


async def test_concurrent_upserts_of_one_relationship_id_leave_one_edge(
    driver: neo4j.AsyncDriver,
) -> None:
    """None of them raises: each replaces the edge of the one that committed before it."""
    graph = Neo4jGraphStore(driver)
    await graph.ensure_schema()
    assert await _upsert_racing_rounds(driver, graph, rounds=10) == []


async def test_one_relationship_id_upserted_at_once_without_the_seek_lock_leaves_one_edge(
    driver: neo4j.AsyncDriver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server plans the look-up of the edge to replace as a locking seek of the
    identity constraint's index, which makes a second writer of the id wait, or fail on
    a deadlock that is tried again. A plan that seeks without the lock (seen on a server
    whose constraint another client kept dropping and making again) lets two writers
    both miss the other's edge and both create one, and the identity constraint refuses
    the second edge. `STARTS WITH` on the whole id plans such a seek;
    run again, the refused upsert replaces the edge committed before it."""
    graph = Neo4jGraphStore(driver)
    await graph.ensure_schema()
    monkeypatch.setattr(cypher, "UPSERT_RELATIONSHIPS", _without_the_seek_lock())
    assert await _upsert_racing_rounds(driver, graph, rounds=6) == []


_LOSSES = 7  # writers committing one after another before the upsert: one of eight


async def _until(event: asyncio.Event, writing: asyncio.Future[object]) -> None:
    """Once `event` is set; raises what `writing` raised if it ends first."""
    waiting = asyncio.ensure_future(event.wait())
    await asyncio.wait([waiting, writing], return_when=asyncio.FIRST_COMPLETED)
    if not waiting.done():
        waiting.cancel()
        writing.result()
        pytest.fail("the write ended before its run was refused")


async def test_a_relationship_upsert_refused_by_one_writer_after_another_runs_until_it_writes(
    driver: neo4j.AsyncDriver,
) -> None:
    """Without the seek lock, seven writers of the id (as many as one of eight writers
    at once can lose to) each commit while one run of the upsert waits for the lock of
    the edge it found, or of the constraint's entry, so that each run is refused. Every
    refusal is another writer's commit: the upsert runs again within `max_retry_time`,
    however many come first, and then replaces the last one's edge."""
    graph = Neo4jGraphStore(driver)
    await graph.ensure_schema()
    connection = Neo4jConnection(driver, database=None, settings=Neo4jSettings(), owned=False)
    tenant = new_tenant()
    a, b = make_entity(tenant, "Alpha", "org"), make_entity(tenant, "Beta", "org")
    await graph.upsert_entities([a, b])
    rid = uuid.uuid4()
    ours = relationship_row(Relationship.create(tenant, a.id, "KNOWS", b.id, id=rid))
    theirs = relationship_row(Relationship.create(tenant, b.id, "KNOWS", a.id, id=rid))
    statement = _without_the_seek_lock()
    began = [asyncio.Event() for _ in range(_LOSSES)]
    rival_holds = [asyncio.Event() for _ in range(_LOSSES)]
    runs: list[int] = []

    async def work(tx: neo4j.AsyncTransaction) -> None:
        run = len(runs)
        runs.append(run)
        if run < _LOSSES:  # its rival writes first, and holds its locks
            began[run].set()
            await rival_holds[run].wait()
        await (await tx.run(statement, rows=[ours])).consume()

    writing = asyncio.ensure_future(connection.write(work, conflict=replaced_under_it))
    for loss in range(_LOSSES):
        await _until(began[loss], writing)
        async with driver.session() as session:
            rival = await session.begin_transaction()
            await (await rival.run(cypher.UPSERT_RELATIONSHIPS, rows=[theirs])).consume()
            rival_holds[loss].set()
            await asyncio.sleep(_WAIT)
            assert not writing.done()  # waiting for a lock the rival holds
            await rival.commit()
    await writing

    assert len(runs) == _LOSSES + 1
    records, _, _ = await driver.execute_query(
        "MATCH (s)-[r:RELATES {tenant_id: $t, id: $id}]->(o) RETURN s.id AS s, o.id AS o",
        t=str(tenant),
        id=str(rid),
    )
    assert [(r["s"], r["o"]) for r in records] == [(str(a.id), str(b.id))]


async def test_a_refusal_taken_for_a_conflict_is_run_again_only_within_max_retry_time(
    driver: neo4j.AsyncDriver,
) -> None:
    """A write refused again and again for what `conflict` calls a concurrent commit (here
    an edge of the id that the write does not replace) is raised once
    `max_retry_time` is spent: at once when it is 0."""
    graph = Neo4jGraphStore(driver)
    await graph.ensure_schema()
    tenant = new_tenant()
    a, b = make_entity(tenant, "Alpha", "org"), make_entity(tenant, "Beta", "org")
    await graph.upsert_entities([a, b])
    relationship = Relationship.create(tenant, a.id, "KNOWS", b.id)
    await graph.upsert_relationships([relationship])
    create_again = (
        "UNWIND $rows AS row "
        "MATCH (s:Entity {tenant_id: row.tenant_id, id: row.source}) "
        "MATCH (t:Entity {tenant_id: row.tenant_id, id: row.target}) "
        "CREATE (s)-[:RELATES {tenant_id: row.tenant_id, id: row.id}]->(t)"
    )

    for seconds, tried in ((0.0, lambda n: n == 1), (2.0, lambda n: n > 1)):
        settings = Neo4jSettings(max_retry_time=seconds)
        connection = Neo4jConnection(driver, database=None, settings=settings, owned=False)
        runs: list[int] = []

        async def work(tx: neo4j.AsyncTransaction, runs: list[int] = runs) -> None:
            runs.append(1)
            rows = [relationship_row(relationship)]
            await (await tx.run(create_again, rows=rows)).consume()

        with pytest.raises(neo4j_errors.ConstraintError, match="already exists with type"):
            async with asyncio.timeout(30):  # a write that never gives up fails here
                await connection.write(work, conflict=replaced_under_it)
        assert tried(len(runs)), (seconds, len(runs))
