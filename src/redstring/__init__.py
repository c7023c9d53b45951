"""redstring: turn a query string into ranked entities of a knowledge graph.

A semantic channel (embedding + vector search) and a lexical channel (name
similarity over blocking-key candidates) are fused by reciprocal rank fusion.
Start from `Redstring`; the helpers (blocking keys, scores, id derivation)
are importable from their modules under `redstring.domain`.
"""

from redstring.adapters.embeddings import HashingEmbeddingProvider, StaticEmbeddingProvider
from redstring.adapters.memory import InMemoryGraphStore, InMemoryVectorStore
from redstring.composition.build_graph import build_graph
from redstring.composition.client import Redstring, StoreSettings
from redstring.composition.observer import Observer
from redstring.composition.query_cache import CachedQueryEmbeddings
from redstring.composition.rekey import RekeyReport
from redstring.composition.retrieval import Retriever
from redstring.domain.candidates import Candidates
from redstring.domain.entity import Entity
from redstring.domain.errors import (
    ClientClosedError,
    ClientStartFailedError,
    DimensionMismatchError,
    FrozenRecordError,
    InvalidFieldsError,
    InvalidInputError,
    MissingEndpointError,
    RedstringError,
    StoreUnavailableError,
    VectorIndexMismatchError,
)
from redstring.domain.ids import EntityId, RelationshipId, TenantId
from redstring.domain.lexical import LexicalCandidate
from redstring.domain.neighbourhood import Neighbourhood
from redstring.domain.relationship import Direction, Relationship
from redstring.domain.retrieval import RetrievalMode, RetrievalResult, ScoredEntity
from redstring.domain.vectors import VectorMatch, VectorRecord
from redstring.ports.candidate_reader import CandidateReader
from redstring.ports.embedding_provider import EmbeddingProvider
from redstring.ports.graph_store import EndReads, GraphReader, GraphStore
from redstring.ports.vector_store import VectorStore

__version__ = "0.1.0"

__all__ = [
    "CachedQueryEmbeddings",
    "CandidateReader",
    "Candidates",
    "ClientClosedError",
    "ClientStartFailedError",
    "DimensionMismatchError",
    "Direction",
    "EmbeddingProvider",
    "EndReads",
    "Entity",
    "EntityId",
    "FrozenRecordError",
    "GraphReader",
    "GraphStore",
    "HashingEmbeddingProvider",
    "InMemoryGraphStore",
    "InMemoryVectorStore",
    "InvalidFieldsError",
    "InvalidInputError",
    "LexicalCandidate",
    "MissingEndpointError",
    "Neighbourhood",
    "Observer",
    "Redstring",
    "RedstringError",
    "RekeyReport",
    "Relationship",
    "RelationshipId",
    "RetrievalMode",
    "RetrievalResult",
    "Retriever",
    "ScoredEntity",
    "StaticEmbeddingProvider",
    "StoreSettings",
    "StoreUnavailableError",
    "TenantId",
    "VectorIndexMismatchError",
    "VectorMatch",
    "VectorRecord",
    "VectorStore",
    "__version__",
    "build_graph",
]
