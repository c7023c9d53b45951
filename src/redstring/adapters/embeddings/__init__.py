"""Embedding providers."""

from redstring.adapters.embeddings.hashing import HashingEmbeddingProvider

__all__ = ["HashingEmbeddingProvider"]
