"""Embedding providers.

`SentenceTransformerEmbeddings` imports sentence-transformers (and torch),
and `StaticEmbeddingProvider` model2vec, only when constructed, so importing
this package stays light.
"""

from redstring.adapters.embeddings.hashing import HashingEmbeddingProvider
from redstring.adapters.embeddings.openai_compatible import OpenAICompatibleEmbeddings, RetryPolicy
from redstring.adapters.embeddings.sentence_transformers import SentenceTransformerEmbeddings
from redstring.adapters.embeddings.static import StaticEmbeddingProvider

__all__ = [
    "HashingEmbeddingProvider",
    "OpenAICompatibleEmbeddings",
    "RetryPolicy",
    "SentenceTransformerEmbeddings",
    "StaticEmbeddingProvider",
]
