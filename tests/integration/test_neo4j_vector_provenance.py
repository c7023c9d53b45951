"""The stored vectors' provenance on a real Neo4j: a sample of the label read without
scanning it, compared with the configured provider's sources, and `redstring serve`
warning at start of vectors made otherwise while it answers `/readyz`."""

from __future__ import annotations

import asyncio
import logging
import uuid

import httpx
import neo4j
import numpy as np
import pytest

from redstring import (
    EntityId,
    HashingEmbeddingProvider,
    Provenance,
    Redstring,
    TenantId,
    VectorProvenance,
    VectorRecord,
)
from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jVectorStore, connect_driver, cypher
from redstring.api.startup import log_vector_provenance
from redstring.composition.embedding_choice import DEFAULT_HASHING_DIMENSION
from redstring.testing import make_entity, new_tenant
from tests.processes import free_loopback_port, redstring_server

from .conftest import run_label

DIMENSION = 64
NAMES = ("Acme Corp", "Globex", "Initech", "Umbrella", "Hooli")


class OtherModel(HashingEmbeddingProvider):
    """Another model of the same dimension: vectors alike, another identity."""

    identity = "another model of the same dimension"  # type: ignore[assignment]


@pytest.fixture
async def stores(driver: neo4j.AsyncDriver) -> tuple[Neo4jVectorStore, Neo4jGraphStore]:
    """A vector label of the test's own, so that its sample holds its vectors alone."""
    label = run_label(f"Provenance{uuid.uuid4().hex[:6]}")
    vectors = Neo4jVectorStore(driver, DIMENSION, label=label)
    graph = Neo4jGraphStore(driver)
    await graph.ensure_schema()
    await vectors.ensure_schema()
    return vectors, graph


def _client(
    embeddings: HashingEmbeddingProvider, stores: tuple[Neo4jVectorStore, Neo4jGraphStore]
) -> Redstring:
    vectors, graph = stores
    return Redstring(embeddings=embeddings, vectors=vectors, graph=graph)


async def test_vectors_of_another_model_are_outdated_then_mixed_then_current(
    stores: tuple[Neo4jVectorStore, Neo4jGraphStore], caplog: pytest.LogCaptureFixture
) -> None:
    tenants = [new_tenant(), new_tenant()]
    writer = _client(HashingEmbeddingProvider(DIMENSION), stores)
    await writer.upsert([make_entity(t, name, "org") for t in tenants for name in NAMES])
    assert (await writer.check_vector_provenance()) == VectorProvenance(
        "hashing/64", sampled=10, current=10, tenants=2
    )

    reader = _client(OtherModel(DIMENSION), stores)
    with caplog.at_level(logging.DEBUG, logger="redstring.api"):
        await log_vector_provenance(writer)
        assert [r.levelno for r in caplog.records] == [logging.DEBUG]
        caplog.clear()
        await log_vector_provenance(reader)
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert warning.getMessage().startswith("stored vectors: none of the 10 sampled (of 2 tenants)")
    assert "`redstring rekey --all-tenants --vectors`" in warning.getMessage()

    await reader.rekey(tenants[0], vectors=True)
    mixed = await reader.check_vector_provenance()
    assert (mixed.verdict, mixed.current, mixed.differing) == (Provenance.MIXED, 5, 5)
    assert (mixed.tenants, mixed.stale_tenants) == (2, 1)
    await reader.rekey(tenants[1], vectors=True)
    assert (await reader.check_vector_provenance()).verdict is Provenance.CURRENT


async def test_an_empty_label_says_nothing(
    stores: tuple[Neo4jVectorStore, Neo4jGraphStore], caplog: pytest.LogCaptureFixture
) -> None:
    client = _client(OtherModel(DIMENSION), stores)
    assert (await client.check_vector_provenance()).verdict is Provenance.NO_VECTORS
    with caplog.at_level(logging.DEBUG, logger="redstring.api"):
        await log_vector_provenance(client)
    [line] = caplog.records
    assert line.levelno == logging.DEBUG
    assert line.getMessage().startswith("stored vectors: no_vectors: of 0 sampled")


async def test_a_store_failing_the_check_is_a_warning_not_an_error(
    stores: tuple[Neo4jVectorStore, Neo4jGraphStore],
    neo4j_auth: tuple[str, tuple[str, str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The sample is read from the server; the entities from a graph store whose server
    is gone (nothing listens on its port): the check fails, and says so in a warning."""
    vectors, _ = stores
    tenant = new_tenant()
    await _client(HashingEmbeddingProvider(DIMENSION), stores).upsert(
        [make_entity(tenant, "Acme Corp", "org")]
    )
    _, auth = neo4j_auth
    async with connect_driver(f"bolt://127.0.0.1:{free_loopback_port()}", auth) as gone:
        client = Redstring(
            embeddings=OtherModel(DIMENSION), vectors=vectors, graph=Neo4jGraphStore(gone)
        )
        with caplog.at_level(logging.DEBUG, logger="redstring.api"):
            await log_vector_provenance(client)
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert warning.getMessage().startswith(
        "stored vectors: could not check whether they are of the configured embedding "
        "provider: StoreUnavailableError: "
    )


def _operators(plan: object) -> list[tuple[str, int]]:
    """Each operator of a PROFILEd plan with the rows it produced."""
    children = plan.get("children", [])  # type: ignore[attr-defined]
    own = (plan["operatorType"], int(plan["rows"]))  # type: ignore[index]
    return [own, *(o for c in children for o in _operators(c))]


def _records(tenant: TenantId, count: int) -> list[VectorRecord]:
    rng = np.random.default_rng(3)
    return [
        VectorRecord(
            entity_id=EntityId(uuid.uuid4()),
            tenant_id=tenant,
            vector=tuple(float(x) for x in row),
            entity_type="thing",
            source=f"s{i}",
        )
        for i, row in enumerate(rng.normal(size=(count, DIMENSION)))
    ]


async def test_the_sample_seeks_the_index_and_spreads_over_a_tenant(
    stores: tuple[Neo4jVectorStore, Neo4jGraphStore], driver: neo4j.AsyncDriver
) -> None:
    """Of 3,000 vectors of one tenant, a sample of 64 reads about twice that many through
    the identity index, never the label, and not only the tenant's first 64 in id order
    (its 8 probes start at random ids, and a probe past the last tenant wraps around to
    the first)."""
    vectors, _ = stores
    # Of the lowest ids, so that nearly every probe starts past it, and wraps around.
    tenant = TenantId(uuid.UUID(int=uuid.uuid4().int >> 20))
    records = _records(tenant, 3_000)
    await vectors.upsert(records)
    sample = await vectors.sample_sources(64)
    assert len(sample) == len(set(sample)) == 64
    first = set(sorted(str(r.entity_id) for r in records)[:64])
    assert {str(s.entity_id) for s in sample} != first

    async with driver.session() as session:
        result = await session.run(
            "PROFILE " + cypher.sample_vector_sources(vectors.label),
            {
                "probes": [[str(uuid.uuid4()), str(uuid.uuid4())] for _ in range(8)],
                "each": 8,
                "limit": 64,
            },
        )
        [record] = [r async for r in result]
        summary = await result.consume()
    assert len(record["found"]) == 64
    assert summary.profile is not None
    operators = _operators(summary.profile)
    assert not [name for name, _ in operators if "Scan" in name]
    seeks = [rows for name, rows in operators if "IndexSeek" in name]
    assert sum(seeks) <= 1 + 8 + 8 * 8 + 64  # the lowest tenant, each probe's, the fill


async def test_the_sample_spans_tenants(stores: tuple[Neo4jVectorStore, Neo4jGraphStore]) -> None:
    """32 tenants of 10 vectors: a sample of 8 is 8 probes, each from a random tenant id,
    which land on several tenants (all in one tenant's gap about once in 10**8 samples),
    where the label's first 8 are of one."""
    vectors, _ = stores
    tenants = [new_tenant() for _ in range(32)]
    await vectors.upsert([r for t in tenants for r in _records(t, 10)])
    sample = await vectors.sample_sources(8)
    assert len(sample) == 8
    assert len({s.tenant_id for s in sample}) >= 2


async def _written_with_the_hashing_provider(uri: str, auth: tuple[str, str]) -> None:
    async with Redstring.neo4j(
        uri, auth, embeddings=HashingEmbeddingProvider(DEFAULT_HASHING_DIMENSION)
    ) as writer:
        await writer.upsert([make_entity(new_tenant(), name, "org") for name in NAMES])


def test_serve_over_vectors_of_another_model_warns_and_is_ready(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> None:
    """`redstring serve` on the shared server's default label, whose vectors (of this test
    and of any other client) are of other providers than one of a model name of this
    test's own: whatever its sample holds, none is current."""
    uri, (user, password) = neo4j_auth
    asyncio.run(_written_with_the_hashing_provider(uri, (user, password)))
    port = free_loopback_port()
    process = redstring_server(
        port,
        demo=False,
        graphiql="false",
        backend="neo4j",
        neo4j_uri=uri,
        neo4j_user=user,
        neo4j_password=password,
        embeddings="openai",
        embedding_model=f"provenance-check-{uuid.uuid4().hex[:8]}",
        embedding_base_url=f"http://127.0.0.1:{free_loopback_port()}/v1",  # no server there
        embedding_dimension=str(DEFAULT_HASHING_DIMENSION),
    )
    try:
        process.wait_until_answering(f"http://127.0.0.1:{port}/readyz")
        line = process.wait_for_line(r"stored vectors: .*redstring rekey --all-tenants --vectors")
        assert httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5).status_code == 200
    finally:
        process.stop()
    assert "WARNING" in line
    assert "of the configured embedding provider (openai/provenance-check-" in line
