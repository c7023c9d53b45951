"""`redstring load`: line numbers in the output, batches never half-written, re-runs."""

from __future__ import annotations

import asyncio
import gc
import io
import json
import os
import sys
import threading
import uuid
from pathlib import Path

import pytest
from rich.progress import Progress

from redstring import TenantId
from redstring.api.cli import _rare_collections, main
from redstring.api.load import load_jsonl
from redstring.api.settings import Backend
from redstring.composition.client import Redstring
from redstring.domain.ids import entity_id_for
from tests.ingest.support import (
    GraphStoreFailingAt,
    Snapshot,
    chain_lines,
    company_names,
    entity_line,
    ids_of,
    relationship_line,
    services_over,
    snapshot,
)

TENANT = TenantId(uuid.UUID("6f1c1f3e-2b0a-4d7e-9a57-1e2d3c4b5a69"))


def write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def load(path: Path, *options: str) -> int:
    return main(["load", str(path), "--tenant", str(TENANT), *options])


def state(services: Redstring, names: list[tuple[str, str]]) -> Snapshot:
    return asyncio.run(snapshot(services, TENANT, ids_of(TENANT, names)))


def test_a_good_file_is_loaded_with_a_summary(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, list(chain_lines(30)))
    assert load(path, "--batch-size", "7") == 0
    err = capsys.readouterr().err
    assert "loaded 30 entities and 29 relationships into tenant" in err
    assert "0 lines skipped" in err
    assert " records/s)" in err
    loaded = state(shared, company_names(30))
    assert (len(loaded.entities), len(loaded.relationships), len(loaded.vector_ids)) == (30, 29, 30)


def test_a_malformed_line_stops_before_its_batch(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = list(chain_lines(10))  # 19 lines
    lines[12] = '{"kind": "entity", "name": 5, "entity_type": "company"}'  # line 13
    path = write(tmp_path, lines)
    assert load(path, "--batch-size", "5") == 1
    err = capsys.readouterr().err
    assert f"{path}:13: name: Input should be a valid string" in err
    assert "the batch from line 11 on was not written" in err
    loaded = state(shared, company_names(10))
    # Lines 1-10 hold companies 0-5 and 4 relationships; line 11 (company 6) is not written.
    assert {e.name for e in loaded.entities} == {name for name, _ in company_names(6)}
    assert len(loaded.relationships) == 4
    assert loaded.vector_ids == {e.id for e in loaded.entities}


def test_skip_invalid_reports_each_skipped_line(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = list(chain_lines(10))
    lines[2] = "{oops"
    lines[14] = '{"kind": "gizmo"}'  # a relationship's line: no other line depends on it
    path = write(tmp_path, lines)
    assert load(path, "--batch-size", "4", "--skip-invalid") == 0
    err = capsys.readouterr().err
    assert f"{path}:3: skipped: not valid JSON" in err
    assert f"{path}:15: skipped: kind must be 'entity' or 'relationship', got 'gizmo'" in err
    assert "2 lines skipped" in err


def test_skipping_an_entity_skips_and_reports_the_relationships_that_need_it(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = list(chain_lines(5))  # line 6 is company 3; lines 7 and 9 link it
    lines[5] = '{"kind": "entity", "name": "", "entity_type": "company"}'
    path = write(tmp_path, lines)
    assert load(path, "--skip-invalid") == 0
    err = capsys.readouterr().err
    for number in (6, 7, 9):
        assert f"{path}:{number}: skipped: " in err
    assert "loaded 4 entities and 2 relationships" in err
    assert "3 lines skipped" in err


@pytest.mark.parametrize(
    "bad",
    [
        entity_line("Acme Corp", properties={"nested": {"no": 1}}),  # found invalid in the domain
        entity_line("Acme Corp", description=5),  # found invalid reading the line
        entity_line("Acme Corp", id=str(entity_id_for(TENANT, "company", "Acme Corp")), x=1),
    ],
    ids=["nested property", "description not a string", "unknown field, own id"],
)
def test_a_relationship_to_a_skipped_entity_names_the_skipped_line(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    """Not "not found in the file": the end is there, on a line skipped as invalid."""
    lines = [
        bad,
        entity_line("Ada Blom", "person"),
        relationship_line(("Ada Blom", "person"), ("Acme Corp", "company"), "WORKS_AT"),
        relationship_line(("Ada Blom", "person"), ("Nobody", "person"), "KNOWS"),
    ]
    path = write(tmp_path, lines)
    assert load(path, "--skip-invalid") == 0
    err = capsys.readouterr().err
    assert (
        f'{path}:3: skipped: target "Acme Corp" (company) is on line 1, skipped as invalid' in err
    )
    assert f'{path}:4: skipped: target "Nobody" (person) not found in the file or the tenant' in err


def test_relationship_ends_named_by_name_and_type(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    ada, acme = ("Ada Blom", "person"), ("Acme Corp", "company")
    lines = [
        relationship_line(ada, ("ACME corp.", "company"), "WORKS_AT"),  # before both entities
        entity_line("Acme Corp"),
        json.dumps(
            {"kind": "relationship", "relationship_type": "FOUNDED",
             "source_id": str(entity_id_for(TENANT, "person", "Ada Blom")),
             "target": {"name": "Acme Corp", "type": "company"}}
        ),
        entity_line("Ada Blom", "person"),
    ]  # fmt: skip
    assert load(write(tmp_path, lines), "--batch-size", "1") == 0
    loaded = state(shared, [ada, acme])
    [ada_id, acme_id] = ids_of(TENANT, [ada, acme])
    assert {
        (r.source_entity_id, r.relationship_type, r.target_entity_id) for r in loaded.relationships
    } == {(ada_id, "WORKS_AT", acme_id), (ada_id, "FOUNDED", acme_id)}
    assert "2 relationship lines waited for the end of the file" in capsys.readouterr().err


def test_an_end_that_never_appears_fails_the_load_with_its_line(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        entity_line("Acme Corp"),
        relationship_line(("Acme Corp", "company"), ("Nobody", "person")),
    ]
    path = write(tmp_path, lines)
    assert load(path) == 1
    err = capsys.readouterr().err
    assert f'{path}:2: target "Nobody" (person) not found in the file or the tenant' in err
    assert "everything else is written" in err
    assert "one loaded with an id of its own is named by source_id or target_id" in " ".join(
        err.split()
    )


def test_loading_the_same_file_again_changes_nothing(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, list(chain_lines(20)))
    assert load(path, "--batch-size", "6") == 0
    before = state(shared, company_names(20))
    assert load(path, "--batch-size", "6") == 0
    assert state(shared, company_names(20)) == before


def test_an_interrupted_load_is_finished_by_running_it_again(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, list(chain_lines(20)))
    reference = services_over()
    graph = shared.graph
    assert isinstance(graph, GraphStoreFailingAt)
    graph.fail_at = 3
    assert load(path, "--batch-size", "6") == 1
    err = capsys.readouterr().err
    assert "the graph store went away" in err
    assert "lines 1 to 12 are written (2 batches: 7 entities, 5 relationships)" in err
    assert "run the same load again to finish it" in err
    assert 0 < len(state(shared, company_names(20)).entities) < 20

    graph.fail_at = None
    assert load(path, "--batch-size", "6") == 0
    lines = path.read_text(encoding="utf-8").splitlines()
    asyncio.run(_load_reference(reference, [line.encode() for line in lines]))
    assert state(shared, company_names(20)) == state(reference, company_names(20))


async def _load_reference(services: Redstring, lines: list[bytes]) -> None:
    await load_jsonl(lines, TENANT, services)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tenant", "acme"], "--tenant must be a UUID"),
        (["--tenant", str(TENANT), "--batch-size", "0"], "--batch-size must be at least 1"),
    ],
)
def test_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    path = write(tmp_path, [entity_line("Acme Corp")])
    assert main(["load", str(path), *args]) == 2
    assert message in capsys.readouterr().err


def test_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert load(tmp_path / "nope.jsonl") == 1
    assert "cannot read" in capsys.readouterr().err


def test_an_incomplete_provider_choice_is_bad_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDSTRING_EMBEDDINGS", "openai")
    monkeypatch.delenv("REDSTRING_EMBEDDING_MODEL", raising=False)
    assert load(write(tmp_path, [entity_line("Acme Corp")])) == 2
    err = capsys.readouterr().err
    assert "bad settings: the 'openai' embedding provider needs a model" in err
    assert "Traceback" not in err


@pytest.mark.usefixtures("python_sigint")
def test_ctrl_c_says_how_to_finish_the_load(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = shared.graph
    assert isinstance(graph, GraphStoreFailingAt)
    graph.failure = KeyboardInterrupt
    graph.fail_at = 2
    path = write(tmp_path, list(chain_lines(20)))
    assert load(path, "--batch-size", "6") == 130
    err = capsys.readouterr().err
    assert "interrupted" in err
    written = "lines 1 to 6 are written (1 batch: 4 entities, 2 relationships)"
    assert f"{written}; run the same load again to finish it" in err


@pytest.mark.parametrize(("backend", "young"), [(Backend.MEMORY, 500_000), (Backend.NEO4J, 10_000)])
def test_a_load_collects_the_young_generation_rarely_then_restores(
    backend: Backend, young: int
) -> None:
    before = gc.get_threshold()
    with _rare_collections(backend):
        assert gc.get_threshold() == (young, *before[1:])
    assert gc.get_threshold() == before


def test_the_progress_bar_is_drawn_by_the_load_not_by_a_thread(
    tmp_path: Path, shared: Redstring, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rich's refresh thread contends for the GIL with the load: the bar is redrawn from
    the batch callback instead, at most every `_REDRAW_SECONDS`."""
    threads: list[threading.Thread] = []
    redraws: list[float] = []
    start = threading.Thread.start

    def started(thread: threading.Thread) -> None:
        threads.append(thread)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", started)
    refresh = Progress.refresh
    monkeypatch.setattr(Progress, "refresh", lambda p: (redraws.append(0.0), refresh(p))[1])
    clock = iter(range(1000))  # each reading 1 s after the last: every batch is due
    monkeypatch.setattr("redstring.api.cli.time.perf_counter", lambda: float(next(clock)))
    assert load(write(tmp_path, list(chain_lines(30))), "--batch-size", "7") == 0
    assert [t.name for t in threads if t.name != "redstring-ingest-read"] == []
    assert len(redraws) >= 5  # one per batch of 7 lines, and more on start and stop


async def test_the_example_file_of_docs_api_loads_whole() -> None:
    api = (Path(__file__).parents[2] / "docs" / "api.md").read_text()
    block = api.split("`redstring load` reads one JSON object per line:\n\n```json\n", 1)[1]
    lines = [line.encode() for line in block.split("```", 1)[0].splitlines()]
    tenant = TenantId(uuid.uuid4())
    services = services_over()
    report = await load_jsonl(lines, tenant, services)
    assert (report.entities, report.relationships, report.invalid) == (2, 1, 0)


def test_a_dash_loads_standard_input_from_a_pipe(
    shared: Redstring, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [*chain_lines(3), "{oops"]
    read, write_end = os.pipe()
    with os.fdopen(write_end, "wb") as pipe:
        pipe.write(("\n".join(lines) + "\n").encode())
    with os.fdopen(read, "rb") as piped:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(piped))
        assert load(Path("-"), "--skip-invalid") == 0
        assert not piped.closed  # the process's own input is read, not closed
    err = capsys.readouterr().err
    assert "<stdin>:6: skipped: not valid JSON" in err
    assert "loaded 3 entities and 2 relationships into tenant" in err
    assert " 100% " in err
    loaded = state(shared, company_names(3))
    assert (len(loaded.entities), len(loaded.relationships)) == (3, 2)


def test_bad_settings_name_a_misspelled_variable_that_may_be_their_cause(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDSTRING_EMBEDDINGS", "openai")
    monkeypatch.delenv("REDSTRING_EMBEDDING_MODEL", raising=False)
    monkeypatch.setenv("REDSTRING_EMBEDDING_MODLE", "nomic-embed-text")
    assert load(write(tmp_path, [entity_line("Acme Corp")])) == 2
    err = capsys.readouterr().err
    assert "bad settings: the 'openai' embedding provider needs a model" in err
    assert (
        "; REDSTRING_EMBEDDING_MODLE names no setting; did you mean REDSTRING_EMBEDDING_MODEL?"
        in err
    )
