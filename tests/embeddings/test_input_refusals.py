"""A provider that refuses some inputs and takes others (a model past its token limit,
behind a server that refuses rather than cuts): `OpenAICompatibleEmbeddings` finds which,
and tells them from a provider that takes no text at all (wrong settings). Against a real
HTTP server on a loopback port."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable

import pytest

from redstring import Redstring, RetrievalMode
from redstring.adapters.embeddings import OpenAICompatibleEmbeddings, RetryPolicy
from redstring.adapters.embeddings.openai_compatible import PROBE_TEXT
from redstring.domain.errors import (
    EmbeddingRefusedError,
    EmbeddingUnavailableError,
    EntityTextRefusedError,
    InvalidInputError,
    TextsRefusedError,
)
from redstring.testing import make_entity, new_tenant

from .fake_server import EmbeddingAPI, Failure, vector_for

FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.01)
TEXTS = [f"entity number {i}" for i in range(8)]
REFUSED = "Input validation error: input 0 is not taken by this model"


@pytest.fixture
def api() -> EmbeddingAPI:
    return EmbeddingAPI(dimension=8, refused_words=("REFUSED",), refusal_status=413)


@pytest.fixture
def make(
    make: Callable[..., OpenAICompatibleEmbeddings],
) -> Callable[..., OpenAICompatibleEmbeddings]:
    """The conftest's, one request at a time: the order of requests is the order of
    batches."""
    return functools.partial(make, retry=FAST, max_concurrency=1)


def _with_refused(*positions: int) -> list[str]:
    return [f"{text} REFUSED" if i in positions else text for i, text in enumerate(TEXTS)]


async def test_the_inputs_refused_alone_are_named_and_the_others_embedded(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    """One batch of 8 whose sixth input is refused: a probe (nothing of the call was
    taken yet), then halves down to that input alone."""
    texts = _with_refused(5)

    with pytest.raises(TextsRefusedError) as info:
        await make(batch_size=8).embed_documents(texts)

    refusal = info.value
    assert isinstance(refusal, InvalidInputError)  # the caller's input, not the settings
    assert refusal.refused == {5: f'HTTP 413: {{"error":{{"message":"{REFUSED}"}}}}'}
    assert refusal.vectors == {i: vector_for(t, 8) for i, t in enumerate(texts) if i != 5}
    assert str(refusal).startswith("the embedding provider refuses a text of the call (text 5: ")
    assert api.inputs_of() == [
        texts,
        [PROBE_TEXT],
        texts[:4],
        texts[4:],
        texts[4:6],
        texts[6:],
        [texts[4]],
        [texts[5]],
    ]


async def test_no_probe_once_another_batch_of_the_call_is_taken(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    texts = _with_refused(6, 7)

    with pytest.raises(TextsRefusedError) as info:
        await make(batch_size=4).embed_documents(texts)

    assert sorted(info.value.refused) == [6, 7]
    assert info.value.vectors == {i: vector_for(t, 8) for i, t in enumerate(texts[:6])}
    assert api.inputs_of() == [texts[:4], texts[4:], texts[4:6], texts[6:], [texts[6]], [texts[7]]]


async def test_a_query_refused_alone_is_its_own_fault_once_the_probe_is_taken(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    """A query is one input: the probe is what tells its refusal from wrong settings."""
    with pytest.raises(TextsRefusedError) as info:
        await make().embed_query(["who makes ferries REFUSED"])

    assert list(info.value.refused) == [0]
    assert info.value.vectors == {}
    assert api.inputs_of() == [["who makes ferries REFUSED"], [PROBE_TEXT]]


@pytest.mark.parametrize("status", [400, 413, 422])
async def test_a_provider_that_takes_no_text_is_refusing_the_settings_as_before(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings], status: int
) -> None:
    """A wrong model a server answers with 400 (or 413, 422) for every text: one probe,
    refused too, and the batch's own refusal is raised; the call's other batches, waiting
    for the one concurrency slot, are never sent."""
    api.failures.extend(
        Failure(status, body={"error": {"message": "no such model"}}) for _ in range(10)
    )

    with pytest.raises(EmbeddingRefusedError) as info:
        await make(batch_size=2).embed_documents(TEXTS)

    assert not isinstance(info.value, InvalidInputError)
    assert info.value.status_code == status
    assert "refused a request for model 'test-model' with HTTP" in str(info.value)
    assert api.inputs_of() == [TEXTS[:2], [PROBE_TEXT]]


async def test_a_batch_refused_whole_whose_halves_are_taken_is_refused_as_before(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    """No input refused alone: the batch was past a limit of the request (here the
    tokens a request may sum to), which the settings must fix."""
    api.max_request_tokens = 100  # each text is 15 bytes: 8 of them are 120

    with pytest.raises(EmbeddingRefusedError) as info:
        await make(batch_size=8).embed_documents(TEXTS)

    assert info.value.status_code == 400
    assert "Requested 120 tokens, max 100 tokens per request" in str(info.value)
    assert len(api.inputs_of()) == 4  # the batch, the probe, the two halves


async def test_an_outage_while_probing_is_an_outage(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    """Whether the settings are at fault is not known: the call ends as an outage does,
    which a caller may retry."""
    texts = _with_refused(0)
    api.failures.extend(Failure(503) for _ in range(2))  # the refused batch pops none
    provider = make(batch_size=8, retry=RetryPolicy(max_attempts=2, base_delay=0.001))

    with pytest.raises(EmbeddingUnavailableError):
        await provider.embed_documents(texts)
    assert api.inputs_of() == [texts, [PROBE_TEXT], [PROBE_TEXT]]


async def test_halving_keeps_within_the_call_s_time(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    """The probe and the halves are requests of the call: its `max_elapsed` bounds them."""
    api.latency = 0.2
    provider = make(batch_size=8, retry=RetryPolicy(max_attempts=1, max_elapsed=0.3))

    with pytest.raises(EmbeddingUnavailableError, match=r"the call's 0.3 s \(max_elapsed\)"):
        await provider.embed_documents(_with_refused(3))


# Through `Redstring`: what the library's writer and retriever make of such a refusal ------


@pytest.fixture
async def client(
    make: Callable[..., OpenAICompatibleEmbeddings],
) -> AsyncIterator[Redstring]:
    async with Redstring.in_memory(make()) as client:
        yield client


async def test_an_upsert_names_the_entity_whose_text_is_refused_and_writes_none(
    api: EmbeddingAPI, client: Redstring
) -> None:
    tenant = new_tenant()
    ferries = make_entity(tenant, "Harbour Ferries", "org")
    refused = make_entity(tenant, "Cobalt Mining", "org", description="REFUSED " * 3)

    with pytest.raises(EntityTextRefusedError) as info:
        await client.upsert([ferries, refused])

    assert info.value.refused == ((tenant, refused.id, info.value.refused[0][2]),)
    assert info.value.refused[0][2].startswith("HTTP 413: ")
    assert list(info.value.vectors) == [ferries.embedding_text()]
    assert await client.graph.get_entities([ferries.id, refused.id], tenant) == []
    assert await client.vectors.sources([ferries.id, refused.id], tenant) == {}


async def test_a_retrieve_whose_query_is_refused_is_bad_input(
    api: EmbeddingAPI, client: Redstring
) -> None:
    tenant = new_tenant()
    await client.upsert([make_entity(tenant, "Harbour Ferries", "org")])

    with pytest.raises(InvalidInputError) as info:
        await client.retrieve("ferries REFUSED", tenant, mode=RetrievalMode.HYBRID)

    assert str(info.value).startswith("query: the embedding provider refuses its text (HTTP 413: ")
    assert isinstance(info.value.__cause__, TextsRefusedError)
    lexical = await client.retrieve("ferries REFUSED", tenant, mode=RetrievalMode.LEXICAL)
    assert [m.entity.name for m in lexical.matches] == ["Harbour Ferries"]
