"""End-to-end fixtures: the set-up they need, and the processes they start.

The tests here need Node packages (`e2e/node_modules`), GraphiQL's files
and Debian's Chromium, which `scripts/e2e_setup.sh` installs (`make e2e`,
`make test`). Without them a test is skipped, unless `E2E_REQUIRED=1` (set by
those make targets), where it fails: CI never passes on a missing set-up.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from redstring.api.graphiql import missing_assets
from tests.processes import E2E_DIR, LoggedProcess

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
SETUP_HINT = "run `make e2e` (or scripts/e2e_setup.sh and `make graphiql`)"


def _unavailable(what: str) -> None:
    message = f"{what}: {SETUP_HINT}"
    if os.environ.get("E2E_REQUIRED") == "1":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def node_packages() -> Path:
    """`e2e/node_modules`, installed from the lock file."""
    if shutil.which("node") is None:
        _unavailable("node is not installed")
    if not (E2E_DIR / "node_modules" / ".package-lock.json").is_file():
        _unavailable("e2e/node_modules is not installed")
    return E2E_DIR / "node_modules"


@pytest.fixture(scope="session")
def chromium(node_packages: Path) -> Path:
    if not CHROMIUM.is_file():
        _unavailable(f"{CHROMIUM} is not installed")
    return CHROMIUM


@pytest.fixture(scope="session")
def graphiql_files() -> None:
    if missing := missing_assets():
        _unavailable(f"GraphiQL's files are not installed ({missing[0].name}, ...)")


Launch = Callable[[LoggedProcess], LoggedProcess]


@pytest.fixture
def launch() -> Iterator[Launch]:
    """Registers started processes; at teardown stops them all and prints their
    output, which pytest shows when the test failed."""
    started: list[LoggedProcess] = []

    def register(process: LoggedProcess) -> LoggedProcess:
        started.append(process)
        return process

    yield register
    for process in reversed(started):
        process.stop()
    for process in started:
        print(f"----- {process.name} output -----\n{process.output}")
