"""Benchmark: `redstring load` of generated JSONL files (run by hand, not a test).

    make neo4j-start && set -a && . .cache/neo4j/env && set +a
    .venv/bin/python -m bench.ingest [--entities 100000] [--relationships 200000]
                                     [--small 10000] [--batch-size 1000] [--no-neo4j]
                                     [--tiny]

Writes two JSONL files to a temporary directory: `--entities` synthetic
entities (names from bench/corpus.py, with their descriptions), each
followed by its share of `--relationships` relationships to entities of
earlier lines, both ends named by name and type as a file exported from
another system would name them; and the same at `--small` entities (with
relationships in the same ratio). Every load is `redstring load` in a
process of its own (hashing provider, dimension 384), timed by the wall
clock from start to exit (start-up, connection and schema included), with
that process's peak RSS taken from `wait4`:

- memory backend, large file (target: at most 30 s);
- neo4j backend, large file, into a fresh random tenant (target: at least
  3,000 entities/s end to end);
- neo4j backend, small file, fresh tenant: peak RSS against the large one
  (target: flat in file size; the neo4j backend keeps nothing in process);
- memory backend, small file: for contrast, since that backend holds the
  data in the loading process by design.

The loader's CPU time (user + system, from `wait4`) is printed beside the
wall time: on a machine shared with other jobs it shows what the load
itself cost.

The Neo4j rows are skipped without NEO4J_URI or with `--no-neo4j`. The
Neo4j tenants are deleted at the end of the run, after the timings and
whether or not the loads succeeded (bench/neo4j_cleanup.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from bench.measure import machine, peak_rss_mib
from bench.options import parse_args

RELATIONSHIP_TYPES = ("SUPPLIES", "OWNS", "PARTNERS_WITH", "LOCATED_IN")


def write_file(path: Path, entities: int, relationships: int, seed: int = 0) -> None:
    """`entities` entity lines, each followed by relationships to earlier entities until
    `relationships` are written in all; no line names an entity of a later line."""
    from bench.corpus import make_corpus
    from redstring import TenantId

    corpus = make_corpus(TenantId(uuid.UUID(int=seed)), entities, seed=seed)
    rng = random.Random(seed)
    written = 0
    with path.open("w", encoding="utf-8") as out:
        for i, entity in enumerate(corpus):
            source = {"name": entity.name, "type": entity.entity_type}
            out.write(
                json.dumps(
                    {
                        "kind": "entity",
                        "name": entity.name,
                        "entity_type": entity.entity_type,
                        "description": entity.description,
                    }
                )
                + "\n"
            )
            due = relationships * i // max(1, entities - 1)
            while i and written < due:
                target = corpus[rng.randrange(i)]
                out.write(
                    json.dumps(
                        {
                            "kind": "relationship",
                            "relationship_type": rng.choice(RELATIONSHIP_TYPES),
                            "source": source,
                            "target": {"name": target.name, "type": target.entity_type},
                        }
                    )
                    + "\n"
                )
                written += 1


@dataclass(frozen=True)
class Run:
    seconds: float
    cpu_seconds: float
    peak_rss_mib: float
    summary: str


def write_in_child(path: Path, entities: int, relationships: int, seed: int) -> None:
    """`write_file` in a process of its own. The corpus takes hundreds of MiB, and a child
    forked from a large process starts with the parent's peak RSS as its own."""
    arguments = [str(path), str(entities), str(relationships), str(seed)]
    subprocess.run([sys.executable, "-m", "bench.ingest", "--write", *arguments], check=True)


def load(path: Path, tenant: uuid.UUID, batch_size: int, env: dict[str, str]) -> Run:
    """`redstring load` in a child process: its wall and CPU time, peak RSS and summary line."""
    command = [sys.executable, "-m", "redstring.api", "load", str(path), "--tenant", str(tenant)]
    command += ["--batch-size", str(batch_size)]
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert child.stderr is not None
    output = child.stderr.read().decode()
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"redstring load failed ({child.returncode}):\n{output}")
    summary = next(line for line in output.splitlines() if line.startswith("loaded "))
    cpu_seconds = usage.ru_utime + usage.ru_stime
    return Run(seconds, cpu_seconds, usage.ru_maxrss / 1024, summary)


def environment(backend: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDSTRING_")}
    env.update(REDSTRING_BACKEND=backend, REDSTRING_EMBEDDINGS="hashing")
    env["REDSTRING_EMBEDDING_DIMENSION"] = "384"
    if backend == "neo4j":
        env["REDSTRING_NEO4J_URI"] = os.environ["NEO4J_URI"]
        env["REDSTRING_NEO4J_USER"] = os.environ.get("NEO4J_USER", "neo4j")
        env["REDSTRING_NEO4J_PASSWORD"] = os.environ["NEO4J_PASSWORD"]
    return env


async def delete_from_neo4j(tenants: list[uuid.UUID]) -> None:
    """The nodes `redstring load` wrote for `tenants` (entities and default-label vectors)."""
    from bench.neo4j_cleanup import Written
    from redstring import TenantId
    from redstring.adapters.neo4j import connect_driver

    auth = (os.environ.get("NEO4J_USER", "neo4j"), os.environ["NEO4J_PASSWORD"])
    async with connect_driver(os.environ["NEO4J_URI"], auth) as driver:
        await Written(driver, tenants=[TenantId(t) for t in tenants]).remove()


def main(entities: int, relationships: int, small: int, batch_size: int, neo4j: bool) -> None:
    small_relationships = relationships * small // entities
    with tempfile.TemporaryDirectory(prefix="redstring-ingest-") as folder:
        large_file, small_file = Path(folder, "large.jsonl"), Path(folder, "small.jsonl")
        started = time.perf_counter()
        write_in_child(large_file, entities, relationships, seed=0)
        write_in_child(small_file, small, small_relationships, seed=1)
        print(f"machine: {machine()}; bench process peak RSS {peak_rss_mib():.0f} MiB")
        print(
            f"files: {entities:,} entities + {relationships:,} relationships "
            f"({large_file.stat().st_size / 2**20:.0f} MiB), {small:,} + "
            f"{small_relationships:,} ({small_file.stat().st_size / 2**20:.1f} MiB); "
            f"written in {time.perf_counter() - started:.1f} s; --batch-size {batch_size}"
        )
        rows: list[tuple[str, int, Run]] = []
        memory = environment("memory")
        rows.append(("memory", entities, load(large_file, uuid.uuid4(), batch_size, memory)))
        if neo4j:
            graph = environment("neo4j")
            tenants = [uuid.uuid4(), uuid.uuid4()]
            try:
                rows.append(("neo4j", entities, load(large_file, tenants[0], batch_size, graph)))
                rows.append(("neo4j", small, load(small_file, tenants[1], batch_size, graph)))
            finally:
                asyncio.run(delete_from_neo4j(tenants))
        rows.append(("memory", small, load(small_file, uuid.uuid4(), batch_size, memory)))
        print("| backend | entities | wall time | loader CPU | entities/s | records/s | peak RSS |")
        print("|---|---|---|---|---|---|---|")
        for backend, count, run in rows:
            records = count + (relationships if count == entities else small_relationships)
            print(
                f"| {backend} | {count:,} | {run.seconds:.1f} s | {run.cpu_seconds:.1f} s "
                f"| {count / run.seconds:,.0f} "
                f"| {records / run.seconds:,.0f} | {run.peak_rss_mib:.0f} MiB |"
            )
        for backend, count, run in rows:
            print(f"{backend} {count:,}: {run.summary}")
        peaks = {(b, c): r.peak_rss_mib for b, c, r in rows}
        if neo4j:
            ratio = peaks[("neo4j", entities)] / peaks[("neo4j", small)]
            print(f"neo4j peak RSS, {entities:,} / {small:,} entities: {ratio:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--relationships", type=int, default=200_000)
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--no-neo4j", action="store_true", help="memory backend only")
    parser.add_argument("--write", nargs=4, metavar=("PATH", "ENTITIES", "RELS", "SEED"))
    args = parse_args(parser, entities=300, relationships=600, small=100, batch_size=100)
    if args.write:
        path, *counts = args.write
        write_file(Path(path), *map(int, counts))
        raise SystemExit(0)
    with_neo4j = not args.no_neo4j and "NEO4J_URI" in os.environ
    from bench.neo4j_cleanup import schema_as_found

    with schema_as_found(when=with_neo4j):
        main(args.entities, args.relationships, args.small, args.batch_size, with_neo4j)
