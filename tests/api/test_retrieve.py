"""`retrieve` and `entity` on the demo dataset, walking relationships in the same request."""

from __future__ import annotations

import uuid

from redstring.api.demo import DEMO_TENANT_ID
from redstring.composition.client import Redstring
from redstring.domain.ids import entity_id_for
from tests.api.conftest import MakeClient
from tests.api.support import DEMO, README_QUERY, GraphQLClient

ACME_ID = str(entity_id_for(DEMO_TENANT_ID, "company", "Acme Corp"))


async def test_readme_query_finds_acme_corp_first_with_its_relationships(
    client: GraphQLClient,
) -> None:
    data = await client.data(README_QUERY, tenant=DEMO)
    matches = data["retrieve"]["matches"]
    assert len(matches) == 5
    top = matches[0]
    assert top["entity"]["name"] == "Acme Corp"
    assert top["entity"]["entityType"] == "company"
    assert top["lexical"] > 0.9
    assert top["semantic"] is not None
    assert [m["score"] for m in matches] == sorted((m["score"] for m in matches), reverse=True)
    relationships = top["entity"]["relationships"]
    assert len(relationships) == 5
    types = [r["relationshipType"] for r in relationships]
    assert types == sorted(types)
    assert {
        "source": {"name": "Acme Corp"},
        "relationshipType": "HEADQUARTERED_IN",
        "target": {"name": "Port Aldmere"},
    } in relationships


async def test_entity_fields_and_properties_are_json(client: GraphQLClient) -> None:
    data = await client.data(
        """query ($tenant: ID!, $id: ID!) {
             entity(tenantId: $tenant, id: $id) {
               id tenantId name normalizedName entityType description properties
             }
           }""",
        tenant=DEMO,
        id=ACME_ID,
    )
    entity = data["entity"]
    assert entity["id"] == ACME_ID
    assert entity["tenantId"] == DEMO
    assert entity["normalizedName"] == "acme corp"
    assert entity["properties"] == {"founded": 1948, "aliases": ["ACME", "Acme Co"]}
    assert "Port Aldmere" in entity["description"]


async def test_walks_two_hops_with_direction_and_types(client: GraphQLClient) -> None:
    data = await client.data(
        """query ($tenant: ID!, $id: ID!) {
             entity(tenantId: $tenant, id: $id) {
               relationships(direction: OUT, types: ["HEADQUARTERED_IN"]) {
                 source { name }
                 target {
                   name
                   relationships(direction: OUT, types: ["LOCATED_IN"]) {
                     target { name entityType }
                   }
                 }
               }
             }
           }""",
        tenant=DEMO,
        id=ACME_ID,
    )
    [hq] = data["entity"]["relationships"]
    assert hq["source"] == {"name": "Acme Corp"}
    assert hq["target"]["name"] == "Port Aldmere"
    assert hq["target"]["relationships"] == [
        {"target": {"name": "Valdoria", "entityType": "country"}}
    ]


async def test_incoming_relationships_name_acme_as_target(client: GraphQLClient) -> None:
    data = await client.data(
        """query ($tenant: ID!, $id: ID!) {
             entity(tenantId: $tenant, id: $id) {
               relationships(direction: IN, types: ["FOUNDED"]) {
                 relationshipType properties source { entityType } target { name }
               }
             }
           }""",
        tenant=DEMO,
        id=ACME_ID,
    )
    [founded] = data["entity"]["relationships"]
    assert founded["target"] == {"name": "Acme Corp"}
    assert founded["source"] == {"entityType": "person"}
    assert founded["properties"] == {"year": 1948}


async def test_first_caps_relationships_and_zero_gives_none(client: GraphQLClient) -> None:
    data = await client.data(
        """query ($tenant: ID!, $id: ID!) {
             entity(tenantId: $tenant, id: $id) {
               two: relationships(first: 2) { id }
               none: relationships(first: 0) { id }
               all: relationships { id }
             }
           }""",
        tenant=DEMO,
        id=ACME_ID,
    )
    entity = data["entity"]
    assert len(entity["two"]) == 2
    assert entity["none"] == []
    assert len(entity["all"]) > 2
    assert entity["two"] == entity["all"][:2]


async def test_k_zero_and_empty_entity_types_give_no_matches(client: GraphQLClient) -> None:
    data = await client.data(
        """query ($tenant: ID!) {
             zero: retrieve(query: "Acme", tenantId: $tenant, k: 0) { query matches { score } }
             none: retrieve(query: "Acme", tenantId: $tenant, entityTypes: []) { matches { score } }
           }""",
        tenant=DEMO,
    )
    assert data["zero"] == {"query": "Acme", "matches": []}
    assert data["none"] == {"matches": []}


async def test_entity_types_filter_and_modes(client: GraphQLClient) -> None:
    data = await client.data(
        """query ($tenant: ID!) {
             products: retrieve(query: "Acme", tenantId: $tenant, k: 5, entityTypes: ["product"]) {
               matches { entity { entityType } }
             }
             lexical: retrieve(query: "Acme Corp", tenantId: $tenant, k: 3, mode: LEXICAL) {
               matches { semantic lexical entity { name } }
             }
             semantic: retrieve(query: "Acme Corp", tenantId: $tenant, k: 3, mode: SEMANTIC) {
               matches { semantic lexical }
             }
           }""",
        tenant=DEMO,
    )
    assert {m["entity"]["entityType"] for m in data["products"]["matches"]} == {"product"}
    assert data["lexical"]["matches"][0]["entity"]["name"] == "Acme Corp"
    assert all(m["semantic"] is None for m in data["lexical"]["matches"])
    assert all(m["lexical"] is None for m in data["semantic"]["matches"])
    assert len(data["semantic"]["matches"]) == 3


async def test_unknown_entity_is_null(client: GraphQLClient) -> None:
    data = await client.data(
        "query ($t: ID!, $id: ID!) { entity(tenantId: $t, id: $id) { name } }",
        t=DEMO,
        id=str(uuid.uuid4()),
    )
    assert data == {"entity": None}


async def test_another_tenant_sees_nothing_of_the_demo(client: GraphQLClient) -> None:
    other = str(uuid.uuid4())
    data = await client.data(
        """query ($t: ID!, $id: ID!) {
             entity(tenantId: $t, id: $id) { name }
             retrieve(query: "Acme Corp", tenantId: $t) { matches { score } }
           }""",
        t=other,
        id=ACME_ID,
    )
    assert data == {"entity": None, "retrieve": {"matches": []}}


async def test_a_match_says_which_of_its_texts_the_query_matched(client: GraphQLClient) -> None:
    data = await client.data(
        """query ($tenant: ID!) {
             retrieve(query: "Acme Co", tenantId: $tenant, k: 3, mode: LEXICAL) {
               matches { entity { name } lexical matchedText matchedProperty }
             }
           }""",
        tenant=DEMO,
    )
    top = data["retrieve"]["matches"][0]
    assert top["entity"]["name"] == "Acme Corp"
    # An alias the query equals scores above the name it shares a word with.
    assert (top["matchedText"], top["matchedProperty"]) == ("Acme Co", "aliases")
    semantic = await client.data(
        """query ($tenant: ID!) {
             retrieve(query: "Acme Co", tenantId: $tenant, k: 1, mode: SEMANTIC) {
               matches { lexical matchedText matchedProperty }
             }
           }""",
        tenant=DEMO,
    )
    assert semantic["retrieve"]["matches"] == [
        {"lexical": None, "matchedText": None, "matchedProperty": None}
    ]


async def test_a_match_says_where_its_text_matched_the_query(client: GraphQLClient) -> None:
    data = await client.data(
        """query ($tenant: ID!) {
             retrieve(query: "ACME Corporation", tenantId: $tenant, k: 5) {
               matches { entity { name } matchedText matchedRanges { start end } }
             }
           }""",
        tenant=DEMO,
    )
    [top, *others] = data["retrieve"]["matches"]
    # `Corp` is read as `Corporation`: the whole word is marked.
    assert top == {
        "entity": {"name": "Acme Corp"},
        "matchedText": "Acme Corp",
        "matchedRanges": [{"start": 0, "end": 4}, {"start": 5, "end": 9}],
    }
    # A match of the semantic channel alone has no text, so no ranges.
    assert {"matchedText": None, "matchedRanges": None} in [
        {k: m[k] for k in ("matchedText", "matchedRanges")} for m in others
    ]


async def test_matched_ranges_count_utf16_code_units(
    make_client: MakeClient, fresh_services: Redstring
) -> None:
    """A JavaScript client slices `matchedText` with the ranges as they come: a character
    outside the Basic Multilingual Plane counts two, a folded one as it is written."""
    client = make_client(fresh_services)
    tenant = str(uuid.uuid4())
    await client.data(
        """mutation ($t: ID!, $entities: [EntityInput!]!) {
             upsertEntities(tenantId: $t, entities: $entities) { count }
           }""",
        t=tenant,
        entities=[
            {"name": "\U0001f332 Fjällräven", "entityType": "company"},
            {"name": "Shushary", "entityType": "company"},
        ],
    )
    query = """query ($t: ID!, $q: String!) {
                 retrieve(query: $q, tenantId: $t, k: 1, mode: LEXICAL) {
                   matches { lexical matchedText matchedRanges { start end } }
                 }
               }"""
    [match] = (await client.data(query, t=tenant, q="fjall"))["retrieve"]["matches"]
    text = match["matchedText"]
    assert text == "\U0001f332 Fjällräven"
    assert match["matchedRanges"] == [{"start": 3, "end": 8}]
    units = text.encode("utf-16-le")
    assert units[3 * 2 : 8 * 2].decode("utf-16-le") == "Fjäll"
    # Sounding alike: the score reads it as the name, yet no word can be pointed at.
    [match] = (await client.data(query, t=tenant, q="Suosaari"))["retrieve"]["matches"]
    assert match["lexical"] > 0
    assert (match["matchedText"], match["matchedRanges"]) == ("Shushary", [])
