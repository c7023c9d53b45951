"""Embedding test fixtures: the fake embeddings server, a stand-in `sentence_transformers`."""

from __future__ import annotations

import sys
import types
from collections.abc import AsyncIterator

import pytest

from .doubles import StandInModel
from .fake_server import EmbeddingAPI, serving


@pytest.fixture
def api() -> EmbeddingAPI:
    return EmbeddingAPI()


@pytest.fixture
async def base_url(api: EmbeddingAPI) -> AsyncIterator[str]:
    async with serving(api) as url:
        yield url


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> type[StandInModel]:
    """`sentence_transformers` replaced by a module whose model is `StandInModel`."""
    module = types.ModuleType("sentence_transformers")
    module.SentenceTransformer = StandInModel  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", module)
    StandInModel.instances = []
    return StandInModel
