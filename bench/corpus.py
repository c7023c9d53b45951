"""A deterministic synthetic corpus for the benchmarks: plausible names of several types."""

from __future__ import annotations

import random
import uuid

from redstring import Entity, TenantId
from redstring.domain.ids import entity_id_for

STEMS = [
    "acme",
    "apex",
    "globex",
    "initech",
    "umbrella",
    "stark",
    "wayne",
    "wonka",
    "tyrell",
    "cyberdyne",
    "soylent",
    "hooli",
    "vandelay",
    "pied",
    "piper",
    "massive",
    "dynamic",
    "aperture",
    "black",
    "mesa",
    "oscorp",
    "gringotts",
    "monarch",
    "nakatomi",
    "rekall",
    "sirius",
    "virtucon",
    "weyland",
    "yutani",
    "zorg",
    "octan",
    "duff",
    "krusty",
    "buy",
    "more",
    "dunder",
    "mifflin",
    "sterling",
    "cooper",
    "prestige",
    "worldwide",
    "bluth",
    "paper",
    "street",
    "gekko",
]
SYLLABLES = [
    "ka",
    "ra",
    "to",
    "mi",
    "no",
    "se",
    "lu",
    "vi",
    "da",
    "po",
    "re",
    "an",
    "el",
    "or",
    "is",
    "um",
    "ex",
    "al",
    "ce",
    "ti",
    "ba",
    "go",
]
KINDS = {
    "organization": ("Corp", "Inc", "Labs", "Holdings", "Group", "Industries", "Ltd"),
    "person": (),
    "product": ("Pro", "Max", "Mini", "One", "Air", "X"),
    "city": ("City", "Falls", "Harbor", "Springs", "Valley"),
}


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))).capitalize()


def make_name(rng: random.Random, kind: str) -> str:
    if kind == "person":
        return f"{_word(rng)} {_word(rng)}"
    first = rng.choice(STEMS).capitalize() if rng.random() < 0.3 else _word(rng)
    return f"{first} {_word(rng)} {rng.choice(KINDS[kind])}"


def make_corpus(tenant_id: TenantId, size: int, seed: int = 0) -> list[Entity]:
    """`size` distinct entities of the four kinds, the same for the same seed."""
    rng = random.Random(seed)
    kinds = list(KINDS)
    out: dict[uuid.UUID, Entity] = {}
    while len(out) < size:
        kind = kinds[len(out) % len(kinds)]
        name = make_name(rng, kind)
        entity_id = entity_id_for(tenant_id, kind, name)
        out[entity_id] = Entity(
            id=entity_id,
            tenant_id=tenant_id,
            name=name,
            entity_type=kind,
            description=f"A {kind} known as {name}",
        )
    return list(out.values())
