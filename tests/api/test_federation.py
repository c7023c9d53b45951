"""The Federation 2 subgraph: `Entity` keyed by `tenantId id`, resolved in batches, per tenant."""

from __future__ import annotations

import copy
import uuid
from pathlib import Path
from typing import Any

import pytest

from redstring.api.authorization import Caller
from redstring.api.context import RequestContext
from redstring.api.demo import DEMO_TENANT_ID, demo_dataset
from redstring.api.schema.build import build_schema, schema_sdl
from redstring.api.settings import Settings
from redstring.composition.client import Redstring
from redstring.domain.ids import TenantId, entity_id_for
from tests.api.conftest import MakeClient
from tests.api.support import DEMO, GraphQLClient, counting_client

FEDERATED_SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schema.federation.graphql"
KEY = '@key(fields: "tenantId id")'
ACME_ID = str(entity_id_for(DEMO_TENANT_ID, "company", "Acme Corp"))

ENTITIES = """
query ($representations: [_Any!]!) {
  _entities(representations: $representations) { ... on Entity { id tenantId name } }
}
"""


def _representation(tenant_id: str, entity_id: str) -> dict[str, str]:
    return {"__typename": "Entity", "tenantId": tenant_id, "id": entity_id}


def _ten_demo_companies() -> list[tuple[str, str]]:
    """(id, name) of ten demo companies, in a fixed order."""
    entities, _ = demo_dataset()
    companies = sorted((e for e in entities if e.entity_type == "company"), key=lambda e: e.name)
    return [(str(e.id), e.name) for e in companies[:10]]


@pytest.fixture
def federated(make_client: MakeClient, demo_services: Redstring) -> GraphQLClient:
    return make_client(demo_services, Settings(federation=True))


def test_committed_federated_schema_matches_the_code() -> None:
    assert FEDERATED_SCHEMA_FILE.read_text(encoding="utf-8") == schema_sdl(federation=True), (
        "schema.federation.graphql is stale: write schema_sdl(federation=True) into it"
    )


def test_only_the_federated_schema_has_the_key_and_the_federation_fields() -> None:
    federated, plain = schema_sdl(federation=True), schema_sdl()
    assert f"type Entity {KEY} {{" in federated
    assert "_entities(representations: [_Any!]!): [_Entity]!" in federated
    assert "@key" not in plain
    assert "_service" not in plain
    assert "_entities" not in plain


async def test_service_sdl_is_the_subgraph_sdl(federated: GraphQLClient) -> None:
    data = await federated.data("{ _service { sdl } }")
    sdl = data["_service"]["sdl"]
    assert KEY in sdl
    assert sdl + "\n" == FEDERATED_SCHEMA_FILE.read_text(encoding="utf-8")


async def test_the_plain_schema_is_served_by_default(client: GraphQLClient) -> None:
    error = await client.error("{ _service { sdl } }")
    assert error["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"


async def test_ten_representations_cost_one_get_entities_call(
    make_client: MakeClient, demo_services: Redstring
) -> None:
    counting, client = counting_client(make_client, demo_services, Settings(federation=True))
    companies = _ten_demo_companies()
    data = await client.data(
        ENTITIES, representations=[_representation(DEMO, id_) for id_, _ in companies]
    )
    assert [(e["id"], e["name"]) for e in data["_entities"]] == companies
    assert {e["tenantId"] for e in data["_entities"]} == {DEMO}
    assert counting.calls["get_entities"] == 1
    assert sum(counting.calls.values()) == 1


async def test_entities_walk_on_into_relationships_in_batches(
    make_client: MakeClient, demo_services: Redstring
) -> None:
    counting, client = counting_client(make_client, demo_services, Settings(federation=True))
    data = await client.data(
        """query ($representations: [_Any!]!) {
             _entities(representations: $representations) {
               ... on Entity { name relationships(first: 3) { target { name } } }
             }
           }""",
        representations=[_representation(DEMO, id_) for id_, _ in _ten_demo_companies()],
    )
    assert all(len(e["relationships"]) == 3 for e in data["_entities"])
    # The representations, then the relationships with all their targets.
    assert counting.calls == {"get_entities": 1, "relationships_with_ends": 1}


async def test_another_tenants_id_resolves_to_null(
    make_client: MakeClient, demo_services: Redstring
) -> None:
    counting, client = counting_client(make_client, demo_services, Settings(federation=True))
    other = str(uuid.uuid4())
    data = await client.data(
        ENTITIES,
        representations=[
            _representation(other, ACME_ID),  # Acme's id, asked for in another tenant
            _representation(DEMO, ACME_ID),
            _representation(DEMO, str(uuid.uuid4())),  # no such entity
        ],
    )
    assert data["_entities"] == [None, {"id": ACME_ID, "tenantId": DEMO, "name": "Acme Corp"}, None]
    assert counting.calls["get_entities"] == 2  # one per tenant


async def test_a_malformed_representation_is_bad_user_input(federated: GraphQLClient) -> None:
    body = await federated.execute(
        ENTITIES,
        representations=[
            {"__typename": "Entity", "id": ACME_ID},
            _representation(DEMO, "42"),
            _representation(DEMO, ACME_ID),
        ],
    )
    assert body["data"]["_entities"][:2] == [None, None]
    assert body["data"]["_entities"][2]["name"] == "Acme Corp"
    messages = {e["message"]: e["extensions"]["code"] for e in body["errors"]}
    assert messages == {
        "an Entity representation needs tenantId as a string": "BAD_USER_INPUT",
        "id must be a UUID, got '42'": "BAD_USER_INPUT",
    }


@pytest.mark.parametrize("key", ["cls", "info", "self", "root", "representation", "extra"])
async def test_a_representations_extra_key_is_ignored(
    federated: GraphQLClient, caplog: pytest.LogCaptureFixture, key: str
) -> None:
    """A key beside `tenantId` and `id` is ignored, whatever its name: none collides
    with a parameter of `resolve_reference` (`cls` did, an internal error each time)."""
    representation = {**_representation(DEMO, ACME_ID), key: "x"}
    data = await federated.data(ENTITIES, representations=[representation])
    assert data["_entities"] == [{"id": ACME_ID, "tenantId": DEMO, "name": "Acme Corp"}]
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


async def test_a_representation_of_no_entity_type_is_bad_user_input(
    federated: GraphQLClient, caplog: pytest.LogCaptureFixture
) -> None:
    body = await federated.execute(
        ENTITIES,
        representations=[
            {"__typename": "Nope", "tenantId": DEMO, "id": ACME_ID},
            {"tenantId": DEMO, "id": ACME_ID},
            1,
            {"__typename": "Relationship", "id": ACME_ID},
            _representation(DEMO, ACME_ID),
        ],
    )
    assert body["data"]["_entities"][:4] == [None] * 4
    assert body["data"]["_entities"][4]["name"] == "Acme Corp"
    errors = sorted((e["path"][1], e["extensions"]["code"], e["message"]) for e in body["errors"])
    assert errors == [
        (0, "BAD_USER_INPUT", "a representation's __typename must be Entity, got 'Nope'"),
        (1, "BAD_USER_INPUT", "a representation needs __typename Entity"),
        (2, "BAD_USER_INPUT", "a representation must be an object"),
        (3, "BAD_USER_INPUT", "a representation's __typename must be Entity, got 'Relationship'"),
    ]
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


async def _as_caller(services: Redstring, caller: Caller, query: str, **variables: Any) -> Any:
    schema = build_schema(federation=True)
    context = RequestContext(client=services, caller=caller)
    # Strawberry pops `__typename` off each representation: hand it a copy.
    fresh = copy.deepcopy(variables)
    return await schema.execute(query, variable_values=fresh, context_value=context)


@pytest.mark.parametrize(
    ("query", "variables"),
    [
        (
            "query ($t: ID!, $id: ID!) { entity(tenantId: $t, id: $id) { name } }",
            {"t": DEMO, "id": ACME_ID},
        ),
        (ENTITIES, {"representations": [_representation(DEMO, ACME_ID)]}),
    ],
    ids=["entity", "_entities"],
)
async def test_tenant_authorisation_applies_to_entities_as_to_entity(
    demo_services: Redstring, query: str, variables: dict[str, Any]
) -> None:
    elsewhere = Caller(subject="someone", tenants=frozenset({TenantId(uuid.uuid4())}))
    refused = await _as_caller(demo_services, elsewhere, query, **variables)
    [error] = refused.errors
    assert error.extensions == {"code": "FORBIDDEN"}
    allowed = Caller(subject="someone", tenants=frozenset({DEMO_TENANT_ID}))
    granted = await _as_caller(demo_services, allowed, query, **variables)
    assert granted.errors is None
    assert "Acme Corp" in str(granted.data)
