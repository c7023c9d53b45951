"""The in-memory adapters (and the two read apart) pass the compliance suites shipped in
redstring.testing."""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from redstring import (
    DimensionMismatchError,
    GraphStore,
    InMemoryGraphStore,
    InMemoryVectorStore,
    MissingEndpointError,
    TenantId,
    VectorRecord,
    VectorStore,
)
from redstring.adapters.memory.graph_store import _Tenant
from redstring.adapters.memory.vector_store import _unit, _units
from redstring.composition.candidates import candidate_reader
from redstring.domain.ids import id_order_key
from redstring.domain.vectors import checked_vector, checked_vectors
from redstring.testing import (
    CandidateReaderCompliance,
    GraphStoreCompliance,
    ReaderUnderTest,
    VectorStoreCompliance,
    make_entity,
    make_relationship,
    new_tenant,
)


class TestInMemoryGraphStore(GraphStoreCompliance):
    @pytest.fixture
    def graph_store(self) -> GraphStore:
        return InMemoryGraphStore()


async def test_counts_without_types_read_no_relationship(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without types a count is the entity's degree, from the adjacency's sizes (the
    compliance suite proves the answers); with types, each relationship is read."""
    graph = InMemoryGraphStore()
    tenant = new_tenant()
    hub, *spokes = (make_entity(tenant, f"E{i}") for i in range(6))
    await graph.upsert_entities([hub, *spokes])
    await graph.upsert_relationships(
        [make_relationship(hub, s, "OWNS") for s in spokes[:3]]
        + [make_relationship(s, hub, "KNOWS") for s in spokes[3:]]
    )

    def no_reads(*args: object) -> None:
        raise AssertionError("a relationship was read")

    monkeypatch.setattr(_Tenant, "relationships_of", no_reads)
    for direction, expected in (("OUT", 3), ("IN", 2), ("BOTH", 5)):
        counts = await graph.relationship_counts(
            [hub.id, spokes[0].id], tenant, direction=direction
        )
        assert counts == {hub.id: expected, spokes[0].id: {"OUT": 0, "IN": 1, "BOTH": 1}[direction]}
    with pytest.raises(AssertionError, match="a relationship was read"):
        await graph.relationship_counts([hub.id], tenant, types=["OWNS"])


class TestSeparateReadsInMemory(CandidateReaderCompliance):
    @pytest.fixture
    def under_test(self) -> ReaderUnderTest:
        graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(16)
        return ReaderUnderTest(
            reader=candidate_reader(vectors, graph), graph=graph, vectors=vectors
        )


class TestInMemoryVectorStore(VectorStoreCompliance):
    @pytest.fixture
    def vector_store(self) -> VectorStore:
        return InMemoryVectorStore(16)


async def test_search_equals_brute_force_after_deletes() -> None:
    """Swap-removal keeps rows, ids and types aligned: compare with a plain numpy search."""
    rng = np.random.default_rng(3)
    store = InMemoryVectorStore(8)
    tenant = new_tenant()
    records = []
    for i in range(200):
        entity = make_entity(tenant, f"e{i}", "odd" if i % 2 else "even")
        records.append((entity, rng.normal(size=8)))
    await store.upsert(
        [
            VectorRecord(
                entity_id=e.id, tenant_id=tenant, vector=tuple(v), entity_type=e.entity_type
            )
            for e, v in records
        ]
    )
    await store.delete([e.id for e, _ in records[::3]], tenant)
    kept = [(e, v) for i, (e, v) in enumerate(records) if i % 3]
    query = rng.normal(size=8)
    found = await store.search(query.tolist(), tenant, k=10, entity_types=["odd"])
    odd = [(e, v) for e, v in kept if e.entity_type == "odd"]
    cosine = [float(v @ query / np.linalg.norm(v) / np.linalg.norm(query)) for _, v in odd]
    best = sorted(zip(cosine, [e.id for e, _ in odd], strict=True), reverse=True)[:10]
    assert [m.entity_id for m in found] == [entity_id for _, entity_id in best]
    assert [m.score for m in found] == pytest.approx([(1 + c) / 2 for c, _ in best], abs=1e-5)


@pytest.mark.parametrize("nonzero", [3, 64])
async def test_sparse_and_dense_queries_equal_brute_force(nonzero: int) -> None:
    """A query with few nonzero components reads only those rows of the column matrix;
    it must rank exactly as the plain product does, as a dense query does."""
    rng = np.random.default_rng(nonzero)
    store = InMemoryVectorStore(64)
    tenant = new_tenant()
    entities = [make_entity(tenant, f"e{i}") for i in range(300)]
    vectors = rng.normal(size=(300, 64))
    await store.upsert(
        [
            VectorRecord(entity_id=e.id, tenant_id=tenant, vector=tuple(v), entity_type="t")
            for e, v in zip(entities, vectors, strict=True)
        ]
    )
    query = np.zeros(64)
    query[rng.choice(64, size=nonzero, replace=False)] = rng.normal(size=nonzero)
    found = await store.search(query.tolist(), tenant, k=10)
    units = vectors / np.linalg.norm(vectors, axis=1)[:, None]
    cosine = units @ (query / np.linalg.norm(query))
    best = np.argsort(-cosine)[:10]
    assert [m.entity_id for m in found] == [entities[i].id for i in best]
    assert [m.score for m in found] == pytest.approx((1 + cosine[best]) / 2, abs=1e-5)


@pytest.mark.parametrize("nonzero", [95, 384])
async def test_equal_vectors_score_alike_wherever_they_sit(nonzero: int) -> None:
    """Twins of one vector, scattered among other vectors, score exactly alike, so their
    ties break by id: a BLAS product sums a column by its position in the matrix, and gave
    twins scores one float apart."""
    rng = np.random.default_rng(nonzero)
    store = InMemoryVectorStore(384)
    tenant = new_tenant()
    twin = tuple(rng.normal(size=384).tolist())
    records = [
        VectorRecord(
            entity_id=make_entity(tenant, f"e{i}").id,
            tenant_id=tenant,
            vector=twin if i % 25 == 0 else tuple(rng.normal(size=384).tolist()),
            entity_type="twin" if i % 25 == 0 else "other",
        )
        for i in range(1000)
    ]
    await store.upsert(records)
    query = np.zeros(384)
    query[rng.choice(384, size=nonzero, replace=False)] = rng.normal(size=nonzero)
    found = await store.search(query.tolist(), tenant, k=50, entity_types=["twin"])
    twins = [r.entity_id for r in records if r.entity_type == "twin"]
    assert [m.entity_id for m in found] == sorted(twins, key=id_order_key)
    assert len({m.score for m in found}) == 1


async def test_a_batch_may_repeat_a_record_and_mix_tenants() -> None:
    """The last vector of a repeated entity wins, and each tenant keeps its own."""
    store = InMemoryVectorStore(3)
    one, two = new_tenant(), new_tenant()
    a, b = make_entity(one, "a"), make_entity(two, "b")

    def record(entity_id: uuid.UUID, tenant: TenantId, vector: tuple[float, ...]) -> VectorRecord:
        return VectorRecord(entity_id=entity_id, tenant_id=tenant, vector=vector, entity_type="t")

    await store.upsert(
        [
            record(a.id, one, (1.0, 0.0, 0.0)),
            record(b.id, two, (0.0, 1.0, 0.0)),
            record(a.id, one, (0.0, 0.0, 1.0)),
        ]
    )
    [hit_a] = await store.search([0.0, 0.0, 1.0], one, k=5)
    [hit_b] = await store.search([0.0, 1.0, 0.0], two, k=5)
    assert (hit_a.entity_id, hit_a.score) == (a.id, pytest.approx(1.0))
    assert (hit_b.entity_id, hit_b.score) == (b.id, pytest.approx(1.0))


def test_a_batch_is_made_unit_exactly_as_record_by_record() -> None:
    """`upsert` converts a batch as one matrix: its rows are `_unit`'s floats, bit for bit."""
    rng = np.random.default_rng(5)
    vectors = [tuple(rng.normal(scale=s, size=12).tolist()) for s in (1e-3, 1.0, 7.0, 1e6)]
    vectors += [(3.0,) + (0.0,) * 11, tuple(range(12))]
    batch = _units(checked_vectors(vectors, 12, "vector record"))
    one_by_one = np.array([_unit(checked_vector(v, 12, "vector record")) for v in vectors])
    assert batch.dtype == np.float32
    assert batch.tobytes() == one_by_one.tobytes()


@pytest.mark.parametrize(
    ("bad", "error"),
    [((1.0, 2.0), DimensionMismatchError), ((1.0, float("nan"), 0.0), ValueError)],
)
async def test_one_bad_record_fails_the_batch_as_alone(bad: tuple[float, ...], error: type) -> None:
    store = InMemoryVectorStore(3)
    tenant = new_tenant()
    good, other = make_entity(tenant, "good", "t"), make_entity(tenant, "bad", "t")
    records = [
        VectorRecord(entity_id=good.id, tenant_id=tenant, vector=(1.0, 0.0, 0.0), entity_type="t"),
        # Unvalidated, as ingest builds them after its own batch check.
        VectorRecord.model_construct(
            entity_id=other.id, tenant_id=tenant, vector=bad, entity_type="t"
        ),
    ]
    with pytest.raises(error) as alone:
        await store.upsert(records[1:])
    with pytest.raises(error) as batched:
        await store.upsert(records)
    assert str(batched.value) == str(alone.value)
    assert await store.search([1.0, 0.0, 0.0], tenant, k=5) == []  # nothing written


async def test_a_batch_of_two_tenants_keeps_them_apart() -> None:
    """Equal tenant ids need not be the same object; records of two tenants may alternate."""
    store = InMemoryGraphStore()
    one, two = new_tenant(), new_tenant()
    one_again = TenantId(uuid.UUID(str(one)))  # equal to `one`, another object
    a, b = make_entity(one, "a"), make_entity(one_again, "b")
    c, d = make_entity(two, "c"), make_entity(two, "d")
    await store.upsert_entities([a, c, b, d])
    ab, cd = make_relationship(a, b), make_relationship(c, d)
    await store.upsert_relationships([ab, cd])
    assert (await store.relationships_of([a.id], one))[a.id] == [ab]
    assert (await store.relationships_of([c.id], two))[c.id] == [cd]
    assert await store.get_entities([a.id, b.id, c.id], one_again) == [a, b]
    # `a` exists in tenant one only: an edge of tenant two naming it misses that end.
    stray = make_relationship(make_entity(two, "a"), d)
    with pytest.raises(MissingEndpointError) as missing:
        await store.upsert_relationships([ab, stray])
    assert missing.value.missing == [str(stray.source_entity_id)]


async def test_a_sample_of_sources_takes_a_vector_of_each_tenant_in_turn() -> None:
    """A few vectors span many tenants: one of each in turn, each tenant's from a random
    one of its vectors on, a tenant whose vectors are all deleted skipped."""
    store = InMemoryVectorStore(8)
    tenants = [new_tenant() for _ in range(4)]
    sizes = (10, 1, 2, 2)
    written = {
        tenant: [
            VectorRecord(
                entity_id=make_entity(tenant, "x").id,
                tenant_id=tenant,
                vector=(1.0,) * 8,
                entity_type="thing",
                source=f"{n}",
            )
            for n in range(size)
        ]
        for tenant, size in zip(tenants, sizes, strict=True)
    }
    for records in written.values():
        await store.upsert(records)
    await store.delete([r.entity_id for r in written[tenants[2]]], tenants[2])
    sample = await store.sample_sources(5)
    assert [s.tenant_id for s in sample] == [tenants[i] for i in (0, 1, 3, 0, 3)]
    assert {s.source for s in sample[2::2]} == {"0", "1"}  # the other of a pair follows
    everything = await store.sample_sources(100)
    assert {(s.tenant_id, s.source) for s in everything} == {
        (t, r.source) for t in (tenants[0], tenants[1], tenants[3]) for r in written[t]
    }
    firsts = {(await store.sample_sources(1))[0].source for _ in range(40)}
    assert len(firsts) > 1  # not the first written every time (one in 10**39 it is)
