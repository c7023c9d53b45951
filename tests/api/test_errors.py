"""Every failure reaches the client as a coded GraphQL error; internal ones are masked."""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

import httpx
import pytest
import strawberry

from redstring import StoreUnavailableError
from redstring.api.endpoint import GraphQLEndpoint
from redstring.api.limits import Limits
from redstring.api.schema.build import RedstringSchema, schema_extensions
from redstring.api.settings import Settings
from redstring.composition.client import Redstring
from tests.api.conftest import MakeClient
from tests.api.doubles import CountingGraphStore, FailingGraphStore
from tests.api.support import DEMO, GraphQLClient, memory_services, services_with_graph
from tests.api.test_retrieve import ACME_ID
from tests.unit.test_id_arguments import LOOKALIKES

RETRIEVE = """query ($q: String!, $t: ID!, $k: Int!) {
  retrieve(query: $q, tenantId: $t, k: $k) { matches { entity { name } } }
}"""


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"q": "   ", "t": DEMO, "k": 5}, "query must not be blank"),
        ({"q": "Acme", "t": DEMO, "k": -1}, "k must not be negative, got -1"),
        ({"q": "Acme", "t": "not-a-uuid", "k": 5}, "tenantId must be a UUID, got 'not-a-uuid'"),
        ({"q": "Acme", "t": DEMO, "k": 101}, "k must be at most 100, got 101"),
        ({"q": "x" * 1001, "t": DEMO, "k": 5}, "query is 1001 characters long; the limit is 1000"),
    ],
)
async def test_bad_retrieve_arguments_are_bad_user_input(
    client: GraphQLClient, variables: dict[str, object], message: str
) -> None:
    error = await client.error(RETRIEVE, **variables)
    assert error["extensions"] == {"code": "BAD_USER_INPUT"}
    assert error["message"] == message
    assert error["path"] == ["retrieve"]


async def test_a_query_with_a_lone_surrogate_is_bad_user_input(client: GraphQLClient) -> None:
    """JSON's `\\ud800` escape: an HTTP embedding provider could not send it on."""
    body = json.dumps({"query": RETRIEVE, "variables": {"q": "acme\ud800", "t": DEMO, "k": 5}})
    response = await client.http.post(
        "/graphql", content=body, headers={"content-type": "application/json"}
    )
    [error] = response.json()["errors"]
    assert error["extensions"] == {"code": "BAD_USER_INPUT"}
    assert (
        error["message"] == "query contains a lone surrogate at position 4, which cannot be stored"
    )


@pytest.mark.parametrize(("first", "message"), [(-1, "not be negative"), (201, "at most 200")])
async def test_bad_first_is_bad_user_input(client: GraphQLClient, first: int, message: str) -> None:
    body = await client.execute(
        """query ($t: ID!, $first: Int!) {
             retrieve(query: "Acme", tenantId: $t, k: 1) {
               matches { entity { relationships(first: $first) { id } } }
             }
           }""",
        t=DEMO,
        first=first,
    )
    [error] = body["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert message in error["message"]


async def test_malformed_entity_id_is_bad_user_input(client: GraphQLClient) -> None:
    error = await client.error(
        'query ($t: ID!) { entity(tenantId: $t, id: "42") { name } }', t=DEMO
    )
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert error["message"] == "id must be a UUID, got '42'"


@pytest.mark.parametrize("lookalike", LOOKALIKES)
async def test_a_string_that_only_int_reads_as_hex_is_no_id(
    client: GraphQLClient, lookalike: str
) -> None:
    """`docs/api.md`: a value that is not a UUID is `BAD_USER_INPUT`, in every argument
    that takes one (`uuid.UUID(text)` read these, some as another UUID)."""
    shown = repr(lookalike)
    other = str(uuid.uuid4())  # the refused mutations write nothing, in a tenant of their own
    calls = [
        (RETRIEVE, {"q": "Acme", "t": lookalike, "k": 5}, f"tenantId must be a UUID, got {shown}"),
        (
            "query ($t: ID!, $id: ID!) { entity(tenantId: $t, id: $id) { name } }",
            {"t": DEMO, "id": lookalike},
            f"id must be a UUID, got {shown}",
        ),
        (
            """mutation ($t: ID!, $e: [EntityInput!]!) {
                 upsertEntities(tenantId: $t, entities: $e) { count } }""",
            {"t": other, "e": [{"id": lookalike, "name": "Acme", "entityType": "company"}]},
            f"entities[0].id must be a UUID, got {shown}",
        ),
        (
            "mutation ($t: ID!, $ids: [ID!]!) { deleteEntities(tenantId: $t, ids: $ids) { count } }",
            {"t": other, "ids": [lookalike]},
            f"ids[0] must be a UUID, got {shown}",
        ),
    ]
    for query, variables, message in calls:
        error = await client.error(query, **variables)
        assert (error["extensions"]["code"], error["message"]) == ("BAD_USER_INPUT", message)


async def test_document_errors_have_their_own_codes(client: GraphQLClient) -> None:
    syntax = await client.error("{ retrieve(query: ")
    assert syntax["extensions"]["code"] == "GRAPHQL_PARSE_FAILED"
    unknown = await client.error("{ nothing }")
    assert unknown["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
    wrong_type = await client.error(RETRIEVE, q="Acme", t=DEMO, k="ten")
    assert wrong_type["extensions"]["code"] == "BAD_USER_INPUT"
    assert "$k" in wrong_type["message"]


async def test_too_deep_a_query_is_refused(
    make_client: MakeClient, demo_services: Redstring
) -> None:
    client = make_client(demo_services, Settings(max_depth=4))
    error = await client.error(
        """query ($t: ID!) { retrieve(query: "Acme", tenantId: $t) {
             matches { entity { relationships { target { name } } } } } }""",
        t=DEMO,
    )
    assert error["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
    assert "exceeds maximum operation depth of 4" in error["message"]


async def test_too_many_aliases_are_refused(
    make_client: MakeClient, demo_services: Redstring
) -> None:
    client = make_client(demo_services, Settings(max_aliases=2))
    aliased = " ".join(f'a{i}: retrieve(query: "Acme", tenantId: $t) {{ query }}' for i in range(3))
    error = await client.error(f"query ($t: ID!) {{ {aliased} }}", t=DEMO)
    assert error["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"


@pytest.mark.parametrize(
    ("query", "variables"),
    [
        ("{ retrieve(query: ", {}),
        ("{ nothing }", {}),
        (RETRIEVE, {"q": "Acme", "t": DEMO, "k": "ten"}),
    ],
    ids=["parse", "validation", "variables"],
)
async def test_a_request_refused_before_execution_has_no_data(
    client: GraphQLClient, query: str, variables: dict[str, Any]
) -> None:
    body = await client.execute(query, **variables)
    assert body["errors"]
    assert "data" not in body


async def test_store_down_is_service_unavailable(
    make_client: MakeClient, demo_services: Redstring, caplog: pytest.LogCaptureFixture
) -> None:
    down = FailingGraphStore(lambda: StoreUnavailableError("bolt://10.1.2.3:7687 refused"))
    client = make_client(services_with_graph(demo_services, down))
    with caplog.at_level(logging.WARNING, logger="redstring.api"):
        response = await client.http.post(
            "/graphql", json={"query": RETRIEVE, "variables": {"q": "Acme", "t": DEMO, "k": 5}}
        )
    assert response.status_code == 503  # no data: the whole request failed for the store
    body = response.json()
    [error] = body["errors"]
    assert error["extensions"] == {"code": "SERVICE_UNAVAILABLE"}
    assert body["data"] is None  # failed while executing: `data` is there, null
    assert "10.1.2.3" not in str(body)
    assert "10.1.2.3" in caplog.text  # the cause is logged server-side


async def test_unexpected_failure_is_masked_and_logged(
    make_client: MakeClient, demo_services: Redstring, caplog: pytest.LogCaptureFixture
) -> None:
    broken = FailingGraphStore(lambda: RuntimeError("secret-internal-detail in graph store"))
    client = make_client(services_with_graph(demo_services, broken))
    with caplog.at_level(logging.ERROR, logger="redstring.api"):
        response = await client.http.post(
            "/graphql",
            json={"query": RETRIEVE, "variables": {"q": "Acme", "t": DEMO, "k": 5}},
        )
    assert response.status_code == 200
    text = response.text
    assert "secret-internal-detail" not in text
    assert "Traceback" not in text
    assert "RuntimeError" not in text
    [error] = response.json()["errors"]
    assert error["message"] == "Internal server error"
    assert error["extensions"] == {"code": "INTERNAL_SERVER_ERROR"}
    assert "secret-internal-detail" in caplog.text
    assert "Traceback" in caplog.text  # logged with its stack, server-side only


async def test_a_plain_value_error_is_not_trusted_as_bad_input(
    make_client: MakeClient, demo_services: Redstring
) -> None:
    broken = FailingGraphStore(lambda: ValueError("driver said: row 7 of /var/lib/x"))
    client = make_client(services_with_graph(demo_services, broken))
    body = await client.execute(RETRIEVE, q="Acme", t=DEMO, k=5)
    [error] = body["errors"]
    assert error["extensions"]["code"] == "INTERNAL_SERVER_ERROR"
    assert "/var/lib/x" not in str(body)


async def test_failure_in_a_nested_field_keeps_the_rest_of_the_data(
    make_client: MakeClient, demo_services: Redstring
) -> None:
    """A failing relationship walk nulls its nearest nullable parent; siblings keep their data."""

    class RelationshipsBroken(CountingGraphStore):
        async def relationships_of(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("hidden detail")

    client = make_client(
        services_with_graph(demo_services, RelationshipsBroken(demo_services.graph))
    )
    body = await client.execute(
        """query ($t: ID!, $id: ID!) {
             plain: entity(tenantId: $t, id: $id) { name }
             walked: entity(tenantId: $t, id: $id) { name relationships { id } }
           }""",
        t=DEMO,
        id=ACME_ID,
    )
    assert body["data"] == {"plain": {"name": "Acme Corp"}, "walked": None}
    [error] = body["errors"]
    assert error["path"] == ["walked", "relationships"]
    assert error["extensions"] == {"code": "INTERNAL_SERVER_ERROR"}
    assert "hidden detail" not in str(body)


async def test_user_errors_are_not_logged_as_server_errors(
    client: GraphQLClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        await client.error(RETRIEVE, q=" ", t=DEMO, k=5)
        await client.error("{ nothing }")
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    said = [r for r in caplog.records if "BAD_USER_INPUT at" in r.getMessage()]
    assert said
    assert {r.levelno for r in said} == {logging.DEBUG}


# A variable with a default passes validation where its argument is non-null, so the
# null a request sends for it is only found when graphql-core coerces the argument,
# while it executes: at a root field, a nested field, or a nested field's directive.
@pytest.mark.parametrize(
    ("query", "message"),
    [
        pytest.param(
            'query ($v: String = "x", $t: ID!) { retrieve(query: $v, tenantId: $t) { query } }',
            "Argument 'query' has invalid value",
            id="root-field",
        ),
        pytest.param(
            """query ($v: Int = 3, $t: ID!) {
                 retrieve(query: "Acme", tenantId: $t, k: 1) {
                   matches { entity { relationships(first: $v) { id } } }
                 }
               }""",
            "Argument 'first' has invalid value",
            id="nested-field",
        ),
        pytest.param(
            """query ($v: Boolean = true, $t: ID!) {
                 retrieve(query: "Acme", tenantId: $t, k: 1) { matches { score @skip(if: $v) } }
               }""",
            "Argument 'if' has invalid value",
            id="nested-directive",
        ),
    ],
)
async def test_an_argument_graphql_cannot_coerce_is_bad_user_input(
    client: GraphQLClient, caplog: pytest.LogCaptureFixture, query: str, message: str
) -> None:
    """Was `INTERNAL_SERVER_ERROR`, logged at ERROR with a traceback: graphql-core's own
    error at a field's path was taken for a value a resolver returned wrong."""
    with caplog.at_level(logging.DEBUG):
        body = await client.execute(query, v=None, t=DEMO)
    [error] = body["errors"]
    assert error["extensions"] == {"code": "BAD_USER_INPUT"}
    assert error["message"].startswith(message)
    assert "not to be None" in error["message"]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    said = [r for r in caplog.records if "BAD_USER_INPUT at" in r.getMessage()]
    assert {r.levelno for r in said} == {logging.DEBUG}


@strawberry.type
class BrokenQuery:
    """Fields whose resolvers return what their types do not allow: server bugs that
    graphql-core reports with errors of its own at the fields' paths."""

    @strawberry.field
    def numbers(self) -> list[int]:
        return 7  # type: ignore[return-value]

    @strawberry.field
    def name(self) -> str:
        return None  # type: ignore[return-value]


@pytest.mark.parametrize("field", ["numbers", "name"])
async def test_a_value_a_resolver_returned_wrong_stays_an_internal_error(
    caplog: pytest.LogCaptureFixture, field: str
) -> None:
    """graphql-core's own errors ("Expected Iterable", "Cannot return null") at a path
    are the server's bugs, not the client's, unlike its argument coercion errors."""
    limits = Limits()
    schema = RedstringSchema(query=BrokenQuery, extensions=schema_extensions(limits))
    services = memory_services()
    endpoint = GraphQLEndpoint(schema, services=lambda: services, limits=limits)
    transport = httpx.ASGITransport(app=endpoint)
    with caplog.at_level(logging.ERROR, logger="redstring.api"):
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            response = await http.post("/graphql", json={"query": f"{{ {field} }}"})
    [error] = response.json()["errors"]
    assert error["extensions"] == {"code": "INTERNAL_SERVER_ERROR"}
    assert error["message"] == "Internal server error"
    assert [r.levelno for r in caplog.records] == [logging.ERROR]
