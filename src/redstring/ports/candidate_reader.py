"""The read of both channels' candidates for one query, and the stores that offer one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from redstring.domain.candidates import Candidates
from redstring.domain.ids import TenantId
from redstring.ports.vector_store import VectorStore


@runtime_checkable
class CandidateReader(Protocol):
    """Both channels' candidates of one tenant for one query, in one call."""

    async def find_candidates(
        self,
        tenant_id: TenantId,
        *,
        vector: Sequence[float] | None,
        k: int,
        keys: Sequence[str],
        prefixes: Sequence[str] = (),
        limit_per_key: int | None = None,
        limit_per_prefix: int | None = None,
        entity_types: Sequence[str] | None = None,
    ) -> Candidates:
        """`semantic`: what `VectorStore.search(vector, tenant_id, k=k,
        entity_types=entity_types)` answers (nothing when `vector` is None).
        `lexical`: what `GraphReader.find_lexical_candidates(keys, tenant_id,
        prefixes=prefixes, limit_per_key=limit_per_key, limit_per_prefix=limit_per_prefix,
        entity_types=entity_types)`
        answers (nothing when there are neither keys nor prefixes). `entities`:
        whole entities of the tenant read along, any (`Candidates`). `k` and the caps
        are read by `count_of`'s rule (`block_caps_of`) whether or not a vector or a
        key is given: a slip is `InvalidInputError` on every reader."""
        ...


@runtime_checkable
class JointReads(Protocol):
    """A graph store that can read both channels' candidates in one round trip when the
    vectors live beside its entities (the same server and database)."""

    def candidate_reader(self, vectors: VectorStore) -> CandidateReader | None:
        """A reader over this store and `vectors`, or None when `vectors` is not a store
        it can read with (then the two stores are read apart)."""
        ...
