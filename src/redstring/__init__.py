"""redstring: turn a query string into ranked entities of a knowledge graph.

A semantic channel (embedding + vector search) and a lexical channel (name
similarity over blocking-key candidates) are fused by reciprocal rank fusion.
"""

from redstring.adapters.embeddings import HashingEmbeddingProvider
from redstring.adapters.memory import InMemoryGraphStore, InMemoryVectorStore
from redstring.composition.build_graph import build_graph
from redstring.composition.observer import Observer
from redstring.composition.retrieval import Retriever
from redstring.domain.blocking import blocking_keys_for, query_blocking_keys
from redstring.domain.entity import Entity
from redstring.domain.errors import (
    DimensionMismatchError,
    InvalidInputError,
    MissingEndpointError,
    RedstringError,
    StoreUnavailableError,
)
from redstring.domain.fusion import RRF_K, reciprocal_rank_fusion
from redstring.domain.ids import (
    EntityId,
    RelationshipId,
    TenantId,
    entity_id_for,
    id_order_key,
    relationship_id_for,
)
from redstring.domain.lexical import LexicalCandidate, lexical_score
from redstring.domain.normalization import normalize_name
from redstring.domain.properties import PropertyScalar, PropertyValue
from redstring.domain.relationship import Direction, Relationship
from redstring.domain.retrieval import RetrievalMode, RetrievalResult, ScoredEntity
from redstring.domain.similarity import string_similarity
from redstring.domain.vectors import VectorMatch, VectorRecord
from redstring.ports.embedding_provider import EmbeddingProvider
from redstring.ports.graph_store import GraphReader, GraphStore
from redstring.ports.vector_store import VectorStore

__version__ = "0.1.0"

__all__ = [
    "RRF_K",
    "DimensionMismatchError",
    "Direction",
    "EmbeddingProvider",
    "Entity",
    "EntityId",
    "GraphReader",
    "GraphStore",
    "HashingEmbeddingProvider",
    "InMemoryGraphStore",
    "InMemoryVectorStore",
    "InvalidInputError",
    "LexicalCandidate",
    "MissingEndpointError",
    "Observer",
    "PropertyScalar",
    "PropertyValue",
    "RedstringError",
    "Relationship",
    "RelationshipId",
    "RetrievalMode",
    "RetrievalResult",
    "Retriever",
    "ScoredEntity",
    "StoreUnavailableError",
    "TenantId",
    "VectorMatch",
    "VectorRecord",
    "VectorStore",
    "__version__",
    "blocking_keys_for",
    "build_graph",
    "entity_id_for",
    "id_order_key",
    "lexical_score",
    "normalize_name",
    "query_blocking_keys",
    "reciprocal_rank_fusion",
    "relationship_id_for",
    "string_similarity",
]
