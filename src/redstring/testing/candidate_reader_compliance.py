"""The compliance suite of the `CandidateReader` port.

A reader must answer what its two stores answer when each is asked alone: the
vector search's matches, the lexical lookup's candidates, and whole entities
equal to the graph store's. The suite writes through the stores and compares.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import pytest

from redstring.domain.blocking import query_blocking_keys, query_prefix
from redstring.domain.candidates import Candidates
from redstring.domain.entity import Entity
from redstring.domain.errors import InvalidInputError
from redstring.domain.ids import EntityId, TenantId, id_order_key
from redstring.domain.vectors import VectorRecord
from redstring.ports.candidate_reader import CandidateReader
from redstring.ports.graph_store import GraphStore
from redstring.ports.vector_store import VectorStore
from redstring.testing.factories import make_entity, new_tenant


@dataclass(frozen=True)
class ReaderUnderTest:
    """The reader, and the two stores it reads (to write through and compare with)."""

    reader: CandidateReader
    graph: GraphStore
    vectors: VectorStore


def _tilted(dimension: int, index: int, weight: float) -> tuple[float, ...]:
    """A unit vector on axis 0 tilted by `1 - weight` towards axis `index`."""
    vector = [0.0] * dimension
    vector[0] = weight
    vector[1 + index % (dimension - 1)] = math.sqrt(max(0.0, 1.0 - weight * weight))
    return tuple(vector)


NAMES = (
    "Acme Corporation",
    "Acme Widgets",
    "Acmeson Tools",
    "Apex Holdings",
    "Beta Labs",
    "Betamax Systems",
    "Gamma Ray Partners",
    "Delta Freight",
)


def _refused(message: str) -> AbstractContextManager[pytest.ExceptionInfo[InvalidInputError]]:
    """An `InvalidInputError` of exactly `message` expected."""
    return pytest.raises(InvalidInputError, match=f"^{re.escape(message)}$")


class CandidateReaderCompliance:
    """Subclass and override the `under_test` fixture with the reader under test."""

    @pytest.fixture
    def under_test(self) -> ReaderUnderTest:
        raise NotImplementedError("override the under_test fixture")

    async def _load(
        self, under_test: ReaderUnderTest, tenant: TenantId, names: Sequence[str] = NAMES
    ) -> list[Entity]:
        dimension = under_test.vectors.dimension
        entities = [
            make_entity(
                tenant,
                name,
                "org" if i % 3 else "person",
                description=f"description {i}",
                properties={"alias": f"alias {name}", "rank": i},
            )
            for i, name in enumerate(names)
        ]
        await under_test.graph.upsert_entities(entities)
        await under_test.vectors.upsert(
            [
                VectorRecord(
                    entity_id=e.id,
                    tenant_id=tenant,
                    vector=_tilted(dimension, i, 0.99 - 0.05 * i),
                    entity_type=e.entity_type,
                )
                for i, e in enumerate(entities)
            ]
        )
        return entities

    async def _apart(
        self,
        under_test: ReaderUnderTest,
        tenant: TenantId,
        query: str,
        vector: Sequence[float] | None,
        k: int,
        entity_types: Sequence[str] | None,
        limits: tuple[int | None, int | None] = (None, None),
    ) -> tuple[list[tuple[EntityId, float]], set[EntityId]]:
        semantic = (
            []
            if vector is None
            else await under_test.vectors.search(vector, tenant, k=k, entity_types=entity_types)
        )
        prefix = query_prefix(query)
        lexical = await under_test.graph.find_lexical_candidates(
            query_blocking_keys(query),
            tenant,
            prefixes=() if prefix is None else (prefix,),
            limit_per_key=limits[0],
            limit_per_prefix=limits[1],
            entity_types=entity_types,
        )
        return [(m.entity_id, m.score) for m in semantic], {c.id for c in lexical}

    async def _read(
        self,
        under_test: ReaderUnderTest,
        tenant: TenantId,
        query: str,
        vector: Sequence[float] | None,
        k: int,
        entity_types: Sequence[str] | None = None,
        limits: tuple[int | None, int | None] = (None, None),
    ) -> Candidates:
        prefix = query_prefix(query)
        return await under_test.reader.find_candidates(
            tenant,
            vector=vector,
            k=k,
            keys=query_blocking_keys(query),
            prefixes=() if prefix is None else (prefix,),
            limit_per_key=limits[0],
            limit_per_prefix=limits[1],
            entity_types=entity_types,
        )

    async def _check_entities(
        self, under_test: ReaderUnderTest, tenant: TenantId, found: Candidates
    ) -> None:
        """Every entity read along is the tenant's, whole, as the graph store has it."""
        read = list(found.entities)
        stored = await under_test.graph.get_entities(read, tenant)
        assert [found.entities[i] for i in read] == stored

    @pytest.mark.parametrize("limits", [(None, None), (2, 1), (1, 3)])
    @pytest.mark.parametrize("entity_types", [None, ["org"], ["person", "org"], ["nothing"]])
    @pytest.mark.parametrize("k", [1, 3, 20])
    async def test_answers_what_each_store_answers(
        self,
        under_test: ReaderUnderTest,
        k: int,
        entity_types: list[str] | None,
        limits: tuple[int | None, int | None],
    ) -> None:
        """Per key and per prefix caps too: `Acm` seeks the prefix `w:acm` (three names'
        blocks), `Acme Corp` reads the block `w:acme` (two)."""
        tenant = new_tenant()
        await self._load(under_test, tenant)
        vector = _tilted(under_test.vectors.dimension, 0, 1.0)
        for query in ("Acme Corp", "Beta", "Acm", "Delta Freigth"):
            found = await self._read(under_test, tenant, query, vector, k, entity_types, limits)
            semantic, lexical = await self._apart(
                under_test, tenant, query, vector, k, entity_types, limits
            )
            assert [m.entity_id for m in found.semantic] == [e for e, _ in semantic]
            assert [m.score for m in found.semantic] == pytest.approx([s for _, s in semantic])
            ids = [c.id for c in found.lexical]
            assert len(ids) == len(set(ids))
            assert set(ids) == lexical
            await self._check_entities(under_test, tenant, found)

    async def test_counts_are_integers_up_to_the_largest_a_store_holds(
        self, under_test: ReaderUnderTest
    ) -> None:
        """`k`, `limit_per_key` and `limit_per_prefix` are integers from 0 to 2**63 - 1
        (Neo4j's largest), else `InvalidInputError` naming the argument (`count_of`):
        alike from the reader and from each store asked alone, and whether or not
        anything is read with them. The largest reads as no cap."""
        tenant = new_tenant()
        await self._load(under_test, tenant)
        vector = _tilted(under_test.vectors.dimension, 0, 1.0)
        largest = 2**63 - 1
        every = await self._read(under_test, tenant, "Acm", vector, len(NAMES))
        found = await self._read(under_test, tenant, "Acm", vector, largest, None, (largest,) * 2)
        assert found.semantic == every.semantic
        assert {c.id for c in found.lexical} == {c.id for c in every.lexical}
        semantic, lexical = await self._apart(
            under_test, tenant, "Acm", vector, largest, None, (largest, largest)
        )
        assert [e for e, _ in semantic] == [m.entity_id for m in every.semantic]
        assert lexical == {c.id for c in every.lexical}
        wrong: list[tuple[Any, str]] = [
            (-1, "must not be negative, got -1"),
            (1.5, "must be an integer, got 1.5"),
            (True, "must be an integer, got True"),
            ("3", "must be an integer, got '3'"),
            (2**63, "must be at most 2**63 - 1, got 9223372036854775808"),
        ]
        reader, graph, vectors = under_test.reader, under_test.graph, under_test.vectors
        for value, message in wrong:
            for argument in ("limit_per_key", "limit_per_prefix"):
                caps = {argument: value}
                for keys, prefixes in ((["w:acme"], ["w:acm"]), ([], [])):
                    with _refused(f"{argument} {message}"):
                        await reader.find_candidates(
                            tenant, vector=vector, k=5, keys=keys, prefixes=prefixes, **caps
                        )
                    with _refused(f"{argument} {message}"):
                        await graph.find_lexical_candidates(keys, tenant, prefixes=prefixes, **caps)
                with _refused(f"{argument} {message}"):  # a tenant of nothing
                    await graph.find_lexical_candidates(["w:acme"], new_tenant(), **caps)
            for query in (vector, None):
                with _refused(f"k {message}"):
                    await reader.find_candidates(tenant, vector=query, k=value, keys=["w:acme"])
            for of_tenant in (tenant, new_tenant()):
                with _refused(f"k {message}"):
                    await vectors.search(vector, of_tenant, k=value)

    async def test_lexical_candidates_carry_what_the_score_reads(
        self, under_test: ReaderUnderTest
    ) -> None:
        tenant = new_tenant()
        entities = {e.id: e for e in await self._load(under_test, tenant)}
        found = await self._read(under_test, tenant, "Acme", None, 5)
        assert found.lexical
        for candidate in found.lexical:
            entity = entities[candidate.id]
            assert candidate.tenant_id == tenant
            assert candidate.entity_type == entity.entity_type
            assert candidate.name == entity.name
            assert candidate.normalized_name == entity.normalized_name
            assert dict(candidate.properties) == dict(entity.properties)
            assert candidate.property_strings() == entity.property_strings()

    async def test_no_vector_reads_no_matches_and_no_keys_no_candidates(
        self, under_test: ReaderUnderTest
    ) -> None:
        tenant = new_tenant()
        await self._load(under_test, tenant)
        vector = _tilted(under_test.vectors.dimension, 0, 1.0)
        lexical_only = await self._read(under_test, tenant, "Acme", None, 5)
        assert not lexical_only.semantic
        assert lexical_only.lexical
        semantic_only = await under_test.reader.find_candidates(
            tenant, vector=vector, k=5, keys=(), prefixes=()
        )
        assert len(semantic_only.semantic) == 5
        assert not semantic_only.lexical
        await self._check_entities(under_test, tenant, semantic_only)
        nothing = await under_test.reader.find_candidates(tenant, vector=None, k=5, keys=())
        assert not nothing.semantic
        assert not nothing.lexical
        assert not nothing.entities
        no_types = await self._read(under_test, tenant, "Acme", vector, 5, entity_types=[])
        assert not no_types.semantic
        assert not no_types.lexical
        # A lone string is no list of types, with a vector or without (`names_of`).
        for lone_vector in (vector, None):
            with pytest.raises(InvalidInputError, match=r"^entity_types must be a list of strings"):
                await self._read(under_test, tenant, "Acme", lone_vector, 5, entity_types="org")

    async def test_tenants_never_see_each_other(self, under_test: ReaderUnderTest) -> None:
        mine, other = new_tenant(), new_tenant()
        # The same names, vectors and ids in both tenants, other types and properties;
        # the other tenant's written last.
        ours = [make_entity(mine, name, "mine", entity_id=uuid.uuid4()) for name in NAMES[:2]]
        await under_test.graph.upsert_entities(ours)
        vector = _tilted(under_test.vectors.dimension, 0, 1.0)
        await under_test.vectors.upsert(
            [
                VectorRecord(entity_id=e.id, tenant_id=mine, vector=vector, entity_type="mine")
                for e in ours
            ]
        )
        theirs = [
            make_entity(other, e.name, "org", entity_id=e.id, properties={"x": "y"}) for e in ours
        ]
        await under_test.graph.upsert_entities(theirs)
        await under_test.vectors.upsert(
            [
                VectorRecord(entity_id=e.id, tenant_id=other, vector=vector, entity_type="org")
                for e in theirs
            ]
        )
        await self._load(under_test, other, NAMES[2:])
        found = await self._read(under_test, mine, "Acme Corporation", vector, 10)
        assert {m.entity_id for m in found.semantic} == {e.id for e in ours}
        assert {c.id for c in found.lexical} == {e.id for e in ours}
        assert all(c.tenant_id == mine for c in found.lexical)
        assert all(c.entity_type == "mine" for c in found.lexical)
        assert [found.entities[e.id] for e in ours if e.id in found.entities] == [
            e for e in ours if e.id in found.entities
        ]
        await self._check_entities(under_test, mine, found)

    async def test_a_tie_at_the_cut_is_settled_in_id_order(
        self, under_test: ReaderUnderTest
    ) -> None:
        """More equal vectors than a first fetch reads: the reader answers the same
        `k` the vector store does, equal scores in id order."""
        tenant = new_tenant()
        twins = [make_entity(tenant, "Twin Peaks", "org") for _ in range(12)]
        await under_test.graph.upsert_entities(twins)
        vector = _tilted(under_test.vectors.dimension, 0, 0.9)
        await under_test.vectors.upsert(
            [
                VectorRecord(entity_id=e.id, tenant_id=tenant, vector=vector, entity_type="org")
                for e in twins
            ]
        )
        found = await self._read(under_test, tenant, "Twin Peaks", vector, 3)
        expected = sorted((e.id for e in twins), key=id_order_key)[:3]
        assert [m.entity_id for m in found.semantic] == expected
        await self._check_entities(under_test, tenant, found)

    async def test_a_vector_without_its_entity_is_a_match_with_no_entity(
        self, under_test: ReaderUnderTest
    ) -> None:
        tenant = new_tenant()
        dangling = EntityId(uuid.uuid4())
        vector = _tilted(under_test.vectors.dimension, 0, 1.0)
        await under_test.vectors.upsert(
            [VectorRecord(entity_id=dangling, tenant_id=tenant, vector=vector, entity_type="org")]
        )
        found = await self._read(under_test, tenant, "Nobody", vector, 3)
        assert [m.entity_id for m in found.semantic] == [dangling]
        assert dangling not in found.entities
