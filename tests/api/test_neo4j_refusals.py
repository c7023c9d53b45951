"""Commands run against the shared Neo4j with a password it refuses or a database it
does not have: `serve` says `cannot start: ...` in one line, `load` and `rekey` stop
with `error: ...`, each naming the settings to check, never the password, and exit
with status 1 (docs/api.md, "Command line").

They were a Neo4j driver's traceback (`AuthError`, `DatabaseNotFound`) of some 70 lines.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.processes import REPO, LoggedProcess, child_environment, free_loopback_port

EXIT_TIMEOUT = 90.0
WRONG_PASSWORD = "not-the-password-3141"
CHECK_CREDENTIALS = "check REDSTRING_NEO4J_USER and REDSTRING_NEO4J_PASSWORD"
CHECK_DATABASE = "check REDSTRING_NEO4J_DATABASE"

pytestmark = pytest.mark.skipif("NEO4J_URI" not in os.environ, reason="needs the test Neo4j")


def _settings(**refused: str) -> dict[str, str]:
    given = {
        "REDSTRING_BACKEND": "neo4j",
        "REDSTRING_NEO4J_URI": os.environ.get("NEO4J_URI", ""),
        "REDSTRING_NEO4J_USER": os.environ.get("NEO4J_USER", "neo4j"),
        "REDSTRING_NEO4J_PASSWORD": os.environ.get("NEO4J_PASSWORD", ""),
        "REDSTRING_GRAPHIQL": "false",
    }
    return child_environment(**{**given, **refused})


CASES = {
    "password": ({"REDSTRING_NEO4J_PASSWORD": WRONG_PASSWORD}, CHECK_CREDENTIALS),
    "database": ({"REDSTRING_NEO4J_DATABASE": "nosuchdatabase"}, CHECK_DATABASE),
}


def _check(output: str, expected: str, prefix: str) -> None:
    assert "Traceback" not in output, output
    assert WRONG_PASSWORD not in output, output
    said = [line for line in output.splitlines() if prefix in line]
    assert len(said) == 1, output
    assert said[0].rstrip().endswith(expected), output


@pytest.mark.parametrize("case", sorted(CASES))
def test_serve_refused_at_start_is_one_line_and_status_1(case: str) -> None:
    refused, expected = CASES[case]
    argv = [sys.executable, "-m", "redstring", "serve", "--port", str(free_loopback_port())]
    process = LoggedProcess("redstring", argv, env=_settings(**refused), cwd=REPO)
    try:
        status = process.wait(timeout=EXIT_TIMEOUT)
    finally:
        process.stop()
    assert status == 1, process.output
    _check(process.output, expected, "ERROR redstring.api: cannot start: Neo4j ")


def _command(*arguments: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "redstring", *arguments],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=EXIT_TIMEOUT,
        check=False,
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_load_refused_stops_with_an_error_line(case: str, tmp_path: Path) -> None:
    refused, expected = CASES[case]
    data = tmp_path / "one.jsonl"
    data.write_text('{"name": "Nordic Iron"}\n', encoding="utf-8")
    done = _command("load", str(data), "--tenant", str(uuid.uuid4()), env=_settings(**refused))
    assert done.returncode == 1, done.stderr
    _check(done.stdout + done.stderr, expected, "error: Neo4j ")


@pytest.mark.parametrize("case", sorted(CASES))
def test_rekey_refused_stops_with_an_error_line(case: str) -> None:
    refused, expected = CASES[case]
    done = _command("rekey", "--tenant", str(uuid.uuid4()), env=_settings(**refused))
    assert done.returncode == 1, done.stderr
    _check(done.stdout + done.stderr, expected, "error: Neo4j ")
