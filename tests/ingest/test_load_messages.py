"""What `redstring load` tells its user: the true JSON column, a missing end as the file
named it, the relationships a load leaves waiting, what a failed load has written, a
progress bar that follows the lines written and ends in a final state, and counts in the
right number."""

from __future__ import annotations

import asyncio
import json
import math
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from rich.progress import Progress, TaskID

from redstring import (
    DimensionMismatchError,
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    Relationship,
    StoreUnavailableError,
    TenantId,
)
from redstring.api.cli import main
from redstring.api.jsonl import numbered_records
from redstring.api.load import CountedLines
from redstring.api.settings import Settings
from redstring.composition.client import Redstring
from redstring.composition.ingest import InvalidLine
from redstring.domain.vectors import StoredSource
from redstring.testing import make_entity, new_tenant
from tests.ingest.support import (
    DIMENSION,
    GraphStoreFailingAt,
    ProviderChangingDimensionAt,
    chain_lines,
    entity_line,
    relationship_line,
    services_over,
)

TENANT = TenantId(uuid.UUID("6f1c1f3e-2b0a-4d7e-9a57-1e2d3c4b5a69"))
ACME = entity_line("Acme Corp", "org", description="A maker of widgets since 1948. " * 4)
UNCLOSED = ACME[:-1]  # the line without its closing brace


def write(tmp_path: Path, lines: list[str], *, bom: bool = False) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_bytes(("\ufeff" if bom else "").encode() + ("\n".join(lines) + "\n").encode())
    return path


def load(path: Path, *options: str) -> int:
    return main(["load", str(path), "--tenant", str(TENANT), *options])


# The true JSON column ------------------------------------------------------------------


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b""])
def test_a_line_missing_its_brace_reports_the_column_after_its_last_character(
    ending: bytes,
) -> None:
    [(number, bad)] = list(numbered_records([UNCLOSED.encode() + ending], TENANT))
    assert isinstance(bad, InvalidLine)
    assert (number, bad.line_number) == (1, 1)
    assert bad.reason == f"not valid JSON (Expecting ',' delimiter, column {len(UNCLOSED) + 1})"


def test_the_column_and_line_stay_true_after_blank_lines_and_a_byte_order_mark(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = '{"kind": "entity", "name": "Bolt" "entity_type": "org"}'  # no comma: column 35
    path = write(tmp_path, [entity_line("Acme Corp"), "", "   ", broken, UNCLOSED], bom=True)
    assert load(path, "--skip-invalid") == 0
    err = capsys.readouterr().err
    assert f"{path}:4: skipped: not valid JSON (Expecting ',' delimiter, column 35)" in err
    column = len(UNCLOSED) + 1
    assert f"{path}:5: skipped: not valid JSON (Expecting ',' delimiter, column {column})" in err
    bom_first = write(tmp_path, [UNCLOSED], bom=True)  # the mark is no column of the line
    assert load(bom_first) == 1
    assert f"{bom_first}:1: not valid JSON (Expecting ',' delimiter, column {column})" in (
        capsys.readouterr().err
    )


# A missing end, as the file named it ---------------------------------------------------


def _relationship(**ends: object) -> str:
    return json.dumps({"kind": "relationship", "relationship_type": "SUPPLIES", **ends})


GHOST_ID = uuid.UUID("0a4c9d1e-6b7f-4c2d-8e3a-5f6a7b8c9d0e")
ENDS = [
    _relationship(source={"name": "Acme Corp", "type": "org"},
                  target={"name": "Nobody", "type": "person"}),
    _relationship(source={"name": "Ghost \"Co\"", "type": "org"},
                  target={"name": "Acme Corp", "type": "org"}),
    _relationship(source={"name": "Acme Corp", "type": "org"}, target_id=str(GHOST_ID)),
    _relationship(source={"name": "Nobody", "type": "person"},
                  target={"name": "Ghost", "type": "org"}),
]  # fmt: skip
# An end named by name may be an entity of the file given an id of its own: the
# reason says such an entity is named by that id; one named by id needs no such word.
BY_ID = " (an entity given an id of its own is named by that id)"
REASONS = [
    'target "Nobody" (person) not found in the file or the tenant' + BY_ID,
    'source "Ghost \\"Co\\"" (org) not found in the file or the tenant' + BY_ID,
    f"target {GHOST_ID} not found in the file or the tenant",
    'source "Nobody" (person) and target "Ghost" (org) not found in the file or the tenant' + BY_ID,
]


@pytest.mark.parametrize("skip", [False, True])
def test_a_missing_end_is_named_as_the_file_named_it(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str], skip: bool
) -> None:
    path = write(tmp_path, [entity_line("Acme Corp", "org"), *ENDS])
    assert load(path, "--batch-size", "2", *(["--skip-invalid"] if skip else [])) == (
        0 if skip else 1
    )
    err = capsys.readouterr().err
    verdict = "skipped: " if skip else ""
    for number, reason in enumerate(REASONS, start=2):
        assert f"{path}:{number}: {verdict}{reason}\n" in err
    assert "relationship end not found" not in err


# The deferred relationships a stopped or failed load leaves unwritten --------------------


def _waiting_lines(count: int) -> list[str]:
    """`count` companies, each followed by a relationship to a person named nowhere."""
    return [
        line
        for i in range(count)
        for line in (
            entity_line(f"Company {i}"),
            relationship_line((f"Company {i}", "company"), ("Nobody", "person")),
        )
    ]


def test_a_stopped_load_names_the_first_ten_relationships_it_leaves_waiting(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, [*_waiting_lines(12), "{oops"])
    assert load(path, "--batch-size", "4") == 1
    err = capsys.readouterr().err
    assert "\n12 deferred relationships from earlier batches are not written either:\n" in err
    listed = [
        f'{path}:{2 * i + 2}: "Company {i}" (company) -[RELATED_TO]-> "Nobody" (person)\n'
        for i in range(12)
    ]
    assert "".join(listed[:10]) + "and 2 more\n" in err
    assert listed[10] not in err

    path = write(tmp_path, [*_waiting_lines(1), "{oops"])
    assert load(path, "--batch-size", "2") == 1
    err = capsys.readouterr().err
    assert (
        "\n1 deferred relationship from earlier batches is not written either:\n"
        f'{path}:2: "Company 0" (company) -[RELATED_TO]-> "Nobody" (person)\nnote: '
    ) in err


def test_a_failed_load_names_the_relationships_it_leaves_waiting(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = shared.graph
    assert isinstance(graph, GraphStoreFailingAt)
    graph.fail_at = 3
    path = write(tmp_path, [*_waiting_lines(2), entity_line("Cobalt")])
    assert load(path, "--batch-size", "2") == 1
    err = capsys.readouterr().err
    assert (
        "lines 1 to 4 are written but for their 2 deferred relationships (2 batches: 2 "
        "entities, 0 relationships); run the same load again to finish it (records already "
        "written are rewritten unchanged)\n"
        "2 deferred relationships from these batches are not written (waiting for the end of "
        "the file):\n"
        f'{path}:2: "Company 0" (company) -[RELATED_TO]-> "Nobody" (person)\n'
        f'{path}:4: "Company 1" (company) -[RELATED_TO]-> "Nobody" (person)\n'
    ) in err
    assert "more" not in err


# What a failed load has written ---------------------------------------------------------


@pytest.fixture
def changing_dimension(monkeypatch: pytest.MonkeyPatch) -> ProviderChangingDimensionAt:
    """A load's provider, whose vectors change dimension from its `from_call`-th batch on."""
    provider = ProviderChangingDimensionAt(DIMENSION, from_call=1)
    services = Redstring(
        embeddings=provider, vectors=InMemoryVectorStore(DIMENSION), graph=InMemoryGraphStore()
    )

    async def opened(settings: Settings) -> Redstring:
        return services

    monkeypatch.setattr("redstring.api.command_line.open_client", opened)
    return provider


@pytest.mark.parametrize(
    ("from_call", "written"),
    [
        (1, "\nnothing is written\n"),  # the first batch's embedding, before any write
        (2, "lines 1 to 2 are written (1 batch: 2 entities, 0 relationships); run the same"),
        (3, "lines 1 to 4 are written (2 batches: 4 entities, 0 relationships); run the same"),
    ],
)
def test_a_dimension_mismatch_says_what_is_written_before_it(
    tmp_path: Path,
    changing_dimension: ProviderChangingDimensionAt,
    capsys: pytest.CaptureFixture[str],
    from_call: int,
    written: str,
) -> None:
    changing_dimension.from_call = from_call
    lines = [entity_line(f"Company {i}") for i in range(6)]
    assert load(write(tmp_path, lines), "--batch-size", "2") == 1
    err = capsys.readouterr().err
    assert f"error: an embedding has dimension {DIMENSION + 1}, expected {DIMENSION}" in err
    assert written in err
    assert "the batches before the failing one" not in err


def test_a_first_batch_failing_at_its_writes_says_some_records_may_be_written(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    """Embedded, then failing as its entities are written: no batch was reported written,
    but the writes had begun."""
    graph = shared.graph
    assert isinstance(graph, GraphStoreFailingAt)
    graph.fail_at = 1
    assert load(write(tmp_path, list(chain_lines(4)))) == 1
    err = capsys.readouterr().err
    assert err.endswith(
        "\nno batch is known to be written whole, though some records may be; run the same "
        "load again to finish it (records already written are rewritten unchanged)\n"
    )
    assert "nothing is written" not in err


def test_a_load_refused_before_it_starts_says_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Neo4j vector index of another dimension is refused as the stores start."""

    async def refused(settings: Settings) -> Redstring:
        raise DimensionMismatchError(384, DIMENSION, "the vector store for label Entity")

    monkeypatch.setattr("redstring.api.command_line.open_client", refused)
    assert load(write(tmp_path, [entity_line("Acme Corp")])) == 1
    err = capsys.readouterr().err
    assert (
        f"error: the vector store for label Entity has dimension {DIMENSION}, expected 384" in err
    )
    assert err.endswith("\nnothing is written\n")


def test_a_bad_line_in_the_first_batch_says_nothing_is_written(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [entity_line("Acme Corp"), "{oops", entity_line("Bolt")]
    assert load(write(tmp_path, lines), "--batch-size", "2") == 1
    err = capsys.readouterr().err
    assert "nor the rest of the file. Nothing is written: fix the file and run the same" in err
    assert "The batches before it" not in err

    written = [lines[0], lines[2], entity_line("Cobalt"), "{oops"]
    assert load(write(tmp_path, written), "--batch-size", "1") == 1
    err = capsys.readouterr().err
    assert "nor the rest of the file. The batches before it (lines 1 to 3) are written" in err


# Stored vectors of another provider -----------------------------------------------------


class OtherModel(HashingEmbeddingProvider):
    """Another model of the same dimension: vectors alike, another identity."""

    identity = "another model of the same dimension"  # type: ignore[assignment]


def _stores_with_vectors_of(
    provider: HashingEmbeddingProvider,
) -> tuple[InMemoryGraphStore, InMemoryVectorStore]:
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(DIMENSION)

    async def written() -> None:
        async with Redstring(embeddings=provider, vectors=vectors, graph=graph) as writer:
            await writer.upsert([make_entity(new_tenant(), n, "org") for n in ("Acme", "Hooli")])

    asyncio.run(written())
    return graph, vectors


def _loading_into(
    monkeypatch: pytest.MonkeyPatch, graph: InMemoryGraphStore, vectors: InMemoryVectorStore
) -> None:
    async def opened(settings: Settings) -> Redstring:
        return services_over(graph=graph, vectors=vectors)

    monkeypatch.setattr("redstring.api.command_line.open_client", opened)


def test_stored_vectors_of_another_provider_are_warned_of_before_the_load_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `serve` would warn of once started, a load says before it adds vectors of the
    configured provider beside them; the load goes on."""
    graph, vectors = _stores_with_vectors_of(OtherModel(DIMENSION))
    _loading_into(monkeypatch, graph, vectors)
    assert load(write(tmp_path, list(chain_lines(3)))) == 0
    err = capsys.readouterr().err
    warned = "warning: stored vectors: none of the 2 sampled (of 2 tenants) is of the configured"
    assert warned in err
    assert "`redstring rekey --all-tenants --vectors`" in err
    assert (
        f"This load embeds its entities with the configured provider (hashing/{DIMENSION})" in err
    )
    assert err.index(warned) < err.index("loading")  # before the bar, not among its lines
    assert "loaded 3 entities and 2 relationships" in err


def test_stored_vectors_of_the_configured_provider_are_not_warned_of(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    graph, vectors = _stores_with_vectors_of(HashingEmbeddingProvider(DIMENSION))
    _loading_into(monkeypatch, graph, vectors)
    assert load(write(tmp_path, list(chain_lines(3)))) == 0
    err = capsys.readouterr().err
    assert "warning" not in err
    assert "loaded 3 entities" in err


class _NoSampleToRead(InMemoryVectorStore):
    async def sample_sources(self, limit: int) -> list[StoredSource]:
        raise StoreUnavailableError("the vector store went away")


def test_a_store_that_does_not_answer_the_check_fails_the_load_before_it_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    graph, vectors = GraphStoreFailingAt(fail_at=None), _NoSampleToRead(DIMENSION)
    _loading_into(monkeypatch, graph, vectors)
    assert load(write(tmp_path, list(chain_lines(3)))) == 1
    err = capsys.readouterr().err
    assert "error: the vector store went away" in err
    assert err.endswith("\nnothing is written\n")
    assert graph.entity_calls == 0


# The progress bar's end, and plurals ---------------------------------------------------


def _bar(err: str) -> str:
    [bar] = [line for line in err.splitlines() if line.startswith("loading")]
    return bar


def _bytes_through(path: Path, line_number: int) -> int:
    return sum(len(line) for line in path.read_bytes().splitlines(keepends=True)[:line_number])


def _share(path: Path, line_number: int) -> str:
    """The share of `path` that lines 1 to `line_number` make, as the bar writes it while
    the load has not ended done: rounded down, at most 99%."""
    share = _bytes_through(path, line_number) / path.stat().st_size * 100.0
    return f" {min(math.floor(share), 99)}% "


def test_counted_lines_give_the_bytes_up_to_the_end_of_a_line() -> None:
    lines = CountedLines([b"ab\n", b"\n", b"cde\r\n", b"f"])
    assert list(lines) == [b"ab\n", b"\n", b"cde\r\n", b"f"]
    assert lines.bytes_read == 10
    assert [lines.bytes_through(n) for n in (0, 1, 1, 3, 4)] == [0, 3, 3, 9, 10]
    with pytest.raises(ValueError, match="line 2 is not among the lines read"):
        lines.bytes_through(2)  # forgotten once line 3 was asked for


def test_the_bar_advances_by_the_lines_of_the_batches_written(
    tmp_path: Path, shared: Redstring, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not by the lines read: the next batch is read while this one is written."""
    completed: list[float] = []
    update = Progress.update

    def recorded(progress: Progress, task: TaskID, **fields: Any) -> None:
        if fields.get("completed") is not None:
            completed.append(fields["completed"])
        update(progress, task, **fields)

    monkeypatch.setattr(Progress, "update", recorded)
    path = write(tmp_path, ["", *chain_lines(10), ""])  # lines 2 to 20 hold records
    assert load(path, "--batch-size", "4") == 0
    # Batches end at lines 5, 9, 13, 17 and 20; the last redraw shows the whole file.
    ends = [5, 9, 13, 17, 20]
    assert completed == [*(_bytes_through(path, n) for n in ends), path.stat().st_size]


def test_a_load_stopped_by_a_bad_line_ends_its_bar_stopped_with_what_was_written(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [entity_line("Acme Corp"), entity_line("Bolt"), "{oops"]
    path = write(tmp_path, lines)
    assert load(path, "--batch-size", "1") == 1
    err = capsys.readouterr().err
    bar = _bar(err)
    assert _share(path, 2) in bar  # the lines written, not the bad line read after them
    assert "2 records" in bar
    assert bar.endswith("stopped at the batch from line 3")
    assert "ETA" not in bar
    assert "not loaded: 1 bad line;" in err


def test_a_stopped_bar_names_the_first_line_of_the_batch_not_written_as_such(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bad line is line 3, in the batch of lines 1 to 5: `stopped at line 1` read as
    though line 1 were bad."""
    lines = [entity_line("Acme Corp"), entity_line("Bolt"), "{oops", *ENDS[:2]]
    path = write(tmp_path, lines)
    assert load(path, "--batch-size", "5") == 1
    err = capsys.readouterr().err
    assert f"{path}:3: not valid JSON" in err
    assert _bar(err).endswith("stopped at the batch from line 1")


def test_a_load_that_fails_or_is_interrupted_ends_its_bar_so(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = shared.graph
    assert isinstance(graph, GraphStoreFailingAt)
    graph.fail_at = 2
    path = write(tmp_path, [entity_line("Acme Corp"), entity_line("Bolt")])
    assert load(path, "--batch-size", "1") == 1
    err = capsys.readouterr().err
    bar = _bar(err)
    assert _share(path, 1) in bar  # not line 2, read before the failure
    assert "1 record " in bar
    assert bar.endswith("failed")
    assert "line 1 is written (1 batch: 1 entity, 0 relationships)" in err


@pytest.mark.usefixtures("python_sigint")
def test_ctrl_c_ends_the_bar_interrupted(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = shared.graph
    assert isinstance(graph, GraphStoreFailingAt)
    graph.failure = KeyboardInterrupt
    graph.fail_at = 3
    path = write(tmp_path, list(chain_lines(20)))
    assert load(path, "--batch-size", "6") == 130
    err = capsys.readouterr().err
    bar = _bar(err)
    assert _share(path, 12) in bar  # two batches of 6 lines written
    assert bar.endswith("interrupted")
    assert "ETA" not in bar


def test_a_finished_load_ends_its_bar_done_and_counts_in_the_right_number(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [entity_line("Acme Corp"), "{oops", *ENDS[:1]]
    assert load(write(tmp_path, lines), "--skip-invalid") == 0
    err = capsys.readouterr().err
    bar = _bar(err)
    assert " 100% " in bar
    assert "1 record " in bar
    assert bar.endswith("done")
    assert "loaded 1 entity and 0 relationships into tenant" in err
    assert "; 2 lines skipped" in err
    assert "1 relationship line waited for the end of the file" in err

    assert load(write(tmp_path, [*list(chain_lines(2)), "{oops"]), "--batch-size", "3") == 1
    err = capsys.readouterr().err
    assert "loaded 2 entities and 1 relationship into tenant" in err
    assert "; 0 lines skipped" in err


def test_an_empty_file_ends_its_bar_at_100(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    assert load(path) == 0
    bar = _bar(capsys.readouterr().err)
    assert " 100% " in bar
    assert bar.endswith("done")


@pytest.mark.parametrize(
    ("bad_line", "shown"),
    [("{", " 99% "), (UNCLOSED, " 66% ")],  # near the end: not 100%; at 66.7%: not 67%
)
def test_a_stopped_load_shows_its_share_written_rounded_down(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str], bad_line: str, shown: str
) -> None:
    path = write(tmp_path, [ACME, ACME.replace("Acme Corp", "Bolt Inc"), bad_line])
    written = _bytes_through(path, 2) / path.stat().st_size * 100.0
    assert round(written) == math.floor(written) + 1  # rounding would show one more
    assert load(path, "--batch-size", "1") == 1
    bar = _bar(capsys.readouterr().err)
    assert shown in bar
    assert "100%" not in bar
    assert bar.endswith("stopped at the batch from line 3")


def test_a_load_failing_after_its_last_batch_does_not_show_100(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every line's batch is written, but not the relationship that waited for the end."""
    upsert_relationships = shared.graph.upsert_relationships
    calls: list[object] = []

    async def gone_after_one(relationships: Sequence[Relationship]) -> None:
        calls.append(relationships)
        if len(calls) > 1:  # the first, its line's own batch, finds an end missing
            raise StoreUnavailableError("the graph store went away")
        await upsert_relationships(relationships)

    waiting = relationship_line(("Acme Corp", "company"), ("Bolt Inc", "company"))
    path = write(tmp_path, [waiting, entity_line("Acme Corp"), entity_line("Bolt Inc")])
    shared.graph.upsert_relationships = gone_after_one  # type: ignore[method-assign]
    assert load(path, "--batch-size", "1") == 1
    assert len(calls) == 2
    err = capsys.readouterr().err
    bar = _bar(err)
    assert " 99% " in bar
    assert "100%" not in bar
    assert bar.endswith("failed")
    assert "1 deferred relationship from these batches is not written" in err

    shared.graph.upsert_relationships = upsert_relationships  # type: ignore[method-assign]
    assert load(path, "--batch-size", "1") == 0
    bar = _bar(capsys.readouterr().err)
    assert " 100% " in bar
    assert bar.endswith("done")


def test_one_unresolved_relationship_is_counted_in_the_singular(
    tmp_path: Path, shared: Redstring, capsys: pytest.CaptureFixture[str]
) -> None:
    assert load(write(tmp_path, [entity_line("Acme Corp", "org"), ENDS[0]])) == 1
    err = capsys.readouterr().err
    assert "not loaded: 1 relationship line names an entity" in err
    assert _bar(err).endswith("done, 1 not loaded")
