"""`Retriever`: the hybrid retrieval of ranked entities for a query string."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from redstring.composition.candidates import candidate_reader
from redstring.composition.entity_vectors import check_fits
from redstring.composition.observer import NO_OBSERVER, Observer
from redstring.composition.query_cache import CachedQueryEmbeddings
from redstring.domain.arguments import MAX_COUNT, choice_of, count_of, names_of, storable_of
from redstring.domain.blocking import (
    MAX_BLOCK_SIZE,
    MAX_PREFIX_SIZE,
    query_blocking_keys,
    query_infixes,
    query_prefix,
)
from redstring.domain.embedded_text import query_embedding_text
from redstring.domain.entity import Entity
from redstring.domain.errors import InvalidInputError, TextsRefusedError
from redstring.domain.fusion import reciprocal_rank_fusion
from redstring.domain.ids import EntityId, TenantId, tenant_id_of
from redstring.domain.lexical import LexicalCandidate, MatchedText, lexical_matches, lexical_votes
from redstring.domain.ranking import lexical_first, rank_by_score, semantic_votes
from redstring.domain.retrieval import RetrievalMode, RetrievalResult, ScoredEntity
from redstring.domain.vectors import check_vector_count, has_direction
from redstring.ports.candidate_reader import CandidateReader
from redstring.ports.embedding_provider import EmbeddingProvider
from redstring.ports.graph_store import GraphReader
from redstring.ports.vector_store import VectorStore

DEFAULT_OVERFETCH = 3


class Retriever:
    """Ranks a tenant's entities for a query by fusing two channels.

    Semantic: the query's embedding searched in the vector store. Lexical:
    candidates sharing a blocking key with the query, or holding a word that
    the query's unfinished last word begins (`query_prefix`) or one of its Han or
    kana words stands inside (`query_infixes`), scored by
    `lexical_score`; lexical recall is bounded by blocking, so an entity
    that shares no key with the query is never a lexical candidate. In HYBRID
    the lexical channel votes in fusion only for its candidates scoring within
    `LEXICAL_VOTE_MARGIN` of its best that the query does not merely mention
    (`lexical_matches`), unless the semantic channel ranked nothing
    (docs/adr/0003); for a query of one word of three letters or fewer
    (`semantic_votes`) the semantic channel has no vote where the lexical channel
    found a name the word begins, abbreviates or is. Each
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

    `embeddings` is a provider, or a `CachedQueryEmbeddings` in front of one,
    which the retriever asks for the tenant's view (`for_tenant`), so that a
    cached query vector serves only the tenant that searched it.

    The query is embedded first; then both channels' candidates are read in
    one call of `candidates` (by default `candidate_reader(vectors, graph)`:
    one round trip where the graph store offers it, docs/adr/0006), and the
    kept matches that call did not read whole in one `get_entities`.
    """

    def __init__(
        self,
        *,
        embeddings: EmbeddingProvider | CachedQueryEmbeddings,
        vectors: VectorStore,
        graph: GraphReader,
        overfetch: int = DEFAULT_OVERFETCH,
        max_block_size: int | None = MAX_BLOCK_SIZE,
        max_prefix_size: int | None = MAX_PREFIX_SIZE,
        observer: Observer = NO_OBSERVER,
        candidates: CandidateReader | None = None,
    ) -> None:
        check_fits(
            embeddings.provider if isinstance(embeddings, CachedQueryEmbeddings) else embeddings,
            vectors,
        )
        if overfetch < 1:
            raise ValueError("overfetch must be at least 1")
        self._embeddings = embeddings
        self._vectors = vectors
        self._graph = graph
        self._overfetch = overfetch
        self._max_block_size = max_block_size
        self._max_prefix_size = max_prefix_size
        self._observer = observer
        self.candidates = candidate_reader(vectors, graph) if candidates is None else candidates

    def with_parts(
        self,
        *,
        embeddings: EmbeddingProvider | CachedQueryEmbeddings,
        vectors: VectorStore,
        graph: GraphReader,
        observer: Observer,
        candidates: CandidateReader | None = None,
    ) -> Retriever:
        """A retriever with this one's overfetch and block size over other parts (the
        same stores wrapped, as `Redstring.observed` does), reporting to `observer`;
        without `candidates`, it reads them as `candidate_reader` chooses."""
        return Retriever(
            embeddings=embeddings,
            vectors=vectors,
            graph=graph,
            overfetch=self._overfetch,
            max_block_size=self._max_block_size,
            max_prefix_size=self._max_prefix_size,
            observer=observer,
            candidates=candidates,
        )

    async def retrieve(
        self,
        query: str,
        tenant_id: uuid.UUID | str,
        *,
        k: int = 10,
        entity_types: Sequence[str] | None = None,
        mode: RetrievalMode | str = RetrievalMode.HYBRID,
    ) -> RetrievalResult:
        """The `k` best entities of `tenant_id` for `query`, best first.

        Raises `InvalidInputError` (a `ValueError`) for a query that is not a
        string, is blank or holds a NUL or a lone surrogate, a `k`
        that is not an integer of 0 or more, `entity_types` that are not a list
        of strings (a lone string is refused, not read letter by letter), a `mode`
        that is not a `RetrievalMode` (or its name or value, in any case), or a
        `tenant_id` that is neither a UUID nor a UUID's string (`tenant_id_of`:
        a string is converted), and for a query whose text the embedding provider
        refuses (`TextsRefusedError`, a `SEMANTIC` or `HYBRID` retrieve: one past what
        its model reads, behind a server that refuses rather than cuts), which no
        other query of the provider need share. `k == 0` and `entity_types == []`
        give no matches.
        """
        if not isinstance(query, str):
            raise InvalidInputError(f"query must be a string, got {type(query).__name__}")
        if not query.strip():
            raise InvalidInputError("query must not be blank")
        storable_of(query, "query")  # an HTTP provider cannot send a lone surrogate
        tenant_id = tenant_id_of(tenant_id)
        k = count_of(k, "k")
        entity_types = names_of(entity_types, "entity_types")
        mode = choice_of(mode, RetrievalMode, "mode")
        if k == 0 or (entity_types is not None and len(entity_types) == 0):
            return RetrievalResult(query=query, matches=())
        fetch = min(k * self._overfetch, MAX_COUNT)  # past it, no store has more to give
        lexical_only = mode is RetrievalMode.LEXICAL
        vector = None if lexical_only else await self._query_vector(query, tenant_id)
        keys, prefixes = ((), ()) if mode is RetrievalMode.SEMANTIC else _lookups(query)
        if vector is None and not keys and not prefixes:
            return RetrievalResult(query=query, matches=())
        found = await self.candidates.find_candidates(
            tenant_id,
            vector=vector,
            k=fetch,
            keys=keys,
            prefixes=prefixes,
            limit_per_key=self._max_block_size,
            limit_per_prefix=self._max_prefix_size,
            entity_types=entity_types,
        )
        semantic = rank_by_score((m.entity_id, m.score) for m in found.semantic)[:fetch]
        lexical, mentioned, matched = _lexical_ranking(
            query, tenant_id, found.lexical, fetch, entity_types
        )
        # A search box's first letters and initials (`ac`, `Gla`, `ABF`) say little to the
        # semantic channel: where the lexical channel found a name they begin, abbreviate
        # or are, its names come first and the semantic ranking only after them (both
        # channels' scores are still reported).
        voting = semantic_votes(query, lexical[0][1] if lexical else None)
        if mode is RetrievalMode.HYBRID and semantic and not voting:
            rankings = [lexical_first(lexical, semantic)]
        elif mode is RetrievalMode.HYBRID and semantic:
            # Against the semantic channel, the lexical channel votes only for the
            # candidates it believes, those within `LEXICAL_VOTE_MARGIN` of its best that
            # the query does not merely mention.
            votes = lexical_votes(lexical, mentioned)
            rankings = [[e for e, _ in semantic], [e for e, _ in votes]]
        else:  # one channel ranks alone (LEXICAL, SEMANTIC, or a semantic channel empty)
            rankings = [[e for e, _ in semantic], [e for e, _ in lexical]]
        fused = reciprocal_rank_fusion(rankings)[:k]
        # The kept matches whole: those the reader read along, the others in one call.
        entities = {e: found.entities[e] for e, _ in fused if e in found.entities}
        missing = [e for e, _ in fused if e not in entities]
        if missing:
            entities.update((e.id, e) for e in await self._graph.get_entities(missing, tenant_id))
        semantic_of, lexical_of = dict(semantic), dict(lexical)
        matches = tuple(
            _scored(entities[entity_id], score, semantic_of, lexical_of, matched)
            for entity_id, score in fused
            if entity_id in entities
        )
        if len(matches) < len(fused):
            self._observer.dangling_skipped(len(fused) - len(matches))
        return RetrievalResult(query=query, matches=matches)

    async def _query_vector(self, query: str, tenant_id: TenantId) -> list[float] | None:
        """The query's embedding (of `query_embedding_text(query)`) for `tenant_id`, or None when
        it has no direction (no cosine with anything: the semantic channel then ranks
        nothing)."""
        embeddings = (
            self._embeddings.for_tenant(tenant_id)
            if isinstance(self._embeddings, CachedQueryEmbeddings)
            else self._embeddings
        )
        try:
            vectors = await embeddings.embed_query([query_embedding_text(query)])
        except TextsRefusedError as refusal:
            answers = "; ".join(refusal.refused.values())
            raise InvalidInputError(
                f"query: the embedding provider refuses its text ({answers})"
            ) from refusal
        check_vector_count(vectors, 1)
        [vector] = vectors
        return vector if has_direction(vector) else None


def _lookups(query: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What the lexical channel reads for `query`: its keys (`query_blocking_keys`) and
    the prefixes a store seeks (`query_prefix`, then `query_infixes`)."""
    prefix = query_prefix(query)
    return query_blocking_keys(query), (
        *(() if prefix is None else (prefix,)),
        *query_infixes(query),
    )


def _scored(
    entity: Entity,
    score: float,
    semantic_of: Mapping[EntityId, float],
    lexical_of: Mapping[EntityId, float],
    matched: Mapping[EntityId, Callable[[], MatchedText | None]],
) -> ScoredEntity:
    lexical = lexical_of.get(entity.id)
    text = None if lexical is None else matched[entity.id]()
    return ScoredEntity(
        entity=entity,
        score=score,
        semantic=semantic_of.get(entity.id),
        lexical=lexical,
        matched_text=None if text is None else text.text,
        matched_property=None if text is None else text.property,
    )


def _lexical_ranking(
    query: str,
    tenant_id: TenantId,
    found: Sequence[LexicalCandidate],
    fetch: int,
    entity_types: Sequence[str] | None,
) -> tuple[
    list[tuple[EntityId, float]], set[EntityId], dict[EntityId, Callable[[], MatchedText | None]]
]:
    """The best `fetch` of the lexical candidates by `lexical_score`, ties by id, those
    of them the query merely mentions (`lexical_matches`), and for each the text it
    matched, worked out when asked; a candidate scoring 0.0 is none."""
    if not found:
        return [], set(), {}
    wanted = None if entity_types is None else set(entity_types)
    # The store answers each candidate once (the port's contract); `rank_by_score`
    # would still keep one of each id.
    tenant = tenant_id.int  # ints compare in C, UUIDs in Python
    kept = [
        c
        for c in found
        if c.tenant_id.int == tenant and (wanted is None or c.entity_type in wanted)
    ]
    matches = lexical_matches(query, kept)
    # A candidate the score finds nothing alike in (0.0) is a key's chance, no match.
    best = [i for i in _at_least_as_good(matches.scores, fetch) if matches.scores[i] > 0.0]
    ranking = rank_by_score((kept[i].id, matches.scores[i]) for i in best)[:fetch]
    texts: dict[EntityId, Callable[[], MatchedText | None]] = {
        kept[i].id: functools.partial(matches.matched.of, i) for i in best
    }
    return ranking, {kept[i].id for i in best if matches.mentioned[i]}, texts


def _at_least_as_good(scores: list[float], count: int) -> list[int]:
    """The indexes of the scores at least the `count`-th best, ties included: the
    candidates that can reach the top `count`, so only these need the total order's
    sort."""
    if len(scores) <= count:
        return list(range(len(scores)))
    bar = float(np.partition(np.asarray(scores), len(scores) - count)[len(scores) - count])
    return [i for i, score in enumerate(scores) if score >= bar]
