"""hypothesis-graphql's queries and mutations from the live schema, sent over HTTP to the
real app on each backend: every response keeps the contract of `tests.security.contract`.

`ID` values are mostly the tenant the demo data is in and its entities' ids, so the
resolvers and stores are reached rather than the UUID check alone; `KG_FUZZ_MAX_EXAMPLES`
sets the number of documents per backend (default 500).
"""

from __future__ import annotations

import asyncio
import os
import re
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import neo4j
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis_graphql import Mode, from_schema, nodes

from redstring.api import create_app
from redstring.api.demo import DEMO_TENANT_ID, demo_dataset, load_demo
from redstring.api.schema.build import schema_sdl
from redstring.api.settings import Backend, Settings
from redstring.api.startup import open_client
from redstring.composition.client import Redstring
from redstring.domain.ids import TenantId
from tests.api.support import memory_services
from tests.security.contract import (
    contract_violations,
    json_values,
    query_texts,
    small_ints,
    uuid_ids,
    value_node,
)

MAX_EXAMPLES = int(os.environ.get("KG_FUZZ_MAX_EXAMPLES", "500"))


@dataclass
class Target:
    """An app over demo data in `tenant` on the `backend`, and a loop to drive its client
    from sync code (Hypothesis runs sync tests; the stores belong to this one loop)."""

    backend: Backend
    runner: asyncio.Runner
    http: httpx.AsyncClient
    tenant: TenantId


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


def _serve(
    backend: Backend,
    runner: asyncio.Runner,
    services: Redstring,
    tenant: TenantId,
    named: set[str] | None = None,
) -> Iterator[Target]:
    """`named`, if given, gathers every UUID a request names (any may be a tenant)."""
    runner.run(load_demo(services, tenant))
    app = create_app(Settings(graphiql=False, gc_freeze=False), services=services)

    async def note_uuids(request: httpx.Request) -> None:
        assert named is not None
        named.update(str(uuid.UUID(found)) for found in _UUID.findall(request.content.decode()))

    http = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url="http://127.0.0.1",
        event_hooks={"request": [note_uuids] if named is not None else []},
    )
    try:
        yield Target(backend, runner, http, tenant)
    finally:
        runner.run(http.aclose())


@pytest.fixture
def memory_target() -> Iterator[Target]:
    with asyncio.Runner() as runner:
        yield from _serve(Backend.MEMORY, runner, memory_services(), DEMO_TENANT_ID)


@pytest.fixture
def neo4j_target() -> Iterator[Target]:
    """The real server's settings on the shared Neo4j, demo data in a fresh tenant. The
    nodes of that tenant, and of any other a request names, are deleted afterwards."""
    uri = os.environ.get("NEO4J_URI")
    if not uri:
        pytest.fail("NEO4J_URI is not set: run `make test`, which starts a throwaway Neo4j")
    auth = (os.environ.get("NEO4J_USER", "neo4j"), os.environ["NEO4J_PASSWORD"])
    server = Settings(
        backend=Backend.NEO4J, neo4j_uri=uri, neo4j_user=auth[0], neo4j_password=auth[1]
    )
    tenant = TenantId(uuid.uuid4())
    named = {str(tenant)}
    try:
        with asyncio.Runner() as runner:
            services = runner.run(open_client(server))
            try:
                yield from _serve(Backend.NEO4J, runner, services, tenant, named)
            finally:
                runner.run(services.aclose())
    finally:
        with neo4j.GraphDatabase.driver(uri, auth=auth) as driver:
            for label, key in (("Entity", "id"), ("EntityVector", "entity_id")):
                driver.execute_query(
                    f"MATCH (n:{label}) WHERE n.tenant_id IN $tenants AND n.{key} IS NOT NULL "
                    "DETACH DELETE n",
                    tenants=sorted(named),
                )


def documents(tenant: TenantId) -> st.SearchStrategy[str]:
    """Valid operations two times in three, else operations with one schema violation."""
    entities, _ = demo_dataset(tenant)
    # Names to find entities by, and types for `entityTypes` filters that keep some.
    words = [e.name for e in entities] + sorted({e.entity_type for e in entities})
    scalars = {
        "ID": uuid_ids(tenant, [e.id for e in entities]).map(nodes.String),
        "Int": small_ints().map(nodes.Int),
        "String": query_texts(words).map(nodes.String),
        "JSON": json_values().map(value_node),
    }
    sdl = schema_sdl()
    valid = from_schema(sdl, custom_scalars=scalars)
    invalid = from_schema(sdl, custom_scalars=scalars, mode=Mode.NEGATIVE)
    return st.one_of(valid, valid, invalid)


def fuzz(target: Target) -> Counter[str]:
    """Send `MAX_EXAMPLES` generated documents; fail on the first that breaks the contract.
    Returns how many queries and mutations were sent."""
    sent: Counter[str] = Counter()

    def answer_keeps_the_contract(document: str) -> None:
        started = time.perf_counter()
        response = target.runner.run(target.http.post("/graphql", json={"query": document}))
        elapsed = time.perf_counter() - started
        problems = contract_violations(response.status_code, response.text, elapsed)
        assert not problems, f"{problems}\n--- document:\n{document}\n--- body:\n{response.text}"
        sent["mutation" if document.lstrip().startswith("mutation") else "query"] += 1

    run = settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        # A database per backend: Hypothesis keys failing examples by the test's source,
        # the same for both, and one backend's passing run would discard the other's.
        database=DirectoryBasedExampleDatabase(f".hypothesis/fuzz-{target.backend.value}"),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )(given(document=documents(target.tenant))(answer_keeps_the_contract))
    run()
    return sent


def _assert_enough(sent: Counter[str]) -> None:
    assert sent.total() >= MAX_EXAMPLES, sent
    assert min(sent["query"], sent["mutation"]) >= MAX_EXAMPLES // 5, sent


def test_memory_backend_keeps_the_contract(memory_target: Target) -> None:
    _assert_enough(fuzz(memory_target))


@pytest.mark.neo4j
def test_neo4j_backend_keeps_the_contract(neo4j_target: Target) -> None:
    _assert_enough(fuzz(neo4j_target))
