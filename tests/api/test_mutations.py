"""Upserts and deletes through the API: deterministic ids, idempotency, atomic failures."""

from __future__ import annotations

import uuid
from typing import Any

from redstring import EntityId, TenantId
from redstring.composition.client import Redstring
from redstring.domain.ids import entity_id_for, relationship_id_for
from tests.api.conftest import MakeClient
from tests.api.support import GraphQLClient

UPSERT_ENTITIES = """mutation ($t: ID!, $entities: [EntityInput!]!) {
  upsertEntities(tenantId: $t, entities: $entities) { count ids }
}"""
UPSERT_RELATIONSHIPS = """mutation ($t: ID!, $relationships: [RelationshipInput!]!) {
  upsertRelationships(tenantId: $t, relationships: $relationships) { count ids }
}"""
DELETE = (
    """mutation ($t: ID!, $ids: [ID!]!) { deleteEntities(tenantId: $t, ids: $ids) { count } }"""
)

ENTITIES = [
    {"name": "Quayside Ferries", "entityType": "company", "properties": {"routes": [1, 2]}},
    {"name": "Mara Quist", "entityType": "person", "description": "Harbour master"},
    {"name": "Lowen", "entityType": "city"},
]


async def _load(client: GraphQLClient, tenant: str) -> tuple[list[str], list[str]]:
    entities = (await client.data(UPSERT_ENTITIES, t=tenant, entities=ENTITIES))["upsertEntities"]
    ferries, mara, lowen = entities["ids"]
    relationships = [
        {"sourceId": mara, "targetId": ferries, "relationshipType": "WORKS_AT"},
        {"sourceId": ferries, "targetId": lowen, "relationshipType": "HEADQUARTERED_IN",
         "confidence": 0.8, "properties": {"since": 1999}},
    ]  # fmt: skip
    rels = await client.data(UPSERT_RELATIONSHIPS, t=tenant, relationships=relationships)
    return entities["ids"], rels["upsertRelationships"]["ids"]


async def _snapshot(services: Redstring, tenant: TenantId, ids: list[str]) -> Any:
    entity_ids = [EntityId(uuid.UUID(i)) for i in ids]
    entities = await services.graph.get_entities(entity_ids, tenant)
    relationships = await services.graph.relationships_of(entity_ids, tenant)
    found = await services.retriever.retrieve("Quayside Ferries", tenant, k=10)
    return entities, relationships, [(m.entity.id, m.score) for m in found.matches]


async def test_absent_ids_are_derived_and_loading_twice_changes_nothing(
    make_client: MakeClient, fresh_services: Redstring
) -> None:
    client = make_client(fresh_services)
    tenant = TenantId(uuid.uuid4())
    entity_ids, relationship_ids = await _load(client, str(tenant))
    ferries = entity_id_for(tenant, "company", "quayside  FERRIES")
    lowen = entity_id_for(tenant, "city", "Lowen")
    assert entity_ids[0] == str(ferries)
    assert relationship_ids[1] == str(
        relationship_id_for(tenant, ferries, "HEADQUARTERED_IN", lowen)
    )
    before = await _snapshot(fresh_services, tenant, entity_ids)

    again = await _load(client, str(tenant))

    assert again == (entity_ids, relationship_ids)
    assert await _snapshot(fresh_services, tenant, entity_ids) == before
    assert len(before[0]) == 3
    assert sum(len(r) for r in before[1].values()) == 4  # each edge seen from both ends


async def test_written_data_is_readable_with_properties(
    make_client: MakeClient, fresh_services: Redstring
) -> None:
    client = make_client(fresh_services)
    tenant = str(uuid.uuid4())
    (ferries, _, _), _ = await _load(client, tenant)
    data = await client.data(
        """query ($t: ID!, $id: ID!) {
             entity(tenantId: $t, id: $id) {
               name properties
               relationships(direction: OUT) { confidence properties target { name } }
             }
           }""",
        t=tenant,
        id=ferries,
    )
    assert data["entity"] == {
        "name": "Quayside Ferries",
        "properties": {"routes": [1, 2]},
        "relationships": [
            {"confidence": 0.8, "properties": {"since": 1999}, "target": {"name": "Lowen"}}
        ],
    }


async def test_given_ids_are_kept_and_count_is_distinct(
    make_client: MakeClient, fresh_services: Redstring
) -> None:
    client = make_client(fresh_services)
    tenant = str(uuid.uuid4())
    given = str(uuid.uuid4())
    result = await client.data(
        UPSERT_ENTITIES,
        t=tenant,
        entities=[
            {"id": given, "name": "A", "entityType": "thing"},
            {"name": "B", "entityType": "thing"},
            {"name": "b", "entityType": "thing"},  # normalises like "B": the same entity
        ],
    )
    ids = result["upsertEntities"]["ids"]
    assert ids[0] == given
    assert ids[1] == ids[2]
    assert result["upsertEntities"]["count"] == 2


async def test_unknown_endpoint_is_bad_input_and_writes_nothing(
    make_client: MakeClient, fresh_services: Redstring
) -> None:
    client = make_client(fresh_services)
    tenant = str(uuid.uuid4())
    (ferries, mara, _), _ = await _load(client, tenant)
    ghost = str(uuid.uuid4())
    error = await client.error(
        UPSERT_RELATIONSHIPS,
        t=tenant,
        relationships=[
            {"sourceId": mara, "targetId": ferries, "relationshipType": "OWNS"},
            {"sourceId": mara, "targetId": ghost, "relationshipType": "KNOWS"},
        ],
    )
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert ghost in error["message"]
    data = await client.data(
        """query ($t: ID!, $id: ID!) {
             entity(tenantId: $t, id: $id) { relationships { relationshipType } }
           }""",
        t=tenant,
        id=mara,
    )
    assert data["entity"]["relationships"] == [{"relationshipType": "WORKS_AT"}]


async def test_endpoint_in_another_tenant_is_unknown(
    make_client: MakeClient, fresh_services: Redstring
) -> None:
    client = make_client(fresh_services)
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    (ferries, _, _), _ = await _load(client, first)
    (_, mara_elsewhere, _), _ = await _load(client, second)
    error = await client.error(
        UPSERT_RELATIONSHIPS,
        t=first,
        relationships=[{"sourceId": mara_elsewhere, "targetId": ferries, "relationshipType": "X"}],
    )
    assert error["extensions"]["code"] == "BAD_USER_INPUT"


async def test_invalid_inputs_say_which_input_and_field(
    make_client: MakeClient, fresh_services: Redstring
) -> None:
    client = make_client(fresh_services)
    tenant = str(uuid.uuid4())
    blank = await client.error(
        UPSERT_ENTITIES,
        t=tenant,
        entities=[{"name": "ok", "entityType": "thing"}, {"name": "  ", "entityType": "thing"}],
    )
    assert blank["extensions"]["code"] == "BAD_USER_INPUT"
    assert blank["message"].startswith("entities[1].name:")
    assert "pydantic" not in blank["message"]
    long_type = await client.error(
        UPSERT_ENTITIES, t=tenant, entities=[{"name": "x", "entityType": "T" * 40_000}]
    )
    assert long_type["extensions"]["code"] == "BAD_USER_INPUT"
    assert long_type["message"] == (
        "entities[0].entityType: entityType must be at most 200 characters, got 40000"
    )
    ends = {"sourceId": str(uuid.uuid4()), "targetId": str(uuid.uuid4())}
    long_relationship_type = await client.error(
        UPSERT_RELATIONSHIPS,
        t=tenant,
        relationships=[
            {**ends, "relationshipType": "R" * 200},
            {**ends, "relationshipType": "R" * 201},
        ],
    )
    assert long_relationship_type["extensions"]["code"] == "BAD_USER_INPUT"
    assert long_relationship_type["message"] == (
        "relationships[1].relationshipType: relationshipType must be at most 200 characters, "
        "got 201"
    )
    long_name = await client.error(
        UPSERT_ENTITIES, t=tenant, entities=[{"name": "n" * 900_000, "entityType": "thing"}]
    )
    assert long_name["extensions"]["code"] == "BAD_USER_INPUT"
    assert long_name["message"] == (
        "entities[0].name: name must be at most 500 characters, got 900000"
    )
    big_properties = await client.error(
        UPSERT_ENTITIES,
        t=tenant,
        entities=[{"name": "x", "entityType": "thing", "properties": {"text": "p" * 20_000}}],
    )
    assert big_properties["extensions"]["code"] == "BAD_USER_INPUT"
    assert big_properties["message"] == (
        "entities[0].properties: properties must be at most 16,384 bytes as JSON, got "
        "20,011: a long text belongs in the description"
    )
    long_description = await client.error(
        UPSERT_ENTITIES,
        t=tenant,
        entities=[{"name": "x", "entityType": "thing", "description": "d" * 10_001}],
    )
    assert long_description["extensions"]["code"] == "BAD_USER_INPUT"
    assert long_description["message"] == (
        "entities[0].description: description must be at most 10,000 characters, got 10,001"
    )
    nested = await client.error(
        UPSERT_ENTITIES,
        t=tenant,
        entities=[{"name": "x", "entityType": "thing", "properties": {"deep": {"no": 1}}}],
    )
    assert nested["extensions"]["code"] == "BAD_USER_INPUT"
    assert nested["message"] == (
        "entities[0].properties.deep: a property value must be a string, number, boolean "
        "or a list of them"
    )
    not_object = await client.error(
        UPSERT_ENTITIES, t=tenant, entities=[{"name": "x", "entityType": "t", "properties": [1]}]
    )
    assert not_object["message"] == "entities[0].properties must be a JSON object"
    bad_confidence = await client.error(
        UPSERT_RELATIONSHIPS,
        t=tenant,
        relationships=[
            {"sourceId": str(uuid.uuid4()), "targetId": str(uuid.uuid4()),
             "relationshipType": "X", "confidence": 1.5},
        ],
    )  # fmt: skip
    assert bad_confidence["message"].startswith("relationships[0].confidence:")
    bad_id = await client.error(
        UPSERT_RELATIONSHIPS,
        t=tenant,
        relationships=[{"sourceId": "x", "targetId": str(uuid.uuid4()), "relationshipType": "X"}],
    )
    assert bad_id["message"] == "relationships[0].sourceId must be a UUID, got 'x'"
    # nothing of the refused calls was written
    found = await fresh_services.graph.find_lexical_candidates(
        ["t:thing"], TenantId(uuid.UUID(tenant))
    )
    assert found == []


async def test_delete_removes_entities_and_their_relationships(
    make_client: MakeClient, fresh_services: Redstring
) -> None:
    client = make_client(fresh_services)
    tenant = str(uuid.uuid4())
    (ferries, mara, _), _ = await _load(client, tenant)
    deleted = await client.data(DELETE, t=tenant, ids=[ferries, str(uuid.uuid4())])
    assert deleted == {"deleteEntities": {"count": 1}}
    data = await client.data(
        """query ($t: ID!, $gone: ID!, $kept: ID!) {
             gone: entity(tenantId: $t, id: $gone) { name }
             kept: entity(tenantId: $t, id: $kept) { relationships { id } }
             retrieve(query: "Quayside Ferries", tenantId: $t, mode: SEMANTIC) {
               matches { entity { name } }
             }
           }""",
        t=tenant,
        gone=ferries,
        kept=mara,
    )
    assert data["gone"] is None
    assert data["kept"] == {"relationships": []}
    assert "Quayside Ferries" not in {m["entity"]["name"] for m in data["retrieve"]["matches"]}
    again = await client.data(DELETE, t=tenant, ids=[ferries])
    assert again == {"deleteEntities": {"count": 0}}


async def test_delete_in_another_tenant_deletes_nothing(
    make_client: MakeClient, fresh_services: Redstring
) -> None:
    client = make_client(fresh_services)
    tenant = str(uuid.uuid4())
    (ferries, _, _), _ = await _load(client, tenant)
    other = await client.data(DELETE, t=str(uuid.uuid4()), ids=[ferries])
    assert other == {"deleteEntities": {"count": 0}}
    data = await client.data(
        "query ($t: ID!, $id: ID!) { entity(tenantId: $t, id: $id) { name } }", t=tenant, id=ferries
    )
    assert data["entity"] == {"name": "Quayside Ferries"}


async def test_batch_limit(make_client: MakeClient, fresh_services: Redstring) -> None:
    from redstring.api.settings import Settings

    client = make_client(fresh_services, Settings(max_batch=2))
    error = await client.error(
        UPSERT_ENTITIES,
        t=str(uuid.uuid4()),
        entities=[{"name": f"e{i}", "entityType": "thing"} for i in range(3)],
    )
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert "at most 2" in error["message"]
