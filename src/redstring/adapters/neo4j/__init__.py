"""Neo4j adapters: `Neo4jGraphStore` and `Neo4jVectorStore` over the official async driver,
and `Neo4jCandidateReader`, which reads both in one statement.

The only package where Cypher lives (all of it in `cypher.py`).
"""

from redstring.adapters.neo4j.candidate_reader import Neo4jCandidateReader
from redstring.adapters.neo4j.connection import Neo4jSettings, connect_driver
from redstring.adapters.neo4j.graph_store import Neo4jGraphStore
from redstring.adapters.neo4j.vector_store import Neo4jVectorStore, VectorSearchMode
from redstring.domain.errors import VectorIndexMismatchError

__all__ = [
    "Neo4jCandidateReader",
    "Neo4jGraphStore",
    "Neo4jSettings",
    "Neo4jVectorStore",
    "VectorIndexMismatchError",
    "VectorSearchMode",
    "connect_driver",
]
