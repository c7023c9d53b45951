"""The systems `bench.quality` compares, all over the same vectors and one Neo4j.

redstring: `Retriever.retrieve` in each mode (HYBRID, SEMANTIC, LEXICAL) over the
Neo4j adapters and over the in-memory stores, built as the `Redstring` client builds it.
neo4j-graphrag: `HybridRetriever` (naive ranker; linear ranker at several alphas)
and `VectorRetriever`, over nodes of their own (one label a set) carrying the
same vectors (one property and vector index a provider) and a full-text index
of the names and aliases, as its documentation sets them up (the vector index
unquantised, as redstring's is). Its full-text query is the query text
lower-cased with Lucene's syntax characters escaped (what a caller must do;
graphrag passes the text through as a Lucene query).

Every system is handed the query's vector computed beforehand, so a latency
holds retrieval alone, never the embedding of the query.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import neo4j
import numpy as np

from bench.neo4j_cleanup import drop_labels
from bench.quality_sets import QualitySet, Query
from redstring import (
    EmbeddingProvider,
    Entity,
    EntityId,
    InMemoryGraphStore,
    InMemoryVectorStore,
    RetrievalMode,
    TenantId,
    VectorRecord,
)
from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jVectorStore
from redstring.composition.client import Redstring
from redstring.domain.properties import alias_names

K = 10
ALPHAS = (0.25, 0.5, 0.75)
MODES = (RetrievalMode.HYBRID, RetrievalMode.SEMANTIC, RetrievalMode.LEXICAL)
_LUCENE = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')

Search = Callable[[Query, list[float]], Awaitable[list[str]]]


def lucene_text(text: str) -> str:
    """`text` as a caller hands it to neo4j-graphrag's full-text search: lower-cased (so
    that AND, OR and NOT are words, not operators) with Lucene's syntax characters
    escaped (graphrag passes the text through as a Lucene query)."""
    return _LUCENE.sub(r"\\\1", text.lower())


def aliases_of(entity: Entity) -> dict[str, list[str]]:
    """An entity's aliases as a graphrag node's `aliases` property (a list of strings, which
    its full-text index reads beside the name), or nothing when it has none."""
    aliases = alias_names(entity.properties)
    return {"aliases": aliases} if aliases else {}


@dataclass(frozen=True)
class System:
    name: str
    search: Search


class FixedQueryEmbeddings:
    """An embedding provider that answers queries from vectors computed beforehand."""

    def __init__(self, dimension: int, vectors: dict[str, list[float]]) -> None:
        self._dimension = dimension
        self._vectors = vectors

    @property
    def dimension(self) -> int:
        return self._dimension

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        raise AssertionError("the bench writes vectors itself")

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vectors[t] for t in texts]


@dataclass
class Embedded:
    """A set's vectors under one provider: the entities' and the queries'."""

    provider: str
    dimension: int
    records: list[VectorRecord]
    queries: dict[str, list[float]]


async def embed(
    provider_name: str,
    make_provider: Callable[[], EmbeddingProvider],
    data: QualitySet,
    cache: Path | None = None,
) -> Embedded:
    """The set's vectors; with `cache`, read from (or written to) a file there named by
    a digest of the provider's name and every text (for a fixed model only: a provider
    whose code changes must not be cached)."""
    documents_text = [e.embedding_text() for e in data.entities]
    texts = list(dict.fromkeys(q.text for q in data.queries))
    digest = hashlib.sha256("\x00".join([provider_name, *documents_text, "\x01", *texts]).encode())
    path = None if cache is None else cache / f"{provider_name}-{digest.hexdigest()[:24]}.npz"
    if path is not None and path.exists():
        stored = np.load(path)
        documents, queries = stored["documents"].tolist(), stored["queries"].tolist()
        dimension = int(stored["documents"].shape[1])
    else:
        provider = make_provider()
        documents = await provider.embed_documents(documents_text)
        queries = await provider.embed_query(texts)
        dimension = provider.dimension
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            np.savez(path, documents=np.asarray(documents), queries=np.asarray(queries))
    records = [
        VectorRecord(
            entity_id=e.id, tenant_id=e.tenant_id, vector=tuple(v), entity_type=e.entity_type
        )
        for e, v in zip(data.entities, documents, strict=True)
    ]
    return Embedded(provider_name, dimension, records, dict(zip(texts, queries, strict=True)))


def redstring_systems(backend: str, services: Redstring, tenant: TenantId) -> list[System]:
    def search_in(mode: RetrievalMode) -> Search:
        async def search(query: Query, vector: list[float]) -> list[str]:
            result = await services.retriever.retrieve(query.text, tenant, k=K, mode=mode)
            return [str(m.entity.id) for m in result.matches]

        return search

    return [System(f"redstring {backend} {mode.name}", search_in(mode)) for mode in MODES]


async def memory_systems(data: QualitySet, embedded: Embedded, tenant: TenantId) -> list[System]:
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(embedded.dimension)
    await graph.upsert_entities(data.entities)
    await vectors.upsert(embedded.records)
    services = Redstring(
        embeddings=FixedQueryEmbeddings(embedded.dimension, embedded.queries),
        vectors=vectors,
        graph=graph,
    )
    return redstring_systems("memory", services, tenant)


class Neo4jSide:
    """What one run writes into Neo4j, and removes at its end: a tenant a set (entities,
    and vectors under a label a set and provider) for redstring, and nodes of a label a
    set with their indexes for neo4j-graphrag. The run's labels carry a run id."""

    def __init__(self, driver: neo4j.AsyncDriver, sync_driver: neo4j.Driver) -> None:
        self.driver = driver
        self.sync_driver = sync_driver
        self.run = uuid.uuid4().hex[:8]
        self.graph = Neo4jGraphStore(driver)
        self.vector_labels: list[str] = []
        self.rag_labels: list[str] = []
        self.loaded: list[tuple[TenantId, list[EntityId]]] = []

    def rag_label(self, data: QualitySet) -> str:
        return f"QualityRag_{data.name}_{self.run}"

    async def load_set(self, data: QualitySet, tenant: TenantId) -> None:
        await self.graph.ensure_schema()
        await self.graph.upsert_entities(data.entities)
        self.loaded.append((tenant, [e.id for e in data.entities]))
        label = self.rag_label(data)
        self.rag_labels.append(label)
        fulltext = f"{label}_names"
        rows = [{"id": str(e.id), "name": e.name, **aliases_of(e)} for e in data.entities]
        async with self.driver.session() as session:
            for low in range(0, len(rows), 2000):
                await session.run(
                    f"UNWIND $rows AS row CREATE (n:`{label}`) SET n = row",
                    rows=rows[low : low + 2000],
                )
            await session.run(
                f"CREATE FULLTEXT INDEX `{fulltext}` IF NOT EXISTS FOR (n:`{label}`) ON EACH [n.name, n.aliases]"
            )

    async def systems(self, data: QualitySet, embedded: Embedded, tenant: TenantId) -> list[System]:
        """redstring's and graphrag's systems over this set's vectors under one provider."""
        from neo4j_graphrag.retrievers import HybridRetriever, VectorRetriever
        from neo4j_graphrag.types import RetrieverResultItem

        vector_label = f"QualityVec{data.name.capitalize()}{embedded.provider.capitalize()}"
        vector_label = re.sub(r"\W", "", f"{vector_label}{self.run}")
        vectors = Neo4jVectorStore(self.driver, embedded.dimension, label=vector_label)
        self.vector_labels.append(vector_label)
        await vectors.ensure_schema()
        await vectors.upsert(embedded.records)
        services = Redstring(
            embeddings=FixedQueryEmbeddings(embedded.dimension, embedded.queries),
            vectors=vectors,
            graph=self.graph,
        )
        label = self.rag_label(data)
        prop = "embedding_" + re.sub(r"\W", "_", embedded.provider)
        index = f"{label}_{prop}"
        rows = [{"id": str(r.entity_id), "v": list(r.vector)} for r in embedded.records]
        async with self.driver.session() as session:
            for low in range(0, len(rows), 2000):
                await session.run(
                    f"UNWIND $rows AS row MATCH (n:`{label}` {{id: row.id}}) SET n.`{prop}` = row.v",
                    rows=rows[low : low + 2000],
                )
            await session.run(
                f"CREATE VECTOR INDEX `{index}` IF NOT EXISTS FOR (n:`{label}`) ON n.`{prop}` "
                f"OPTIONS {{indexConfig: {{`vector.dimensions`: {embedded.dimension}, "
                "`vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}}"
            )
            await (await session.run("CALL db.awaitIndexes(600)")).consume()

        def ids_of(record: neo4j.Record) -> RetrieverResultItem:
            return RetrieverResultItem(content=record["node"]["id"])

        hybrid = HybridRetriever(
            self.sync_driver,
            vector_index_name=index,
            fulltext_index_name=f"{label}_names",
            return_properties=["id"],
            result_formatter=ids_of,
        )
        vector = VectorRetriever(
            self.sync_driver, index_name=index, return_properties=["id"], result_formatter=ids_of
        )

        def graphrag(retriever: Any, **options: Any) -> Search:
            async def search(query: Query, query_vector: list[float]) -> list[str]:
                text = lucene_text(query.text)
                if retriever is vector:
                    found = retriever.search(query_vector=query_vector, top_k=K)
                else:
                    found = retriever.search(
                        query_text=text, query_vector=query_vector, top_k=K, **options
                    )
                return [str(item.content) for item in found.items]

            return search

        systems = redstring_systems("neo4j", services, tenant)
        systems.append(System("graphrag hybrid naive", graphrag(hybrid, ranker="naive")))
        for alpha in ALPHAS:
            systems.append(
                System(
                    f"graphrag hybrid linear a={alpha}",
                    graphrag(hybrid, ranker="linear", alpha=alpha),
                )
            )
        systems.append(System("graphrag vector", graphrag(vector)))
        return systems

    async def clean_up(self) -> None:
        """Remove what this run wrote: its tenants' entities, its nodes and indexes."""
        for tenant, ids in self.loaded:
            for low in range(0, len(ids), 5000):
                await self.graph.delete_entities(ids[low : low + 5000], tenant)
        labels = {*self.rag_labels, *self.vector_labels}
        await drop_labels(self.driver, labels.__contains__)
