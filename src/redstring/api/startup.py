"""Opening the services the settings ask for: the one path `serve` and `load` both take."""

from __future__ import annotations

import logging

from redstring.api.authentication import check_auth_settings
from redstring.api.settings import Backend, EmbeddingsKind, Settings
from redstring.composition.embedding_choice import check_embedding_choice, make_embedding_provider
from redstring.composition.services import Services
from redstring.composition.stores import open_memory_services, open_neo4j_services
from redstring.ports.embedding_provider import EmbeddingProvider

logger = logging.getLogger("redstring.api")


def check_settings(settings: Settings) -> None:
    """Raise `InvalidInputError` for a choice `open_services` or `create_app` would refuse,
    before any server starts: an unknown or incomplete embedding provider, authentication
    settings that cannot be honoured. Builds nothing but reads the key file or JWKS file."""
    check_auth_settings(settings)
    check_embedding_choice(
        settings.embeddings.value,
        model=settings.embedding_model,
        base_url=settings.embedding_base_url,
        query_prompt=settings.embedding_query_prompt,
        document_prompt=settings.embedding_document_prompt,
        dimension=settings.embedding_dimension,
    )


def choice_warnings(settings: Settings) -> list[str]:
    """What `open_services` warns of in a choice it accepts, one message each."""
    if settings.backend is Backend.NEO4J and settings.embeddings is EmbeddingsKind.HASHING:
        return [
            "embeddings: the hashing provider with Neo4j. Neo4j's vector index is approximate "
            "and finds hashing vectors poorly in tenants of more than 2,000 entities (smaller "
            "ones are searched exactly); choose a model with REDSTRING_EMBEDDINGS "
            "(docs/neo4j.md, 'Approximate search, and the hashing provider')"
        ]
    return []


def open_embeddings(settings: Settings) -> EmbeddingProvider:
    """The embedding provider `settings.embeddings` names, built from the `embedding_*` settings.

    Raises `InvalidInputError` for an incomplete choice (`openai` without a
    model or base URL, a prompt for a kind that cannot apply it, ...).
    """
    return make_embedding_provider(
        settings.embeddings.value,
        dimension=settings.embedding_dimension,
        model=settings.embedding_model,
        base_url=settings.embedding_base_url,
        api_key_env=settings.embedding_api_key_env,
        batch_size=settings.embedding_batch_size,
        max_concurrency=settings.embedding_concurrency,
        timeout=settings.embedding_timeout,
        query_prompt=settings.embedding_query_prompt,
        document_prompt=settings.embedding_document_prompt,
    )


async def open_services(settings: Settings) -> Services:
    """Services on the configured backend; the caller closes them with `aclose()`.

    The services own the provider (an `openai` provider's HTTP client is
    closed by `aclose()`), and the retriever embeds queries through a cache
    of `settings.query_cache_size` queries (none when 0).
    """
    embeddings = open_embeddings(settings)
    for message in choice_warnings(settings):
        logger.warning(message)
    if settings.backend is Backend.NEO4J:
        return await open_neo4j_services(
            embeddings,
            uri=settings.neo4j_uri,
            user=settings.neo4j_user,
            password=settings.neo4j_password.get_secret_value(),
            database=settings.neo4j_database,
            query_cache_size=settings.query_cache_size,
            owns_embeddings=True,
        )
    return open_memory_services(
        embeddings, query_cache_size=settings.query_cache_size, owns_embeddings=True
    )
