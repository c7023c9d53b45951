"""Benchmark: redstring against neo4j-graphrag on one Neo4j, same data, same vectors (issue 19).

    make neo4j-start && set -a && . .cache/neo4j/env && set +a
    .venv/bin/python -m bench.peer [--sizes 10000,100000] [--queries 400] [--clients 16]
                                   [--seconds 20] [--graphql-size 10000] [--ingest-repeats 2]
                                   [--parts 60]
                                   [--ingest-side 20000] [--warm-up 20] [--load wrk|httpx]
                                   [--peer-hnsw server|redstring] [--ingestion-only] [--tiny]

The peer is the library a user would pick instead: neo4j-graphrag's
`HybridRetriever` (default naive ranker, `top_k=10`) over nodes of a label of
the run's own, with a full-text index of their names and a vector index
(cosine, unquantised, the dimension of the vectors; the server's HNSW settings,
or with `--peer-hnsw redstring` redstring's `m` and `ef_construction`) on the
same vectors as redstring's. Every size gets a fresh tenant of `bench.corpus` names, and its
vectors are computed once, before any timing, by redstring's default
embedding provider (`Redstring.in_memory()`'s), for the entities and the
queries; both systems get those vectors: redstring through a provider that
answers from them (`Precomputed`), graphrag through `query_vector=` and
`upsert_vectors`. graphrag's full-text query is the text lower-cased with
Lucene's syntax escaped (`bench.quality_systems.lucene_text`). Measured per
size, all in one run:

- Ingestion with the same vectors: redstring's `Redstring.upsert` (`build_graph`,
  batches of 5,000: entities, then vectors) against graphrag's documented route
  (nodes created by `UNWIND ... CREATE` in batches of 5,000, then
  `neo4j_graphrag.indexes.upsert_vectors` of their vectors). Both systems' indexes
  exist before their load (redstring's `ensure_schema`; graphrag's
  `create_fulltext_index` and its vector index), and each timed load ends when
  `db.awaitIndexes` returns. A small untimed load of each warms the server up
  first. The first repetition loads the size's data; the others (`--ingest-side`
  entities at most, into labels and a tenant removed right after) take the two
  systems in the other order, the order alternating from repetition to repetition.
  `--ingestion-only` measures this alone (its table, no other part of the run).
- Retrieval: `--queries` queries drawn from the corpus (`make_queries`: whole names,
  names with one typo, partial or reordered names, type-ahead prefixes, in turn);
  after a warm-up of each, each query is sent to both systems back to back, the one
  going first alternating, each call timed by the caller (`perf_counter` around
  `Redstring.retrieve(query, tenant, k=10, mode=HYBRID)` and
  `HybridRetriever.search`). Reported: p50 and p95 of each, the ratio redstring /
  graphrag of p50s and of p95s, the median and p95 of the per-query ratio, how
  often each found the queried entity in its best 10 (context, not a target), the
  median CPU time of this process a call (the client's share), and p50, p95 and
  found by kind of query.
- redstring's one candidate statement taken apart, for the first `--parts` queries:
  the statement each `retrieve` sent first, re-run by a synchronous session whole,
  then its vector part alone (as asked, and at graphrag's breadth: `k` and the
  index's `LIMIT` both 10), then its lexical part alone; the median of three runs of
  each, so server time and one round trip: what of the gap the server's side is.
- GraphQL, at `--graphql-size`: two servers as `redstring serve` runs them (one
  uvicorn worker each on a free port of 127.0.0.1, the default provider with its
  cache of query embeddings), one over the in-memory stores and one over the Neo4j
  data just measured, each with twice as many relationships as entities; the query
  is `retrieve(k: 10)` with one hop (`relationships(first: 10) { target { name } }`),
  sent by `--clients` clients (`bench.graphql.run_load`: wrk when installed, else
  httpx clients in this process), after a warm-up, in two rounds of half of
  `--seconds` each, memory, Neo4j, Neo4j, memory.

Targets (issue 19; ratios within one run, the absolute figures only context):
redstring HYBRID / graphrag hybrid <= 1.0 at 10,000 and 100,000 entities, at p50 and
at p95; ingestion >= 1.0x the peer's rate; GraphQL over Neo4j >= 0.5x the same query's
rate over memory. Whatever the run wrote in Neo4j (its tenants, and the labels and
indexes named with its run id) is removed at its end, also on failure.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import neo4j
import numpy as np
import uvicorn
from threadpoolctl import threadpool_limits

from bench.corpus import make_corpus
from bench.graphql import LoadFigures, run_load, wait_ready
from bench.load import percentile
from bench.measure import free_port, machine
from bench.neo4j_cleanup import drop_labels, schema_as_found
from bench.options import parse_args
from bench.quality_sets import typo_in_name
from bench.quality_systems import lucene_text
from redstring import (
    EmbeddingProvider,
    Entity,
    EntityId,
    Redstring,
    Relationship,
    RelationshipId,
    RetrievalMode,
    TenantId,
)
from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jVectorStore, connect_driver, cypher
from redstring.adapters.neo4j.vector_store import DEFAULT_HNSW_EF_CONSTRUCTION, DEFAULT_HNSW_M
from redstring.api.app import create_app
from redstring.api.settings import Settings

K = 10
BATCH = 5000  # entities a write, both systems (redstring's default batch size)
SEED = 19
WARM_UP_LOAD = 2000  # entities of the untimed load of each system, first
QUERY_KINDS = ("name", "typo", "partial", "prefix")
RELATIONSHIP_TYPES = ("PARTNER_OF", "SUPPLIES", "LOCATED_IN")


# --- data ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    text: str
    kind: str
    answer: EntityId


def make_queries(corpus: Sequence[Entity], count: int, seed: int) -> list[Query]:
    """`count` queries from `corpus`, the kinds in turn: a whole `name`; the name with a
    `typo` (one edit in one of its words of 5 letters or more); `partial`, the name
    without its last word (a company's legal form, a product's suffix) or, for a name
    of two words, the two swapped; a type-ahead `prefix` of 4 to 8 letters."""
    rng = random.Random(seed)
    out: list[Query] = []
    while len(out) < count:
        entity = rng.choice(corpus)
        kind = QUERY_KINDS[len(out) % len(QUERY_KINDS)]
        words = entity.name.split(" ")
        text: str | None
        if kind == "name":
            text = entity.name
        elif kind == "typo":
            text = typo_in_name(entity.name, rng)
        elif kind == "partial":
            text = " ".join(words[:-1] if len(words) > 2 else reversed(words))
        else:
            text = entity.name[: rng.randint(4, 8)].strip()
        if text:
            out.append(Query(text, kind, entity.id))
    return out


def relationships_for(corpus: Sequence[Entity], seed: int) -> list[Relationship]:
    """Twice as many relationships as entities, between entities drawn at random."""
    rng = random.Random(seed)
    return [
        Relationship(
            id=RelationshipId(uuid.UUID(int=rng.getrandbits(128))),
            tenant_id=a.tenant_id,
            source_entity_id=a.id,
            target_entity_id=b.id,
            relationship_type=rng.choice(RELATIONSHIP_TYPES),
        )
        for a, b in (rng.sample(list(corpus), 2) for _ in range(2 * len(corpus)))
    ]


class Precomputed:
    """An embedding provider that answers from vectors computed beforehand, by text:
    how redstring is handed the vectors graphrag is handed."""

    def __init__(self, matrix: np.ndarray, rows: dict[str, int]) -> None:
        self._matrix = matrix
        self._rows = rows

    @property
    def dimension(self) -> int:
        return int(self._matrix.shape[1])

    def vectors(self, texts: Sequence[str]) -> list[list[float]]:
        rows: list[list[float]] = self._matrix[[self._rows[t] for t in texts]].tolist()
        return rows

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self.vectors(texts)

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return self.vectors(texts)


async def precompute(provider: EmbeddingProvider, texts: Sequence[str]) -> Precomputed:
    """The vectors of `texts` (each once) by `provider`, kept as float32."""
    unique = list(dict.fromkeys(texts))
    matrix = np.zeros((len(unique), provider.dimension), dtype=np.float32)
    for low in range(0, len(unique), BATCH):
        chunk = unique[low : low + BATCH]
        matrix[low : low + len(chunk)] = await provider.embed_documents(chunk)
    return Precomputed(matrix, {t: i for i, t in enumerate(unique)})


# --- what the run writes into Neo4j ------------------------------------------------------


class Neo4jRun:
    """The run's drivers, what it wrote, and the removal of it: tenants of redstring's
    graph store (deleted through the store), and labels carrying the run id, with
    their nodes, indexes and constraints."""

    def __init__(self, uri: str, auth: tuple[str, str], peer_hnsw: str = "server") -> None:
        self.driver = connect_driver(uri, auth)
        # graphrag's vector index: the server's HNSW settings, as its `create_vector_index`
        # makes it, or redstring's (`--peer-hnsw redstring`).
        self.peer_hnsw = peer_hnsw
        self.sync_driver = neo4j.GraphDatabase.driver(uri, auth=auth)
        self.graph = Neo4jGraphStore(self.driver)
        self.id = uuid.uuid4().hex[:8]
        self.tenants: dict[TenantId, list[EntityId]] = {}

    def label(self, name: str) -> str:
        return f"Peer{name}_{self.id}"

    async def await_indexes(self) -> None:
        async with self.driver.session() as session:
            await (await session.run("CALL db.awaitIndexes(600)")).consume()

    async def remove_tenant(self, tenant: TenantId) -> None:
        ids = self.tenants.pop(tenant, [])
        for low in range(0, len(ids), BATCH):
            await self.graph.delete_entities(ids[low : low + BATCH], tenant)

    async def remove_labels(self, wanted: Callable[[str], bool]) -> None:
        """Every node of a label `wanted` accepts, with the constraints and indexes on it."""
        await drop_labels(self.driver, wanted)

    async def clean_up(self) -> None:
        for tenant in list(self.tenants):
            await self.remove_tenant(tenant)
        await self.remove_labels(lambda label: self.id in label)

    async def close(self) -> None:
        await self.driver.close()
        self.sync_driver.close()


# --- ingestion ---------------------------------------------------------------------------


PEER_HNSW = {
    "server": "the server's HNSW settings, as graphrag's create_vector_index makes it",
    "redstring": f"redstring's HNSW settings (m {DEFAULT_HNSW_M}, "
    f"ef_construction {DEFAULT_HNSW_EF_CONSTRUCTION})",
}


def rag_indexes(label: str) -> tuple[str, str]:
    """graphrag's full-text and vector index names for its nodes of `label`."""
    return f"{label}_name", f"{label}_embedding"


async def load_redstring(
    run: Neo4jRun, entities: Sequence[Entity], vectors: Precomputed, label: str
) -> tuple[Redstring, float]:
    """redstring over `label`'s vector index, `entities` loaded; the seconds of the load."""
    store = Neo4jVectorStore(run.driver, vectors.dimension, label=label)
    await run.graph.ensure_schema()
    await store.ensure_schema()
    client = Redstring(embeddings=vectors, vectors=store, graph=run.graph)
    if entities:
        run.tenants.setdefault(entities[0].tenant_id, []).extend(e.id for e in entities)
    started = time.perf_counter()
    await client.upsert(entities)
    await run.await_indexes()
    return client, time.perf_counter() - started


async def load_graphrag(
    run: Neo4jRun, entities: Sequence[Entity], vectors: Precomputed, label: str
) -> float:
    """graphrag's nodes of `label` and their indexes; the seconds of the load."""
    from neo4j_graphrag.indexes import create_fulltext_index, upsert_vectors

    fulltext, vector_index = rag_indexes(label)
    create_fulltext_index(run.sync_driver, fulltext, label, ["name"])
    # As graphrag's `create_vector_index`, but unquantised (redstring's index is too),
    # which that function cannot ask for.
    hnsw = (
        f", `vector.hnsw.m`: {DEFAULT_HNSW_M}, "
        f"`vector.hnsw.ef_construction`: {DEFAULT_HNSW_EF_CONSTRUCTION}"
        if run.peer_hnsw == "redstring"
        else ""
    )
    run.sync_driver.execute_query(
        f"CREATE VECTOR INDEX `{vector_index}` IF NOT EXISTS FOR (n:`{label}`) ON n.embedding "
        f"OPTIONS {{indexConfig: {{`vector.dimensions`: {vectors.dimension}, "
        f"`vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false{hnsw}}}}}"
    )
    await run.await_indexes()
    started = time.perf_counter()
    for low in range(0, len(entities), BATCH):
        batch = entities[low : low + BATCH]
        rows = [
            {"id": str(e.id), "name": e.name, "type": e.entity_type, "text": e.description}
            for e in batch
        ]
        created = run.sync_driver.execute_query(
            f"UNWIND $rows AS row CREATE (n:`{label}`) SET n.id = row.id, n.name = row.name, "
            "n.entity_type = row.type, n.description = row.text RETURN elementId(n) AS id",
            rows=rows,
        )
        ids = [record["id"] for record in created.records]
        upsert_vectors(
            run.sync_driver, ids, "embedding", vectors.vectors([e.embedding_text() for e in batch])
        )
    await run.await_indexes()
    return time.perf_counter() - started


@dataclass
class IngestRow:
    entities: int
    first: str
    redstring_s: float
    graphrag_s: float


async def warm_up_loads(run: Neo4jRun, corpus: Sequence[Entity], vectors: Precomputed) -> None:
    """A small untimed load of each system, removed at once."""
    tenant = TenantId(uuid.uuid4())
    entities = make_corpus(tenant, min(WARM_UP_LOAD, len(corpus)), seed=SEED)
    side_rs, side_rag = run.label("WarmVec"), run.label("WarmRag")
    await load_redstring(run, entities, vectors, side_rs)
    await load_graphrag(run, entities, vectors, side_rag)
    await run.remove_tenant(tenant)
    await run.remove_labels(lambda label: label in (side_rs, side_rag))


async def timed_loads(
    run: Neo4jRun,
    entities: Sequence[Entity],
    vectors: Precomputed,
    labels: tuple[str, str],
    redstring_first: bool,
) -> tuple[Redstring, IngestRow]:
    """Both systems' loads of `entities` into `labels` (redstring's, graphrag's), in the
    order asked."""
    rs_label, rag_label = labels
    if redstring_first:
        client, rs_s = await load_redstring(run, entities, vectors, rs_label)
        rag_s = await load_graphrag(run, entities, vectors, rag_label)
    else:
        rag_s = await load_graphrag(run, entities, vectors, rag_label)
        client, rs_s = await load_redstring(run, entities, vectors, rs_label)
    first = "redstring" if redstring_first else "graphrag"
    return client, IngestRow(len(entities), first, rs_s, rag_s)


# --- retrieval -----------------------------------------------------------------------------


@dataclass
class Timings:
    """One system's calls, in query order: milliseconds, this process's CPU milliseconds
    (the client's share: the server's shows only in the wall time), and whether the
    queried entity was in the best 10."""

    ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    hits: list[bool] = field(default_factory=list)
    errors: int = 0


Search = Callable[[Query], Awaitable[list[str]]]


def graphrag_search(run: Neo4jRun, label: str, vectors: Precomputed) -> Search:
    from neo4j_graphrag.retrievers import HybridRetriever
    from neo4j_graphrag.types import RetrieverResultItem

    def id_of(record: neo4j.Record) -> RetrieverResultItem:
        return RetrieverResultItem(content=record["node"]["id"])

    fulltext, vector_index = rag_indexes(label)
    retriever = HybridRetriever(
        run.sync_driver,
        vector_index_name=vector_index,
        fulltext_index_name=fulltext,
        result_formatter=id_of,
    )

    async def search(query: Query) -> list[str]:
        [vector] = vectors.vectors([query.text])
        found = retriever.search(query_text=lucene_text(query.text), query_vector=vector, top_k=K)
        return [str(item.content) for item in found.items]

    return search


def redstring_search(client: Redstring, tenant: TenantId) -> Search:
    async def search(query: Query) -> list[str]:
        result = await client.retrieve(query.text, tenant, k=K, mode=RetrievalMode.HYBRID)
        return [str(m.entity.id) for m in result.matches]

    return search


async def interleaved(
    systems: dict[str, Search], queries: Sequence[Query], warm_up: int
) -> dict[str, Timings]:
    """Each query to every system back to back, the order reversed every other query."""
    for query in queries[:warm_up]:
        for search in systems.values():
            await search(query)
    timings = {name: Timings() for name in systems}
    names = list(systems)
    for i, query in enumerate(queries):
        for name in names if i % 2 == 0 else reversed(names):
            started, started_cpu = time.perf_counter(), time.process_time()
            try:
                found = await systems[name](query)
            except neo4j.exceptions.Neo4jError:
                if name == "redstring":
                    raise
                found = []  # graphrag's full-text query refused: counted, a miss
                timings[name].errors += 1
            timings[name].ms.append((time.perf_counter() - started) * 1000)
            timings[name].cpu_ms.append((time.process_time() - started_cpu) * 1000)
            timings[name].hits.append(str(query.answer) in found[:K])
    return timings


# --- redstring's statement, taken apart --------------------------------------------------

PARTS = (
    "whole statement",
    "vector part (as asked)",
    f"vector part at graphrag's breadth ({K})",
    "lexical part",
)


async def captured_statements(
    client: Redstring, tenant: TenantId, queries: Sequence[Query]
) -> list[tuple[str, dict[str, Any]]]:
    """The first statement of each query's `retrieve` (its candidate read) and its
    parameters, read off the graph store's connection."""
    connection = client.graph.connection  # type: ignore[attr-defined]
    sent: list[tuple[str, dict[str, Any]]] = []
    query = connection.query

    async def recorded(statement: str, parameters: dict[str, Any]) -> Any:
        sent.append((statement, dict(parameters)))
        return await query(statement, parameters)

    statements = []
    connection.query = recorded
    try:
        for q in queries:
            sent.clear()
            await client.retrieve(q.text, tenant, k=K, mode=RetrievalMode.HYBRID)
            statements.append(sent[0])
    finally:
        del connection.query
    return statements


def statement_parts(
    run: Neo4jRun, label: str, statements: Sequence[tuple[str, dict[str, Any]]], repeats: int = 3
) -> dict[str, list[float]]:
    """Milliseconds of each of `PARTS` a statement (server and round trip, sync driver,
    the median of `repeats` after one untimed run): where the one read's time goes."""
    times: dict[str, list[float]] = {part: [] for part in PARTS}
    with run.sync_driver.session() as session:
        for statement, parameters in statements:
            nearest = (
                "exact"
                if "SEARCH" not in statement
                else ("typed" if parameters.get("types") else "index")
            )
            vector_only = cypher.find_candidates(label, nearest, False)
            variants = {
                PARTS[0]: (statement, parameters),
                PARTS[1]: (vector_only, parameters),
                PARTS[2]: (vector_only, {**parameters, "k": K, "index_k": K}),
                PARTS[3]: (cypher.find_candidates(label, None, True), parameters),
            }
            for part, (text, values) in variants.items():
                session.run(text, values).consume()
                ms = []
                for _ in range(repeats):
                    started = time.perf_counter()
                    session.run(text, values).consume()
                    ms.append((time.perf_counter() - started) * 1000)
                times[part].append(statistics.median(ms))
    return times


# --- GraphQL -------------------------------------------------------------------------------


def serve(backend: str, port: int, size: int, tenant: TenantId, label: str) -> None:
    """A server as `redstring serve` runs one (its default provider and query cache, one
    uvicorn worker, its event loop), over the in-memory stores loaded with the size's
    corpus, or over the Neo4j data the bench loaded under `label`."""
    threadpool_limits(limits=1, user_api="blas")
    cache = Settings().query_cache_size
    if backend == "memory":
        services = Redstring.in_memory(query_cache_size=cache)
    else:
        driver = connect_driver(
            os.environ["NEO4J_URI"],
            (os.environ.get("NEO4J_USER", "neo4j"), os.environ["NEO4J_PASSWORD"]),
        )
        embeddings = Redstring.in_memory().embeddings
        services = Redstring(
            embeddings=embeddings,
            vectors=Neo4jVectorStore(driver, embeddings.dimension, label=label),
            graph=Neo4jGraphStore(driver),
            query_cache_size=cache,
            closers=(driver.close,),
        )

    async def prepare() -> None:
        if backend == "memory":
            corpus = make_corpus(tenant, size, seed=SEED)
            await services.upsert(corpus, relationships_for(corpus, SEED))
        else:
            await services.warm_up()

    config = uvicorn.Config(
        create_app(services=services), host="127.0.0.1", port=port, log_level="warning"
    )
    with asyncio.Runner(loop_factory=config.get_loop_factory()) as runner:
        runner.run(prepare())
        runner.run(uvicorn.Server(config).serve())
        runner.run(services.aclose())


@dataclass
class GraphQLResult:
    rounds: dict[str, list[LoadFigures]] = field(default_factory=dict)

    def rate(self, backend: str) -> float:
        figures = self.rounds[backend]
        return sum(f.requests for f in figures) / sum(f.seconds for f in figures)


def start_server(
    backend: str, port: int, size: int, tenant: TenantId, label: str
) -> subprocess.Popen[bytes]:
    """`serve` in a process of its own."""
    command = [sys.executable, "-m", "bench.peer", "--serve", backend, "--port", str(port)]
    command += ["--sizes", str(size), "--tenant", str(tenant), "--label", label]
    return subprocess.Popen(command)


async def measure_graphql(
    args: argparse.Namespace, size: int, tenant: TenantId, label: str, queries: list[str]
) -> GraphQLResult:
    ports = {"memory": free_port(), "neo4j": free_port()}
    servers = {b: start_server(b, port, size, tenant, label) for b, port in ports.items()}
    result = GraphQLResult({backend: [] for backend in ports})
    try:
        for backend, port in ports.items():
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
                ready = asyncio.ensure_future(wait_ready(client, time.monotonic() + 600))
                while not ready.done():
                    if servers[backend].poll() is not None:
                        ready.cancel()
                        raise SystemExit(f"the {backend} server exited before it was ready")
                    await asyncio.sleep(0.5)
                ready.result()
        for port in ports.values():  # warm-up
            await run_load(
                port, queries, max(1.0, args.seconds / 10), args.clients, args.load, tenant
            )
        for backend in ("memory", "neo4j", "neo4j", "memory"):
            figures = await run_load(
                ports[backend], queries, args.seconds / 2, args.clients, args.load, tenant
            )
            result.rounds[backend].append(figures)
    finally:
        for server in servers.values():
            server.terminate()
        for server in servers.values():
            server.wait(timeout=60)
    return result


# --- the run -------------------------------------------------------------------------------


@dataclass
class SizeResult:
    size: int
    queries: list[Query]
    ingest: list[IngestRow]
    timings: dict[str, Timings]
    parts: dict[str, list[float]] = field(default_factory=dict)
    graphql: GraphQLResult | None = None


async def run_size(
    args: argparse.Namespace, run: Neo4jRun, provider: EmbeddingProvider, position: int, size: int
) -> SizeResult:
    tenant = TenantId(uuid.uuid4())
    corpus = make_corpus(tenant, size, seed=SEED)
    queries = make_queries(corpus, args.queries, SEED + size)
    started = time.perf_counter()
    texts = [e.embedding_text() for e in corpus] + [q.text for q in queries]
    vectors = await precompute(provider, texts)
    print(
        f"{size:,} entities and {len(queries):,} queries embedded "
        f"in {time.perf_counter() - started:.1f} s",
        flush=True,
    )
    if position == 0:
        await warm_up_loads(run, corpus, vectors)
    labels = (run.label(f"Vec{size}"), run.label(f"Rag{size}"))
    redstring_first = position % 2 == 0
    client, row = await timed_loads(run, corpus, vectors, labels, redstring_first)
    rows = [row]
    print(f"{size:,}: loaded ({row.redstring_s:.1f} s, {row.graphrag_s:.1f} s)", flush=True)
    for repetition in range(1, args.ingest_repeats):
        redstring_first = not redstring_first
        side_tenant = TenantId(uuid.uuid4())
        side = make_corpus(side_tenant, min(size, args.ingest_side), seed=SEED)
        side_labels = (run.label(f"SideVec{repetition}"), run.label(f"SideRag{repetition}"))
        _, row = await timed_loads(run, side, vectors, side_labels, redstring_first)
        rows.append(row)
        await run.remove_tenant(side_tenant)
        await run.remove_labels(lambda label, taken=side_labels: label in taken)
    if args.ingestion_only:
        return SizeResult(size, queries, rows, {})
    systems = {
        "redstring": redstring_search(client, tenant),
        "graphrag": graphrag_search(run, labels[1], vectors),
    }
    await client.warm_up()
    timings = await interleaved(systems, queries, args.warm_up)
    result = SizeResult(size, queries, rows, timings)
    statements = await captured_statements(client, tenant, queries[: args.parts])
    result.parts = statement_parts(run, cypher.vector_label(labels[0]), statements)
    if size == args.graphql_size:
        await client.upsert((), relationships_for(corpus, SEED))
        texts_only = [q.text for q in queries]
        result.graphql = await measure_graphql(args, size, tenant, labels[0], texts_only)
    return result


async def main(args: argparse.Namespace) -> None:
    threadpool_limits(limits=1, user_api="blas")
    began = time.monotonic()
    uri = os.environ.get("NEO4J_URI")
    if not uri:
        raise SystemExit("NEO4J_URI is not set: this bench runs both systems on one Neo4j")
    auth = (os.environ.get("NEO4J_USER", "neo4j"), os.environ["NEO4J_PASSWORD"])
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.graphql_size is None:
        args.graphql_size = sizes[0]
    default = Redstring.in_memory()
    provider = default.embeddings
    run = Neo4jRun(uri, auth, args.peer_hnsw)
    results: list[SizeResult] = []
    try:
        for position, size in enumerate(sizes):
            results.append(await run_size(args, run, provider, position, size))
    finally:
        await run.clean_up()
        await run.close()
        await default.aclose()
    describe = f"{type(provider).__name__}, {provider.dimension} dimensions"
    print("\n".join(report(args, results, describe, uri, time.monotonic() - began)))


# --- tables --------------------------------------------------------------------------------


def verdict(ok: bool) -> str:
    return "met" if ok else "**not met**"


def p50_p95(ms: Sequence[float]) -> str:
    ordered = sorted(ms)
    return f"{percentile(ordered, 0.5):.1f} / {percentile(ordered, 0.95):.1f}"


def ratio_of(rs: Sequence[float], rag: Sequence[float], share: float) -> float:
    return percentile(sorted(rs), share) / percentile(sorted(rag), share)


def found(timings: Timings, picked: Sequence[bool] | None = None) -> str:
    hits = [h for i, h in enumerate(timings.hits) if picked is None or picked[i]]
    return f"{sum(hits) / len(hits):.2f}"


def retrieval_table(results: Sequence[SizeResult]) -> list[str]:
    lines = [
        "| entities | queries | redstring p50 / p95 ms | graphrag p50 / p95 ms | "
        "ratio of p50s | ratio of p95s | per-query ratio median / p95 | "
        "found in best 10: redstring / graphrag |",
        "|---|---|---|---|---|---|---|---|",
    ]
    targets, cpu = [], []
    for r in results:
        rs, rag = r.timings["redstring"], r.timings["graphrag"]
        pairs = sorted(a / b for a, b in zip(rs.ms, rag.ms, strict=True))
        p50, p95 = ratio_of(rs.ms, rag.ms, 0.5), ratio_of(rs.ms, rag.ms, 0.95)
        lines.append(
            f"| {r.size:,} | {len(r.queries):,} | {p50_p95(rs.ms)} | {p50_p95(rag.ms)} | "
            f"{p50:.2f} | {p95:.2f} | {statistics.median(pairs):.2f} / "
            f"{percentile(pairs, 0.95):.2f} | {found(rs)} / {found(rag)}"
            + (f" ({rag.errors} refused)" if rag.errors else "")
            + " |"
        )
        targets.append(
            f"- {r.size:,} entities: redstring / graphrag p50 {p50:.2f}, target <= 1.0: "
            f"{verdict(p50 <= 1.0)}; p95 {p95:.2f}, target <= 1.0: {verdict(p95 <= 1.0)}"
        )
        cpu.append(
            f"{r.size:,}: {statistics.median(rs.cpu_ms):.1f} / {statistics.median(rag.cpu_ms):.1f}"
        )
    return [
        *lines,
        "",
        *targets,
        "",
        "client CPU a call, median ms, redstring / graphrag: " + "; ".join(cpu),
    ]


def kinds_table(results: Sequence[SizeResult]) -> list[str]:
    lines = [
        "| entities | kind | queries | redstring p50 / p95 ms | graphrag p50 / p95 ms | "
        "ratio of p50s | found in best 10: redstring / graphrag |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        rs, rag = r.timings["redstring"], r.timings["graphrag"]
        for kind in QUERY_KINDS:
            picked = [q.kind == kind for q in r.queries]
            rs_ms = [ms for ms, p in zip(rs.ms, picked, strict=True) if p]
            rag_ms = [ms for ms, p in zip(rag.ms, picked, strict=True) if p]
            if not rs_ms:
                continue
            lines.append(
                f"| {r.size:,} | {kind} | {len(rs_ms)} | {p50_p95(rs_ms)} | {p50_p95(rag_ms)} | "
                f"{ratio_of(rs_ms, rag_ms, 0.5):.2f} | {found(rs, picked)} / {found(rag, picked)} |"
            )
    return lines


def parts_table(results: Sequence[SizeResult]) -> list[str]:
    lines = [
        "| entities | statements | " + " | ".join(PARTS) + " |",
        "|---|---|" + "---|" * len(PARTS),
    ]
    for r in results:
        medians = [statistics.median(r.parts[part]) for part in PARTS]
        lines.append(
            f"| {r.size:,} | {len(r.parts[PARTS[0]])} | "
            + " | ".join(f"{ms:.2f}" for ms in medians)
            + " |"
        )
    return lines


def ingest_table(results: Sequence[SizeResult]) -> list[str]:
    lines = [
        "| entities loaded | first | redstring entities/s | graphrag entities/s | ratio |",
        "|---|---|---|---|---|",
    ]
    targets = []
    for r in results:
        for row in r.ingest:
            rs, rag = row.entities / row.redstring_s, row.entities / row.graphrag_s
            lines.append(
                f"| {row.entities:,} | {row.first} | {rs:,.0f} | {rag:,.0f} | {rs / rag:.2f} |"
            )
        total = sum(row.entities for row in r.ingest)
        rs = total / sum(row.redstring_s for row in r.ingest)
        rag = total / sum(row.graphrag_s for row in r.ingest)
        targets.append(
            f"- {r.size:,} entities, all repetitions: redstring {rs:,.0f} / graphrag "
            f"{rag:,.0f} entities/s = {rs / rag:.2f}, target >= 1.0: {verdict(rs >= rag)}"
        )
    return [*lines, "", *targets]


def graphql_table(args: argparse.Namespace, result: GraphQLResult, size: int) -> list[str]:
    lines = [
        "| backend | requests/s | errors | median ms (each round) | p99 ms (each round) |",
        "|---|---|---|---|---|",
    ]
    for backend, figures in result.rounds.items():
        lines.append(
            f"| {backend} | {result.rate(backend):.1f} | {sum(f.errors for f in figures)} | "
            + " / ".join(f"{f.median_ms:.1f}" for f in figures)
            + " | "
            + " / ".join(f"{f.p99_ms:.1f}" for f in figures)
            + " |"
        )
    ratio = result.rate("neo4j") / result.rate("memory")
    return [
        *lines,
        "",
        f"{size:,} entities, {2 * size:,} relationships; {args.clients} clients ({args.load}), "
        f"two rounds of {args.seconds / 2:.0f} s a backend.",
        f"- GraphQL over Neo4j / over memory: {ratio:.2f}, target >= 0.5: {verdict(ratio >= 0.5)}",
    ]


def report(
    args: argparse.Namespace,
    results: Sequence[SizeResult],
    provider: str,
    uri: str,
    seconds: float,
) -> list[str]:
    lines = [
        f"machine: {machine()}; Neo4j at {uri}; run took {seconds / 60:.1f} min",
        f"vectors: redstring's default provider ({provider}), computed once, given to both",
        f"graphrag's vector index: {PEER_HNSW[args.peer_hnsw]}",
        "",
    ]
    if args.ingestion_only:
        return [*lines, "### Ingestion with the same vectors", "", *ingest_table(results)]
    lines += [
        "### Retrieval: redstring HYBRID against graphrag HybridRetriever (naive), k=10, "
        "query vector given",
        "",
        *retrieval_table(results),
        "",
        "By kind of query:",
        "",
        *kinds_table(results),
        "",
        "redstring's candidate statement taken apart (median ms a statement, server and "
        "round trip, each part run alone):",
        "",
        *parts_table(results),
        "",
        "### Ingestion with the same vectors",
        "",
        *ingest_table(results),
    ]
    for r in results:
        if r.graphql is not None:
            lines += [
                "",
                "### GraphQL: retrieve(k: 10) + relationships(first: 10), over Neo4j and memory",
                "",
                *graphql_table(args, r.graphql, r.size),
            ]
    return lines


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="entities, one run a size")
    parser.add_argument("--queries", type=int, default=400, help="timed queries a size")
    parser.add_argument("--warm-up", type=int, default=20, help="untimed queries a size first")
    parser.add_argument(
        "--parts", type=int, default=60, help="queries whose statement is taken apart"
    )
    parser.add_argument("--ingest-repeats", type=int, default=2, help="timed loads a size")
    parser.add_argument(
        "--ingest-side", type=int, default=20_000, help="entities of the loads after the first"
    )
    parser.add_argument(
        "--peer-hnsw",
        choices=sorted(PEER_HNSW),
        default="server",
        help="graphrag's vector index: the server's HNSW settings or redstring's",
    )
    parser.add_argument(
        "--ingestion-only",
        action="store_true",
        help="the loads alone: no retrieval, statement parts or GraphQL",
    )
    parser.add_argument("--graphql-size", type=int, help="the size GraphQL runs at (the first)")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20.0, help="GraphQL load a backend")
    parser.add_argument(
        "--load", choices=["wrk", "httpx"], default="wrk" if shutil.which("wrk") else "httpx"
    )
    parser.add_argument("--serve", choices=["memory", "neo4j"], help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--tenant", help=argparse.SUPPRESS)
    parser.add_argument("--label", help=argparse.SUPPRESS)
    arguments = parse_args(
        parser,
        sizes="300",
        queries=12,
        warm_up=2,
        parts=4,
        ingest_side=100,
        clients=2,
        seconds=2.0,
    )
    if arguments.serve:
        serve(
            arguments.serve,
            arguments.port,
            int(arguments.sizes),
            TenantId(uuid.UUID(arguments.tenant)),
            arguments.label,
        )
    else:
        with schema_as_found():
            asyncio.run(main(arguments))
