"""Neo4j stopped and started again under a running `redstring serve`.

The Neo4j is this module's own (`scripts/neo4j_server.py --name fault`, never the shared
server of `make test`), started afresh once for both tests: stopped with `stop --keep`,
it comes back on the same port with the same password and data. The contract (issue 15): readiness false within 1 s, a
coded `SERVICE_UNAVAILABLE` in under 100 ms, recovery without restarting redstring, and
nothing lost. A restart between two readiness checks, which no check sees, is warmed up
before ready all the same.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.processes import REPO, LoggedProcess, child_environment, free_loopback_port

pytestmark = pytest.mark.neo4j

SCRIPT = REPO / "scripts" / "neo4j_server.py"
INSTANCE = "fault"
# Neo4j starts in 10-15 s on an idle machine, several times that on a busy one.
SCRIPT_TIMEOUT_S = 300.0
READY_AFTER_RESTART_S = 60.0
NOT_READY_WITHIN_S = 1.0
CODED_ERROR_WITHIN_S = 0.1
TRIES = 5
ENTITIES = 20
SHARED_SERVER_SETTINGS = ("NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD")


def neo4j_script(*args: str, instance: str = INSTANCE) -> None:
    """`scripts/neo4j_server.py --name INSTANCE ARGS`, away from the connection settings
    of the environment (which name the shared server); `NEO4J_JAVA_HOME` is kept."""
    env = {k: v for k, v in os.environ.items() if k not in SHARED_SERVER_SETTINGS}
    argv = [sys.executable, str(SCRIPT), "--name", instance, *args]
    done = subprocess.run(
        argv, env=env, cwd=REPO, capture_output=True, text=True, timeout=SCRIPT_TIMEOUT_S
    )
    if done.returncode != 0:
        pytest.fail(f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")


@pytest.fixture(scope="module")
def _own_instance() -> Iterator[None]:
    """The module's Neo4j, started afresh once for its tests; deleted whatever happens.
    One start less than a server a test, and the second test's `redstring serve` warms
    up against a server that has planned its statements already (half a minute each,
    on a cold server of a busy 2-core machine)."""
    neo4j_script("stop")  # the leftovers of an interrupted run, if any
    try:
        yield
    finally:
        neo4j_script("stop")


@pytest.fixture
def own_neo4j(_own_instance: None) -> dict[str, str]:
    """The module's Neo4j, running (started, or resumed where a test that failed left it
    stopped by `stop --keep`): its connection settings."""
    neo4j_script("start")
    env_file = REPO / ".cache" / "neo4j" / INSTANCE / "env"
    return dict(line.split("=", 1) for line in env_file.read_text().splitlines())


@contextlib.contextmanager
def serving(own_neo4j: dict[str, str], **settings: str) -> Iterator[tuple[str, LoggedProcess]]:
    """`redstring serve` on a loopback port over `own_neo4j`, with `settings` (more
    `REDSTRING_*` variables): its base URL, once it answers, and its process."""
    port = free_loopback_port()
    env = child_environment(
        REDSTRING_BACKEND="neo4j",
        REDSTRING_NEO4J_URI=own_neo4j["NEO4J_URI"],
        REDSTRING_NEO4J_USER=own_neo4j["NEO4J_USER"],
        REDSTRING_NEO4J_PASSWORD=own_neo4j["NEO4J_PASSWORD"],
        **settings,
    )
    argv = [sys.executable, "-m", "redstring.api", "serve", "--port", str(port)]
    process = LoggedProcess("redstring", argv, env=env, cwd=REPO)
    base = f"http://127.0.0.1:{port}"
    try:
        process.wait_until_answering(f"{base}/readyz")
        yield base, process
    finally:
        process.stop()
        print(f"--- redstring's output (end):\n{process.output[-8000:]}")  # shown on failure


@pytest.fixture
def server(own_neo4j: dict[str, str]) -> Iterator[str]:
    """`redstring serve` on a loopback port over `own_neo4j`; its base URL."""
    with serving(own_neo4j) as (base, _):
        yield base


UPSERT_ENTITIES = """
mutation ($tenant: ID!, $entities: [EntityInput!]!) {
  upsertEntities(tenantId: $tenant, entities: $entities) { ids }
}"""
UPSERT_RELATIONSHIPS = """
mutation ($tenant: ID!, $relationships: [RelationshipInput!]!) {
  upsertRelationships(tenantId: $tenant, relationships: $relationships) { ids }
}"""
RETRIEVE = """
query ($tenant: ID!, $query: String!) {
  retrieve(query: $query, tenantId: $tenant, k: 5) { matches { entity { id name } } }
}"""
ENTITY = """
query ($tenant: ID!, $id: ID!) {
  entity(tenantId: $tenant, id: $id) {
    id name entityType description properties
    relationships(direction: OUT) { id relationshipType confidence properties target { id } }
  }
}"""


def data(http: httpx.Client, document: str, **variables: Any) -> dict[str, Any]:
    response = http.post("/graphql", json={"query": document, "variables": variables})
    body: dict[str, Any] = response.json()
    assert response.status_code == 200, body
    assert "errors" not in body, body["errors"]
    result: dict[str, Any] = body["data"]
    return result


def snapshot(http: httpx.Client, tenant: str, ids: list[str]) -> list[dict[str, Any]]:
    """Every entity of `ids` with its outgoing relationships, as the API reads them."""
    return [data(http, ENTITY, tenant=tenant, id=entity_id)["entity"] for entity_id in ids]


def readiness_after(
    http: httpx.Client, status: int, timeout: float, reasons: set[str] | None = None
) -> float:
    """Seconds until `/readyz` answers `status`; fails after `timeout` seconds. The
    reasons of the 503s answered meanwhile are added to `reasons`."""
    started = time.monotonic()
    while True:
        response = http.get("/readyz")
        if response.status_code == status:
            return time.monotonic() - started
        if reasons is not None and response.status_code == 503:
            reasons.add(response.json()["reason"])
        if time.monotonic() - started > timeout:
            pytest.fail(f"/readyz did not answer {status} within {timeout} s")
        time.sleep(0.02)


def load(http: httpx.Client, tenant: str) -> list[str]:
    """Entities and a chain of relationships between them, written through the API."""
    entities = [
        {
            "name": f"Fault Company {i}",
            "entityType": "company",
            "description": f"company number {i}",
            "properties": {"rank": i},
        }
        for i in range(ENTITIES)
    ]
    ids: list[str] = data(http, UPSERT_ENTITIES, tenant=tenant, entities=entities)[
        "upsertEntities"
    ]["ids"]
    relationships = [
        {"sourceId": a, "targetId": b, "relationshipType": "SUPPLIES", "confidence": 0.5}
        for a, b in itertools.pairwise(ids)
    ]
    data(http, UPSERT_RELATIONSHIPS, tenant=tenant, relationships=relationships)
    return ids


def test_neo4j_stopped_and_started_again_under_a_running_server(server: str) -> None:
    tenant = str(uuid.uuid4())
    with httpx.Client(base_url=server, timeout=10.0) as http:
        ids = load(http, tenant)
        before = snapshot(http, tenant, ids)
        assert all(entity is not None for entity in before)
        assert http.get("/readyz").status_code == 200

        neo4j_script("stop", "--keep")
        not_ready = readiness_after(http, 503, timeout=NOT_READY_WITHIN_S)
        print(f"not ready {not_ready * 1000:.0f} ms after Neo4j stopped")

        timings: list[float] = []
        for _ in range(TRIES):
            started = time.perf_counter()
            response = http.post(
                "/graphql",
                json={"query": RETRIEVE, "variables": {"tenant": tenant, "query": "Fault"}},
            )
            timings.append(time.perf_counter() - started)
            codes = [e["extensions"]["code"] for e in response.json()["errors"]]
            assert codes == ["SERVICE_UNAVAILABLE"], response.text
            # Failed only by the store: a 503 saying when to ask again.
            assert response.status_code == 503, response.status_code
            assert response.headers["retry-after"] == "5"
        # The median: one slow answer on a busy machine is not what this measures.
        assert statistics.median(timings) < CODED_ERROR_WITHIN_S, timings
        print(f"coded errors after {[round(t * 1000, 1) for t in timings]} ms")
        # A write fails alike: tried again at once, not until the request's deadline.
        response = http.post(
            "/graphql",
            json={
                "query": UPSERT_ENTITIES,
                "variables": {
                    "tenant": tenant,
                    "entities": [{"name": "Fault Outage", "entityType": "company"}],
                },
            },
        )
        codes = [e["extensions"]["code"] for e in response.json()["errors"]]
        assert codes == ["SERVICE_UNAVAILABLE"], response.text
        assert response.status_code == 503, response.status_code
        assert response.headers["retry-after"] == "5"

        neo4j_script("start")
        reasons: set[str] = set()
        ready = readiness_after(http, 200, timeout=READY_AFTER_RESTART_S, reasons=reasons)
        print(f"ready again {ready * 1000:.0f} ms after Neo4j started, meanwhile {reasons}")
        # Back, the stores were warmed up (every read statement planned) before ready.
        assert "warming_up" in reasons
        assert snapshot(http, tenant, ids) == before

        [new_id] = data(
            http,
            UPSERT_ENTITIES,
            tenant=tenant,
            entities=[{"name": "Fault Newcomer", "entityType": "company"}],
        )["upsertEntities"]["ids"]
        matches = data(http, RETRIEVE, tenant=tenant, query="Fault Newcomer")["retrieve"]
        assert new_id in [m["entity"]["id"] for m in matches["matches"]]


def test_neo4j_restarted_between_two_readiness_checks(own_neo4j: dict[str, str]) -> None:
    """No check sees the server down: the first one after its restart finds it
    started again and warms the stores up before ready. The readiness deadline is long,
    so that a cold server's slow first answer is not a failed check (which would warm
    up for another reason)."""
    patient = {"REDSTRING_READINESS_TIMEOUT": str(READY_AFTER_RESTART_S)}
    with (
        serving(own_neo4j, **patient) as (base, process),
        httpx.Client(base_url=base, timeout=2 * READY_AFTER_RESTART_S) as http,
    ):
        assert http.get("/readyz").status_code == 200
        neo4j_script("stop", "--keep")
        neo4j_script("start")
        first = http.get("/readyz")
        assert (first.status_code, first.json().get("reason")) == (503, "warming_up")
        ready = readiness_after(http, 200, timeout=READY_AFTER_RESTART_S)
        print(f"ready {ready * 1000:.0f} ms after the first check")
        assert "a store's server started again" in process.output
