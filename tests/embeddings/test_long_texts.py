"""Texts longer than a model takes: an entity's description has no length cap (nothing
but the request body bounds it), and a library caller's query none at all. Against a
real HTTP server on a loopback port that refuses, as a model with a context limit does,
any input over 8,192 tokens."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from redstring import Redstring, RetrievalMode
from redstring.adapters.embeddings import OpenAICompatibleEmbeddings, RetryPolicy
from redstring.testing import make_entity, new_tenant

from .fake_server import EmbeddingAPI

# OpenAI's limit for one input of its embedding models (text-embedding-3-*, ada-002).
OPENAI_INPUT_TOKENS = 8192
WORDS = "the harbour authority keeps ferries running between the islands all year "


@pytest.fixture
def api() -> EmbeddingAPI:
    return EmbeddingAPI(dimension=8, max_input_tokens=OPENAI_INPUT_TOKENS)


@pytest.fixture
async def client(base_url: str) -> AsyncIterator[Redstring]:
    provider = OpenAICompatibleEmbeddings(
        base_url=base_url,
        model="text-embedding-3-small",
        dimension=8,
        api_key_env=None,
        retry=RetryPolicy(max_attempts=1),
    )
    async with provider, Redstring.in_memory(provider) as client:
        yield client


@pytest.mark.parametrize(
    "description",
    [WORDS * 133, "🚢" * 10_000, "港" * 10_000],
    ids=["9,975 characters of words", "10,000 emoji", "10,000 Han characters"],
)
async def test_a_long_description_embeds_where_the_model_refuses_long_inputs(
    api: EmbeddingAPI, client: Redstring, description: str
) -> None:
    """Cut before it is sent, in any script: the server refuses nothing, and the entity is
    found semantically by its name."""
    tenant = new_tenant()
    ferries = make_entity(tenant, "Harbour Ferries", "org", description=description)
    other = make_entity(tenant, "Cobalt Mining", "org")

    await client.upsert([ferries, other])

    sent = [text for body in api.bodies for text in body["input"]]
    assert sorted(sent) == sorted([ferries.embedding_text(), other.embedding_text()])
    assert all(len(text.encode()) <= OPENAI_INPUT_TOKENS for text in sent)
    assert ferries.embedding_text().startswith(f"Harbour Ferries. org. {description[:10]}")
    result = await client.retrieve(
        ferries.embedding_text(), tenant, k=1, mode=RetrievalMode.SEMANTIC
    )
    assert [match.entity.id for match in result.matches] == [ferries.id]


async def test_a_long_query_of_the_library_is_embedded_cut_as_a_text_is(
    api: EmbeddingAPI, client: Redstring
) -> None:
    """The library bounds no query's length (the API does, `REDSTRING_MAX_QUERY_LENGTH`,
    which may be raised): what it embeds of one is its beginning, cut after a word."""
    tenant = new_tenant()
    ferries = make_entity(tenant, "Harbour Ferries", "org")
    await client.upsert([ferries])
    sent_before = api.requests

    query = "Harbour Ferries " + WORDS * 2_000
    result = await client.retrieve(query, tenant, k=1, mode=RetrievalMode.SEMANTIC)

    assert [match.entity.id for match in result.matches] == [ferries.id]
    [body] = api.bodies[sent_before:]
    [sent] = body["input"]
    assert len(sent.encode()) <= OPENAI_INPUT_TOKENS
    assert query.startswith(sent)
    assert query[len(sent)] == " "  # a whole word last
