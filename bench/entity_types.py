"""Benchmark: listing a tenant's entity types (`GraphStore.entity_types`) (by hand).

    make neo4j-start && set -a && . .cache/neo4j/env && set +a
    .venv/bin/python -m bench.entity_types [--sizes 10000,100000] [--repeats 15]
                                           [--limit 100] [--no-neo4j] [--tiny]

For each size, two fresh tenants of each backend: one whose entities are of 6
types, one whose entities are each of a type of its own (50 characters), loaded
with `upsert_entities` in a shuffled order. Prints the median (min-max) of
`--repeats` calls of `entity_types(tenant, limit=--limit)` (`entityTypes`'
default `first`, 100), after one warm-up call, and the median CPU time of this
process a call (the client's share over Neo4j). Without `--no-neo4j` and with
`NEO4J_URI` set, the Neo4j rows run too; their tenants are deleted after their
timings, whether or not they succeeded (bench/neo4j_cleanup.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from bench.measure import machine
from bench.options import parse_args
from redstring import Entity, GraphStore, InMemoryGraphStore, TenantId
from redstring.testing import make_entity

FEW_TYPES = ["person", "org", "place", "product", "event", "document"]
TYPE_LENGTH = 50


def entities_of(tenant: TenantId, size: int, own_types: bool) -> list[Entity]:
    """`size` entities of `FEW_TYPES` in turn, or each of a type of its own, shuffled."""
    entities = [
        make_entity(
            tenant,
            f"Entity {i}",
            f"type {i:08}".ljust(TYPE_LENGTH, "x") if own_types else FEW_TYPES[i % len(FEW_TYPES)],
        )
        for i in range(size)
    ]
    random.Random(size).shuffle(entities)
    return entities


async def timed(graph: GraphStore, tenant: TenantId, limit: int, repeats: int) -> str:
    """The median (min-max) wall time and median CPU time of `repeats` calls."""
    await graph.entity_types(tenant, limit=limit)
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        await graph.entity_types(tenant, limit=limit)
        cpus.append((time.process_time() - cpu) * 1000)
        walls.append((time.perf_counter() - wall) * 1000)
    return (
        f"{statistics.median(walls):.2f} ms ({min(walls):.2f}-{max(walls):.2f}) | "
        f"{statistics.median(cpus):.2f} ms"
    )


@asynccontextmanager
async def stores(backend: str) -> AsyncIterator[tuple[GraphStore, list[TenantId]]]:
    """A graph store of `backend` and the list of tenants written to it, deleted at the end
    on Neo4j."""
    if backend == "memory":
        yield InMemoryGraphStore(), []
        return
    from bench.neo4j_cleanup import Written
    from redstring.adapters.neo4j import Neo4jGraphStore, connect_driver

    auth = (os.environ["NEO4J_USER"], os.environ["NEO4J_PASSWORD"])
    async with connect_driver(os.environ["NEO4J_URI"], auth) as driver:
        written = Written(driver)
        async with written:
            graph = Neo4jGraphStore(driver)
            await graph.ensure_schema()
            yield graph, written.tenants


async def main(sizes: list[int], repeats: int, limit: int, neo4j: bool) -> None:
    print(f"machine: {machine()}")
    print(f"entity_types(limit={limit}), median (min-max) of {repeats} calls, and client CPU")
    print()
    print("| backend | tenant | median (min-max) | client CPU a call |")
    print("|---|---|---|---|")
    for backend in ("memory", "neo4j") if neo4j else ("memory",):
        async with stores(backend) as (graph, written):
            for size in sizes:
                for own_types in (False, True):
                    tenant = TenantId(uuid.uuid4())
                    written.append(tenant)  # recorded before writing, so a failure is removed
                    await graph.upsert_entities(entities_of(tenant, size, own_types))
                    kind = "each of a type of its own" if own_types else f"{len(FEW_TYPES)} types"
                    row = await timed(graph, tenant, limit, repeats)
                    print(f"| {backend} | {size:,} entities, {kind} | {row} |")
    print()
    print("entity types listed")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="tenant sizes, comma-separated")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--limit", type=int, default=100, help="entityTypes' default first")
    parser.add_argument("--no-neo4j", action="store_true", help="memory backend only")
    args = parse_args(parser, sizes="300", repeats=3)
    use_neo4j = not args.no_neo4j and "NEO4J_URI" in os.environ
    from bench.neo4j_cleanup import schema_as_found

    with schema_as_found(when=use_neo4j):
        sizes = [int(size) for size in args.sizes.split(",")]
        asyncio.run(main(sizes, args.repeats, args.limit, use_neo4j))
