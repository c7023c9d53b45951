"""`Redstring`, the client: what it puts together, what it owns, and its one write path."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Callable

import pytest

from redstring import (
    ClientClosedError,
    ClientStartFailedError,
    DimensionMismatchError,
    Direction,
    EmbeddingRefusedError,
    Entity,
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    InvalidInputError,
    MissingEndpointError,
    Redstring,
    Relationship,
    RelationshipPlace,
    RetrievalMode,
    StoreUnavailableError,
)
from redstring.api.schema.inputs import EntityInput, RelationshipInput
from redstring.api.settings import Settings
from redstring.composition.observer import NoObserver
from redstring.ports.restarts import ServerStart
from redstring.testing import new_tenant
from tests.embeddings.fake_server import EmbeddingAPI, Failure, serving
from tests.processes import free_loopback_port


def test_create_derives_the_ids_the_api_derives() -> None:
    tenant = new_tenant()
    entity = Entity.create(str(tenant), "ACME Corp.", "company", description="anvils")
    api = EntityInput(name="acme corp", entity_type="company").to_domain(tenant, "e")
    assert entity.id == api.id
    assert entity.tenant_id == tenant
    other = Entity.create(tenant, "Wile", "person")
    edge = Relationship.create(tenant, other.id, "CUSTOMER_OF", str(entity.id), confidence=0.5)
    api_edge = RelationshipInput(
        source_id=str(other.id), target_id=str(entity.id), relationship_type="CUSTOMER_OF"
    ).to_domain(tenant, "r")
    assert edge.id == api_edge.id
    assert (edge.source_entity_id, edge.target_entity_id) == (other.id, entity.id)
    assert edge.confidence == 0.5


def test_create_keeps_an_id_given() -> None:
    tenant = new_tenant()
    named = Entity.create(tenant, "Acme", "company")
    assert Entity.create(tenant, "Other", "company", id=named.id).id == named.id


def test_the_default_provider_is_the_servers_and_sizes_the_store() -> None:
    rs = Redstring.in_memory()
    settings = Settings()
    served = Redstring.from_settings(settings)
    assert type(rs.embeddings) is type(served.embeddings)
    assert rs.embeddings.dimension == rs.vectors.dimension == served.vectors.dimension


def test_a_provider_and_a_store_of_different_dimensions_are_refused() -> None:
    with pytest.raises(DimensionMismatchError):
        Redstring(
            embeddings=HashingEmbeddingProvider(8),
            vectors=InMemoryVectorStore(16),
            graph=InMemoryGraphStore(),
        )


async def test_upsert_retrieve_relationships_delete() -> None:
    tenant, elsewhere = new_tenant(), new_tenant()
    acme = Entity.create(tenant, "Acme Corp", "company")
    wile = Entity.create(tenant, "Wile E. Coyote", "person")
    buys = Relationship.create(tenant, wile.id, "CUSTOMER_OF", acme.id)
    async with Redstring.in_memory(HashingEmbeddingProvider(32)) as rs:
        await rs.upsert([acme, wile], [buys])
        await rs.upsert([acme, wile], [buys])  # idempotent
        await rs.upsert([Entity.create(elsewhere, "Acme Corp", "company")])
        found = await rs.retrieve("Acme Corp", tenant, k=5)
        assert [m.entity.id for m in found.matches][:1] == [acme.id]
        assert {m.entity.tenant_id for m in found.matches} == {tenant}
        edges = await rs.relationships([acme.id, wile.id], tenant)
        assert edges == {acme.id: [buys], wile.id: [buys]}
        assert await rs.delete([acme.id], tenant) == 1
        assert await rs.relationships([wile.id], tenant) == {wile.id: []}
        semantic = await rs.retrieve("Acme Corp", tenant, k=5, mode=RetrievalMode.SEMANTIC)
        assert acme.id not in {m.entity.id for m in semantic.matches}


async def test_relationships_page_by_page_with_their_counts() -> None:
    """`Redstring.relationships(after=)` goes on from the last relationship of a page (or
    its place), whatever the direction of that page; `relationship_counts` is how many
    the pages hold in all."""
    tenant = new_tenant()
    hub = Entity.create(tenant, "Hub", "company")
    spokes = [Entity.create(tenant, f"Spoke {i}", "company") for i in range(5)]
    edges = [
        Relationship.create(tenant, hub.id, "OWNS", s.id)
        if i % 2
        else Relationship.create(tenant, s.id, "SUPPLIES", hub.id)
        for i, s in enumerate(spokes)
    ]
    async with Redstring.in_memory(HashingEmbeddingProvider(32)) as rs:
        await rs.upsert([hub, *spokes], edges)
        pages: list[list[Relationship]] = []
        last: Relationship | None = None
        while page := (await rs.relationships([hub.id], tenant, limit_per_entity=2, after=last))[
            hub.id
        ]:
            pages.append(page)
            last = page[-1]
        assert [len(p) for p in pages] == [2, 2, 1]
        listed = [r for p in pages for r in p]
        assert listed == (await rs.relationships([hub.id], str(tenant)))[hub.id]
        assert sorted(r.id for r in listed) == sorted(r.id for r in edges)
        out = await rs.relationships([hub.id], tenant, direction=Direction.OUT)
        place = RelationshipPlace.of(out[hub.id][0])
        both = await rs.relationships([hub.id], tenant, after=place)
        assert both[hub.id] == listed[1:]  # `OWNS` first, then `SUPPLIES`
        counts = await rs.relationship_counts([hub.id, spokes[0].id], str(tenant))
        assert counts == {hub.id: 5, spokes[0].id: 1}
        supplied = await rs.relationship_counts([hub.id], tenant, types=["SUPPLIES"])
        assert supplied == {hub.id: 3}
        owned = await rs.relationship_counts([hub.id], tenant, direction=Direction.OUT)
        assert owned == {hub.id: 2}


async def test_a_relationship_to_an_unknown_entity_is_refused() -> None:
    tenant = new_tenant()
    acme = Entity.create(tenant, "Acme Corp", "company")
    ghost = Entity.create(tenant, "Ghost", "company")
    async with Redstring.in_memory(HashingEmbeddingProvider(32)) as rs:
        with pytest.raises(MissingEndpointError):
            await rs.upsert([acme], [Relationship.create(tenant, acme.id, "OWNS", ghost.id)])


async def test_aclose_closes_an_owned_provider_and_leaves_a_given_one_open() -> None:
    async with serving(EmbeddingAPI(dimension=8)) as base_url:
        settings = Settings(
            embeddings="openai",
            embedding_model="m",
            embedding_base_url=base_url,
            embedding_dimension=8,
        )
        owned = Redstring.from_settings(settings)
        async with owned:
            await owned.embeddings.embed_query(["acme"])
        with pytest.raises(RuntimeError):
            await owned.embeddings.embed_query(["acme"])

        holder = Redstring.from_settings(settings)
        async with Redstring.in_memory(holder.embeddings):
            pass
        assert len(await holder.embeddings.embed_query(["acme"])) == 1
        await holder.aclose()


async def test_a_refusing_provider_fails_a_retrieve_and_an_upsert_as_no_outage() -> None:
    """A wrong key: `EmbeddingRefusedError`, no `StoreUnavailableError`, nothing written;
    a LEXICAL retrieve, which embeds nothing, still answers."""
    api = EmbeddingAPI(dimension=8)
    api.failures.extend(Failure(401, body={"error": {"message": "bad key"}}) for _ in range(3))
    tenant = new_tenant()
    acme = Entity.create(tenant, "Acme Corp", "company")
    async with serving(api) as base_url:
        settings = Settings(
            embeddings="openai",
            embedding_model="m",
            embedding_base_url=base_url,
            embedding_dimension=8,
            embedding_api_key_env="REDSTRING_TEST_UNSET_KEY",
        )
        async with Redstring.from_settings(settings) as rs:
            for call in (rs.upsert([acme]), rs.retrieve("acme", tenant)):
                with pytest.raises(EmbeddingRefusedError, match="HTTP 401") as info:
                    await call
                assert not isinstance(info.value, StoreUnavailableError)
            assert await rs.graph.get_entities([acme.id], tenant) == []
            found = await rs.retrieve("acme", tenant, mode=RetrievalMode.LEXICAL)
            assert found.matches == ()
    assert api.requests == 2


class _StartCounting:
    """Counts `last_started` reads (`StartReads`) of stores reading through `source`."""

    def __init__(self, source: object) -> None:
        self.source = source
        self.reads = 0

    @property
    def start_source(self) -> object:
        return self.source

    async def last_started(self) -> ServerStart:
        self.reads += 1
        return ServerStart(server="127.0.0.1:7687", started="once")


class _StartGraph(_StartCounting, InMemoryGraphStore):
    def __init__(self, source: object) -> None:
        InMemoryGraphStore.__init__(self)
        _StartCounting.__init__(self, source)


class _StartVectors(_StartCounting, InMemoryVectorStore):
    def __init__(self, source: object, dimension: int) -> None:
        InMemoryVectorStore.__init__(self, dimension)
        _StartCounting.__init__(self, source)


@pytest.mark.parametrize("shared", [True, False])
async def test_a_readiness_check_reads_a_server_s_start_once_a_source(shared: bool) -> None:
    """Both stores on one driver (one source) read the server's start once a check; on two
    sources, each reads it."""
    first, second = object(), object()
    graph = _StartGraph(first)
    vectors = _StartVectors(first if shared else second, 16)
    rs = Redstring(embeddings=HashingEmbeddingProvider(16), vectors=vectors, graph=graph)
    assert await rs.check_ready()
    assert graph.reads + vectors.reads == (1 if shared else 2)


async def test_a_client_that_failed_to_start_refuses_every_later_call() -> None:
    """Nothing listens on the port: the first call's start fails and closes the client;
    a later call must not run on what was closed (a Neo4j driver, no schema)."""
    uri = f"bolt://127.0.0.1:{free_loopback_port()}"
    rs = Redstring.neo4j(uri, ("neo4j", "unused"), outage_retry=0)
    tenant = new_tenant()
    with pytest.raises(StoreUnavailableError):
        await rs.retrieve("Acme", tenant)
    for _ in range(2):
        with pytest.raises(ClientStartFailedError, match="failed to start") as refused:
            await rs.retrieve("Acme", tenant)
        assert isinstance(refused.value.__cause__, StoreUnavailableError)


def test_the_neo4j_backend_without_its_extra_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before the provider is built, so an owned one (an HTTP client) is not left open."""
    monkeypatch.setitem(sys.modules, "neo4j", None)  # as the import system blocks a module
    built: list[str] = []
    for builder in ("make_embedding_provider", "default_embedding_provider"):
        monkeypatch.setattr(
            f"redstring.composition.client.{builder}",
            lambda *args, **kwargs: built.append("provider"),
        )
    extra = "the neo4j backend needs the neo4j extra: pip install 'redstring\\[neo4j\\]'"
    with pytest.raises(InvalidInputError, match=extra):
        Redstring.neo4j("bolt://127.0.0.1:9", ("neo4j", "x"))
    with pytest.raises(InvalidInputError, match=extra):
        Redstring.from_settings(Settings(backend="neo4j", neo4j_password="x"))
    assert built == []


def test_a_uri_neo4j_cannot_take_is_refused_before_anything_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[str] = []
    for builder in ("make_embedding_provider", "default_embedding_provider"):
        monkeypatch.setattr(
            f"redstring.composition.client.{builder}",
            lambda *args, **kwargs: built.append("provider"),
        )
    with pytest.raises(
        InvalidInputError, match="not a Neo4j URI such as bolt://HOST:7687: its scheme 'foo'"
    ):
        Redstring.neo4j("foo://x", ("neo4j", "x"))
    with pytest.raises(InvalidInputError, match="its port is no number from 1 to 65535"):
        Redstring.neo4j("bolt://127.0.0.1:notaport", ("neo4j", "x"))
    with pytest.raises(InvalidInputError, match="it takes no path: a database is named apart"):
        Redstring.neo4j("bolt://127.0.0.1:7687/nosuchdb", ("neo4j", "x"))
    assert built == []


async def test_a_client_whose_start_was_cancelled_refuses_every_later_call() -> None:
    rs = Redstring.in_memory()
    started = asyncio.Event()

    async def never_done() -> None:
        started.set()
        await asyncio.Event().wait()

    rs._lifetime.starter = never_done  # as `Redstring.neo4j` sets it
    first = asyncio.ensure_future(rs.retrieve("Acme", new_tenant()))
    await started.wait()
    starting = rs._lifetime.starting
    assert starting is not None
    starting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    with pytest.raises(ClientStartFailedError, match="failed to start"):
        await rs.retrieve("Acme", new_tenant())


async def test_a_closed_client_refuses_every_call_and_its_observed_copy_too() -> None:
    """After `aclose` nothing may run on what was released (in memory the stores would
    still answer, over Neo4j the driver would fail): each call says the client is closed.
    Closing again runs no closer a second time."""
    closes: list[str] = []

    async def closer() -> None:
        closes.append("closed")

    rs = Redstring(
        embeddings=HashingEmbeddingProvider(16),
        vectors=InMemoryVectorStore(16),
        graph=InMemoryGraphStore(),
        closers=[closer],
    )
    tenant = new_tenant()
    acme = Entity.create(tenant, "Acme Corp", "company")
    await rs.upsert([acme])
    seen = rs.observed(NoObserver())
    await rs.aclose()
    calls = {
        "upsert": lambda client: client.upsert([acme]),
        "retrieve": lambda client: client.retrieve("Acme", tenant),
        "relationships": lambda client: client.relationships([acme.id], tenant),
        "relationship_counts": lambda client: client.relationship_counts([acme.id], tenant),
        "delete": lambda client: client.delete([acme.id], tenant),
        "tenants": lambda client: client.tenants(),
        "entity_types": lambda client: client.entity_types(tenant),
        "rekey": lambda client: client.rekey(tenant),
        "check_ready": lambda client: client.check_ready(),
        "warm_up": lambda client: client.warm_up(),
        "start": lambda client: client.start(),
    }
    for client in (rs, seen):
        for name, call in calls.items():
            with pytest.raises(ClientClosedError, match="closed") as refused:
                await call(client)
            assert type(refused.value) is ClientClosedError, name
    await rs.aclose()
    await seen.aclose()
    assert closes == ["closed"]
    assert await InMemoryGraphStore.get_entities(rs.graph, [acme.id], tenant)  # kept intact


async def test_a_client_closed_while_it_starts_refuses_the_calls_that_waited() -> None:
    rs = Redstring.in_memory(HashingEmbeddingProvider(16))
    release = asyncio.Event()

    async def slow_start() -> None:
        await release.wait()

    rs._lifetime.starter = slow_start  # as `Redstring.neo4j` sets it
    waiting = asyncio.ensure_future(rs.retrieve("Acme", new_tenant()))
    await asyncio.sleep(0)
    await rs.aclose()
    release.set()
    with pytest.raises(ClientClosedError):
        await waiting


async def test_a_close_ends_a_start_under_way() -> None:
    """A start that waits (Neo4j not answering, its outage retry) is cancelled by
    `aclose`, before the stores close: it went on, on a closed driver, and `serve`
    stopped while it started waited for it."""
    rs = Redstring.in_memory(HashingEmbeddingProvider(16))
    began, ended = asyncio.Event(), asyncio.Event()

    async def endless_start() -> None:
        began.set()
        try:
            await asyncio.Event().wait()
        finally:
            ended.set()

    rs._lifetime.starter = endless_start  # as `Redstring.neo4j` sets it
    waiting = asyncio.ensure_future(rs.retrieve("Acme", new_tenant()))
    await asyncio.wait_for(began.wait(), timeout=5)
    await rs.aclose()
    assert ended.is_set()
    with pytest.raises(ClientClosedError):
        await asyncio.wait_for(waiting, timeout=5)


async def test_a_close_ends_a_start_run_through_an_observed_copy() -> None:
    """The copy and the client share one lifetime, its start among it: closing either
    cancels a start the other runs, before any closer runs under it."""
    began, ended = asyncio.Event(), asyncio.Event()
    closed_after_the_start: list[bool] = []

    async def closer() -> None:
        closed_after_the_start.append(ended.is_set())

    async def endless_start() -> None:
        began.set()
        try:
            await asyncio.Event().wait()
        finally:
            ended.set()

    rs = Redstring(
        embeddings=HashingEmbeddingProvider(16),
        vectors=InMemoryVectorStore(16),
        graph=InMemoryGraphStore(),
        closers=[closer],
    )
    rs._lifetime.starter = endless_start  # as `Redstring.neo4j` sets it
    seen = rs.observed(NoObserver())
    waiting = asyncio.ensure_future(seen.start())
    await asyncio.wait_for(began.wait(), timeout=5)
    await rs.aclose()
    assert ended.is_set()
    assert closed_after_the_start == [True]
    with pytest.raises(ClientClosedError):
        await asyncio.wait_for(waiting, timeout=5)


async def test_a_client_and_its_observed_copies_start_once() -> None:
    """A copy made before the first call does not start the stores again (over Neo4j:
    the schema ensured and every statement warmed up a second time)."""
    rs = Redstring.in_memory(HashingEmbeddingProvider(16))
    runs: list[str] = []

    async def start() -> None:
        runs.append("start")
        await asyncio.sleep(0)

    rs._lifetime.starter = start  # as `Redstring.neo4j` sets it
    seen, seen_again = rs.observed(NoObserver()), rs.observed(NoObserver())
    await asyncio.gather(seen.start(), rs.start())
    await seen_again.start()
    await rs.start()
    assert runs == ["start"]


async def test_every_call_after_a_close_that_cut_a_start_says_the_client_is_closed() -> None:
    """The start did not fail, the client was closed under it: `ClientClosedError`, as
    `aclose` says, not `ClientStartFailedError` of its cancellation."""
    rs = Redstring.in_memory(HashingEmbeddingProvider(16))
    began = asyncio.Event()

    async def endless_start() -> None:
        began.set()
        await asyncio.Event().wait()

    rs._lifetime.starter = endless_start  # as `Redstring.neo4j` sets it
    seen = rs.observed(NoObserver())
    waiting = asyncio.ensure_future(rs.start())
    await asyncio.wait_for(began.wait(), timeout=5)
    await rs.aclose()
    with pytest.raises(ClientClosedError):
        await asyncio.wait_for(waiting, timeout=5)
    for client in (rs, seen):
        with pytest.raises(ClientClosedError, match="closed") as refused:
            await client.start()
        assert type(refused.value) is ClientClosedError
        with pytest.raises(ClientClosedError, match="closed") as refused:
            await client.retrieve("Acme", new_tenant())
        assert type(refused.value) is ClientClosedError


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Redstring.in_memory(query_cache_size=1.5), "query_cache_size must be an integer"),
        (lambda: Redstring.in_memory(query_cache_size="10"), "query_cache_size must be an integer"),
        (lambda: Redstring.in_memory(query_cache_size=-1), "query_cache_size must not be negative"),
        (lambda: HashingEmbeddingProvider("8"), "dimension must be an integer, got '8'"),
        (lambda: InMemoryVectorStore("8"), "dimension must be an integer, got '8'"),
        (lambda: InMemoryVectorStore(0), "dimension must be at least 1, got 0"),
    ],
    ids=["cache 1.5", "cache '10'", "cache -1", "hashing '8'", "vectors '8'", "vectors 0"],
)
def test_a_size_given_to_a_constructor_is_read_as_every_count_is(
    make: Callable[[], object], message: str
) -> None:
    """`InvalidInputError` naming the argument (`count_of`), as `k` is: not a bare
    `TypeError` from a comparison, nor a float taken as a size."""
    with pytest.raises(InvalidInputError, match=f"^{re.escape(message)}"):
        make()


def test_a_memory_client_serves_every_event_loop() -> None:
    """Nothing of it belongs to a loop: each `asyncio.run` may use it, and close it."""
    tenant = new_tenant()
    acme = Entity.create(tenant, "Acme Corp", "company")
    rs = Redstring.in_memory(HashingEmbeddingProvider(16))
    asyncio.run(rs.upsert([acme]))
    found = asyncio.run(rs.retrieve("Acme", tenant, k=1))
    assert [m.entity.id for m in found.matches] == [acme.id]
    asyncio.run(rs.aclose())
    with pytest.raises(ClientClosedError):
        asyncio.run(rs.retrieve("Acme", tenant))
