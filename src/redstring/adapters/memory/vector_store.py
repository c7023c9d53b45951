"""`InMemoryVectorStore`: exact cosine search over one numpy matrix per tenant."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from itertools import chain, islice

import numpy as np
from numpy.typing import NDArray

from redstring.domain.arguments import count_of, items_of, names_of, positive_count_of
from redstring.domain.ids import EntityId, TenantId, entity_ids_of, id_order_key, tenant_id_of
from redstring.domain.vectors import (
    StoredSource,
    VectorMatch,
    VectorRecord,
    checked_vector,
    checked_vectors,
    cosine_to_unit,
    has_direction,
    rows_with_direction,
)


class _TenantMatrix:
    """Unit-length vectors as the columns of one float32 matrix (dimension x capacity),
    grown by doubling.

    Column storage keeps each component's values contiguous, so a query with few
    nonzero components (the hashing provider's, a few dozen of 384) reads only
    those rows of the matrix instead of streaming all of it through the caches.
    """

    def __init__(self, dimension: int) -> None:
        self.columns = np.zeros((dimension, 16), dtype=np.float32)
        self.size = 0
        self.ids: list[EntityId] = []
        self.types: list[str] = []
        self.row_of: dict[EntityId, int] = {}
        self.sources: dict[EntityId, str | None] = {}

    def put(self, records: Sequence[VectorRecord], units: NDArray[np.float32]) -> None:
        """Store each record's unit vector; a record repeated in the batch keeps its last."""
        slots: dict[int, int] = {}
        for index, record in enumerate(records):
            slot = self.row_of.get(record.entity_id)
            if slot is None:
                slot = self._append(record.entity_id, record.entity_type)
            self.types[slot] = record.entity_type
            self.sources[record.entity_id] = record.source
            slots[slot] = index
        self.columns[:, list(slots)] = units[list(slots.values())].T

    def _append(self, entity_id: EntityId, entity_type: str) -> int:
        if self.size == self.columns.shape[1]:
            grown = np.zeros((self.columns.shape[0], 2 * self.size), dtype=np.float32)
            grown[:, : self.size] = self.columns[:, : self.size]
            self.columns = grown
        slot = self.size
        self.size += 1
        self.ids.append(entity_id)
        self.types.append(entity_type)
        self.row_of[entity_id] = slot
        return slot

    def scores(self, query: NDArray[np.float32]) -> NDArray[np.float32]:
        """The dot product of `query` with every stored vector, each summed over the
        components in the same order, so that equal vectors score exactly alike and tie.

        `np.einsum` without `optimize` runs numpy's own loop, not BLAS: a BLAS product
        sums a column differently by its position in the matrix, and its threads stall
        a search on a busy machine unless the process caps them (docs/adr/0008).
        """
        columns = self.columns[:, : self.size]
        nonzero = np.flatnonzero(query)
        if len(nonzero) * 4 < len(query):
            query, columns = query[nonzero], columns[nonzero]
        scores: NDArray[np.float32] = np.einsum("i,ij->j", query, columns)
        return scores

    def remove(self, entity_id: EntityId) -> None:
        """Move the last column into the hole, so the matrix stays contiguous."""
        slot = self.row_of.pop(entity_id, None)
        if slot is None:
            return
        del self.sources[entity_id]
        last = self.size - 1
        if slot != last:
            moved = self.ids[last]
            self.columns[:, slot] = self.columns[:, last]
            self.ids[slot] = moved
            self.types[slot] = self.types[last]
            self.row_of[moved] = slot
        self.ids.pop()
        self.types.pop()
        self.size = last


def _unit(array: NDArray[np.float64]) -> NDArray[np.float32]:
    """A checked vector that has a direction (`has_direction`), scaled to length 1."""
    return (array / float(np.linalg.norm(array))).astype(np.float32)


def _units(matrix: NDArray[np.float64]) -> NDArray[np.float32]:
    """`_unit` of each row of a checked matrix whose rows have a direction. Each norm is
    taken row by row as `_unit` takes it, so that the rows are the very floats `_unit`
    gives."""
    norms = np.array([float(np.linalg.norm(row)) for row in matrix], dtype=np.float64)
    return (matrix / norms[:, None]).astype(np.float32)


class InMemoryVectorStore:
    """A `VectorStore` in process memory: exact search, filters before `k`."""

    def __init__(self, dimension: int) -> None:
        dimension = positive_count_of(dimension, "dimension")
        self._dimension = dimension
        self._tenants: dict[TenantId, _TenantMatrix] = {}

    @property
    def dimension(self) -> int:
        return self._dimension

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        """Store each record's vector, the last one of an id given twice; a directionless
        one removes the vector of its id instead (`VectorStore`)."""
        records = items_of(records, VectorRecord, "records")
        latest = list({(r.tenant_id, r.entity_id): r for r in records}.values())
        matrix = checked_vectors([r.vector for r in latest], self._dimension, "vector record")
        directed = rows_with_direction(matrix)
        units = _units(matrix[directed])
        stored = [r for r, d in zip(latest, directed, strict=True) if d]
        by_tenant: dict[TenantId, list[int]] = {}
        for index, record in enumerate(stored):
            by_tenant.setdefault(record.tenant_id, []).append(index)
        for tenant_id, indexes in by_tenant.items():
            tenant = self._tenants.get(tenant_id)
            if tenant is None:
                tenant = self._tenants[tenant_id] = _TenantMatrix(self._dimension)
            tenant.put([stored[i] for i in indexes], units[indexes])
        for record, has in zip(latest, directed, strict=True):
            if not has and (tenant := self._tenants.get(record.tenant_id)) is not None:
                tenant.remove(record.entity_id)

    async def search(
        self,
        vector: Sequence[float],
        tenant_id: TenantId,
        *,
        k: int,
        entity_types: Sequence[str] | None = None,
    ) -> list[VectorMatch]:
        k = count_of(k, "k")
        entity_types = names_of(entity_types, "entity_types")
        checked = checked_vector(vector, self._dimension, "query vector")
        matrix = self._tenants.get(tenant_id_of(tenant_id))
        if matrix is None or k == 0 or matrix.size == 0 or not has_direction(checked):
            return []
        scores = matrix.scores(_unit(checked))
        if entity_types is not None:
            wanted = set(entity_types)
            allowed = np.fromiter(
                (t in wanted for t in matrix.types), dtype=bool, count=matrix.size
            )
            scores = np.where(allowed, scores, -np.inf)
        candidates = np.flatnonzero(np.isfinite(scores))
        if len(candidates) > k:
            # Every row scoring at least the k-th best, so ties at the cut are all kept.
            kth = np.partition(scores[candidates], len(candidates) - k)[len(candidates) - k]
            candidates = candidates[scores[candidates] >= kth]
        ranked = sorted(
            ((matrix.ids[i], cosine_to_unit(float(scores[i]))) for i in candidates),
            key=lambda item: (-item[1], id_order_key(item[0])),
        )
        return [VectorMatch(entity_id=e, score=s) for e, s in ranked[:k]]

    async def sources(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, str | None]:
        entity_ids = entity_ids_of(entity_ids, "entity_ids")
        matrix = self._tenants.get(tenant_id_of(tenant_id))
        if matrix is None:
            return {}
        return {e: matrix.sources[e] for e in entity_ids if e in matrix.sources}

    async def delete(self, entity_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
        entity_ids = entity_ids_of(entity_ids, "entity_ids")
        matrix = self._tenants.get(tenant_id_of(tenant_id))
        if matrix is not None:
            for entity_id in entity_ids:
                matrix.remove(entity_id)

    async def sample_sources(self, limit: int) -> list[StoredSource]:
        """`SourceSamples`: a vector of each tenant in turn, each tenant's read from a
        random one of its vectors on (then from its first), so that a few vectors
        span many tenants and the whole of each."""
        return list(islice(self._round_robin(), count_of(limit, "limit")))

    def _round_robin(self) -> Iterator[StoredSource]:
        # Consumed whole before the caller awaits anything, so no write changes a tenant
        # while it is read; only the vectors sampled are visited.
        turns = [
            (tenant_id, matrix, _from_random_slot(matrix.size))
            for tenant_id, matrix in self._tenants.items()
        ]
        while turns:
            left = []
            for tenant_id, matrix, slots in turns:
                slot = next(slots, None)
                if slot is not None:
                    entity_id = matrix.ids[slot]
                    yield StoredSource(tenant_id, entity_id, matrix.sources[entity_id])
                    left.append((tenant_id, matrix, slots))
            turns = left


def _from_random_slot(size: int) -> Iterator[int]:
    """Each of `size` slots once, from a random one on, then from the first."""
    start = random.randrange(size) if size else 0
    return chain(range(start, size), range(start))
