"""`npm ci` for GraphiQL's files runs no package's install scripts, whoever runs it: the
options are in the folder's `.npmrc`, read by `make graphiql`, the build hook and a
hand-typed `npm ci` alike."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.processes import REPO

GRAPHIQL = REPO / "src" / "redstring" / "api" / "graphiql"


def test_npm_in_graphiqls_folder_runs_no_install_scripts_and_stays_quiet() -> None:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not found")
    names = ["ignore-scripts", "audit", "fund", "loglevel"]
    done = subprocess.run(
        [npm, "config", "get", *names],
        cwd=GRAPHIQL,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    got = dict(line.split("=", 1) for line in done.stdout.splitlines())
    assert got == {"ignore-scripts": "true", "audit": "false", "fund": "false", "loglevel": "error"}
