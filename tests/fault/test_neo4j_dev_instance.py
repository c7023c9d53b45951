"""The persistent dev Neo4j of `make serve-neo4j` (`neo4j_server.py start --persistent`)
comes back after `stop --keep` and after SIGKILL on the same port, with the same
password and data, and the demo loads onto it again without changing anything.

The instance is this test's own (`devtest`), never a developer's `dev` nor the shared
server of `make test`; it is deleted at the end whatever happens.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import time
from collections.abc import Iterator

import neo4j
import pytest

from redstring import HashingEmbeddingProvider
from redstring.api.demo import load_demo
from redstring.composition.client import Redstring
from tests.fault.test_neo4j_restart import neo4j_script
from tests.processes import REPO

pytestmark = pytest.mark.neo4j

INSTANCE = "devtest"
HOME = REPO / ".cache" / "neo4j" / INSTANCE
DIMENSION = 384
GONE_WITHIN_S = 30.0


def connection() -> dict[str, str]:
    """The instance's env file, as `KEY=value` pairs."""
    return dict(line.split("=", 1) for line in (HOME / "env").read_text().splitlines())


def server_pid() -> int:
    pid: int = json.loads((HOME / "server.json").read_text())["pid"]
    return pid


def counts(env: dict[str, str]) -> tuple[int, int]:
    """Nodes and relationships in the whole database."""
    auth = (env["NEO4J_USER"], env["NEO4J_PASSWORD"])
    with neo4j.GraphDatabase.driver(env["NEO4J_URI"], auth=auth) as driver:
        nodes = driver.execute_query("MATCH (n) RETURN count(n) AS c").records[0]["c"]
        edges = driver.execute_query("MATCH ()-[r]->() RETURN count(r) AS c").records[0]["c"]
    return int(nodes), int(edges)


def load_the_demo(env: dict[str, str]) -> int:
    """The demo dataset written as `redstring serve --demo` writes it at start-up."""

    async def run() -> int:
        async with Redstring.neo4j(
            env["REDSTRING_NEO4J_URI"],
            (env["REDSTRING_NEO4J_USER"], env["REDSTRING_NEO4J_PASSWORD"]),
            embeddings=HashingEmbeddingProvider(DIMENSION),
        ) as client:
            return await load_demo(client)

    return asyncio.run(run())


def kill_hard(pid: int) -> None:
    """SIGKILL the server (no shutdown at all) and wait until it is gone."""
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + GONE_WITHIN_S
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    pytest.fail(f"Neo4j (pid {pid}) outlived SIGKILL by {GONE_WITHIN_S} s")


@pytest.fixture
def dev_instance() -> Iterator[None]:
    neo4j_script("stop", instance=INSTANCE)  # the leftovers of an interrupted run, if any
    try:
        yield
    finally:
        neo4j_script("stop", instance=INSTANCE)


def test_the_dev_instance_keeps_port_password_and_data(
    dev_instance: None, caplog: pytest.LogCaptureFixture
) -> None:
    neo4j_script("start", "--persistent", instance=INSTANCE)
    first = connection()
    assert first["REDSTRING_BACKEND"] == "neo4j"
    assert first["REDSTRING_NEO4J_URI"] == first["NEO4J_URI"]
    assert first["REDSTRING_NEO4J_PASSWORD"] == first["NEO4J_PASSWORD"]
    with caplog.at_level(logging.DEBUG, logger="neo4j.notifications"):
        assert load_the_demo(first) > 0  # on an empty database: warm-up, schema, writes
    # Neither "already exists" (INFORMATION) nor "property key does not exist" (WARNING,
    # UNRECOGNIZED: the warm-up's reads before any data) reaches the log.
    notices = [r.getMessage()[:160] for r in caplog.records if r.name == "neo4j.notifications"]
    assert notices == []
    loaded = counts(first)
    assert loaded[0] > 0
    assert loaded[1] > 0

    kill_hard(server_pid())  # a crash: no shutdown, no `stop`
    neo4j_script("start", instance=INSTANCE)  # the flag is remembered
    assert connection() == first
    assert counts(first) == loaded

    load_the_demo(first)  # `serve --demo` at the next start: nothing new
    assert counts(first) == loaded

    neo4j_script("stop", "--keep", instance=INSTANCE)
    neo4j_script("start", instance=INSTANCE)
    assert connection() == first
    assert counts(first) == loaded
