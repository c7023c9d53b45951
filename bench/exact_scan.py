"""Benchmark: a small tenant's vector search, by exact scan against through the index.

    set -a && . .cache/neo4j/env && set +a
    .venv/bin/python -m bench.exact_scan [--background 10000] [--sizes 50,100,200,500,1000,2000]
                                         [--queries 40] [--tiny]

`Neo4jVectorStore` scans a filter passing at most `exact_below` records with
exact cosine in Cypher, and asks the vector index (filters inside it) above
that. This measures where the scan stops paying: one label of the run's own
holds a tenant of `--background` entities (the others a shared index holds);
then for each of `--sizes`, a fresh tenant of that many `bench.corpus`
entities, embedded by the default provider, is searched for `--queries` of
its names with one typo (or whole, when none has a word of five letters) (k=38, what the semantic channel asks for k=10) by a
store that always scans (`exact_below` above the size) and by one that always
asks the index (`exact_below=0`), in turn. Reported: the median ms of each
and how many of the scan's 38 the index also returned. Everything the run
wrote is removed at its end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import time
import uuid

from bench.corpus import make_corpus
from bench.measure import machine
from bench.neo4j_cleanup import schema_as_found
from bench.options import parse_args
from bench.peer import Neo4jRun, precompute
from bench.quality_sets import typo_in_name
from redstring import Redstring, TenantId
from redstring.adapters.neo4j import Neo4jVectorStore

K = 38


async def load(run: Neo4jRun, client: Redstring, tenant: TenantId, size: int, seed: int) -> None:
    corpus = make_corpus(tenant, size, seed=seed)
    run.tenants[tenant] = [e.id for e in corpus]
    await client.upsert(corpus)
    await run.await_indexes()


async def main(args: argparse.Namespace) -> None:
    auth = (os.environ.get("NEO4J_USER", "neo4j"), os.environ["NEO4J_PASSWORD"])
    run = Neo4jRun(os.environ["NEO4J_URI"], auth)
    provider = Redstring.in_memory().embeddings
    label = run.label("Scan")
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = random.Random(5)
    print(f"{machine()}; background tenant {args.background:,}, k={K}, {args.queries} queries")
    print("| tenant | exact scan ms | index ms | index found of the scan's 38 |")
    print("|---|---|---|---|")
    try:
        await run.graph.ensure_schema()
        background = TenantId(uuid.uuid4())
        corpus = make_corpus(background, args.background, seed=1)
        vectors = await precompute(provider, [e.embedding_text() for e in corpus])
        store = Neo4jVectorStore(run.driver, vectors.dimension, label=label)
        await store.ensure_schema()
        await load(
            run,
            Redstring(embeddings=vectors, vectors=store, graph=run.graph),
            background,
            args.background,
            1,
        )
        for size in sizes:
            tenant = TenantId(uuid.uuid4())
            entities = make_corpus(tenant, size, seed=size)
            names = [rng.choice(entities).name for _ in range(args.queries)]
            texts = [typo_in_name(name, rng) or name for name in names]
            vectors = await precompute(provider, [e.embedding_text() for e in entities] + texts)
            writer = Redstring(embeddings=vectors, vectors=store, graph=run.graph)
            await load(run, writer, tenant, size, size)
            stores = {
                "exact": Neo4jVectorStore(
                    run.driver, vectors.dimension, label=label, exact_below=size
                ),
                "index": Neo4jVectorStore(
                    run.driver, vectors.dimension, label=label, exact_below=0
                ),
            }
            ms: dict[str, list[float]] = {name: [] for name in stores}
            found: dict[str, list[set[uuid.UUID]]] = {name: [] for name in stores}
            for text in texts:
                [vector] = vectors.vectors([text])
                for name, searcher in stores.items():
                    await searcher.search(vector, tenant, k=K)  # untimed: plans, caches
                    started = time.perf_counter()
                    matches = await searcher.search(vector, tenant, k=K)
                    ms[name].append((time.perf_counter() - started) * 1000)
                    found[name].append({m.entity_id for m in matches})
            shared = statistics.mean(
                len(a & b) / max(1, len(a))
                for a, b in zip(found["exact"], found["index"], strict=True)
            )
            print(
                f"| {size:,} | {statistics.median(ms['exact']):.2f} | "
                f"{statistics.median(ms['index']):.2f} | {shared:.3f} |",
                flush=True,
            )
            await run.remove_tenant(tenant)
    finally:
        await run.clean_up()
        await run.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--background", type=int, default=10_000)
    parser.add_argument("--sizes", default="50,100,200,500,1000,2000")
    parser.add_argument("--queries", type=int, default=40)
    arguments = parse_args(parser, background=200, sizes="20,60", queries=3)
    with schema_as_found():
        asyncio.run(main(arguments))
