"""No N+1: store calls per request depend on the query's depth, not on how many entities."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from redstring import Entity, EntityId, GraphStore, Neighbourhood, TenantId
from redstring.api.schema import types
from redstring.api.settings import Settings
from redstring.composition.client import Redstring
from redstring.testing import CountingGraphStoreWithEnds
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


async def _calls_for(
    k: int, demo_services: Redstring, make_client: MakeClient, *, ends: bool
) -> Counter[str]:
    # Two hops at the default `first` are over the default cost limit; batching is
    # what this measures.
    settings = Settings(max_cost=100_000)
    counting, client = counting_client(make_client, demo_services, settings, ends=ends)
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


@pytest.mark.parametrize("ends", [True, False], ids=["ends-in-one-read", "ends-read-apart"])
async def test_store_calls_are_constant_in_k(
    demo_services: Redstring, make_client: MakeClient, ends: bool
) -> None:
    small = await _calls_for(2, demo_services, make_client, ends=ends)
    large = await _calls_for(10, demo_services, make_client, ends=ends)
    for calls in (small, large):
        assert calls["find_lexical_candidates"] == 1
        if ends:
            # One read per depth, the targets with it; get_entities at most once, for
            # the matches (lexical candidates are reused).
            assert calls["relationships_with_ends"] == 2
            assert calls["relationships_of"] == 0
            assert calls["get_entities"] <= 1
        else:
            # One relationships_of per depth; get_entities at most once for the
            # matches and once per depth.
            assert calls["relationships_of"] == 2
            assert calls["get_entities"] <= 3


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


async def test_fields_differing_only_in_their_ends_share_a_call(
    demo_services: Redstring, make_client: MakeClient
) -> None:
    """One field walking to the targets and one not, with equal arguments: one read,
    with the ends, answers both."""
    counting, client = counting_client(make_client, demo_services)
    data = await client.data(
        """query ($tenant: ID!) {
             retrieve(query: "Acme", tenantId: $tenant, k: 10) {
               matches { entity {
                 a: relationships(first: 3) { id }
                 b: relationships(first: 3) { id target { name } }
               } }
             }
           }""",
        tenant=DEMO,
    )
    for match in data["retrieve"]["matches"]:
        entity = match["entity"]
        assert [r["id"] for r in entity["a"]] == [r["id"] for r in entity["b"]]
    assert counting.calls["relationships_with_ends"] == 1
    assert counting.calls["relationships_of"] == 0


ENDS = """
query ($tenant: ID!) {
  retrieve(query: "Acme Corp", tenantId: $tenant, k: 3) {
    matches { entity { relationships { ...Ends } } }
  }
}
fragment Ends on Relationship { id source { name } ... on Relationship { target { id name } } }
"""


@pytest.mark.parametrize("ends", [True, False], ids=["ends-in-one-read", "ends-read-apart"])
async def test_ends_are_loaded_with_their_relationships(
    demo_services: Redstring, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch, ends: bool
) -> None:
    """`source` and `target`, selected directly or through fragments, come with the
    relationships' batch: the one-by-one path is never taken. Over a store that reads
    ends, they come in the relationships' own read."""
    baseline = await make_client(demo_services).data(ENDS, tenant=DEMO)

    async def one_by_one(*args: object) -> None:
        raise AssertionError("an end was loaded on its own")

    monkeypatch.setattr(types, "_end", one_by_one)
    counting, client = counting_client(make_client, demo_services, ends=ends)
    data = await client.data(ENDS, tenant=DEMO)
    assert data == baseline
    ends_read = [r for m in data["retrieve"]["matches"] for r in m["entity"]["relationships"]]
    assert ends_read
    assert all(r["source"]["name"] and r["target"]["name"] for r in ends_read)
    if ends:
        assert counting.calls["relationships_with_ends"] == 1
        assert counting.calls["relationships_of"] == 0
        assert counting.calls["get_entities"] <= 1
    else:
        assert counting.calls["relationships_of"] == 1
        assert counting.calls["get_entities"] <= 2


ENDS_BY_ID = """
query ($tenant: ID!) {
  retrieve(query: "Acme", tenantId: $tenant, k: 10) {
    matches { entity { id relationships(first: 50) {
      id source { id name entityType } target { id name entityType }
    } } }
  }
}
"""


async def test_ends_read_with_their_relationships_are_the_stored_ends(
    demo_services: Redstring, make_client: MakeClient
) -> None:
    """Each relationship's `source` and `target`, read in one call with it, are the
    entities its stored ids name, whichever side of it the match is on."""
    data = await make_client(demo_services).data(ENDS_BY_ID, tenant=DEMO)
    tenant = TenantId(uuid.UUID(DEMO))
    sides: set[str] = set()
    for match in data["retrieve"]["matches"]:
        entity_id = EntityId(uuid.UUID(match["entity"]["id"]))
        walked = match["entity"]["relationships"]
        stored = (await demo_services.relationships([entity_id], tenant))[entity_id]
        assert [r["id"] for r in walked] == [str(r.id) for r in stored]
        for shown, relationship in zip(walked, stored, strict=True):
            for side, end_id in (
                ("source", relationship.source_entity_id),
                ("target", relationship.target_entity_id),
            ):
                [end] = await demo_services.graph.get_entities([end_id], tenant)
                assert shown[side] == {
                    "id": str(end.id),
                    "name": end.name,
                    "entityType": end.entity_type,
                }
                if end_id == entity_id:
                    sides.add(side)
    assert sides == {"source", "target"}  # matches at both ends of their relationships


async def test_ends_not_asked_for_are_not_loaded(
    demo_services: Redstring, make_client: MakeClient
) -> None:
    counting, client = counting_client(make_client, demo_services)
    await client.data(
        """query ($tenant: ID!) { retrieve(query: "Acme Corp", tenantId: $tenant, k: 3) {
             matches { entity { relationships { id relationshipType } } } } }""",
        tenant=DEMO,
    )
    assert counting.calls["relationships_with_ends"] == 0
    assert counting.calls["relationships_of"] == 1
    without_ends = counting.calls["get_entities"]
    await client.data(ENDS, tenant=DEMO)
    assert counting.calls["relationships_with_ends"] == 1
    assert counting.calls["get_entities"] == 2 * without_ends


@pytest.mark.parametrize(
    ("direction", "end", "reads_ends"),
    [
        ("OUT", "source", False),
        ("OUT", "target", True),
        ("IN", "target", False),
        ("IN", "source", True),
        ("BOTH", "source", True),
        ("BOTH", "target", True),
    ],
)
async def test_only_a_far_end_is_read_with_the_relationships(
    demo_services: Redstring, make_client: MakeClient, direction: str, end: str, reads_ends: bool
) -> None:
    """Following `OUT` edges the `source` is the entity itself, which the request holds:
    selecting it alone reads no ends (nor does `target` alone along `IN` edges)."""
    counting, client = counting_client(make_client, demo_services)
    data = await client.data(
        f"""query ($tenant: ID!) {{ retrieve(query: "Acme Corp", tenantId: $tenant, k: 3) {{
             matches {{ entity {{ id relationships(direction: {direction}) {{ {end} {{ id }} }}
           }} }} }} }}""",
        tenant=DEMO,
    )
    walked = [r for m in data["retrieve"]["matches"] for r in m["entity"]["relationships"]]
    assert walked
    if not reads_ends:
        assert all(
            r[end]["id"] == m["entity"]["id"]
            for m in data["retrieve"]["matches"]
            for r in m["entity"]["relationships"]
        )
    assert counting.calls["relationships_with_ends"] == int(reads_ends)
    assert counting.calls["relationships_of"] == int(not reads_ends)
    assert counting.calls["get_entities"] <= 1  # the retrieve's, for its matches


async def test_ends_read_apart_are_one_get_entities(
    demo_services: Redstring, make_client: MakeClient
) -> None:
    counting, client = counting_client(make_client, demo_services, ends=False)
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


class HidingEndsGraphStore(HidingGraphStore, CountingGraphStoreWithEnds):
    """A `HidingGraphStore` that reads ends, and leaves the hidden ones out of those too."""

    async def relationships_with_ends(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId, **options: Any
    ) -> Neighbourhood:
        found = await super().relationships_with_ends(entity_ids, tenant_id, **options)
        kept = {i: e for i, e in found.entities.items() if i not in self.hidden}
        return Neighbourhood(relationships=found.relationships, entities=kept)


@pytest.mark.parametrize("hiding", [HidingGraphStore, HidingEndsGraphStore])
async def test_a_missing_end_is_an_internal_error(
    demo_services: Redstring, make_client: MakeClient, hiding: type[HidingGraphStore]
) -> None:
    query = """query ($tenant: ID!) { retrieve(query: "Acme Corp", tenantId: $tenant, k: 1) {
      matches { entity { id relationships { target { id name } } } } } }"""
    data = await make_client(demo_services).data(query, tenant=DEMO)
    entity = data["retrieve"]["matches"][0]["entity"]
    # An end other than the match itself (which the request holds already).
    [other, *_] = [
        r["target"]["id"] for r in entity["relationships"] if r["target"]["id"] != entity["id"]
    ]
    hidden = hiding(demo_services.graph, {EntityId(uuid.UUID(other))})
    error = await make_client(services_with_graph(demo_services, hidden)).error(query, tenant=DEMO)
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
