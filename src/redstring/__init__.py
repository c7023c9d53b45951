"""redstring: turn a query string into ranked entities of a knowledge graph.

A semantic channel (embedding + vector search) and a lexical channel (name
similarity over blocking-key candidates) are fused by reciprocal rank fusion.
Start from `Redstring`; `highlight_ranges` says where a match's text matched the
query. The helpers (blocking keys, scores, id derivation) are importable from their
modules under `redstring.domain`.
"""

from typing import TYPE_CHECKING

from redstring.exports import imported_on_use

if TYPE_CHECKING:
    from redstring.adapters.embeddings import HashingEmbeddingProvider, StaticEmbeddingProvider
    from redstring.adapters.memory import InMemoryGraphStore, InMemoryVectorStore
    from redstring.composition.build_graph import build_graph
    from redstring.composition.client import Redstring, StoreSettings
    from redstring.composition.embedding_check import EmbeddingCheck
    from redstring.composition.observer import Observer
    from redstring.composition.query_cache import CachedQueryEmbeddings
    from redstring.composition.rekey import RekeyReport
    from redstring.composition.retrieval import Retriever
    from redstring.composition.vector_provenance import Provenance, VectorProvenance
    from redstring.domain.candidates import Candidates
    from redstring.domain.entity import Entity
    from redstring.domain.errors import (
        ClientClosedError,
        ClientStartFailedError,
        DimensionMismatchError,
        EmbeddingRefusedError,
        EmbeddingUnavailableError,
        EntityTextRefusedError,
        FrozenRecordError,
        InvalidFieldsError,
        InvalidInputError,
        MissingEndpointError,
        RedstringError,
        StoreRefusedError,
        StoreUnavailableError,
        TextsRefusedError,
        VectorIndexMismatchError,
        WrongEventLoopError,
    )
    from redstring.domain.highlight import TextRange, highlight_ranges
    from redstring.domain.ids import EntityId, RelationshipId, TenantId
    from redstring.domain.lexical import LexicalCandidate
    from redstring.domain.neighbourhood import Neighbourhood
    from redstring.domain.relationship import Direction, Relationship
    from redstring.domain.relationship_order import RelationshipPlace
    from redstring.domain.retrieval import RetrievalMode, RetrievalResult, ScoredEntity
    from redstring.domain.vectors import StoredSource, VectorMatch, VectorRecord
    from redstring.ports.candidate_reader import CandidateReader
    from redstring.ports.embedding_provider import EmbeddingProvider
    from redstring.ports.graph_store import EndReads, GraphReader, GraphStore, TextReads
    from redstring.ports.vector_store import SourceSamples, VectorStore

__version__ = "0.1.0"

__all__ = [
    "CachedQueryEmbeddings",
    "CandidateReader",
    "Candidates",
    "ClientClosedError",
    "ClientStartFailedError",
    "DimensionMismatchError",
    "Direction",
    "EmbeddingCheck",
    "EmbeddingProvider",
    "EmbeddingRefusedError",
    "EmbeddingUnavailableError",
    "EndReads",
    "Entity",
    "EntityId",
    "EntityTextRefusedError",
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
    "Provenance",
    "Redstring",
    "RedstringError",
    "RekeyReport",
    "Relationship",
    "RelationshipId",
    "RelationshipPlace",
    "RetrievalMode",
    "RetrievalResult",
    "Retriever",
    "ScoredEntity",
    "SourceSamples",
    "StaticEmbeddingProvider",
    "StoreRefusedError",
    "StoreSettings",
    "StoreUnavailableError",
    "StoredSource",
    "TenantId",
    "TextRange",
    "TextReads",
    "TextsRefusedError",
    "VectorIndexMismatchError",
    "VectorMatch",
    "VectorProvenance",
    "VectorRecord",
    "VectorStore",
    "WrongEventLoopError",
    "__version__",
    "build_graph",
    "highlight_ranges",
]

# Where each exported name lives. Imported on first use (`__getattr__`), so that importing
# redstring, and with it any module under it, costs nothing until one is used: the
# command line's entry point (`api/entry_point.py`) runs before the rest is imported.
_HOMES: dict[str, str] = {
    "HashingEmbeddingProvider": "redstring.adapters.embeddings",
    "StaticEmbeddingProvider": "redstring.adapters.embeddings",
    "InMemoryGraphStore": "redstring.adapters.memory",
    "InMemoryVectorStore": "redstring.adapters.memory",
    "build_graph": "redstring.composition.build_graph",
    "Redstring": "redstring.composition.client",
    "StoreSettings": "redstring.composition.client",
    "EmbeddingCheck": "redstring.composition.embedding_check",
    "Observer": "redstring.composition.observer",
    "CachedQueryEmbeddings": "redstring.composition.query_cache",
    "RekeyReport": "redstring.composition.rekey",
    "Retriever": "redstring.composition.retrieval",
    "Provenance": "redstring.composition.vector_provenance",
    "VectorProvenance": "redstring.composition.vector_provenance",
    "Candidates": "redstring.domain.candidates",
    "Entity": "redstring.domain.entity",
    "ClientClosedError": "redstring.domain.errors",
    "ClientStartFailedError": "redstring.domain.errors",
    "DimensionMismatchError": "redstring.domain.errors",
    "EmbeddingRefusedError": "redstring.domain.errors",
    "EmbeddingUnavailableError": "redstring.domain.errors",
    "EntityTextRefusedError": "redstring.domain.errors",
    "FrozenRecordError": "redstring.domain.errors",
    "InvalidFieldsError": "redstring.domain.errors",
    "InvalidInputError": "redstring.domain.errors",
    "MissingEndpointError": "redstring.domain.errors",
    "RedstringError": "redstring.domain.errors",
    "StoreRefusedError": "redstring.domain.errors",
    "StoreUnavailableError": "redstring.domain.errors",
    "TextsRefusedError": "redstring.domain.errors",
    "VectorIndexMismatchError": "redstring.domain.errors",
    "WrongEventLoopError": "redstring.domain.errors",
    "TextRange": "redstring.domain.highlight",
    "highlight_ranges": "redstring.domain.highlight",
    "EntityId": "redstring.domain.ids",
    "RelationshipId": "redstring.domain.ids",
    "TenantId": "redstring.domain.ids",
    "LexicalCandidate": "redstring.domain.lexical",
    "Neighbourhood": "redstring.domain.neighbourhood",
    "Direction": "redstring.domain.relationship",
    "Relationship": "redstring.domain.relationship",
    "RelationshipPlace": "redstring.domain.relationship_order",
    "RetrievalMode": "redstring.domain.retrieval",
    "RetrievalResult": "redstring.domain.retrieval",
    "ScoredEntity": "redstring.domain.retrieval",
    "VectorMatch": "redstring.domain.vectors",
    "VectorRecord": "redstring.domain.vectors",
    "StoredSource": "redstring.domain.vectors",
    "CandidateReader": "redstring.ports.candidate_reader",
    "EmbeddingProvider": "redstring.ports.embedding_provider",
    "EndReads": "redstring.ports.graph_store",
    "GraphReader": "redstring.ports.graph_store",
    "GraphStore": "redstring.ports.graph_store",
    "TextReads": "redstring.ports.graph_store",
    "VectorStore": "redstring.ports.vector_store",
    "SourceSamples": "redstring.ports.vector_store",
}


if not TYPE_CHECKING:  # a type checker reads the imports above
    __getattr__, __dir__ = imported_on_use(__name__, _HOMES, globals())
