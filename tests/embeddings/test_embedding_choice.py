"""`make_embedding_provider`: settings name a provider kind and its options."""

from __future__ import annotations

from typing import Any

import pytest

from redstring import DimensionMismatchError, HashingEmbeddingProvider, InvalidInputError
from redstring.adapters.embeddings import OpenAICompatibleEmbeddings, SentenceTransformerEmbeddings
from redstring.adapters.embeddings.static import StaticEmbeddingProvider
from redstring.composition.embedding_choice import make_embedding_provider

from .doubles import StandInModel
from .fake_server import EmbeddingAPI, vector_for

DEFAULTS: dict[str, Any] = {
    "dimension": 8,
    "model": None,
    "base_url": None,
    "api_key_env": "OPENAI_API_KEY",
    "batch_size": 64,
    "max_concurrency": 2,
    "timeout": 5.0,
    "query_prompt": None,
    "document_prompt": None,
}


def _make(kind: str, **options: Any) -> Any:
    return make_embedding_provider(kind, **(DEFAULTS | options))


def test_hashing_needs_only_the_dimension() -> None:
    provider = _make("hashing", dimension=32, model="ignored", base_url="http://127.0.0.1:9")
    assert isinstance(provider, HashingEmbeddingProvider)
    assert provider.dimension == 32
    assert _make("hashing", dimension=None).dimension == 384


@pytest.mark.parametrize("dimension", [None, 384])
def test_static_needs_nothing_and_gives_its_own_dimension(dimension: int | None) -> None:
    provider = _make("Static", dimension=dimension, model="ignored", batch_size=3)
    assert isinstance(provider, StaticEmbeddingProvider)
    assert provider.dimension == 384


def test_static_refuses_another_dimension_before_loading_anything() -> None:
    with pytest.raises(
        InvalidInputError, match="have 384 dimensions, not 256: leave the dimension"
    ):
        _make("static", dimension=256)


async def test_openai_talks_to_the_configured_server(
    api: EmbeddingAPI, base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDSTRING_TEST_EMBEDDING_KEY", "sk-choice")
    provider = _make(
        "OpenAI", model="nomic-embed-text", base_url=base_url,
        api_key_env="REDSTRING_TEST_EMBEDDING_KEY", batch_size=2,
    )  # fmt: skip
    assert isinstance(provider, OpenAICompatibleEmbeddings)
    try:
        vectors = await provider.embed_documents(["a", "b", "c"])
    finally:
        await provider.aclose()
    assert vectors == [vector_for(t, 8) for t in "abc"]
    assert api.requests == 2
    assert {b["model"] for b in api.bodies} == {"nomic-embed-text"}
    assert set(api.authorizations) == {"Bearer sk-choice"}


@pytest.mark.usefixtures("stand_in")
@pytest.mark.parametrize("kind", ["sentence-transformers", "sentence_transformers"])
async def test_sentence_transformers_gets_its_prompts(kind: str) -> None:
    provider = _make(
        kind, dimension=3, model="intfloat/e5-small-v2", batch_size=5,
        query_prompt="query: ", document_prompt="passage: ",
    )  # fmt: skip
    assert isinstance(provider, SentenceTransformerEmbeddings)
    await provider.embed_query(["x"])
    await provider.embed_documents(["x"])
    [model] = StandInModel.instances
    assert [c["prompt"] for c in model.calls] == ["query: ", "passage: "]
    assert {c["batch_size"] for c in model.calls} == {5}


@pytest.mark.usefixtures("stand_in")
def test_a_local_model_of_another_dimension_is_refused() -> None:
    with pytest.raises(DimensionMismatchError, match="dimension 3, expected 384"):
        _make("sentence-transformers", dimension=384, model="m")
    assert _make("sentence-transformers", dimension=None, model="m").dimension == 3


@pytest.mark.parametrize(
    ("kind", "options", "message"),
    [
        ("bert", {}, "unknown embedding provider 'bert'"),
        ("openai", {"base_url": "http://127.0.0.1:9/v1"}, "needs a model"),
        ("openai", {"model": "m"}, "needs a base_url"),
        ("openai", {"model": "m", "base_url": "http://x/v1", "dimension": None}, "a dimension"),
        ("sentence-transformers", {}, "needs a model"),
        ("openai", {"model": "m", "base_url": "http://x/v1", "query_prompt": "q: "}, "prompt"),
        ("hashing", {"document_prompt": "passage: "}, "prompt"),
        ("static", {"query_prompt": "query: "}, "prompt"),
    ],
)
def test_unknown_kinds_and_missing_options_are_refused(
    kind: str, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidInputError, match=message):
        _make(kind, **options)
