"""No N+1: store calls per request depend on the query's depth, not on how many entities."""

from __future__ import annotations

from collections import Counter

from redstring.composition.services import Services
from tests.api.conftest import MakeClient
from tests.api.doubles import CountingGraphStore
from tests.api.support import DEMO, services_with_graph

TWO_HOPS = """
query ($tenant: ID!, $k: Int!) {
  retrieve(query: "Acme", tenantId: $tenant, k: $k) {
    matches { entity { relationships { target { relationships { target { name } } } } } }
  }
}
"""


async def _calls_for(k: int, demo_services: Services, make_client: MakeClient) -> Counter[str]:
    counting = CountingGraphStore(demo_services.graph)
    client = make_client(services_with_graph(demo_services, counting))
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
    demo_services: Services, make_client: MakeClient
) -> None:
    small = await _calls_for(2, demo_services, make_client)
    large = await _calls_for(10, demo_services, make_client)
    for calls in (small, large):
        # One relationships_of per depth; get_entities at most once for the matches
        # (lexical candidates are reused) and once per depth.
        assert calls["relationships_of"] == 2
        assert calls["get_entities"] <= 3
        assert calls["find_by_blocking_keys"] == 1


async def test_equal_arguments_share_a_call_and_different_ones_do_not(
    demo_services: Services, make_client: MakeClient
) -> None:
    counting = CountingGraphStore(demo_services.graph)
    client = make_client(services_with_graph(demo_services, counting))
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
