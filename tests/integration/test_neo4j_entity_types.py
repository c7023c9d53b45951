"""`Neo4jGraphStore.entity_types` with a limit: the server sends the first types, and they
are the first of Python's order whichever of its two string comparisons it sorts by, from
any type on.

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
from redstring.testing import make_entity, new_tenant

# Types whose first 4, 5, 7 and 10 differ between code point and UTF-16 order.
TYPES = [
    "x\U0001f600y", "x\ue000", "x", "x\uffffz", "\U0001d49c", "\uff5a",
    "y\n\U0001f600", "y\n\uff5a", "Company", "company", "été",
]  # fmt: skip
KEY = "ORDER BY entity_type\n"
UTF16_KEY = "ORDER BY entity_type + $nothing\n"


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
    assert KEY in cypher.ENTITY_TYPES
    utf16 = cypher.ENTITY_TYPES.replace(KEY, UTF16_KEY)
    monkeypatch.setattr(cypher, "ENTITY_TYPES", utf16)


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
    statements = _Statements(graph, monkeypatch)
    for limit in range(len(TYPES) + 1):
        kept = await graph.entity_types(tenant, limit=limit)
        assert list(kept) == sorted(TYPES)[:limit], limit
        for after in TYPES:  # a type beyond U+FFFF on both sides of each
            later = [t for t in sorted(TYPES) if t > after][:limit]
            assert list(await graph.entity_types(tenant, limit=limit, after=after)) == later
    assert list(await graph.entity_types(tenant)) == sorted(TYPES)
    assert set(statements.run) == {cypher.ENTITY_TYPES}  # one statement each time


async def test_the_statement_sends_every_type_beyond_u_ffff_and_the_first_others(
    driver: neo4j.AsyncDriver,
) -> None:
    """30 types, none beyond U+FFFF, and 4 that are: all 4 and the first `limit` others
    come, every type without a limit."""
    graph = Neo4jGraphStore(driver)
    await graph.ensure_schema()
    tenant = new_tenant()
    types = [f"type {i:02}" for i in range(30)] + [f"type {i:02}\U0001f600" for i in range(4)]
    await graph.upsert_entities([make_entity(tenant, f"T{i}", t) for i, t in enumerate(types)])
    for limit in (0, 1, 5, 30, 31, None):
        records, _, _ = await driver.execute_query(
            cypher.ENTITY_TYPES, tenant_id=str(tenant), limit=limit, after=None
        )
        sent = [entity_type for entity_type, _ in records[0]["types"]]
        assert sorted(sent[:4]) == types[30:]  # those beyond come first
        assert sent[4:] == types[:30][:limit]


async def test_a_limit_of_zero_answers_nothing_without_a_statement(
    driver: neo4j.AsyncDriver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`entityTypes(first: 0)` costs nothing (`idle_at_zero`): it reads nothing."""
    graph = Neo4jGraphStore(driver)
    await graph.ensure_schema()
    tenant = new_tenant()
    await graph.upsert_entities([make_entity(tenant, "Acme", "org")])
    statements = _Statements(graph, monkeypatch)
    assert await graph.entity_types(tenant, limit=0) == {}
    assert statements.run == []
    assert await graph.entity_types(tenant, limit=1) == {"org": 1}
    assert statements.run == [cypher.ENTITY_TYPES]
