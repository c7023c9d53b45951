"""Where a Neo4j server's CPU goes while it takes entities and vectors (run by hand).

    make neo4j-start && set -a && . .cache/neo4j/env && set +a
    .venv/bin/python -m bench.neo4j_server_cpu [--entities 20000] [--loads 3]
                                               [--pid PID] [--seed 11] [--window 3]
                                               [--tiny]

Each load writes `--entities` bench entities (bench/corpus.py) into a new
tenant through `Neo4jGraphStore.upsert_entities`, then their precomputed
hashing-provider vectors (dimension 384) through `Neo4jVectorStore.upsert`,
and prints the rate, this process's CPU an entity, and the server's CPU an
entity until it is idle again (merges on background threads included). The
server's CPU is read from `/proc/<pid>`, so the server must run on this
machine: `--pid`, or the process `scripts/neo4j_server.py` started (its
`server.json`, when its port is NEO4J_URI's). Without either (a server
elsewhere, or one this script did not start) only the rate and this
process's CPU are printed, and the server's CPU is reported as not
measured. "Idle" is less than 0.15 s of server CPU in a `--window` of
seconds; a server still busy after `--idle-timeout` seconds (other clients
of a shared server) is measured anyway, with a note. Its
threads' CPU is grouped by name (`neo4j.BoltWorker`, `GC Thread`, `C2
CompilerThread`…); threads that ended before the last reading, such as
Lucene's merge threads, show only in the total.

To compare server settings, start a server with each and run this against
them in turn, the same `--seed` on both (docs/neo4j.md, "Server memory").

At the end, after the last reading and whether or not the loads succeeded,
the run deletes its tenants and, once its vector label (`BenchCpuVector384_`
and a run id) holds no node, that label's vector index and constraint
(bench/neo4j_cleanup.py).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import re
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from bench.corpus import make_corpus
from bench.neo4j_cleanup import Written, schema_as_found
from bench.options import parse_args
from bench.retrieval_neo4j import DIMENSION, precomputed_vectors
from redstring import HashingEmbeddingProvider, TenantId
from redstring.adapters.neo4j import Neo4jGraphStore, Neo4jVectorStore, connect_driver

LABEL = f"BenchCpuVector384_{uuid.uuid4().hex[:8]}"
STATE_FILE = Path(__file__).resolve().parent.parent / ".cache" / "neo4j" / "server.json"
TICKS = os.sysconf("SC_CLK_TCK")
IDLE_CPU_SECONDS = 0.15


def _cpu_seconds(stat: str) -> float:
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def server_seconds(pid: int) -> float:
    return _cpu_seconds(Path(f"/proc/{pid}/stat").read_text())


def thread_seconds(pid: int) -> dict[str, tuple[str, float]]:
    """CPU seconds of each live thread of `pid`, by thread id, with the thread's name."""
    found = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except FileNotFoundError:  # ended since the listing
            continue
        found[task.name] = (stat[stat.index("(") + 1 : stat.rindex(")")], _cpu_seconds(stat))
    return found


def by_group(
    before: dict[str, tuple[str, float]], after: dict[str, tuple[str, float]]
) -> collections.Counter[str]:
    """CPU seconds spent between the readings, by thread name without its number."""
    spent: collections.Counter[str] = collections.Counter()
    for task, (name, seconds) in after.items():
        group = re.sub(r"[#-]?\d+$", "", name).strip()
        spent[group] += seconds - before.get(task, (name, 0.0))[1]
    return spent


async def until_idle(pid: int, window: float, longest: float) -> None:
    """Wait until the server spends less than 0.15 s of CPU in `window` seconds, or
    `longest` seconds have passed (then say so)."""
    give_up = time.monotonic() + longest
    while time.monotonic() < give_up:
        start = server_seconds(pid)
        await asyncio.sleep(window)
        if server_seconds(pid) - start < IDLE_CPU_SECONDS:
            return
    print(f"  (server still busy after {longest:g} s: other clients; measured anyway)")


@dataclass(frozen=True)
class Idle:
    """How the server's idleness is awaited around each load."""

    window: float
    timeout: float


async def load(
    written: Written,
    graph: Neo4jGraphStore,
    vectors: Neo4jVectorStore,
    pid: int | None,
    idle: Idle,
    size: int,
    seed: int,
) -> None:
    corpus = make_corpus(written.tenant(TenantId(uuid.uuid4())), size, seed=seed)
    records = await precomputed_vectors(HashingEmbeddingProvider(DIMENSION), corpus)
    if pid is not None:
        await until_idle(pid, idle.window, idle.timeout)
        threads, server = thread_seconds(pid), server_seconds(pid)
    client = time.process_time()
    start = time.perf_counter()
    await graph.upsert_entities(corpus)
    await vectors.upsert(records)
    seconds = time.perf_counter() - start
    client = time.process_time() - client
    rate = f"{size / seconds:,.0f} entities/s; CPU an entity: client {client / size * 1e6:,.0f} µs"
    if pid is None:
        print(f"{rate}, server not measured")
        return
    await until_idle(pid, idle.window, idle.timeout)
    server = server_seconds(pid) - server
    print(f"{rate}, server {server / size * 1e6:,.0f} µs until idle")
    spent = by_group(threads, thread_seconds(pid))
    for group, used in spent.most_common(6):
        print(f"  {used:6.2f} s {used / server:6.1%}  {group}")
    print(f"  {server - sum(spent.values()):6.2f} s          threads that ended")


def local_server_pid(uri: str) -> int | None:
    """The pid `scripts/neo4j_server.py` recorded, if its server is the one at `uri` and
    its `/proc` entry can be read; else None."""
    try:
        state = json.loads(STATE_FILE.read_text())
        pid = int(state["pid"])
        server_seconds(pid)
    except (OSError, ValueError, KeyError, IndexError):
        return None
    if urlsplit(uri).port != state.get("port"):
        return None
    return pid


async def main(size: int, loads: int, pid: int | None, seed: int, idle: Idle) -> None:
    uri = os.environ["NEO4J_URI"]
    auth = (os.environ["NEO4J_USER"], os.environ["NEO4J_PASSWORD"])
    async with (
        connect_driver(uri, auth) as driver,
        Written(driver, vector_labels=(LABEL,)) as written,
    ):
        graph = Neo4jGraphStore(driver)
        vectors = Neo4jVectorStore(driver, DIMENSION, label=LABEL)
        await graph.ensure_schema()
        await vectors.ensure_schema()
        if pid is None:
            print(f"Neo4j at {uri}; no local server pid (--pid): the server's CPU is not measured")
        else:
            print(f"Neo4j at {uri}, pid {pid}")
        for n in range(loads):
            await load(written, graph, vectors, pid, idle, size, seed + n)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=20_000)
    parser.add_argument("--loads", type=int, default=3)
    parser.add_argument("--pid", type=int, help="the server's process id (default: server.json)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--window", type=float, default=3.0, help="seconds of an idle reading")
    parser.add_argument(
        "--idle-timeout", type=float, default=120.0, help="longest wait for an idle server"
    )
    args = parse_args(parser, entities=300, loads=1, window=0.5, idle_timeout=5.0)
    pid = args.pid or local_server_pid(os.environ["NEO4J_URI"])
    with schema_as_found():
        asyncio.run(
            main(args.entities, args.loads, pid, args.seed, Idle(args.window, args.idle_timeout))
        )
