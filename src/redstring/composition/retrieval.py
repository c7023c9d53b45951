"""`Retriever`: the hybrid retrieval of ranked entities for a query string."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from redstring.composition.concurrency import concurrently
from redstring.composition.entity_vectors import check_fits
from redstring.composition.observer import NO_OBSERVER, Observer
from redstring.domain.blocking import (
    MAX_BLOCK_SIZE,
    MAX_PREFIX_SIZE,
    query_blocking_keys,
    query_prefix,
)
from redstring.domain.errors import InvalidInputError
from redstring.domain.fusion import reciprocal_rank_fusion
from redstring.domain.ids import EntityId, TenantId, tenant_id_of
from redstring.domain.lexical import LexicalCandidate, lexical_scores
from redstring.domain.ranking import LEXICAL_VOTE_MARGIN, rank_by_score, within_margin
from redstring.domain.retrieval import RetrievalMode, RetrievalResult, ScoredEntity
from redstring.domain.vectors import has_direction
from redstring.ports.embedding_provider import EmbeddingProvider
from redstring.ports.graph_store import GraphReader
from redstring.ports.vector_store import VectorStore

DEFAULT_OVERFETCH = 3


async def _no_ranking() -> list[tuple[EntityId, float]]:
    return []


class Retriever:
    """Ranks a tenant's entities for a query by fusing two channels.

    Semantic: the query's embedding searched in the vector store. Lexical:
    candidates sharing a blocking key with the query, or holding a word that
    the query's unfinished last word begins (`query_prefix`), scored by
    `lexical_score`; lexical recall is bounded by blocking, so an entity
    that shares no key with the query is never a lexical candidate. In HYBRID
    the lexical channel votes in fusion only for its candidates scoring within
    `LEXICAL_VOTE_MARGIN` of its best, unless the semantic channel ranked
    nothing (docs/adr/0003). Each
    channel is asked for `k * overfetch` candidates, because an entity just
    past `k` in both channels can win fusion. Filters apply before `k`.
    At most `max_block_size` candidates are read per blocking key and
    `max_prefix_size` rows per prefix seek (docs/adr/0003; `None` reads all).
    A vector match whose entity the graph store lacks is skipped, and the
    result is not backfilled to `k` (docs/adr/0004), and `observer` is told how
    many were. A query that embeds to a
    vector without direction (`has_direction`: "...", an emoji) is never
    searched with: its semantic channel ranks nothing, so HYBRID answers what
    LEXICAL does and SEMANTIC answers no match.
    """

    def __init__(
        self,
        *,
        embeddings: EmbeddingProvider,
        vectors: VectorStore,
        graph: GraphReader,
        overfetch: int = DEFAULT_OVERFETCH,
        max_block_size: int | None = MAX_BLOCK_SIZE,
        max_prefix_size: int | None = MAX_PREFIX_SIZE,
        observer: Observer = NO_OBSERVER,
    ) -> None:
        check_fits(embeddings, vectors)
        if overfetch < 1:
            raise ValueError("overfetch must be at least 1")
        self._embeddings = embeddings
        self._vectors = vectors
        self._graph = graph
        self._overfetch = overfetch
        self._max_block_size = max_block_size
        self._max_prefix_size = max_prefix_size
        self._observer = observer

    def with_parts(
        self,
        *,
        embeddings: EmbeddingProvider,
        vectors: VectorStore,
        graph: GraphReader,
        observer: Observer,
    ) -> Retriever:
        """A retriever with this one's overfetch and block size over other parts (the
        same stores wrapped, as `Redstring.observed` does), reporting to `observer`."""
        return Retriever(
            embeddings=embeddings,
            vectors=vectors,
            graph=graph,
            overfetch=self._overfetch,
            max_block_size=self._max_block_size,
            max_prefix_size=self._max_prefix_size,
            observer=observer,
        )

    async def retrieve(
        self,
        query: str,
        tenant_id: TenantId,
        *,
        k: int = 10,
        entity_types: Sequence[str] | None = None,
        mode: RetrievalMode = RetrievalMode.HYBRID,
    ) -> RetrievalResult:
        """The `k` best entities of `tenant_id` for `query`, best first.

        Raises `InvalidInputError` (a `ValueError`) for a blank query, a
        negative `k`, or a `tenant_id` that is neither a UUID nor a UUID's
        string (`tenant_id_of`: a string is converted). `k == 0` and
        `entity_types == []` give no matches.
        """
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("query must not be blank")
        tenant_id = tenant_id_of(tenant_id)
        if k < 0:
            raise InvalidInputError(f"k must not be negative, got {k}")
        mode = RetrievalMode(mode)
        if k == 0 or (entity_types is not None and len(entity_types) == 0):
            return RetrievalResult(query=query, matches=())
        fetch = k * self._overfetch
        # The channels are independent: run them concurrently, so a remote store's
        # round trips overlap and a hybrid retrieve costs the slower channel, not both.
        semantic, lexical = await concurrently(
            self._semantic(query, tenant_id, fetch, entity_types)
            if mode is not RetrievalMode.LEXICAL
            else _no_ranking(),
            self._lexical(query, tenant_id, fetch, entity_types)
            if mode is not RetrievalMode.SEMANTIC
            else _no_ranking(),
        )
        # Against the semantic channel, the lexical channel votes only for the candidates
        # it believes, those within `LEXICAL_VOTE_MARGIN` of its best; alone (LEXICAL, or
        # a semantic channel that ranked nothing) it ranks them all.
        votes = (
            within_margin(lexical, margin=LEXICAL_VOTE_MARGIN)
            if mode is RetrievalMode.HYBRID and semantic
            else lexical
        )
        fused = reciprocal_rank_fusion([[e for e, _ in semantic], [e for e, _ in votes]])[:k]
        # The kept matches of both channels, whole, in one call.
        wanted = [entity_id for entity_id, _ in fused]
        found = await self._graph.get_entities(wanted, tenant_id) if wanted else []
        entities = {entity.id: entity for entity in found}
        semantic_of, lexical_of = dict(semantic), dict(lexical)
        matches = tuple(
            ScoredEntity(
                entity=entities[entity_id],
                score=score,
                semantic=semantic_of.get(entity_id),
                lexical=lexical_of.get(entity_id),
            )
            for entity_id, score in fused
            if entity_id in entities
        )
        if len(matches) < len(fused):
            self._observer.dangling_skipped(len(fused) - len(matches))
        return RetrievalResult(query=query, matches=matches)

    async def _semantic(
        self, query: str, tenant_id: TenantId, fetch: int, entity_types: Sequence[str] | None
    ) -> list[tuple[EntityId, float]]:
        [vector] = await self._embeddings.embed_query([query])
        if not has_direction(vector):  # no cosine with anything: the channel ranks nothing
            return []
        matches = await self._vectors.search(vector, tenant_id, k=fetch, entity_types=entity_types)
        return rank_by_score((m.entity_id, m.score) for m in matches)[:fetch]

    async def _lexical(
        self, query: str, tenant_id: TenantId, fetch: int, entity_types: Sequence[str] | None
    ) -> list[tuple[EntityId, float]]:
        prefix = query_prefix(query)
        found = await self._graph.find_lexical_candidates(
            query_blocking_keys(query),
            tenant_id,
            prefixes=() if prefix is None else (prefix,),
            limit_per_key=self._max_block_size,
            limit_per_prefix=self._max_prefix_size,
            entity_types=entity_types,
        )
        wanted = None if entity_types is None else set(entity_types)
        # The store answers each candidate once (the port's contract); `rank_by_score`
        # would still keep one of each id.
        tenant = tenant_id.int  # ints compare in C, UUIDs in Python
        kept = [
            c
            for c in found
            if c.tenant_id.int == tenant and (wanted is None or c.entity_type in wanted)
        ]
        scores = lexical_scores(query, kept)
        return rank_by_score(_at_least_as_good(kept, scores, fetch))[:fetch]


def _at_least_as_good(
    candidates: list[LexicalCandidate], scores: list[float], count: int
) -> list[tuple[EntityId, float]]:
    """The candidates scoring at least the `count`-th best score, ties included: all
    that can reach the top `count`, so only these need the total order's sort."""
    if len(candidates) <= count:
        return [(c.id, score) for c, score in zip(candidates, scores, strict=True)]
    bar = float(np.partition(np.asarray(scores), len(scores) - count)[len(scores) - count])
    return [(c.id, score) for c, score in zip(candidates, scores, strict=True) if score >= bar]
