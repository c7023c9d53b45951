"""Benchmark: retrieval over the in-memory stores (run by hand, not a test).

    .venv/bin/python -m bench.retrieval_memory [--size 100000] [--repeats 50] [--tiny]

Two tenants of `--size` entities each, dimension 384, hashing provider.
Prints build time, hybrid/semantic/lexical medians, the semantic channel
against a bare numpy matmul + argpartition over the same vectors (same run),
peak RSS with both tenants loaded (read before the bare matrix is built), and
type-ahead (hybrid, a name's first 4 letters) with and without an entity of
new keys upserted (untimed) before each query. Targets (issue 2): hybrid k=10
median <= 25 ms; semantic <= 1.5x bare numpy; build_graph of 100,000
entities <= 20 s; type-ahead between writes <= 1.5x type-ahead alone.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
import uuid

import numpy as np
from numpy.typing import NDArray

from bench.corpus import make_corpus
from bench.measure import machine, median_ms, peak_rss_mib
from bench.options import parse_args
from redstring import (
    Entity,
    HashingEmbeddingProvider,
    Redstring,
    RetrievalMode,
    TenantId,
)

DIMENSION = 384


def unit_rows(vectors: list[list[float]]) -> NDArray[np.float32]:
    """The vectors scaled to unit length, as the rows of one float32 matrix."""
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


async def main(size: int, repeats: int) -> None:
    tenant_a = TenantId(uuid.UUID(int=1))
    tenant_b = TenantId(uuid.UUID(int=2))
    rs = Redstring.in_memory(HashingEmbeddingProvider(DIMENSION))
    embeddings, vectors = rs.embeddings, rs.vectors

    corpus_a = make_corpus(tenant_a, size, seed=1)
    corpus_b = make_corpus(tenant_b, size, seed=2)
    start = time.perf_counter()
    await rs.upsert(corpus_a)  # build_graph
    build_seconds = time.perf_counter() - start
    await rs.upsert(corpus_b)
    rng = random.Random(5)
    queries = [e.name for e in rng.sample(corpus_a, 20)] + ["ACME Corporation", "Globex"]
    cursor = iter(range(10**9))

    def next_query() -> str:
        return queries[next(cursor) % len(queries)]

    results = {}
    for mode in RetrievalMode:
        results[mode] = await median_ms(
            lambda mode=mode: rs.retrieve(next_query(), tenant_a, k=10, mode=mode), repeats
        )

    loaded_rss = peak_rss_mib()
    typed = [q[:4] for q in queries]

    async def type_ahead() -> object:
        return await rs.retrieve(typed[next(cursor) % len(typed)], tenant_a, k=10)

    alone_ms = await median_ms(type_ahead, repeats)
    between: list[float] = []
    for i in range(repeats):
        # A name no other has, so that its keys are new ones.
        await rs.upsert([Entity.create(tenant_a, f"Xq{i:04d} Vantrel{rng.random()}", "company")])
        start = time.perf_counter()
        await type_ahead()
        between.append((time.perf_counter() - start) * 1000)
    between_ms = sorted(between)[len(between) // 2]
    # The semantic channel alone, against the bare numpy work over the same vectors:
    # tenant A's unit vectors, one row each, as a hand-written search would hold them.
    [query_vector] = await embeddings.embed_query(["Globex Kamira Holdings"])
    matrix = unit_rows(await embeddings.embed_documents([e.embedding_text() for e in corpus_a]))
    q32 = np.asarray(query_vector, dtype=np.float32)

    async def bare() -> object:
        scores = matrix @ q32
        top = np.argpartition(-scores, 30)[:30]
        return top[np.argsort(-scores[top])]

    async def channel() -> object:
        return await vectors.search(query_vector, tenant_a, k=30)

    bare_ms = await median_ms(bare, repeats)
    channel_ms = await median_ms(channel, repeats)

    print(f"machine: {machine()}")
    print(f"corpus: 2 tenants x {size:,} entities, dimension {DIMENSION}")
    print(f"build_graph of {size:,} entities: {build_seconds:.1f} s")
    for mode, ms in results.items():
        print(f"retrieve k=10 {mode.value:<8} median: {ms:.2f} ms")
    print(f"vector search k=30 median: {channel_ms:.2f} ms")
    print(f"bare numpy matmul+argpartition median: {bare_ms:.2f} ms")
    print(f"semantic channel / bare numpy: {channel_ms / bare_ms:.2f}x")
    print(f"peak RSS (both tenants loaded): {loaded_rss:.0f} MiB")
    print(
        f"type-ahead median: {alone_ms:.2f} ms alone, {between_ms:.2f} ms after a write: "
        f"{between_ms / alone_ms:.2f}x"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=50)
    args = parse_args(parser, size=500, repeats=3)
    asyncio.run(main(args.size, args.repeats))
