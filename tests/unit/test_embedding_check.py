"""`Redstring.check_embeddings`: one short query embedded by the configured provider,
past the query cache, its vector checked against the vector store's dimension."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from redstring import (
    DimensionMismatchError,
    EmbeddingCheck,
    EmbeddingRefusedError,
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    Redstring,
)
from tests.unit.doubles import CountingEmbeddings
from tests.unit.test_observation import RecordingObserver

DIMENSION = 16


def _client(embeddings: HashingEmbeddingProvider, *, cache: int = 0) -> Redstring:
    return Redstring(
        embeddings=embeddings,
        vectors=InMemoryVectorStore(DIMENSION),
        graph=InMemoryGraphStore(),
        query_cache_size=cache,
    )


class ShortVectors(HashingEmbeddingProvider):
    """Says it embeds to `DIMENSION` floats, and gives one fewer to a query."""

    def __init__(self) -> None:
        super().__init__(DIMENSION)

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return [vector[:-1] for vector in await super().embed_query(texts)]


class NoVectors(HashingEmbeddingProvider):
    """Answers a query with no vector at all."""

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return []


class Refusing(HashingEmbeddingProvider):
    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        raise EmbeddingRefusedError("HTTP 401", status_code=401, options=["api_key_env"])


async def test_one_short_query_is_embedded_past_the_cache_and_its_vector_measured() -> None:
    provider = CountingEmbeddings(DIMENSION)
    client = _client(provider, cache=8)

    first = await client.check_embeddings()
    second = await client.check_embeddings()

    assert isinstance(first, EmbeddingCheck)
    assert first.provider == f"hashing/{DIMENSION}"
    assert first.dimension == DIMENSION
    assert first.seconds >= 0
    # The query path, each time: a cached vector would hide a provider that stopped
    # answering, and the check is no tenant's search.
    assert (provider.queries, provider.documents) == (2, 0)
    assert len(provider.query_texts) == 2
    assert provider.query_texts[0] == provider.query_texts[1]
    assert 0 < len(provider.query_texts[0]) <= 40
    assert client.query_cache is not None
    assert (client.query_cache.hits, client.query_cache.misses, len(client.query_cache)) == (
        0,
        0,
        0,
    )
    assert second.provider == first.provider


async def test_an_observed_client_reports_the_check_as_one_query_embedding() -> None:
    observer = RecordingObserver()
    client = _client(HashingEmbeddingProvider(DIMENSION), cache=8).observed(observer)

    await client.check_embeddings()

    assert observer.embeddings == [("query", 1, False)]
    assert (observer.hits, observer.misses) == (0, 0)


async def test_a_query_vector_of_another_dimension_than_the_stores_is_refused() -> None:
    """The provider's declared dimension fits the store (checked when the client is
    built); the vector it gives does not: nothing at start sees that but an embedding."""
    client = _client(ShortVectors())

    with pytest.raises(DimensionMismatchError) as raised:
        await client.check_embeddings()

    assert (raised.value.expected, raised.value.actual) == (DIMENSION, DIMENSION - 1)
    assert "query vector" in str(raised.value)


async def test_no_vector_for_the_query_is_an_error() -> None:
    with pytest.raises(ValueError, match="returned 0 vectors for 1 texts"):
        await _client(NoVectors(DIMENSION)).check_embeddings()


async def test_the_providers_own_error_is_raised_as_it_is() -> None:
    with pytest.raises(EmbeddingRefusedError, match="HTTP 401"):
        await _client(Refusing(DIMENSION)).check_embeddings()
