"""No N+1: store calls per request depend on the query's depth, not on how many entities."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Sequence

import pytest

from redstring import Entity, EntityId, GraphStore, TenantId
from redstring.api.schema import types
from redstring.api.settings import Settings
from redstring.composition.client import Redstring
from tests.api.conftest import MakeClient
from tests.api.doubles import CountingGraphStore
from tests.api.support import DEMO, counting_client, services_with_graph

TWO_HOPS = """
query ($tenant: ID!, $k: Int!) {
  retrieve(query: "Acme", tenantId: $tenant, k: $k) {
    matches { entity { relationships { target { relationships { target { name } } } } } }
  }
}
"""


async def _calls_for(k: int, demo_services: Redstring, make_client: MakeClient) -> Counter[str]:
    # Two hops at the default `first` are over the default cost limit; batching is
    # what this measures.
    counting, client = counting_client(make_client, demo_services, Settings(max_cost=100_000))
    data = await client.data(TWO_HOPS, tenant=DEMO, k=k)
    matches = data["retrieve"]["matches"]
    assert len(matches) == k
    second_hop = [
        hop2
        for m in matches
        for hop1 in m["entity"]["relationships"]
        for hop2 in hop1["target"]["relationships"]
    ]
    assert len(second_hop) > k  # the walk really fans out
    return counting.calls


async def test_store_calls_are_constant_in_k(
    demo_services: Redstring, make_client: MakeClient
) -> None:
    small = await _calls_for(2, demo_services, make_client)
    large = await _calls_for(10, demo_services, make_client)
    for calls in (small, large):
        # One relationships_of per depth; get_entities at most once for the matches
        # (lexical candidates are reused) and once per depth.
        assert calls["relationships_of"] == 2
        assert calls["get_entities"] <= 3
        assert calls["find_lexical_candidates"] == 1


async def test_equal_arguments_share_a_call_and_different_ones_do_not(
    demo_services: Redstring, make_client: MakeClient
) -> None:
    counting, client = counting_client(make_client, demo_services)
    await client.data(
        """query ($tenant: ID!) {
             retrieve(query: "Acme", tenantId: $tenant, k: 10) {
               matches { entity {
                 a: relationships(first: 3) { id }
                 b: relationships(first: 3) { id }
                 c: relationships(direction: OUT) { id }
               } }
             }
           }""",
        tenant=DEMO,
    )
    assert counting.calls["relationships_of"] == 2


ENDS = """
query ($tenant: ID!) {
  retrieve(query: "Acme Corp", tenantId: $tenant, k: 3) {
    matches { entity { relationships { ...Ends } } }
  }
}
fragment Ends on Relationship { id source { name } ... on Relationship { target { id name } } }
"""


async def test_ends_are_loaded_with_their_relationships(
    demo_services: Redstring, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`source` and `target`, selected directly or through fragments, come with the
    relationships' batch: the one-by-one path is never taken."""
    baseline = await make_client(demo_services).data(ENDS, tenant=DEMO)

    async def one_by_one(*args: object) -> None:
        raise AssertionError("an end was loaded on its own")

    monkeypatch.setattr(types, "_end", one_by_one)
    counting, client = counting_client(make_client, demo_services)
    data = await client.data(ENDS, tenant=DEMO)
    assert data == baseline
    ends = [r for m in data["retrieve"]["matches"] for r in m["entity"]["relationships"]]
    assert ends
    assert all(r["source"]["name"] and r["target"]["name"] for r in ends)
    assert counting.calls["relationships_of"] == 1
    assert counting.calls["get_entities"] <= 2


async def test_ends_not_asked_for_are_not_loaded(
    demo_services: Redstring, make_client: MakeClient
) -> None:
    counting, client = counting_client(make_client, demo_services)
    await client.data(
        """query ($tenant: ID!) { retrieve(query: "Acme Corp", tenantId: $tenant, k: 3) {
             matches { entity { relationships { id relationshipType } } } } }""",
        tenant=DEMO,
    )
    without_ends = counting.calls["get_entities"]
    await client.data(ENDS, tenant=DEMO)
    assert counting.calls["get_entities"] - without_ends == without_ends + 1


class HidingGraphStore(CountingGraphStore):
    """Answers `get_entities` without the `hidden` ids, as after a concurrent delete."""

    def __init__(self, inner: GraphStore, hidden: set[EntityId]) -> None:
        super().__init__(inner)
        self.hidden = hidden

    async def get_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> list[Entity]:
        found = await super().get_entities(ids, tenant_id)
        return [e for e in found if e.id not in self.hidden]


async def test_a_missing_end_is_an_internal_error(
    demo_services: Redstring, make_client: MakeClient
) -> None:
    query = """query ($tenant: ID!) { retrieve(query: "Acme Corp", tenantId: $tenant, k: 1) {
      matches { entity { id relationships { target { id name } } } } } }"""
    data = await make_client(demo_services).data(query, tenant=DEMO)
    entity = data["retrieve"]["matches"][0]["entity"]
    # An end other than the match itself (which the request holds already).
    [other, *_] = [
        r["target"]["id"] for r in entity["relationships"] if r["target"]["id"] != entity["id"]
    ]
    hiding = HidingGraphStore(demo_services.graph, {EntityId(uuid.UUID(other))})
    error = await make_client(services_with_graph(demo_services, hiding)).error(query, tenant=DEMO)
    assert error["extensions"] == {"code": "INTERNAL_SERVER_ERROR"}
    assert error["path"][-1] == "target"


async def test_each_aliased_relationships_field_selects_its_own_ends(
    demo_services: Redstring, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def one_by_one(*args: object) -> None:
        raise AssertionError("an end was loaded on its own")

    monkeypatch.setattr(types, "_end", one_by_one)
    data = await make_client(demo_services).data(
        """query ($tenant: ID!) { retrieve(query: "Acme Corp", tenantId: $tenant, k: 3) {
             matches { entity { a: relationships { id } b: relationships { target { name } } } }
           } }""",
        tenant=DEMO,
    )
    walked = [r for m in data["retrieve"]["matches"] for r in m["entity"]["b"]]
    assert walked
    assert all(r["target"]["name"] for r in walked)
