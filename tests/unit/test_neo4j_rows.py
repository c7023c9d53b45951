"""What the Neo4j adapters hand to the driver, checked without a server."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np
from neo4j.vector import Vector

from redstring.adapters.neo4j.records import (
    Rows,
    StoredEntities,
    candidates_from_columns,
    distinct_entity_rows,
    entity_row,
    query_vector,
    relationship_from,
    relationship_row,
    stored_vectors,
    whole_entities,
    whole_relationships,
)
from redstring.domain.entity import Entity
from redstring.testing import make_entity, make_relationship, new_tenant


def test_rows_repr_is_short_whatever_the_rows_hold() -> None:
    rows = Rows([{"vector": [0.123456789] * 384} for _ in range(1000)])
    assert repr(rows) == "<1000 rows>"
    assert isinstance(rows, list)
    assert rows[0]["vector"][0] == 0.123456789


def test_entity_row_keeps_every_key_and_looks_up_all_but_the_type_key() -> None:
    entity = make_entity(new_tenant(), "Acme Corp", "org")
    row = entity_row(entity)
    assert row["blocking_keys"] == list(entity.blocking_keys)
    assert "t:org" in row["blocking_keys"]
    assert row["lookup_keys"] == [k for k in entity.blocking_keys if k != "t:org"]


def test_distinct_entity_rows_keep_each_entity_once_with_its_last_value() -> None:
    tenant, other = new_tenant(), new_tenant()
    first = make_entity(tenant, "Acme Corp", "org", description="old")
    second = make_entity(tenant, "Globex", "org")
    again = make_entity(tenant, "Acme Corp", "org", description="new", entity_id=first.id)
    elsewhere = make_entity(other, "Acme Corp", "org", entity_id=first.id)
    rows = distinct_entity_rows([first, second, again, elsewhere])
    assert [(r["tenant_id"], r["id"]) for r in rows] == [
        (str(tenant), str(first.id)),
        (str(tenant), str(second.id)),
        (str(other), str(first.id)),
    ]
    assert rows[0]["description"] == "new"


def test_packed_vectors_hold_the_float32_values_a_list_would_be_stored_as() -> None:
    matrix = np.random.default_rng(7).standard_normal((3, 5))
    packed = stored_vectors(matrix, packed=True)
    assert all(isinstance(v, Vector) for v in packed)
    assert [v.to_native() for v in packed] == matrix.astype(np.float32).tolist()
    assert stored_vectors(matrix, packed=False) == matrix.tolist()


def test_a_packed_query_vector_keeps_every_float64_bit() -> None:
    vector = np.random.default_rng(8).standard_normal(5)
    packed = query_vector(vector, packed=True)
    assert isinstance(packed, Vector)
    assert packed.to_native() == vector.tolist()
    assert query_vector(vector, packed=False) == vector.tolist()


def _stored(entity: Entity) -> dict[str, Any]:
    """`entity` as its node's property map reads back (Neo4j stores no null)."""
    row = {k: v for k, v in entity_row(entity).items() if v is not None}
    del row["lookup_keys"]
    return row


def test_maps_of_entities_deleted_mid_read_are_skipped_and_the_next_ones_kept() -> None:
    """A node deleted after the statement found it reads as `{}`, or short of some
    properties; the entity after it is still read."""
    tenant = new_tenant()
    first, second = make_entity(tenant, "Acme Corp", "org"), make_entity(tenant, "Globex", "org")
    half = {k: v for k, v in _stored(first).items() if k in ("tenant_id", "id")}
    maps = [{}, _stored(first), half, _stored(second)]

    assert whole_entities(maps) == [_stored(first), _stored(second)]
    entities = StoredEntities(maps)
    assert list(entities) == [first.id, second.id]
    assert entities[second.id] == second


def test_relationship_maps_without_their_ends_are_skipped() -> None:
    """A read answers `r {.*, source: startNode(r).id, target: endNode(r).id}`: an end
    deleted after the statement found the relationship reads as a null id."""
    tenant = new_tenant()
    source, target = make_entity(tenant, "Acme Corp", "org"), make_entity(tenant, "Globex", "org")
    relationship = make_relationship(source, target)
    whole = relationship_row(relationship)
    ended = {**whole, "target": None}
    assert whole_relationships([{}, ended, whole]) == [whole]
    assert relationship_from(whole) == relationship


def test_lexical_rows_of_nodes_deleted_mid_read_are_skipped() -> None:
    """The columns hold a null where a node deleted mid-read had a property."""
    tenant = new_tenant()
    kept = make_entity(tenant, "Acme Corp", "org")
    columns = {
        "ids": [None, str(uuid.uuid4()), str(kept.id)],
        "entity_types": [None, "org", "org"],
        "names": [None, None, kept.name],
        "normalized_names": [None, "globex", kept.normalized_name],
        "properties": [None, "{}", "{}"],
    }
    [candidate] = candidates_from_columns(tenant, columns)
    assert (candidate.id, candidate.name) == (kept.id, kept.name)
