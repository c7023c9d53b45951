"""Every read statement of the retrieval path answers in one record, and a vector
search in one statement where it can.

The async driver costs about 0.07 ms of client CPU per record received
(docs/neo4j.md), and a round trip a few milliseconds, so a statement that
starts answering one record per row, or a search that takes two statements
for a common case, is a regression even when its results stay right.
"""

from __future__ import annotations

import base64
import json
import math
import uuid
from typing import Any

import httpx
import neo4j
import pytest

from redstring import (
    EntityId,
    HashingEmbeddingProvider,
    Redstring,
    RetrievalMode,
    VectorRecord,
    build_graph,
)
from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jVectorStore, cypher
from redstring.adapters.neo4j.connection import Neo4jConnection
from redstring.adapters.neo4j.vector_store import NearestSearch
from redstring.api import create_app
from redstring.api.cursors import place_of_cursor
from redstring.api.settings import Settings
from redstring.composition.observer import NoObserver
from redstring.domain.ids import id_order_key
from redstring.testing import make_entity, make_relationship, new_tenant

from .conftest import COMPLIANCE_DIMENSION, COMPLIANCE_LABEL

Answered = list[tuple[str, list[neo4j.Record]]]


@pytest.fixture
def answered(monkeypatch: pytest.MonkeyPatch) -> Answered:
    """Each statement a `Neo4jConnection` runs from here on, with the records it answered."""
    seen: Answered = []
    query = Neo4jConnection.query

    async def recorded(
        connection: Neo4jConnection, statement: str, parameters: dict[str, Any]
    ) -> list[neo4j.Record]:
        records = await query(connection, statement, parameters)
        seen.append((statement, records))
        return records

    monkeypatch.setattr(Neo4jConnection, "query", recorded)
    return seen


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
    for listed in (tenant, new_tenant()):  # three entities of one type, or none
        for limit in (None, 0, 1, 5):
            for after in (None, "org", "zzz"):
                types = cypher.ENTITY_TYPES
                records = await _records(
                    driver, types, tenant_id=str(listed), limit=limit, after=after
                )
                assert records == 1
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
    after = str(relationships[0].id)
    for statement in [*cypher.RELATIONSHIPS_OF.values(), *cypher.RELATIONSHIPS_WITH_ENDS.values()]:
        for after_type, after_id in ((None, None), ("SUPPLIES", after), ("SUPPLIES", None)):
            rows = await _records(
                driver,
                statement,
                ids=ids,
                tenant_id=str(tenant),
                types=None,
                limit=10,
                after_type=after_type,
                after_id=after_id,
            )
            assert rows == 1
    for counts in [
        *cypher.RELATIONSHIP_COUNTS.values(),
        *cypher.TYPED_RELATIONSHIP_COUNTS.values(),
    ]:
        for types in (None, ["SUPPLIES"]):
            assert await _records(driver, counts, ids=ids, tenant_id=str(tenant), types=types) == 1
    for typed, types in ((False, None), (True, ["org"])):
        statement = cypher.search_vectors(COMPLIANCE_LABEL, typed=typed)
        assert await _records(driver, statement, **search, types=types) == 1
    exact = cypher.search_vectors_exact(COMPLIANCE_LABEL)
    assert await _records(driver, exact, **search, types=None) == 1
    lookup = {"keys": keys, "prefixes": ["w:acm"], "limit": 10, "prefix_limit": 10}
    for nearest in ("index", "typed", "exact", None):
        for lexical in (True, False):
            statement = cypher.find_candidates(COMPLIANCE_LABEL, nearest, lexical)
            types = ["org"] if nearest == "typed" else None
            assert await _records(driver, statement, **search, **lookup, types=types) == 1


def _operators(plan: Any) -> list[tuple[str, int]]:
    """Each operator of a PROFILEd plan with the rows it produced, depth first."""
    children = plan.get("children", [])
    return [(plan["operatorType"], plan["rows"]), *(o for c in children for o in _operators(c))]


@pytest.mark.parametrize("limit", [None, 2], ids=["all", "first"])
async def test_listing_types_seeks_the_tenant_in_its_identity_index(
    driver: neo4j.AsyncDriver, limit: int | None
) -> None:
    """A scan of the tenant alone: the seek yields its entities and no label is scanned
    (without `id IS NOT NULL` the planner scans every tenant's `:Entity` nodes)."""
    graph = Neo4jGraphStore(driver)
    await graph.ensure_schema()
    tenant, other = new_tenant(), new_tenant()
    await graph.upsert_entities([make_entity(tenant, f"Listed {i}", "org") for i in range(3)])
    await graph.upsert_entities([make_entity(other, f"Other {i}", "org") for i in range(20)])
    statement = cypher.ENTITY_TYPES
    async with driver.session() as session:
        result = await session.run(
            "PROFILE " + statement, tenant_id=str(tenant), limit=limit, after=None
        )
        [record] = [r async for r in result]
        operators = _operators((await result.consume()).profile)
    assert record["types"] == [["org", 3]]
    seeks = [rows for operator, rows in operators if operator.startswith("NodeUniqueIndexSeek")]
    assert seeks == [3], operators
    assert not [operator for operator, _ in operators if "Scan" in operator], operators


@pytest.mark.parametrize("direction", ["OUT", "IN", "BOTH"])
async def test_a_count_without_types_reads_degrees_not_edges(
    driver: neo4j.AsyncDriver, direction: str
) -> None:
    """`relationship_counts` counts on the server, in one record: without types from
    each node's degree, following no edge (no `Expand` in the plan); with types, each
    edge is read there, and only the counts come back."""
    graph = Neo4jGraphStore(driver)
    await graph.ensure_schema()
    tenant = new_tenant()
    hub = make_entity(tenant, "Hub", "org")
    spokes = [make_entity(tenant, f"Spoke {i}", "org") for i in range(6)]
    await graph.upsert_entities([hub, *spokes])
    await graph.upsert_relationships(
        [make_relationship(hub, s, "OWNS") for s in spokes[:4]]
        + [make_relationship(s, hub, "KNOWS") for s in spokes[4:]]
    )
    expected = {"OUT": 4, "IN": 2, "BOTH": 6}[direction]
    parameters = {"ids": [str(hub.id)], "tenant_id": str(tenant)}
    for statement, types in (
        (cypher.RELATIONSHIP_COUNTS[direction], None),
        (cypher.TYPED_RELATIONSHIP_COUNTS[direction], ["OWNS", "KNOWS"]),
    ):
        async with driver.session() as session:
            result = await session.run("PROFILE " + statement, **parameters, types=types)
            [record] = [r async for r in result]
            operators = _operators((await result.consume()).profile)
        assert record["counts"] == [[str(hub.id), expected]]
        expands = [rows for operator, rows in operators if operator.startswith("Expand")]
        assert expands == ([] if types is None else [expected]), operators


@pytest.mark.parametrize("mode", list(RetrievalMode))
async def test_a_retrieve_is_one_round_trip_when_its_matches_come_along(
    driver: neo4j.AsyncDriver, monkeypatch: pytest.MonkeyPatch, mode: RetrievalMode
) -> None:
    """Both channels and the whole entities of the vector matches in one statement: a
    retrieve whose matches are all vector matches (a tenant smaller than `k`) makes one
    round trip, observed or not."""
    graph = Neo4jGraphStore(driver)
    vectors = Neo4jVectorStore(driver, COMPLIANCE_DIMENSION, label=COMPLIANCE_LABEL)
    await graph.ensure_schema()
    await vectors.ensure_schema()
    client = Redstring(
        embeddings=HashingEmbeddingProvider(COMPLIANCE_DIMENSION), vectors=vectors, graph=graph
    )
    tenant = new_tenant()
    entities = [make_entity(tenant, name, "org") for name in ("Acme Corp", "Acme Widgets", "Apex")]
    await client.upsert(entities)
    rounds = 0
    query = graph.connection.query

    async def counted(statement: str, parameters: dict[str, Any]) -> list[neo4j.Record]:
        nonlocal rounds
        rounds += 1
        return await query(statement, parameters)

    monkeypatch.setattr(graph.connection, "query", counted)
    monkeypatch.setattr(vectors.connection, "query", counted)
    observer = _Calls()
    for retriever in (client, client.observed(observer)):
        rounds = 0
        result = await retriever.retrieve("Acme", tenant, k=5, mode=mode)
        assert result.matches
        assert rounds == (2 if mode is RetrievalMode.LEXICAL else 1)
    assert observer.calls[0] == ("candidates", "find_candidates")


async def test_each_far_end_is_sent_once(driver: neo4j.AsyncDriver) -> None:
    """A far end that several of the asked entities' relationships lead to is in the
    answer once: a hub next to every match costs one entity, not one per match."""
    graph = Neo4jGraphStore(driver)
    await graph.ensure_schema()
    tenant = new_tenant()
    hub = make_entity(tenant, "Hub", "org")
    spokes = [make_entity(tenant, f"Spoke {i}", "org") for i in range(4)]
    await graph.upsert_entities([hub, *spokes])
    await graph.upsert_relationships([make_relationship(s, hub, "PART_OF") for s in spokes])
    async with driver.session() as session:
        result = await session.run(
            cypher.RELATIONSHIPS_WITH_ENDS["BOTH"],
            ids=[str(s.id) for s in spokes],
            tenant_id=str(tenant),
            types=None,
            limit=10,
            after_type=None,
            after_id=None,
        )
        [record] = [record async for record in result]
    assert [end["id"] for end in record["ends"]] == [str(hub.id)]


class _EndsApart(Neo4jGraphStore):
    """A Neo4j graph store without `relationships_with_ends` (so not an `EndReads`)."""

    relationships_with_ends = None  # type: ignore[assignment]


WALK = """
query ($tenant: ID!) {
  retrieve(query: "Acme", tenantId: $tenant, k: 5, entityTypes: ["org"]) {
    matches { entity { name relationships(first: 10) { source { name } target { name } } } }
  }
}
"""


async def test_a_graphql_retrieve_walking_one_hop_is_two_round_trips(
    driver: neo4j.AsyncDriver, answered: Answered
) -> None:
    """Over the API: the retrieve's one read (its matches all come along), then every
    match's relationships with the entities at their far ends (none of them a match) in
    one more. A graph store that cannot read ends with the relationships takes three."""
    graph = Neo4jGraphStore(driver)
    vectors = Neo4jVectorStore(driver, COMPLIANCE_DIMENSION, label=COMPLIANCE_LABEL)
    await graph.ensure_schema()
    await vectors.ensure_schema()
    embeddings = HashingEmbeddingProvider(COMPLIANCE_DIMENSION)
    client = Redstring(embeddings=embeddings, vectors=vectors, graph=graph)
    tenant = new_tenant()
    orgs = [make_entity(tenant, name, "org") for name in ("Acme Corp", "Acme Widgets", "Apex")]
    people = [make_entity(tenant, name, "person") for name in ("Ada Acme", "Bo Apex")]
    await client.upsert(
        [*orgs, *people],
        [
            make_relationship(people[0], orgs[0], "WORKS_AT"),
            make_relationship(orgs[1], people[0], "EMPLOYS"),
            make_relationship(people[1], orgs[2], "WORKS_AT"),
        ],
    )
    walked: dict[str, set[tuple[str, str]]] = {}
    for reads_ends in (True, False):
        store = graph if reads_ends else _EndsApart(driver)
        services = Redstring(embeddings=embeddings, vectors=vectors, graph=store)
        app = create_app(Settings(), services=services)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            answered.clear()
            response = await http.post(
                "/graphql", json={"query": WALK, "variables": {"tenant": str(tenant)}}
            )
        statements = [statement for statement, _ in answered]
        body = response.json()
        assert "errors" not in body, body
        matches = body["data"]["retrieve"]["matches"]
        walked[str(reads_ends)] = {
            (r["source"]["name"], r["target"]["name"])
            for m in matches
            for r in m["entity"]["relationships"]
        }
        assert len(matches) == len(orgs)
        if reads_ends:
            assert len(statements) == 2
            assert statements[1] in cypher.RELATIONSHIPS_WITH_ENDS.values()
        else:
            assert len(statements) == 3
    assert (
        walked["True"]
        == walked["False"]
        == {
            ("Ada Acme", "Acme Corp"),
            ("Acme Widgets", "Ada Acme"),
            ("Bo Apex", "Apex"),
        }
    )


COUNTED = """
query ($tenant: ID!, $after: String) {
  retrieve(query: "Acme", tenantId: $tenant, k: 5, entityTypes: ["org"]) {
    matches { entity { name relationshipCount
                       relationships(first: 1, after: $after) { cursor target { name } } } }
  }
}
"""


async def test_a_graphql_page_with_its_count_is_one_statement_more(
    driver: neo4j.AsyncDriver, answered: Answered
) -> None:
    """Every match's `relationshipCount` in one counting statement, beside the one read of
    their relationships (a page after a cursor alike), whatever the number of matches."""
    graph = Neo4jGraphStore(driver)
    vectors = Neo4jVectorStore(driver, COMPLIANCE_DIMENSION, label=COMPLIANCE_LABEL)
    await graph.ensure_schema()
    await vectors.ensure_schema()
    embeddings = HashingEmbeddingProvider(COMPLIANCE_DIMENSION)
    client = Redstring(embeddings=embeddings, vectors=vectors, graph=graph)
    tenant = new_tenant()
    orgs = [make_entity(tenant, name, "org") for name in ("Acme Corp", "Acme Widgets", "Apex")]
    people = [make_entity(tenant, f"Person {i}", "person") for i in range(4)]
    edges = [make_relationship(p, orgs[0], "WORKS_AT") for p in people]
    edges += [make_relationship(orgs[1], people[0], "EMPLOYS")]
    await client.upsert([*orgs, *people], edges)
    app = create_app(Settings(), services=client)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        after = None
        walked: list[str] = []
        for _ in range(6):
            answered.clear()
            response = await http.post(
                "/graphql",
                json={"query": COUNTED, "variables": {"tenant": str(tenant), "after": after}},
            )
            statements = [statement for statement, _ in answered]
            body = response.json()
            assert "errors" not in body, body
            [acme] = [
                m["entity"]
                for m in body["data"]["retrieve"]["matches"]
                if m["entity"]["name"] == "Acme Corp"
            ]
            assert acme["relationshipCount"] == len(people)
            counts = {
                m["entity"]["name"]: m["entity"]["relationshipCount"]
                for m in body["data"]["retrieve"]["matches"]
            }
            assert counts == {"Acme Corp": 4, "Acme Widgets": 1, "Apex": 0}
            # The retrieve, then the page and the counts, in either order.
            assert len(statements) == 3
            page = [s for s in statements if s in cypher.RELATIONSHIPS_WITH_ENDS.values()]
            count = [s for s in statements if s in cypher.RELATIONSHIP_COUNTS.values()]
            assert (len(page), len(count)) == (1, 1)
            if not acme["relationships"]:
                break
            [edge] = acme["relationships"]
            walked.append(edge["target"]["name"])
            after = edge["cursor"]
    assert walked == ["Acme Corp"] * len(people)


class _Calls(NoObserver):
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def store_call(self, store: str, method: str, seconds: float, *, failed: bool) -> None:
        self.calls.append((store, method))


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

    async def counted(*args: Any) -> tuple[list[tuple[EntityId, float]], NearestSearch]:
        nonlocal searches
        searches += 1
        return await nearest(*args)

    monkeypatch.setattr(vectors, "_nearest", counted)
    found = await vectors.search(tilted(1.0), tenant, k=8)
    twins = sorted((r.entity_id for r in records[7:9]), key=id_order_key)
    assert [m.entity_id for m in found] == [r.entity_id for r in records[:7]] + twins[:1]
    assert searches == 1


async def test_the_candidate_reader_asks_again_when_the_cut_is_tied_past_its_fetch(
    driver: neo4j.AsyncDriver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sixty equal vectors through the index: the one statement fetches a few of them,
    in the index's order, so the reader asks the vector store again, from twice the
    statement's fetch, and it widens until the tie is settled by id, as a search of the
    store alone answers."""
    graph = Neo4jGraphStore(driver)
    vectors = Neo4jVectorStore(driver, COMPLIANCE_DIMENSION, label=COMPLIANCE_LABEL, exact_below=0)
    await graph.ensure_schema()
    await vectors.ensure_schema()
    reader = graph.candidate_reader(vectors)
    assert reader is not None
    tenant = new_tenant()
    same = (1.0, *([0.0] * (COMPLIANCE_DIMENSION - 1)))
    ids = [EntityId(uuid.uuid4()) for _ in range(60)]
    await vectors.upsert(
        [VectorRecord(entity_id=i, tenant_id=tenant, vector=same, entity_type="org") for i in ids]
    )
    fetches: list[int] = []
    answer = vectors.answer

    async def counted(plan: NearestSearch) -> Any:
        fetches.append(plan.fetch)
        return await answer(plan)

    monkeypatch.setattr(vectors, "answer", counted)
    found = await reader.find_candidates(tenant, vector=same, k=5, keys=[])
    assert [m.entity_id for m in found.semantic] == sorted(ids, key=id_order_key)[:5]
    assert fetches == [2 * (5 + 1 + 5 // 4)]


async def test_a_place_from_u_e000_up_sends_no_ascii_typed_edge_nor_type(
    driver: neo4j.AsyncDriver, answered: Answered
) -> None:
    """A crafted cursor `[1, "\\uffff", id]` over a hub whose edges are all ASCII-typed reads
    no edge row, nor any far end, from the server (`string_order.server_bound`): before,
    its bound was "" and every page of every hub sent all the hub's edges. A type from
    U+E000 up after the bound is still sent, and cut here. `entity_types(after=)` alike."""
    graph = Neo4jGraphStore(driver)
    await graph.ensure_schema()
    tenant = new_tenant()
    hub = make_entity(tenant, "Hub", "org")
    spokes = [make_entity(tenant, f"Spoke {i}", "org") for i in range(8)]
    await graph.upsert_entities([hub, *spokes, make_entity(tenant, "Wide", "\uff5a")])
    ascii_typed = [make_relationship(hub, s, f"T{i % 3}") for i, s in enumerate(spokes[:6])]
    wide = make_relationship(spokes[6], hub, "\uff5a")  # after the bound, before the place
    await graph.upsert_relationships([*ascii_typed, wide])
    crafted = json.dumps(
        [1, "\uffff", str(uuid.uuid4())], ensure_ascii=False, separators=(",", ":")
    )
    cursor = base64.urlsafe_b64encode(crafted.encode())
    place = place_of_cursor(cursor.decode().rstrip("="))
    for limit in (None, 50):
        answered.clear()
        found = await graph.relationships_of([hub.id], tenant, limit_per_entity=limit, after=place)
        assert found == {hub.id: []}
        assert _sent(answered) == [1]  # the `\uff5a` edge alone, left out here
        answered.clear()
        read = await graph.relationships_with_ends(
            [hub.id], tenant, limit_per_entity=limit, after=place
        )
        assert (read.relationships, read.entities) == ({hub.id: []}, {})
        assert _sent(answered) == [1, 1]  # that edge and its far end
    answered.clear()
    assert await graph.entity_types(tenant, after="\uffff") == {}
    assert _sent(answered) == [1]  # `\uff5a` alone, not `org`


def _sent(answered: Answered) -> list[int]:
    """How many relationships, far ends and types the answered records carried."""
    sent: list[int] = []
    for _, records in answered:
        for record in records:
            columns = set(record.keys())  # `in record` would look among its values
            if "found" in columns:
                sent.append(sum(len(rs) for _, rs in record["found"]))
            if "ends" in columns:
                sent.append(len(record["ends"]))
            if "types" in columns:
                sent.append(len(record["types"]))
    return sent
