"""The real thing: `python -m redstring.api serve --demo` under uvicorn on a loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.api.support import DEMO, README_QUERY

START_TIMEOUT = 30.0


def _free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def server() -> Iterator[str]:
    port = _free_loopback_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDSTRING_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "redstring.api", "serve", "--port", str(port), "--demo"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if process.poll() is not None:
                pytest.fail(
                    f"server exited early:\n{process.stdout.read() if process.stdout else ''}"
                )
            try:
                if httpx.get(f"{base}/readyz", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("server did not become ready in time")
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


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
