"""`Redstring.neo4j`: the client over a real Neo4j, started once however it is first used."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

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
    WrongEventLoopError,
    highlight_ranges,
)
from redstring.adapters.neo4j import Neo4jGraphStore, connect_driver
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


def test_a_call_on_another_event_loop_is_refused_and_the_client_closes_on_its_own(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> None:
    """The driver's connections belong to the loop of the first call: a call from
    another (a second `asyncio.run`) is refused by name, not failed in the driver, and
    so is `aclose`, which leaves the client open to be closed on its own loop."""
    uri, auth = neo4j_auth
    tenant = new_tenant()
    acme = Entity.create(tenant, "Acme Corp", "company")
    rs = Redstring.neo4j(uri, auth, embeddings=HashingEmbeddingProvider(DIMENSION))
    with asyncio.Runner() as first:
        first.run(rs.upsert([acme]))
        with pytest.raises(WrongEventLoopError, match="one client per event loop"):
            asyncio.run(rs.retrieve("Acme", tenant))
        with pytest.raises(WrongEventLoopError, match="close it on the event loop it started"):
            asyncio.run(rs.aclose())
        found = first.run(rs.retrieve("Acme", tenant, k=1))
        assert [m.entity.id for m in found.matches] == [acme.id]
        assert first.run(rs.delete([acme.id], tenant)) == 1
        first.run(rs.aclose())
    with pytest.raises(ClientClosedError):
        asyncio.run(rs.retrieve("Acme", tenant))


def test_aclose_after_the_client_s_loop_closed_says_so_and_closes_the_client(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> None:
    """`asyncio.run` closed the loop, and with it what the driver held there: `aclose`
    on the next loop says so (`WrongEventLoopError`), where it failed in the driver
    with `Event loop is closed`, and the client is closed."""
    uri, auth = neo4j_auth
    tenant = new_tenant()
    rs = Redstring.neo4j(uri, auth, embeddings=HashingEmbeddingProvider(DIMENSION))
    assert asyncio.run(rs.retrieve("Acme", tenant)).matches == ()
    with pytest.raises(WrongEventLoopError, match="event loop this client started on is closed"):
        asyncio.run(rs.aclose())
    with pytest.raises(ClientClosedError):
        asyncio.run(rs.retrieve("Acme", tenant))
    asyncio.run(rs.aclose())  # closed: nothing more to do


class _HeldDocuments(HashingEmbeddingProvider):
    """Embeds documents once `release` is set, after setting `embedding`."""

    def __init__(self, dimension: int) -> None:
        super().__init__(dimension)
        self.embedding = asyncio.Event()
        self.release = asyncio.Event()

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.embedding.set()
        await self.release.wait()
        return await super().embed_documents(texts)


async def test_a_call_running_when_the_client_closes_raises_client_closed(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> None:
    """Not `StoreUnavailableError: Driver closed`: the store did not fail, the client's
    lifetime ended under the call."""
    uri, auth = neo4j_auth
    tenant = new_tenant()
    provider = _HeldDocuments(DIMENSION)
    rs = Redstring.neo4j(uri, auth, embeddings=provider)
    await rs.start()
    upsert = asyncio.ensure_future(rs.upsert([Entity.create(tenant, "Acme Corp", "company")]))
    await provider.embedding.wait()
    await rs.aclose()
    provider.release.set()
    with pytest.raises(ClientClosedError, match="closed \\(aclose\\) while the call ran"):
        await upsert


async def test_a_driver_setting_it_cannot_use_is_bad_input_not_an_outage(
    neo4j_auth: tuple[str, tuple[str, str]],
) -> None:
    """A driver made by hand, past `Redstring.neo4j`'s checks: the driver's
    `ConfigurationError` is an `InvalidInputError`, never tried again as an outage, and
    it does not show the password."""
    uri, (user, password) = neo4j_auth
    async with connect_driver(uri, f"{user}:{password}") as driver:  # type: ignore[arg-type]
        graph = Neo4jGraphStore(driver)
        with pytest.raises(InvalidInputError, match="the Neo4j driver refuses its auth") as bad:
            await graph.tenants()
    assert password not in str(bad.value)


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
