"""The Neo4j adapters pass the compliance suites, unchanged, against a real server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import neo4j
import pytest

from redstring import GraphStore, VectorStore
from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jVectorStore, VectorSearchMode
from redstring.testing import GraphStoreCompliance, VectorStoreCompliance

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
