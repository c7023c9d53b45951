"""`open_client` on a real Neo4j: what it warns of in a choice it accepts, and the
warm-up before the first request."""

from __future__ import annotations

import logging

import httpx
import pytest

from redstring import HashingEmbeddingProvider
from redstring.api import create_app
from redstring.api.settings import Settings
from redstring.api.startup import open_client
from redstring.composition.client import Redstring
from redstring.composition.embedding_choice import DEFAULT_HASHING_DIMENSION

# The dimension the shared server's vector index has: the default one.
DIMENSION = DEFAULT_HASHING_DIMENSION


async def test_the_hashing_provider_on_neo4j_is_logged_as_a_warning(
    neo4j_auth: tuple[str, tuple[str, str]], caplog: pytest.LogCaptureFixture
) -> None:
    uri, (user, password) = neo4j_auth
    settings = Settings(
        backend="neo4j",
        neo4j_uri=uri,
        neo4j_user=user,
        neo4j_password=password,
        embeddings="hashing",
    )
    with caplog.at_level(logging.WARNING, logger="redstring.api"):
        services = await open_client(settings)
        await services.aclose()
    [record] = [r for r in caplog.records if "hashing provider with Neo4j" in r.getMessage()]
    assert record.levelno == logging.WARNING


async def test_the_reads_are_warmed_up_before_the_first_readiness_check(
    neo4j_auth: tuple[str, tuple[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Neo4j plans a statement on its first run (about a second for the vector search
    on a server just started, past the 2 s readiness deadline on a slow one): the
    server runs each read once while it starts, before it takes requests."""
    warmed: list[Redstring] = []
    warm_up = Redstring.warm_up

    async def spied(services: Redstring) -> None:
        warmed.append(services)
        await warm_up(services)

    monkeypatch.setattr(Redstring, "warm_up", spied)
    uri, (user, password) = neo4j_auth
    settings = Settings(
        backend="neo4j", neo4j_uri=uri, neo4j_user=user, neo4j_password=password, graphiql=False
    )
    app = create_app(settings)
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client,
    ):
        assert len(warmed) == 1
        ready = await client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready"}


async def test_start_up_logs_no_neo4j_notification_below_warning(
    neo4j_auth: tuple[str, tuple[str, str]], caplog: pytest.LogCaptureFixture
) -> None:
    """The second start finds every index and constraint in place: Neo4j says so in an
    INFORMATION notification per statement (about 1 KB each), which the driver would
    log; the driver asks the server for warnings and worse only."""
    uri, (user, password) = neo4j_auth
    with caplog.at_level(logging.DEBUG, logger="neo4j"):
        for _ in range(2):
            async with Redstring.neo4j(
                uri, (user, password), embeddings=HashingEmbeddingProvider(DIMENSION)
            ):
                pass
    notified = [r for r in caplog.records if r.name.startswith("neo4j.notifications")]
    assert [r.getMessage()[:200] for r in notified if r.levelno < logging.WARNING] == []
