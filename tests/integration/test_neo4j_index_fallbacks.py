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

Each way of failing logs an episode: a warning at its first failure, debug lines
for the next, one info line when the failing path answers again. Every test writes
under a vector label and a tenant of its own, which it deletes afterwards.
"""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import AsyncIterator, Collection, Sequence
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
from redstring.domain.ids import TenantId
from redstring.domain.lexical import LexicalCandidate
from redstring.testing import make_entity, new_tenant

DIMENSION = 128
SMALL_DIMENSION = 16
NEO4J_LOGGER = "redstring.adapters.neo4j"


@pytest.fixture
async def label(driver: neo4j.AsyncDriver) -> AsyncIterator[str]:
    """A vector label no other test uses; its nodes, constraint and index are dropped
    afterwards."""
    made = f"Fallback{uuid.uuid4().hex[:8]}"
    yield made
    await _drop_label(driver, made)
    prefix = cypher.vector_index_name(made).removesuffix("_embedding") + "_"
    async with driver.session() as session:
        nodes = await (await session.run(f"MATCH (v:{made}) RETURN count(v) AS n")).single()
        names = [
            name
            for shown in ("INDEXES", "CONSTRAINTS")
            for [name] in await (await session.run(f"SHOW {shown} YIELD name")).values()
        ]
    assert nodes is not None
    assert nodes["n"] == 0
    assert not [name for name in names if name.startswith(prefix)]


@pytest.fixture
async def tenant(driver: neo4j.AsyncDriver) -> AsyncIterator[TenantId]:
    """A tenant of its own, whose entities (with their edges) are deleted afterwards."""
    made = new_tenant()
    yield made
    async with driver.session() as session:
        await (
            await session.run("MATCH (e:Entity {tenant_id: $t}) DETACH DELETE e", t=str(made))
        ).consume()


class _FailingStatements(Neo4jConnection):
    """`connection` on the same driver, except that `statements` raise `DatabaseError`
    as the server reports a fault in the vector index, while `failing` is true;
    `ran` holds every statement asked for, in order."""

    def __init__(self, connection: Neo4jConnection, statements: Collection[str]) -> None:
        super().__init__(
            connection.driver,
            database=connection.database,
            settings=connection.settings,
            owned=False,
        )
        self._statements = statements
        self.failing = True
        self.failed = 0
        self.ran: list[str] = []

    async def query(self, statement: str, parameters: dict[str, Any]) -> list[neo4j.Record]:
        self.ran.append(statement)
        if self.failing and statement in self._statements:
            self.failed += 1
            raise neo4j_errors.DatabaseError("java.lang.ArrayIndexOutOfBoundsException")
        return await super().query(statement, parameters)


def _joint_statements(label: str) -> set[str]:
    return {
        cypher.find_candidates(label, nearest, lexical)
        for nearest in ("index", "typed", "exact", None)
        for lexical in (True, False)
    }


ENTITIES = (
    ("Acme Corp", "org"),
    ("Acme Widgets", "org"),
    ("Apex Corporation", "org"),
    ("Acme Smith", "person"),
    ("Ada Lovelace", "person"),
)


async def _stores(
    driver: neo4j.AsyncDriver, label: str, tenant: TenantId, **options: Any
) -> tuple[Neo4jGraphStore, Neo4jVectorStore, HashingEmbeddingProvider]:
    """A graph store and a vector store of `label` holding `ENTITIES` of `tenant`."""
    graph = Neo4jGraphStore(driver)
    vectors = Neo4jVectorStore(driver, DIMENSION, label=label, **options)
    await graph.ensure_schema()
    await vectors.ensure_schema()
    embeddings = HashingEmbeddingProvider(DIMENSION)
    entities = [make_entity(tenant, name, entity_type) for name, entity_type in ENTITIES]
    await build_graph(entities, [], embeddings=embeddings, vectors=vectors, graph=graph)
    return graph, vectors, embeddings


def _logged(caplog: pytest.LogCaptureFixture, *words: str) -> list[tuple[int, str]]:
    """The level and message of each record that holds all of `words`."""
    return [
        (r.levelno, r.getMessage())
        for r in caplog.records
        if all(word in r.getMessage() for word in words)
    ]


async def test_a_retrieve_answers_when_the_joint_statement_fails(
    driver: neo4j.AsyncDriver, label: str, tenant: TenantId, caplog: pytest.LogCaptureFixture
) -> None:
    """The same matches in every mode, and the same candidates of both channels, as
    when the statement answers."""
    graph, vectors, embeddings = await _stores(driver, label, tenant)
    healthy = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
    assert isinstance(healthy.candidates, Neo4jCandidateReader)

    failing_graph = Neo4jGraphStore(driver)
    failing = _FailingStatements(graph.connection, _joint_statements(label))
    failing_graph._db = failing
    faulty = Retriever(embeddings=embeddings, vectors=vectors, graph=failing_graph)
    assert isinstance(faulty.candidates, Neo4jCandidateReader)

    for mode in RetrievalMode:
        expected = await healthy.retrieve("ACME Corporation", tenant, k=3, mode=mode)
        with caplog.at_level("WARNING", logger=NEO4J_LOGGER):
            found = await faulty.retrieve("ACME Corporation", tenant, k=3, mode=mode)
        assert expected.matches, mode
        assert found.matches == expected.matches, mode
    assert failing.failed == len(RetrievalMode)
    assert _logged(caplog, "candidate statement", "separate reads")

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


async def test_the_joint_statements_failures_log_one_warning_an_episode(
    driver: neo4j.AsyncDriver, label: str, tenant: TenantId, caplog: pytest.LogCaptureFixture
) -> None:
    """The first failure warns with the error's code and what answers instead, the next
    ones are debug lines, the first answer after them one info line that counts them;
    a failure after that warns again."""
    graph, vectors, embeddings = await _stores(driver, label, tenant)
    failing = _FailingStatements(graph.connection, _joint_statements(label))
    graph._db = failing
    reader = Neo4jCandidateReader(graph, vectors)
    [vector] = await embeddings.embed_query(["ACME Corporation"])
    keys = query_blocking_keys("ACME Corporation")
    logger = "redstring.adapters.neo4j.candidate_reader"

    with caplog.at_level(logging.DEBUG, logger=NEO4J_LOGGER):
        for _ in range(3):
            assert (await reader.find_candidates(tenant, vector=vector, k=3, keys=keys)).semantic
        failing.failing = False
        for _ in range(2):
            assert (await reader.find_candidates(tenant, vector=vector, k=3, keys=keys)).semantic
        failing.failing = True
        assert (await reader.find_candidates(tenant, vector=vector, k=3, keys=keys)).semantic
    assert failing.failed == 4
    logged = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == logger]
    assert [level for level, _ in logged] == [
        logging.WARNING,
        logging.DEBUG,
        logging.DEBUG,
        logging.INFO,
        logging.WARNING,
    ]
    first = logged[0][1]
    assert f"candidate statement of label {label}" in first
    assert "Neo.DatabaseError" in first
    assert "separate reads" in first
    assert "answers again, after 3 failure(s)" in logged[3][1]


def _unit(angle: float) -> list[float]:
    """A unit vector in the plane of the first two axes, `angle` radians from axis 0."""
    vector = [0.0] * SMALL_DIMENSION
    vector[0], vector[1] = math.cos(angle), math.sin(angle)
    return vector


async def test_a_failing_index_search_is_answered_by_the_exact_scan(
    driver: neo4j.AsyncDriver, label: str, tenant: TenantId, caplog: pytest.LogCaptureFixture
) -> None:
    """With `exact_below=0` every search goes through the index, whose statement fails
    here: the exact scan answers, the nearest first, typed or not. The first failure
    warns, naming the index; the next is a debug line; the first search the index
    answers after them, one info line."""
    store = Neo4jVectorStore(driver, SMALL_DIMENSION, label=label, exact_below=0)
    await store.ensure_schema()
    exact = Neo4jVectorStore(
        driver, SMALL_DIMENSION, label=label, search_mode=VectorSearchMode.EXACT
    )
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
        {cypher.search_vectors(label, typed=typed) for typed in (False, True)},
    )
    store._db = failing

    with caplog.at_level(logging.DEBUG, logger=NEO4J_LOGGER):
        for types, nearest in ((None, entities[:3]), (["org"], entities[1:6:2])):
            found = await store.search(_unit(0.0), tenant, k=3, entity_types=types)
            assert [m.entity_id for m in found] == [e.id for e in nearest]
            assert found == await exact.search(_unit(0.0), tenant, k=3, entity_types=types)
        assert failing.failed == 2
        failing.failing = False
        assert await store.search(_unit(0.0), tenant, k=3)
        assert await store.search(_unit(0.0), tenant, k=3)
    index = cypher.vector_index_name(label)
    logged = _logged(caplog, index)
    assert [level for level, _ in logged] == [logging.WARNING, logging.DEBUG, logging.INFO]
    assert "answered by an exact scan" in logged[0][1]
    assert "Neo.DatabaseError" in logged[0][1]
    assert "answers again, after 2 failure(s)" in logged[2][1]


def _tied_records(tenant: TenantId, count: int) -> list[VectorRecord]:
    """`count` records of one vector: every search ties them all."""
    return [
        VectorRecord(
            entity_id=make_entity(tenant, f"twin {i}").id,
            tenant_id=tenant,
            vector=_unit(0.0),
            entity_type="thing",
        )
        for i in range(count)
    ]


@pytest.mark.parametrize("failure", ["missing", "faulty"])
async def test_a_tie_at_the_cut_does_not_ask_a_failed_index_again(
    driver: neo4j.AsyncDriver,
    label: str,
    tenant: TenantId,
    failure: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Six equal vectors and `k=1`: the first fetches (2, then 4) are tied past the cut,
    so the search fetches more. Once the index failed the search (dropped, or a
    `DatabaseError`), the exact scan answers the wider fetches too: the store's search
    and the candidate reader's each ask the index once, and answer as the exact scan."""
    graph = Neo4jGraphStore(driver)
    store = Neo4jVectorStore(driver, SMALL_DIMENSION, label=label, exact_below=0)
    exact = Neo4jVectorStore(
        driver, SMALL_DIMENSION, label=label, search_mode=VectorSearchMode.EXACT
    )
    await graph.ensure_schema()
    await store.ensure_schema()
    await store.upsert(_tied_records(tenant, 6))
    indexed = {cypher.search_vectors(label, typed=typed) for typed in (False, True)}
    joint = {
        cypher.find_candidates(label, nearest, lexical)
        for nearest in ("index", "typed")
        for lexical in (True, False)
    }
    recorded = _FailingStatements(store.connection, indexed | joint)
    recorded.failing = failure == "faulty"
    store._db = recorded
    graph._db = recorded
    reader = Neo4jCandidateReader(graph, store)
    if failure == "missing":
        await _drop_index(driver, label)
    wanted = await exact.search(_unit(0.0), tenant, k=1)
    assert len(wanted) == 1

    with caplog.at_level(logging.DEBUG, logger=NEO4J_LOGGER):
        assert await store.search(_unit(0.0), tenant, k=1) == wanted
        asked = [statement for statement in recorded.ran if statement in indexed]
        assert len(asked) == 1, recorded.ran
        assert recorded.ran.count(cypher.search_vectors_exact(label)) == 3

        recorded.ran.clear()
        if failure == "missing":
            read = await reader.find_candidates(tenant, vector=_unit(0.0), k=1, keys=[])
            assert read.semantic == wanted
            assert [s for s in recorded.ran if s in indexed | joint] == [
                cypher.find_candidates(label, "index", False)
            ], recorded.ran
        else:
            # The joint statement failing is read apart: the store's search, as above.
            read = await reader.find_candidates(tenant, vector=_unit(0.0), k=1, keys=[])
            assert read.semantic == wanted
            assert [s for s in recorded.ran if s in indexed] == [
                cypher.search_vectors(label, typed=False)
            ], recorded.ran


def _read(candidates: Sequence[LexicalCandidate]) -> list[tuple[str, ...]]:
    """What the lexical score reads of each candidate, in id order."""
    return sorted(
        (str(c.id), str(c.tenant_id), c.entity_type, c.name, c.normalized_name, repr(c.properties))
        for c in candidates
    )


_UNAVAILABLE = "cannot be searched"


def _unavailable_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if _UNAVAILABLE in r.getMessage() and r.levelno == logging.WARNING
    ]


async def _drop_index(driver: neo4j.AsyncDriver, label: str) -> None:
    async with driver.session() as session:
        index = cypher.vector_index_name(label)
        await (await session.run(f"DROP INDEX {index} IF EXISTS")).consume()


async def _drop_label(driver: neo4j.AsyncDriver, label: str) -> None:
    """The label's nodes, constraint and index: what `ensure_schema` and writes made."""
    await _drop_index(driver, label)
    async with driver.session() as session:
        await (await session.run(f"MATCH (v:{label}) DETACH DELETE v")).consume()
        constraint = cypher.vector_constraint_name(label)
        await (await session.run(f"DROP CONSTRAINT {constraint} IF EXISTS")).consume()


async def test_a_search_without_its_index_is_answered_by_the_exact_scan(
    driver: neo4j.AsyncDriver, label: str, tenant: TenantId, caplog: pytest.LogCaptureFixture
) -> None:
    """Once the index is dropped the server refuses every statement that names it, even
    for a tenant the exact scan would answer: the store's search and the reader's one
    statement both answer as the exact scan does, with one warning that names the index
    and says to run `ensure_schema`, debug lines after it, one info line when the index
    answers again, and one more warning only after that."""
    graph, store, embeddings = await _stores(driver, label, tenant, exact_below=0)
    exact = Neo4jVectorStore(driver, DIMENSION, label=label, search_mode=VectorSearchMode.EXACT)
    [vector] = await embeddings.embed_query(["ACME Corporation"])
    keys = query_blocking_keys("ACME Corporation")
    reader = Neo4jCandidateReader(graph, store)
    truth = Neo4jCandidateReader(graph, exact)
    await _drop_index(driver, label)

    with caplog.at_level(logging.DEBUG, logger=NEO4J_LOGGER):
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
    # Six searches refused: one warning, five debug lines.
    assert [level for level, _ in _logged(caplog, _UNAVAILABLE)] == [logging.WARNING] + [
        logging.DEBUG
    ] * 5
    assert not _logged(caplog, "candidate statement")
    assert not _logged(caplog, "answers again")

    # The index answers again (one info line), then is dropped again: warned again, once.
    await store.ensure_schema()
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger=NEO4J_LOGGER):
        assert await reader.find_candidates(tenant, vector=vector, k=3, keys=keys)
        assert await reader.find_candidates(tenant, vector=vector, k=3, keys=keys)
        assert not _unavailable_warnings(caplog)
        [(level, again)] = _logged(caplog, "answers again")
        assert level == logging.INFO
        assert cypher.vector_index_name(label) in again
        assert "after 6 failure(s)" in again
        await _drop_index(driver, label)
        for _ in range(2):
            assert await reader.find_candidates(tenant, vector=vector, k=3, keys=keys)
            assert await store.search(vector, tenant, k=3)
    assert len(_unavailable_warnings(caplog)) == 1
