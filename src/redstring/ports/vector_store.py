"""The vector store port, and the optional read of a sample of its vectors' sources."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from redstring.domain.ids import EntityId, TenantId
from redstring.domain.vectors import StoredSource, VectorMatch, VectorRecord


@runtime_checkable
class VectorStore(Protocol):
    """Keeps one vector per `(tenant_id, entity_id)` and finds the nearest.

    `search` applies the tenant and `entity_types` filters before taking `k`,
    scores on 0..1 (`cosine_to_unit`), and orders equal scores by
    `id_order_key`. A vector of the wrong dimension raises
    `DimensionMismatchError`, one with a NaN or infinite component
    (`all_finite`: at float32, the precision stores keep) `ValueError`.

    A directionless vector (`has_direction` is false: all zeros at float32)
    has no cosine with anything, so it is never stored or searched with:
    `upsert` of one keeps no vector for its `(tenant_id, entity_id)` and
    deletes any vector stored there before (an entity renamed to "!" stops
    matching on its old name), and `search` with one answers `[]`. Neither
    raises: such vectors come from ordinary text.

    `sources` answers the `source` stored with the vector of each of `entity_ids`
    that has one (None where it was stored without); an id without a vector is
    not in it. What the vector was made from tells whether it is the one this
    version would make (`redstring rekey --vectors`).

    `search`, `sources` and `delete` read their ids by `tenant_id_of`'s rule: a UUID's
    string is that UUID, anything else not a UUID raises `InvalidInputError`
    naming the argument (never a silent empty answer). `search` reads `k` by
    `count_of`'s: an integer from 0 to 2**63 - 1, else `InvalidInputError`; and
    `entity_types` by `names_of`'s: a lone string, a blank type or one no store can
    hold is `InvalidInputError`, never read letter by letter. `upsert`
    reads its records by `redstring.domain.arguments.items_of`: anything but a
    sequence of `VectorRecord` raises `InvalidInputError` naming the argument or the
    item, before anything is written.
    """

    @property
    def dimension(self) -> int: ...

    async def upsert(self, records: Sequence[VectorRecord]) -> None: ...

    async def search(
        self,
        vector: Sequence[float],
        tenant_id: TenantId,
        *,
        k: int,
        entity_types: Sequence[str] | None = None,
    ) -> list[VectorMatch]: ...

    async def sources(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, str | None]: ...

    async def delete(self, entity_ids: Sequence[EntityId], tenant_id: TenantId) -> None: ...


@runtime_checkable
class SourceSamples(Protocol):
    """A vector store that can read the sources of a few of its vectors, of any tenants,
    at a cost that does not grow with the store: what tells at start whether the stored
    vectors are of the configured provider (`Redstring.check_vector_provenance`).

    Optional: callers check `isinstance(store, SourceSamples)` and otherwise check
    nothing. A wrapper around a store offers it only when the store it wraps does.
    """

    async def sample_sources(self, limit: int) -> list[StoredSource]:
        """Up to `limit` stored vectors' `(tenant_id, entity_id, source)`, each once, of
        any tenants, spread over tenants and over each tenant's vectors as far as the
        store can without reading many more than `limit` (not a uniform random sample):
        `limit` of them when the store holds that many. A deleted or directionless
        vector is never among them, as `sources` never answers one. `limit` is read by
        `count_of`: anything but an integer of 0 or more raises `InvalidInputError`; 0
        answers `[]`."""
        ...
