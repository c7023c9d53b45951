"""Retriever and build_graph end to end over the Neo4j adapters, and an unreachable server."""

from __future__ import annotations

import socket
import time

import neo4j
import pytest

from redstring import HashingEmbeddingProvider, RetrievalMode, Retriever, build_graph
from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jSettings, Neo4jVectorStore
from redstring.domain.errors import InvalidInputError, StoreUnavailableError
from redstring.domain.lexical import EXACT_PROPERTY
from redstring.testing import make_entity, make_relationship, new_tenant

from .conftest import run_label

LABEL, DIMENSION = run_label("RetrievalVector128"), 128


async def test_hybrid_retrieval_over_neo4j(driver: neo4j.AsyncDriver) -> None:
    graph = Neo4jGraphStore(driver)
    vectors = Neo4jVectorStore(driver, DIMENSION, label=LABEL)
    await graph.ensure_schema()
    await vectors.ensure_schema()
    tenant, other = new_tenant(), new_tenant()
    acme = make_entity(tenant, "Acme Corp", "org", description="Anvils and rocket skates")
    entities = [
        acme,
        make_entity(tenant, "Apex Corporation", "org"),
        make_entity(tenant, "Acme Widgets", "org"),
        make_entity(tenant, "Ada Lovelace", "person"),
        make_entity(other, "Acme Corp", "org"),
    ]
    coyote = make_entity(tenant, "Wile E. Coyote", "person")
    embeddings = HashingEmbeddingProvider(DIMENSION)
    await build_graph(
        [*entities, coyote],
        [make_relationship(coyote, acme, "CUSTOMER_OF")],
        embeddings=embeddings,
        vectors=vectors,
        graph=graph,
    )
    retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)

    for mode in (RetrievalMode.LEXICAL, RetrievalMode.HYBRID):
        result = await retriever.retrieve("ACME Corporation", tenant, k=3, mode=mode)
        assert result.matches[0].entity == acme
        assert all(m.entity.tenant_id == tenant for m in result.matches)
    people = await retriever.retrieve("Lovelace", tenant, k=5, entity_types=["person"])
    assert next(m.entity.name for m in people.matches) == "Ada Lovelace"
    assert {m.entity.entity_type for m in people.matches} == {"person"}
    edges = await graph.relationships_of([acme.id], tenant)
    assert [r.relationship_type for r in edges[acme.id]] == ["CUSTOMER_OF"]


async def test_an_alias_equal_to_the_query_ranks_first_over_neo4j(
    driver: neo4j.AsyncDriver,
) -> None:
    """The lexical score reads aliases from the store's candidates as it does in memory."""
    graph = Neo4jGraphStore(driver)
    vectors = Neo4jVectorStore(driver, DIMENSION, label=LABEL)
    await graph.ensure_schema()
    await vectors.ensure_schema()
    tenant = new_tenant()
    entities = [
        make_entity(tenant, "Corvid Lowpower MCU", "product"),
        make_entity(tenant, "Corvid Semiconductors", "org", properties={"aliases": ("Corvid",)}),
        make_entity(
            tenant, "Corvid Edge NPU", "product", properties={"brands": [7, "Corvid Edge"]}
        ),
    ]
    embeddings = HashingEmbeddingProvider(DIMENSION)
    await build_graph(entities, embeddings=embeddings, vectors=vectors, graph=graph)
    retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
    result = await retriever.retrieve("Corvid", tenant, k=3, mode=RetrievalMode.LEXICAL)
    assert result.matches[0].entity.name == "Corvid Semiconductors"
    assert result.matches[0].lexical == EXACT_PROPERTY
    # Which text matched, read from the candidates' stored properties as in memory.
    assert (result.matches[0].matched_text, result.matches[0].matched_property) == (
        "Corvid",
        "aliases",
    )
    edge = await retriever.retrieve("corvid edge", tenant, k=3, entity_types=["product"])
    assert {m.entity.name: (m.matched_text, m.matched_property) for m in edge.matches} == {
        "Corvid Edge NPU": ("Corvid Edge", "brands"),
        "Corvid Lowpower MCU": ("Corvid Lowpower MCU", None),
    }


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_unreachable_server_raises_store_unavailable_quickly() -> None:
    settings = Neo4jSettings(connection_timeout=1.0, acquisition_timeout=2.0, max_retry_time=1.0)
    uri = f"bolt://127.0.0.1:{_closed_port()}"
    started = time.monotonic()
    async with Neo4jGraphStore.connect(uri, ("neo4j", "nothing"), settings=settings) as graph:
        with pytest.raises(StoreUnavailableError):
            await graph.get_entities([make_entity(new_tenant(), "x").id], new_tenant())
    async with Neo4jVectorStore.connect(uri, ("neo4j", "x"), 8, settings=settings) as vectors:
        with pytest.raises(StoreUnavailableError):
            await vectors.search([1.0] * 8, new_tenant(), k=3)
    assert time.monotonic() - started < 30


async def test_the_largest_k_answers_as_a_k_past_the_corpus_over_neo4j(
    driver: neo4j.AsyncDriver,
) -> None:
    """`k` up to 2**63 - 1 (Neo4j's largest integer) answers as over memory, every mode,
    however many candidates each channel is asked for; a larger `k` is refused alike."""
    graph = Neo4jGraphStore(driver)
    vectors = Neo4jVectorStore(driver, DIMENSION, label=LABEL)
    await graph.ensure_schema()
    await vectors.ensure_schema()
    tenant = new_tenant()
    entities = [make_entity(tenant, name, "org") for name in ("Acme Corp", "Acme Widgets")]
    embeddings = HashingEmbeddingProvider(DIMENSION)
    await build_graph(entities, [], embeddings=embeddings, vectors=vectors, graph=graph)
    retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
    for mode in RetrievalMode:
        few = await retriever.retrieve("Acme", tenant, k=10, mode=mode)
        most = await retriever.retrieve("Acme", tenant, k=2**63 - 1, mode=mode)
        assert most.matches == few.matches, mode
    with pytest.raises(InvalidInputError, match=r"^k must be at most 2\*\*63 - 1"):
        await retriever.retrieve("Acme", tenant, k=2**63)
