"""The real thing: `python -m redstring.api serve --demo` under uvicorn on a loopback port."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator

import httpx
import pytest

from tests.api.support import DEMO, README_QUERY
from tests.processes import (
    REPO,
    STOP_TIMEOUT,
    LoggedProcess,
    child_environment,
    free_loopback_port,
    redstring_server,
)


@pytest.fixture
def server() -> Iterator[str]:
    port = free_loopback_port()
    process = redstring_server(port)
    try:
        base = f"http://127.0.0.1:{port}"
        process.wait_until_answering(f"{base}/readyz")
        yield base
    finally:
        process.stop()


def test_served_over_real_http(server: str) -> None:
    with httpx.Client(base_url=server, timeout=10.0) as http:
        assert http.get("/healthz").json() == {"status": "ok", "auth": "none"}
        response = http.post(
            "/graphql", json={"query": README_QUERY, "variables": {"tenant": DEMO}}
        )
        assert response.status_code == 200
        matches = response.json()["data"]["retrieve"]["matches"]
        assert matches[0]["entity"]["name"] == "Acme Corp"
        assert matches[0]["entity"]["relationships"]
        graphiql = http.get("/graphql", headers={"accept": "text/html"})
        assert graphiql.status_code == 200
        assert "graphiql" in graphiql.text.lower()
        # HEAD is GET without its body, on /graphql as on every path that serves GET.
        head = http.head("/graphql", headers={"accept": "text/html"})
        assert head.status_code == 200
        assert head.headers["content-type"] == graphiql.headers["content-type"]
        assert head.headers["content-length"] == graphiql.headers["content-length"]


@pytest.mark.parametrize(
    ("stop", "workers"),
    [(signal.SIGTERM, "1"), (signal.SIGINT, "1"), (signal.SIGTERM, "2")],
    ids=["sigterm", "sigint", "sigterm-2-workers"],
)
def test_serve_stopped_by_a_signal_exits_with_status_0(stop: signal.Signals, workers: str) -> None:
    """docs/api.md: 0 once stopped by Ctrl-C or SIGTERM. uvicorn raises a signal again
    once it has shut down for it: one worker ended by SIGTERM's default action (-15)."""
    port = free_loopback_port()
    process = redstring_server(port, demo=False, graphiql="false", workers=workers)
    try:
        process.wait_until_answering(f"http://127.0.0.1:{port}/readyz")
        process.send_signal(stop)
        status = process.wait(timeout=STOP_TIMEOUT)
    finally:
        process.stop()
    assert status == 0, process.output
    assert "Application shutdown complete" in process.output


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_serve_stopped_while_it_imports_exits_with_status_0(stop: signal.Signals) -> None:
    """SIGTERM or Ctrl-C before the server has set anything up, while `serve` imports
    what it needs (numpy imported, a second of imports to come): as stopped, not killed
    by the signal (-15) nor ended by a traceback (130). Python reports each import as it
    ends (`PYTHONPROFILEIMPORTTIME`); before any code of redstring's runs (the
    interpreter's start) nothing can take the signal, so the test waits for numpy's."""
    port = free_loopback_port()
    process = redstring_server(
        port, demo=False, graphiql="false", environment={"PYTHONPROFILEIMPORTTIME": "1"}
    )
    try:
        process.wait_for_line(r"^import time:.*\|\s*numpy$")
        process.send_signal(stop)
        status = process.wait(timeout=STOP_TIMEOUT)
    finally:
        process.stop()
    assert status == 0, f"status {status}; the end of its output:\n{process.output[-2000:]}"
    assert "Application startup" not in process.output
    assert "Traceback" not in process.output


def test_another_command_interrupted_while_it_imports_exits_130_without_a_traceback() -> None:
    """Ctrl-C during `redstring schema`'s imports, before any command handles it."""
    process = LoggedProcess(
        "redstring",
        [sys.executable, "-m", "redstring.api", "schema"],
        env=child_environment(PYTHONPROFILEIMPORTTIME="1"),
        cwd=REPO,
    )
    try:
        # An early import of the command line's (`pydantic`, about 0.8 s of imports before
        # its end). Where in an import the signal lands matters no more
        # (tests/unit/test_termination.py): a `KeyboardInterrupt` raised there could be
        # dropped, and the command ran to its end with status 0.
        process.wait_for_line(r"^import time:.*\|\s*pydantic$")
        process.send_signal(signal.SIGINT)
        status = process.wait(timeout=STOP_TIMEOUT)
    finally:
        process.stop()
    assert status == 130, f"status {status}; the end of its output:\n{process.output[-2000:]}"
    assert "Traceback" not in process.output
    assert process.output.rstrip().endswith("interrupted")
