"""`Redstring.neo4j`: the client over a real Neo4j, started once however it is first used."""

from __future__ import annotations

import asyncio
import json

import neo4j
import pytest

from redstring import (
    ClientClosedError,
    Entity,
    HashingEmbeddingProvider,
    InvalidInputError,
    Redstring,
    Relationship,
    RetrievalMode,
    TextRange,
    highlight_ranges,
)
from redstring.domain.properties import MAX_PROPERTIES_BYTES
from redstring.domain.text import MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH, MAX_TYPE_LENGTH
from redstring.testing import new_tenant

DIMENSION = 384  # the dimension of the shared database's vector index


async def test_the_client_writes_reads_and_deletes(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> None:
    uri, auth = neo4j_auth
    tenant = new_tenant()
    acme = Entity.create(tenant, "Acme Corp", "company")
    wile = Entity.create(tenant, "Wile E. Coyote", "person")
    buys = Relationship.create(tenant, wile.id, "CUSTOMER_OF", acme.id)
    async with Redstring.neo4j(uri, auth, embeddings=HashingEmbeddingProvider(DIMENSION)) as rs:
        await rs.upsert([acme, wile], [buys])
        await rs.upsert([acme, wile], [buys])
        found = await rs.retrieve("Acme Corp", tenant, k=2)
        assert found.matches[0].entity == acme
        assert await rs.relationships([acme.id], tenant) == {acme.id: [buys]}
        assert await rs.delete([acme.id, wile.id], tenant) == 2
        assert (await rs.retrieve("Acme Corp", tenant, k=2)).matches == ()


async def test_concurrent_first_calls_start_the_client_once(
    neo4j_auth: tuple[str, tuple[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without `async with`, the first calls start the client; those that come while it
    starts wait for the schema and the warm-up instead of running before them."""
    uri, auth = neo4j_auth
    tenant = new_tenant()
    events: list[str] = []
    warm_up = Redstring.warm_up

    async def spied(self: Redstring) -> None:
        events.append("warm-up started")
        await warm_up(self)
        events.append("warm-up done")

    monkeypatch.setattr(Redstring, "warm_up", spied)
    rs = Redstring.neo4j(uri, auth, embeddings=HashingEmbeddingProvider(DIMENSION))
    try:

        async def read() -> None:
            await rs.retrieve("Acme", tenant, k=1)
            events.append("read")

        await asyncio.gather(read(), read(), read())
    finally:
        await rs.aclose()
    assert events == ["warm-up started", "warm-up done", "read", "read", "read"]


async def test_a_closed_client_says_so_instead_of_failing_in_the_driver(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> None:
    uri, auth = neo4j_auth
    tenant = new_tenant()
    async with Redstring.neo4j(uri, auth, embeddings=HashingEmbeddingProvider(DIMENSION)) as rs:
        assert (await rs.retrieve("Acme", tenant, k=1)).matches == ()
    with pytest.raises(ClientClosedError, match="closed"):
        await rs.retrieve("Acme", tenant, k=1)


async def test_the_longest_names_are_stored_and_longer_names_or_types_refused(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> None:
    """A key is an entry of the range index on `LOOKUP_KEY` (about 8 KB at most), and a
    type a term of the vector index's filter (32,766 bytes at most, past which Neo4j
    stops the database): names of the longest words and types of the longest labels
    allowed are stored, and longer ones refused before a write."""
    uri, auth = neo4j_auth
    tenant = new_tenant()
    latin = Entity.create(tenant, "Acme " + "z" * (MAX_NAME_LENGTH - 5), "company")
    han = Entity.create(tenant, "腾讯" + "控" * (MAX_NAME_LENGTH - 2), "T" * MAX_TYPE_LENGTH)
    async with Redstring.neo4j(uri, auth, embeddings=HashingEmbeddingProvider(DIMENSION)) as rs:
        await rs.upsert([latin, han])
        stored = await rs.graph.get_entities([latin.id, han.id], tenant)
        assert sorted(stored, key=lambda e: e.name) == sorted([latin, han], key=lambda e: e.name)
        found = await rs.retrieve("Acme", tenant, k=1, mode=RetrievalMode.LEXICAL)
        assert [m.entity.id for m in found.matches] == [latin.id]
    with pytest.raises(InvalidInputError, match="entity_type must be at most 200"):
        Entity.create(tenant, "Short", "T" * 40_000)
    with pytest.raises(InvalidInputError, match="name must be at most 500"):
        Entity.create(tenant, "Acme " + "z" * 9000, "company")


async def test_a_han_or_kana_word_finds_the_names_it_stands_inside(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> None:
    """Through the stored `x:` keys and the store's seek of each query word among them
    (`query_infixes`), as in memory: `控股` finds both holding companies, each marked
    where it stands, and nothing else."""
    uri, auth = neo4j_auth
    tenant = new_tenant()
    names = ("腾讯控股有限公司", "阿里巴巴集团控股有限公司", "株式会社ソニー", "腾飞科技")
    async with Redstring.neo4j(uri, auth, embeddings=HashingEmbeddingProvider(DIMENSION)) as rs:
        await rs.upsert([Entity.create(tenant, name, "company") for name in names])
        found = await rs.retrieve("控股", tenant, k=5, mode=RetrievalMode.LEXICAL)
        assert {m.entity.name for m in found.matches} == set(names[:2])
        for match in found.matches:
            at = match.entity.name.index("控股")
            assert match.matched_text == match.entity.name
            assert highlight_ranges("控股", match.entity.name) == [TextRange(at, at + 2)]
        sony = await rs.retrieve("ソニー", tenant, k=5, mode=RetrievalMode.LEXICAL)
        assert [m.entity.name for m in sony.matches] == ["株式会社ソニー"]


async def test_properties_and_descriptions_stored_past_today_s_bounds_are_still_read(
    neo4j_auth: tuple[str, tuple[str, str]], driver: neo4j.AsyncDriver
) -> None:
    """The bounds apply where a record is made, not where a store reads one back: an
    entity an earlier version stored with more is read, found and returned whole."""
    uri, auth = neo4j_auth
    tenant = new_tenant()
    entity = Entity.create(tenant, "Gryphon Freight", "company")
    big = {"note": "n" * (MAX_PROPERTIES_BYTES + 1)}
    long = "d" * (MAX_DESCRIPTION_LENGTH + 1)
    async with Redstring.neo4j(uri, auth, embeddings=HashingEmbeddingProvider(DIMENSION)) as rs:
        await rs.upsert([entity])
        await driver.execute_query(
            "MATCH (e:Entity {tenant_id: $t, id: $id}) "
            "SET e.properties = $properties, e.description = $description",
            t=str(tenant),
            id=str(entity.id),
            properties=json.dumps(big),
            description=long,
        )
        [stored] = await rs.graph.get_entities([entity.id], tenant)
        assert (dict(stored.properties), stored.description) == (big, long)
        found = await rs.retrieve("Gryphon Freight", tenant, k=1, mode=RetrievalMode.LEXICAL)
        assert [m.entity for m in found.matches] == [stored]
