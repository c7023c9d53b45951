"""The schema step is what makes the adapters work: proven on vector labels of the tests'
own, from no schema at all, and on the graph store's schema as `ensure_schema` leaves it
(never dropped here: others on the server use it)."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import neo4j
import pytest

from redstring import EntityId, VectorRecord
from redstring.adapters.neo4j import (
    Neo4jGraphStore,
    Neo4jVectorStore,
    VectorIndexMismatchError,
    cypher,
)
from redstring.adapters.neo4j.connection import connect_driver
from redstring.domain.errors import DimensionMismatchError
from redstring.testing import new_tenant

from .conftest import COMPLIANCE_DIMENSION

# The graph store's schema is shared with anything else using the server (a bench, a
# `redstring serve`, another checkout's tests when NEO4J_URI points at one server): these
# tests never drop it, and `_graph_schema_is_left_in_place` checks that they did not.
# What they make is under labels of their own (`probe_label`), dropped afterwards.
GRAPH_SCHEMA = {
    ("constraint", "redstring_entity_identity"): ("UNIQUENESS", ["Entity"], ["tenant_id", "id"]),
    ("index", "redstring_lookup_key"): ("RANGE", ["LOOKUP_KEY"], ["tenant_id", "key", "entity_id"]),
    ("constraint", "redstring_relationship_identity"): (
        "RELATIONSHIP_UNIQUENESS",
        ["RELATES"],
        ["tenant_id", "id"],
    ),
}

Shape = tuple[str, list[str], list[str]]


async def _shown(driver: neo4j.AsyncDriver) -> dict[tuple[str, str], dict[str, Any]]:
    """Every constraint and index on the server, by kind and name."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    async with driver.session() as session:
        for kind, shown in (("constraint", "CONSTRAINTS"), ("index", "INDEXES")):
            result = await session.run(f"SHOW {shown} YIELD *")
            async for row in result:
                found[(kind, row["name"])] = dict(row)
    return found


async def _schema(driver: neo4j.AsyncDriver) -> dict[tuple[str, str], Shape]:
    """Every constraint and index on the server: its kind and name, to its type, labels or
    relationship types, and properties."""
    return {
        key: (row["type"], list(row["labelsOrTypes"] or []), list(row["properties"] or []))
        for key, row in (await _shown(driver)).items()
    }


@pytest.fixture(autouse=True)
async def _graph_schema_is_left_in_place(driver: neo4j.AsyncDriver) -> AsyncIterator[None]:
    """The graph store's constraints and index that were there before the test are still
    there after it, the same objects (ids): not dropped, not even dropped and made again,
    which leaves a moment without them for whatever else writes to the server."""
    before = {key: row["id"] for key, row in (await _shown(driver)).items() if key in GRAPH_SCHEMA}
    yield
    after = await _shown(driver)
    assert {key: after[key]["id"] if key in after else None for key in before} == before


@pytest.fixture
async def probe_label(driver: neo4j.AsyncDriver) -> AsyncIterator[str]:
    """A vector label no other test or process uses; its nodes, constraint and index are
    dropped afterwards, so the server is left as the test found it."""
    label = f"SchemaProbe{uuid.uuid4().hex[:8]}"
    yield label
    prefix = cypher.vector_index_name(label).removesuffix("_embedding")
    async with driver.session() as session:
        await (await session.run(f"MATCH (v:{label}) DETACH DELETE v")).consume()
        await (await session.run(f"DROP INDEX {prefix}_embedding IF EXISTS")).consume()
        await (await session.run(f"DROP CONSTRAINT {prefix}_identity IF EXISTS")).consume()
    left = [name for _, name in await _schema(driver) if name.startswith(prefix + "_")]
    assert not left


async def _plan(driver: neo4j.AsyncDriver, query: str, **params: object) -> list[tuple[str, str]]:
    """The operators of `query`'s `EXPLAIN` plan, each with its details."""
    async with driver.session() as session:
        summary = await (await session.run("EXPLAIN " + query, params)).consume()
    operators: list[tuple[str, str]] = []

    def walk(plan: object) -> None:
        details = plan.get("args", {}).get("Details", "")  # type: ignore[attr-defined]
        operators.append((plan["operatorType"], str(details)))  # type: ignore[index]
        for child in plan.get("children", []):  # type: ignore[attr-defined]
            walk(child)

    walk(summary.plan)
    return operators


def _unavailable(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "cannot be searched" in r.getMessage()]


async def test_ensure_schema_makes_what_the_adapters_need(
    driver: neo4j.AsyncDriver, probe_label: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A vector label without schema takes writes and answers searches by the exact scan;
    `ensure_schema` makes its constraint and index, idempotently, and the index answers.
    The graph store's schema has the declared shape after its `ensure_schema`, and the
    lexical lookup seeks the lookup-key index without scanning or sorting."""
    prefix = cypher.vector_index_name(probe_label).removesuffix("_embedding")
    assert not [name for _, name in await _schema(driver) if name.startswith(prefix + "_")]
    vectors = Neo4jVectorStore(driver, COMPLIANCE_DIMENSION, label=probe_label, exact_below=0)
    tenant = new_tenant()
    record = VectorRecord(
        entity_id=EntityId(uuid.uuid4()),
        tenant_id=tenant,
        vector=(1.0,) * COMPLIANCE_DIMENSION,
        entity_type="thing",
    )
    await vectors.upsert([record])
    with caplog.at_level("WARNING", logger="redstring.adapters.neo4j.vector_store"):
        [match] = await vectors.search([1.0] * COMPLIANCE_DIMENSION, tenant, k=3)
    assert match.entity_id == record.entity_id
    assert _unavailable(caplog)  # the exact scan answered (test_neo4j_index_fallbacks)

    await Neo4jGraphStore(driver).ensure_schema()
    await vectors.ensure_schema()
    await vectors.ensure_schema()  # idempotent
    caplog.clear()
    with caplog.at_level("WARNING", logger="redstring.adapters.neo4j.vector_store"):
        [match] = await vectors.search([1.0] * COMPLIANCE_DIMENSION, tenant, k=3)
    assert match.entity_id == record.entity_id
    assert not _unavailable(caplog)  # the index answered

    schema = await _schema(driver)
    assert schema[("constraint", f"{prefix}_identity")] == (
        "UNIQUENESS",
        [probe_label],
        ["tenant_id", "entity_id"],
    )
    assert schema[("index", f"{prefix}_embedding")] == (
        "VECTOR",
        [probe_label],
        ["embedding", "tenant_id", "entity_type"],
    )
    assert {key: schema.get(key) for key in GRAPH_SCHEMA} == GRAPH_SCHEMA

    # The prefix seek (`STARTS WITH`) is a range seek on the same index, in its order.
    lookup = await _plan(
        driver,
        cypher.FIND_LEXICAL_CANDIDATES,
        keys=["w:x"],
        prefixes=["w:xy"],
        tenant_id="t",
        limit=5,
        prefix_limit=5,
    )
    seeks = [d for operator, d in lookup if operator.startswith("DirectedRelationshipIndexSeek")]
    # The blocks' and the prefixes', both on the properties of `redstring_lookup_key`.
    assert len(seeks) == 2, lookup
    assert all("LOOKUP_KEY(tenant_id, key, entity_id)" in details for details in seeks), seeks
    operators = " ".join(operator for operator, _ in lookup)
    assert "Scan" not in operators
    # The index hands each block over in id order: nothing sorts it.
    assert "Sort" not in operators
    assert "Top" not in operators


@pytest.mark.parametrize("attempt", range(4))
async def test_stores_starting_at_once_make_one_schema(
    driver: neo4j.AsyncDriver,
    neo4j_auth: tuple[str, tuple[str, str]],
    probe_label: str,
    attempt: int,
) -> None:
    """Four stores making one label's schema at once (`serve --workers 4`, or a load
    starting beside a server, on a fresh database) all start: the server refusing one's
    `CREATE ... IF NOT EXISTS` for the rule another made meanwhile
    (`EquivalentSchemaRuleAlreadyExists`) is a race, not a failure. Each attempt races on
    a label of its own; without the retry most attempts saw one refused."""
    uri, auth = neo4j_auth
    async with contextlib.AsyncExitStack() as drivers:
        stores = [
            Neo4jVectorStore(
                await drivers.enter_async_context(connect_driver(uri, auth)),
                COMPLIANCE_DIMENSION,
                label=probe_label,
            )
            for _ in range(4)  # one driver each, as processes have
        ]
        await asyncio.gather(*(store.ensure_schema() for store in stores))
    prefix = cypher.vector_index_name(probe_label).removesuffix("_embedding")
    made = {name for _, name in await _schema(driver) if name.startswith(prefix + "_")}
    assert made == {f"{prefix}_embedding", f"{prefix}_identity"}


async def test_a_rule_of_another_shape_in_the_way_is_refused_after_one_more_run(
    driver: neo4j.AsyncDriver, probe_label: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `CREATE CONSTRAINT ... IF NOT EXISTS` that a plain index of the same property
    stands in the way of (an operator's, say) is refused for good: run once more, as a
    race is, then raised, not tried again for `max_retry_time`."""
    prefix = cypher.vector_index_name(probe_label).removesuffix("_embedding")
    connection = Neo4jGraphStore(driver).connection
    runs = 0
    session = connection._session

    def counted(access_mode: str) -> Any:
        nonlocal runs
        runs += 1
        return session(access_mode)

    async with driver.session() as admin:
        await (
            await admin.run(f"CREATE INDEX {prefix}_plain FOR (n:{probe_label}) ON (n.k)")
        ).consume()
    try:
        monkeypatch.setattr(connection, "_session", counted)
        with pytest.raises(neo4j.exceptions.ClientError) as refused:
            await connection.run_schema(
                f"CREATE CONSTRAINT {prefix}_identity IF NOT EXISTS "
                f"FOR (n:{probe_label}) REQUIRE n.k IS UNIQUE"
            )
        assert refused.value.code == "Neo.ClientError.Schema.IndexAlreadyExists"
        assert runs == 2
    finally:
        async with driver.session() as admin:
            await (await admin.run(f"DROP INDEX {prefix}_plain IF EXISTS")).consume()


async def test_index_of_another_dimension_is_refused(
    driver: neo4j.AsyncDriver, probe_label: str
) -> None:
    """The message names the index and the `DROP INDEX` after which `ensure_schema`
    builds the index of the new dimension, which it then does."""
    await Neo4jVectorStore(driver, 8, label=probe_label).ensure_schema()
    with pytest.raises(DimensionMismatchError) as refused:
        await Neo4jVectorStore(driver, 9, label=probe_label).ensure_schema()
    index = cypher.vector_index_name(probe_label)
    assert (refused.value.expected, refused.value.actual) == (8, 9)
    message = str(refused.value)
    assert message.startswith(f"the vector store for label {probe_label} has dimension 9, ")
    assert f"vector index {index} exists with dimension 8" in message
    assert f"(DROP INDEX {index})" in message
    assert f"MATCH (v:{probe_label}) DETACH DELETE v" in message
    # What a user of the commands can do: no setting names a label, nor runs ensure_schema.
    assert "`redstring rekey --all-tenants --vectors` rebuilds the index" in message
    async with driver.session() as session:
        await (await session.run(f"DROP INDEX {index}")).consume()
    await Neo4jVectorStore(driver, 9, label=probe_label).ensure_schema()
    rebuilt = (await _shown(driver))[("index", index)]
    assert rebuilt["options"]["indexConfig"]["vector.dimensions"] == 9


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ("`vector.similarity_function`: 'euclidean', `vector.quantization.enabled`: false",
         "similarity function euclidean"),
        ("`vector.similarity_function`: 'cosine', `vector.quantization.enabled`: true",
         "quantization"),
    ],
)  # fmt: skip
async def test_index_of_other_options_is_refused(
    driver: neo4j.AsyncDriver, probe_label: str, options: str, named: str
) -> None:
    index = cypher.vector_index_name(probe_label)
    async with driver.session() as session:
        statement = (
            f"CYPHER 25 CREATE VECTOR INDEX {index} FOR (v:{probe_label}) ON v.embedding "
            f"WITH [v.tenant_id, v.entity_type] "
            f"OPTIONS {{indexConfig: {{`vector.dimensions`: 8, {options}}}}}"
        )
        await (await session.run(statement)).consume()
    with pytest.raises(VectorIndexMismatchError, match=named) as refused:
        await Neo4jVectorStore(driver, 8, label=probe_label).ensure_schema()
    assert f"DROP INDEX {index}" in str(refused.value)
    async with driver.session() as session:
        await (await session.run(f"DROP INDEX {index}")).consume()
    await Neo4jVectorStore(driver, 8, label=probe_label).ensure_schema()  # rebuilt as wanted


async def test_the_index_is_built_with_the_stores_hnsw_settings(
    driver: neo4j.AsyncDriver, probe_label: str
) -> None:
    store = Neo4jVectorStore(driver, 8, label=probe_label, hnsw_m=24, hnsw_ef_construction=150)
    await store.ensure_schema()
    async with driver.session() as session:
        result = await session.run(
            cypher.VECTOR_INDEX_SHAPE, name=cypher.vector_index_name(probe_label)
        )
        [shape] = [record async for record in result]
    assert shape["config"]["vector.hnsw.m"] == 24
    assert shape["config"]["vector.hnsw.ef_construction"] == 150
    assert shape["config"]["vector.quantization.type"] == "NONE"


async def test_an_index_of_other_hnsw_settings_is_kept_with_a_warning(
    driver: neo4j.AsyncDriver, probe_label: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Scores and filters are the same, only recall differs: a rebuild is the operator's
    choice, not a refusal to start."""
    index = cypher.vector_index_name(probe_label)
    await Neo4jVectorStore(
        driver, 8, label=probe_label, hnsw_m=8, hnsw_ef_construction=40
    ).ensure_schema()
    with caplog.at_level("WARNING", logger="redstring.adapters.neo4j.vector_store"):
        await Neo4jVectorStore(driver, 8, label=probe_label).ensure_schema()
    [warning] = [r.getMessage() for r in caplog.records if index in r.getMessage()]
    assert "vector.hnsw.m 8 instead of" in warning
    assert "vector.hnsw.ef_construction 40 instead of" in warning
    assert f"DROP INDEX {index}" in warning
    caplog.clear()
    with caplog.at_level("WARNING", logger="redstring.adapters.neo4j.vector_store"):
        await Neo4jVectorStore(
            driver, 8, label=probe_label, hnsw_m=8, hnsw_ef_construction=40
        ).ensure_schema()
    assert not [r for r in caplog.records if index in r.getMessage()]


async def test_an_index_the_server_cannot_write_to_is_refused(
    driver: neo4j.AsyncDriver, probe_label: str, caplog: pytest.LogCaptureFixture
) -> None:
    """An index built with `vector.hnsw.ef_construction` 1 (made here as Neo4j takes it)
    stops the database on its first large write: refused, not kept with a warning as
    other HNSW settings are; 2, the least the store builds with, is kept. Nothing is
    written to either."""
    index = cypher.vector_index_name(probe_label)

    async def create(candidates: int) -> None:
        async with driver.session() as session:
            await (await session.run(f"DROP INDEX {index} IF EXISTS")).consume()
            statement = (
                f"CYPHER 25 CREATE VECTOR INDEX {index} FOR (v:{probe_label}) ON v.embedding "
                f"WITH [v.tenant_id, v.entity_type] "
                f"OPTIONS {{indexConfig: {{`vector.dimensions`: 8, "
                f"`vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false, "
                f"`vector.hnsw.m`: 16, `vector.hnsw.ef_construction`: {candidates}}}}}"
            )
            await (await session.run(statement)).consume()

    await create(1)
    with (
        caplog.at_level("WARNING", logger="redstring.adapters.neo4j.vector_store"),
        pytest.raises(
            VectorIndexMismatchError, match=r"vector\.hnsw\.ef_construction 1,"
        ) as refused,
    ):
        await Neo4jVectorStore(driver, 8, label=probe_label).ensure_schema()
    assert f"DROP INDEX {index}" in str(refused.value)
    assert "ensure_schema" in str(refused.value)
    assert not [r for r in caplog.records if index in r.getMessage()]

    await create(2)
    with caplog.at_level("WARNING", logger="redstring.adapters.neo4j.vector_store"):
        await Neo4jVectorStore(driver, 8, label=probe_label).ensure_schema()
    [warning] = [r.getMessage() for r in caplog.records if index in r.getMessage()]
    assert "vector.hnsw.ef_construction 2 instead of 200" in warning


def test_an_hnsw_candidate_list_below_two_is_refused(driver: neo4j.AsyncDriver) -> None:
    """Neo4j takes `vector.hnsw.ef_construction` 1, then its first write that builds the
    HNSW graph stops the database: the store refuses it before any index exists."""
    label = "SchemaProbe"
    for candidates in (1, 0):
        with pytest.raises(ValueError, match="hnsw_ef_construction must be at least 2"):
            Neo4jVectorStore(driver, 8, label=label, hnsw_ef_construction=candidates)
    with pytest.raises(ValueError, match="hnsw_m"):
        Neo4jVectorStore(driver, 8, label=label, hnsw_m=0)
    Neo4jVectorStore(driver, 8, label=label, hnsw_m=1, hnsw_ef_construction=2)
