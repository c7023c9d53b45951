"""What an operator sees: `/metrics`, `X-Request-Id`, one access log line per request in
`text` or `json`, and a readiness failure logged on one line."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import re
import signal
import socket
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from redstring import Entity, EntityId, StoreUnavailableError, TenantId, VectorRecord
from redstring.api import create_app
from redstring.api.access_log import outcome_of
from redstring.api.demo import load_demo
from redstring.api.log_config import TextFormatter, log_handler
from redstring.api.metrics import SHARED_DIRECTORY
from redstring.api.server import shared_metrics
from redstring.api.settings import Settings
from redstring.composition.client import Redstring
from redstring.testing import CountingGraphStore
from tests.api.doubles import FailingGraphStore
from tests.api.support import DEMO, memory_services, services_with_graph
from tests.processes import REPO, free_loopback_port, redstring_server

ACCESS = "redstring.api.access"
FIND = """
query Find($t: ID!, $q: String!, $mode: RetrievalMode! = HYBRID) {
  retrieve(query: $q, tenantId: $t, k: 3, mode: $mode) {
    matches { entity { name relationships(first: 2) { relationshipType } } }
  }
}
"""
GHOST_QUERY = "Qwzrtplk"
HEX_ID = re.compile(r"[0-9a-f]{32}")


async def _observed_services() -> Redstring:
    """Demo data with a query cache, and one vector whose entity the graph lacks, as near
    to `GHOST_QUERY` as a vector can be."""
    base = memory_services()
    services = Redstring(
        embeddings=base.embeddings, vectors=base.vectors, graph=base.graph, query_cache_size=16
    )
    await load_demo(services)
    [vector] = await services.embeddings.embed_query([GHOST_QUERY])
    ghost = VectorRecord(
        entity_id=EntityId(uuid.uuid4()),
        tenant_id=TenantId(uuid.UUID(DEMO)),
        vector=vector,
        entity_type="Organization",
    )
    await services.vectors.upsert([ghost])
    return services


def _client(app: Any) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1")


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with _client(create_app(Settings(), services=await _observed_services())) as client:
        yield client


def _samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def _value(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


async def _find(http: httpx.AsyncClient, query: str, **variables: Any) -> httpx.Response:
    return await http.post(
        "/graphql", json={"query": FIND, "variables": {"t": DEMO, "q": query, **variables}}
    )


async def test_metrics_count_requests_store_calls_embeddings_cache_and_dangling_matches(
    http: httpx.AsyncClient,
) -> None:
    assert (await _find(http, "Acme")).json()["data"]["retrieve"]["matches"]
    await _find(http, "Acme")  # the same query text: a cache hit
    unknown = await http.post(
        "/graphql",
        json={"query": FIND, "variables": {"t": str(uuid.uuid4()), "q": "Acme"}},
    )
    assert unknown.json()["data"]["retrieve"]["matches"] == []
    bad = await http.post(
        "/graphql",
        json={"query": 'query Bad { retrieve(query: "x", tenantId: "nope") { query } }'},
    )
    assert bad.json()["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    ghost = await _find(http, GHOST_QUERY, mode="SEMANTIC")
    assert "errors" not in ghost.json()
    malformed = await http.post(
        "/graphql", content=b"{", headers={"content-type": "application/json"}
    )
    assert malformed.status_code == 400
    long_name = "L" * 65  # a GraphQL name, too long to be a label
    strange = await http.post("/graphql", json={"query": f"query {long_name} {{ __typename }}"})
    assert strange.json() == {"data": {"__typename": "Query"}}

    response = await http.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    samples = _samples(response.text)

    def requests(operation: str, outcome: str) -> float:
        return _value(samples, "redstring_requests_total", operation=operation, outcome=outcome)

    assert requests("Find", "ok") == 4  # two Acme, the unknown tenant, the ghost
    assert requests("Bad", "BAD_USER_INPUT") == 1
    assert requests("none", "BAD_REQUEST") == 1
    assert requests("other", "ok") == 1
    total = sum(v for (name, _), v in samples.items() if name == "redstring_requests_total")
    assert total == 7
    assert _value(samples, "redstring_request_duration_seconds_count", operation="Find") == 4
    assert _value(samples, "redstring_request_duration_seconds_sum", operation="Find") > 0
    assert _value(samples, "redstring_requests_in_flight") == 0

    def store_calls(store: str, method: str) -> float:
        return _value(
            samples, "redstring_store_call_duration_seconds_count", store=store, method=method
        )

    assert store_calls("vector", "search") == 4
    assert store_calls("graph", "find_lexical_candidates") == 3  # the ghost's is semantic
    assert store_calls("graph", "relationships_of") >= 2
    assert store_calls("graph", "get_entities") >= 1
    # "Acme" once for the demo (then a hit) and once for the unknown tenant, whose cache
    # entries are its own; the ghost's query once.
    assert _value(samples, "redstring_embedding_duration_seconds_count", kind="query") == 3
    assert _value(samples, "redstring_embedded_texts_total", kind="query") == 3
    assert _value(samples, "redstring_query_cache_hits_total") == 1
    assert _value(samples, "redstring_query_cache_misses_total") == 3
    assert _value(samples, "redstring_dangling_matches_skipped_total") == 1


async def test_the_cache_metrics_do_not_tell_a_tenant_what_another_searched(
    http: httpx.AsyncClient,
) -> None:
    """A text one tenant searched is a miss for another tenant (the cache is per tenant),
    so `/metrics` moves as if the other tenant had never searched it."""
    other = str(uuid.uuid4())

    async def counts() -> tuple[float, float]:
        samples = _samples((await http.get("/metrics")).text)
        return (
            _value(samples, "redstring_query_cache_hits_total"),
            _value(samples, "redstring_query_cache_misses_total"),
        )

    await _find(http, "falcon merger with Globex")
    assert await counts() == (0, 1)
    await _find(http, "falcon merger with Globex", t=other)
    assert await counts() == (0, 2)  # the other tenant's first search: a miss
    await _find(http, "falcon merger with Globex")
    assert await counts() == (1, 2)  # the first tenant's repeat: a hit


async def test_a_walk_to_the_ends_is_counted_as_one_store_call(
    http: httpx.AsyncClient,
) -> None:
    walk = """query Walk($t: ID!) { retrieve(query: "Acme", tenantId: $t, k: 3) {
      matches { entity { relationships(first: 2) { source { name } target { name } } } } } }"""
    walked = await http.post("/graphql", json={"query": walk, "variables": {"t": DEMO}})
    assert "errors" not in walked.json()
    samples = _samples((await http.get("/metrics")).text)

    def graph_calls(method: str) -> float:
        return _value(
            samples, "redstring_store_call_duration_seconds_count", store="graph", method=method
        )

    assert graph_calls("relationships_with_ends") == 1
    assert graph_calls("relationships_of") == 0


async def test_writes_count_upserts_deletes_and_document_embeddings(
    http: httpx.AsyncClient,
) -> None:
    tenant = str(uuid.uuid4())
    upsert = await http.post(
        "/graphql",
        json={
            "query": """mutation Add($t: ID!) {
              upsertEntities(tenantId: $t, entities: [{name: "Acme", entityType: "Org"}]) { ids }
            }""",
            "variables": {"t": tenant},
        },
    )
    [entity_id] = upsert.json()["data"]["upsertEntities"]["ids"]
    delete = await http.post(
        "/graphql",
        json={
            "query": "mutation Drop($t: ID!, $ids: [ID!]!) "
            "{ deleteEntities(tenantId: $t, ids: $ids) { count } }",
            "variables": {"t": tenant, "ids": [entity_id]},
        },
    )
    assert delete.json()["data"]["deleteEntities"]["count"] == 1
    samples = _samples((await http.get("/metrics")).text)
    for store, method, calls in [
        ("graph", "upsert_entities", 1),
        ("vector", "upsert", 1),
        ("graph", "delete_entities", 1),
        ("vector", "delete", 2),  # before the entities and after them
    ]:
        count = _value(
            samples, "redstring_store_call_duration_seconds_count", store=store, method=method
        )
        assert count == calls, (store, method)
    assert _value(samples, "redstring_embedded_texts_total", kind="documents") == 1
    assert _value(samples, "redstring_requests_total", operation="Add", outcome="ok") == 1


async def test_each_app_counts_apart(demo_services: Redstring) -> None:
    async with (
        _client(create_app(Settings(), services=demo_services)) as one,
        _client(create_app(Settings(), services=demo_services)) as two,
    ):
        await one.post("/graphql", json={"query": "query Ping { __typename }"})
        first = _samples((await one.get("/metrics")).text)
        second = _samples((await two.get("/metrics")).text)
    assert _value(first, "redstring_requests_total", operation="Ping", outcome="ok") == 1
    assert _value(second, "redstring_requests_total", operation="Ping", outcome="ok") == 0


async def test_distinct_operation_names_are_capped() -> None:
    from redstring.api.metrics import Metrics

    metrics = Metrics(max_operation_names=2)
    labels = [metrics.operations.label(name) for name in ["A", "B", "C", "A", "anonymous"]]
    assert labels == ["A", "B", "other", "A", "anonymous"]
    assert metrics.operations.label(None) == "none"


@pytest.mark.parametrize(
    ("status", "codes", "outcome"),
    [
        (200, [], "ok"),
        (200, ["FORBIDDEN", "BAD_USER_INPUT"], "FORBIDDEN"),
        (413, ["PAYLOAD_TOO_LARGE"], "PAYLOAD_TOO_LARGE"),
        (401, [], "UNAUTHENTICATED"),
        (404, [], "NOT_FOUND"),
        (418, [], "BAD_REQUEST"),
        (499, [], "cancelled"),
        (503, [], "SERVICE_UNAVAILABLE"),
        (504, [], "REQUEST_TIMEOUT"),
        (500, [], "INTERNAL_SERVER_ERROR"),
        (599, [], "INTERNAL_SERVER_ERROR"),
    ],
)
def test_the_outcome_is_the_first_code_else_what_the_status_implies(
    status: int, codes: list[str], outcome: str
) -> None:
    assert outcome_of(status, codes) == outcome


# Request id


async def test_a_sane_request_id_is_echoed_and_others_are_replaced(
    http: httpx.AsyncClient,
) -> None:
    sane = "client-42.retry_1"
    assert (await http.get("/healthz", headers={"x-request-id": sane})).headers[
        "x-request-id"
    ] == sane
    longest = "a" * 128
    assert (await http.get("/healthz", headers={"x-request-id": longest})).headers[
        "x-request-id"
    ] == longest
    for insane in ["a" * 129, "has space", "semi;colon", "é".encode(), ""]:
        answered = (await http.get("/healthz", headers={"x-request-id": insane})).headers[
            "x-request-id"
        ]
        assert HEX_ID.fullmatch(answered), insane
    generated = {(await http.get("/healthz")).headers["x-request-id"] for _ in range(3)}
    assert len(generated) == 3
    assert all(HEX_ID.fullmatch(g) for g in generated)


async def test_every_response_carries_the_request_id(http: httpx.AsyncClient) -> None:
    responses = {
        "404": await http.get("/nowhere", headers={"x-request-id": "r404"}),
        "405": await http.put("/graphql", headers={"x-request-id": "r405"}),
        "graphql error": await http.post(
            "/graphql",
            json={"query": '{ entity(tenantId: "nope", id: "x") { name } }'},
            headers={"x-request-id": "rgql"},
        ),
        "refusal": await http.post(
            "/graphql",
            content=b"not json",
            headers={"content-type": "application/json", "x-request-id": "rref"},
        ),
        "metrics": await http.get("/metrics", headers={"x-request-id": "rmet"}),
    }
    assert responses["404"].status_code == 404
    assert responses["graphql error"].json()["errors"]
    assert responses["refusal"].status_code == 400
    for what, response in responses.items():
        sent = {"404": "r404", "405": "r405", "graphql error": "rgql", "refusal": "rref"}
        expected = sent.get(what, "rmet")
        assert response.headers.get_list("x-request-id") == [expected], what


async def test_an_internal_error_response_carries_the_request_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An app whose services were never opened fails outside GraphQL: Starlette answers 500."""
    caplog.set_level(logging.INFO, logger=ACCESS)
    async with _client(create_app(Settings())) as http:
        response = await http.post(
            "/graphql", json={"query": "{ __typename }"}, headers={"x-request-id": "r500"}
        )
    assert response.status_code == 500
    assert response.headers["x-request-id"] == "r500"
    [line] = _access_records(caplog.records)
    assert (line.status, line.outcome, line.request_id) == (500, "INTERNAL_SERVER_ERROR", "r500")


# The access log line


def _access_records(records: Sequence[logging.LogRecord]) -> list[Any]:
    return [r for r in records if r.name == ACCESS]


async def test_one_line_per_request_with_its_fields(
    http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS)
    ok = await _find(http, "Acme")
    bad = await http.post(
        "/graphql",
        json={"query": 'query Bad { retrieve(query: "x", tenantId: "nope") { query } }'},
        headers={"x-request-id": "bad-1"},
    )
    missing = await http.get("/nowhere")
    refused = await http.post(
        "/graphql", content=b"[", headers={"content-type": "application/json"}
    )
    records = _access_records(caplog.records)
    assert len(records) == 4
    first, second, third, fourth = records
    assert first.request_id == ok.headers["x-request-id"]
    assert (first.method, first.path, first.status) == ("POST", "/graphql", 200)
    assert (first.operation, first.tenant, first.outcome) == ("Find", DEMO, "ok")
    assert first.error_codes == []
    assert first.duration_ms > 0
    assert second.request_id == bad.headers["x-request-id"] == "bad-1"
    assert second.operation == "Bad"
    assert not hasattr(second, "tenant")  # absent, not None
    assert (second.outcome, second.error_codes) == ("BAD_USER_INPUT", ["BAD_USER_INPUT"])
    assert third.request_id == missing.headers["x-request-id"]
    assert (third.path, third.status, third.outcome) == ("/nowhere", 404, "NOT_FOUND")
    assert not hasattr(third, "operation")
    assert fourth.request_id == refused.headers["x-request-id"]
    assert fourth.status == 400
    assert not hasattr(fourth, "operation")
    assert (fourth.outcome, fourth.error_codes) == ("BAD_REQUEST", ["BAD_REQUEST"])


class _SlowGraph:
    """A graph store whose every call waits a second first, past a short deadline."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._inner, name)
        if not asyncio.iscoroutinefunction(found):
            return found

        async def slow(*arguments: Any, **options: Any) -> Any:
            await asyncio.sleep(1.0)
            return await found(*arguments, **options)

        return slow


async def test_a_request_cut_by_its_deadline_keeps_its_operation_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """docs/security.md: the operation's name labels a request the deadline cut (504),
    as it does one that ended; it was `none`, and the access line had no `operation`."""
    caplog.set_level(logging.INFO, logger=ACCESS)
    base = await _observed_services()
    services = services_with_graph(base, _SlowGraph(base.graph))
    app = create_app(Settings(request_timeout=0.05), services=services)
    query = FIND.replace("query Find(", "query SearchBox(")
    async with _client(app) as http:
        response = await http.post(
            "/graphql", json={"query": query, "variables": {"t": DEMO, "q": "Acme"}}
        )
        assert response.status_code == 504
        samples = _samples((await http.get("/metrics")).text)
    [line] = [r for r in _access_records(caplog.records) if r.path == "/graphql"]
    assert (line.status, line.outcome) == (504, "REQUEST_TIMEOUT")
    assert line.operation == "SearchBox"
    timed_out = {"operation": "SearchBox", "outcome": "REQUEST_TIMEOUT"}
    assert _value(samples, "redstring_requests_total", **timed_out) == 1
    assert _value(samples, "redstring_requests_total", operation="none") == 0


async def test_text_lines_carry_the_fields_as_key_value(
    http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS)
    await _find(http, "Acme")
    await http.get("/a%0Ab c", headers={"x-request-id": "t-1"})
    first, second = (TextFormatter().format(r) for r in _access_records(caplog.records))
    assert first.startswith("INFO redstring.api.access: POST /graphql 200 request_id=")
    assert f"operation=Find tenant={DEMO} outcome=ok error_codes=-" in first
    assert "\n" not in second
    assert 'path="/a\\\\nb c"' in second  # escaped, then quoted for the space
    assert "request_id=t-1 " in second


async def test_a_client_s_text_in_a_message_cannot_write_a_line_of_its_own(
    http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """At DEBUG a refusal's message holds the client's `operationName`: a line break in
    it wrote what looked like a record of its own."""
    caplog.set_level(logging.DEBUG, logger="redstring")
    forged = "X\nINFO redstring.api.access: POST /graphql 200 \x1b[2J \ud800"
    body = {"query": "{ __typename }", "operationName": forged}
    sent = json.dumps(body)  # ASCII: the surrogate as an escape, as JSON lets it be sent
    headers = {"content-type": "application/json"}
    assert (await http.post("/graphql", content=sent, headers=headers)).status_code == 400
    (refused,) = [r for r in caplog.records if r.getMessage().startswith("request refused")]
    line = TextFormatter().format(refused)
    assert "\n" not in line
    assert "\\nINFO redstring.api.access" in line
    assert "\\x1b[2J \\ud800" in line
    assert refused.getMessage().count("\n") == 1  # the record itself is left as it was


@pytest.fixture
def json_log() -> Iterator[io.StringIO]:
    """What the `json` handler of `configure_logging` writes, from INFO, while a test runs."""
    written = io.StringIO()
    handler = log_handler("json")
    handler.setStream(written)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield written
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


async def test_json_lines_parse_and_an_internal_error_keeps_its_traceback_in_one_field(
    demo_services: Redstring, json_log: io.StringIO
) -> None:
    broken = FailingGraphStore(lambda: RuntimeError("boom"))
    services = Redstring(
        embeddings=demo_services.embeddings, vectors=demo_services.vectors, graph=broken
    )
    async with _client(create_app(Settings(graphiql=False), services=services)) as http:
        response = await http.post(
            "/graphql",
            json={"query": f'query Boom {{ entity(tenantId: "{DEMO}", id: "{DEMO}") {{ name }} }}'},
            headers={"x-request-id": "boom-1"},
        )
    assert response.json()["errors"][0]["extensions"]["code"] == "INTERNAL_SERVER_ERROR"
    parsed = [json.loads(line) for line in json_log.getvalue().splitlines()]
    [internal] = [p for p in parsed if p["level"] == "ERROR"]
    assert internal["logger"] == "redstring.api"
    assert internal["request_id"] == "boom-1"  # any line logged while serving the request
    assert internal["exc_info"].startswith("Traceback (most recent call last):")
    assert "RuntimeError: boom" in internal["exc_info"]
    [access] = [p for p in parsed if p["logger"] == ACCESS]
    assert access["request_id"] == "boom-1"
    assert (access["operation"], access["outcome"]) == ("Boom", "INTERNAL_SERVER_ERROR")
    assert access["error_codes"] == ["INTERNAL_SERVER_ERROR"]
    assert access["tenant"] == DEMO
    for field in ("timestamp", "level", "logger", "message", "method", "path", "status"):
        assert field in access, field


async def test_a_json_access_line_leaves_out_what_did_not_happen(
    demo_services: Redstring, json_log: io.StringIO
) -> None:
    async with _client(create_app(Settings(graphiql=False), services=demo_services)) as http:
        await http.get("/nowhere")
    parsed = [json.loads(line) for line in json_log.getvalue().splitlines()]
    [access] = [p for p in parsed if p["logger"] == ACCESS]
    assert "operation" not in access
    assert "tenant" not in access
    assert (access["status"], access["outcome"]) == (404, "NOT_FOUND")


# Readiness


async def test_a_store_down_is_one_warning_line_without_traceback(
    demo_services: Redstring, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="redstring.api")
    down = FailingGraphStore(
        lambda: StoreUnavailableError("Neo4j is unavailable: refused\n  by 127.0.0.1:1")
    )
    services = Redstring(
        embeddings=demo_services.embeddings, vectors=demo_services.vectors, graph=down
    )
    async with _client(create_app(Settings(), services=services)) as http:
        ready = await http.get("/readyz")
    assert ready.status_code == 503
    assert ready.json() == {"status": "unavailable", "reason": "store_unavailable"}
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    [warning] = [r for r in warnings if "GraphiQL" not in r.getMessage()]
    message = warning.getMessage()
    assert "\n" not in message
    assert "StoreUnavailableError" in message
    assert "refused by 127.0.0.1:1" in message
    assert warning.exc_info is None
    debug = [r for r in caplog.records if r.levelno == logging.DEBUG and r.exc_info]
    assert len(debug) == 1  # the traceback, for whoever turns DEBUG on


class _SilentGraphStore(CountingGraphStore):
    """Never answers `get_entities`, as a store stuck on its first connection."""

    async def get_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> list[Entity]:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_a_readiness_timeout_is_named(
    demo_services: Redstring, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="redstring.api")
    services = Redstring(
        embeddings=demo_services.embeddings,
        vectors=demo_services.vectors,
        graph=_SilentGraphStore(demo_services.graph),
    )
    app = create_app(Settings(readiness_timeout=0.05), services=services)
    async with _client(app) as http:
        ready = await asyncio.wait_for(http.get("/readyz"), 10)
    assert ready.json() == {"status": "unavailable", "reason": "timeout"}
    [warning] = [r for r in caplog.records if r.getMessage().startswith("readiness")]
    assert "TimeoutError: no answer within 0.05 s" in warning.getMessage()
    assert warning.exc_info is None


# A real server process


def _json_lines(stderr: str) -> list[dict[str, Any]]:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines
    return [json.loads(line) for line in lines]  # every line, whoever logged it


def test_a_json_server_logs_every_line_as_json_and_its_own_access_lines() -> None:
    port = free_loopback_port()
    process = redstring_server(port, demo=False, log_format="json", graphiql="false")
    base = f"http://127.0.0.1:{port}"
    try:
        process.wait_until_answering(f"{base}/healthz")
        with httpx.Client(base_url=base, timeout=10) as http:
            ok = http.post(
                "/graphql",
                json={"query": "query Ping { __typename }"},
                headers={"x-request-id": "real-1"},
            )
            assert ok.headers["x-request-id"] == "real-1"
            assert http.get("/nowhere").status_code == 404
    finally:
        process.stop()
    stderr = process.output
    parsed = _json_lines(stderr)
    loggers = {p["logger"] for p in parsed}
    assert "uvicorn.error" in loggers  # uvicorn's own lines, in the same format
    assert "uvicorn.access" not in loggers  # ours replace its access log
    access = [p for p in parsed if p["logger"] == ACCESS]
    [ping] = [p for p in access if p["request_id"] == "real-1"]
    assert (ping["operation"], ping["outcome"], ping["status"]) == ("Ping", "ok", 200)
    assert [p["status"] for p in access if p["path"] == "/nowhere"] == [404]


@pytest.mark.parametrize(
    ("settings", "environment", "status", "said"),
    [
        pytest.param(
            {"workers": "0"},
            {},
            2,
            "bad settings: workers (REDSTRING_WORKERS): Input should be greater than",
            id="settings refused",
        ),
        pytest.param(
            {},
            {"PROMETHEUS_MULTIPROC_DIR": "/nonexistent/redstring-metrics"},
            2,
            "bad settings: PROMETHEUS_MULTIPROC_DIR must name a folder",
            id="choice refused",
        ),
        pytest.param(
            {}, {}, 1, "error: cannot listen on 127.0.0.1 port {port}: ", id="port in use"
        ),
    ],
)
def test_a_json_server_that_will_not_start_says_why_in_json(
    settings: dict[str, str], environment: dict[str, str], status: int, said: str
) -> None:
    """What `serve` says before it sets up logging is a JSON record too."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        refused = "{port}" in said
        process = redstring_server(
            port if refused else free_loopback_port(),
            demo=False,
            environment=environment,
            log_format="json",
            **settings,
        )
        try:
            assert process.wait(60) == status
        finally:
            process.stop()
    [record] = _json_lines(process.output)
    assert (record["level"], record["logger"]) == ("ERROR", "redstring.api")
    assert record["message"].startswith(said.format(port=port))


def _started_workers(process: Any, count: int, timeout: float = 60.0) -> None:
    """Wait until `count` uvicorn workers have finished their start-up."""
    deadline = time.monotonic() + timeout
    while process.output.count("Application startup complete") < count:
        assert time.monotonic() < deadline, f"{count} workers did not start:\n{process.output}"
        time.sleep(0.1)


def _ping_counts(text: str) -> tuple[float, float]:
    """The scraped `Ping` requests counted and the requests in flight."""
    families = {f.name: f for f in text_string_to_metric_families(text)}
    served = sum(
        s.value
        for s in families["redstring_requests"].samples
        if s.name == "redstring_requests_total" and s.labels["operation"] == "Ping"
    )
    in_flight = [s.value for s in families["redstring_requests_in_flight"].samples]
    assert len(in_flight) == 1  # one series, the workers' sum, not one a worker
    return served, in_flight[0]


def test_several_workers_answer_the_sum_of_their_metrics(tmp_path: Path) -> None:
    """Whichever worker a scrape reaches, it counts every worker's requests, kept in a
    directory the server makes and removes. The server's temporary directory is the
    test's own (`TMPDIR`): in the shared one, other runs' directories come and go."""
    port = free_loopback_port()
    process = redstring_server(
        port,
        demo=False,
        environment={"TMPDIR": str(tmp_path)},
        graphiql="false",
        workers="2",
    )
    base = f"http://127.0.0.1:{port}"
    sent = 60
    try:
        _started_workers(process, 2)

        def ping(_: int) -> int:
            # A connection of its own each, sent together, so both workers take some.
            with httpx.Client(base_url=base, timeout=20) as http:
                return http.post(
                    "/graphql", json={"query": "query Ping { __typename }"}
                ).status_code

        with ThreadPoolExecutor(max_workers=12) as pool:
            assert set(pool.map(ping, range(sent))) == {200}
        for _ in range(6):
            with httpx.Client(base_url=base, timeout=20) as http:
                assert _ping_counts(http.get("/metrics").text) == (sent, 0)
        [shared] = tmp_path.glob("redstring-metrics-*")
        assert any(shared.glob("*.db"))  # the workers' values
    finally:
        process.stop()
    assert not any(tmp_path.glob("redstring-metrics-*"))  # its directory is gone


def test_a_killed_worker_s_live_values_leave_the_sum(tmp_path: Path) -> None:
    """docs/security.md, "Several workers": the gauges sum the live workers' values.
    A worker killed (SIGKILL, no clean exit) left its own in the sum for good: once
    uvicorn had replaced it, three start checks `ok` of two workers, and its file."""
    shared = tmp_path / "metrics"
    shared.mkdir()
    port = free_loopback_port()
    process = redstring_server(
        port,
        demo=False,
        environment={SHARED_DIRECTORY: str(shared)},
        graphiql="false",
        log_level="debug",
        workers="2",
    )
    checked = "answered the check at start"
    base = f"http://127.0.0.1:{port}"
    try:
        _started_workers(process, 2)
        _wait_for(lambda: process.output.count(checked) == 2, process)
        [killed, _] = re.findall(r"Started server process \[(\d+)\]", process.output)
        assert list(shared.glob(f"gauge_livesum_{killed}.db"))
        os.kill(int(killed), signal.SIGKILL)
        _started_workers(process, 3)  # uvicorn's replacement
        _wait_for(lambda: process.output.count(checked) == 3, process)
        for _ in range(4):  # whichever worker answers
            samples = _samples(httpx.get(f"{base}/metrics", timeout=20).text)
            check = _value(samples, "redstring_embedding_start_check", outcome="ok")
            assert check == 2, process.output[-3000:]
            assert _value(samples, "redstring_requests_in_flight") == 0
        assert not list(shared.glob(f"gauge_livesum_{killed}.db"))
    finally:
        process.stop()


def _wait_for(condition: Any, process: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, process.output[-3000:]
        time.sleep(0.1)


def test_shared_metrics_empties_an_operators_directory_or_makes_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SHARED_DIRECTORY, raising=False)
    with shared_metrics(several=False):
        assert SHARED_DIRECTORY not in os.environ  # one worker keeps its values in memory
    with shared_metrics(several=True):
        made = Path(os.environ[SHARED_DIRECTORY])
        assert made.is_dir()
    assert not made.exists()
    assert SHARED_DIRECTORY not in os.environ
    monkeypatch.setenv(SHARED_DIRECTORY, str(tmp_path))
    for several in (False, True):
        (tmp_path / "counter_123.db").write_bytes(b"an earlier run's")
        (tmp_path / "notes.txt").write_text("not ours")
        with shared_metrics(several=several):
            assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
        assert os.environ[SHARED_DIRECTORY] == str(tmp_path)


def test_every_store_method_the_metrics_name_is_documented() -> None:
    observed = (REPO / "src" / "redstring" / "composition" / "observed.py").read_text()
    methods = set(re.findall(r'_call\("([a-z_]+)"\)|_StoreCall\([^)]*"([a-z_]+)"\)', observed))
    methods = {name for pair in methods for name in pair if name}
    assert {"get_entities", "sources", "find_candidates"} <= methods
    security = " ".join((REPO / "docs" / "security.md").read_text().split())
    listed = security.split("- `store`:", 1)[1].split("- `kind`:", 1)[0]
    assert {m for m in methods if f"`{m}`" not in listed} == set()


async def test_a_request_s_client_errors_are_one_line_at_info(
    http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """100 errors of one request (fields the schema has not): the access line at INFO,
    their messages at DEBUG."""
    caplog.set_level(logging.INFO, logger="redstring")
    fields = " ".join(f"f{i}" for i in range(100))
    body = (await http.post("/graphql", json={"query": f"{{ {fields} }}"})).json()
    assert len(body["errors"]) >= 100
    at_info = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert [r.name for r in at_info] == [ACCESS]
