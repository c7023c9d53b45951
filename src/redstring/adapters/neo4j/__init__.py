"""Neo4j adapters: `Neo4jGraphStore` and `Neo4jVectorStore` over the official async driver,
and `Neo4jCandidateReader`, which reads both in one statement.

The only package where Cypher lives (all of it in `cypher.py`). Imported without the
`neo4j` extra, it raises `ModuleNotFoundError` naming the extra to install.
"""

try:
    import neo4j as _driver  # the extra's package, looked for first to name the extra
except ModuleNotFoundError as missing:
    if missing.name != "neo4j":
        raise
    raise ModuleNotFoundError(
        "redstring.adapters.neo4j needs the neo4j driver, which the neo4j extra installs: "
        "pip install 'redstring[neo4j]'",
        name="neo4j",
    ) from missing

from redstring.adapters.neo4j.candidate_reader import Neo4jCandidateReader
from redstring.adapters.neo4j.connection import Neo4jSettings, connect_driver
from redstring.adapters.neo4j.graph_store import Neo4jGraphStore
from redstring.adapters.neo4j.vector_store import Neo4jVectorStore, VectorSearchMode
from redstring.domain.errors import VectorIndexMismatchError

del _driver

__all__ = [
    "Neo4jCandidateReader",
    "Neo4jGraphStore",
    "Neo4jSettings",
    "Neo4jVectorStore",
    "VectorIndexMismatchError",
    "VectorSearchMode",
    "connect_driver",
]
