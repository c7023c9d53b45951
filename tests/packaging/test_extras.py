"""An install without the `neo4j` extra: choosing the Neo4j backend is refused in one line.

Each command runs in a child process in which the `neo4j` package cannot be imported
(`sys.modules["neo4j"] = None`, the import system's own way to block a module: both
`import neo4j` and `importlib.util.find_spec("neo4j")` then find nothing), as on an
install made without the extra.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.processes import REPO, child_environment, free_loopback_port

TIMEOUT = 60.0
NO_NEO4J = "import sys; sys.modules['neo4j'] = None\n"
COMMAND_LINE = NO_NEO4J + "from redstring.api.cli import main; sys.exit(main())"
REFUSAL = "bad settings: the neo4j backend needs the neo4j extra: pip install 'redstring[neo4j]'\n"
TENANT = "00000000-0000-4000-8000-000000000001"


def _without_neo4j(code: str, *arguments: str, **settings: str) -> subprocess.CompletedProcess[str]:
    env = child_environment(**{f"REDSTRING_{k.upper()}": v for k, v in settings.items()})
    return subprocess.run(
        [sys.executable, "-c", code, *arguments],
        env=env,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


NEO4J_SETTINGS = {
    "backend": "neo4j",
    "neo4j_password": "x",
    "neo4j_uri": "bolt://127.0.0.1:9",  # the discard port: nothing is ever reached
}


@pytest.mark.parametrize(
    "arguments",
    [
        ("serve", "--port", "PORT"),
        ("serve", "--port", "PORT", "--workers", "2"),
        ("load", "-", "--tenant", TENANT),
        ("rekey", "--all-tenants", "--dry-run"),
    ],
    ids=["serve", "serve-workers", "load", "rekey"],
)
def test_each_command_refuses_the_neo4j_backend_without_its_extra(
    arguments: tuple[str, ...],
) -> None:
    given = [str(free_loopback_port()) if a == "PORT" else a for a in arguments]
    done = _without_neo4j(COMMAND_LINE, *given, **NEO4J_SETTINGS)
    assert (done.returncode, done.stderr) == (2, REFUSAL)


def test_the_library_names_the_extra_when_the_neo4j_backend_is_asked_for() -> None:
    code = NO_NEO4J + (
        "from redstring import InvalidInputError, Redstring\n"
        "try:\n"
        "    Redstring.neo4j('bolt://127.0.0.1:9', ('neo4j', 'x'))\n"
        "except InvalidInputError as exc:\n"
        "    print(exc)\n"
    )
    done = _without_neo4j(code)
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        "the neo4j backend needs the neo4j extra: pip install 'redstring[neo4j]'\n",
        "",
    )


def test_importing_the_neo4j_adapters_without_the_extra_names_the_extra() -> None:
    """A `ModuleNotFoundError` still (what an import of a missing package raises, and
    what `except ImportError` catches), but one that says what to install."""
    code = NO_NEO4J + (
        "try:\n"
        "    import redstring.adapters.neo4j\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(exc.name, exc, sep='\\n')\n"
    )
    done = _without_neo4j(code)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "neo4j\nredstring.adapters.neo4j needs the neo4j driver, which the neo4j extra "
        "installs: pip install 'redstring[neo4j]'\n"
    )


def test_the_memory_backend_runs_without_the_neo4j_extra() -> None:
    done = _without_neo4j(COMMAND_LINE, "schema")
    assert done.returncode == 0, done.stderr
    assert "type Query" in done.stdout
