"""Benchmark: ingestion with an embedding provider that takes time to answer (by hand).

    make neo4j-start && set -a && . .cache/neo4j/env && set +a
    .venv/bin/python -m bench.ingest_latency [--entities 10000] [--latency-ms 150]
                                             [--batch-size 1000] [--no-neo4j] [--tiny]

A model server answers a batch in tens to hundreds of milliseconds. This
runs `composition.ingest` in process over the hashing provider (dimension
384) with `--latency-ms` added to each `embed_documents` call, into a fresh
tenant of each backend, and prints the wall time. While one batch's vectors
and relationships are written, the next batch is embedded and its entities
written, so the provider's wait overlaps the writes of the batch before.
The Neo4j tenant is deleted after its timing, whether or not the load
succeeded (bench/neo4j_cleanup.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
import uuid
from collections.abc import Sequence

from bench.corpus import make_corpus
from bench.measure import machine
from bench.options import parse_args
from redstring import (
    Entity,
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    TenantId,
)
from redstring.composition.client import Redstring
from redstring.composition.ingest import ingest

DIMENSION = 384


class SlowProvider(HashingEmbeddingProvider):
    """The hashing provider, answering each batch of documents after `latency` seconds."""

    def __init__(self, dimension: int, latency: float) -> None:
        super().__init__(dimension)
        self.latency = latency

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        await asyncio.sleep(self.latency)
        return await super().embed_documents(texts)


async def timed_load(backend: str, entities: int, latency: float, batch_size: int) -> float:
    tenant = TenantId(uuid.uuid4())
    provider = SlowProvider(DIMENSION, latency)
    records = list(enumerate(make_corpus(tenant, entities, seed=5), start=1))
    if backend != "neo4j":
        services = Redstring(
            embeddings=provider, vectors=InMemoryVectorStore(DIMENSION), graph=InMemoryGraphStore()
        )
        return await timed_ingest(records, services, batch_size)
    from bench.neo4j_cleanup import Written
    from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jVectorStore, connect_driver

    auth = (os.environ["NEO4J_USER"], os.environ["NEO4J_PASSWORD"])
    async with (
        connect_driver(os.environ["NEO4J_URI"], auth) as driver,
        Written(driver, tenants=[tenant]),
    ):
        graph, vectors = Neo4jGraphStore(driver), Neo4jVectorStore(driver, DIMENSION)
        await graph.ensure_schema()
        await vectors.ensure_schema()
        services = Redstring(embeddings=provider, vectors=vectors, graph=graph)
        return await timed_ingest(records, services, batch_size)


async def timed_ingest(
    records: list[tuple[int, Entity]], services: Redstring, batch_size: int
) -> float:
    started = time.perf_counter()
    await ingest(records, services, batch_size=batch_size)
    return time.perf_counter() - started


async def main(entities: int, latency_ms: float, batch_size: int, neo4j: bool) -> None:
    batches = -(-entities // batch_size)
    print(f"machine: {machine()}")
    print(
        f"{entities:,} entities in {batches} batches of {batch_size:,}; provider latency "
        f"{latency_ms:.0f} ms a batch ({batches * latency_ms / 1000:.1f} s of waiting in all)"
    )
    for backend in ("memory", "neo4j") if neo4j else ("memory",):
        seconds = await timed_load(backend, entities, latency_ms / 1000, batch_size)
        print(f"{backend}: {seconds:.2f} s ({entities / seconds:,.0f} entities/s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--latency-ms", type=float, default=150.0)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--no-neo4j", action="store_true", help="memory backend only")
    args = parse_args(parser, entities=300, latency_ms=5.0, batch_size=100)
    use_neo4j = not args.no_neo4j and "NEO4J_URI" in os.environ
    from bench.neo4j_cleanup import schema_as_found

    with schema_as_found(when=use_neo4j):
        asyncio.run(main(args.entities, args.latency_ms, args.batch_size, use_neo4j))
