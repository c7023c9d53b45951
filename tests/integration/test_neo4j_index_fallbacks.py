"""A statement that searches the vector index and fails is answered another way.

A `DatabaseError`: the joint candidate statement by reading the stores apart
(`Neo4jCandidateReader`), an indexed search by the exact scan (`Neo4jVectorStore`).
The server raises such errors on a fault inside its vector index (docs/neo4j.md,
"A server fault worked around"), which no data written here provokes at will. So a
connection that raises the driver's `DatabaseError` for those statements alone
stands in for the store's own; every other statement, the fallbacks' included,
goes to the real server.

An index that does not exist or is not online yet (`IndexNotFound`): both by the
exact scan in the index's place. That one the server raises at will, once the
index is dropped.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Collection, Sequence
from typing import Any

import neo4j
import pytest
from neo4j import exceptions as neo4j_errors

from redstring import (
    HashingEmbeddingProvider,
    RetrievalMode,
    Retriever,
    VectorRecord,
    build_graph,
)
from redstring.adapters.neo4j import (
    Neo4jCandidateReader,
    Neo4jGraphStore,
    Neo4jVectorStore,
    VectorSearchMode,
    cypher,
)
from redstring.adapters.neo4j.connection import Neo4jConnection
from redstring.domain.blocking import query_blocking_keys
from redstring.domain.lexical import LexicalCandidate
from redstring.testing import make_entity, new_tenant

from .conftest import COMPLIANCE_DIMENSION, COMPLIANCE_LABEL

DIMENSION = 128
LABEL = "RetrievalVector128"


class _FailingStatements(Neo4jConnection):
    """`connection` on the same driver, except that `statements` raise `DatabaseError`
    as the server reports a fault in the vector index."""

    def __init__(self, connection: Neo4jConnection, statements: Collection[str]) -> None:
        super().__init__(
            connection.driver,
            database=connection.database,
            settings=connection.settings,
            owned=False,
        )
        self._statements = statements
        self.failed = 0

    async def query(self, statement: str, parameters: dict[str, Any]) -> list[neo4j.Record]:
        if statement in self._statements:
            self.failed += 1
            raise neo4j_errors.DatabaseError("java.lang.ArrayIndexOutOfBoundsException")
        return await super().query(statement, parameters)


def _joint_statements(label: str) -> set[str]:
    return {
        cypher.find_candidates(label, nearest, lexical)
        for nearest in ("index", "typed", "exact", None)
        for lexical in (True, False)
    }


async def test_a_retrieve_answers_when_the_joint_statement_fails(
    driver: neo4j.AsyncDriver, caplog: pytest.LogCaptureFixture
) -> None:
    """The same matches in every mode, and the same candidates of both channels, as
    when the statement answers."""
    graph = Neo4jGraphStore(driver)
    vectors = Neo4jVectorStore(driver, DIMENSION, label=LABEL)
    await graph.ensure_schema()
    await vectors.ensure_schema()
    embeddings = HashingEmbeddingProvider(DIMENSION)
    tenant = new_tenant()
    entities = [
        make_entity(tenant, name, entity_type)
        for name, entity_type in (
            ("Acme Corp", "org"),
            ("Acme Widgets", "org"),
            ("Apex Corporation", "org"),
            ("Acme Smith", "person"),
            ("Ada Lovelace", "person"),
        )
    ]
    await build_graph(entities, [], embeddings=embeddings, vectors=vectors, graph=graph)
    healthy = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
    assert isinstance(healthy.candidates, Neo4jCandidateReader)

    failing_graph = Neo4jGraphStore(driver)
    failing = _FailingStatements(graph.connection, _joint_statements(LABEL))
    failing_graph._db = failing
    faulty = Retriever(embeddings=embeddings, vectors=vectors, graph=failing_graph)
    assert isinstance(faulty.candidates, Neo4jCandidateReader)

    for mode in RetrievalMode:
        expected = await healthy.retrieve("ACME Corporation", tenant, k=3, mode=mode)
        with caplog.at_level("WARNING", logger="redstring.adapters.neo4j.candidate_reader"):
            found = await faulty.retrieve("ACME Corporation", tenant, k=3, mode=mode)
        assert expected.matches, mode
        assert found.matches == expected.matches, mode
    assert failing.failed == len(RetrievalMode)
    assert "candidate read failed" in caplog.text

    # Both channels' candidates, typed and not, as the joint statement reads them.
    [vector] = await embeddings.embed_query(["ACME Corporation"])
    keys = query_blocking_keys("ACME Corporation")
    for types in (None, ["org"], ["person"]):
        asked: dict[str, Any] = {"vector": vector, "k": 3, "keys": keys, "entity_types": types}
        whole = await healthy.candidates.find_candidates(tenant, **asked)
        apart = await faulty.candidates.find_candidates(tenant, **asked)
        assert apart.semantic
        assert apart.semantic == whole.semantic
        assert apart.lexical
        assert _read(apart.lexical) == _read(whole.lexical)
    assert failing.failed == len(RetrievalMode) + 3


def _read(candidates: Sequence[LexicalCandidate]) -> list[tuple[str, ...]]:
    """What the lexical score reads of each candidate, in id order."""
    return sorted(
        (str(c.id), str(c.tenant_id), c.entity_type, c.name, c.normalized_name, repr(c.properties))
        for c in candidates
    )


def _unit(angle: float) -> list[float]:
    """A unit vector in the plane of the first two axes, `angle` radians from axis 0."""
    vector = [0.0] * COMPLIANCE_DIMENSION
    vector[0], vector[1] = math.cos(angle), math.sin(angle)
    return vector


async def test_a_failing_index_search_is_answered_by_the_exact_scan(
    driver: neo4j.AsyncDriver, caplog: pytest.LogCaptureFixture
) -> None:
    """With `exact_below=0` every search goes through the index, whose statement fails
    here: the exact scan answers, the nearest first, typed or not."""
    store = Neo4jVectorStore(driver, COMPLIANCE_DIMENSION, label=COMPLIANCE_LABEL, exact_below=0)
    await store.ensure_schema()
    exact = Neo4jVectorStore(
        driver, COMPLIANCE_DIMENSION, label=COMPLIANCE_LABEL, search_mode=VectorSearchMode.EXACT
    )
    tenant = new_tenant()
    entities = [make_entity(tenant, f"entity {i}", "org" if i % 2 else "person") for i in range(8)]
    await store.upsert(
        [
            VectorRecord(
                entity_id=e.id, tenant_id=tenant, vector=_unit(0.1 * i), entity_type=e.entity_type
            )
            for i, e in enumerate(entities)
        ]
    )
    failing = _FailingStatements(
        store.connection,
        {cypher.search_vectors(COMPLIANCE_LABEL, typed=typed) for typed in (False, True)},
    )
    store._db = failing

    with caplog.at_level("WARNING", logger="redstring.adapters.neo4j.vector_store"):
        for types, nearest in ((None, entities[:3]), (["org"], entities[1:6:2])):
            found = await store.search(_unit(0.0), tenant, k=3, entity_types=types)
            assert [m.entity_id for m in found] == [e.id for e in nearest]
            assert found == await exact.search(_unit(0.0), tenant, k=3, entity_types=types)
    assert failing.failed == 2
    assert "answered by an exact scan" in caplog.text


_UNAVAILABLE = "cannot be searched"


def _unavailable_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if _UNAVAILABLE in r.getMessage()]


async def _drop_index(driver: neo4j.AsyncDriver, label: str) -> None:
    async with driver.session() as session:
        index = cypher.vector_index_name(label)
        await (await session.run(f"DROP INDEX {index} IF EXISTS")).consume()


async def _drop_label(driver: neo4j.AsyncDriver, label: str) -> None:
    """The label's nodes, constraint and index: what `ensure_schema` and writes made."""
    await _drop_index(driver, label)
    async with driver.session() as session:
        await (await session.run(f"MATCH (v:{label}) DETACH DELETE v")).consume()
        constraint = cypher.vector_index_name(label).removesuffix("_embedding") + "_identity"
        await (await session.run(f"DROP CONSTRAINT {constraint} IF EXISTS")).consume()


async def test_a_search_without_its_index_is_answered_by_the_exact_scan(
    driver: neo4j.AsyncDriver, caplog: pytest.LogCaptureFixture
) -> None:
    """Once the index is dropped the server refuses every statement that names it, even
    for a tenant the exact scan would answer: the store's search and the reader's one
    statement both answer as the exact scan does, with one warning that names the index
    and says to run `ensure_schema`, and one more only after the index answered again."""
    label = f"MissingIndex{uuid.uuid4().hex[:8]}"
    graph = Neo4jGraphStore(driver)
    store = Neo4jVectorStore(driver, DIMENSION, label=label, exact_below=0)
    exact = Neo4jVectorStore(driver, DIMENSION, label=label, search_mode=VectorSearchMode.EXACT)
    await graph.ensure_schema()
    await store.ensure_schema()
    try:
        embeddings = HashingEmbeddingProvider(DIMENSION)
        tenant = new_tenant()
        entities = [
            make_entity(tenant, name, entity_type)
            for name, entity_type in (
                ("Acme Corp", "org"),
                ("Acme Widgets", "org"),
                ("Apex Corporation", "org"),
                ("Acme Smith", "person"),
                ("Ada Lovelace", "person"),
            )
        ]
        await build_graph(entities, [], embeddings=embeddings, vectors=store, graph=graph)
        [vector] = await embeddings.embed_query(["ACME Corporation"])
        keys = query_blocking_keys("ACME Corporation")
        reader = Neo4jCandidateReader(graph, store)
        truth = Neo4jCandidateReader(graph, exact)
        await _drop_index(driver, label)

        with caplog.at_level("WARNING", logger="redstring.adapters.neo4j"):
            for types in (None, ["org"], ["person"]):
                found = await store.search(vector, tenant, k=3, entity_types=types)
                assert found, types
                assert found == await exact.search(vector, tenant, k=3, entity_types=types)
                asked: dict[str, Any] = {
                    "vector": vector,
                    "k": 3,
                    "keys": keys,
                    "entity_types": types,
                }
                read = await reader.find_candidates(tenant, **asked)
                wanted = await truth.find_candidates(tenant, **asked)
                assert read.semantic == wanted.semantic == found
                assert _read(read.lexical) == _read(wanted.lexical)
                # Read in the one statement, not apart: the matches' entities came along.
                assert set(read.entities) == set(wanted.entities)
                assert set(read.entities) >= {m.entity_id for m in found}
        [warning] = _unavailable_warnings(caplog)
        assert cypher.vector_index_name(label) in warning
        assert "ensure_schema()" in warning
        assert "candidate read failed" not in caplog.text

        # The index answers again, then is dropped again: warned again, once.
        await store.ensure_schema()
        caplog.clear()
        with caplog.at_level("WARNING", logger="redstring.adapters.neo4j"):
            assert await reader.find_candidates(tenant, vector=vector, k=3, keys=keys)
            assert not _unavailable_warnings(caplog)
            await _drop_index(driver, label)
            for _ in range(2):
                assert await reader.find_candidates(tenant, vector=vector, k=3, keys=keys)
                assert await store.search(vector, tenant, k=3)
        assert len(_unavailable_warnings(caplog)) == 1
    finally:
        await _drop_label(driver, label)
