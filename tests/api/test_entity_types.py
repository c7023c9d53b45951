"""`entityTypes`: a tenant's entity types with their counts, for a search box's type filters."""

from __future__ import annotations

from collections import Counter

import pytest

from redstring.api.demo import DEMO_TENANT_ID, demo_dataset
from redstring.api.settings import Settings
from redstring.composition.client import Redstring
from redstring.domain.errors import StoreUnavailableError
from redstring.testing import make_entity, new_tenant
from tests.api.conftest import MakeClient
from tests.api.doubles import FailingGraphStore
from tests.api.support import DEMO, GraphQLClient, counting_client, services_with_graph

ENTITY_TYPES = "query ($t: ID!) { entityTypes(tenantId: $t) { entityType count } }"
FIRST_TYPES = """query ($t: ID!, $first: Int!) {
  entityTypes(tenantId: $t, first: $first) { entityType count }
}"""
UPSERT = """mutation ($t: ID!, $e: [EntityInput!]!) {
  upsertEntities(tenantId: $t, entities: $e) { count }
}"""
DEMO_TYPES = [
    {"entityType": "city", "count": 30},
    {"entityType": "company", "count": 45},
    {"entityType": "country", "count": 4},
    {"entityType": "industry", "count": 10},
    {"entityType": "person", "count": 120},
    {"entityType": "product", "count": 112},
]


async def test_the_demo_tenant_has_six_types_by_name_with_their_counts(
    client: GraphQLClient,
) -> None:
    data = await client.data(ENTITY_TYPES, t=DEMO)
    assert data["entityTypes"] == DEMO_TYPES
    entities, _ = demo_dataset()
    counted = Counter(e.entity_type for e in entities if e.tenant_id == DEMO_TENANT_ID)
    assert {t["entityType"]: t["count"] for t in DEMO_TYPES} == counted
    assert sum(t["count"] for t in DEMO_TYPES) == 321  # the README's figure


async def test_a_tenant_without_entities_has_no_types(client: GraphQLClient) -> None:
    assert await client.data(ENTITY_TYPES, t=str(new_tenant())) == {"entityTypes": []}


async def test_types_follow_the_mutations_and_differ_in_case(
    make_client: MakeClient, fresh_services: Redstring
) -> None:
    client, tenant = make_client(fresh_services), str(new_tenant())
    entities = [
        {"name": "Quayside Ferries", "entityType": "company"},
        {"name": "Brackwater Mills", "entityType": "Company"},
        {"name": "Mara Quist", "entityType": "person"},
    ]
    await client.data(UPSERT, t=tenant, e=entities)
    data = await client.data(ENTITY_TYPES, t=tenant)
    assert data["entityTypes"] == [
        {"entityType": "Company", "count": 1},
        {"entityType": "company", "count": 1},
        {"entityType": "person", "count": 1},
    ]
    filtered = await client.data(
        """query ($t: ID!) {
          retrieve(query: "Brackwater Mills", tenantId: $t, entityTypes: ["Company"]) {
            matches { entity { name } }
          }
        }""",
        t=tenant,
    )
    names = [m["entity"]["name"] for m in filtered["retrieve"]["matches"]]
    assert names == ["Brackwater Mills"]  # a listed type is a filter that finds its entities


@pytest.mark.parametrize("first", [0, 1, 5, 6, 200])
async def test_first_keeps_the_first_types_by_name(client: GraphQLClient, first: int) -> None:
    data = await client.data(FIRST_TYPES, t=DEMO, first=first)
    assert data["entityTypes"] == DEMO_TYPES[:first]


async def test_a_hundred_types_by_default_of_a_tenant_with_more(
    make_client: MakeClient, fresh_services: Redstring
) -> None:
    """A tenant may have as many types as entities; the list is the first hundred, in
    the order of the whole list, not the first written."""
    tenant = new_tenant()
    types = [f"kind {n:03}" for n in range(150, 0, -1)]
    await fresh_services.upsert([make_entity(tenant, f"Thing {t}", t) for t in types])
    client = make_client(fresh_services)
    listed = (await client.data(ENTITY_TYPES, t=str(tenant)))["entityTypes"]
    assert listed == [{"entityType": t, "count": 1} for t in sorted(types)[:100]]


@pytest.mark.parametrize(
    ("first", "message"),
    [(-1, "first must not be negative, got -1"), (201, "first must be at most 200, got 201")],
)
async def test_first_beyond_its_bounds_is_bad_user_input_before_any_store_call(
    make_client: MakeClient, demo_services: Redstring, first: int, message: str
) -> None:
    """As `relationships(first:)`: `REDSTRING_MAX_FIRST` (200) bounds both."""
    counting, client = counting_client(make_client, demo_services)
    error = await client.error(FIRST_TYPES, t=DEMO, first=first)
    assert (error["extensions"], error["message"], error["path"]) == (
        {"code": "BAD_USER_INPUT"},
        message,
        ["entityTypes"],
    )
    assert counting.calls == Counter()
    _, wider = counting_client(make_client, demo_services, Settings(max_first=300))
    assert (await wider.data(FIRST_TYPES, t=DEMO, first=201))["entityTypes"] == DEMO_TYPES


async def test_a_request_reads_the_types_in_one_store_call(
    make_client: MakeClient, demo_services: Redstring
) -> None:
    counting, client = counting_client(make_client, demo_services)
    assert (await client.data(ENTITY_TYPES, t=DEMO))["entityTypes"] == DEMO_TYPES
    assert counting.calls == Counter({"entity_types": 1})


async def test_the_federated_schema_answers_it_alike(
    make_client: MakeClient, demo_services: Redstring
) -> None:
    federated = make_client(demo_services, Settings(federation=True))
    assert (await federated.data(ENTITY_TYPES, t=DEMO))["entityTypes"] == DEMO_TYPES


async def test_a_store_that_is_down_is_service_unavailable(
    make_client: MakeClient, demo_services: Redstring
) -> None:
    down = FailingGraphStore(lambda: StoreUnavailableError("bolt://10.1.2.3:7687 refused"))
    response = await make_client(services_with_graph(demo_services, down)).http.post(
        "/graphql", json={"query": ENTITY_TYPES, "variables": {"t": DEMO}}
    )
    assert response.status_code == 503
    body = response.json()
    assert [e["extensions"] for e in body["errors"]] == [{"code": "SERVICE_UNAVAILABLE"}]
    assert body["data"] is None
    assert "10.1.2.3" not in str(body)


async def test_a_tenant_that_is_no_uuid_is_bad_user_input(client: GraphQLClient) -> None:
    error = await client.error(ENTITY_TYPES, t="acme")
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
