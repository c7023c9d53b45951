"""`redstring load` waits out a Neo4j outage (`LONG_COMMAND_OUTAGE_RETRY`) unless the setting says."""

from __future__ import annotations

from pathlib import Path

import pytest

from redstring import StoreUnavailableError
from redstring.api.cli import EXIT_FAILED, main
from redstring.api.settings import LONG_COMMAND_OUTAGE_RETRY, Settings


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
