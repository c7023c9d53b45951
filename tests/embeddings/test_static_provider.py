"""`StaticEmbeddingProvider`: the shipped static model joined with character n-grams."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from redstring import (
    Entity,
    InMemoryGraphStore,
    InMemoryVectorStore,
    InvalidInputError,
    RetrievalMode,
    Retriever,
    build_graph,
)
from redstring.adapters.embeddings.static import (
    DEFAULT_NGRAM_DIMENSION,
    MODEL_DIR,
    StaticEmbeddingProvider,
)
from redstring.domain.ids import entity_id_for
from redstring.domain.normalization import normalize_name
from redstring.testing import new_tenant

# Names of our own, with near neighbours: shared stems, shared trades.
NAMES = [
    "Northwind Shipping Ltd",
    "Northwind Bakery GmbH",
    "Northgate Logistics Inc",
    "Westbrook Robotics AG",
    "Westbrook Brewery plc",
    "Halcyon Analytics LLC",
    "Halcyon Furniture SA",
    "Kestrel Insurance BV",
    "Meridian Textiles Ltd",
    "Müller Lebensmittel GmbH",
    "Crémieux Optique SA",
    "Sørensen Træ ApS",
    "Ibáñez Minería SL",
    "Dvořák Strojírny s.r.o.",
]
# One edit each: a letter deleted, inserted, substituted, or two swapped.
TYPOS = {
    "Nortwind Shipping Ltd": "Northwind Shipping Ltd",
    "Northwind Bakrey GmbH": "Northwind Bakery GmbH",
    "Northgate Logisitcs Inc": "Northgate Logistics Inc",
    "Westbrok Robotics AG": "Westbrook Robotics AG",
    "Westbrook Brewary plc": "Westbrook Brewery plc",
    "Halycon Analytics LLC": "Halcyon Analytics LLC",
    "Halcyon Furnitre SA": "Halcyon Furniture SA",
    "Kestrell Insurance BV": "Kestrel Insurance BV",
    "Meridian Textlies Ltd": "Meridian Textiles Ltd",
}
FOLDED = {
    "MULLER LEBENSMITTEL GMBH": "Müller Lebensmittel GmbH",
    "CREMIEUX OPTIQUE SA": "Crémieux Optique SA",
    "IBANEZ MINERIA SL": "Ibáñez Minería SL",
    "DVORAK STROJIRNY S R O": "Dvořák Strojírny s.r.o.",
}


@pytest.fixture(scope="module")
def provider() -> StaticEmbeddingProvider:
    return StaticEmbeddingProvider()


def _cos(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b))


def test_the_dimension_is_the_models_plus_the_ngrams(provider: StaticEmbeddingProvider) -> None:
    [vector] = provider.embed_now(["Northwind Shipping Ltd"])
    assert provider.dimension == len(vector) == 128 + DEFAULT_NGRAM_DIMENSION


async def test_vectors_are_unit_length_and_queries_embed_as_documents(
    provider: StaticEmbeddingProvider,
) -> None:
    texts = [*NAMES, "a", "東京 タワー", "Acme Corp. company. A maker of anvils"]
    documents = await provider.embed_documents(texts)
    queries = await provider.embed_query(texts)
    assert documents == queries
    for vector in documents:
        assert math.isclose(float(np.linalg.norm(vector)), 1.0, rel_tol=1e-9)


async def test_the_same_text_gives_the_same_vector_in_any_batch(
    provider: StaticEmbeddingProvider,
) -> None:
    alone = [await provider.embed_query([name]) for name in NAMES]
    together = await provider.embed_documents(NAMES)
    again = StaticEmbeddingProvider().embed_now(list(reversed(NAMES)))
    assert [a[0] for a in alone] == together == list(reversed(again))


def test_a_text_without_letters_has_no_direction(provider: StaticEmbeddingProvider) -> None:
    """Both parts read the normalised text: `...` is nothing, as with the hashing
    provider, so retrieval does not search with it."""
    assert provider.embed_now(["...", " - "]) == [[0.0] * provider.dimension] * 2
    assert provider.embed_now([]) == []


def test_the_cosine_weighs_the_two_parts() -> None:
    """cos = a * cos_static + (1 - a) * cos_ngram, with each part's own cosine."""
    weight = 0.3
    joined = StaticEmbeddingProvider(static_weight=weight)
    static = StaticEmbeddingProvider(ngram_dimension=0, static_weight=1.0)
    ngrams = StaticEmbeddingProvider(static_weight=0.0)
    pair = ["Northwind Shipping Ltd", "Northwind Maritime Limited"]
    [a, b], [sa, sb], [na, nb] = (p.embed_now(pair) for p in (joined, static, ngrams))
    expected = weight * _cos(sa, sb) + (1 - weight) * _cos(na, nb)
    assert math.isclose(_cos(a, b), expected, rel_tol=1e-6)  # the model computes in float32


def test_the_static_part_knows_words_of_like_meaning() -> None:
    """The model, not the spelling: `automobile` is nearer `car` than `carpet` is,
    which character n-grams alone get the other way round."""
    static = StaticEmbeddingProvider(ngram_dimension=0, static_weight=1.0)
    car, automobile, carpet = static.embed_now(["car", "automobile", "carpet"])
    assert _cos(car, automobile) > _cos(car, carpet)
    grams = StaticEmbeddingProvider(static_weight=0.0)
    car, automobile, carpet = grams.embed_now(["car", "automobile", "carpet"])
    assert _cos(car, automobile) < _cos(car, carpet)


async def _nearest(provider: StaticEmbeddingProvider, queries: list[str]) -> list[str]:
    tenant = new_tenant()
    entities = [
        Entity(
            id=entity_id_for(tenant, name, "organization"),
            tenant_id=tenant,
            name=name,
            entity_type="organization",
        )
        for name in NAMES
    ]
    vectors = InMemoryVectorStore(provider.dimension)
    graph = InMemoryGraphStore()
    await build_graph(entities, embeddings=provider, vectors=vectors, graph=graph)
    retriever = Retriever(embeddings=provider, vectors=vectors, graph=graph)
    found = []
    for query in queries:
        result = await retriever.retrieve(query, tenant, k=1, mode=RetrievalMode.SEMANTIC)
        found.append(result.matches[0].entity.name)
    return found


async def test_a_name_with_one_typo_finds_its_name_among_near_neighbours(
    provider: StaticEmbeddingProvider,
) -> None:
    assert await _nearest(provider, list(TYPOS)) == list(TYPOS.values())


async def test_the_static_model_alone_misses_typos() -> None:
    """Why the n-grams are there: the same typos, without them, go astray."""
    alone = StaticEmbeddingProvider(ngram_dimension=0, static_weight=1.0)
    found = await _nearest(alone, list(TYPOS))
    assert found != list(TYPOS.values())


async def test_an_upper_cased_name_without_diacritics_finds_its_name(
    provider: StaticEmbeddingProvider,
) -> None:
    assert await _nearest(provider, list(FOLDED)) == list(FOLDED.values())
    folded = provider.embed_now(list(FOLDED))
    original = provider.embed_now(list(FOLDED.values()))
    for a, b in zip(folded, original, strict=True):
        assert math.isclose(_cos(a, b), 1.0, rel_tol=1e-6)


def test_the_model_reads_as_model2vec_reads_it(provider: StaticEmbeddingProvider) -> None:
    """The provider loads the files itself; `StaticModel.from_pretrained` gives the same."""
    from model2vec import StaticModel

    reference = StaticModel.from_pretrained(MODEL_DIR, normalize=True)
    static = StaticEmbeddingProvider(ngram_dimension=0, static_weight=1.0)
    texts = [normalize_name(name) for name in NAMES]  # what the provider gives the model
    assert np.allclose(static.embed_now(texts), reference.encode(texts), atol=1e-6)


def test_model2vec_loads_only_with_a_provider_and_torch_never() -> None:
    """Importing redstring stays light; the provider needs model2vec, not torch."""
    script = (
        "import sys\n"
        "from redstring.adapters.embeddings import StaticEmbeddingProvider\n"
        "assert 'model2vec' not in sys.modules\n"
        "StaticEmbeddingProvider().embed_now(['Northwind Shipping Ltd'])\n"
        "assert 'model2vec' in sys.modules\n"
        "assert 'torch' not in sys.modules and 'huggingface_hub' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)


def test_the_model_is_loaded_once_per_process() -> None:
    first, second = StaticEmbeddingProvider(), StaticEmbeddingProvider(static_weight=0.8)
    assert first._model is second._model


def test_the_shipped_model_carries_its_licence_notice() -> None:
    notice = (MODEL_DIR / "NOTICE").read_text(encoding="utf-8")
    assert "all-MiniLM-L6-v2" in notice
    assert "Apache License" in notice
    assert "Version 2.0, January 2004" in (MODEL_DIR / "LICENSE").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"ngram_dimension": -1}, "ngram_dimension"),
        ({"static_weight": 1.5}, "static_weight"),
        ({"static_weight": -0.1}, "static_weight"),
        ({"ngram_dimension": 0, "static_weight": 0.5}, "static_weight must be 1"),
    ],
)
def test_bad_options_are_refused(options: dict[str, float], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        StaticEmbeddingProvider(**options)  # type: ignore[arg-type]


def test_a_folder_without_a_model_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"no static model"):
        StaticEmbeddingProvider(tmp_path)
