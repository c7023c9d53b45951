"""How often each kind of query has its answer first, per retrieval mode, in memory: the
measure of `bench.latin_folding` and `bench.romanised_names`."""

from __future__ import annotations

from redstring import Entity, Redstring, RetrievalMode, TenantId

MODES = (RetrievalMode.LEXICAL, RetrievalMode.SEMANTIC, RetrievalMode.HYBRID)


async def first_matches(
    entities: list[Entity], queries: list[tuple[str, str, str]], tenant: TenantId
) -> dict[RetrievalMode, dict[str, int]]:
    """Per mode, and per group of the `(group, query, answer's name)` queries, how many
    had their answer first, over `entities` in a client of the default provider."""
    found: dict[RetrievalMode, dict[str, int]] = {}
    async with Redstring.in_memory() as rs:
        await rs.upsert(entities)
        for mode in MODES:
            first = found[mode] = {}
            for group, query, name in queries:
                result = await rs.retrieve(query, tenant, k=1, mode=mode)
                hit = bool(result.matches) and result.matches[0].entity.name == name
                first[group] = first.get(group, 0) + hit
    return found
