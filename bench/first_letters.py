"""Benchmark: a search box's first keystrokes, the first 1, 2 and 3 letters of a name
typed alone (run by hand).

    python -m bench.first_letters [--size 10000] [--queries 400] [--seed 7]
        [--candidates 300] [--repeats 200]

Two sets, in memory with the default provider: the demo tenant (`serve --demo`'s
entities) and `--size` made-up names (`bench.quality_sets.made_up_names`). For
`--queries` entities of each (all of the demo's), the first 1, 2 and 3 letters of the
name, as typed, are asked for with `k` = 10. Prints, per mode and length, how often the
entity is among the ten (`found`); `ceiling`, how often at most ten names of the set
begin with those letters, so that a search box listing only such names, in any order,
would show it (not a bound on `found`: a name may also be found by a later word's
beginning); and `begun`, the share of the matches shown a word of which the letters
begin.

Then what the lexical score of such a query costs (`lexical_matches`): `--candidates`
made-up entities, each with five aliases and two string values of about 500
characters (words of made-up names and a few English words), scored against the first
1, 2 and 4 letters of the first one's name and its whole name; the median wall and
CPU time of `--repeats` runs of each, taken in turn after a warm-up (each text seen
before, as a store's candidates come back query after query), and each query's CPU
time over the four letters'. Runs against whatever redstring is importable, so the same
script measures a branch before and after a change.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import uuid

from bench.measure import alternating_medians, awaitable, machine
from bench.options import parse_args
from bench.quality_sets import fold, made_up_names, made_up_word
from redstring import Entity, Redstring, RetrievalMode, TenantId
from redstring.api.demo.dataset import DEMO_TENANT_ID, demo_dataset
from redstring.domain.lexical import lexical_matches

MODES = (RetrievalMode.LEXICAL, RetrievalMode.SEMANTIC, RetrievalMode.HYBRID)
LENGTHS = (1, 2, 3)
K = 10
ALIASES = 5
DESCRIPTION_LENGTH = 500
ENGLISH = ["a", "an", "and", "the", "of", "in", "for", "with", "its", "is", "was", "founded"]
SCORED_LENGTHS = {"1 letter": 1, "2 letters": 2, "4 letters": 4}


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


def described(tenant: TenantId, count: int, seed: int) -> list[Entity]:
    """`count` made-up entities, each with `ALIASES` aliases and two string values of
    about `DESCRIPTION_LENGTH` characters."""
    rng = random.Random(seed)
    names = made_up_names(count * (1 + ALIASES), seed)

    def description() -> str:
        words: list[str] = []
        length = 0
        while length < DESCRIPTION_LENGTH:
            words.append(rng.choice(ENGLISH) if rng.random() < 0.3 else made_up_word(rng, 2))
            length += len(words[-1]) + 1
        return " ".join(words)[:DESCRIPTION_LENGTH]

    return [
        Entity.create(
            tenant,
            names[i * (1 + ALIASES)],
            "company",
            properties={
                "aliases": names[i * (1 + ALIASES) + 1 : (i + 1) * (1 + ALIASES)],
                "summary": description(),
                "history": description(),
            },
        )
        for i in range(count)
    ]


async def scoring_cost(tenant: TenantId, count: int, repeats: int, seed: int) -> None:
    entities = described(tenant, count, seed)
    name = entities[0].name
    queries = {label: name[:length] for label, length in SCORED_LENGTHS.items()}
    queries["whole name"] = name
    runs = {
        label: awaitable(lambda query=query: lexical_matches(query, entities))
        for label, query in queries.items()
    }
    medians = await alternating_medians(runs, repeats)
    print(
        f"\nlexical_matches: {count:,} candidates, {ALIASES} aliases and two values of"
        f" ~{DESCRIPTION_LENGTH} characters each; medians of {repeats:,} runs; {machine()}\n"
    )
    print("| query | as typed | wall ms | CPU ms | CPU / 4 letters |")
    print("|---|---|---|---|---|")
    base = medians["4 letters"].cpu_ms
    for label, query in queries.items():
        m = medians[label]
        print(f"| {label} | `{query}` | {m.wall_ms:.2f} | {m.cpu_ms:.2f} | {m.cpu_ms / base:.2f} |")


async def main(size: int, queries: int, seed: int, candidates: int, repeats: int) -> None:
    rng = random.Random(seed)
    demo, _ = demo_dataset()
    await measure("demo", demo, DEMO_TENANT_ID, len(demo), rng)
    tenant = TenantId(uuid.UUID(int=15))
    names = made_up_names(size, seed)
    made_up = [Entity.create(tenant, name, "company") for name in names]
    await measure("made-up names", made_up, tenant, queries, rng)
    await scoring_cost(tenant, candidates, repeats, seed)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000, help="made-up names")
    parser.add_argument("--queries", type=int, default=400, help="of them asked for")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--candidates", type=int, default=300, help="scored for their cost")
    parser.add_argument("--repeats", type=int, default=200, help="runs of each query timed")
    args = parse_args(parser, size=300, queries=20, candidates=20, repeats=3)
    asyncio.run(main(args.size, args.queries, args.seed, args.candidates, args.repeats))
