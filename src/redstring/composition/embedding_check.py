"""Whether the configured embedding provider answers: one short query embedded, its
vector measured against the vector store's dimension.

Nothing else at start asks the provider: a wrong key, an unknown model or a base URL
that is not the embeddings API shows at the first request that embeds. The dimensions
the provider and the stores declare are compared when a client is built (`check_fits`)
and, on Neo4j, with the index when it starts; what the provider gives is compared here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from redstring.composition.entity_vectors import provider_identity
from redstring.domain.vectors import check_dimension, check_vector_count
from redstring.ports.embedding_provider import EmbeddingProvider
from redstring.ports.vector_store import VectorStore

# Short and ASCII: one request of a few tokens, whatever the model.
CHECK_QUERY = "redstring embedding check"


@dataclass(frozen=True)
class EmbeddingCheck:
    """What `check_embeddings` found: the provider (`provider_identity`) answered one
    query with a vector of `dimension` floats in `seconds`."""

    provider: str
    dimension: int
    seconds: float


async def check_embeddings(embeddings: EmbeddingProvider, vectors: VectorStore) -> EmbeddingCheck:
    """Embed `CHECK_QUERY` with `embeddings.embed_query`, once, and raise what the provider
    raises (`EmbeddingRefusedError`, `EmbeddingUnavailableError`, ...), `ValueError` for an
    answer without exactly one vector, or `DimensionMismatchError` for a vector of another
    dimension than `vectors`'. Pass the provider, not a query cache: a cached vector would
    answer for a provider that no longer does."""
    started = time.perf_counter()
    answered = await embeddings.embed_query([CHECK_QUERY])
    seconds = time.perf_counter() - started
    check_vector_count(answered, 1)
    [vector] = answered
    check_dimension(vectors.dimension, len(vector), "the embedding provider's query vector")
    return EmbeddingCheck(provider_identity(embeddings), len(vector), seconds)
