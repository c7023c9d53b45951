"""`SentenceTransformerEmbeddings` with a stand-in `sentence_transformers` module.

These run without the `local` extra: they pin what the adapter asks of the
library (prompts per side, normalisation, a worker thread, the dimension),
while test_sentence_transformers_model.py checks a real model when present.
"""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from redstring import EmbeddingProvider
from redstring.adapters.embeddings import SentenceTransformerEmbeddings

from .doubles import StandInModel


async def test_prompts_go_to_their_own_side(stand_in: type[StandInModel]) -> None:
    provider = SentenceTransformerEmbeddings(
        "intfloat/e5-small-v2", query_prompt="query: ", document_prompt="passage: "
    )
    assert isinstance(provider, EmbeddingProvider)
    [model] = stand_in.instances
    assert model.name == "intfloat/e5-small-v2"
    assert provider.dimension == 3

    assert await provider.embed_query(["acme"]) == [[len("query: acme"), 1.0, 0.0]]
    assert await provider.embed_documents(["acme", "globex"]) == [
        [len("passage: acme"), 1.0, 0.0],
        [len("passage: globex"), 1.0, 0.0],
    ]
    query_call, document_call = model.calls
    assert query_call["prompt"] == "query: "
    assert document_call["prompt"] == "passage: "
    for call in model.calls:
        assert call["normalize_embeddings"] is True
        assert call["thread"] is not threading.main_thread()  # the event loop is not blocked


async def test_without_prompts_the_model_default_applies(stand_in: type[StandInModel]) -> None:
    provider = SentenceTransformerEmbeddings("/models/minilm", batch_size=7, device="cpu")
    await provider.embed_query(["acme"])
    [model] = stand_in.instances
    assert (model.name, model.device) == ("/models/minilm", "cpu")
    assert model.calls[0]["prompt"] is None
    assert model.calls[0]["batch_size"] == 7


async def test_no_texts_no_encode(stand_in: type[StandInModel]) -> None:
    provider = SentenceTransformerEmbeddings("m")
    assert await provider.embed_documents([]) == []
    assert stand_in.instances[0].calls == []


def test_without_the_extra_the_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import fails
    with pytest.raises(ImportError, match=r"redstring\[local\]"):
        SentenceTransformerEmbeddings("m")


def test_importing_redstring_does_not_import_the_library() -> None:
    code = (
        "import sys, redstring, redstring.composition.embedding_choice; "
        "assert not {'sentence_transformers', 'torch'} & set(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
