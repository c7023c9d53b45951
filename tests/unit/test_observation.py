"""What composition reports to an `Observer`: store calls, embeddings, cache uses, dangling
matches; and `Redstring.warm_up`, which runs every read once before serving."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from redstring import (
    Direction,
    EmbeddingRefusedError,
    EmbeddingUnavailableError,
    EndReads,
    Entity,
    EntityId,
    GraphStore,
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    RetrievalMode,
    SourceSamples,
    StoreUnavailableError,
    TenantId,
    TextReads,
    VectorRecord,
    build_graph,
)
from redstring.composition.client import Redstring
from redstring.composition.observed import observed_graph_store, observed_vector_store
from redstring.testing import (
    CountingGraphStore,
    counting_graph_store,
    make_entity,
    make_relationship,
    new_tenant,
)
from tests.api.doubles import FailingGraphStore

DIM = 32


@dataclass
class RecordingObserver:
    """Keeps every report, as `(store, method, failed)` etc."""

    store_calls: list[tuple[str, str, bool]] = field(default_factory=list)
    embeddings: list[tuple[str, int, bool]] = field(default_factory=list)
    embedding_errors: list[BaseException | None] = field(default_factory=list)
    hits: int = 0
    misses: int = 0
    dangling: list[int] = field(default_factory=list)

    def store_call(self, store: str, method: str, seconds: float, *, failed: bool) -> None:
        assert seconds >= 0
        self.store_calls.append((store, method, failed))

    def embedding(
        self, kind: str, texts: int, seconds: float, *, error: BaseException | None
    ) -> None:
        assert seconds >= 0
        self.embeddings.append((kind, texts, error is not None))
        self.embedding_errors.append(error)

    def query_cache(self, *, hits: int, misses: int) -> None:
        self.hits += hits
        self.misses += misses

    def dangling_skipped(self, count: int) -> None:
        self.dangling.append(count)


async def _services(cache: int = 8) -> tuple[Redstring, RecordingObserver]:
    base = Redstring(
        embeddings=HashingEmbeddingProvider(DIM),
        vectors=InMemoryVectorStore(DIM),
        graph=InMemoryGraphStore(),
        query_cache_size=cache,
    )
    observer = RecordingObserver()
    return base.observed(observer), observer


async def test_a_retrieve_reports_each_store_call_and_the_embedding_under_the_cache() -> None:
    services, observer = await _services()
    tenant = new_tenant()
    await build_graph(
        [make_entity(tenant, "Acme Corp"), make_entity(tenant, "Apex Corporation")],
        embeddings=services.embeddings,
        vectors=services.vectors,
        graph=services.graph,
    )
    assert ("documents", 2, False) in observer.embeddings
    assert ("graph", "upsert_entities", False) in observer.store_calls
    assert ("vector", "upsert", False) in observer.store_calls
    observer.store_calls.clear()
    observer.embeddings.clear()

    await services.retriever.retrieve("Acme", tenant, k=2)
    await services.retriever.retrieve("Acme", tenant, k=2)
    calls = Counter(observer.store_calls)
    assert calls[("vector", "search", False)] == 2
    assert calls[("graph", "find_lexical_candidates", False)] == 2
    # The provider is asked once: the second query is a cache hit, not an embedding.
    assert observer.embeddings == [("query", 1, False)]
    assert (observer.hits, observer.misses) == (1, 1)
    assert observer.dangling == []


async def test_without_a_cache_every_query_is_an_embedding() -> None:
    services, observer = await _services(cache=0)
    tenant = new_tenant()
    await services.retriever.retrieve("Acme", tenant, k=2, mode=RetrievalMode.SEMANTIC)
    await services.retriever.retrieve("Acme", tenant, k=2, mode=RetrievalMode.SEMANTIC)
    assert observer.embeddings == [("query", 1, False)] * 2
    assert (observer.hits, observer.misses) == (0, 0)


async def test_dangling_matches_are_counted_once_per_retrieve() -> None:
    services, observer = await _services()
    tenant = new_tenant()
    good = make_entity(tenant, "Zyxwv")
    await build_graph(
        [good], embeddings=services.embeddings, vectors=services.vectors, graph=services.graph
    )
    [vector] = await services.embeddings.embed_query(["Zyxwv"])
    ghosts = [EntityId(uuid.uuid4()) for _ in range(2)]
    await services.vectors.upsert(
        [
            VectorRecord(entity_id=g, tenant_id=tenant, vector=vector, entity_type="thing")
            for g in ghosts
        ]
    )
    result = await services.retriever.retrieve("Zyxwv", tenant, k=3, mode=RetrievalMode.SEMANTIC)
    assert [m.entity.name for m in result.matches] == ["Zyxwv"]
    assert observer.dangling == [2]


async def test_a_failing_store_call_is_reported_as_failed() -> None:
    base = Redstring(
        embeddings=HashingEmbeddingProvider(DIM),
        vectors=InMemoryVectorStore(DIM),
        graph=FailingGraphStore(lambda: StoreUnavailableError("down")),
    )
    observer = RecordingObserver()
    services = base.observed(observer)
    with pytest.raises(StoreUnavailableError):
        await services.retriever.retrieve("Acme", new_tenant(), mode=RetrievalMode.LEXICAL)
    assert observer.store_calls == [("graph", "find_lexical_candidates", True)]


async def test_observed_services_keep_the_retriever_settings_and_the_closers() -> None:
    closed: list[str] = []

    async def close() -> None:
        closed.append("closed")

    base = Redstring(
        embeddings=HashingEmbeddingProvider(DIM),
        vectors=InMemoryVectorStore(DIM),
        graph=InMemoryGraphStore(),
        closers=[close],
        query_cache_size=5,
    )
    observed = base.observed(RecordingObserver())
    assert observed.query_cache is not None
    assert observed.query_cache.max_size == 5
    assert observed.retriever is not base.retriever
    await observed.aclose()
    assert closed == ["closed"]


async def test_warm_up_runs_every_read_a_request_makes_without_embedding() -> None:
    counting = CountingGraphStore(InMemoryGraphStore())
    observer = RecordingObserver()
    services = Redstring(
        embeddings=HashingEmbeddingProvider(DIM), vectors=InMemoryVectorStore(DIM), graph=counting
    ).observed(observer)
    await services.warm_up()
    reads = {
        "get_entities",
        "find_lexical_candidates",
        "relationships_of",
        "relationship_counts",
        "entity_types",
    }
    assert reads <= set(counting.calls)
    assert ("graph", "relationships_with_ends", False) not in observer.store_calls
    assert ("vector", "search", False) in observer.store_calls
    assert observer.embeddings == []


async def test_warm_up_reads_ends_when_the_store_does() -> None:
    counting = counting_graph_store(InMemoryGraphStore())
    services = Redstring(
        embeddings=HashingEmbeddingProvider(DIM), vectors=InMemoryVectorStore(DIM), graph=counting
    )
    await services.warm_up()
    # One statement a direction, each planned before a request needs it; a count's two
    # (a degree, or a read of each edge's type).
    assert counting.calls["relationships_with_ends"] == len(Direction)
    assert counting.calls["relationships_of"] == len(Direction)
    assert counting.calls["relationship_counts"] == 2 * len(Direction)


@pytest.mark.parametrize("wrap", ["observed", "counting"])
async def test_a_wrapper_reads_ends_exactly_when_its_store_does(wrap: str) -> None:
    """Observed and counted stores pass `relationships_with_ends` on, reported or counted
    under that name, and do not claim it over a store without it."""
    observer = RecordingObserver()

    def wrapped(inner: GraphStore) -> GraphStore:
        if wrap == "observed":
            return observed_graph_store(inner, observer)
        return counting_graph_store(inner)

    without = wrapped(CountingGraphStore(InMemoryGraphStore()))  # hides the port
    assert not isinstance(without, EndReads)
    assert not isinstance(wrapped(without), EndReads)

    memory = InMemoryGraphStore()
    tenant = new_tenant()
    a, b = make_entity(tenant, "A"), make_entity(tenant, "B")
    await memory.upsert_entities([a, b])
    await memory.upsert_relationships([make_relationship(a, b, "KNOWS")])
    store = wrapped(memory)
    assert isinstance(store, EndReads)
    read = await store.relationships_with_ends([a.id], tenant, direction=Direction.OUT)
    assert read == await memory.relationships_with_ends([a.id], tenant, direction=Direction.OUT)
    assert read.entities == {b.id: b}
    if isinstance(store, CountingGraphStore):
        assert store.calls == {"relationships_with_ends": 1}
    else:
        assert observer.store_calls == [("graph", "relationships_with_ends", False)]


class _EntitiesOnly(InMemoryGraphStore):
    """An in-memory store that reads entities whole, without the `TextReads` read (its
    `embedding_texts` attribute is None, as a store of one's own lacks it), counting
    its `get_entities`."""

    embedding_texts = None  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.whole_reads = 0

    async def get_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> list[Entity]:
        self.whole_reads += 1
        return await super().get_entities(ids, tenant_id)


@pytest.mark.parametrize("inner_reads_texts", [True, False], ids=["texts", "entities"])
@pytest.mark.parametrize("wrap", ["observed", "counting"])
async def test_a_wrapper_reads_texts_over_any_store(wrap: str, inner_reads_texts: bool) -> None:
    """Observed and counted stores are `TextReads` over any store, reported or counted
    under that name: the inner store's own read where it has one, else its entities
    read whole."""
    observer = RecordingObserver()
    memory = _EntitiesOnly()
    inner: GraphStore = CountingGraphStore(memory) if inner_reads_texts else memory
    assert isinstance(inner, TextReads) is inner_reads_texts
    store = (
        observed_graph_store(inner, observer) if wrap == "observed" else counting_graph_store(inner)
    )
    assert isinstance(store, TextReads)
    tenant = new_tenant()
    acme = make_entity(tenant, "Acme Corp", properties={"aliases": "Acme Widgets"})
    await memory.upsert_entities([acme])

    texts = await store.embedding_texts([acme.id, EntityId(uuid.uuid4())], tenant)

    assert texts == {acme.id: acme.embedding_text()}
    if isinstance(inner, CountingGraphStore):
        assert inner.calls == {"embedding_texts": 1}
    if isinstance(store, CountingGraphStore):
        assert store.calls == {"embedding_texts": 1}
    else:
        assert observer.store_calls == [("graph", "embedding_texts", False)]
    assert memory.whole_reads == 1  # the memory store's own read is of whole entities


@pytest.mark.parametrize("ends", [True, False], ids=["with-ends", "without-ends"])
async def test_entity_types_go_through_the_client_and_every_wrapper(ends: bool) -> None:
    """`Redstring.entity_types` reads the graph store's, through the observed and the
    counting wrappers (of either class) that pass it on with its limit, reported and
    counted."""
    memory = InMemoryGraphStore()
    counting = counting_graph_store(memory) if ends else CountingGraphStore(memory)
    assert isinstance(counting, EndReads) is ends
    base = Redstring(
        embeddings=HashingEmbeddingProvider(DIM), vectors=InMemoryVectorStore(DIM), graph=counting
    )
    tenant, other = new_tenant(), new_tenant()
    await base.upsert(
        [
            make_entity(tenant, "Acme Corp", "company"),
            make_entity(tenant, "Ada Moreau", "person"),
            make_entity(tenant, "Globex", "company"),
            make_entity(other, "Hidden", "secret"),
        ]
    )
    observer = RecordingObserver()
    services = base.observed(observer)
    assert isinstance(services.graph, EndReads) is ends
    assert await services.entity_types(str(tenant)) == {"company": 2, "person": 1}
    assert await services.entity_types(tenant, limit=1) == {"company": 2}  # passed on
    assert await services.entity_types(tenant, after="company") == {"person": 1}
    assert observer.store_calls == [("graph", "entity_types", False)] * 3
    assert counting.calls["entity_types"] == 3


@pytest.mark.parametrize("ends", [True, False], ids=["with-ends", "without-ends"])
async def test_pages_and_counts_of_relationships_go_through_every_wrapper(ends: bool) -> None:
    """`Redstring.relationships(after=)` and `relationship_counts` read the graph store's,
    through the observed and the counting wrappers (of either class), which pass `after`
    on (to `relationships_with_ends` too), reported and counted."""
    memory = InMemoryGraphStore()
    counting = counting_graph_store(memory) if ends else CountingGraphStore(memory)
    base = Redstring(
        embeddings=HashingEmbeddingProvider(DIM), vectors=InMemoryVectorStore(DIM), graph=counting
    )
    tenant = new_tenant()
    hub, a, b = (make_entity(tenant, n) for n in ("Hub", "A", "B"))
    first, second = make_relationship(hub, a, "KNOWS"), make_relationship(b, hub, "OWNS")
    await base.upsert([hub, a, b], [first, second])
    observer = RecordingObserver()
    services = base.observed(observer)
    assert await services.relationships([hub.id], tenant, after=first) == {hub.id: [second]}
    counts = await services.relationship_counts([hub.id], tenant, direction=Direction.IN)
    assert counts == {hub.id: 1}
    assert observer.store_calls == [
        ("graph", "relationships_of", False),
        ("graph", "relationship_counts", False),
    ]
    assert counting.calls["relationships_of"] == counting.calls["relationship_counts"] == 1
    if ends:
        assert isinstance(services.graph, EndReads)
        read = await services.graph.relationships_with_ends([hub.id], tenant, after=first)
        assert (read.relationships, read.entities) == ({hub.id: [second]}, {b.id: b})
        assert counting.calls["relationships_with_ends"] == 1


async def test_observed_services_read_ends_through_their_observed_store() -> None:
    services, observer = await _services()
    assert isinstance(services.graph, EndReads)
    await services.graph.relationships_with_ends([EntityId(uuid.uuid4())], new_tenant())
    assert observer.store_calls == [("graph", "relationships_with_ends", False)]


async def test_an_observed_vector_store_samples_sources_exactly_when_its_store_does() -> None:
    """`sample_sources` is passed on, reported under that name, and not claimed over a
    vector store without it (one written before `SourceSamples`)."""

    class Plain(InMemoryVectorStore):
        sample_sources = None  # type: ignore[assignment]

    observer = RecordingObserver()
    assert not isinstance(observed_vector_store(Plain(DIM), observer), SourceSamples)

    memory = InMemoryVectorStore(DIM)
    tenant = new_tenant()
    record = VectorRecord(
        entity_id=EntityId(uuid.uuid4()),
        tenant_id=tenant,
        vector=(1.0,) * DIM,
        entity_type="thing",
        source="made",
    )
    await memory.upsert([record])
    store = observed_vector_store(memory, observer)
    assert isinstance(store, SourceSamples)
    assert await store.sample_sources(5) == await memory.sample_sources(5)
    assert observer.store_calls == [("vector", "sample_sources", False)]
    services = Redstring(
        embeddings=HashingEmbeddingProvider(DIM), vectors=memory, graph=InMemoryGraphStore()
    ).observed(observer)
    assert isinstance(services.vectors, SourceSamples)


class Raising(HashingEmbeddingProvider):
    """Raises `error` for every query (none when it is None: then it waits, to be cancelled)."""

    def __init__(self, error: BaseException | None) -> None:
        super().__init__(DIM)
        self.error = error

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        if self.error is None:
            await asyncio.Event().wait()
        raise self.error  # type: ignore[misc]


@pytest.mark.parametrize(
    "error",
    [
        EmbeddingRefusedError("HTTP 401", status_code=401),
        EmbeddingUnavailableError("down", attempts=3),
    ],
    ids=["refused", "unavailable"],
)
async def test_a_failing_embedding_is_reported_with_what_it_raised(error: Exception) -> None:
    observer = RecordingObserver()
    services = Redstring(
        embeddings=Raising(error), vectors=InMemoryVectorStore(DIM), graph=InMemoryGraphStore()
    ).observed(observer)
    with pytest.raises(type(error)):
        await services.embeddings.embed_query(["Acme"])
    assert observer.embeddings == [("query", 1, True)]
    assert observer.embedding_errors == [error]  # the exception itself, to tell them apart


async def test_a_cancelled_embedding_is_reported_with_its_cancellation() -> None:
    observer = RecordingObserver()
    services = Redstring(
        embeddings=Raising(None), vectors=InMemoryVectorStore(DIM), graph=InMemoryGraphStore()
    ).observed(observer)
    waiting = asyncio.create_task(services.embeddings.embed_query(["Acme"]))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    [cancelled] = observer.embedding_errors
    assert isinstance(cancelled, asyncio.CancelledError)
