"""`redstring load`: JSONL lines to entities and relationships, with line numbers in errors."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from redstring import Entity, Relationship, StoreUnavailableError, TenantId, entity_id_for
from redstring.api.cli import main
from redstring.api.jsonl import LineError, parse_line
from redstring.api.load import load_parsed, parse_lines
from redstring.composition.services import Services
from tests.api.doubles import FailingGraphStore
from tests.api.support import memory_services, services_with_graph

TENANT = TenantId(uuid.UUID("6f1c1f3e-2b0a-4d7e-9a57-1e2d3c4b5a69"))


def _lines(*records: dict[str, object]) -> list[str]:
    return [json.dumps(r) for r in records]


GOOD = _lines(
    {"kind": "entity", "name": "Acme Corp", "entity_type": "company", "properties": {"x": [1]}},
    {"kind": "relationship", "relationship_type": "WORKS_AT",
     "source": {"name": "Ada Blom", "type": "person"},
     "target": {"name": "ACME corp.", "type": "company"}, "confidence": 0.5},
    {"kind": "entity", "name": "Ada Blom", "entity_type": "person"},
)  # fmt: skip


def test_entity_line_derives_its_id() -> None:
    record = parse_line(GOOD[0], 1, TENANT)
    assert isinstance(record, Entity)
    assert record.id == entity_id_for(TENANT, "company", "Acme Corp")
    assert record.properties["x"] == (1,)


def test_relationship_ends_by_name_resolve_like_entity_ids() -> None:
    record = parse_line(GOOD[1], 2, TENANT)
    assert isinstance(record, Relationship)
    assert record.source_entity_id == entity_id_for(TENANT, "person", "Ada Blom")
    assert record.target_entity_id == entity_id_for(TENANT, "company", "Acme Corp")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "a line must be a JSON object"),
        ('{"kind": "node"}', "kind must be 'entity' or 'relationship', got 'node'"),
        ('{"kind": "entity", "name": " ", "entity_type": "x"}', "name: "),
        ('{"kind": "entity", "name": "a", "entity_type": "x", "properties": {"p": {}}}',
         "properties.p: a property value must be"),
        ('{"kind": "entity", "name": "a", "entity_type": "x", "tenant_id": "y"}', "tenant_id"),
        (f'{{"kind": "relationship", "relationship_type": "R", "target_id": "{uuid.uuid4()}"}}',
         "exactly one of source_id and source"),
        ('{"kind": "relationship", "relationship_type": "R", "source_id": "x", "target_id": "y"}',
         "source_id"),
    ],
)  # fmt: skip
def test_bad_lines_say_which_line_and_why(text: str, reason: str) -> None:
    with pytest.raises(LineError) as raised:
        parse_line(text, 7, TENANT)
    assert str(raised.value).startswith("line 7: ")
    assert reason in raised.value.reason
    assert "pydantic.dev" not in str(raised.value)


def test_blank_lines_are_skipped() -> None:
    assert parse_line("   \n", 3, TENANT) is None


async def test_load_writes_everything_and_twice_is_a_no_op(fresh_services: Services) -> None:
    parsed = parse_lines(GOOD, TENANT)
    advanced: list[int] = []
    report = await load_parsed(parsed, fresh_services, batch_size=1, advance=advanced.append)
    assert (report.entities, report.relationships, report.errors) == (2, 1, [])
    assert sum(advanced) == 3
    acme = entity_id_for(TENANT, "company", "Acme Corp")
    before = await fresh_services.graph.relationships_of([acme], TENANT)
    assert [r.confidence for r in before[acme]] == [0.5]
    await load_parsed(parse_lines(GOOD, TENANT), fresh_services)
    assert await fresh_services.graph.relationships_of([acme], TENANT) == before
    found = await fresh_services.retriever.retrieve("Acme Corp", TENANT, k=5)
    assert found.matches[0].entity.name == "Acme Corp"


async def test_a_bad_line_stops_the_load_before_anything_is_written(
    fresh_services: Services,
) -> None:
    lines = [*GOOD, "{oops", GOOD[0]]
    report = await load_parsed(parse_lines(lines, TENANT), fresh_services)
    assert [e.line_number for e in report.errors] == [4]
    assert report.entities == 0
    acme = entity_id_for(TENANT, "company", "Acme Corp")
    assert await fresh_services.graph.get_entities([acme], TENANT) == []


async def test_missing_endpoint_names_the_relationship_line(fresh_services: Services) -> None:
    lines = [
        GOOD[0],
        json.dumps(
            {"kind": "relationship", "relationship_type": "OWNS", "source": {"name": "Acme Corp",
             "type": "company"}, "target": {"name": "Nobody", "type": "person"}}
        ),
    ]  # fmt: skip
    report = await load_parsed(parse_lines(lines, TENANT), fresh_services)
    assert [e.line_number for e in report.errors] == [2]
    assert "not found" in report.errors[0].reason


def test_cli_load_reports_the_line_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDSTRING_BACKEND", "memory")
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join([GOOD[0], GOOD[2], '{"kind": "entity", "name": 5}', GOOD[1]]) + "\n")
    assert main(["load", str(path), "--tenant", str(TENANT)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:3: " in err
    assert "not loaded: 1 bad line(s)" in err


def test_cli_load_of_a_good_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDSTRING_BACKEND", "memory")
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(GOOD) + "\n")
    assert main(["load", str(path), "--tenant", str(TENANT), "--batch-size", "2"]) == 0
    err = capsys.readouterr().err
    assert "loaded 2 entities and 1 relationships" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tenant", "acme"], "--tenant must be a UUID"),
        (["--tenant", str(TENANT), "--batch-size", "0"], "--batch-size must be at least 1"),
    ],
)
def test_cli_load_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text(GOOD[0] + "\n")
    assert main(["load", str(path), *args]) == 2
    assert message in capsys.readouterr().err


def test_cli_load_of_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["load", str(tmp_path / "nope.jsonl"), "--tenant", str(TENANT)]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_cli_load_with_a_store_down_fails_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def down(settings: object) -> Services:
        base = memory_services()
        failing = FailingGraphStore(lambda: StoreUnavailableError("bolt://db:7687 refused"))
        return services_with_graph(base, failing)

    monkeypatch.setattr("redstring.api.cli.open_services", down)
    path = tmp_path / "data.jsonl"
    path.write_text(GOOD[0] + "\n")
    assert main(["load", str(path), "--tenant", str(TENANT)]) == 1
    err = capsys.readouterr().err
    assert "bolt://db:7687 refused" in err
    assert "Traceback" not in err
