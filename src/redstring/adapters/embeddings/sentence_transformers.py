"""`SentenceTransformerEmbeddings`: a local sentence-transformers model (`redstring[local]`)."""

from __future__ import annotations

import asyncio
import importlib
import os
import threading
from collections.abc import Sequence
from typing import Any

from redstring.domain.errors import InvalidInputError

DEFAULT_BATCH_SIZE = 32


class SentenceTransformerEmbeddings:
    """Embeddings from a sentence-transformers model, by Hub name or local path.

    `query_prompt` and `document_prompt` are prepended by the model to
    queries and documents respectively (e5/bge-style models want e.g.
    "query: " and "passage: "); None means the model's own default.
    Vectors are L2-normalised; `dimension` is the model's.

    `sentence_transformers` (and so torch) is imported here, at
    construction, so this module imports without the extra. Encoding runs
    in a worker thread, one call at a time: a Hugging Face fast tokenizer
    shared between threads fails ("Already borrowed"), and one encode
    already keeps the CPU busy.
    """

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        query_prompt: str | None = None,
        document_prompt: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        device: str | None = None,
    ) -> None:
        if not str(model).strip():
            raise InvalidInputError("model must name a sentence-transformers model or path")
        if batch_size < 1:
            raise InvalidInputError("batch_size must be at least 1")
        try:
            library = importlib.import_module("sentence_transformers")
        except ImportError as exc:
            raise ImportError(
                "SentenceTransformerEmbeddings needs the `local` extra: "
                "pip install 'redstring[local]'"
            ) from exc
        self._model: Any = library.SentenceTransformer(str(model), device=device)
        dimension_of = getattr(self._model, "get_embedding_dimension", None) or (
            self._model.get_sentence_embedding_dimension  # sentence-transformers < 6
        )
        dimension = dimension_of()
        if not isinstance(dimension, int) or dimension <= 0:
            raise InvalidInputError(f"model {str(model)!r} does not declare its embedding size")
        self._dimension = dimension
        self._query_prompt = query_prompt
        self._document_prompt = document_prompt
        self._batch_size = batch_size
        self._identity = f"sentence-transformers/{model}/{document_prompt or ''}"
        self._lock = threading.Lock()

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def identity(self) -> str:
        """What makes its document vectors: the model as named, and the document prompt
        (`composition.entity_vectors.provider_identity`)."""
        return self._identity

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await asyncio.to_thread(self._encode, list(texts), self._document_prompt)

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return await asyncio.to_thread(self._encode, list(texts), self._query_prompt)

    def _encode(self, texts: list[str], prompt: str | None) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            matrix = self._model.encode(
                texts,
                prompt=prompt,
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        vectors: list[list[float]] = matrix.tolist()
        return vectors
