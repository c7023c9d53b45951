"""Opening the services the settings ask for, as a server or loader starts."""

from __future__ import annotations

from redstring.adapters.embeddings import HashingEmbeddingProvider
from redstring.api.settings import Backend, EmbeddingsKind, Settings
from redstring.composition.services import Services
from redstring.composition.stores import open_memory_services, open_neo4j_services
from redstring.ports.embedding_provider import EmbeddingProvider


def open_embeddings(settings: Settings) -> EmbeddingProvider:
    """The embedding provider `settings.embeddings` names."""
    if settings.embeddings is EmbeddingsKind.HASHING:
        return HashingEmbeddingProvider(settings.embedding_dimension)
    raise ValueError(f"unknown embedding provider {settings.embeddings!r}")


async def open_services(settings: Settings) -> Services:
    """Services on the configured backend; the caller closes them with `aclose()`."""
    embeddings = open_embeddings(settings)
    if settings.backend is Backend.NEO4J:
        return await open_neo4j_services(
            embeddings,
            uri=settings.neo4j_uri,
            user=settings.neo4j_user,
            password=settings.neo4j_password.get_secret_value(),
            database=settings.neo4j_database,
        )
    return open_memory_services(embeddings)
