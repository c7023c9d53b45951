"""The schema step is what makes the adapters work: proven on an empty schema."""

from __future__ import annotations

import uuid

import neo4j
import pytest

from redstring import EntityId, VectorRecord
from redstring.adapters.neo4j import (
    Neo4jGraphStore,
    Neo4jVectorStore,
    VectorIndexMismatchError,
    cypher,
)
from redstring.domain.errors import DimensionMismatchError
from redstring.testing import new_tenant

from .conftest import COMPLIANCE_DIMENSION

LABEL = "SchemaProbeVector"


# What the test drops: the graph store's schema and the probe label's, nothing else, so
# a run against a server that holds other data (NEO4J_URI set) leaves its schema alone.
_GRAPH_SCHEMA_NAMES = (
    "redstring_entity_identity",
    "redstring_lookup_key",
    "redstring_relationship_identity",
)


async def _drop_redstring_schema(driver: neo4j.AsyncDriver) -> None:
    probe = cypher.vector_index_name(LABEL).removesuffix("_embedding")
    async with driver.session() as session:
        constraints = await (await session.run("SHOW CONSTRAINTS YIELD name")).value("name")
        for name in constraints:
            if name in _GRAPH_SCHEMA_NAMES or name.startswith(probe):
                await (await session.run(f"DROP CONSTRAINT {name}")).consume()
        indexes = await (await session.run("SHOW INDEXES YIELD name")).value("name")
        for name in indexes:
            if name in _GRAPH_SCHEMA_NAMES or name.startswith(probe):
                await (await session.run(f"DROP INDEX {name}")).consume()


async def _drop_label_schema(driver: neo4j.AsyncDriver, label: str) -> None:
    """The vector index and identity constraint `ensure_schema` makes for `label`."""
    prefix = cypher.vector_index_name(label).removesuffix("_embedding")
    async with driver.session() as session:
        await (await session.run(f"DROP INDEX {prefix}_embedding IF EXISTS")).consume()
        await (await session.run(f"DROP CONSTRAINT {prefix}_identity IF EXISTS")).consume()


async def _plan_operators(driver: neo4j.AsyncDriver, query: str, **params: object) -> str:
    async with driver.session() as session:
        summary = await (await session.run("EXPLAIN " + query, params)).consume()
    operators: list[str] = []

    def walk(plan: object) -> None:
        operators.append(plan["operatorType"])  # type: ignore[index]
        for child in plan.get("children", []):  # type: ignore[attr-defined]
            walk(child)

    walk(summary.plan)
    return " ".join(operators)


async def test_empty_schema_fails_and_ensure_schema_fixes_it(driver: neo4j.AsyncDriver) -> None:
    await _drop_redstring_schema(driver)
    vectors = Neo4jVectorStore(driver, COMPLIANCE_DIMENSION, label=LABEL, exact_below=0)
    tenant = new_tenant()
    record = VectorRecord(
        entity_id=EntityId(uuid.uuid4()),
        tenant_id=tenant,
        vector=(1.0,) * COMPLIANCE_DIMENSION,
        entity_type="thing",
    )
    await vectors.upsert([record])
    # Without its index the search is answered by the exact scan (test_neo4j_index_fallbacks).
    [match] = await vectors.search([1.0] * COMPLIANCE_DIMENSION, tenant, k=3)
    assert match.entity_id == record.entity_id
    lookup = await _plan_operators(
        driver,
        cypher.FIND_LEXICAL_CANDIDATES,
        keys=["w:x"],
        prefixes=[],
        tenant_id="t",
        limit=5,
        prefix_limit=5,
    )
    assert "RelationshipIndexSeek" not in lookup

    await Neo4jGraphStore(driver).ensure_schema()
    await vectors.ensure_schema()
    await vectors.ensure_schema()  # idempotent
    [match] = await vectors.search([1.0] * COMPLIANCE_DIMENSION, tenant, k=3)
    assert match.entity_id == record.entity_id
    # The prefix seek (`STARTS WITH`) is a range seek on the same index, in its order.
    lookup = await _plan_operators(
        driver,
        cypher.FIND_LEXICAL_CANDIDATES,
        keys=["w:x"],
        prefixes=["w:xy"],
        tenant_id="t",
        limit=5,
        prefix_limit=5,
    )
    assert "DirectedRelationshipIndexSeek" in lookup
    assert "Scan" not in lookup
    # The index hands each block over in id order: nothing sorts it.
    assert "Sort" not in lookup
    assert "Top" not in lookup


async def test_index_of_another_dimension_is_refused(driver: neo4j.AsyncDriver) -> None:
    await Neo4jVectorStore(driver, 8, label="DimensionProbe").ensure_schema()
    with pytest.raises(DimensionMismatchError):
        await Neo4jVectorStore(driver, 9, label="DimensionProbe").ensure_schema()


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
    driver: neo4j.AsyncDriver, options: str, named: str
) -> None:
    label = f"OptionsProbe{uuid.uuid4().hex[:8]}"
    index = cypher.vector_index_name(label)
    async with driver.session() as session:
        statement = (
            f"CYPHER 25 CREATE VECTOR INDEX {index} FOR (v:{label}) ON v.embedding "
            f"WITH [v.tenant_id, v.entity_type] "
            f"OPTIONS {{indexConfig: {{`vector.dimensions`: 8, {options}}}}}"
        )
        await (await session.run(statement)).consume()
    try:
        with pytest.raises(VectorIndexMismatchError, match=named) as refused:
            await Neo4jVectorStore(driver, 8, label=label).ensure_schema()
        assert f"DROP INDEX {index}" in str(refused.value)
    finally:
        async with driver.session() as session:
            await (await session.run(f"DROP INDEX {index} IF EXISTS")).consume()
    await Neo4jVectorStore(driver, 8, label=label).ensure_schema()  # rebuilt as wanted


async def test_the_index_is_built_with_the_stores_hnsw_settings(driver: neo4j.AsyncDriver) -> None:
    label = f"HnswProbe{uuid.uuid4().hex[:8]}"
    store = Neo4jVectorStore(driver, 8, label=label, hnsw_m=24, hnsw_ef_construction=150)
    await store.ensure_schema()
    try:
        async with driver.session() as session:
            result = await session.run(
                cypher.VECTOR_INDEX_SHAPE, name=cypher.vector_index_name(label)
            )
            [shape] = [record async for record in result]
        assert shape["config"]["vector.hnsw.m"] == 24
        assert shape["config"]["vector.hnsw.ef_construction"] == 150
        assert shape["config"]["vector.quantization.type"] == "NONE"
    finally:
        async with driver.session() as session:
            index = cypher.vector_index_name(label)
            await (await session.run(f"DROP INDEX {index} IF EXISTS")).consume()


async def test_an_index_of_other_hnsw_settings_is_kept_with_a_warning(
    driver: neo4j.AsyncDriver, caplog: pytest.LogCaptureFixture
) -> None:
    """Scores and filters are the same, only recall differs: a rebuild is the operator's
    choice, not a refusal to start."""
    label = f"HnswProbe{uuid.uuid4().hex[:8]}"
    index = cypher.vector_index_name(label)
    await Neo4jVectorStore(
        driver, 8, label=label, hnsw_m=8, hnsw_ef_construction=40
    ).ensure_schema()
    try:
        with caplog.at_level("WARNING", logger="redstring.adapters.neo4j.vector_store"):
            await Neo4jVectorStore(driver, 8, label=label).ensure_schema()
        [warning] = [r.getMessage() for r in caplog.records if index in r.getMessage()]
        assert "vector.hnsw.m 8 instead of" in warning
        assert "vector.hnsw.ef_construction 40 instead of" in warning
        assert f"DROP INDEX {index}" in warning
        caplog.clear()
        with caplog.at_level("WARNING", logger="redstring.adapters.neo4j.vector_store"):
            await Neo4jVectorStore(
                driver, 8, label=label, hnsw_m=8, hnsw_ef_construction=40
            ).ensure_schema()
        assert not [r for r in caplog.records if index in r.getMessage()]
    finally:
        async with driver.session() as session:
            await (await session.run(f"DROP INDEX {index} IF EXISTS")).consume()


async def test_an_index_the_server_cannot_write_to_is_refused(
    driver: neo4j.AsyncDriver, caplog: pytest.LogCaptureFixture
) -> None:
    """An index built with `vector.hnsw.ef_construction` 1 (made here as Neo4j takes it)
    stops the database on its first large write: refused, not kept with a warning as
    other HNSW settings are; 2, the least the store builds with, is kept. Nothing is
    written to either."""
    label = f"HnswProbe{uuid.uuid4().hex[:8]}"
    index = cypher.vector_index_name(label)

    async def create(candidates: int) -> None:
        async with driver.session() as session:
            await (await session.run(f"DROP INDEX {index} IF EXISTS")).consume()
            statement = (
                f"CYPHER 25 CREATE VECTOR INDEX {index} FOR (v:{label}) ON v.embedding "
                f"WITH [v.tenant_id, v.entity_type] "
                f"OPTIONS {{indexConfig: {{`vector.dimensions`: 8, "
                f"`vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false, "
                f"`vector.hnsw.m`: 16, `vector.hnsw.ef_construction`: {candidates}}}}}"
            )
            await (await session.run(statement)).consume()

    try:
        await create(1)
        with (
            caplog.at_level("WARNING", logger="redstring.adapters.neo4j.vector_store"),
            pytest.raises(
                VectorIndexMismatchError, match=r"vector\.hnsw\.ef_construction 1,"
            ) as refused,
        ):
            await Neo4jVectorStore(driver, 8, label=label).ensure_schema()
        assert f"DROP INDEX {index}" in str(refused.value)
        assert "ensure_schema" in str(refused.value)
        assert not [r for r in caplog.records if index in r.getMessage()]

        await create(2)
        with caplog.at_level("WARNING", logger="redstring.adapters.neo4j.vector_store"):
            await Neo4jVectorStore(driver, 8, label=label).ensure_schema()
        [warning] = [r.getMessage() for r in caplog.records if index in r.getMessage()]
        assert "vector.hnsw.ef_construction 2 instead of 200" in warning
    finally:
        await _drop_label_schema(driver, label)


def test_an_hnsw_candidate_list_below_two_is_refused(driver: neo4j.AsyncDriver) -> None:
    """Neo4j takes `vector.hnsw.ef_construction` 1, then its first write that builds the
    HNSW graph stops the database: the store refuses it before any index exists."""
    for candidates in (1, 0):
        with pytest.raises(ValueError, match="hnsw_ef_construction must be at least 2"):
            Neo4jVectorStore(driver, 8, label=LABEL, hnsw_ef_construction=candidates)
    with pytest.raises(ValueError, match="hnsw_m"):
        Neo4jVectorStore(driver, 8, label=LABEL, hnsw_m=0)
    Neo4jVectorStore(driver, 8, label=LABEL, hnsw_m=1, hnsw_ef_construction=2)
