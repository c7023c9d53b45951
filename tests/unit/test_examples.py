"""The shipped example runs and prints what the README says it prints; `python -m
redstring` runs the command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).parents[2] / "examples" / "end_to_end.py"


def test_end_to_end_example_imports_only_redstring_and_ranks_acme_first() -> None:
    source = EXAMPLE.read_text()
    imports = {
        line.split()[1].split(".")[0]
        for line in source.splitlines()
        if line.startswith(("import ", "from "))
    }
    assert imports <= {"__future__", "asyncio", "uuid", "redstring"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, check=True, timeout=60
    )
    lines = done.stdout.splitlines()
    assert lines[0] == "query: 'Acme Corp'"
    assert lines[1].startswith("1. Acme Corp ")
    assert "semantic=" in lines[1]
    assert "lexical=1.000" in lines[1]


def test_the_readme_shows_what_the_example_prints() -> None:
    readme = (EXAMPLE.parents[1] / "README.md").read_text()
    shown = readme.split("`examples/end_to_end.py` prints:\n\n```\n", 1)[1].split("```", 1)[0]
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout == shown


def test_python_dash_m_redstring_runs_the_command_line() -> None:
    for module in ("redstring", "redstring.api"):
        done = subprocess.run(
            [sys.executable, "-m", module, "--help"],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        assert done.stdout.startswith("usage: redstring "), module
