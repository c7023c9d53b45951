"""`Neo4jCandidateReader`: both channels' candidates in one Cypher statement."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import neo4j
from neo4j import exceptions as neo4j_errors

from redstring.adapters.neo4j import cypher
from redstring.adapters.neo4j.fallback_episode import FallbackEpisode
from redstring.adapters.neo4j.graph_store import Neo4jGraphStore, block_lookup
from redstring.adapters.neo4j.records import StoredEntities, candidates_from_columns
from redstring.adapters.neo4j.vector_store import NearestSearch, Neo4jVectorStore, matches_from
from redstring.domain.arguments import count_of
from redstring.domain.candidates import Candidates
from redstring.domain.ids import TenantId, tenant_id_of
from redstring.domain.vectors import VectorMatch

_log = logging.getLogger(__name__)


class Neo4jCandidateReader:
    """The vector search, the lexical lookup and the whole entities of the vector
    matches in one statement, so one round trip (docs/adr/0006), for a graph store and
    a vector store on the same driver and database (`Neo4jGraphStore.candidate_reader`).

    When the `k`-th match is tied past what the statement fetched, the vector
    search fetches more on its own (`Neo4jVectorStore.answer`). While the vector
    index is missing or not online yet, the statement runs again with an exact scan
    in its place (`Neo4jVectorStore.index_unavailable`), as does the rest of that
    search. When the server fails the statement (a `DatabaseError`), the two stores
    are read apart; the first such failure logs a warning, the next ones log at
    debug level until the statement answers again (`FallbackEpisode`)."""

    def __init__(self, graph: Neo4jGraphStore, vectors: Neo4jVectorStore) -> None:
        self._graph = graph
        self._vectors = vectors
        self._joint = FallbackEpisode(
            _log,
            f"the candidate statement of label {vectors.label}",
            "separate reads of the two stores",
        )

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
        k, tenant_id = count_of(k, "k"), tenant_id_of(tenant_id)
        search = (
            None
            if vector is None
            else await self._vectors.plan_search(vector, tenant_id, k=k, entity_types=entity_types)
        )
        lookup = block_lookup(
            keys, prefixes, tenant_id, limit_per_key, limit_per_prefix, entity_types
        )
        if search is None and lookup is None:
            return Candidates()
        parameters = {
            **(lookup or {}),
            **({} if search is None else search.parameters()),
            "tenant_id": str(tenant_id),
        }
        try:
            record, search = await self._read(search, lookup is not None, parameters)
        except neo4j_errors.DatabaseError as exc:
            self._joint.failed(
                "the candidate statement of label %s failed (%s: %s): it is answered by "
                "separate reads of the graph and vector stores, as is every candidate "
                "read it fails until it answers again (docs/neo4j.md)",
                self._vectors.label,
                exc.code,
                exc.message,
            )
            return await self._apart(
                tenant_id, vector, k, keys, prefixes, limit_per_key, limit_per_prefix, entity_types
            )
        self._joint.answered()
        semantic: list[VectorMatch] = []
        if search is not None:
            ranked = search.ranked(matches_from(record["matches"]))
            semantic = ranked if ranked is not None else await self._vectors.answer(search.wider())
        return Candidates(
            semantic=semantic,
            lexical=candidates_from_columns(tenant_id, record) if lookup is not None else [],
            entities=StoredEntities(record["entities"]),
        )

    async def _read(
        self, search: NearestSearch | None, lexical: bool, parameters: dict[str, Any]
    ) -> tuple[neo4j.Record, NearestSearch | None]:
        """The one record of `cypher.find_candidates`, and the search that answered its
        matches: of the same statement with the exact scan in place of the index, and
        the search made exact, when the vector index cannot be searched."""
        label = self._vectors.label
        indexed = search is not None and not search.exact
        statement = cypher.find_candidates(
            label, None if search is None else search.nearest, lexical
        )
        try:
            [record] = await self._graph.connection.query(statement, parameters)
        except neo4j_errors.ClientError as exc:
            if search is None or not indexed or not self._vectors.index_unavailable(exc):
                raise
            search = search.scanned()
            [record] = await self._graph.connection.query(
                cypher.find_candidates(label, search.nearest, lexical), parameters
            )
        else:
            if indexed:
                self._vectors.index_answered()
        return record, search

    async def _apart(
        self,
        tenant_id: TenantId,
        vector: Sequence[float] | None,
        k: int,
        keys: Sequence[str],
        prefixes: Sequence[str],
        limit_per_key: int | None,
        limit_per_prefix: int | None,
        entity_types: Sequence[str] | None,
    ) -> Candidates:
        semantic = (
            []
            if vector is None
            else await self._vectors.search(vector, tenant_id, k=k, entity_types=entity_types)
        )
        lexical = await self._graph.find_lexical_candidates(
            keys,
            tenant_id,
            prefixes=prefixes,
            limit_per_key=limit_per_key,
            limit_per_prefix=limit_per_prefix,
            entity_types=entity_types,
        )
        return Candidates(semantic=semantic, lexical=lexical)
