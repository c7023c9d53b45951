"""`redstring load` waits out a Neo4j outage (`LONG_COMMAND_OUTAGE_RETRY`) unless the setting says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from redstring import StoreUnavailableError
from redstring.api.cli import EXIT_FAILED, main
from redstring.api.settings import LONG_COMMAND_OUTAGE_RETRY, Settings
from tests.processes import REPO, unanswered_neo4j_environment

TENANT = "6f1c1f3e-2b0a-4d7e-9a57-1e2d3c4b5a69"


@pytest.mark.parametrize(
    ("env", "waits"), [(None, LONG_COMMAND_OUTAGE_RETRY), ("0", 0.0), ("7.5", 7.5)]
)
def test_a_load_waits_out_an_outage_unless_the_setting_says_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: str | None, waits: float
) -> None:
    opened: list[float] = []

    async def open_client(settings: Settings) -> None:
        opened.append(settings.neo4j_outage_retry)
        raise StoreUnavailableError("Neo4j is unavailable: stopped here")

    monkeypatch.setattr("redstring.api.command_line.open_client", open_client)
    if env is None:
        monkeypatch.delenv("REDSTRING_NEO4J_OUTAGE_RETRY", raising=False)
    else:
        monkeypatch.setenv("REDSTRING_NEO4J_OUTAGE_RETRY", env)
    path = tmp_path / "data.jsonl"
    path.write_text('{"kind": "entity", "name": "Acme Corp", "entity_type": "company"}\n')
    tenant = "6f1c1f3e-2b0a-4d7e-9a57-1e2d3c4b5a69"
    assert main(["load", str(path), "--tenant", tenant]) == EXIT_FAILED
    assert opened == [waits]
    # A server keeps answering SERVICE_UNAVAILABLE at once by default.
    assert Settings().neo4j_outage_retry == (0.0 if env is None else waits)


def test_a_store_error_of_several_lines_is_said_in_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The driver's message of a connection refused spans two lines."""

    async def open_client(settings: Settings) -> None:
        raise StoreUnavailableError("Neo4j is unavailable: refused\n  by 127.0.0.1:1")

    monkeypatch.setattr("redstring.api.command_line.open_client", open_client)
    path = tmp_path / "data.jsonl"
    path.write_text('{"kind": "entity", "name": "Acme Corp", "entity_type": "company"}\n')
    tenant = "6f1c1f3e-2b0a-4d7e-9a57-1e2d3c4b5a69"
    assert main(["load", str(path), "--tenant", tenant]) == EXIT_FAILED
    assert capsys.readouterr().err.splitlines() == [
        "error: Neo4j is unavailable: refused by 127.0.0.1:1",
        "nothing is written",
    ]


def _load_where_nothing_listens(path: Path, outage_retry: str) -> tuple[int, list[str]]:
    """`redstring load` of `path` on Neo4j at a loopback port where nothing listens (a
    socket's, bound and closed at once): its status, and its standard error's lines but
    for the hashing provider's warning."""
    env = unanswered_neo4j_environment(
        REDSTRING_EMBEDDINGS="hashing",
        REDSTRING_NEO4J_OUTAGE_RETRY=outage_retry,
    )
    argv = [sys.executable, "-m", "redstring.api", "load", str(path), "--tenant", TENANT]
    done = subprocess.run(argv, env=env, cwd=REPO, capture_output=True, text=True, timeout=60)
    said = [line for line in done.stderr.splitlines() if "hashing provider" not in line]
    return done.returncode, said


UNREACHABLE = "Neo4j is unavailable: Couldn't connect to 127.0.0.1:"


def test_a_load_that_cannot_reach_neo4j_at_its_start_waits_as_its_writes_would(
    tmp_path: Path,
) -> None:
    """Within the outage retry it says that it waits and how long at most, then stops as
    before. It stopped at once whatever the setting."""
    pytest.importorskip("neo4j")
    path = tmp_path / "data.jsonl"
    path.write_text('{"kind": "entity", "name": "Acme Corp", "entity_type": "company"}\n')
    status, said = _load_where_nothing_listens(path, "0.5")
    assert status == EXIT_FAILED, said
    waiting, error, nothing = said
    assert waiting.startswith(UNREACHABLE), said
    assert waiting.endswith("; waiting for it to answer, for up to 0.5 s (the outage retry time)")
    assert error.startswith(f"error: {UNREACHABLE}"), said
    assert nothing == "nothing is written"


def test_a_load_without_an_outage_retry_stops_at_once_in_one_line(tmp_path: Path) -> None:
    pytest.importorskip("neo4j")
    path = tmp_path / "data.jsonl"
    path.write_text('{"kind": "entity", "name": "Acme Corp", "entity_type": "company"}\n')
    status, said = _load_where_nothing_listens(path, "0")
    assert status == EXIT_FAILED, said
    error, nothing = said
    assert error.startswith(f"error: {UNREACHABLE}"), said
    assert nothing == "nothing is written"
