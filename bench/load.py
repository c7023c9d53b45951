"""Benchmark: a real `redstring serve` under mixed load from many clients (run by hand).

    .venv/bin/python -m bench.load [--clients 32] [--seconds 60] [--entities 5000]
                                   [--backend memory|neo4j|both]
                                   [--worst-k K] [--worst-first F] [--worst-hops 2]
                                   [--api-key KEY | --bearer TOKEN] [--tiny]

For each backend, a `redstring serve` of its own (one uvicorn worker, hashing
provider, a free port of 127.0.0.1; every other setting from the
environment, so its defaults unless `REDSTRING_*` says otherwise) is
started, loaded through the API with `--entities` generated entities
(bench/corpus.py) and twice as many relationships, a few entities taking
many of them (hubs), into a fresh tenant, the same data on both backends;
then `--clients` clients send requests back to back for `--seconds`:

- `retrieve`: k=10, names, single words, names with a letter dropped or
  lower-cased, and a few fixed demo-like queries; hybrid mostly, some
  semantic or lexical, some with an `entityTypes` filter;
- `traverse`: retrieve k=5 and one hop of `relationships(first: 10)`;
- `upsert`: 10 new entities into a second fresh tenant of the bench's own.

Meanwhile, from a process of its own, a probe sends `GET /healthz` every
100 ms (target: every answer within 100 ms), and once, a third of the way
in, the bench sends the worst-case allowed query: `retrieve(k: MAX_K)` with
`--worst-hops` levels of `relationships(first: F)`, F the largest that the
cost limit allows (the server's own `operation_cost`, the limits read from
`REDSTRING_*` as the server reads them). If the server refuses that F (its
settings may differ), the bench lowers F until a query is answered, unless
`--worst-first` fixes it. It prints whether the server answered or refused, how long it took, and
the `/healthz` latencies while it ran.

The clients run in one process and the probe in another, apart from this
one, so neither the clients' work nor the worst query's large answer delays
the probe's readings; all three share the machine's cores with the server.
The Neo4j run needs `NEO4J_URI`, `NEO4J_USER` and `NEO4J_PASSWORD` (as `make
neo4j-start` writes them) and is skipped with a note without them. The
bench's entities are deleted through the API at the end of each backend's
run, after its timings, whether or not they succeeded (`--keep` keeps them).

Per backend it prints: requests, errors by HTTP status and
`extensions.code` (target: none), throughput, p50/p95/p99 latency of each
kind of operation, and the probe's count, p99 and max. Credentials, when
the server is started with `REDSTRING_AUTH` set, go in `Authorization:
Bearer` (`--api-key` or `--bearer`), and `--tenant`/`--write-tenant` name
tenants the credential is granted.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import functools
import math
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import httpx
from graphql import GraphQLSchema, parse

from bench.corpus import KINDS, make_corpus, make_name
from bench.measure import free_port, machine
from bench.neo4j_cleanup import schema_as_found
from bench.options import parse_args
from redstring import Entity, TenantId
from redstring.api.limits import Limits
from redstring.api.operation_cost import operation_cost
from redstring.api.schema.build import build_schema
from redstring.api.settings import Settings
from redstring.domain.ids import entity_id_for

RELATIONSHIP_TYPES = ("SUPPLIES", "PARTNER_OF", "LOCATED_IN", "OWNS")
# The share of each kind of operation in the clients' traffic.
MIX = {"retrieve": 0.6, "traverse": 0.3, "upsert": 0.1}
UPSERT_BATCH = 10
LOAD_BATCH = 500
PROBE_PERIOD = 0.1
CLIENT_KEEP_ALIVE = 4.0  # seconds; the server's REDSTRING_KEEP_ALIVE_TIMEOUT is 5 by default
PROBE_TARGET_MS = 100.0
FIXED_QUERIES = ("Acme", "Globex Corporation", "initech labs", "Stark Industries", "Holdings")
# Codes that say the query ran (or could not) rather than that it was refused as too large.
NOT_A_REFUSAL = {"REQUEST_TIMEOUT", "SERVICE_UNAVAILABLE", "INTERNAL_SERVER_ERROR"}

RETRIEVE = """query Retrieve($q: String!, $tenant: ID!, $mode: RetrievalMode!, $types: [String!]) {
  retrieve(query: $q, tenantId: $tenant, k: 10, mode: $mode, entityTypes: $types) {
    matches { score entity { id name entityType } }
  }
}"""
TRAVERSE = """query Traverse($q: String!, $tenant: ID!) {
  retrieve(query: $q, tenantId: $tenant, k: 5) {
    matches { score entity { id name
      relationships(first: 10) { relationshipType target { id name entityType } } } }
  }
}"""
UPSERT_ENTITIES = """mutation Upsert($tenant: ID!, $entities: [EntityInput!]!) {
  upsertEntities(tenantId: $tenant, entities: $entities) { count ids }
}"""
UPSERT_RELATIONSHIPS = """mutation Link($tenant: ID!, $relationships: [RelationshipInput!]!) {
  upsertRelationships(tenantId: $tenant, relationships: $relationships) { count }
}"""
DELETE = """mutation Delete($tenant: ID!, $ids: [ID!]!) {
  deleteEntities(tenantId: $tenant, ids: $ids) { count }
}"""


# --- what one request gave ------------------------------------------------------------


def outcome_of(response: httpx.Response) -> str:
    """`ok`, or the failure as `HTTP <status> <extensions.code>` (first error's code)."""
    try:
        body = response.json()
    except ValueError:
        return f"HTTP {response.status_code} (not JSON)"
    errors = body.get("errors") if isinstance(body, dict) else None
    if response.status_code == 200 and not errors:
        return "ok"
    code = None
    if errors and isinstance(errors[0], dict):
        code = (errors[0].get("extensions") or {}).get("code")
    return f"HTTP {response.status_code} {code or '(no code)'}"


def percentile(sorted_ms: Sequence[float], share: float) -> float:
    """The nearest-rank percentile of an ascending list (0.0 when it is empty)."""
    if not sorted_ms:
        return 0.0
    rank = max(1, math.ceil(share * len(sorted_ms)))
    return sorted_ms[min(rank, len(sorted_ms)) - 1]


@dataclass
class Plan:
    """What the clients send: tenants, queries, and how long."""

    base_url: str
    headers: dict[str, str]
    tenant: str
    write_tenant: str
    queries: list[str]
    clients: int
    start_at: float  # time.monotonic() at which the clients and the probe start
    seconds: float
    progress: float
    label: str
    # Each id the clients upsert into `write_tenant`, a line each, appended before the
    # request is sent: read back whether or not the clients' process ends well.
    written: Path


@dataclass
class LoadResult:
    """Every request of the clients: (kind, milliseconds, outcome)."""

    samples: list[tuple[str, float, str]] = field(default_factory=list)
    elapsed: float = 0.0


def written_ids(path: Path) -> list[str]:
    """The ids the clients recorded in `path` (none when they recorded nothing)."""
    if not path.exists():
        return []
    return path.read_text(encoding="utf-8").split()


# --- the corpus and the queries --------------------------------------------------------


def corpus(tenant: TenantId, size: int) -> tuple[list[Entity], list[dict[str, Any]]]:
    """`size` entities and `2 * size` relationships between them, a third of which end at
    one of the first 1 % of entities (hubs), so that traversals meet wide nodes."""
    entities = make_corpus(tenant, size, seed=21)
    rng = random.Random(22)
    hubs = entities[: max(1, size // 100)]
    relationships = []
    for _ in range(2 * size):
        source = rng.choice(entities)
        target = rng.choice(hubs) if rng.random() < 1 / 3 else rng.choice(entities)
        if source.id != target.id:
            relationships.append(
                {
                    "sourceId": str(source.id),
                    "targetId": str(target.id),
                    "relationshipType": rng.choice(RELATIONSHIP_TYPES),
                }
            )
    return entities, relationships


def queries_for(entities: Sequence[Entity], count: int = 400) -> list[str]:
    """Query texts as users type them: whole names, one word, a letter dropped, lower case."""
    rng = random.Random(23)
    out = list(FIXED_QUERIES)
    while len(out) < count:
        name = rng.choice(entities).name
        shape = rng.randrange(4)
        if shape == 0:
            out.append(name)
        elif shape == 1:
            out.append(rng.choice(name.split()))
        elif shape == 2 and len(name) > 4:
            cut = rng.randrange(1, len(name) - 1)
            out.append(name[:cut] + name[cut + 1 :])
        else:
            out.append(name.lower())
    return out


# --- the clients (a process of their own) ----------------------------------------------


def run_clients(plan: Plan) -> LoadResult:
    """The clients' process: `plan.clients` clients back to back until the time is up."""
    return asyncio.run(_clients(plan))


async def _clients(plan: Plan) -> LoadResult:
    result = LoadResult()
    # An idle connection expires before the server's keep-alive (5 s by default) ends it:
    # at equal timeouts a client can send on a connection the server is closing.
    limits = httpx.Limits(
        max_connections=plan.clients,
        max_keepalive_connections=plan.clients,
        keepalive_expiry=CLIENT_KEEP_ALIVE,
    )
    client = httpx.AsyncClient(
        base_url=plan.base_url, headers=plan.headers, limits=limits, timeout=60
    )
    with plan.written.open("a", encoding="utf-8") as written:
        async with client:
            await asyncio.sleep(max(0.0, plan.start_at - time.monotonic()))
            stop_at = plan.start_at + plan.seconds
            reporter = asyncio.create_task(_report_progress(plan, result, stop_at))
            await asyncio.gather(
                *(_client(n, plan, client, result, written, stop_at) for n in range(plan.clients))
            )
            reporter.cancel()
    result.elapsed = time.monotonic() - plan.start_at
    return result


async def _report_progress(plan: Plan, result: LoadResult, stop_at: float) -> None:
    while time.monotonic() < stop_at:
        await asyncio.sleep(plan.progress)
        elapsed = time.monotonic() - plan.start_at
        done = len(result.samples)
        failed = sum(1 for _, _, outcome in result.samples if outcome != "ok")
        print(
            f"  {plan.label}: {elapsed:5.1f} s, {done:,} requests ({done / elapsed:,.0f}/s), "
            f"{failed} errors",
            flush=True,
        )


async def _client(
    number: int,
    plan: Plan,
    client: httpx.AsyncClient,
    result: LoadResult,
    written: TextIO,
    stop_at: float,
) -> None:
    rng = random.Random(number)
    kinds, weights = list(MIX), list(MIX.values())
    while time.monotonic() < stop_at:
        kind = rng.choices(kinds, weights)[0]
        body = request_body(kind, rng, plan, written)
        started = time.perf_counter()
        try:
            response = await client.post("/graphql", json=body)
        except httpx.HTTPError as exc:
            took = (time.perf_counter() - started) * 1000
            result.samples.append((kind, took, f"transport {type(exc).__name__}"))
            continue
        took = (time.perf_counter() - started) * 1000  # the answer read, not yet parsed
        result.samples.append((kind, took, outcome_of(response)))


def request_body(kind: str, rng: random.Random, plan: Plan, written: TextIO) -> dict[str, Any]:
    """A request of `kind`; an upsert's ids are written to `written` first."""
    query = rng.choice(plan.queries)
    if kind == "retrieve":
        mode = rng.choices(["HYBRID", "SEMANTIC", "LEXICAL"], [0.7, 0.15, 0.15])[0]
        types = [rng.choice(list(KINDS))] if rng.random() < 0.2 else None
        variables = {"q": query, "tenant": plan.tenant, "mode": mode, "types": types}
        return {"query": RETRIEVE, "variables": variables}
    if kind == "traverse":
        return {"query": TRAVERSE, "variables": {"q": query, "tenant": plan.tenant}}
    tenant = TenantId(uuid.UUID(plan.write_tenant))
    entities = []
    for _ in range(UPSERT_BATCH):
        entity_type = rng.choice(list(KINDS))
        name = make_name(rng, entity_type)
        written.write(f"{entity_id_for(tenant, entity_type, name)}\n")
        entities.append({"name": name, "entityType": entity_type, "description": f"A {name}"})
    written.flush()
    return {
        "query": UPSERT_ENTITIES,
        "variables": {"tenant": plan.write_tenant, "entities": entities},
    }


# --- the /healthz probe (a process of its own) -----------------------------------------


def run_probe(base_url: str, start_at: float, seconds: float) -> list[tuple[float, float, str]]:
    """The probe's process: (sent at, milliseconds, outcome) of each `GET /healthz`,
    one every `PROBE_PERIOD` seconds from `start_at` for `seconds`."""
    return asyncio.run(_probe(base_url, start_at, seconds))


async def _probe(base_url: str, start_at: float, seconds: float) -> list[tuple[float, float, str]]:
    readings = []
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        await client.get("/healthz")  # the connection opened before the readings
        due = start_at
        while due < start_at + seconds:
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            sent = time.monotonic()
            try:
                status = (await client.get("/healthz")).status_code
                outcome = "ok" if status == 200 else f"HTTP {status}"
            except httpx.HTTPError as exc:
                outcome = f"transport {type(exc).__name__}"
            readings.append((sent, (time.monotonic() - sent) * 1000, outcome))
            due = max(due + PROBE_PERIOD, time.monotonic())
    return readings


# --- the worst-case allowed query ------------------------------------------------------


@functools.cache
def served_schema() -> GraphQLSchema:
    return build_schema()._schema


def worst_cost(k: int, first: int, hops: int) -> int:
    """What the server's cost limit counts for `worst_document(k, first, hops)`."""
    cost = operation_cost(served_schema(), parse(worst_document(k, first, hops)), None, {})
    assert cost is not None
    return cost


def largest_first(limits: Limits, k: int, hops: int) -> int:
    """The largest `first` (at most `max_first`) whose `worst_cost` is within `max_cost`."""
    first = limits.max_first
    while first > 0 and worst_cost(k, first, hops) > limits.max_cost:
        first -= 1
    return first


def worst_document(k: int, first: int, hops: int) -> str:
    level = "id name"
    for _ in range(hops):
        level = f"id name relationships(first: {first}) {{ relationshipType target {{ {level} }} }}"
    return (
        "query Worst($q: String!, $tenant: ID!) { retrieve(query: $q, tenantId: $tenant, "
        f"k: {k}) {{ matches {{ score entity {{ {level} }} }} }} }}"
    )


@dataclass
class Worst:
    """The worst query as sent last: its shape, outcome, time window and answer size."""

    k: int
    first: int
    hops: int
    outcome: str = "not sent"
    started: float = 0.0
    ended: float = 0.0
    size: int = 0
    refusals: list[str] = field(default_factory=list)


async def send_worst(
    base_url: str, headers: dict[str, str], tenant: str, worst: Worst, lower_on_refusal: bool
) -> None:
    """Send the worst query; while the server refuses it as too large, lower `first`."""
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=120) as client:
        while True:
            body = {
                "query": worst_document(worst.k, worst.first, worst.hops),
                "variables": {"q": "Holdings", "tenant": tenant},
            }
            worst.started = time.monotonic()
            try:
                response = await client.post("/graphql", json=body)
            except httpx.HTTPError as exc:
                worst.ended = time.monotonic()
                worst.outcome = f"transport {type(exc).__name__}"
                return
            worst.ended = time.monotonic()
            worst.size = len(response.content)
            worst.outcome = outcome_of(response)
            code = worst.outcome.rsplit(" ", 1)[-1]
            refused = worst.outcome != "ok" and code not in NOT_A_REFUSAL
            if not (refused and lower_on_refusal and worst.first > 0):
                return
            message = response.json()["errors"][0].get("message", "")
            worst.refusals.append(f"first={worst.first}: {worst.outcome}: {message}")
            worst.first -= 1


# --- the server ------------------------------------------------------------------------


def server_environment(backend: str) -> dict[str, str]:
    """The caller's environment, with the backend and the hashing provider set."""
    env = dict(os.environ)
    env.update(
        REDSTRING_BACKEND=backend,
        REDSTRING_EMBEDDINGS="hashing",
        REDSTRING_EMBEDDING_DIMENSION="384",
        REDSTRING_DEMO="false",
    )
    if backend == "neo4j":
        env["REDSTRING_NEO4J_URI"] = os.environ["NEO4J_URI"]
        env["REDSTRING_NEO4J_USER"] = os.environ.get("NEO4J_USER", "neo4j")
        env["REDSTRING_NEO4J_PASSWORD"] = os.environ["NEO4J_PASSWORD"]
    return env


class Server:
    """`redstring serve` on a free port of 127.0.0.1, its output in a file."""

    def __init__(self, backend: str, folder: Path) -> None:
        self.port = free_port()
        self.log = folder / f"server-{backend}.log"
        command = [sys.executable, "-m", "redstring.api", "serve"]
        command += ["--host", "127.0.0.1", "--port", str(self.port), "--workers", "1"]
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                command, env=server_environment(backend), stdout=out, stderr=subprocess.STDOUT
            )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def wait_ready(self, within: float = 120.0) -> None:
        deadline = time.monotonic() + within
        async with httpx.AsyncClient(base_url=self.base_url, timeout=5) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise SystemExit(
                        f"the server exited ({self.process.returncode}):\n{self.tail()}"
                    )
                try:
                    if (await client.get("/readyz")).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.2)
        raise SystemExit(f"the server was not ready within {within:.0f} s:\n{self.tail()}")

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# --- one backend ---------------------------------------------------------------------


async def graphql(client: httpx.AsyncClient, query: str, variables: dict[str, Any]) -> Any:
    """One request that must succeed (loading and cleaning up); its `data`."""
    response = await client.post("/graphql", json={"query": query, "variables": variables})
    if outcome_of(response) != "ok":
        raise SystemExit(f"{outcome_of(response)}: {response.text[:500]}")
    return response.json()["data"]


async def load_corpus(
    client: httpx.AsyncClient, tenant: str, entities: list[Entity], links: list[dict[str, Any]]
) -> None:
    for low in range(0, len(entities), LOAD_BATCH):
        batch = [
            {
                "id": str(e.id),
                "name": e.name,
                "entityType": e.entity_type,
                "description": e.description,
            }
            for e in entities[low : low + LOAD_BATCH]
        ]
        await graphql(client, UPSERT_ENTITIES, {"tenant": tenant, "entities": batch})
    for low in range(0, len(links), LOAD_BATCH):
        batch = links[low : low + LOAD_BATCH]
        await graphql(client, UPSERT_RELATIONSHIPS, {"tenant": tenant, "relationships": batch})


async def delete_all(client: httpx.AsyncClient, tenant: str, ids: Sequence[str]) -> None:
    unique = list(dict.fromkeys(ids))
    for low in range(0, len(unique), LOAD_BATCH):
        await graphql(client, DELETE, {"tenant": tenant, "ids": unique[low : low + LOAD_BATCH]})


async def warm_up(client: httpx.AsyncClient, tenant: str, queries: list[str]) -> None:
    """A few reads of each shape before the clock starts (not counted): the server's first
    request of a shape pays for parsing and validating its document once."""
    for query in queries[:3]:
        for mode in ("HYBRID", "SEMANTIC", "LEXICAL"):
            variables = {"q": query, "tenant": tenant, "mode": mode, "types": None}
            await graphql(client, RETRIEVE, variables)
        await graphql(client, TRAVERSE, {"q": query, "tenant": tenant})


@dataclass
class Options:
    clients: int
    seconds: float
    entities: int
    headers: dict[str, str]
    tenant: str | None
    write_tenant: str | None
    worst: Worst
    lower_on_refusal: bool
    progress: float
    keep: bool


async def run_backend(backend: str, options: Options, folder: Path) -> None:
    tenant = options.tenant or str(uuid.uuid4())
    write_tenant = options.write_tenant or str(uuid.uuid4())
    entities, links = corpus(TenantId(uuid.UUID(tenant)), options.entities)
    loop = asyncio.get_running_loop()
    context = multiprocessing.get_context("spawn")
    pool = concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=context)
    # The clients' and the probe's processes start (and import) while the server does.
    pool_ready = [loop.run_in_executor(pool, time.sleep, 0.5) for _ in range(2)]
    server = Server(backend, folder)
    try:
        await server.wait_ready()
        async with httpx.AsyncClient(
            base_url=server.base_url, headers=options.headers, timeout=120
        ) as client:
            # The ids the clients upsert into the write tenant, recorded as they go.
            written = folder / f"written-{backend}.txt"
            try:
                started = time.perf_counter()
                await load_corpus(client, tenant, entities, links)
                loaded_in = time.perf_counter() - started
                print(
                    f"{backend}: {len(entities):,} entities and {len(links):,} relationships "
                    f"loaded through the API in {loaded_in:.1f} s (tenant {tenant})",
                    flush=True,
                )
                await warm_up(client, tenant, queries_for(entities))
                await asyncio.gather(*pool_ready)
                with pool:
                    result, probes, worst = await measure(
                        pool,
                        server.base_url,
                        backend,
                        tenant,
                        write_tenant,
                        written,
                        entities,
                        options,
                    )
            finally:
                if not options.keep:
                    await delete_all(client, tenant, [str(e.id) for e in entities])
                    await delete_all(client, write_tenant, written_ids(written))
        report(backend, options, result, probes, worst)
    finally:
        server.stop()
        pool.shutdown(cancel_futures=True)


async def measure(
    pool: concurrent.futures.Executor,
    base_url: str,
    backend: str,
    tenant: str,
    write_tenant: str,
    written: Path,
    entities: list[Entity],
    options: Options,
) -> tuple[LoadResult, list[tuple[float, float, str]], Worst]:
    """The clients' and the probe's run; `written`, the file of the ids the clients
    upsert into `write_tenant`."""
    loop = asyncio.get_running_loop()
    start_at = time.monotonic() + 0.2
    plan = Plan(
        base_url=base_url,
        headers=options.headers,
        tenant=tenant,
        write_tenant=write_tenant,
        queries=queries_for(entities),
        clients=options.clients,
        start_at=start_at,
        seconds=options.seconds,
        progress=options.progress,
        label=backend,
        written=written,
    )
    worst = Worst(options.worst.k, options.worst.first, options.worst.hops)
    clients = loop.run_in_executor(pool, run_clients, plan)
    probe = loop.run_in_executor(pool, run_probe, base_url, start_at, options.seconds)
    await asyncio.sleep(max(0.0, start_at + options.seconds / 3 - time.monotonic()))
    await send_worst(base_url, options.headers, tenant, worst, options.lower_on_refusal)
    return await clients, await probe, worst


# --- the report ------------------------------------------------------------------------


def report(
    backend: str,
    options: Options,
    result: LoadResult,
    probes: list[tuple[float, float, str]],
    worst: Worst,
) -> None:
    seconds = result.elapsed
    print(f"\n{backend}: {options.clients} clients for {seconds:.1f} s; machine: {machine()}")
    print("| operation | requests | errors | requests/s | p50 ms | p95 ms | p99 ms |")
    print("|---|---|---|---|---|---|---|")
    for kind in [*MIX, "all"]:
        rows = [s for s in result.samples if kind in (s[0], "all")]
        ms = sorted(s[1] for s in rows)
        failed = sum(1 for s in rows if s[2] != "ok")
        print(
            f"| {kind} | {len(rows):,} | {failed:,} | {len(rows) / seconds:,.1f} "
            f"| {percentile(ms, 0.50):.1f} | {percentile(ms, 0.95):.1f} "
            f"| {percentile(ms, 0.99):.1f} |"
        )
    errors = Counter(f"{s[0]} {s[2]}" for s in result.samples if s[2] != "ok")
    print("errors: " + (", ".join(f"{e}: {n}" for e, n in errors.most_common()) or "none"))
    print(f"/healthz every {PROBE_PERIOD * 1000:.0f} ms: {summary(probes)}")
    shape = (
        f"retrieve(k: {worst.k}) with {worst.hops} hop(s) of relationships(first: {worst.first})"
    )
    for refusal in worst.refusals:
        print(f"worst query refused, lowered: {refusal}")
    verdict = "answered" if worst.outcome == "ok" else f"not answered ({worst.outcome})"
    took = (worst.ended - worst.started) * 1000
    print(
        f"worst query: {shape}, cost {worst_cost(worst.k, worst.first, worst.hops):,}: "
        f"{verdict} in {took:,.0f} ms, {worst.size:,} bytes"
    )
    during = [p for p in probes if p[0] <= worst.ended and p[0] + p[1] / 1000 >= worst.started]
    print(f"/healthz while it ran: {summary(during)}")


def summary(probes: list[tuple[float, float, str]]) -> str:
    if not probes:
        return "no reading"
    ms = sorted(p[1] for p in probes)
    over = sum(1 for m in ms if m > PROBE_TARGET_MS)
    failed = sum(1 for p in probes if p[2] != "ok")
    return (
        f"{len(ms):,} readings, p99 {percentile(ms, 0.99):.1f} ms, max {ms[-1]:.1f} ms, "
        f"{over} over {PROBE_TARGET_MS:.0f} ms, {failed} failed"
    )


def main(args: argparse.Namespace) -> None:
    limits = Settings(backend="memory").limits()
    k = args.worst_k if args.worst_k is not None else limits.max_k
    first = (
        args.worst_first
        if args.worst_first is not None
        else largest_first(limits, k, args.worst_hops)
    )
    credential = args.api_key or args.bearer
    options = Options(
        clients=args.clients,
        seconds=args.seconds,
        entities=args.entities,
        headers={"Authorization": f"Bearer {credential}"} if credential else {},
        tenant=args.tenant,
        write_tenant=args.write_tenant,
        worst=Worst(k, first, args.worst_hops),
        lower_on_refusal=args.worst_first is None,
        progress=args.progress,
        keep=args.keep,
    )
    backends = ["memory", "neo4j"] if args.backend == "both" else [args.backend]
    with tempfile.TemporaryDirectory(prefix="redstring-load-") as folder:
        for backend in backends:
            if backend == "neo4j" and not {"NEO4J_URI", "NEO4J_PASSWORD"} <= os.environ.keys():
                print("neo4j: skipped (NEO4J_URI and NEO4J_PASSWORD are not set)")
                continue
            asyncio.run(run_backend(backend, options, Path(folder)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--entities", type=int, default=5000)
    parser.add_argument("--backend", choices=["memory", "neo4j", "both"], default="both")
    parser.add_argument("--worst-k", type=int, help="k of the worst query (default: MAX_K)")
    parser.add_argument(
        "--worst-first",
        type=int,
        help="first of its relationships (default: the largest the cost limit allows)",
    )
    parser.add_argument("--worst-hops", type=int, default=2, help="levels of relationships")
    credential = parser.add_mutually_exclusive_group()
    credential.add_argument("--api-key", help="sent as Authorization: Bearer KEY")
    credential.add_argument("--bearer", help="a token sent as Authorization: Bearer TOKEN")
    parser.add_argument("--tenant", help="read tenant (default: a fresh one)")
    parser.add_argument("--write-tenant", help="tenant of the upserts (default: a fresh one)")
    parser.add_argument(
        "--progress", type=float, default=5.0, help="seconds between progress lines"
    )
    parser.add_argument("--keep", action="store_true", help="keep the bench's tenants at the end")
    arguments = parse_args(parser, clients=4, seconds=2.0, entities=200, progress=1.0)
    with schema_as_found(when=arguments.backend != "memory"):
        main(arguments)
