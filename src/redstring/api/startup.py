"""Opening the client the settings ask for: the one path `serve` and `load` both take."""

from __future__ import annotations

import asyncio
import difflib
import logging
import os
import time
from collections.abc import Mapping

from redstring.api.authentication import check_auth_settings
from redstring.api.errors import described, one_line
from redstring.api.metrics import EmbeddingCheckOutcome, check_shared_directory
from redstring.api.settings import Backend, Settings, variable_of
from redstring.composition.client import Redstring
from redstring.composition.embedding_choice import EmbeddingsKind, check_embedding_choice
from redstring.composition.extras import check_neo4j_extra
from redstring.domain.errors import (
    DimensionMismatchError,
    EmbeddingRefusedError,
    StoreUnavailableError,
)

logger = logging.getLogger("redstring.api")


def check_settings(settings: Settings) -> None:
    """Raise `InvalidInputError` for a choice `open_client` or `create_app` would refuse,
    before any server starts: the neo4j backend without its extra, an unknown or
    incomplete embedding provider, authentication settings that cannot be honoured, a
    metrics folder that is none. Builds nothing but reads the key file or JWKS file."""
    if settings.backend is Backend.NEO4J:
        check_neo4j_extra()
    check_auth_settings(settings)
    check_shared_directory()
    check_embedding_choice(
        settings.embeddings.value,
        model=settings.embedding_model,
        base_url=settings.embedding_base_url,
        query_prompt=settings.embedding_query_prompt,
        document_prompt=settings.embedding_document_prompt,
        dimension=settings.embedding_dimension,
    )


def choice_warnings(settings: Settings, environment: Mapping[str, str] | None = None) -> list[str]:
    """What `open_client` warns of in a choice it accepts, one message each: the hashing
    provider with Neo4j, and each `REDSTRING_*` variable of `environment` (the process's
    by default) that names no setting, so is ignored (`REDSTRING_MAX_TOKNS`)."""
    given = os.environ if environment is None else environment
    # The variable that holds the embedding API key may be given a REDSTRING_ name too.
    key_holder = settings.embedding_api_key_env.upper()
    warnings = [
        f"{name} names no setting and is ignored" + (f"; did you mean {close[0]}?" if close else "")
        for name, close in unknown_variables(given)
        if name.upper() != key_holder
    ]
    if settings.backend is Backend.NEO4J and settings.embeddings is EmbeddingsKind.HASHING:
        warnings.append(
            "embeddings: the hashing provider with Neo4j. Neo4j's vector index is approximate "
            "and finds hashing vectors poorly in tenants of more than 100 entities (smaller "
            "ones are searched exactly); choose a model with REDSTRING_EMBEDDINGS "
            "(docs/neo4j.md, 'Approximate search, and the hashing provider')"
        )
    return warnings


def with_misspellings(reason: str, environment: Mapping[str, str] | None = None) -> str:
    """`reason` settings were refused for, followed by each `REDSTRING_*` variable of
    `environment` (the process's by default) that names no setting but is close to one,
    which may be the cause: `REDSTRING_NEO4J_PASS` leaves `REDSTRING_NEO4J_PASSWORD`
    unset. A refusal stops the start before `choice_warnings` would name them."""
    given = os.environ if environment is None else environment
    hints = [
        f"{name} names no setting; did you mean {close[0]}?"
        for name, close in unknown_variables(given)
        if close
    ]
    return "; ".join([reason, *hints])


def unknown_variables(environment: Mapping[str, str]) -> list[tuple[str, list[str]]]:
    """Each `REDSTRING_*` name of `environment` that is no setting, with the setting
    names close to it (a misspelling's likely meaning), in name order."""
    prefix = str(Settings.model_config.get("env_prefix", ""))
    known = {name.upper(): name for name in Settings.model_fields}
    return [
        (name, [variable_of(known[m]) for m in difflib.get_close_matches(suffix, known, n=1)])
        for name in sorted(environment)
        if name.upper().startswith(prefix) and (suffix := name[len(prefix) :].upper()) not in known
    ]


async def open_client(
    settings: Settings, *, embedding_time_limit: float | None = None
) -> Redstring:
    """The `Redstring` the settings ask for, started; the caller closes it with `aclose()`.

    It owns the provider (an `openai` provider's HTTP client is closed by
    `aclose()`), and embeds queries through a cache of `settings.query_cache_size`
    queries (none when 0). Each call of the provider takes at most
    `embedding_time_limit` seconds, retries included (a server's, `Limits.embedding_time`);
    None, for `load` and `rekey`, waits out an outage. Each of `choice_warnings` is
    logged first.
    """
    for message in choice_warnings(settings):
        logger.warning(message)
    client = Redstring.from_settings(settings, embedding_time_limit=embedding_time_limit)
    try:
        await client.start()
    except asyncio.CancelledError:  # a stop while it starts: nothing is left open
        await client.aclose()
        raise
    return client


async def log_vector_provenance(client: Redstring) -> None:
    """Log what `Redstring.check_vector_provenance` finds: one WARNING, which says what to
    do, when some of the sampled vectors are not of the configured provider, else one
    DEBUG line. The check's own failure (a store that does not answer) is a WARNING
    too, never raised: the server serves either way."""
    started = time.perf_counter()
    try:
        found = await client.check_vector_provenance()
    except Exception as exc:
        logger.warning(
            "stored vectors: could not check whether they are of the configured embedding "
            "provider: %s: %s",
            type(exc).__name__,
            one_line(exc),
        )
        logger.debug("vector provenance check failure", exc_info=True)
        return
    warning = found.warning()
    if warning is not None:
        logger.warning("%s", warning)
    milliseconds = (time.perf_counter() - started) * 1000
    logger.debug("stored vectors: %s (checked in %.1f ms)", found.summary(), milliseconds)


# What a provider that fails the check at start leaves failing, and what works on.
_EMBEDDING_OPERATIONS = "SEMANTIC and HYBRID retrieves and entity writes that embed"
_STILL_WORKING = "LEXICAL retrieves, relationships, entity types and deletes work"


async def log_embedding_check(client: Redstring) -> EmbeddingCheckOutcome:
    """Log what `Redstring.check_embeddings` finds, in one line, and answer its outcome.

    A refusal (`EmbeddingRefusedError`) and a vector of another dimension are one ERROR
    each, with the settings to check (`described`), what fails until they change and
    what works; no answer (`StoreUnavailableError`, after the provider's retries) is one
    WARNING, an outage a wait may cure; an answer, one DEBUG line with its time. Any
    other failure is one ERROR with its traceback. Never raised: the server serves
    either way, its LEXICAL channel needing no provider."""
    try:
        found = await client.check_embeddings()
    except EmbeddingRefusedError as exc:
        logger.error(
            "embedding provider: it refuses the server's requests (checked at start): %s. "
            "Until it accepts them, %s fail with INTERNAL_SERVER_ERROR; %s",
            described(exc),
            _EMBEDDING_OPERATIONS,
            _STILL_WORKING,
        )
        logger.debug("the embedding check's failure", exc_info=True)
        return EmbeddingCheckOutcome.REFUSED
    except DimensionMismatchError as exc:
        logger.error(
            "embedding provider: its vectors are not of the configured dimension (checked "
            "at start): %s; check %s, or %s. Until they are, %s fail with "
            "INTERNAL_SERVER_ERROR; %s",
            one_line(exc),
            variable_of("embedding_dimension"),
            variable_of("embedding_model"),
            _EMBEDDING_OPERATIONS,
            _STILL_WORKING,
        )
        logger.debug("the embedding check's failure", exc_info=True)
        return EmbeddingCheckOutcome.WRONG_DIMENSION
    except StoreUnavailableError as exc:
        logger.warning(
            "embedding provider: it does not answer (checked at start): %s. Until it does, "
            "%s answer SERVICE_UNAVAILABLE (a 503); %s",
            one_line(exc),
            _EMBEDDING_OPERATIONS,
            _STILL_WORKING,
        )
        logger.debug("the embedding check's failure", exc_info=True)
        return EmbeddingCheckOutcome.UNAVAILABLE
    except Exception as exc:
        logger.error(
            "embedding provider: the check at start failed: %s: %s",
            type(exc).__name__,
            one_line(exc),
            exc_info=True,
        )
        return EmbeddingCheckOutcome.FAILED
    logger.debug(
        "embedding provider: answered the check at start in %.1f ms (%s, a vector of dimension %d)",
        found.seconds * 1000,
        found.provider,
        found.dimension,
    )
    return EmbeddingCheckOutcome.OK
