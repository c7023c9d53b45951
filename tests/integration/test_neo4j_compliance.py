"""The Neo4j adapters, and the reader of both in one statement, pass the compliance suites,
unchanged, against a real server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import neo4j
import pytest

from redstring import GraphStore, VectorStore
from redstring.adapters.neo4j import (
    Neo4jCandidateReader,
    Neo4jGraphStore,
    Neo4jVectorStore,
    VectorSearchMode,
)
from redstring.testing import (
    CandidateReaderCompliance,
    GraphStoreCompliance,
    ReaderUnderTest,
    VectorStoreCompliance,
)

from .conftest import COMPLIANCE_DIMENSION, COMPLIANCE_LABEL


class TestNeo4jGraphStore(GraphStoreCompliance):
    @pytest.fixture
    async def graph_store(self, driver: neo4j.AsyncDriver) -> AsyncIterator[GraphStore]:
        store = Neo4jGraphStore(driver)
        await store.ensure_schema()
        return store


class TestNeo4jVectorStoreDefault(VectorStoreCompliance):
    """As configured by default: small filtered sets are scanned exactly."""

    @pytest.fixture
    async def vector_store(self, driver: neo4j.AsyncDriver) -> AsyncIterator[VectorStore]:
        store = Neo4jVectorStore(driver, COMPLIANCE_DIMENSION, label=COMPLIANCE_LABEL)
        await store.ensure_schema()
        return store


class TestNeo4jVectorStoreThroughTheIndex(VectorStoreCompliance):
    """Every non-empty filter goes through the vector index (`exact_below=0`)."""

    @pytest.fixture
    async def vector_store(self, driver: neo4j.AsyncDriver) -> AsyncIterator[VectorStore]:
        store = Neo4jVectorStore(
            driver, COMPLIANCE_DIMENSION, label=COMPLIANCE_LABEL, exact_below=0
        )
        await store.ensure_schema()
        return store


class TestNeo4jVectorStoreExact(VectorStoreCompliance):
    """The exact scan alone, for servers without in-index filters."""

    @pytest.fixture
    async def vector_store(self, driver: neo4j.AsyncDriver) -> AsyncIterator[VectorStore]:
        store = Neo4jVectorStore(
            driver,
            COMPLIANCE_DIMENSION,
            label=COMPLIANCE_LABEL,
            search_mode=VectorSearchMode.EXACT,
        )
        await store.ensure_schema()
        return store


async def _joint(driver: neo4j.AsyncDriver, **vector_options: Any) -> ReaderUnderTest:
    graph = Neo4jGraphStore(driver)
    vectors = Neo4jVectorStore(
        driver, COMPLIANCE_DIMENSION, label=COMPLIANCE_LABEL, **vector_options
    )
    await graph.ensure_schema()
    await vectors.ensure_schema()
    reader = graph.candidate_reader(vectors)
    assert isinstance(reader, Neo4jCandidateReader)
    return ReaderUnderTest(reader=reader, graph=graph, vectors=vectors)


class TestNeo4jCandidateReaderDefault(CandidateReaderCompliance):
    """One statement for both channels, small filtered sets scanned exactly."""

    @pytest.fixture
    async def under_test(self, driver: neo4j.AsyncDriver) -> ReaderUnderTest:
        return await _joint(driver)


class TestNeo4jCandidateReaderThroughTheIndex(CandidateReaderCompliance):
    """Every non-empty filter goes through the vector index (`exact_below=0`)."""

    @pytest.fixture
    async def under_test(self, driver: neo4j.AsyncDriver) -> ReaderUnderTest:
        return await _joint(driver, exact_below=0)


class TestNeo4jCandidateReaderExactScan(CandidateReaderCompliance):
    """`VectorSearchMode.EXACT`: the statement's vector search is a tenant scan."""

    @pytest.fixture
    async def under_test(self, driver: neo4j.AsyncDriver) -> ReaderUnderTest:
        return await _joint(driver, search_mode=VectorSearchMode.EXACT)
