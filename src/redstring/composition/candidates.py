"""How the retriever reads both channels' candidates: in one round trip when the graph
store offers it (`JointReads`), else from each store, side by side."""

from __future__ import annotations

from collections.abc import Sequence

from redstring.composition.concurrency import concurrently
from redstring.domain.arguments import count_of
from redstring.domain.blocking import block_caps_of
from redstring.domain.candidates import Candidates
from redstring.domain.ids import TenantId
from redstring.domain.lexical import LexicalCandidate
from redstring.domain.vectors import VectorMatch
from redstring.ports.candidate_reader import CandidateReader, JointReads
from redstring.ports.graph_store import GraphReader
from redstring.ports.vector_store import VectorStore


async def _no_matches() -> list[VectorMatch]:
    return []


async def _no_candidates() -> list[LexicalCandidate]:
    return []


class SeparateReads:
    """A `CandidateReader` over any two stores: the vector search and the lexical lookup,
    run concurrently; it reads no whole entities."""

    def __init__(self, vectors: VectorStore, graph: GraphReader) -> None:
        self.vectors = vectors
        self.graph = graph

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
        # Checked here too, so that a count is refused alike when its read is skipped.
        k = count_of(k, "k")
        limit_per_key, limit_per_prefix = block_caps_of(limit_per_key, limit_per_prefix)
        semantic, lexical = await concurrently(
            _no_matches()
            if vector is None
            else self.vectors.search(vector, tenant_id, k=k, entity_types=entity_types),
            _no_candidates()
            if not keys and not prefixes
            else self.graph.find_lexical_candidates(
                keys,
                tenant_id,
                prefixes=prefixes,
                limit_per_key=limit_per_key,
                limit_per_prefix=limit_per_prefix,
                entity_types=entity_types,
            ),
        )
        return Candidates(semantic=semantic, lexical=lexical)


def candidate_reader(vectors: VectorStore, graph: GraphReader) -> CandidateReader:
    """The graph store's joint reader over `vectors` when it has one, else `SeparateReads`."""
    if isinstance(graph, JointReads):
        joint = graph.candidate_reader(vectors)
        if joint is not None:
            return joint
    return SeparateReads(vectors, graph)
