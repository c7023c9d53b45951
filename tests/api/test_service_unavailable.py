"""A request that failed only because a store did not answer: HTTP 503 with `Retry-After`,
its GraphQL body as before. A partial result and every other failure keep their status."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from redstring import Entity, EntityId, InvalidInputError, StoreUnavailableError, TenantId
from redstring.api import create_app
from redstring.api.settings import Settings
from redstring.composition.client import Redstring
from redstring.testing import CountingGraphStore
from tests.api.doubles import FailingGraphStore
from tests.api.support import DEMO, services_with_graph
from tests.api.test_retrieve import ACME_ID

RETRIEVE = """query Find($t: ID!) {
  retrieve(query: "Acme", tenantId: $t, k: 3) { matches { entity { name } } }
}"""
UNAVAILABLE_BODY = {
    "data": None,
    "errors": [
        {
            "message": "A backing store is unavailable; try again later",
            "locations": [{"line": 2, "column": 3}],
            "path": ["retrieve"],
            "extensions": {"code": "SERVICE_UNAVAILABLE"},
        }
    ],
}
ENTITY_AND_TYPES = """query ($t: ID!, $id: ID!) {
  e: entity(tenantId: $t, id: $id) { name }
  t: entityTypes(tenantId: $t) { entityType }
}"""


def _down() -> FailingGraphStore:
    return FailingGraphStore(lambda: StoreUnavailableError("bolt://127.0.0.9:7687 refused"))


def _http(services: Redstring, settings: Settings | None = None) -> httpx.AsyncClient:
    app = create_app(settings or Settings(), services=services)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")


async def _send(
    http: httpx.AsyncClient, method: str, query: str, **variables: Any
) -> httpx.Response:
    if method == "POST":
        return await http.post("/graphql", json={"query": query, "variables": variables})
    params = {"query": query, "variables": json.dumps(variables)}
    return await http.request(method, "/graphql", params=params)


def _codes(response: httpx.Response) -> list[str]:
    return [error["extensions"]["code"] for error in response.json()["errors"]]


@pytest.mark.parametrize("method", ["POST", "GET"])
async def test_a_request_failed_by_a_store_alone_is_503_with_retry_after(
    demo_services: Redstring, method: str
) -> None:
    async with _http(services_with_graph(demo_services, _down())) as http:
        response = await _send(http, method, RETRIEVE, t=DEMO)
    assert response.status_code == 503
    assert response.headers["retry-after"] == "5"
    assert response.json() == UNAVAILABLE_BODY  # the GraphQL body as a 200 carried it
    assert "127.0.0.9" not in response.text
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-request-id"]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["cache-control"] == "no-store"


async def test_a_head_request_failed_by_a_store_is_503_without_a_body(
    demo_services: Redstring,
) -> None:
    async with _http(services_with_graph(demo_services, _down())) as http:
        response = await _send(http, "HEAD", RETRIEVE, t=DEMO)
    assert response.status_code == 503
    assert response.headers["retry-after"] == "5"
    assert response.content == b""


async def test_a_mutation_failed_by_a_store_is_503(demo_services: Redstring) -> None:
    upsert = """mutation ($t: ID!) {
      upsertEntities(tenantId: $t, entities: [{name: "Outage Ltd", entityType: "company"}]) { count }
    }"""
    async with _http(services_with_graph(demo_services, _down())) as http:
        response = await _send(http, "POST", upsert, t=DEMO)
    assert response.status_code == 503
    assert response.headers["retry-after"] == "5"
    assert response.json()["data"] is None
    assert _codes(response) == ["SERVICE_UNAVAILABLE"]


class _SlowThenFailing(CountingGraphStore):
    """`get_entities` fails with `entity_error`; `entity_types` fails with `types_error`
    a moment later, so that both errors are in the response, `entity`'s first."""

    def __init__(self, inner: Any, entity_error: Exception, types_error: Exception) -> None:
        super().__init__(inner)
        self.entity_error = entity_error
        self.types_error = types_error

    async def get_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> list[Entity]:
        raise self.entity_error

    async def entity_types(
        self, tenant_id: TenantId, *, limit: int | None = None, after: str | None = None
    ) -> dict[str, int]:
        await asyncio.sleep(0.01)
        raise self.types_error


async def test_every_root_field_failed_by_a_store_is_503(demo_services: Redstring) -> None:
    store = _SlowThenFailing(
        demo_services.graph, StoreUnavailableError("down"), StoreUnavailableError("down")
    )
    async with _http(services_with_graph(demo_services, store)) as http:
        response = await _send(http, "POST", ENTITY_AND_TYPES, t=DEMO, id=ACME_ID)
    assert response.status_code == 503
    assert response.headers["retry-after"] == "5"
    assert response.json()["data"] is None
    assert _codes(response) == ["SERVICE_UNAVAILABLE", "SERVICE_UNAVAILABLE"]


@pytest.mark.parametrize(
    ("entity_wait", "types_wait"),
    [(None, 17.0), (17.0, None), (2.5, 17.0), (17.0, 2.5), (16.2, 2.5)],
)
async def test_of_several_outages_the_503_asks_for_the_longest_wait_one_named(
    demo_services: Redstring, entity_wait: float | None, types_wait: float | None
) -> None:
    """An outage that named no wait (Neo4j's) beside one that did leaves the named wait;
    of two, the longer, whichever came first."""
    store = _SlowThenFailing(
        demo_services.graph,
        StoreUnavailableError("down", retry_after=entity_wait),
        StoreUnavailableError("throttled", retry_after=types_wait),
    )
    async with _http(services_with_graph(demo_services, store)) as http:
        response = await _send(http, "POST", ENTITY_AND_TYPES, t=DEMO, id=ACME_ID)
    assert response.status_code == 503
    assert _codes(response) == ["SERVICE_UNAVAILABLE", "SERVICE_UNAVAILABLE"]
    assert response.headers["retry-after"] == "17"


async def test_a_wait_named_in_one_request_is_not_asked_for_in_the_next(
    demo_services: Redstring,
) -> None:
    named: list[float | None] = [17.0]
    store = FailingGraphStore(lambda: StoreUnavailableError("down", retry_after=named[0]))
    async with _http(services_with_graph(demo_services, store)) as http:
        first = await _send(http, "POST", RETRIEVE, t=DEMO)
        named[0] = None
        second = await _send(http, "POST", RETRIEVE, t=DEMO)
    assert (first.status_code, first.headers["retry-after"]) == (503, "17")
    assert (second.status_code, second.headers["retry-after"]) == (503, "5")


async def test_no_data_with_an_error_a_retry_would_not_cure_stays_200(
    demo_services: Redstring,
) -> None:
    """The same request later would fail again on its other error: not a 503."""
    store = _SlowThenFailing(
        demo_services.graph, StoreUnavailableError("down"), InvalidInputError("bad after")
    )
    async with _http(services_with_graph(demo_services, store)) as http:
        response = await _send(http, "POST", ENTITY_AND_TYPES, t=DEMO, id=ACME_ID)
    assert response.status_code == 200
    assert "retry-after" not in response.headers
    assert response.json()["data"] is None
    assert _codes(response) == ["SERVICE_UNAVAILABLE", "BAD_USER_INPUT"]


class _RelationshipsDown(CountingGraphStore):
    async def relationships_of(self, *args: Any, **kwargs: Any) -> Any:
        raise StoreUnavailableError("down")


@pytest.mark.parametrize("method", ["POST", "GET"])
async def test_a_partial_result_stays_200_without_retry_after(
    demo_services: Redstring, method: str
) -> None:
    store = _RelationshipsDown(demo_services.graph)
    query = """query ($t: ID!, $id: ID!) {
      plain: entity(tenantId: $t, id: $id) { name }
      walked: entity(tenantId: $t, id: $id) { name relationships { id } }
    }"""
    async with _http(services_with_graph(demo_services, store)) as http:
        response = await _send(http, method, query, t=DEMO, id=ACME_ID)
    assert response.status_code == 200
    assert "retry-after" not in response.headers
    assert response.json()["data"] == {"plain": {"name": "Acme Corp"}, "walked": None}
    assert _codes(response) == ["SERVICE_UNAVAILABLE"]


async def test_a_nullable_root_field_failed_by_a_store_stays_200(
    demo_services: Redstring,
) -> None:
    """`data` is not null (`{"entity": null}`): GraphQL over HTTP asks for a 200."""
    query = "query ($t: ID!, $id: ID!) { entity(tenantId: $t, id: $id) { name } }"
    async with _http(services_with_graph(demo_services, _down())) as http:
        response = await _send(http, "POST", query, t=DEMO, id=ACME_ID)
    assert response.status_code == 200
    assert "retry-after" not in response.headers
    assert response.json()["data"] == {"entity": None}
    assert _codes(response) == ["SERVICE_UNAVAILABLE"]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"query": "{ nope }"}, 200, "GRAPHQL_VALIDATION_FAILED"),
        ({"query": "{"}, 200, "GRAPHQL_PARSE_FAILED"),
        ({"query": '{ retrieve(query: " ", tenantId: "x") { query } }'}, 200, "BAD_USER_INPUT"),
        ([{"query": "{ __typename }"}, {"query": "{ __typename }"}], 400, "BAD_REQUEST"),
    ],
    ids=["validation", "parse", "bad-input", "batch"],
)
async def test_other_failures_keep_their_status_even_with_a_store_down(
    demo_services: Redstring, body: object, status: int, code: str
) -> None:
    async with _http(services_with_graph(demo_services, _down())) as http:
        response = await http.post("/graphql", json=body)
    assert response.status_code == status
    assert "retry-after" not in response.headers
    assert _codes(response) == [code]


async def test_an_internal_failure_of_the_whole_request_stays_200(
    demo_services: Redstring, caplog: pytest.LogCaptureFixture
) -> None:
    broken = FailingGraphStore(lambda: RuntimeError("a bug"))
    with caplog.at_level(logging.CRITICAL, logger="redstring.api"):
        async with _http(services_with_graph(demo_services, broken)) as http:
            response = await _send(http, "POST", RETRIEVE, t=DEMO)
    assert response.status_code == 200
    assert "retry-after" not in response.headers
    assert _codes(response) == ["INTERNAL_SERVER_ERROR"]


async def test_a_store_outage_is_one_warning_then_the_count_of_the_others(
    demo_services: Redstring, caplog: pytest.LogCaptureFixture
) -> None:
    """Every request of an outage fails alike: its first is a WARNING, the others within
    the window are counted, and a count left when the app stops is logged then."""
    app = create_app(Settings(), services=services_with_graph(demo_services, _down()))
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http,
    ):
        for _ in range(3):
            response = await _send(http, "POST", RETRIEVE, t=DEMO)
            assert response.status_code == 503
        assert _warnings(caplog) == ["store unavailable at retrieve: bolt://127.0.0.9:7687 refused"]

    assert _warnings(caplog)[1:] == [
        "store unavailable at retrieve: bolt://127.0.0.9:7687 refused"
        " (2 like it left out in the last 0 s; this is the last)"
    ]


async def test_each_internal_error_is_logged_with_its_traceback(
    demo_services: Redstring, caplog: pytest.LogCaptureFixture
) -> None:
    """A bug is never left out as a repeated line: each request it fails logs it."""
    broken = FailingGraphStore(lambda: RuntimeError("a bug"))
    async with _http(services_with_graph(demo_services, broken)) as http:
        for _ in range(3):
            await _send(http, "POST", RETRIEVE, t=DEMO)
    lines = [r for r in caplog.records if r.name == "redstring.api" and r.levelno >= logging.ERROR]
    assert [r.getMessage() for r in lines] == ["internal error at retrieve: a bug"] * 3
    assert all(r.exc_info is not None for r in lines)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "redstring.api"
        and r.levelno == logging.WARNING
        and r.getMessage().startswith("store unavailable")
    ]


async def test_the_503_is_logged_and_counted_as_answered(
    demo_services: Redstring, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="redstring.api.access")
    async with _http(services_with_graph(demo_services, _down())) as http:
        response = await _send(http, "POST", RETRIEVE, t=DEMO)
        metrics = (await http.get("/metrics")).text
    [line] = [
        r for r in caplog.records if r.name == "redstring.api.access" and r.path == "/graphql"
    ]
    assert (line.status, line.operation) == (503, "Find")
    assert (line.outcome, line.error_codes) == ("SERVICE_UNAVAILABLE", ["SERVICE_UNAVAILABLE"])
    assert line.request_id == response.headers["x-request-id"]
    counted = {
        sample.labels["outcome"]: sample.value
        for family in text_string_to_metric_families(metrics)
        for sample in family.samples
        if sample.name == "redstring_requests_total" and sample.labels["operation"] == "Find"
    }
    assert counted == {"SERVICE_UNAVAILABLE": 1.0}


async def test_a_page_of_a_listed_origin_reads_the_503_and_its_retry_after(
    demo_services: Redstring,
) -> None:
    settings = Settings(cors_origins="https://app.example")  # type: ignore[arg-type]
    async with _http(services_with_graph(demo_services, _down()), settings) as http:
        response = await http.post(
            "/graphql",
            json={"query": RETRIEVE, "variables": {"t": DEMO}},
            headers={"origin": "https://app.example"},
        )
    assert response.status_code == 503
    assert response.headers["access-control-allow-origin"] == "https://app.example"
    exposed = response.headers["access-control-expose-headers"].lower().replace(" ", "")
    assert "retry-after" in exposed.split(",")
    assert response.headers["retry-after"] == "5"


async def test_a_gateway_s_fetches_on_a_store_down(demo_services: Redstring) -> None:
    """`_entities` answers its list, each item null with its error: a 200. A root field
    the store alone failed is a 503, for a gateway as for any client."""
    entities = """query ($representations: [_Any!]!) {
      _entities(representations: $representations) { ... on Entity { name } }
    }"""
    reference = {"__typename": "Entity", "tenantId": DEMO, "id": ACME_ID}
    settings = Settings(federation=True)
    async with _http(services_with_graph(demo_services, _down()), settings) as http:
        items = await _send(http, "POST", entities, representations=[reference, reference])
        root = await _send(http, "POST", RETRIEVE, t=DEMO)
    assert items.status_code == 200
    assert "retry-after" not in items.headers
    assert items.json()["data"] == {"_entities": [None, None]}
    assert _codes(items) == ["SERVICE_UNAVAILABLE", "SERVICE_UNAVAILABLE"]  # one an item
    assert root.status_code == 503
    assert root.headers["retry-after"] == "5"
    assert root.json() == UNAVAILABLE_BODY
