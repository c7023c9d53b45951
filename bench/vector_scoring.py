"""Benchmark: the in-memory vector search's scoring, with and without BLAS threads.

    .venv/bin/python -m bench.vector_scoring [--sizes 1000,3000,10000,100000] [--repeats 600]

One dense unit query of dimension 384 scored against n random unit vectors
(float32, stored as the columns of one matrix, as `InMemoryVectorStore` holds
them): `np.einsum` (what the store runs, numpy's own loop) against BLAS
products (`q @ C`, `np.dot`, the rows' matrix @ vector, float64), each with
numpy's default BLAS threads and with BLAS capped at one thread for the whole
pass; the cap entered around each product (`ThreadpoolController.limit`, as a
library would have to); and the store's whole `search` (k=30, the retriever's
k=10 times its overfetch). Medians of runs taken in turn, the store's apart
from the BLAS products; more than 10,000 vectors run `--repeats` / 10 times.
On a machine whose cores are busy, compare the rows of one run, not runs.
"""

from __future__ import annotations

import argparse
import asyncio
import uuid

import numpy as np
from threadpoolctl import ThreadpoolController, threadpool_info

from bench.measure import alternating_medians_ms, awaitable, machine
from bench.options import parse_args
from redstring import EntityId, InMemoryVectorStore, TenantId, VectorRecord

DIMENSION = 384
LARGE = 10_000


async def medians(size: int, repeats: int, controller: ThreadpoolController) -> dict[str, float]:
    rng = np.random.default_rng(size)
    columns = rng.standard_normal((DIMENSION, size)).astype(np.float32)
    columns /= np.linalg.norm(columns, axis=0)
    rows = np.ascontiguousarray(columns.T)
    columns64 = columns.astype(np.float64)
    query = rng.standard_normal(DIMENSION).astype(np.float32)
    query /= np.linalg.norm(query)
    query64 = query.astype(np.float64)
    store = InMemoryVectorStore(DIMENSION)
    tenant = TenantId(uuid.uuid4())
    await store.upsert(
        [
            VectorRecord(
                entity_id=EntityId(uuid.uuid4()),
                tenant_id=tenant,
                vector=tuple(column.tolist()),
                entity_type="thing",
            )
            for column in rows
        ]
    )
    query_list = query.tolist()

    def capped_product() -> object:
        with controller.limit(limits=1, user_api="blas"):
            return query @ columns

    async def search() -> object:
        return await store.search(query_list, tenant, k=30)

    stores = {
        "np.einsum('i,ij->j', q, C) (the store's)": awaitable(
            lambda: np.einsum("i,ij->j", query, columns)
        ),
        "store search k=30": search,
    }
    blas = {"q @ C": awaitable(lambda: query @ columns)}
    default_only = {
        "np.dot(q, C)": awaitable(lambda: np.dot(query, columns)),
        "R @ q (vectors as rows)": awaitable(lambda: rows @ query),
        "np.vecdot(R, q) (vectors as rows)": awaitable(lambda: np.vecdot(rows, query)),
        "q @ C in float64": awaitable(lambda: query64 @ columns64),
        "q @ C, limit(1) entered each call": awaitable(capped_product),
    }
    # The store's runs are timed apart from the BLAS products: a threaded product leaves
    # its threads spinning for a while after it returns, on the cores the next run needs.
    alone = await alternating_medians_ms(stores, repeats)
    products = await alternating_medians_ms({**blas, **default_only}, repeats)
    with controller.limit(limits=1, user_api="blas"):
        capped = await alternating_medians_ms({**stores, **blas}, repeats)
    return {
        **{f"{name}, default threads": alone[name] for name in stores},
        **{f"{name}, default threads": products[name] for name in blas},
        **{f"{name}, BLAS capped at 1": capped[name] for name in {**stores, **blas}},
        **{name: products[name] for name in default_only},
    }


async def main(sizes: list[int], repeats: int) -> None:
    controller = ThreadpoolController()
    table = {
        size: await medians(size, repeats if size <= LARGE else max(1, repeats // 10), controller)
        for size in sizes
    }
    blas = [
        f"{pool['internal_api']} {pool['version']}, {pool['num_threads']} threads"
        for pool in threadpool_info()
        if pool["user_api"] == "blas"
    ]
    print(f"machine: {machine()}; BLAS: {', '.join(blas) or 'none found'}")
    print(f"median ms of one scoring, dimension {DIMENSION}, float32 unless said")
    print("| vectors | " + " | ".join(f"{size:,}" for size in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    for name in sorted(table[sizes[0]]):
        cells = " | ".join(f"{table[size][name]:.3f}" for size in sizes)
        print(f"| {name} | {cells} |")
    ratios = [
        table[size]["store search k=30, default threads"]
        / table[size]["store search k=30, BLAS capped at 1"]
        for size in sizes
    ]
    print(
        "store search k=30, default threads / capped at 1: "
        + ", ".join(f"{r:.2f}x" for r in ratios)
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,3000,10000,100000")
    parser.add_argument("--repeats", type=int, default=600)
    args = parse_args(parser, sizes="200", repeats=3)
    asyncio.run(main([int(size) for size in args.sizes.split(",")], args.repeats))
