"""Settings choose the embedding provider and the query cache; `serve` and `load` share the path."""

from __future__ import annotations

import socket
import sys
import types
from collections.abc import AsyncIterator

import pytest

from redstring import StoreUnavailableError
from redstring.adapters.embeddings import (
    HashingEmbeddingProvider,
    OpenAICompatibleEmbeddings,
    SentenceTransformerEmbeddings,
)
from redstring.api.load import load_jsonl
from redstring.api.settings import Settings
from redstring.api.startup import choice_warnings, open_client
from redstring.composition.client import Redstring
from redstring.composition.embedding_choice import EmbeddingsKind
from redstring.testing import new_tenant
from tests.embeddings.doubles import StandInModel
from tests.embeddings.fake_server import EmbeddingAPI, serving
from tests.ingest.support import entity_line


@pytest.fixture
def api() -> EmbeddingAPI:
    return EmbeddingAPI(dimension=8)


@pytest.fixture
async def base_url(api: EmbeddingAPI) -> AsyncIterator[str]:
    async with serving(api) as url:
        yield url


def _texts(api: EmbeddingAPI) -> list[list[str]]:
    return [body["input"] for body in api.bodies]


async def test_openai_settings_give_a_cached_retriever_and_raw_ingestion(
    api: EmbeddingAPI, base_url: str
) -> None:
    settings = Settings(
        embeddings="OpenAI",
        embedding_model="nomic-embed-text",
        embedding_base_url=base_url,
        embedding_dimension=8,
        embedding_batch_size=2,
        query_cache_size=16,
    )
    services = await open_client(settings)
    tenant = new_tenant()
    try:
        assert isinstance(services.embeddings, OpenAICompatibleEmbeddings)
        lines = [entity_line(name).encode() for name in ("Acme Corp", "Globex", "Initech")]
        await load_jsonl(lines, tenant, services)
        assert _texts(api) == [["Acme Corp. company", "Globex. company"], ["Initech. company"]]
        for _ in range(3):
            await services.retriever.retrieve("acme", tenant, k=2)
        assert _texts(api)[2:] == [["acme"]]  # one request for three retrieves
        assert services.query_cache is not None
        assert (services.query_cache.hits, services.query_cache.misses) == (2, 1)
    finally:
        await services.aclose()
    with pytest.raises(RuntimeError):  # the provider's own HTTP client is closed
        await services.embeddings.embed_query(["acme"])


async def test_a_query_cache_of_size_zero_is_no_cache() -> None:
    settings = Settings(query_cache_size=0, embeddings="hashing", embedding_dimension=16)
    services = await open_client(settings)
    assert isinstance(services.embeddings, HashingEmbeddingProvider)
    assert services.query_cache is None
    found = await services.retriever.retrieve("acme", new_tenant(), k=1)
    assert found.matches == ()


async def test_sentence_transformers_settings_carry_model_and_prompts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = types.ModuleType("sentence_transformers")
    module.SentenceTransformer = StandInModel  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", module)
    StandInModel.instances = []
    settings = Settings(
        embeddings="sentence_transformers",
        embedding_model="intfloat/e5-small-v2",
        embedding_dimension=3,
        embedding_query_prompt="query: ",
        embedding_document_prompt="passage: ",
    )
    assert settings.embeddings is EmbeddingsKind.SENTENCE_TRANSFORMERS
    services = await open_client(settings)
    assert isinstance(services.embeddings, SentenceTransformerEmbeddings)
    tenant = new_tenant()
    await load_jsonl([entity_line("Acme Corp").encode()], tenant, services)
    await services.retriever.retrieve("acme", tenant, k=1)
    [model] = StandInModel.instances
    assert model.name == "intfloat/e5-small-v2"
    assert [c["prompt"] for c in model.calls] == ["passage: ", "query: "]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_an_owned_provider_is_closed_when_the_stores_cannot_be_opened(
    base_url: str,
) -> None:
    pytest.importorskip("neo4j")
    settings = Settings(
        backend="neo4j",
        neo4j_uri=f"bolt://127.0.0.1:{_closed_port()}",
        neo4j_password="x",
        embeddings="openai",
        embedding_model="m",
        embedding_base_url=base_url,
        embedding_dimension=8,
    )
    client = Redstring.from_settings(settings)
    provider = client.embeddings
    with pytest.raises(StoreUnavailableError):
        await client.start()
    with pytest.raises(RuntimeError):
        await provider.embed_query(["acme"])


def test_only_the_hashing_provider_on_neo4j_is_warned_of() -> None:
    hashing = Settings(backend="neo4j", neo4j_password="x", embeddings="hashing")
    [warning] = choice_warnings(hashing)
    assert "hashing provider with Neo4j" in warning
    assert "REDSTRING_EMBEDDINGS" in warning
    assert choice_warnings(Settings()) == []
    assert choice_warnings(Settings(backend="neo4j", neo4j_password="x")) == []  # static
    model = Settings(
        backend="neo4j",
        neo4j_password="x",
        embeddings="openai",
        embedding_model="nomic-embed-text",
        embedding_base_url="http://127.0.0.1:9/v1",
    )
    assert choice_warnings(model) == []


def test_a_redstring_variable_that_names_no_setting_is_warned_of() -> None:
    environment = {
        "REDSTRING_MAX_TOKNS": "5",
        "REDSTRING_PORT": "1",
        "REDSTRING_ZZZ": "",
        "HOME": "/",
    }
    assert choice_warnings(Settings(), environment) == [
        "REDSTRING_MAX_TOKNS names no setting and is ignored; did you mean REDSTRING_MAX_TOKENS?",
        "REDSTRING_ZZZ names no setting and is ignored",
    ]


def test_the_variable_holding_the_embedding_key_is_no_unknown_setting() -> None:
    settings = Settings(embedding_api_key_env="REDSTRING_EMBEDDING_KEY")
    environment = {"REDSTRING_EMBEDDING_KEY": "secret", "redstring_max_tokns": "5"}
    assert choice_warnings(settings, environment) == [
        "redstring_max_tokns names no setting and is ignored; did you mean REDSTRING_MAX_TOKENS?"
    ]
