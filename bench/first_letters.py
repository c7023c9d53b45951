"""Benchmark: a search box's first keystrokes, the first 1, 2 and 3 letters of a name
typed alone (run by hand).

    python -m bench.first_letters [--size 10000] [--queries 400] [--seed 7]

Two sets, in memory with the default provider: the demo tenant (`serve --demo`'s
entities) and `--size` made-up names (`bench.quality_sets.made_up_names`). For
`--queries` entities of each (all of the demo's), the first 1, 2 and 3 letters of the
name, as typed, are asked for with `k` = 10. Prints, per mode and length, how often the
entity is among the ten (`found`); `ceiling`, how often at most ten names of the set
begin with those letters, so that a search box listing only such names, in any order,
would show it (not a bound on `found`: a name may also be found by a later word's
beginning); and `begun`, the share of the matches shown a word of which the letters
begin. Runs against whatever redstring is importable, so the same script measures a
branch before and after a change.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import uuid

from bench.measure import machine
from bench.options import parse_args
from bench.quality_sets import fold, made_up_names
from redstring import Entity, Redstring, RetrievalMode, TenantId
from redstring.api.demo.dataset import DEMO_TENANT_ID, demo_dataset

MODES = (RetrievalMode.LEXICAL, RetrievalMode.SEMANTIC, RetrievalMode.HYBRID)
LENGTHS = (1, 2, 3)
K = 10


async def measure(
    label: str, entities: list[Entity], tenant: TenantId, queries: int, rng: random.Random
) -> None:
    asked = entities if queries >= len(entities) else rng.sample(entities, queries)
    folded = [fold(e.name) for e in entities]
    print(f"\n{label}: {len(entities):,} entities, {len(asked):,} asked for; {machine()}\n")
    print("| mode | letters | found | ceiling | begun |")
    print("|---|---|---|---|---|")
    async with Redstring.in_memory() as rs:
        await rs.upsert(entities)
        for mode in MODES:
            for length in LENGTHS:
                found = ceiling = begun = shown = total = 0
                for entity in asked:
                    query = entity.name[:length]
                    typed = fold(query)
                    if len(typed) < length or not typed.isalpha():
                        continue  # a name beginning with a digit or a shorter word
                    total += 1
                    ceiling += sum(name.startswith(typed) for name in folded) <= K
                    result = await rs.retrieve(query, tenant, k=K, mode=mode)
                    found += any(m.entity.id == entity.id for m in result.matches)
                    shown += len(result.matches)
                    begun += sum(
                        any(word.startswith(typed) for word in fold(m.entity.name).split())
                        for m in result.matches
                    )
                share = f"{begun / shown:.2f}" if shown else "-"
                print(
                    f"| {mode.name} | {length} | {found} / {total} = {found / max(total, 1):.2f}"
                    f" | {ceiling / max(total, 1):.2f} | {share} |"
                )


async def main(size: int, queries: int, seed: int) -> None:
    rng = random.Random(seed)
    demo, _ = demo_dataset()
    await measure("demo", demo, DEMO_TENANT_ID, len(demo), rng)
    tenant = TenantId(uuid.UUID(int=15))
    names = made_up_names(size, seed)
    made_up = [Entity.create(tenant, name, "company") for name in names]
    await measure("made-up names", made_up, tenant, queries, rng)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000, help="made-up names")
    parser.add_argument("--queries", type=int, default=400, help="of them asked for")
    parser.add_argument("--seed", type=int, default=7)
    args = parse_args(parser, size=300, queries=20)
    asyncio.run(main(args.size, args.queries, args.seed))
