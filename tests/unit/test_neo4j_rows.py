"""What the Neo4j adapters hand to the driver, checked without a server."""

from __future__ import annotations

import numpy as np
from neo4j.vector import Vector

from redstring.adapters.neo4j.records import (
    Rows,
    distinct_entity_rows,
    entity_row,
    query_vector,
    stored_vectors,
)
from redstring.testing import make_entity, new_tenant


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
