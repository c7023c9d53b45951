"""Benchmark: what bounding oversized blocks costs and saves (run by hand).

    .venv/bin/python -m bench.blocking [--size 100000] [--repeats 15] [--tiny]

For one-word queries of common words and for full names, compares the
lexical channel reading whole blocks against reading at most
`MAX_BLOCK_SIZE` per key: candidates read, median latency, and how much of
the uncapped top 10 the capped channel keeps. Figures go to docs/adr/0003.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import uuid

from bench.corpus import make_corpus
from bench.measure import machine, median_ms
from bench.options import parse_args
from redstring import (
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    RetrievalMode,
    Retriever,
    TenantId,
)
from redstring.domain.blocking import MAX_BLOCK_SIZE, query_blocking_keys


async def main(size: int, repeats: int) -> None:
    tenant = TenantId(uuid.UUID(int=1))
    graph = InMemoryGraphStore()
    corpus = make_corpus(tenant, size, seed=1)
    await graph.upsert_entities(corpus)
    embeddings = HashingEmbeddingProvider(8)
    vectors = InMemoryVectorStore(8)
    capped = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
    uncapped = Retriever(embeddings=embeddings, vectors=vectors, graph=graph, max_block_size=None)

    rng = random.Random(9)
    groups = {
        "common word": ["Holdings", "Group", "Industries", "Labs", "Valley", "Acme"],
        "full name": [e.name for e in rng.sample(corpus, 30)],
    }
    print(f"machine: {machine()}")
    print(f"corpus: {size:,} entities in one tenant; MAX_BLOCK_SIZE = {MAX_BLOCK_SIZE}")
    for label, queries in groups.items():
        read_all, read_capped, kept, ms_all, ms_capped = [], [], [], [], []
        first_all, first_capped = [], []
        for query in queries:
            keys = query_blocking_keys(query)
            read_all.append(len(await graph.find_lexical_candidates(keys, tenant)))
            capped_read = await graph.find_lexical_candidates(
                keys, tenant, limit_per_key=MAX_BLOCK_SIZE
            )
            read_capped.append(len(capped_read))
            full = await uncapped.retrieve(query, tenant, k=10, mode=RetrievalMode.LEXICAL)
            part = await capped.retrieve(query, tenant, k=10, mode=RetrievalMode.LEXICAL)
            full_ids = {m.entity.id for m in full.matches}
            first_all.append(bool(full.matches) and full.matches[0].entity.name == query)
            first_capped.append(bool(part.matches) and part.matches[0].entity.name == query)
            kept.append(len(full_ids & {m.entity.id for m in part.matches}) / max(1, len(full_ids)))
            ms_all.append(
                await median_ms(
                    lambda q=query: uncapped.retrieve(q, tenant, k=10, mode=RetrievalMode.LEXICAL),
                    repeats,
                )
            )
            ms_capped.append(
                await median_ms(
                    lambda q=query: capped.retrieve(q, tenant, k=10, mode=RetrievalMode.LEXICAL),
                    repeats,
                )
            )
        print(
            f"{label:<12} candidates read median {statistics.median(read_all):>7,.0f} -> "
            f"{statistics.median(read_capped):>5,.0f}; lexical median "
            f"{statistics.median(ms_all):6.1f} ms -> {statistics.median(ms_capped):5.1f} ms; "
            f"uncapped top-10 kept {statistics.mean(kept):.0%}"
        )
        if label == "full name":
            print(
                f"{'':<12} the named entity ranked first: uncapped "
                f"{statistics.mean(first_all):.0%}, capped {statistics.mean(first_capped):.0%}"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parse_args(parser, size=2000, repeats=2)
    asyncio.run(main(args.size, args.repeats))
