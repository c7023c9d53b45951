"""`rekey`: a tenant's stale keys rewritten page by page; the command's refusals."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from redstring import (
    EmbeddingRefusedError,
    Entity,
    EntityId,
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    InvalidInputError,
    Redstring,
    RekeyReport,
    RetrievalMode,
    StoreUnavailableError,
    TenantId,
)
from redstring.api.cli import EXIT_FAILED, EXIT_USAGE, main
from redstring.api.settings import Settings
from redstring.composition.rekey import rekey
from redstring.domain.properties import FrozenProperties
from redstring.testing import CountingGraphStore, make_entity, new_tenant


def _stale(entity: Entity) -> Entity:
    """`entity` as a version before the Latin folding keyed it: `ł`, `ø`, `æ` dropped."""
    name = entity.name.lower()
    for letter in "łøæ":
        name = name.replace(letter, "")
    words = name.split()
    return entity.model_copy(
        update={
            "normalized_name": " ".join(words),
            "blocking_keys": (f"t:{entity.entity_type}", *(f"w:{w}" for w in words)),
        }
    )


def _tenant_of(stale: int, current: int) -> tuple[list[Entity], list[Entity]]:
    tenant = new_tenant()
    olds = [make_entity(tenant, f"Łukasz Ørsted {i}", "person") for i in range(stale)]
    news = [make_entity(tenant, f"Acme {i}", "org") for i in range(current)]
    return olds, news


async def test_every_stale_entity_is_rewritten_page_by_page() -> None:
    olds, news = _tenant_of(7, 3)
    store = CountingGraphStore(InMemoryGraphStore())
    await store.upsert_entities([*map(_stale, olds), *news])
    tenant = olds[0].tenant_id
    pages: list[RekeyReport] = []

    report = await rekey(store, tenant, page_size=3, on_page=pages.append)

    assert report == RekeyReport(read=10, stale=7, rewritten=7)
    assert [page.read for page in pages] == [3, 6, 9, 10]
    assert pages[-1] == report
    assert store.calls["entity_page"] == 4  # the short last page ends it
    stored = await store.get_entities([e.id for e in olds], tenant)
    assert stored == olds
    assert all(e.has_current_keys() for e in stored)
    assert await rekey(store, tenant, page_size=3) == RekeyReport(read=10, stale=0, rewritten=0)


async def test_an_entity_this_version_would_refuse_is_rekeyed_all_the_same() -> None:
    """Stored by a version that took an `aliases` of no names, which is now refused."""
    [old], _ = _tenant_of(1, 0)
    fields = {name: getattr(_stale(old), name) for name in Entity.model_fields}
    legacy = Entity.model_construct(**{**fields, "properties": FrozenProperties({"aliases": 5})})
    store = InMemoryGraphStore()
    await store.upsert_entities([legacy])
    assert await rekey(store, old.tenant_id) == RekeyReport(read=1, stale=1, rewritten=1)
    [stored] = await store.get_entities([old.id], old.tenant_id)
    assert (stored.normalized_name, stored.blocking_keys) == (
        old.normalized_name,
        old.blocking_keys,
    )


async def test_a_full_last_page_reads_one_empty_page_more() -> None:
    olds, _ = _tenant_of(4, 0)
    store = CountingGraphStore(InMemoryGraphStore())
    await store.upsert_entities([_stale(e) for e in olds])
    report = await rekey(store, olds[0].tenant_id, page_size=2)
    assert report == RekeyReport(read=4, stale=4, rewritten=4)
    assert store.calls["entity_page"] == 3
    assert store.calls["rewrite_keys"] == 2


async def test_a_dry_run_counts_and_rewrites_nothing() -> None:
    olds, news = _tenant_of(3, 2)
    store = InMemoryGraphStore()
    await store.upsert_entities([*map(_stale, olds), *news])
    tenant = olds[0].tenant_id
    assert await rekey(store, tenant, dry_run=True) == RekeyReport(read=5, stale=3, rewritten=0)
    stored = await store.get_entities([e.id for e in olds], tenant)
    assert not any(e.has_current_keys() for e in stored)


async def test_an_entity_written_during_the_run_is_counted_stale_not_rewritten() -> None:
    olds, _ = _tenant_of(3, 0)
    renamed = make_entity(olds[0].tenant_id, "Kraków", "person", entity_id=olds[1].id)

    class WrittenMeanwhile(InMemoryGraphStore):
        async def rewrite_keys(self, entities: Sequence[Entity]) -> int:
            await self.upsert_entities([renamed])
            return await super().rewrite_keys(entities)

    store = WrittenMeanwhile()
    await store.upsert_entities([_stale(e) for e in olds])
    report = await rekey(store, olds[0].tenant_id)
    assert report == RekeyReport(read=3, stale=3, rewritten=2)
    assert await store.get_entities([renamed.id], renamed.tenant_id) == [renamed]


async def test_the_tenant_and_page_size_are_checked() -> None:
    store = InMemoryGraphStore()
    with pytest.raises(InvalidInputError, match=r"^page_size must be at least 1"):
        await rekey(store, new_tenant(), page_size=0)
    with pytest.raises(InvalidInputError, match=r"^tenant_id must be a UUID"):
        await rekey(store, "acme")  # type: ignore[arg-type]


async def test_a_rekeyed_tenant_is_found_by_its_new_keys() -> None:
    """The point of it: `Aeroskobing` finds `Ærøskøbing Ferries` lexically once its keys
    are current (stale, `rskbing` is more than a typo away)."""
    tenant = new_tenant()
    ferries = make_entity(tenant, "Ærøskøbing Ferries", "org")
    async with Redstring.in_memory() as client:
        await client.upsert([make_entity(tenant, "Acme Ferries", "org")])
        await client.graph.upsert_entities([_stale(ferries)])

        async def found() -> list[Entity]:
            result = await client.retrieve("Aeroskobing", tenant, mode=RetrievalMode.LEXICAL)
            return [match.entity for match in result.matches]

        assert await found() == []
        assert await client.rekey(tenant) == RekeyReport(read=2, stale=1, rewritten=1)
        assert await found() == [ferries]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--tenant", "acme"], "--tenant must be a UUID"),
        (["--tenant", str(new_tenant()), "--page-size", "0"], "--page-size must be at least 1"),
    ],
)
def test_the_command_refuses_bad_arguments(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rekey", *argv]) == EXIT_USAGE
    assert message in capsys.readouterr().err


def test_the_command_has_nothing_to_do_on_the_memory_backend(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("REDSTRING_BACKEND", "memory")
    assert main(["rekey", "--tenant", str(new_tenant())]) == EXIT_USAGE
    assert "the memory backend keeps no data between processes" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [[], ["--tenant", str(new_tenant()), "--all-tenants"]])
def test_the_command_takes_one_tenant_or_all(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["rekey", *argv])
    assert exited.value.code == EXIT_USAGE


async def test_the_tenants_are_those_with_an_entity() -> None:
    olds, _ = _tenant_of(1, 0)
    async with Redstring.in_memory() as client:
        assert await client.tenants() == []
        await client.upsert(olds)
        assert await client.tenants() == [olds[0].tenant_id]


async def test_on_progress_hears_each_step_of_a_page() -> None:
    """Read, then keys rewritten, then (with vectors) vectors written: a run stopped within
    a page has a report of the steps it got through; `on_page` hears the ends alone."""
    olds, _ = _tenant_of(3, 0)
    store = InMemoryGraphStore()
    await store.upsert_entities([_stale(e) for e in olds])
    tenant = olds[0].tenant_id
    steps: list[RekeyReport] = []
    pages: list[RekeyReport] = []

    await rekey(store, tenant, page_size=2, on_progress=steps.append, on_page=pages.append)
    assert steps == [
        RekeyReport(read=2),
        RekeyReport(read=2, stale=2, rewritten=2),
        RekeyReport(read=3, stale=2, rewritten=2),
        RekeyReport(read=3, stale=3, rewritten=3),
    ]
    assert pages == [steps[1], steps[3]]

    steps.clear()
    embeddings = HashingEmbeddingProvider(8)
    vectors = InMemoryVectorStore(8)
    await rekey(
        store, tenant, page_size=2, embeddings=embeddings, vectors=vectors, on_progress=steps.append
    )
    assert steps == [
        RekeyReport(read=2),
        RekeyReport(read=2),
        RekeyReport(read=2, stale_vectors=2, embedded=2),
        RekeyReport(read=3, stale_vectors=2, embedded=2),
        RekeyReport(read=3, stale_vectors=2, embedded=2),
        RekeyReport(read=3, stale_vectors=3, embedded=3),
    ]


# Where the command says it stopped --------------------------------------------------


class _RefusingAt(HashingEmbeddingProvider):
    """The hashing provider, but its `refuse_at`-th `embed_documents` call is refused, as a
    provider asked for a model it does not serve would."""

    def __init__(self, refuse_at: int) -> None:
        super().__init__(8)
        self.refuse_at = refuse_at
        self.calls = 0

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        if self.calls == self.refuse_at:
            raise EmbeddingRefusedError(
                "the embedding provider refused a request for model 'm' with HTTP 404",
                status_code=404,
                options=("model", "base_url"),
            )
        return await super().embed_documents(texts)


class _GraphFailing(InMemoryGraphStore):
    """An in-memory graph store whose `method` fails from its `fail_at`-th call on."""

    def __init__(self, method: str, fail_at: int) -> None:
        super().__init__()
        self.method, self.fail_at, self.calls = method, fail_at, 0

    def _called(self, method: str) -> None:
        if method == self.method:
            self.calls += 1
            if self.calls >= self.fail_at:
                raise StoreUnavailableError("Neo4j is unavailable: gone")

    async def entity_page(
        self, tenant_id: TenantId, *, after: EntityId | None, limit: int
    ) -> list[Entity]:
        self._called("entity_page")
        return await super().entity_page(tenant_id, after=after, limit=limit)

    async def rewrite_keys(self, entities: Sequence[Entity]) -> int:
        self._called("rewrite_keys")
        return await super().rewrite_keys(entities)


def _rekey_over(
    monkeypatch: pytest.MonkeyPatch,
    graph: InMemoryGraphStore,
    embeddings: HashingEmbeddingProvider | None = None,
) -> None:
    """`redstring rekey` on the neo4j backend's settings, over these in-memory stores."""
    monkeypatch.setenv("REDSTRING_BACKEND", "neo4j")
    monkeypatch.setenv("REDSTRING_NEO4J_PASSWORD", "never-sent")  # no server is opened
    vectors = InMemoryVectorStore(8)

    async def opened(settings: Settings) -> Redstring:
        return Redstring(embeddings=embeddings or _RefusingAt(0), vectors=vectors, graph=graph)

    monkeypatch.setattr("redstring.api.command_line.open_client", opened)


def _stored(graph: InMemoryGraphStore, stale: int) -> TenantId:
    """`stale` entities of a new tenant, stored with an earlier version's keys."""
    olds, _ = _tenant_of(stale, 0)
    asyncio.run(graph.upsert_entities([_stale(e) for e in olds]))
    return olds[0].tenant_id


@pytest.mark.parametrize(
    ("refuse_at", "stopped"),
    [
        # The first page read and its keys rewritten, then its embedding refused.
        (1, "stopped after 2 entities read and 2 rewritten, 0 embedded again"),
        (2, "stopped after 4 entities read and 4 rewritten, 2 embedded again"),
    ],
)
def test_a_refusal_within_a_page_says_what_was_read_and_rewritten_and_what_to_fix(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    refuse_at: int,
    stopped: str,
) -> None:
    graph = InMemoryGraphStore()
    tenant = _stored(graph, 5)
    _rekey_over(monkeypatch, graph, _RefusingAt(refuse_at))
    argv = ["rekey", "--tenant", str(tenant), "--vectors", "--page-size", "2"]
    assert main(argv) == EXIT_FAILED
    said, last = [line for line in capsys.readouterr().err.splitlines() if line]
    assert said.endswith(
        "with HTTP 404; check REDSTRING_EMBEDDING_MODEL, or REDSTRING_EMBEDDING_BASE_URL"
    )
    assert last == (
        f"{stopped}; what was rewritten stays, and once the settings the error says to "
        "check are fixed, running it again goes on from the stale ones left"
    )


@pytest.mark.parametrize(
    ("method", "fail_at", "stopped"),
    [
        ("entity_page", 1, "stopped before reading an entity; nothing was rewritten"),
        (
            "rewrite_keys",  # the first page read, its keys not rewritten
            1,
            "stopped after 2 entities read and 0 rewritten; what was rewritten stays, and "
            "running it again goes on from the stale ones left",
        ),
        (
            "entity_page",
            2,
            "stopped after 2 entities read and 2 rewritten; what was rewritten stays, and "
            "running it again goes on from the stale ones left",
        ),
    ],
)
def test_a_store_failing_says_what_was_read_and_rewritten(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    method: str,
    fail_at: int,
    stopped: str,
) -> None:
    graph = _GraphFailing(method, fail_at)
    tenant = _stored(graph, 5)
    _rekey_over(monkeypatch, graph)
    assert main(["rekey", "--tenant", str(tenant), "--page-size", "2"]) == EXIT_FAILED
    said, last = [line for line in capsys.readouterr().err.splitlines() if line]
    assert said == "error: Neo4j is unavailable: gone"
    assert last == stopped
