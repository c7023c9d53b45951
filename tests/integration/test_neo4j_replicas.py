"""Two `redstring serve` processes over one Neo4j: read-your-writes with the bookmark.

Each process has its own driver (its own bookmark manager), by the routing
scheme, as two API replicas would. An upsert through one is retrieved through the
other at once when its bookmark is sent along, every time.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from redstring.api import bookmarks
from redstring.testing import new_tenant
from tests.integration.test_neo4j_routing import routing_uri
from tests.processes import REPO, LoggedProcess, free_loopback_port, neo4j_child_environment

ROUNDS = 100
SECRET = "the replicas' bookmark secret, 32 characters or more"

UPSERT = """mutation ($t: ID!, $name: String!) {
  upsertEntities(tenantId: $t, entities: [{name: $name, entityType: "vessel"}]) { ids }
}"""
RETRIEVE = """query ($t: ID!, $name: String!) {
  retrieve(query: $name, tenantId: $t, k: 3) { matches { entity { id name } } }
}"""


@pytest.fixture
def replicas(neo4j_auth: tuple[str, tuple[str, str]]) -> Iterator[tuple[str, str]]:
    """Two `redstring serve` over the suite's Neo4j by `neo4j://`; their base URLs."""
    env = neo4j_child_environment(
        neo4j_auth,
        uri=routing_uri(neo4j_auth[0]),
        # Replicas share the key their bookmarks are sealed with.
        REDSTRING_BOOKMARK_SECRET=SECRET,
    )
    processes, bases = [], []
    try:
        for name in ("replica-a", "replica-b"):
            port = free_loopback_port()
            argv = [sys.executable, "-m", "redstring.api", "serve", "--port", str(port)]
            processes.append(LoggedProcess(name, argv, env=env, cwd=REPO))
            bases.append(f"http://127.0.0.1:{port}")
        for process, base in zip(processes, bases, strict=True):
            process.wait_until_answering(f"{base}/readyz")
        yield bases[0], bases[1]
    finally:
        for process in processes:
            process.stop()
            print(f"--- {process.name}'s output (end):\n{process.output[-4000:]}")


def _post(
    http: httpx.Client, document: str, headers: dict[str, str] | None = None, **variables: Any
) -> httpx.Response:
    response = http.post(
        "/graphql", json={"query": document, "variables": variables}, headers=headers
    )
    assert response.status_code == 200, response.text
    assert "errors" not in response.json(), response.text
    return response


def test_an_upsert_through_one_replica_is_retrieved_through_the_other_with_its_bookmark(
    replicas: tuple[str, str],
) -> None:
    tenant = str(new_tenant())
    writer_base, reader_base = replicas
    with (
        httpx.Client(base_url=writer_base, timeout=30.0) as writer,
        httpx.Client(base_url=reader_base, timeout=30.0) as reader,
    ):
        for round_ in range(ROUNDS):
            name = f"Replica Probe {round_} {uuid.uuid4().hex[:6]}"
            written = _post(writer, UPSERT, t=tenant, name=name)
            token = written.headers[bookmarks.HEADER]
            assert written.json()["extensions"]["bookmark"] == token
            [entity_id] = written.json()["data"]["upsertEntities"]["ids"]

            found = _post(reader, RETRIEVE, {bookmarks.HEADER: token}, t=tenant, name=name)
            matches = found.json()["data"]["retrieve"]["matches"]
            assert matches, round_
            assert matches[0]["entity"] == {"id": entity_id, "name": name}, (round_, matches)


def test_the_workers_of_one_serve_without_a_secret_take_each_others_bookmarks(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> None:
    """Without REDSTRING_BOOKMARK_SECRET, `serve --workers 2` makes one key that both
    workers seal with: a bookmark is taken whichever worker a connection reaches (a
    key per worker would refuse about half)."""
    env = neo4j_child_environment(neo4j_auth)
    env.pop(bookmarks.WORKERS_KEY, None)
    port = free_loopback_port()
    argv = [sys.executable, "-m", "redstring.api", "serve", "--port", str(port), "--workers", "2"]
    process = LoggedProcess("two-workers", argv, env=env, cwd=REPO)
    base = f"http://127.0.0.1:{port}"
    tenant = str(new_tenant())
    try:
        process.wait_until_answering(f"{base}/readyz")
        with httpx.Client(base_url=base, timeout=30.0) as http:
            written = _post(http, UPSERT, t=tenant, name="Worker Probe")
            token = written.headers[bookmarks.HEADER]
        statuses = []
        for _ in range(20):  # a connection each, so both workers answer some
            with httpx.Client(base_url=base, timeout=30.0) as http:
                read = {"query": RETRIEVE, "variables": {"t": tenant, "name": "Worker Probe"}}
                answer = http.post("/graphql", json=read, headers={bookmarks.HEADER: token})
                statuses.append(answer.status_code)
        assert statuses == [200] * 20, statuses
    finally:
        process.stop()
        print(f"--- {process.name}'s output (end):\n{process.output[-4000:]}")
