"""`redstring load` into a real Neo4j: the CLI on the neo4j backend, then read back through
the Neo4j adapters that `Redstring.neo4j` builds."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from redstring import HashingEmbeddingProvider, RetrievalMode, TenantId
from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jVectorStore
from redstring.api.cli import main
from redstring.composition.client import Redstring
from redstring.testing import new_tenant
from tests.ingest.support import (
    Snapshot,
    chain_lines,
    company_names,
    entity_line,
    ids_of,
    relationship_line,
    snapshot,
)

DIMENSION = 384  # the default REDSTRING_EMBEDDING_DIMENSION, so the CLI and this test agree


@pytest.fixture
def neo4j_backend(
    neo4j_auth: tuple[str, tuple[str, str]], monkeypatch: pytest.MonkeyPatch
) -> tuple[str, tuple[str, str]]:
    """`REDSTRING_*` pointing `redstring load` at the test server."""
    uri, (user, password) = neo4j_auth
    for name, value in {
        "BACKEND": "neo4j",
        "NEO4J_URI": uri,
        "NEO4J_USER": user,
        "NEO4J_PASSWORD": password,
        "EMBEDDINGS": "hashing",
        "EMBEDDING_DIMENSION": str(DIMENSION),
    }.items():
        monkeypatch.setenv(f"REDSTRING_{name}", value)
    monkeypatch.delenv("REDSTRING_NEO4J_DATABASE", raising=False)
    return neo4j_auth


async def _read(
    auth: tuple[str, tuple[str, str]], tenant: TenantId, names: list[tuple[str, str]]
) -> tuple[Snapshot, list[str]]:
    uri, (user, password) = auth
    services = Redstring.neo4j(
        uri, (user, password), embeddings=HashingEmbeddingProvider(DIMENSION)
    )
    await services.start()
    try:
        assert isinstance(services.graph, Neo4jGraphStore)
        assert isinstance(services.vectors, Neo4jVectorStore)
        state = await snapshot(services, tenant, ids_of(tenant, names))
        found = await services.retriever.retrieve(
            names[-1][0], tenant, k=1, mode=RetrievalMode.LEXICAL
        )
        return state, [m.entity.name for m in found.matches]
    finally:
        await services.aclose()


def test_load_into_neo4j_with_deferred_and_unresolved_relationships_then_again(
    neo4j_backend: tuple[str, tuple[str, str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tenant = new_tenant()
    names = company_names(40)
    lines = [
        relationship_line(names[0], names[39], "SUPPLIES"),  # waits for line 80's entity
        *chain_lines(40),
        relationship_line(names[1], ("Nobody", "person")),  # never resolvable: skipped
    ]
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    command = ["load", str(path), "--tenant", str(tenant), "--batch-size", "16"]

    assert main([*command, "--skip-invalid"]) == 0
    err = capsys.readouterr().err
    assert "loaded 40 entities and 40 relationships" in err
    assert f'{path}:81: skipped: target "Nobody" (person) not found in the file or the ' in err
    assert "(neo4j backend)" in err
    assert "kept the vector" not in err
    first, found = asyncio.run(_read(neo4j_backend, tenant, names))
    assert (len(first.entities), len(first.relationships)) == (40, 40)
    assert first.vector_ids == {e.id for e in first.entities}
    assert found == [names[-1][0]]

    assert main([*command, "--skip-invalid"]) == 0  # a second run changes nothing
    assert "40 entities kept the vector stored before" in capsys.readouterr().err
    again, _ = asyncio.run(_read(neo4j_backend, tenant, names))
    assert again == first


def test_a_bad_line_writes_nothing_of_its_batch_into_neo4j(
    neo4j_backend: tuple[str, tuple[str, str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tenant = new_tenant()
    names = company_names(6)
    lines = [entity_line(name) for name, _ in names]
    lines[4] = "{oops"  # line 5, in the second batch of 3
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["load", str(path), "--tenant", str(tenant), "--batch-size", "3"]) == 1
    assert f"{path}:5: not valid JSON" in capsys.readouterr().err
    state, _ = asyncio.run(_read(neo4j_backend, tenant, names))
    assert {e.name for e in state.entities} == {name for name, _ in names[:3]}
    assert state.vector_ids == {e.id for e in state.entities}
