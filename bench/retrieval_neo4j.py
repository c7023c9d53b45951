"""Benchmark: retrieval and ingestion over the Neo4j adapters (run by hand, not a test).

    make neo4j-start && set -a && . .cache/neo4j/env && set +a
    .venv/bin/python -m bench.retrieval_neo4j [--size 100000] [--repeats 50] [--tenant UUID]
                                              [--breakdown] [--warmup 20000] [--reference]
                                              [--misspelt 300] [--keep] [--tiny]

One fresh tenant of `--size` synthetic entities, dimension 384, hashing
provider. Vectors are computed first, so ingestion is timed on the stores
alone. `--warmup` entities go into a tenant of their own first, untimed: on a
fresh server the JVM's JIT compilers took about half the server's CPU during
the first 20,000 entities (docs/neo4j.md), which the timed load should not
measure. Then, in the same run: the bare vector-index query for a vector
(one Cypher SEARCH round trip) and hybrid `retrieve` k=10 for the same query,
taken in turn, and `relationships_of` for 10 entities (one round trip). Ingestion is
timed on the whole corpus, the graph store then the vector store; then a fifth
of `--size` is loaded into new tenants four times, alternating that order with
overlapped batches (one batch's vectors beside the next batch's entities, as
`redstring load` does), so both are measured in the same state of the server.
The warm-up and those small loads keep their vectors under another label, so
the timed queries search an index of the `--size` entities alone.
Targets (issue 3):
hybrid median <= 1.5x the bare index query; ingestion >= 5,000 entities/s.

`--breakdown` also times each part of a hybrid `retrieve` alone (each
channel's store call, both in the one read a retrieve makes
(`find_candidates`), a `get_entities` call of 10 ids, and `retrieve` in each
mode), taken in turn, with the median CPU time of this process (the
client's share; the server's shows only in the wall time).

`--reference` also times, in turn with the bare query and hybrid `retrieve`,
hybrid search done inside Neo4j in one statement: BM25 over a full-text index
of the names beside the vector index (`bench/neo4j_reference.py`; the index is
created for the run and dropped after it), and, for both it and hybrid
`retrieve`, how often `--misspelt` names with one letter dropped find the
entity named first and in the best 10. A yardstick for the ratio, not redstring's lexical
channel.

`--tenant` reuses a tenant an earlier run of the same `--size` loaded into
the same server and kept (`--keep`; the run prints its tenant): ingestion is
skipped, not timed, and the corpus is rebuilt deterministically for the
queries.

At its end, after the timings and whether or not they succeeded, the run
deletes what it wrote (bench/neo4j_cleanup.py): the warm-up's and the small
loads' tenants, the tenant it measured (a reused one too) unless `--keep`
is given, and the schema of its vector labels once no node is left under the
label. Those labels are the run's own: the measured tenant's vectors are under
`BenchVector384_` and the tenant's first 8 hex digits (a `--tenant` run finds
them there), the side loads' under `BenchSideVector384_` and a run id.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time
import uuid
from collections.abc import Awaitable, Callable

import neo4j
import numpy as np

from bench import neo4j_reference
from bench.corpus import make_corpus
from bench.measure import (
    alternating_medians,
    alternating_medians_ms,
    machine,
    median_ms,
    peak_rss_mib,
)
from bench.neo4j_cleanup import Written, schema_as_found
from bench.options import parse_args
from redstring import (
    Entity,
    HashingEmbeddingProvider,
    Relationship,
    RelationshipId,
    RetrievalMode,
    Retriever,
    TenantId,
    VectorRecord,
)
from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jVectorStore, connect_driver, cypher
from redstring.adapters.neo4j.connection import takes_packed_vectors
from redstring.adapters.neo4j.records import query_vector
from redstring.composition.retrieval import DEFAULT_OVERFETCH
from redstring.domain.blocking import (
    MAX_BLOCK_SIZE,
    MAX_PREFIX_SIZE,
    query_blocking_keys,
    query_prefix,
)

DIMENSION = 384


def vector_label(tenant: TenantId) -> str:
    """The label of the measured tenant's vectors (and so an index of their own)."""
    return f"BenchVector384_{tenant.hex[:8]}"


# The warm-up and the alternated small loads write their vectors under a label (and
# so a vector index) of their own: a search walks every segment of its index, and
# their many small segments would slow the timed queries on the 100,000 entities.
SIDE_LABEL = f"BenchSideVector384_{uuid.uuid4().hex[:8]}"


async def main(
    size: int,
    repeats: int,
    reuse: TenantId | None,
    breakdown: bool,
    warmup: int,
    reference: bool,
    misspelt_count: int,
    keep: bool,
) -> None:
    """The run, then the removal of what it wrote (all but its tenant with `keep`)."""
    auth = (os.environ["NEO4J_USER"], os.environ["NEO4J_PASSWORD"])
    tenant = reuse or TenantId(uuid.uuid4())
    async with (
        connect_driver(os.environ["NEO4J_URI"], auth) as driver,
        Written(driver, vector_labels=(vector_label(tenant), SIDE_LABEL)) as written,
    ):
        if not keep:
            written.tenant(tenant)
        await measure(
            driver,
            written,
            size,
            repeats,
            tenant,
            reuse is not None,
            breakdown,
            warmup,
            reference,
            misspelt_count,
        )


async def measure(
    driver: neo4j.AsyncDriver,
    written: Written,
    size: int,
    repeats: int,
    tenant: TenantId,
    reused: bool,
    breakdown: bool,
    warmup: int,
    reference: bool,
    misspelt_count: int,
) -> None:
    graph = Neo4jGraphStore(driver)
    label = vector_label(tenant)
    vectors = Neo4jVectorStore(driver, DIMENSION, label=label)
    side = Neo4jVectorStore(driver, DIMENSION, label=SIDE_LABEL)
    await graph.ensure_schema()
    await vectors.ensure_schema()
    await side.ensure_schema()
    embeddings = HashingEmbeddingProvider(DIMENSION)
    corpus = make_corpus(tenant, size, seed=3)
    rng = random.Random(4)
    relationships = [
        Relationship(
            id=RelationshipId(uuid.uuid4()),
            tenant_id=tenant,
            source_entity_id=a.id,
            target_entity_id=b.id,
            relationship_type=rng.choice(["PARTNER_OF", "SUPPLIES", "LOCATED_IN"]),
        )
        for a, b in (rng.sample(corpus, 2) for _ in range(size // 5))
    ]
    print(f"machine: {machine()}; Neo4j at {os.environ['NEO4J_URI']}")
    print(f"corpus: {size:,} entities, {len(relationships):,} relationships, dimension {DIMENSION}")
    print(f"tenant: {tenant}")
    if not reused:
        if warmup:
            rate = await load_small(written, graph, side, embeddings, warmup, overlap=False)
            print(f"warm-up, not counted: {warmup:,} entities at {rate:,.0f} entities/s")
        await ingest(graph, vectors, embeddings, corpus, relationships)
        await compare_overlap(written, graph, side, embeddings, size // 5)
    async with driver.session() as session:
        await (await session.run("CALL db.awaitIndexes(600)")).consume()

    retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
    queries = [e.name for e in rng.sample(corpus, 20)]
    query_vectors = await embeddings.embed_query(queries)
    bare_statement = cypher.search_vectors_in_index(label, typed=False)
    packed = await takes_packed_vectors(driver)

    def as_sent(vectors: list[list[float]]) -> list[object]:
        """Query vectors as the vector store sends them: packed where the server takes it."""
        return [query_vector(np.asarray(v, dtype=np.float64), packed=packed) for v in vectors]

    bare_vectors = as_sent(query_vectors)
    # One cursor each: both walk the same queries in the same order.
    bare_cursor, hybrid_cursor = iter(range(10**9)), iter(range(10**9))

    async def bare() -> object:
        i = next(bare_cursor) % len(queries)
        async with driver.session() as session:
            result = await session.run(
                bare_statement,
                vector=bare_vectors[i],
                tenant_id=str(tenant),
                k=10,
                index_k=10,
                types=None,
            )
            return [record async for record in result]

    async def hybrid() -> object:
        return await retriever.retrieve(queries[next(hybrid_cursor) % len(queries)], tenant, k=10)

    hubs = [r.source_entity_id for r in relationships[:10]]

    async def edges() -> object:
        return await graph.relationships_of(hubs, tenant)

    runs: dict[str, Callable[[], Awaitable[object]]] = {"bare": bare, "hybrid": hybrid}
    if reference:
        seconds = await neo4j_reference.create_index(driver)
        print(f"reference: full-text index of the names built in {seconds:.1f} s")
        runs["reference"] = neo4j_reference.search(driver, label, tenant, queries, bare_vectors)
    try:
        medians = await alternating_medians_ms(runs, repeats)
        if reference:
            misspelt = neo4j_reference.misspelt(corpus, misspelt_count, seed=9)
            embedded = await embeddings.embed_query([query for query, _ in misspelt])
            quality = await neo4j_reference.compare_quality(
                driver, label, retriever, tenant, misspelt, as_sent(embedded)
            )
    finally:
        if reference:
            await neo4j_reference.drop_index(driver)
    bare_ms, hybrid_ms = medians["bare"], medians["hybrid"]
    edges_ms = await median_ms(edges, repeats)

    print(f"bare vector-index query k=10 median: {bare_ms:.2f} ms")
    print(f"hybrid retrieve k=10 median: {hybrid_ms:.2f} ms")
    print(f"hybrid / bare index query: {hybrid_ms / bare_ms:.2f}x")
    if reference:
        reference_ms = medians["reference"]
        print(
            f"reference, hybrid inside Neo4j (BM25 + vector, one statement) k=10 median: "
            f"{reference_ms:.2f} ms, {reference_ms / bare_ms:.2f}x the bare query"
        )
        print(f"{len(misspelt)} names with one letter dropped, the entity named:")
        for name, (first, top) in quality.items():
            print(f"  {name}: first {first:.1%}, in the best 10 {top:.1%}")
    print(f"relationships_of 10 entities (one round trip) median: {edges_ms:.2f} ms")
    if breakdown:
        await print_breakdown(retriever, graph, vectors, tenant, queries, query_vectors, repeats)
    print(f"client peak RSS: {peak_rss_mib():.0f} MiB")


async def print_breakdown(
    retriever: Retriever,
    graph: Neo4jGraphStore,
    vectors: Neo4jVectorStore,
    tenant: TenantId,
    queries: list[str],
    query_vectors: list[list[float]],
    repeats: int,
) -> None:
    """Each part of a hybrid `retrieve`, timed alone, taken in turn with the whole."""
    fetch = 10 * DEFAULT_OVERFETCH
    cursors = {
        name: iter(range(10**9)) for name in ("semantic", "lexical", "joint", "hybrid", "s", "l")
    }

    def nth(name: str) -> int:
        return next(cursors[name]) % len(queries)

    async def search() -> object:
        return await vectors.search(query_vectors[nth("semantic")], tenant, k=fetch)

    async def candidates() -> object:
        query = queries[nth("lexical")]
        prefix = query_prefix(query)
        return await graph.find_lexical_candidates(
            query_blocking_keys(query),
            tenant,
            prefixes=() if prefix is None else (prefix,),
            limit_per_key=MAX_BLOCK_SIZE,
            limit_per_prefix=MAX_PREFIX_SIZE,
        )

    async def both() -> object:
        i = nth("joint")
        query = queries[i]
        prefix = query_prefix(query)
        return await retriever.candidates.find_candidates(
            tenant,
            vector=query_vectors[i],
            k=fetch,
            keys=query_blocking_keys(query),
            prefixes=() if prefix is None else (prefix,),
            limit_per_key=MAX_BLOCK_SIZE,
            limit_per_prefix=MAX_PREFIX_SIZE,
        )

    some = await retriever.retrieve(queries[0], tenant, k=10)
    ids = [m.entity.id for m in some.matches]

    async def fetch_ten() -> object:
        return await graph.get_entities(ids, tenant)

    async def whole() -> object:
        return await retriever.retrieve(queries[nth("hybrid")], tenant, k=10)

    async def semantic_only() -> object:
        return await retriever.retrieve(
            queries[nth("s")], tenant, k=10, mode=RetrievalMode.SEMANTIC
        )

    async def lexical_only() -> object:
        return await retriever.retrieve(queries[nth("l")], tenant, k=10, mode=RetrievalMode.LEXICAL)

    runs: dict[str, Callable[[], Awaitable[object]]] = {
        f"vector store search k={fetch} (the semantic channel's store call)": search,
        "find_lexical_candidates (the lexical channel's store call)": candidates,
        f"find_candidates, both channels in one read ({type(retriever.candidates).__name__})": both,
        "get_entities of 10 ids (after both channels)": fetch_ten,
        "retrieve, semantic mode": semantic_only,
        "retrieve, lexical mode": lexical_only,
        "retrieve, hybrid": whole,
    }
    for name, medians in (await alternating_medians(runs, repeats)).items():
        print(f"  {name}: median {medians.wall_ms:.2f} ms, client CPU {medians.cpu_ms:.2f} ms")


async def precomputed_vectors(
    embeddings: HashingEmbeddingProvider, corpus: list[Entity]
) -> list[VectorRecord]:
    """The corpus's vector records, embedded before any timing starts."""
    embedded = await embeddings.embed_documents([e.embedding_text() for e in corpus])
    return [
        VectorRecord(
            entity_id=e.id, tenant_id=e.tenant_id, vector=tuple(v), entity_type=e.entity_type
        )
        for e, v in zip(corpus, embedded, strict=True)
    ]


async def ingest(
    graph: Neo4jGraphStore,
    vectors: Neo4jVectorStore,
    embeddings: HashingEmbeddingProvider,
    corpus: list[Entity],
    relationships: list[Relationship],
) -> None:
    """Load the corpus, timing the two stores' upserts with precomputed vectors."""
    records = await precomputed_vectors(embeddings, corpus)
    size = len(corpus)
    start = time.perf_counter()
    await graph.upsert_entities(corpus)
    graph_seconds = time.perf_counter() - start
    start = time.perf_counter()
    await vectors.upsert(records)
    vector_seconds = time.perf_counter() - start
    both = graph_seconds + vector_seconds
    print(f"graph upsert: {size / graph_seconds:,.0f} entities/s ({graph_seconds:.1f} s)")
    print(f"vector upsert: {size / vector_seconds:,.0f} records/s ({vector_seconds:.1f} s)")
    print(f"ingestion with precomputed vectors: {size / both:,.0f} entities/s ({both:.1f} s)")
    await graph.upsert_relationships(relationships)


async def load_small(
    written: Written,
    graph: Neo4jGraphStore,
    vectors: Neo4jVectorStore,
    embeddings: HashingEmbeddingProvider,
    size: int,
    overlap: bool,
    batch: int = 1000,
) -> float:
    """Entities/s loading `size` entities into a tenant of their own. With `overlap`, as
    `redstring load` does: each batch's vectors beside the next batch's entities (never
    before their own); without, all entities then all vectors."""
    corpus = make_corpus(written.tenant(TenantId(uuid.uuid4())), size, seed=5)
    records = await precomputed_vectors(embeddings, corpus)
    start = time.perf_counter()
    if overlap:
        await graph.upsert_entities(corpus[:batch])
        for low in range(batch, size + batch, batch):
            await asyncio.gather(
                graph.upsert_entities(corpus[low : low + batch]),
                vectors.upsert(records[low - batch : low]),
            )
    else:
        await graph.upsert_entities(corpus)
        await vectors.upsert(records)
    return size / (time.perf_counter() - start)


async def compare_overlap(
    written: Written,
    graph: Neo4jGraphStore,
    vectors: Neo4jVectorStore,
    embeddings: HashingEmbeddingProvider,
    size: int,
) -> None:
    """Stores one after the other against overlapped batches, alternated on the same server."""
    rates: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(2):
        for overlap in (False, True):
            rates[overlap].append(
                await load_small(written, graph, vectors, embeddings, size, overlap)
            )
    sequential, overlapped = (" / ".join(f"{r:,.0f}" for r in rates[o]) for o in (False, True))
    print(
        f"{size:,} entities a tenant, alternated: stores one after the other {sequential}; "
        f"batch n's vectors beside batch n+1's entities {overlapped} entities/s"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--tenant", type=uuid.UUID, help="reuse this already-loaded tenant")
    parser.add_argument(
        "--breakdown", action="store_true", help="also time each part of a hybrid retrieve"
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=20_000,
        help="entities loaded into a tenant of their own before the timed load (0: none)",
    )
    parser.add_argument(
        "--reference",
        action="store_true",
        help="also time hybrid search done inside Neo4j (BM25 + vector) as a yardstick",
    )
    parser.add_argument(
        "--misspelt", type=int, default=300, help="misspelt names for --reference's quality"
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the run's tenant in the server for a later run's --tenant",
    )
    args = parse_args(parser, size=500, repeats=3, warmup=100, misspelt=20)
    tenant = None if args.tenant is None else TenantId(args.tenant)
    with schema_as_found():
        asyncio.run(
            main(
                args.size,
                args.repeats,
                tenant,
                args.breakdown,
                args.warmup,
                args.reference,
                args.misspelt,
                args.keep,
            )
        )
