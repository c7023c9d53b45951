"""Benchmark: how many lexical candidates a query reads, from which keys, and what a
smaller cap on them changes (run by hand, in memory, no embeddings).

    python -m bench.lexical_candidates [--sizes 10000,100000] [--queries 200]
        [--caps 500/500,50/500,...] [--quality-size 3000] [--quality-queries 400]

Sets: the quality sets of `bench/quality_sets.py` (as `bench.quality` builds them)
and `bench.corpus` tenants of `--sizes` entities with seeded queries (whole names,
one edit in one word, 5-7 letters of a word). At the current caps
(`MAX_BLOCK_SIZE`, `MAX_PREFIX_SIZE`), the rows read per query (median/p95) by key
kind and by block size; then for each `KEY/PREFIX` cap pair: candidates per query
(median, p95; by query kind on the corpus), LEXICAL MRR and recall@10 of k = 10, and
on how many queries the lexical channel's answer differs from the first pair's (its
top 10 in LEXICAL mode; its vote in HYBRID, the candidates within
`LEXICAL_VOTE_MARGIN` of its best). A pair whose answers never differ from another's
changes no ranking of any mode on that set. Figures go to docs/adr/0003.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import uuid
from collections import Counter, defaultdict
from collections.abc import Sequence

from bench.corpus import make_corpus
from bench.load import percentile
from bench.options import parse_args
from bench.quality_sets import BUILDERS, Query
from redstring import Entity, InMemoryGraphStore, TenantId
from redstring.domain.blocking import (
    MAX_BLOCK_SIZE,
    MAX_PREFIX_SIZE,
    query_blocking_keys,
    query_prefix,
)
from redstring.domain.ids import EntityId
from redstring.domain.lexical import LexicalCandidate, lexical_scores
from redstring.domain.normalization import normalize_name
from redstring.domain.ranking import LEXICAL_VOTE_MARGIN, rank_by_score, within_margin

FETCH = 30  # k * overfetch of a k = 10 retrieve
SIZE_BUCKETS = (10, 50, 100, 200, 500)


def bucket(size: int) -> str:
    for top in SIZE_BUCKETS:
        if size <= top:
            return f"<={top}"
    return f">{SIZE_BUCKETS[-1]}"


async def read(
    graph: InMemoryGraphStore, tenant: TenantId, query: str, key_cap: int, prefix_cap: int
) -> list[LexicalCandidate]:
    prefix = query_prefix(query)
    found = await graph.find_lexical_candidates(
        query_blocking_keys(query), tenant, limit_per_key=key_cap
    )
    if prefix is not None:
        found += await graph.find_lexical_candidates(
            (), tenant, prefixes=(prefix,), limit_per_prefix=prefix_cap
        )
    return list({c.id: c for c in found}.values())


def rank(query: str, found: list[LexicalCandidate]) -> list[tuple[EntityId, float]]:
    return rank_by_score(zip((c.id for c in found), lexical_scores(query, found), strict=True))[
        :FETCH
    ]


def kinds_read(graph: InMemoryGraphStore, tenant: TenantId, query: str) -> dict[str, int]:
    """Rows read per key kind and per block-size bucket at the current cap."""
    blocks = graph._tenants[tenant].blocks  # a bench looks inside
    rows: dict[str, int] = Counter()
    for key in query_blocking_keys(query):
        size = len(blocks.get(key, ()))
        if size:
            rows["kind " + key[:2]] += min(size, MAX_BLOCK_SIZE)
            rows["block " + bucket(size)] += min(size, MAX_BLOCK_SIZE)
    prefix = query_prefix(query)
    if prefix is not None:
        tenant_store = graph._tenants[tenant]
        rows["kind prefix"] += len(tenant_store.prefix_head(prefix, MAX_PREFIX_SIZE))
    return rows


def corpus_queries(entities: list[Entity], count: int, seed: int) -> list[Query]:
    rng = random.Random(seed)
    out = [Query(e.name, e.id, "whole") for e in rng.sample(entities, count)]
    letters = "abcdefghijklmnopqrstuvwxyz"
    for e in rng.sample(entities, count):
        words = normalize_name(e.name).split()
        at = max(range(len(words)), key=lambda i: len(words[i]))
        word = words[at]
        i = rng.randrange(len(word))
        typo = word[:i] + rng.choice(letters) + word[i + 1 :]
        out.append(Query(" ".join([*words[:at], typo, *words[at + 1 :]]), e.id, "typo"))
    for e in rng.sample(entities, count):
        word = max(normalize_name(e.name).split(), key=len)
        out.append(Query(word[: rng.randint(5, 7)], e.id, "prefix"))
    return out


def summary(values: Sequence[float]) -> str:
    return f"{statistics.median(values):10.0f}{percentile(sorted(values), 0.95):7.0f}"


async def measure(
    label: str,
    entities: list[Entity],
    tenant: TenantId,
    queries: list[Query],
    caps: list[tuple[int, int]],
) -> None:
    graph = InMemoryGraphStore()
    await graph.upsert_entities(entities)
    by_kind: dict[str, list[int]] = defaultdict(list)
    for q in queries:
        rows = kinds_read(graph, tenant, q.text)
        for name in [*(f"kind {k}" for k in ("p:", "s:", "w:", "d:", "i:", "prefix"))] + [
            f"block {bucket(s)}" for s in (*SIZE_BUCKETS, 10**9)
        ]:
            by_kind[name].append(rows.get(name, 0))
    print(f"\n## {label}: {len(entities):,} entities, {len(queries)} queries")
    print("rows read per query at the current cap (median p95):")
    print(
        "  "
        + "; ".join(
            f"{name} {statistics.median(v):.0f}/{percentile(sorted(v), 0.95):.0f}"
            for name, v in by_kind.items()
        )
    )
    base: dict[str, list[tuple[EntityId, float]]] = {}
    print(
        f"{'KEY/PREFIX cap':<16}{'cand. med':>10}{'p95':>7}{'LEX MRR':>9}{'r@10':>7}"
        f"{'top10 diff':>11}{'vote diff':>10}{'kinds of diffs'}"
    )
    for key_cap, prefix_cap in caps:
        counts, rr, hit, top_diff, vote_diff = [], [], [], 0, 0
        counts_of: dict[str, list[int]] = defaultdict(list)
        diff_kinds: Counter[str] = Counter()
        for q in queries:
            found = await read(graph, tenant, q.text, key_cap, prefix_cap)
            counts.append(len(found))
            counts_of[q.kind].append(len(found))
            ranked = rank(q.text, found)
            ids = [i for i, _ in ranked[:10]]
            rr.append(1 / (ids.index(q.answer) + 1) if q.answer in ids else 0.0)
            hit.append(q.answer in ids)
            if (key_cap, prefix_cap) == caps[0]:
                base[q.text + "\0" + str(q.answer)] = ranked
                continue
            ref = base[q.text + "\0" + str(q.answer)]
            if [i for i, _ in ref[:10]] != ids:
                top_diff += 1
                diff_kinds[q.kind] += 1
            vote = within_margin(ranked, margin=LEXICAL_VOTE_MARGIN)
            if [i for i, _ in within_margin(ref, margin=LEXICAL_VOTE_MARGIN)] != [
                i for i, _ in vote
            ]:
                vote_diff += 1
        print(
            f"{f'{key_cap}/{prefix_cap}':<16}{summary(counts)}{statistics.mean(rr):>9.3f}"
            f"{statistics.mean(hit):>7.3f}{top_diff:>11}{vote_diff:>10}  "
            + ", ".join(f"{k} {n}" for k, n in diff_kinds.most_common(6))
        )
        if len(counts_of) > 1 and len(counts_of) <= 4:
            print(
                "    candidates by query kind (median/p95): "
                + "; ".join(
                    f"{kind} {statistics.median(v):.0f}/{percentile(sorted(v), 0.95):.0f}"
                    for kind, v in counts_of.items()
                )
            )


def parse_caps(text: str) -> list[tuple[int, int]]:
    pairs = [tuple(int(x) for x in part.split("/")) for part in text.split(",")]
    return [(p[0], p[1]) for p in pairs]


async def main(args: argparse.Namespace) -> None:
    caps = parse_caps(args.caps)
    for set_name in args.sets.split(",") if args.sets else []:
        tenant = TenantId(uuid.UUID(int=11))
        count = args.quality_queries // 3 if set_name == "typeahead" else args.quality_queries
        data = BUILDERS[set_name](tenant, args.quality_size, count, 1)
        await measure(f"quality set {set_name}", data.entities, tenant, data.queries, caps)
    for size in (int(s) for s in args.sizes.split(",")) if args.sizes else []:
        tenant = TenantId(uuid.UUID(int=12))
        entities = make_corpus(tenant, size, seed=1)
        queries = corpus_queries(entities, args.queries, seed=2)
        await measure(f"bench.corpus {size:,}", entities, tenant, queries, caps)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(BUILDERS))
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--quality-size", type=int, default=3000)
    parser.add_argument("--quality-queries", type=int, default=400)
    parser.add_argument(
        "--caps",
        default=f"500/500,{MAX_BLOCK_SIZE}/{MAX_PREFIX_SIZE},100/100,50/50",
        help="KEY/PREFIX cap pairs; each is compared with the first",
    )
    args = parse_args(parser, sizes="2000", queries=20, quality_size=300, quality_queries=30)
    asyncio.run(main(args))
