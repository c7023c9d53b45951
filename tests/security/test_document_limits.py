"""What one document may ask for: validation in time linear in the document (finding 1),
a cost limit checked before anything executes (finding 4), the introspection switch,
and one operation chosen per request."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections import Counter
from typing import Any

import httpx
import pytest
from graphql import get_introspection_query, parse

from redstring.api.fragment_order import fragments_in_dependency_order
from redstring.api.graphiql.page import DEFAULT_QUERY
from redstring.api.operation_cost import operation_cost
from redstring.api.schema.build import build_schema
from redstring.api.settings import Settings
from redstring.composition.client import Redstring
from tests.api.conftest import MakeClient, demo_services, make_client  # noqa: F401 (fixtures)
from tests.api.support import DEMO, README_QUERY, counting_client

TENANT = DEMO


def fragment_chain(length: int, first: str, on: str = "Query", root: str = "{ ... }") -> str:
    """`root` with `...` replaced by a spread of `F<length-1>`, where `F0` selects `first`
    and each `Fi` on type `on` spreads `F<i-1>` twice."""
    lines = [root.replace("...", f"...F{length - 1}"), f"fragment F0 on {on} {{ {first} }}"]
    lines += [f"fragment F{i} on {on} {{ ...F{i - 1} ...F{i - 1} }}" for i in range(1, length)]
    return "\n".join(lines)


FINDING_1 = fragment_chain(40, f'retrieve(query: "a", tenantId: "{TENANT}") {{ query }}')

HOPS = "relationships(first: 200) { target { relationships(first: 200) { target { name } } } }"
FINDING_4 = (
    "{ "
    + " ".join(
        f'a{i}: retrieve(query: "acme", tenantId: "{TENANT}", k: 100) '
        f"{{ matches {{ entity {{ {HOPS} }} }} }}"
        for i in range(30)
    )
    + " }"
)


async def _post(client: Any, body: dict[str, Any]) -> httpx.Response:
    response: httpx.Response = await client.http.post("/graphql", json=body)
    return response


# --- finding 1: validation linear in the document -------------------------------------


class _CallCount:
    """Counts Python function calls made while it is active (a deterministic measure of
    work, unlike a duration)."""

    def __init__(self) -> None:
        self.calls = 0

    def __enter__(self) -> _CallCount:
        sys.setprofile(self._count)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)

    def _count(self, frame: object, event: str, arg: object) -> None:
        if event == "call":
            self.calls += 1


RELATIONSHIPS = (
    f'{{ retrieve(query: "acme", tenantId: "{TENANT}", k: 1) '
    "{ matches { entity { relationships(first: 1) { ... } } } } }"
)


@pytest.mark.parametrize(
    ("first", "on", "root"),
    [
        ("__typename", "Query", "{ ... }"),
        ("t: __typename", "Query", "{ ... }"),
        # scalars only: nothing to cost, but `relationships` looks for `source`/`target`
        ("id", "Relationship", RELATIONSHIPS),
    ],
    ids=["depth", "aliases", "selected-ends"],
)
async def test_the_work_of_a_request_grows_linearly_with_a_chain_of_fragments(
    make_client: MakeClient,  # noqa: F811
    demo_services: Redstring,  # noqa: F811
    first: str,
    on: str,
    root: str,
) -> None:
    client = make_client(demo_services, Settings())
    await _post(client, {"query": fragment_chain(3, first, on, root)})  # first-request set-up
    calls = {}
    for length in (9, 18):
        with _CallCount() as counted:
            response = await _post(client, {"query": fragment_chain(length, first, on, root)})
        assert response.status_code == 200
        calls[length] = counted.calls
    # Twice the fragments, at most twice the work; a walk into every spread does
    # 2^9 times the work.
    assert calls[18] < 2 * calls[9], calls


CHAIN_OVER_HTTP = """
import asyncio, json, sys
import httpx
from redstring.api import create_app
from redstring.api.demo import load_demo
from redstring.api.settings import Settings
from tests.api.support import memory_services

async def main():
    services = memory_services()
    await load_demo(services)
    app = create_app(Settings(), services=services)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        response = await http.post("/graphql", json={"query": sys.stdin.read()})
    print(json.dumps({"status": response.status_code, "body": response.json()}))

asyncio.run(main())
"""


def test_the_40_fragment_chain_of_finding_1_is_answered() -> None:
    # In a child process: a validation walk that never ends cannot be interrupted from
    # the event loop, only killed. The timeout only guards against that hang.
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(CHAIN_OVER_HTTP)],
            input=FINDING_1,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the 40-fragment chain was not answered within 120 s")
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["status"] == 200
    [error] = answer["body"]["errors"]
    assert error["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
    assert len(FINDING_1.encode()) < 2048


def test_fragments_are_ordered_after_what_they_spread_and_cycles_end() -> None:
    document = parse(
        """{ ...C }
        fragment C on Query { ...B ...A }
        fragment B on Query { ...A }
        fragment A on Query { __typename }
        fragment X on Query { ...Y }
        fragment Y on Query { ...X ...Unknown }"""
    )
    order = [f.name.value for f in fragments_in_dependency_order(document)]
    assert sorted(order) == ["A", "B", "C", "X", "Y"]
    assert order.index("A") < order.index("B") < order.index("C")


def test_a_chain_of_thousands_of_fragments_does_not_exhaust_the_stack() -> None:
    lines = ["fragment F0 on Query { __typename }"]
    lines += [f"fragment F{i} on Query {{ ...F{i - 1} }}" for i in range(1, 5000)]
    order = fragments_in_dependency_order(parse("\n".join(lines)))
    assert [f.name.value for f in order] == [f"F{i}" for i in range(5000)]


@pytest.mark.parametrize(
    "query",
    [
        "{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }",
        "{ ...A } fragment A on Query { __typename ...A }",
        "{ ...A } fragment A on Query { t: __typename ...B ...B } "
        "fragment B on Query { ...A ...A }",
    ],
    ids=["two", "self", "doubling"],
)
async def test_fragment_cycles_are_a_validation_error(
    make_client: MakeClient,  # noqa: F811
    demo_services: Redstring,  # noqa: F811
    query: str,
) -> None:
    body = await make_client(demo_services).execute(query)
    assert body["errors"]
    assert {e["extensions"]["code"] for e in body["errors"]} == {"GRAPHQL_VALIDATION_FAILED"}
    assert any("Cannot spread fragment 'A' within itself" in e["message"] for e in body["errors"])


async def test_the_depth_limit_counts_through_fragments(
    make_client: MakeClient,  # noqa: F811
    demo_services: Redstring,  # noqa: F811
) -> None:
    query = """query Deep($t: ID!) { retrieve(query: "Acme", tenantId: $t, k: 1) { ...M } }
        fragment M on RetrievalResult { matches { entity { ...E } } }
        fragment E on Entity { relationships(first: 1) { target { name } } }"""
    client = make_client(demo_services, Settings(max_depth=4))
    error = await client.error(query, t=TENANT)
    assert error["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
    assert error["message"] == "'Deep' is 5 deep; it exceeds maximum operation depth of 4"
    assert "errors" not in await make_client(demo_services, Settings(max_depth=5)).execute(
        query, t=TENANT
    )


async def test_aliases_count_once_per_spread(
    make_client: MakeClient,  # noqa: F811
    demo_services: Redstring,  # noqa: F811
) -> None:
    query = "{ ...P ...Q } fragment P on Query { a: __typename b: __typename } " + (
        "fragment Q on Query { ...P }"
    )
    error = await make_client(demo_services, Settings(max_aliases=3)).error(query)
    assert error["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
    assert error["message"] == "'anonymous' has 4 aliases; at most 3 are allowed"
    await make_client(demo_services, Settings(max_aliases=4)).data(query)


# --- finding 4: the cost limit ----------------------------------------------------------


async def test_finding_4_is_refused_before_any_store_call(
    make_client: MakeClient,  # noqa: F811
    demo_services: Redstring,  # noqa: F811
) -> None:
    counting, client = counting_client(make_client, demo_services)
    error = await client.error(FINDING_4)
    # one hop: 10 + 200 * (1 + 1 + (10 + 200 * 2)) = 82,410
    # 30 * (500 + 4 ("acme") + 100 + 100 * (1 + 1 + 1 + 82,410)) = 247,257,120
    assert error["extensions"] == {
        "code": "GRAPHQL_VALIDATION_FAILED",
        "cost": 247_257_120,
        "maxCost": 20_000,
    }
    assert "247257120" in error["message"]
    assert counting.calls == Counter()


RETRIEVE = """query ($t: ID!, $k: Int!, $f: Int!) {
  retrieve(query: "Acme", tenantId: $t, k: $k) {
    matches { entity { relationships(first: $f) { target { name } } } }
  }
}"""


@pytest.mark.parametrize(
    ("k", "first", "cost"),
    # search + "Acme" + k * (its part per k + 1 + matches + entity + relationships' call
    # + first * 2)
    [(2, 3, 504 + 2 * (1 + 1 + 1 + 1 + 10 + 3 * 2)), (10, 10, 504 + 10 * (4 + 10 + 10 * 2))],
)
async def test_the_cost_is_computed_with_the_request_variables(
    make_client: MakeClient,  # noqa: F811
    demo_services: Redstring,  # noqa: F811
    k: int,
    first: int,
    cost: int,
) -> None:
    counting, client = counting_client(make_client, demo_services, Settings(max_cost=600))
    body = await client.execute(RETRIEVE, t=TENANT, k=k, f=first)
    if cost <= 600:
        assert "errors" not in body
        assert counting.calls
    else:
        [error] = body["errors"]
        assert error["extensions"] == {
            "code": "GRAPHQL_VALIDATION_FAILED",
            "cost": cost,
            "maxCost": 600,
        }
        assert counting.calls == Counter()


@pytest.mark.parametrize("k", [float("inf"), float("nan"), 1e300, 2**62, 2**31, 2.5])
async def test_a_size_that_is_no_int_is_bad_user_input_not_a_cost_or_internal_error(
    make_client: MakeClient,  # noqa: F811
    demo_services: Redstring,  # noqa: F811
    k: float,
) -> None:
    # json.dumps writes inf and nan as Infinity and NaN, which Python's decoder accepts
    payload = {"query": RETRIEVE, "variables": {"t": TENANT, "k": k, "f": 1}}
    response = await make_client(demo_services).http.post(
        "/graphql", content=json.dumps(payload), headers={"content-type": "application/json"}
    )
    [error] = response.json()["errors"]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert "Int cannot represent" in error["message"]


@pytest.fixture(scope="module")
def schema() -> Any:
    return build_schema()._schema


def _cost(schema: Any, query: str, **variables: Any) -> int | None:
    return operation_cost(schema, parse(query), None, variables)


MATCHES = "matches { entity { name } }"  # 1 + 1 per match
SEARCH = 500  # a retrieve's search, whatever its k, plus 1 per character of its query
ENTITY_TYPES = 3_000  # a scan of the tenant's entities, whatever the tenant's size
TYPES_FIRST = 100  # entityTypes' default `first`: the types it may return
COUNT = 10  # a relationshipCount's call, for each entity it is asked of
RANGES = 3  # a matchedRanges' call, for each match it is asked of


def retrieve_cost(k: int, query: str = "a") -> int:
    """A retrieve of `query` selecting MATCHES: its search, then per k its part of the
    search (1), its result (1), the match (1) and the entity (1)."""
    return SEARCH + len(query) + k * 4


@pytest.mark.parametrize(
    ("query", "variables", "cost"),
    [
        (f'{{ retrieve(query: "a", tenantId: "t", k: 7) {{ {MATCHES} }} }}', {}, retrieve_cost(7)),
        (f'query ($k: Int!) {{ retrieve(query: "a", tenantId: "t", k: $k) {{ {MATCHES} }} }}',
         {"k": 5}, retrieve_cost(5)),
        (f'query ($k: Int! = 4) {{ retrieve(query: "a", tenantId: "t", k: $k) {{ {MATCHES} }} }}',
         {}, retrieve_cost(4)),
        # k not given: its default, 10
        (f'{{ retrieve(query: "a", tenantId: "t") {{ {MATCHES} }} }}', {}, retrieve_cost(10)),
        # selecting no match still searches: the search and its part per k
        ('{ retrieve(query: "a", tenantId: "t", k: 100) { query } }', {}, SEARCH + 1 + 100 * 2),
        # k: 0 searches nothing
        ('{ retrieve(query: "a", tenantId: "t", k: 0) { query } }', {}, 0),
        # each character of the query counts, given as a literal or a variable
        ('query ($q: String!) { retrieve(query: $q, tenantId: "t", k: 1) { query } }',
         {"q": "x" * 1000}, SEARCH + 1000 + 2),
        # first not given: its default, 50; the relationships field's call costs 10
        ('{ entity(tenantId: "t", id: "i") { relationships { target { name } } } }', {},
         1 + 1 * (10 + 50 * 2)),
        # first: 0 returns nothing, but each parent still calls the field
        ('{ entity(tenantId: "t", id: "i") { relationships(first: 0) { target { name } } } }',
         {}, 1 + 10),
        # aliases each count, through a fragment costed once
        ('{ a: retrieve(query: "a", tenantId: "t", k: 2) { ...R } '
         'b: retrieve(query: "a", tenantId: "t", k: 3) { ...R } } '
         f"fragment R on RetrievalResult {{ {MATCHES} }}", {}, retrieve_cost(2) + retrieve_cost(3)),
        ('{ retrieve(query: "Acme Corporation", tenantId: "t", k: 3) { ' + MATCHES + " } }", {},
         retrieve_cost(3, "Acme Corporation")),
        # a fragment spread twice costs twice: two searches
        ('{ ...Q ...Q } fragment Q on Query { retrieve(query: "a", tenantId: "t", k: 1) { query } }',
         {}, 2 * (SEARCH + 1 + 2)),
        # scalars cost nothing
        ('{ __typename }', {}, 0),
        # a mutation costs one per item it writes
        ('mutation ($e: [EntityInput!]!) { upsertEntities(tenantId: "t", entities: $e) { ids } }',
         {"e": [{"name": "a", "entityType": "x"}] * 3}, 3),
        ('mutation { deleteEntities(tenantId: "t", ids: ["a", "b"]) { count } }', {}, 2),
        # a list of types is one scan and `first` types, whatever it selects
        ('{ entityTypes(tenantId: "t") { entityType count } }', {}, ENTITY_TYPES + TYPES_FIRST),
        ('query ($f: Int!) { entityTypes(tenantId: "t", first: $f) { count } }', {"f": 7},
         ENTITY_TYPES + 7),
        # first: 0 lists nothing and scans nothing, as k: 0 searches nothing
        ('{ entityTypes(tenantId: "t", first: 0) { count } }', {}, 0),
        ('{ a: entityTypes(tenantId: "t") { count } b: entityTypes(tenantId: "u") { count } }',
         {}, 2 * (ENTITY_TYPES + TYPES_FIRST)),
        # the next page costs what the first does: the store reads as much to find it
        ('{ entityTypes(tenantId: "t", first: 7, after: "company") { count } }', {},
         ENTITY_TYPES + 7),
        ('query ($c: String) { entity(tenantId: "t", id: "i") { '
         "relationships(first: 3, after: $c) { cursor target { name } } } }", {"c": "x"},
         1 + 1 * (10 + 3 * 2)),
        # a count is a scalar that calls: 10 per parent, whatever its arguments
        ('{ entity(tenantId: "t", id: "i") { relationshipCount } }', {}, 1 + COUNT),
        ('{ entity(tenantId: "t", id: "i") { a: relationshipCount(direction: OUT) '
         'b: relationshipCount(types: ["X", "Y", "Z"]) } }', {}, 1 + 2 * COUNT),
        ('{ retrieve(query: "a", tenantId: "t", k: 7) { matches { entity { '
         "relationshipCount relationships(first: 2) { target { relationshipCount } } } } } }",
         {}, retrieve_cost(7) + 7 * (COUNT + 10 + 2 * (2 + COUNT))),
        # the ranges of each match: its call, and its list as one object
        ('{ retrieve(query: "a", tenantId: "t", k: 7) { matches { matchedRanges { start } } } }',
         {}, SEARCH + 1 + 7 * (1 + 1 + 1 + RANGES + 1)),
    ],
    ids=["literal", "variable", "variable-default", "k-default", "no-match-selected", "k-zero", "query-length",
         "first-default", "first-zero", "aliases-fragments", "query-words", "spread-twice", "scalar",
         "mutation-variable", "mutation-literal", "entity-types", "entity-types-first",
         "entity-types-first-zero", "entity-types-aliased", "entity-types-after",
         "relationships-after", "relationship-count", "relationship-counts-aliased",
         "relationship-counts-walked", "matched-ranges"],
)  # fmt: skip
def test_the_cost_formula(schema: Any, query: str, variables: dict[str, Any], cost: int) -> None:
    assert _cost(schema, query, **variables) == cost


def test_entities_cost_one_per_representation() -> None:
    federated = build_schema(federation=True)._schema
    query = """query ($r: [_Any!]!) { _entities(representations: $r) {
        ... on Entity { relationships(first: 2) { target { name } } } } }"""
    representations = [{"__typename": "Entity", "tenantId": TENANT, "id": str(i)} for i in range(3)]
    assert _cost(federated, query, r=representations) == 3 * (1 + 10 + 2 * 2)


def test_a_huge_estimate_saturates_instead_of_growing_without_bound(schema: Any) -> None:
    query = fragment_chain(300, 'retrieve(query: "a", tenantId: "t", k: 100) { query }')
    assert _cost(schema, query) == 2**53 - 1


async def test_a_readme_query_is_allowed(
    make_client: MakeClient,  # noqa: F811
    demo_services: Redstring,  # noqa: F811
) -> None:
    data = await make_client(demo_services).data(README_QUERY, tenant=TENANT)
    assert data["retrieve"]["matches"]


def aliased_retrieves(count: int, k: int) -> str:
    return (
        "{ "
        + " ".join(
            f'a{i}: retrieve(query: "acme {i}", tenantId: "{TENANT}", k: {k}) '
            "{ matches { score entity { name } } }"
            for i in range(count)
        )
        + " }"
    )


async def test_thirty_aliased_retrieves_of_k_100_are_refused_before_any_store_call(
    make_client: MakeClient,  # noqa: F811
    demo_services: Redstring,  # noqa: F811
) -> None:
    # Their results alone cost 9,000; their searches are what makes them heavy.
    counting, client = counting_client(make_client, demo_services)
    error = await client.error(aliased_retrieves(30, 100))
    assert error["extensions"] == {
        "code": "GRAPHQL_VALIDATION_FAILED",
        "cost": sum(retrieve_cost(100, f"acme {i}") for i in range(30)),
        "maxCost": 20_000,
    }
    assert counting.calls == Counter()


def aliased_entity_types(count: int, first: int | None = None) -> str:
    given = "" if first is None else f", first: {first}"
    lists = (f'a{i}: entityTypes(tenantId: "{TENANT}"{given}) {{ count }}' for i in range(count))
    return "{ " + " ".join(lists) + " }"


async def test_seven_aliased_lists_of_types_are_refused_before_any_store_call_six_pass(
    make_client: MakeClient,  # noqa: F811
    demo_services: Redstring,  # noqa: F811
) -> None:
    """Each is a scan of the tenant (100 ms over Neo4j at 100,000 entities) and its
    `first` types: six of the most that `first` allows (200) still pass."""
    counting, client = counting_client(make_client, demo_services)
    error = await client.error(aliased_entity_types(7))
    assert error["extensions"] == {
        "code": "GRAPHQL_VALIDATION_FAILED",
        "cost": 7 * (ENTITY_TYPES + TYPES_FIRST),
        "maxCost": 20_000,
    }
    assert counting.calls == Counter()
    data = await client.data(aliased_entity_types(6))
    assert len(data) == 6
    assert counting.calls == Counter({"entity_types": 6})
    assert len(await client.data(aliased_entity_types(6, first=200))) == 6  # 19,200
    # `first: 0` scans nothing and costs nothing: seven or more pass, each answering [].
    assert await client.data(aliased_entity_types(7, first=0)) == {f"a{i}": [] for i in range(7)}


ORDINARY = f"""{{
  retrieve(query: "Acme", tenantId: "{TENANT}", k: 10) {{
    matches {{ score entity {{ name relationships(first: 10) {{ relationshipType target {{ name }} }} }} }}
  }}
}}"""


@pytest.mark.parametrize(
    "query",
    [ORDINARY, aliased_retrieves(30, 10), DEFAULT_QUERY],
    ids=["one-hop", "thirty-aliases-of-k-10", "graphiql-default"],
)
async def test_ordinary_queries_are_within_the_default_limit(
    make_client: MakeClient,  # noqa: F811
    demo_services: Redstring,  # noqa: F811
    query: str,
) -> None:
    data = await make_client(demo_services).data(query)
    assert all(result["matches"] for result in data.values())


@pytest.mark.parametrize("federation", [False, True], ids=["plain", "federated"])
async def test_graphiql_introspection_is_within_the_default_limit(
    make_client: MakeClient,  # noqa: F811
    demo_services: Redstring,  # noqa: F811
    federation: bool,
) -> None:
    client = make_client(demo_services, Settings(federation=federation))
    assert (await client.data(get_introspection_query()))["__schema"]["types"]


# --- introspection switch ---------------------------------------------------------------


@pytest.fixture
def introspection_off(
    make_client: MakeClient,  # noqa: F811
    demo_services: Redstring,  # noqa: F811
) -> Any:
    return make_client(demo_services, Settings(introspection=False, federation=True))


@pytest.mark.parametrize(
    "query", ["{ __schema { types { name } } }", '{ __type(name: "Entity") { name } }']
)
async def test_introspection_off_refuses_schema_and_type(
    introspection_off: Any,
    make_client: MakeClient,  # noqa: F811
    demo_services: Redstring,  # noqa: F811
    query: str,
) -> None:
    body = await introspection_off.execute(query)
    assert "data" not in body  # refused before execution
    [error] = body["errors"]  # one, not another for `types` under `__schema`
    assert error["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
    assert "introspection has been disabled" in error["message"]
    assert "errors" not in await make_client(demo_services, Settings()).execute(query)


async def test_introspection_off_still_answers_typename_and_the_federated_sdl(
    introspection_off: Any,
) -> None:
    data = await introspection_off.data("{ __typename _service { sdl } }")
    assert data["__typename"] == "Query"
    assert "type Entity @key" in data["_service"]["sdl"]


# --- one operation per request ----------------------------------------------------------

TWO_OPERATIONS = """
query First($t: ID!) { entity(tenantId: $t, id: "00000000-0000-4000-8000-000000000999") { id } }
query Second { __typename }
"""


async def test_several_operations_without_an_operation_name_are_refused(
    make_client: MakeClient,  # noqa: F811
    demo_services: Redstring,  # noqa: F811
) -> None:
    counting, client = counting_client(make_client, demo_services)
    response = await _post(client, {"query": TWO_OPERATIONS, "variables": {"t": TENANT}})
    assert response.status_code == 400
    assert response.json() == {
        "errors": [
            {
                "message": "Must provide operation name if query contains multiple operations.",
                "extensions": {"code": "BAD_REQUEST"},
            }
        ]
    }
    assert counting.calls == Counter()


@pytest.mark.parametrize(
    ("name", "data"),
    [("Second", {"__typename": "Query"}), ("First", {"entity": None})],
)
async def test_the_operation_named_is_the_one_executed(
    make_client: MakeClient,  # noqa: F811
    demo_services: Redstring,  # noqa: F811
    name: str,
    data: dict[str, Any],
) -> None:
    client = make_client(demo_services)
    body = {"query": TWO_OPERATIONS, "variables": {"t": TENANT}, "operationName": name}
    response = await _post(client, body)
    assert response.status_code == 200
    assert response.json() == {"data": data}


async def test_one_operation_needs_no_name(
    make_client: MakeClient,  # noqa: F811
    demo_services: Redstring,  # noqa: F811
) -> None:
    data = await make_client(demo_services).data("query Only { __typename }")
    assert data == {"__typename": "Query"}


async def test_a_request_never_sees_the_operation_name_of_the_one_before(
    make_client: MakeClient,  # noqa: F811
    demo_services: Redstring,  # noqa: F811
) -> None:
    """The name a request gives is its own (`provide_operation_name`): one client, a
    named request, then the same document without a name, and the other way round."""
    client = make_client(demo_services)
    named = {"query": TWO_OPERATIONS, "variables": {"t": TENANT}, "operationName": "Second"}
    unnamed = {"query": TWO_OPERATIONS, "variables": {"t": TENANT}}
    for body, status in ((named, 200), (unnamed, 400), (named, 200), (unnamed, 400)):
        assert (await _post(client, body)).status_code == status
