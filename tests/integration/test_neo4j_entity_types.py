"""`Neo4jGraphStore.entity_types` with a limit: the server sends the first types, and they
are the first of Python's order whichever of its two string comparisons it sorts by.

Neo4j compares two strings by UTF-8 bytes (code points, Python's order) when it holds
both so, else by UTF-16 code units. This server sorts types read from nodes by code
points, so the compliance suite cannot tell a statement that cuts in the server's order
from one that is right; here the sort key is made a Java string (`+ $nothing`, a
parameter), which it compares by UTF-16 code units.
"""

from __future__ import annotations

from typing import Any

import neo4j
import pytest

from redstring.adapters.neo4j import Neo4jGraphStore, cypher
from redstring.adapters.neo4j import graph_store as neo4j_graph_store
from redstring.testing import make_entity, new_tenant

# Types whose first 4, 5, 7 and 10 differ between code point and UTF-16 order.
TYPES = [
    "x\U0001f600y", "x\ue000", "x", "x\uffffz", "\U0001d49c", "\uff5a",
    "y\n\U0001f600", "y\n\uff5a", "Company", "company", "été",
]  # fmt: skip
KEY = "ELSE entity_type END"
UTF16_KEY = "ELSE entity_type + $nothing END"


def _utf16(text: str) -> bytes:
    return text.encode("utf-16-be")


async def _sorted_by_server(driver: neo4j.AsyncDriver, tenant: str, key: str) -> list[str]:
    statement = (
        "MATCH (e:Entity) WHERE e.tenant_id = $tenant_id AND e.id IS NOT NULL "
        f"WITH DISTINCT e.entity_type AS entity_type ORDER BY {key} "
        "RETURN collect(entity_type) AS types"
    )
    records, _, _ = await driver.execute_query(statement, tenant_id=tenant, nothing="")
    types: list[str] = records[0]["types"]
    return types


def _sort_by_utf16_code_units(monkeypatch: pytest.MonkeyPatch) -> None:
    assert KEY in cypher.FIRST_ENTITY_TYPES
    utf16 = cypher.FIRST_ENTITY_TYPES.replace(KEY, UTF16_KEY)
    monkeypatch.setattr(cypher, "FIRST_ENTITY_TYPES", utf16)


class _Statements:
    """The statements a store's connection runs, in order."""

    def __init__(self, graph: Neo4jGraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.run: list[str] = []
        connection = graph._db
        query = connection.query

        async def recorded(statement: str, parameters: dict[str, Any]) -> list[neo4j.Record]:
            self.run.append(statement)
            return await query(statement, {**parameters, "nothing": ""})

        monkeypatch.setattr(connection, "query", recorded)


async def test_the_first_types_are_python_s_when_the_server_sorts_by_utf16_code_units(
    driver: neo4j.AsyncDriver, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = Neo4jGraphStore(driver)
    await graph.ensure_schema()
    tenant = new_tenant()
    await graph.upsert_entities([make_entity(tenant, f"T{i}", t) for i, t in enumerate(TYPES)])
    # The premise: the plain key sorts by code points, the other by UTF-16 code units.
    assert await _sorted_by_server(driver, str(tenant), "entity_type") == sorted(TYPES)
    by_units = await _sorted_by_server(driver, str(tenant), "entity_type + $nothing")
    assert by_units == sorted(TYPES, key=_utf16) != sorted(TYPES)
    _sort_by_utf16_code_units(monkeypatch)
    monkeypatch.setattr(neo4j_graph_store, "BEYOND_BMP_ROOM", 3)  # the three beyond U+FFFF
    statements = _Statements(graph, monkeypatch)
    for limit in range(len(TYPES) + 1):
        kept = await graph.entity_types(tenant, limit=limit)
        assert list(kept) == sorted(TYPES)[:limit], limit
    assert set(statements.run) == {cypher.FIRST_ENTITY_TYPES}  # no type was read whole


@pytest.mark.parametrize("room", [2, 3])
async def test_more_types_beyond_u_ffff_than_the_room_for_them_are_read_whole(
    driver: neo4j.AsyncDriver, monkeypatch: pytest.MonkeyPatch, room: int
) -> None:
    """Three types hold a character beyond U+FFFF, which UTF-16 code units put before
    `a\ue000`: with room for two of them, the first statement cannot tell whether the
    others it sent are the first, and the adapter reads every type (the server's first
    four in its order, sorted here, would answer `a😀 1` second); with room for three,
    one statement does."""
    graph = Neo4jGraphStore(driver)
    await graph.ensure_schema()
    tenant = new_tenant()
    types = ["b", "a\U0001f600 3", "a\ue000", "a\U0001f600 1", "a", "a\U0001f600 2"]
    await graph.upsert_entities([make_entity(tenant, f"T{i}", t) for i, t in enumerate(types)])
    _sort_by_utf16_code_units(monkeypatch)
    monkeypatch.setattr(neo4j_graph_store, "BEYOND_BMP_ROOM", room)
    statements = _Statements(graph, monkeypatch)
    assert list(await graph.entity_types(tenant, limit=2)) == ["a", "a\ue000"]
    read_whole = [cypher.FIRST_ENTITY_TYPES, cypher.ENTITY_TYPES]
    assert statements.run == (read_whole if room == 2 else read_whole[:1])


async def test_the_first_types_statement_sends_at_most_the_limit_and_the_room(
    driver: neo4j.AsyncDriver,
) -> None:
    """30 types, none beyond U+FFFF, and 4 that are: the first 5 and all 4 come."""
    graph = Neo4jGraphStore(driver)
    await graph.ensure_schema()
    tenant = new_tenant()
    types = [f"type {i:02}" for i in range(30)] + [f"type {i:02}\U0001f600" for i in range(4)]
    await graph.upsert_entities([make_entity(tenant, f"T{i}", t) for i, t in enumerate(types)])
    for rows in (5, 9):
        records, _, _ = await driver.execute_query(
            cypher.FIRST_ENTITY_TYPES, tenant_id=str(tenant), rows=rows
        )
        sent = [(entity_type, beyond) for entity_type, _, beyond in records[0]["types"]]
        assert sorted(sent[:4]) == [(t, True) for t in types[30:]]  # those beyond come first
        assert sent[4:] == [(t, False) for t in types[: rows - 4]]
