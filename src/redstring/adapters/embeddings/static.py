"""`StaticEmbeddingProvider`: a static model's meaning joined with character n-grams (the default)."""

from __future__ import annotations

import asyncio
import importlib
import json
import math
import os
import threading
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from redstring.adapters.embeddings.hashing import HashingEmbeddingProvider
from redstring.domain.errors import InvalidInputError
from redstring.domain.normalization import normalize_for_vectors

MODEL_DIR = Path(__file__).with_name("static_model")
"""The shipped model: all-MiniLM-L6-v2 distilled by model2vec (`NOTICE` beside it)."""

DEFAULT_NGRAM_DIMENSION = 256
DEFAULT_STATIC_WEIGHT = 0.3  # chosen by bench/static_weight.py (docs/embeddings.md)
# Texts per model2vec call; its own default (1024) is fine, and never multiprocessing.
_ENCODE_BATCH = 1024


def shipped_dimension(ngram_dimension: int = DEFAULT_NGRAM_DIMENSION) -> int:
    """The dimension of `StaticEmbeddingProvider()` over the shipped model, read from the
    model's config without loading the model."""
    config = json.loads((MODEL_DIR / "config.json").read_text(encoding="utf-8"))
    return int(config["hidden_dim"]) + ngram_dimension


@cache
def _load_static_model(model_dir: str) -> Any:
    """The model2vec model in `model_dir`, loaded once per process and directory.

    The files are read here and given to `StaticModel`'s constructor: its
    `from_pretrained` reads the same files but first imports huggingface_hub
    (for the Hub and model cards), which doubled the load time.
    """
    folder = Path(model_dir)
    if not (folder / "model.safetensors").is_file():
        raise InvalidInputError(f"no static model (model.safetensors) in {model_dir}")
    model2vec = importlib.import_module("model2vec")
    safetensors_numpy = importlib.import_module("safetensors.numpy")
    tokenizers = importlib.import_module("tokenizers")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    return model2vec.StaticModel(
        safetensors_numpy.load_file(folder / "model.safetensors")["embeddings"],
        tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json")),
        config=config,
        normalize=True,
        max_length=config.get("max_length", 512),
    )


class StaticEmbeddingProvider:
    """A text's vector is two unit parts joined and weighted: `static_weight` on the static
    model's embedding, the rest on hashed character n-grams of the normalised text.

    The cosine of two vectors is then `a * cos_static + (1 - a) * cos_ngram`
    with `a = static_weight`: the static part (a lookup table of token vectors
    distilled from a sentence-transformer, no torch) knows that `automobile`
    is near `car`; the n-gram part (`HashingEmbeddingProvider`'s) keeps a
    one-letter typo near its name, which the static model's subword tokens do
    not. Both parts read the normalised text (`normalize_for_vectors`: case and
    diacritics folded, punctuation dropped). A part without direction (no
    known token, no n-gram) adds nothing, and the whole is scaled back to unit
    length; a text with neither (`...`) gets the zero vector. `dimension` is the
    model's plus `ngram_dimension`. Queries and documents embed alike.

    The model loads once per process and directory, at construction.
    Encoding runs in a worker thread, one call at a time (the tokenizer's
    truncation is set per call, so calls must not interleave).
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str] = MODEL_DIR,
        *,
        ngram_dimension: int = DEFAULT_NGRAM_DIMENSION,
        static_weight: float = DEFAULT_STATIC_WEIGHT,
    ) -> None:
        if ngram_dimension < 0:
            raise InvalidInputError("ngram_dimension must not be negative")
        if not 0.0 <= static_weight <= 1.0:
            raise InvalidInputError("static_weight must be between 0 and 1")
        if ngram_dimension == 0 and static_weight < 1.0:
            raise InvalidInputError("without n-grams (ngram_dimension 0) static_weight must be 1")
        folder = Path(model_dir).resolve()
        self._model = _load_static_model(str(folder))
        model = "shipped" if folder == MODEL_DIR.resolve() else folder.name
        self._identity = f"static/{model}/{ngram_dimension}/{static_weight}"
        self._static_dimension = int(self._model.dim)
        self._ngrams = HashingEmbeddingProvider(ngram_dimension) if ngram_dimension else None
        self._static_scale = math.sqrt(static_weight)
        self._ngram_scale = math.sqrt(1.0 - static_weight)
        self._dimension = self._static_dimension + ngram_dimension
        self._lock = threading.Lock()

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def identity(self) -> str:
        """What makes its vectors: the model (`shipped`, or its folder's name) and the
        n-gram part (`composition.entity_vectors.provider_identity`)."""
        return self._identity

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await asyncio.to_thread(self.embed_now, list(texts))

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return await asyncio.to_thread(self.embed_now, list(texts))

    def embed_now(self, texts: Sequence[str]) -> list[list[float]]:
        """The vectors of `texts`, computed in the calling thread."""
        if not texts:
            return []
        with self._lock:
            static = self._model.encode(
                [normalize_for_vectors(text) for text in texts],
                normalize=True,
                batch_size=_ENCODE_BATCH,
                use_multiprocessing=False,
                show_progress_bar=False,
            )
            parts = [np.asarray(static, dtype=np.float64) * self._static_scale]
            if self._ngrams is not None:
                parts.append(self._ngrams.embed_matrix(texts) * self._ngram_scale)
        joined = np.hstack(parts)
        norms = np.linalg.norm(joined, axis=1, keepdims=True)
        unit = joined / np.where(norms > 0, norms, 1.0)
        vectors: list[list[float]] = unit.tolist()
        return vectors
