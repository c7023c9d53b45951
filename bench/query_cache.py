"""Benchmark: retrieval with and without the query-embedding cache (run by hand, not a test).

    .venv/bin/python -m bench.query_cache [--size 20000] [--retrieves 400] [--latency-ms 10] [--tiny]

One tenant of `--size` entities, dimension 384, in-memory stores. A UI-like
workload: `--retrieves` hybrid k=10 retrieves drawn (seeded, Zipf-like) from
40 distinct queries, so a few queries repeat often and some only once. The
same workload runs without the cache and with `CachedQueryEmbeddings`
(starting empty; its entries are kept per tenant, here all the one tenant's),
the two interleaved query by query so that other load on the machine falls on
both alike, for the hashing provider as it is (local, cheap) and behind a simulated round trip of `--latency-ms` (a remote model). Prints the
median retrieve and the query-embedding median per row, the ratios, and the
cache's hit rate.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from functools import partial

from bench.corpus import make_corpus
from bench.measure import machine
from bench.options import parse_args
from redstring import (
    EmbeddingProvider,
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    Retriever,
    TenantId,
    build_graph,
)
from redstring.composition.query_cache import CachedQueryEmbeddings

DIMENSION = 384
DISTINCT_QUERIES = 40


class RemoteLike:
    """The hashing provider behind a fixed round trip, standing for a model server."""

    def __init__(self, provider: EmbeddingProvider, latency_s: float) -> None:
        self._provider = provider
        self._latency_s = latency_s

    @property
    def dimension(self) -> int:
        return self._provider.dimension

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._provider.embed_documents(texts)

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        await asyncio.sleep(self._latency_s)
        return await self._provider.embed_query(texts)


def workload(names: list[str], retrieves: int) -> list[str]:
    """`retrieves` queries over `DISTINCT_QUERIES` distinct ones, the i-th weighted 1/(i+1)."""
    rng = random.Random(7)
    distinct = [*rng.sample(names, DISTINCT_QUERIES - 2), "ACME Corporation", "Globex"]
    weights = [1 / (rank + 1) for rank in range(len(distinct))]
    return rng.choices(distinct, weights=weights, k=retrieves)


def one_query(embeddings: EmbeddingProvider) -> Callable[[str], Awaitable[object]]:
    """`embeddings.embed_query` of a single text."""
    return lambda query: embeddings.embed_query([query])


async def paired_medians_ms(
    plain: Callable[[str], Awaitable[object]],
    cached: Callable[[str], Awaitable[object]],
    queries: list[str],
) -> tuple[float, float]:
    """Median milliseconds of `plain(q)` and of `cached(q)` over `queries`.

    The two run back to back for each query, first one then the other in
    turn, so load from elsewhere on the machine falls on both alike.
    """
    samples: dict[bool, list[float]] = {False: [], True: []}
    for number, query in enumerate(queries):
        order = (False, True) if number % 2 else (True, False)
        for use_cache in order:
            run = cached if use_cache else plain
            start = time.perf_counter()
            await run(query)
            samples[use_cache].append((time.perf_counter() - start) * 1000)
    return statistics.median(samples[False]), statistics.median(samples[True])


async def main(size: int, retrieves: int, latency_ms: float) -> None:
    tenant = TenantId(uuid.UUID(int=1))
    hashing = HashingEmbeddingProvider(DIMENSION)
    vectors, graph = InMemoryVectorStore(DIMENSION), InMemoryGraphStore()
    corpus = make_corpus(tenant, size, seed=1)
    await build_graph(corpus, embeddings=hashing, vectors=vectors, graph=graph)
    queries = workload([e.name for e in corpus], retrieves)

    print(f"machine: {machine()}")
    print(
        f"corpus: {size:,} entities, dimension {DIMENSION}; workload: {retrieves} hybrid k=10 "
        f"retrieves over {len(set(queries))} distinct queries"
    )
    providers: list[tuple[str, EmbeddingProvider]] = [
        ("hashing (local)", hashing),
        (f"hashing + {latency_ms:g} ms round trip", RemoteLike(hashing, latency_ms / 1000)),
    ]
    for label, provider in providers:
        cache = CachedQueryEmbeddings(provider)
        plain = Retriever(embeddings=provider, vectors=vectors, graph=graph)
        cached = Retriever(embeddings=cache, vectors=vectors, graph=graph)
        plain_retrieve, cached_retrieve = await paired_medians_ms(
            partial(plain.retrieve, tenant_id=tenant, k=10),
            partial(cached.retrieve, tenant_id=tenant, k=10),
            queries,
        )
        hit_rate, cached_texts = cache.hit_rate, len(cache)
        plain_embed, cached_embed = await paired_medians_ms(
            one_query(provider), one_query(cache.for_tenant(tenant)), queries
        )
        print(f"{label}:")
        print(
            f"  retrieve median: {plain_retrieve:.3f} ms uncached, {cached_retrieve:.3f} ms "
            f"cached ({plain_retrieve / cached_retrieve:.2f}x)"
        )
        print(
            f"  embed_query median: {plain_embed:.4f} ms uncached, {cached_embed:.4f} ms cached "
            f"({plain_embed / cached_embed:.1f}x)"
        )
        print(
            f"  cache hit rate over the retrieves (cold start): {hit_rate:.1%}, "
            f"{cached_texts} texts cached"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--retrieves", type=int, default=400)
    parser.add_argument("--latency-ms", type=float, default=10.0)
    args = parse_args(parser, size=1000, retrieves=40, latency_ms=1.0)
    asyncio.run(main(args.size, args.retrieves, args.latency_ms))
