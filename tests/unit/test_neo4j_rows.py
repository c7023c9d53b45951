"""What the Neo4j adapters hand to the driver, checked without a server."""

from __future__ import annotations

from redstring.adapters.neo4j.records import Rows, entity_row
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
