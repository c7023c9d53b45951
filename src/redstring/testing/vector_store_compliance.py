"""The compliance suite of the `VectorStore` port."""

from __future__ import annotations

import math
import re
import uuid
from typing import Any

import numpy as np
import pytest

from redstring.domain.errors import DimensionMismatchError, InvalidInputError
from redstring.domain.ids import EntityId, TenantId, id_order_key
from redstring.domain.vectors import StoredSource, VectorRecord
from redstring.ports.vector_store import SourceSamples, VectorStore
from redstring.testing.factories import new_tenant


def _axis(dimension: int, index: int, weight: float = 1.0) -> list[float]:
    """A unit vector along `index`, tilted towards axis 0 by `weight` (1.0 = on axis 0)."""
    vector = [0.0] * dimension
    vector[0] = weight
    vector[index % dimension] += math.sqrt(max(0.0, 1.0 - weight * weight)) if index else 0.0
    return vector


def _record(
    tenant: TenantId,
    vector: list[float],
    entity_type: str = "thing",
    entity_id: uuid.UUID | None = None,
) -> VectorRecord:
    return VectorRecord(
        entity_id=EntityId(entity_id or uuid.uuid4()),
        tenant_id=tenant,
        vector=tuple(vector),
        entity_type=entity_type,
    )


def _samples_of(vector_store: VectorStore) -> SourceSamples:
    """The store as a `SourceSamples`, or the test skipped: the capability is optional."""
    if not isinstance(vector_store, SourceSamples):
        pytest.skip(f"{type(vector_store).__name__} reads no sample of its sources")
    return vector_store


# More than any test store holds: a sample of this many is every vector of the store.
_EVERY_VECTOR = 1_000_000


class VectorStoreCompliance:
    """Subclass and override the `vector_store` fixture (dimension of at least 8).

    The tests of `SourceSamples` are skipped for a store that does not offer it."""

    @pytest.fixture
    def vector_store(self) -> VectorStore:
        raise NotImplementedError("override the vector_store fixture")

    async def test_nearest_first_on_the_unit_scale(self, vector_store: VectorStore) -> None:
        dim, tenant = vector_store.dimension, new_tenant()
        query = _axis(dim, 0)
        same = _record(tenant, query)
        near = _record(tenant, _axis(dim, 1, 0.8))
        orthogonal = _record(tenant, _axis(dim, 2, 0.0))
        opposite = _record(tenant, [-x for x in query])
        await vector_store.upsert([orthogonal, opposite, near, same])
        found = await vector_store.search(query, tenant, k=10)
        assert [m.entity_id for m in found] == [
            same.entity_id,
            near.entity_id,
            orthogonal.entity_id,
            opposite.entity_id,
        ]
        scores = [m.score for m in found]
        assert scores == pytest.approx([1.0, 0.9, 0.5, 0.0], abs=1e-3)

    async def test_k_at_zero_one_and_above_the_corpus(self, vector_store: VectorStore) -> None:
        dim, tenant = vector_store.dimension, new_tenant()
        records = [_record(tenant, _axis(dim, 1, w)) for w in (0.9, 0.6, 0.3)]
        await vector_store.upsert(records)
        query = _axis(dim, 0)
        assert await vector_store.search(query, tenant, k=0) == []
        [best] = await vector_store.search(query, tenant, k=1)
        assert best.entity_id == records[0].entity_id
        assert [m.entity_id for m in await vector_store.search(query, tenant, k=50)] == [
            r.entity_id for r in records
        ]
        # Neo4j's largest integer answers as any `k` past the corpus; past it, or not an
        # integer of 0 or more, is `InvalidInputError` (`count_of`).
        assert await vector_store.search(query, tenant, k=2**63 - 1) == (
            await vector_store.search(query, tenant, k=50)
        )
        wrong_ks: list[tuple[Any, str]] = [
            (-1, "k must not be negative, got -1"),
            (1.5, "k must be an integer, got 1.5"),
            (True, "k must be an integer, got True"),
            (2**63, "k must be at most 2**63 - 1, got 9223372036854775808"),
        ]
        for wrong, message in wrong_ks:
            with pytest.raises(InvalidInputError, match=f"^{re.escape(message)}$"):
                await vector_store.search(query, tenant, k=wrong)

    async def test_filters_apply_before_k_against_a_nearer_flood(
        self, vector_store: VectorStore
    ) -> None:
        dim = vector_store.dimension
        mine, theirs = new_tenant(), new_tenant()
        rng = np.random.default_rng(7)
        query = _axis(dim, 0)
        far = [_record(mine, _axis(dim, 1 + i, 0.1), "person") for i in range(5)]
        flood_other_tenant = [
            _record(theirs, _axis(dim, 1 + int(rng.integers(dim - 1)), 0.99), "person")
            for _ in range(300)
        ]
        flood_other_type = [
            _record(mine, _axis(dim, 1 + int(rng.integers(dim - 1)), 0.99), "org")
            for _ in range(300)
        ]
        await vector_store.upsert(flood_other_tenant + flood_other_type + far)

        by_tenant = await vector_store.search(query, theirs, k=5)
        assert len(by_tenant) == 5
        typed = await vector_store.search(query, mine, k=5, entity_types=["person"])
        assert {m.entity_id for m in typed} == {r.entity_id for r in far}
        either = await vector_store.search(query, mine, k=3, entity_types=["person", "org"])
        assert all(m.score > 0.99 for m in either)
        assert await vector_store.search(query, mine, k=5, entity_types=[]) == []
        assert await vector_store.search(query, mine, k=5, entity_types=["unknown"]) == []

    async def test_ties_break_by_id_string_even_at_the_cut(self, vector_store: VectorStore) -> None:
        dim, tenant = vector_store.dimension, new_tenant()
        vector = _axis(dim, 1, 0.7)
        twins = [_record(tenant, vector) for _ in range(6)]
        await vector_store.upsert(twins)
        expected = sorted((r.entity_id for r in twins), key=id_order_key)
        found = await vector_store.search(_axis(dim, 0), tenant, k=3)
        assert [m.entity_id for m in found] == expected[:3]

    async def test_colliding_ids_across_tenants(self, vector_store: VectorStore) -> None:
        dim = vector_store.dimension
        tenant_a, tenant_b = new_tenant(), new_tenant()
        shared = uuid.uuid4()
        query = _axis(dim, 0)
        await vector_store.upsert(
            [
                _record(tenant_a, query, entity_id=shared),
                _record(tenant_b, [-x for x in query], entity_id=shared),
            ]
        )
        [in_a] = await vector_store.search(query, tenant_a, k=5)
        [in_b] = await vector_store.search(query, tenant_b, k=5)
        assert in_a.score == pytest.approx(1.0, abs=1e-3)
        assert in_b.score == pytest.approx(0.0, abs=1e-3)
        await vector_store.delete([EntityId(shared)], tenant_a)
        assert await vector_store.search(query, tenant_a, k=5) == []
        assert len(await vector_store.search(query, tenant_b, k=5)) == 1

    async def test_upsert_replaces_vector_and_type(self, vector_store: VectorStore) -> None:
        dim, tenant = vector_store.dimension, new_tenant()
        record = _record(tenant, _axis(dim, 1, 0.0), "draft")
        await vector_store.upsert([record, record])
        moved = _record(tenant, _axis(dim, 0), "final", entity_id=record.entity_id)
        await vector_store.upsert([moved])
        found = await vector_store.search(_axis(dim, 0), tenant, k=5)
        assert [(m.entity_id, round(m.score, 3)) for m in found] == [(record.entity_id, 1.0)]
        assert await vector_store.search(_axis(dim, 0), tenant, k=5, entity_types=["draft"]) == []

    async def test_a_type_filter_is_a_list_of_names_never_a_strings_letters(
        self, vector_store: VectorStore
    ) -> None:
        """`entity_types` is read by `names_of`: a lone string is refused where it would
        otherwise filter by its letters (`"ot"` finding type `o`), each name is compared
        stripped as types are stored, and a blank one is refused."""
        dim, tenant = vector_store.dimension, new_tenant()
        letter = _record(tenant, _axis(dim, 0), "o")
        await vector_store.upsert([letter])
        query = _axis(dim, 0)
        with pytest.raises(InvalidInputError, match=r"^entity_types must be a list of strings"):
            await vector_store.search(query, tenant, k=5, entity_types="ot")
        with pytest.raises(InvalidInputError, match=r"^entity_types\[1\] must not be blank"):
            await vector_store.search(query, tenant, k=5, entity_types=["o", " "])
        with pytest.raises(InvalidInputError, match=r"^entity_types\[0\] must be a string"):
            await vector_store.search(query, tenant, k=5, entity_types=[5])  # type: ignore[list-item]
        [found] = await vector_store.search(query, tenant, k=5, entity_types=(" o ",))
        assert found.entity_id == letter.entity_id
        assert await vector_store.search(query, tenant, k=5, entity_types=["t"]) == []

    async def test_delete_removes_only_what_is_named(self, vector_store: VectorStore) -> None:
        dim, tenant = vector_store.dimension, new_tenant()
        records = [_record(tenant, _axis(dim, 1 + i, 0.5)) for i in range(4)]
        await vector_store.upsert(records)
        await vector_store.delete([records[1].entity_id, EntityId(uuid.uuid4())], tenant)
        found = await vector_store.search(_axis(dim, 0), tenant, k=10)
        assert {m.entity_id for m in found} == {
            r.entity_id for i, r in enumerate(records) if i != 1
        }

    async def test_sources_are_those_stored_last_of_the_tenant(
        self, vector_store: VectorStore
    ) -> None:
        """`sources` answers ids with a vector, as last written (None when written without
        a source), in the tenant asked for, and forgets what is deleted or directionless."""
        dim, tenant, other = vector_store.dimension, new_tenant(), new_tenant()
        made, unknown, dropped, never = (_record(tenant, _axis(dim, i, 0.5)) for i in range(1, 5))
        made = made.model_copy(update={"source": "first"})
        dropped = dropped.model_copy(update={"source": "gone"})
        theirs = made.model_copy(update={"tenant_id": other, "source": "theirs"})
        await vector_store.upsert([made, unknown, dropped, theirs])
        assert await vector_store.sources([made.entity_id, unknown.entity_id], tenant) == {
            made.entity_id: "first",
            unknown.entity_id: None,
        }
        again = made.model_copy(update={"source": "second"})
        directionless = dropped.model_copy(update={"vector": (0.0,) * dim, "source": "none"})
        await vector_store.upsert([made, again, directionless])
        await vector_store.delete([unknown.entity_id], tenant)
        ids = [r.entity_id for r in (made, unknown, dropped, never)]
        assert await vector_store.sources(ids, tenant) == {made.entity_id: "second"}
        assert await vector_store.sources(ids, other) == {made.entity_id: "theirs"}
        assert await vector_store.sources([], tenant) == {}
        with pytest.raises(InvalidInputError, match=r"^tenant_id must be a UUID"):
            await vector_store.sources(ids, "acme")  # type: ignore[arg-type]

    async def test_wrong_dimension_is_refused(self, vector_store: VectorStore) -> None:
        dim, tenant = vector_store.dimension, new_tenant()
        with pytest.raises(DimensionMismatchError):
            await vector_store.upsert([_record(tenant, [1.0] * (dim + 1))])
        with pytest.raises(DimensionMismatchError):
            await vector_store.search([1.0] * (dim - 1), tenant, k=3)
        assert await vector_store.search(_axis(dim, 0), tenant, k=3) == []

    async def test_directionless_upsert_stores_nothing_and_drops_the_old_vector(
        self, vector_store: VectorStore
    ) -> None:
        dim, tenant = vector_store.dimension, new_tenant()
        query = _axis(dim, 0)
        kept = _record(tenant, _axis(dim, 1, 0.5))
        renamed = _record(tenant, query)
        await vector_store.upsert([kept, renamed])
        zero = [0.0] * dim
        # Below float32's smallest value: zero once stored, so no direction either.
        underflow = [1e-50] + [0.0] * (dim - 1)
        gone = _record(tenant, underflow, entity_id=renamed.entity_id)
        never = _record(tenant, zero)
        await vector_store.upsert([gone, never])
        found = await vector_store.search(query, tenant, k=10)
        assert [m.entity_id for m in found] == [kept.entity_id]
        # Within one batch, the last record of an id wins, whichever has a direction.
        back = _record(tenant, query, entity_id=never.entity_id)
        await vector_store.upsert([_record(tenant, zero, entity_id=kept.entity_id), back])
        await vector_store.upsert([back.model_copy(update={"vector": tuple(zero)}), back])
        found = await vector_store.search(query, tenant, k=10)
        assert [(m.entity_id, round(m.score, 3)) for m in found] == [(never.entity_id, 1.0)]

    async def test_directionless_query_finds_nothing(self, vector_store: VectorStore) -> None:
        dim, tenant = vector_store.dimension, new_tenant()
        await vector_store.upsert([_record(tenant, _axis(dim, 1 + i, 0.5)) for i in range(3)])
        for query in ([0.0] * dim, [-0.0] * dim, [1e-50] * dim):
            assert await vector_store.search(query, tenant, k=5) == []
            assert await vector_store.search(query, tenant, k=5, entity_types=["thing"]) == []
        with pytest.raises(DimensionMismatchError):
            await vector_store.search([0.0] * (dim + 1), tenant, k=5)
        with pytest.raises(ValueError, match="NaN"):
            await vector_store.search([math.nan] + [0.0] * (dim - 1), tenant, k=5)

    async def test_a_directionless_vector_stored_beside_others_breaks_no_search(
        self, vector_store: VectorStore
    ) -> None:
        dim, tenant = vector_store.dimension, new_tenant()
        records = [_record(tenant, [0.0] * dim)] + [
            _record(tenant, _axis(dim, 1 + i, 0.9 - 0.1 * i), "person") for i in range(3)
        ]
        await vector_store.upsert(records)
        for types in (None, ["thing", "person"]):
            found = await vector_store.search(_axis(dim, 0), tenant, k=10, entity_types=types)
            assert [m.entity_id for m in found] == [r.entity_id for r in records[1:]]

    @pytest.mark.parametrize("bad", [math.nan, math.inf, 1e39, -1e200])
    async def test_a_component_infinite_at_float32_is_refused(
        self, vector_store: VectorStore, bad: float
    ) -> None:
        dim, tenant = vector_store.dimension, new_tenant()
        good = _record(tenant, _axis(dim, 0))
        await vector_store.upsert([good])
        vector = (bad,) + (0.0,) * (dim - 1)
        # Built unchecked: a record's own check refuses NaN and infinity, and a store
        # must refuse what gets past it (1e39 is finite until stored as float32).
        unchecked = type(good).model_construct(**{**dict(good), "vector": vector})
        with pytest.raises(ValueError, match="infinite"):
            await vector_store.upsert([unchecked])
        with pytest.raises(ValueError, match="infinite"):
            await vector_store.search(vector, tenant, k=5)
        [found] = await vector_store.search(_axis(dim, 0), tenant, k=5)
        assert (found.entity_id, round(found.score, 3)) == (good.entity_id, 1.0)

    @pytest.mark.parametrize("wrong", ["not-a-tenant", 5, None])
    async def test_a_wrong_typed_id_is_invalid_input(
        self, vector_store: VectorStore, wrong: object
    ) -> None:
        """Not a silent empty answer: the caller's typo is named (`tenant_id_of`)."""
        tenant = new_tenant()
        axis = _axis(vector_store.dimension, 0)
        record = _record(tenant, axis)
        await vector_store.upsert([record])
        with pytest.raises(InvalidInputError, match=r"^tenant_id must be a UUID"):
            await vector_store.search(axis, wrong, k=1)  # type: ignore[arg-type]
        with pytest.raises(InvalidInputError, match=r"^tenant_id must be a UUID"):
            await vector_store.delete([record.entity_id], wrong)  # type: ignore[arg-type]
        with pytest.raises(InvalidInputError, match=r"^entity_ids\[0\] must be a UUID"):
            await vector_store.delete([wrong], tenant)  # type: ignore[list-item]
        # A UUID's string is that UUID.
        [match] = await vector_store.search(axis, str(tenant), k=1)  # type: ignore[arg-type]
        assert match.entity_id == record.entity_id
        await vector_store.delete([str(record.entity_id)], str(tenant))  # type: ignore[list-item,arg-type]
        assert await vector_store.search(axis, tenant, k=1) == []

    async def test_an_upsert_of_anything_but_records_is_invalid_input(
        self, vector_store: VectorStore
    ) -> None:
        """`upsert` reads its records by `redstring.domain.arguments.items_of` (and
        `delete` its ids by `entity_ids_of`): a record alone, a string or a bare vector
        is named, not an `AttributeError` from inside the store, and nothing of the
        refused call is written."""
        tenant = new_tenant()
        axis = _axis(vector_store.dimension, 0)
        record = _record(tenant, axis)
        store: Any = vector_store  # called with what its types refuse
        upserts: list[tuple[str, object]] = [
            ("records must be a sequence of VectorRecord, got", record),
            ("records must be a sequence of VectorRecord, got 'abc'", "abc"),
            ("records[1] must be a VectorRecord, got", [record, axis]),
            ("records[1] must be a VectorRecord, got", [record, dict(record)]),
        ]
        for message, records in upserts:
            with pytest.raises(InvalidInputError, match=f"^{re.escape(message)}"):
                await store.upsert(records)
        assert await vector_store.search(axis, tenant, k=1) == []
        with pytest.raises(InvalidInputError, match=r"^entity_ids must be a sequence of UUIDs"):
            await store.delete(record.entity_id, tenant)
        await vector_store.upsert((record,))  # any sequence: a tuple too
        [match] = await vector_store.search(axis, tenant, k=1)
        assert match.entity_id == record.entity_id

    async def test_a_sample_holds_each_stored_vector_once_with_its_tenant_and_source(
        self, vector_store: VectorStore
    ) -> None:
        """`sample_sources` of a limit above the store's size reads every vector: each
        once, with the tenant, id and source `sources` answers (None where stored
        without one, ids colliding across tenants told apart), and none deleted,
        directionless or replaced."""
        samples = _samples_of(vector_store)
        dim, tenant, other = vector_store.dimension, new_tenant(), new_tenant()
        made, unknown, dropped, flattened = (
            _record(tenant, _axis(dim, i, 0.5)) for i in range(1, 5)
        )
        made = made.model_copy(update={"source": "first"})
        theirs = made.model_copy(update={"tenant_id": other, "source": "theirs"})
        await vector_store.upsert([made, unknown, dropped, flattened, theirs])
        await vector_store.delete([dropped.entity_id], tenant)
        zero = flattened.model_copy(update={"vector": (0.0,) * dim, "source": "none"})
        again = made.model_copy(update={"source": "second"})
        await vector_store.upsert([zero, again])

        sample = await samples.sample_sources(_EVERY_VECTOR)
        assert len(set(sample)) == len(sample)
        assert all(isinstance(s, StoredSource) for s in sample)
        ours = {s for s in sample if s.tenant_id in (tenant, other)}
        assert ours == {
            StoredSource(tenant, made.entity_id, "second"),
            StoredSource(tenant, unknown.entity_id, None),
            StoredSource(other, made.entity_id, "theirs"),
        }
        for tenant_id in (tenant, other):
            ids = [s.entity_id for s in ours if s.tenant_id == tenant_id]
            assert await vector_store.sources(ids, tenant_id) == {
                s.entity_id: s.source for s in ours if s.tenant_id == tenant_id
            }

    async def test_a_sample_is_as_large_as_asked_when_the_store_holds_as_many(
        self, vector_store: VectorStore
    ) -> None:
        samples = _samples_of(vector_store)
        dim, tenant = vector_store.dimension, new_tenant()
        records = [
            _record(tenant, _axis(dim, 1 + i, 0.5)).model_copy(update={"source": f"s{i}"})
            for i in range(5)
        ]
        await vector_store.upsert(records)
        for limit in (1, 3, 5):
            sample = await samples.sample_sources(limit)
            assert len(sample) == len(set(sample)) == limit
        assert await samples.sample_sources(0) == []
        store: Any = samples  # called with what its types refuse
        for wrong, message in ((-1, "must not be negative"), ("3", "must be an integer")):
            with pytest.raises(InvalidInputError, match=f"^limit {message}"):
                await store.sample_sources(wrong)
