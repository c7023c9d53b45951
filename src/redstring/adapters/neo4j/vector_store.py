"""`Neo4jVectorStore`: the `VectorStore` port on a Neo4j vector index."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, Self

import neo4j
from neo4j import exceptions as neo4j_errors

from redstring.adapters.neo4j import cypher
from redstring.adapters.neo4j.connection import (
    DEFAULT_SETTINGS,
    Neo4jConnection,
    Neo4jSettings,
    OwnedConnection,
    connect_driver,
)
from redstring.adapters.neo4j.fallback_episode import FallbackEpisode
from redstring.adapters.neo4j.records import query_vector, stored_vectors
from redstring.domain.arguments import MAX_COUNT, count_of, items_of, names_of, positive_count_of
from redstring.domain.errors import DimensionMismatchError, VectorIndexMismatchError
from redstring.domain.ids import (
    EntityId,
    TenantId,
    entity_ids_of,
    id_order_key,
    id_text,
    tenant_id_of,
)
from redstring.domain.vectors import (
    StoredSource,
    VectorMatch,
    VectorRecord,
    checked_vector,
    checked_vectors,
    has_direction,
    rows_with_direction,
)


class VectorSearchMode(StrEnum):
    """How `search` applies its filters before `k`.

    `INDEX`: inside the vector index (Cypher 25 `SEARCH ... WHERE`, tenant and
    type declared as the index's filter properties), except that a filter
    passing at most `exact_below` records is answered by an exact scan of
    those records. `EXACT`: always a tenant-scoped scan with exact cosine,
    for servers that cannot filter inside the index. Neither ever takes the
    nearest `k` first and filters afterwards.
    """

    INDEX = "index"
    EXACT = "exact"


_log = logging.getLogger(__name__)

# Filters passing this few records are scanned exactly: exact by construction, and
# clear of a Lucene fault seen in 2026.08 when an in-index filter matches almost
# nothing. The scan costs ~15 µs a record in Cypher, so above this the index answers
# sooner, from 50 records up (`bench.exact_scan`, docs/neo4j.md).
DEFAULT_EXACT_BELOW = 100

# The HNSW graph's links per vector and candidate list while inserting, and how many
# times `k` an indexed search asks the index for (keeping the best `k`): chosen by
# recall@10 and @30 against exact cosine, and latency (docs/neo4j.md, "Recall of the
# vector index").
DEFAULT_HNSW_M = 16
DEFAULT_HNSW_EF_CONSTRUCTION = 200
DEFAULT_SEARCH_RATIO = 3
# Neo4j 2026.08 creates an index with `vector.hnsw.ef_construction` 1, but its first
# write large enough to build the HNSW graph then fails inside Lucene (a candidate
# queue of capacity 0) and leaves the whole database needing a restart.
MIN_HNSW_EF_CONSTRUCTION = 2

# How many random points of the vectors' `(tenant_id, entity_id)` order a sample of their
# sources starts from (`sample_sources`): each a tenant, so a few tenants at least.
SAMPLE_PROBES = 8

# The server's answer to a search of a vector index that does not exist (dropped, never
# created) or is not online yet (being built, "not ready yet").
_INDEX_NOT_FOUND = "Neo.ClientError.Schema.IndexNotFound"


# The largest `LIMIT` a vector index's `SEARCH` takes (a 32-bit integer; a larger one is
# refused). No tenant holds more vectors, so asking for it asks for them all.
_MAX_INDEX_LIMIT = 2**31 - 1


def _first_fetch(k: int) -> int:
    """How many matches `search` asks for first: `k`, one more to see whether the `k`-th
    is tied past the cut, and a quarter of `k` more. Equal vectors (entities of the
    same name, type and description) tie, and with `k + 1` alone a tie at the cut
    took a second round trip: in a fifth of the bench's semantic-channel searches
    (k=30), none with the margin."""
    return min(k + 1 + k // 4, MAX_COUNT)


def matches_from(pairs: Sequence[Sequence[Any]]) -> list[tuple[EntityId, float]]:
    """The `[entity_id, score]` pairs of a search as ids and scores clipped to 0..1."""
    return [
        (EntityId(uuid.UUID(entity_id)), min(1.0, max(0.0, float(score))))
        for entity_id, score in pairs
    ]


@dataclass(frozen=True)
class NearestSearch:
    """One vector search's statement parameters and how many matches it fetches;
    `exact` when the exact scan answers it (`VectorSearchMode.EXACT`, or the index
    failed it)."""

    label: str
    exact: bool
    exact_below: int
    search_ratio: int
    vector: Any
    tenant_id: str
    types: list[str] | None
    k: int
    fetch: int

    @property
    def nearest(self) -> str:
        """The kind of `cypher.find_candidates`'s vector search."""
        if self.exact:
            return "exact"
        return "index" if self.types is None else "typed"

    def statement(self) -> str:
        return cypher.search_vectors(self.label, typed=self.types is not None)

    def exact_statement(self) -> str:
        return cypher.search_vectors_exact(self.label)

    def parameters(self) -> dict[str, Any]:
        return {
            "vector": self.vector,
            "tenant_id": self.tenant_id,
            "k": self.fetch,
            "types": self.types,
            "exact_below": self.exact_below,
            "index_k": min(self.fetch * self.search_ratio, _MAX_INDEX_LIMIT),
        }

    def ranked(self, rows: list[tuple[EntityId, float]]) -> list[VectorMatch] | None:
        """The best `k` of the fetched rows, equal scores in id order; None when the
        `k`-th score is tied past the last row fetched (then fetch more: `wider`)."""
        ranked = sorted(rows, key=lambda row: (-row[1], id_order_key(row[0])))
        # Done when nothing is left, or when the k-th score beats the last one fetched:
        # then every record tied with the k-th is among those fetched.
        if len(rows) < self.fetch or ranked[self.k - 1][1] > ranked[-1][1]:
            return [VectorMatch(entity_id=e, score=score) for e, score in ranked[: self.k]]
        return None

    def wider(self) -> NearestSearch:
        return replace(self, fetch=min(self.fetch * 2, MAX_COUNT))

    def scanned(self) -> NearestSearch:
        """The same search answered by the exact scan, for when the index cannot."""
        return replace(self, exact=True)


def _hnsw_differences(
    config: dict[str, Any], *, hnsw_m: int, hnsw_ef_construction: int
) -> list[str]:
    """How an existing vector index's HNSW graph settings differ from the store's. Such an
    index answers the same searches with the same scores, only with another recall."""
    differences = []
    for key, wanted in (
        ("vector.hnsw.m", hnsw_m),
        ("vector.hnsw.ef_construction", hnsw_ef_construction),
    ):
        found = config.get(key)
        if found is not None and int(found) != wanted:
            differences.append(f"{key} {found} instead of {wanted}")
    return differences


def _dimension_remedy(index: str, label: str, dimension: int) -> str:
    """What to do about an existing vector index of another dimension than the store's,
    said for the commands' users as for the library's."""
    return (
        f"vector index {index} exists with dimension {dimension}, as do the vectors "
        f"of label {label} written for it. Use an embedding model of dimension "
        f"{dimension} (the one that wrote them), or, in the library, another label "
        f"(Neo4jVectorStore(label=...)); or, to give label {label} the new dimension, "
        f"drop the index (DROP INDEX {index}) and the label's vectors (MATCH (v:{label}) "
        f"DETACH DELETE v), then write the vectors again: `redstring rekey --all-tenants "
        f"--vectors` rebuilds the index at its start (ensure_schema) and embeds every "
        f"entity"
    )


def _index_problems(
    label: str, labels: Sequence[str], properties: Sequence[str], config: dict[str, Any]
) -> list[str]:
    """How an existing vector index differs from what `cypher.vector_schema` creates, in a
    way that changes what searches answer or that the server cannot write to."""
    problems = []
    candidates = config.get("vector.hnsw.ef_construction")
    if candidates is not None and int(candidates) < MIN_HNSW_EF_CONSTRUCTION:
        problems.append(
            f"vector.hnsw.ef_construction {candidates}, below {MIN_HNSW_EF_CONSTRUCTION}, "
            "with which the first write that builds its HNSW graph fails and leaves the "
            "database needing a restart"
        )
    if list(labels) != [label]:
        problems.append(f"labels {list(labels)} instead of [{label!r}]")
    if (
        not properties
        or properties[0] != "embedding"
        or set(properties[1:])
        != {
            "tenant_id",
            "entity_type",
        }
    ):
        problems.append(
            f"properties {list(properties)} instead of embedding with the filter "
            "properties tenant_id and entity_type"
        )
    similarity = str(config.get("vector.similarity_function", "")).lower()
    if similarity != "cosine":
        problems.append(f"similarity function {similarity or 'unknown'} instead of cosine")
    quantization = config.get("vector.quantization.type")
    enabled = config.get("vector.quantization.enabled")
    if (quantization is not None and str(quantization).upper() != "NONE") or enabled is True:
        problems.append(f"quantization {quantization or 'enabled'} instead of none")
    return problems


class Neo4jVectorStore(OwnedConnection):
    """One `(:<label> {tenant_id, entity_id, entity_type, embedding})` node per record,
    searched through a cosine vector index of the declared dimension.

    Scores are the index's `(1 + cos) / 2`, the domain's scale; equal scores
    are ordered by `id_order_key`, including at the cut: when the `k`-th
    score is tied past what was fetched, the search asks for more.
    Construction does no I/O; `ensure_schema()` creates the index (and
    refuses an existing index of another dimension). `label` lets stores of
    different dimensions share one database. While the index is missing or
    not online yet, searches are answered by an exact scan, with a warning.

    `hnsw_m` and `hnsw_ef_construction` are the index's `vector.hnsw.m` and
    `vector.hnsw.ef_construction` (`ensure_schema` keeps an existing index
    built with others, with a warning, unless its `ef_construction` is below
    `MIN_HNSW_EF_CONSTRUCTION`); an indexed search asks the index for `k *
    search_ratio` matches and keeps the best `k`, which brings it nearer the
    exact nearest `k` (docs/neo4j.md, "Recall of the vector index").
    """

    def __init__(
        self,
        driver: neo4j.AsyncDriver,
        dimension: int,
        *,
        database: str | None = None,
        label: str = "EntityVector",
        search_mode: VectorSearchMode = VectorSearchMode.INDEX,
        exact_below: int = DEFAULT_EXACT_BELOW,
        hnsw_m: int = DEFAULT_HNSW_M,
        hnsw_ef_construction: int = DEFAULT_HNSW_EF_CONSTRUCTION,
        search_ratio: int = DEFAULT_SEARCH_RATIO,
        settings: Neo4jSettings = DEFAULT_SETTINGS,
        _owned: bool = False,
    ) -> None:
        dimension = positive_count_of(dimension, "dimension")
        if hnsw_m < 1 or search_ratio < 1:
            raise ValueError("hnsw_m and search_ratio must be positive")
        if hnsw_ef_construction < MIN_HNSW_EF_CONSTRUCTION:
            raise ValueError(
                f"hnsw_ef_construction must be at least {MIN_HNSW_EF_CONSTRUCTION}, "
                f"got {hnsw_ef_construction}"
            )
        self._hnsw_m = hnsw_m
        self._hnsw_ef_construction = hnsw_ef_construction
        self._search_ratio = search_ratio
        self._exact_below = exact_below
        self._dimension = dimension
        self._label = cypher.vector_label(label)
        self._mode = VectorSearchMode(search_mode)
        self._db = Neo4jConnection(driver, database=database, settings=settings, owned=_owned)
        index = cypher.vector_index_name(self._label)
        # The index missing or not online (IndexNotFound), and the index failing a search
        # of the store's own (a DatabaseError): two episodes, each logged once.
        self._unavailable = FallbackEpisode(_log, f"vector index {index}", "the exact scan")
        self._faulty = FallbackEpisode(
            _log, f"vector index {index} (searches of the vector store)", "the exact scan"
        )

    @classmethod
    def connect(
        cls,
        uri: str,
        auth: tuple[str, str],
        dimension: int,
        database: str | None = None,
        *,
        label: str = "EntityVector",
        search_mode: VectorSearchMode = VectorSearchMode.INDEX,
        hnsw_m: int = DEFAULT_HNSW_M,
        hnsw_ef_construction: int = DEFAULT_HNSW_EF_CONSTRUCTION,
        search_ratio: int = DEFAULT_SEARCH_RATIO,
        settings: Neo4jSettings = DEFAULT_SETTINGS,
    ) -> Self:
        return cls(
            connect_driver(uri, auth, settings),
            dimension,
            database=database,
            label=label,
            search_mode=search_mode,
            hnsw_m=hnsw_m,
            hnsw_ef_construction=hnsw_ef_construction,
            search_ratio=search_ratio,
            settings=settings,
            _owned=True,
        )

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def label(self) -> str:
        return self._label

    async def ensure_schema(self, *, wait_seconds: int = 300) -> None:
        """Create the constraint and indexes if missing, and wait until they are online.

        An existing index of another dimension raises `DimensionMismatchError`; one of
        other labels, properties, similarity or quantization, or built with
        `vector.hnsw.ef_construction` below `MIN_HNSW_EF_CONSTRUCTION` (the server
        cannot write to it), `VectorIndexMismatchError`. Both messages name the index
        and the `DROP INDEX` after which this builds it again. One of other HNSW
        settings is kept, with a warning.
        """
        for statement in cypher.vector_schema(
            self._label,
            self._dimension,
            hnsw_m=self._hnsw_m,
            hnsw_ef_construction=self._hnsw_ef_construction,
        ):
            await self._db.run_schema(statement)

        name = cypher.vector_index_name(self._label)
        found = await self._db.query(cypher.VECTOR_INDEX_SHAPE, {"name": name})
        if found:
            config = found[0]["config"] or {}
            existing = config.get("vector.dimensions")
            if existing is not None and int(existing) != self._dimension:
                raise DimensionMismatchError(
                    int(existing),
                    self._dimension,
                    f"the vector store for label {self._label}",
                    remedy=_dimension_remedy(name, self._label, int(existing)),
                )
            problems = _index_problems(
                self._label, found[0]["labels"], found[0]["properties"], config
            )
            if problems:
                raise VectorIndexMismatchError(
                    f"vector index {name} exists with {'; '.join(problems)}. Drop it "
                    f"(DROP INDEX {name}) and run ensure_schema again to rebuild it"
                )
            differences = _hnsw_differences(
                config, hnsw_m=self._hnsw_m, hnsw_ef_construction=self._hnsw_ef_construction
            )
            if differences:
                _log.warning(
                    "vector index %s was built with %s: it is searched as it is, with the "
                    "recall of those settings; DROP INDEX %s and run ensure_schema again "
                    "to rebuild it with these (docs/neo4j.md)",
                    name,
                    "; ".join(differences),
                    name,
                )
        await self._db.run_schema(
            cypher.AWAIT_INDEXES, {"seconds": wait_seconds}, takes=wait_seconds
        )

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        """Batches of `settings.vector_batch_size` records, each one transaction, up to
        `settings.write_concurrency` of them in flight at once; a record given twice
        for one entity is written once, the last. The nodes of directionless records
        are deleted instead, after the others are written."""
        records = items_of(records, VectorRecord, "records")
        latest = list({(r.tenant_id, r.entity_id): r for r in records}.values())
        if not latest:
            return
        matrix = checked_vectors([r.vector for r in latest], self._dimension, "vector record")
        directed = rows_with_direction(matrix)
        if directed.any():
            vectors = stored_vectors(matrix[directed], packed=await self._db.packs_vectors())
            stored = [r for r, d in zip(latest, directed, strict=True) if d]
            rows = [
                {
                    "tenant_id": id_text(r.tenant_id),
                    "entity_id": id_text(r.entity_id),
                    "entity_type": r.entity_type,
                    "vector": vector,
                    "source": r.source,
                }
                for r, vector in zip(stored, vectors, strict=True)
            ]
            await self._db.write_rows(
                cypher.upsert_vectors(self._label),
                rows,
                batch_size=self._db.settings.vector_batch_size,
            )
        if not directed.all():
            dropped = [
                {"tenant_id": id_text(r.tenant_id), "entity_id": id_text(r.entity_id)}
                for r, d in zip(latest, directed, strict=True)
                if not d
            ]
            await self._db.write_rows(cypher.delete_vector_rows(self._label), dropped)

    async def search(
        self,
        vector: Sequence[float],
        tenant_id: TenantId,
        *,
        k: int,
        entity_types: Sequence[str] | None = None,
    ) -> list[VectorMatch]:
        plan = await self.plan_search(vector, tenant_id, k=k, entity_types=entity_types)
        return [] if plan is None else await self.answer(plan)

    async def plan_search(
        self,
        vector: Sequence[float],
        tenant_id: TenantId,
        *,
        k: int,
        entity_types: Sequence[str] | None = None,
    ) -> NearestSearch | None:
        """`search`'s arguments checked and converted, with the statement and parameters
        of its first round trip; None when it can find nothing (`k == 0`, no types, a
        vector without direction). For a reader that runs the search inside a statement
        of its own (`Neo4jCandidateReader`)."""
        k = count_of(k, "k")
        entity_types = names_of(entity_types, "entity_types")
        checked = checked_vector(vector, self._dimension, "query vector")
        tenant_id = tenant_id_of(tenant_id)
        if k == 0 or (entity_types is not None and len(entity_types) == 0):
            return None
        if not has_direction(checked):  # the server refuses it: no cosine exists
            return None
        types = None if entity_types is None else sorted(set(entity_types))
        return NearestSearch(
            label=self._label,
            exact=self._mode is VectorSearchMode.EXACT,
            exact_below=self._exact_below,
            search_ratio=self._search_ratio,
            vector=query_vector(checked, packed=await self._db.packs_vectors()),
            tenant_id=str(tenant_id),
            types=types,
            k=k,
            fetch=_first_fetch(k),
        )

    def index_unavailable(self, error: neo4j_errors.ClientError) -> bool:
        """Whether `error` is the server saying that the store's vector index does not
        exist (dropped, never created) or is not online yet (being built), so that an
        exact scan must answer instead. The first such error logs a warning that says
        what to do, the next ones log at debug level, and the first search the index
        answers after them logs that it answers again (`index_answered`)."""
        if error.code != _INDEX_NOT_FOUND:
            return False
        self._unavailable.failed(
            "vector index %s cannot be searched (%s): until it is online, vector "
            "searches of label %s are answered by an exact scan of the tenant's "
            "vectors, which grows slower with the tenant. Run ensure_schema(), which "
            "creates the index if it is missing and waits until it is online "
            "(docs/neo4j.md)",
            cypher.vector_index_name(self._label),
            error.message,
            self._label,
        )
        return True

    def index_answered(self) -> None:
        """Note that the vector index answered a search: the end of an episode of
        `index_unavailable`, logged once; should the index become unavailable again,
        it warns again."""
        self._unavailable.answered()

    async def answer(self, plan: NearestSearch) -> list[VectorMatch]:
        """The best `plan.k` matches of `plan`, fetching more while the `k`-th is tied
        past the last one fetched. Once the exact scan has answered a round trip in
        place of the index, it answers the rest of the search too: the index is not
        asked again within one search."""
        while True:
            rows, plan = await self._nearest(plan)
            ranked = plan.ranked(rows)
            if ranked is not None:
                return ranked
            plan = plan.wider()

    async def _nearest(
        self, plan: NearestSearch
    ) -> tuple[list[tuple[EntityId, float]], NearestSearch]:
        """One round trip's rows, and the plan that answered them: `plan` made exact
        when the index failed it and the exact scan answered."""
        if plan.exact:
            records = await self._db.query(plan.exact_statement(), plan.parameters())
        else:
            try:
                records = await self._db.query(plan.statement(), plan.parameters())
            except neo4j_errors.DatabaseError as exc:
                self._faulty.failed(
                    "vector index %s failed a search of label %s (%s: %s): it is answered "
                    "by an exact scan of the tenant's vectors, as is every search the index "
                    "fails until it answers again (docs/neo4j.md)",
                    cypher.vector_index_name(self._label),
                    self._label,
                    exc.code,
                    exc.message,
                )
                plan = plan.scanned()
                records = await self._db.query(plan.exact_statement(), plan.parameters())
            except neo4j_errors.ClientError as exc:
                if not self.index_unavailable(exc):
                    raise
                plan = plan.scanned()
                records = await self._db.query(plan.exact_statement(), plan.parameters())
            else:
                self._faulty.answered()
                self.index_answered()
        return [match for record in records for match in matches_from(record["matches"])], plan

    async def sources(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, str | None]:
        """One read on the identity constraint's index, whatever the number of ids."""
        entity_ids = entity_ids_of(entity_ids, "entity_ids")
        tenant_id = tenant_id_of(tenant_id)
        ids = [str(i) for i in dict.fromkeys(entity_ids)]
        if not ids:
            return {}
        records = await self._db.query(
            cypher.vector_sources(self._label), {"ids": ids, "tenant_id": str(tenant_id)}
        )
        return {EntityId(uuid.UUID(i)): source for r in records for i, source in r["found"]}

    async def sample_sources(self, limit: int) -> list[StoredSource]:
        """`SourceSamples`: one read of index seeks from `SAMPLE_PROBES` random points of
        the `(tenant_id, entity_id)` order (`cypher.sample_vector_sources`), which reads
        about twice `limit` vectors however many the label holds."""
        limit = count_of(limit, "limit")
        if limit == 0:
            return []
        probes = min(SAMPLE_PROBES, limit)
        records = await self._db.query(
            cypher.sample_vector_sources(self._label),
            {
                "probes": [[str(uuid.uuid4()), str(uuid.uuid4())] for _ in range(probes)],
                "each": -(-limit // probes),
                "limit": limit,
            },
        )
        return [
            StoredSource(TenantId(uuid.UUID(tenant)), EntityId(uuid.UUID(entity)), source)
            for r in records
            for tenant, entity, source in r["found"]
        ]

    async def delete(self, entity_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
        entity_ids = entity_ids_of(entity_ids, "entity_ids")
        tenant_id = tenant_id_of(tenant_id)
        ids = [str(i) for i in dict.fromkeys(entity_ids)]
        if not ids:
            return
        statement = cypher.delete_vectors(self._label)

        async def work(tx: neo4j.AsyncTransaction) -> None:
            await (await tx.run(statement, ids=ids, tenant_id=str(tenant_id))).consume()

        await self._db.write(work)
