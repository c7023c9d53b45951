"""Embedding test fixtures: the fake embeddings server, a stand-in `sentence_transformers`."""

from __future__ import annotations

import sys
import types
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from redstring.adapters.embeddings import OpenAICompatibleEmbeddings, RetryPolicy

from .doubles import StandInModel
from .fake_server import EmbeddingAPI, serving


@pytest.fixture
def api() -> EmbeddingAPI:
    return EmbeddingAPI()


@pytest.fixture
async def base_url(api: EmbeddingAPI) -> AsyncIterator[str]:
    async with serving(api) as url:
        yield url


# Quick retries, and a `Retry-After` the fake server sends waited for 0.05 s at most.
QUICK = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.01, max_retry_after=0.05)


@pytest.fixture
async def make(base_url: str) -> AsyncIterator[Callable[..., OpenAICompatibleEmbeddings]]:
    """Makes `OpenAICompatibleEmbeddings` of the fake server at `base_url` (options over
    the defaults), each closed after the test."""
    made: list[OpenAICompatibleEmbeddings] = []

    def factory(**options: Any) -> OpenAICompatibleEmbeddings:
        settings: dict[str, Any] = {
            "base_url": base_url,
            "model": "test-model",
            "dimension": 8,
            "api_key_env": None,
            "retry": QUICK,
            "timeout": 5.0,
            **options,
        }
        provider = OpenAICompatibleEmbeddings(**settings)
        made.append(provider)
        return provider

    yield factory
    for provider in made:
        await provider.aclose()


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> type[StandInModel]:
    """`sentence_transformers` replaced by a module whose model is `StandInModel`."""
    module = types.ModuleType("sentence_transformers")
    module.SentenceTransformer = StandInModel  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", module)
    StandInModel.instances = []
    return StandInModel
