"""The committed `schema.graphql` is the schema the code builds, and says what the issue says."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from redstring.api.cli import main
from redstring.api.schema.build import schema_sdl

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schema.graphql"
FEDERATION_FILE = SCHEMA_FILE.with_name("schema.federation.graphql")


def test_committed_schema_matches_the_code() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_sdl(), (
        "schema.graphql is stale: run `redstring schema > schema.graphql`"
    )


@pytest.mark.parametrize(
    "line",
    [
        "retrieve(query: String!, tenantId: ID!, k: Int! = 10, entityTypes: [String!], "
        "mode: RetrievalMode! = HYBRID): RetrievalResult!",
        "entity(tenantId: ID!, id: ID!): Entity",
        "relationships(direction: Direction! = BOTH, types: [String!], first: Int! = 50, "
        "after: String): [Relationship!]!",
        "relationshipCount(direction: Direction! = BOTH, types: [String!]): Int!",
        "cursor: String!",
        "entityTypes(tenantId: ID!, first: Int! = 100, after: String): [EntityTypeCount!]!",
        "upsertEntities(tenantId: ID!, entities: [EntityInput!]!): UpsertResult!",
        "upsertRelationships(tenantId: ID!, relationships: [RelationshipInput!]!): UpsertResult!",
        "deleteEntities(tenantId: ID!, ids: [ID!]!): DeleteResult!",
        "properties: JSON!",
        "normalizedName: String!",
        "semantic: Float",
        "confidence: Float! = 1",
        "ids: [ID!]!",
    ],
)
def test_schema_has_the_issue_signatures(line: str) -> None:
    assert line in schema_sdl()


def test_schema_command_prints_the_sdl(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    assert capsys.readouterr().out == schema_sdl()


def test_schema_federation_prints_the_subgraph_sdl(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--federation"]) == 0
    printed = capsys.readouterr().out
    assert printed == schema_sdl(federation=True)
    assert printed == FEDERATION_FILE.read_text(encoding="utf-8")


def test_schema_follows_the_federation_setting(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDSTRING_FEDERATION", "true")
    assert main(["schema"]) == 0
    assert capsys.readouterr().out == schema_sdl(federation=True)
    assert main(["schema", "--no-federation"]) == 0
    assert capsys.readouterr().out == schema_sdl()


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"redstring {importlib.metadata.version('redstring')}\n"
