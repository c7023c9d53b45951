"""The app checks the stored vectors' provenance once it has started, in the background:
one WARNING when they are not of the configured provider, and never a start delayed or
stopped by the check."""

from __future__ import annotations

import asyncio
import logging
from contextlib import AbstractAsyncContextManager

import httpx
import pytest

from redstring import (
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    Redstring,
    StoreUnavailableError,
    VectorProvenance,
)
from redstring.api import app as app_module
from redstring.api import create_app
from redstring.api.settings import Settings
from redstring.testing import make_entity, new_tenant
from tests.api.support import started

DIMENSION = 32
SETTINGS = {"embeddings": "hashing", "embedding_dimension": DIMENSION, "graphiql": False}


class OtherModel(HashingEmbeddingProvider):
    """Another model of the same dimension: vectors alike, another identity."""

    identity = "another model of the same dimension"  # type: ignore[assignment]


def _serving(settings: Settings) -> AbstractAsyncContextManager[httpx.AsyncClient]:
    return started(create_app(settings))


def _provenance_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage().startswith("stored vectors:")]


async def _logged(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The check's lines once it has logged its last (the DEBUG summary, or a failure)."""
    for _ in range(400):
        lines = _provenance_lines(caplog)
        if any(r.levelno == logging.DEBUG or "could not check" in r.getMessage() for r in lines):
            return lines
        await asyncio.sleep(0.005)
    raise AssertionError(f"the check logged nothing: {[r.getMessage() for r in lines]}")


async def test_vectors_of_another_model_are_warned_of_once_and_the_server_is_ready(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Stores written with the hashing provider, served with another model of the same
    dimension: what `redstring serve` over an existing Neo4j does after a change of
    `REDSTRING_EMBEDDINGS`."""
    vectors, graph = InMemoryVectorStore(DIMENSION), InMemoryGraphStore()
    tenant = new_tenant()
    async with Redstring(
        embeddings=HashingEmbeddingProvider(DIMENSION), vectors=vectors, graph=graph
    ) as writer:
        await writer.upsert([make_entity(tenant, n, "org") for n in ("Acme", "Globex", "Hooli")])

    async def opened(settings: Settings, **options: object) -> Redstring:
        return Redstring(embeddings=OtherModel(DIMENSION), vectors=vectors, graph=graph)

    monkeypatch.setattr(app_module, "open_client", opened)
    with caplog.at_level(logging.DEBUG, logger="redstring.api"):
        async with _serving(Settings(**SETTINGS)) as http:
            ready = await http.get("/readyz")
            lines = await _logged(caplog)
    assert ready.status_code == 200
    [warning] = [r for r in lines if r.levelno == logging.WARNING]
    assert warning.getMessage().startswith("stored vectors: none of the 3 sampled (of 1 tenant)")
    assert "`redstring rekey --all-tenants --vectors`" in warning.getMessage()
    [summary] = [r for r in lines if r.levelno == logging.DEBUG]
    assert summary.getMessage().startswith("stored vectors: outdated: of 3 sampled")


@pytest.mark.parametrize(("demo", "verdict"), [(True, "current"), (False, "no_vectors")])
async def test_vectors_of_the_configured_provider_or_none_are_not_warned_of(
    caplog: pytest.LogCaptureFixture, demo: bool, verdict: str
) -> None:
    """The demo is loaded by the configured provider, so its vectors are current."""
    with caplog.at_level(logging.DEBUG, logger="redstring.api"):
        async with _serving(Settings(demo=demo, **SETTINGS)) as http:
            assert (await http.get("/readyz")).status_code == 200
            [line] = await _logged(caplog)
    assert line.levelno == logging.DEBUG
    assert line.getMessage().startswith(f"stored vectors: {verdict}: ")


async def test_a_check_that_fails_is_a_warning_and_the_server_serves_on(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def failing(services: Redstring, sample_size: int = 64) -> VectorProvenance:
        raise StoreUnavailableError("bolt://127.0.0.1:7687 refused the\nconnection")

    monkeypatch.setattr(Redstring, "check_vector_provenance", failing)
    with caplog.at_level(logging.DEBUG, logger="redstring.api"):
        async with _serving(Settings(demo=True, **SETTINGS)) as http:
            [line] = await _logged(caplog)
            assert (await http.get("/readyz")).status_code == 200
    assert line.levelno == logging.WARNING
    assert line.getMessage() == (
        "stored vectors: could not check whether they are of the configured embedding "
        "provider: StoreUnavailableError: bolt://127.0.0.1:7687 refused the connection"
    )


async def test_a_check_that_does_not_end_delays_nothing_and_is_cancelled_at_stop(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A store that never answers the check: ready at once, and stopping ends the check
    before the services close."""
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def hanging(services: Redstring, sample_size: int = 64) -> VectorProvenance:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        raise AssertionError("unreachable")

    monkeypatch.setattr(Redstring, "check_vector_provenance", hanging)
    with caplog.at_level(logging.DEBUG, logger="redstring.api"):
        async with asyncio.timeout(10), _serving(Settings(**SETTINGS)) as http:
            await asyncio.wait_for(started.wait(), 5)
            assert (await http.get("/readyz")).status_code == 200
            assert not cancelled.is_set()
    assert cancelled.is_set()
    assert _provenance_lines(caplog) == []


async def test_injected_services_are_left_to_their_embedder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An app given its services does no I/O of its own at start: the embedder checks
    with `Redstring.check_vector_provenance` when it wants."""
    checks: list[Redstring] = []

    async def counted(services: Redstring, sample_size: int = 64) -> VectorProvenance:
        checks.append(services)
        return VectorProvenance("hashing/32")

    monkeypatch.setattr(Redstring, "check_vector_provenance", counted)
    services = Redstring.in_memory(HashingEmbeddingProvider(DIMENSION))
    app = create_app(Settings(**SETTINGS), services=services)
    async with app.router.lifespan_context(app):
        await asyncio.sleep(0.05)
    assert checks == []
