"""Benchmark: the GraphQL API over HTTP against in-process retrieval (run by hand).

    .venv/bin/python -m bench.graphql [--size 10000] [--seconds 30] [--clients 16]
                                      [--load wrk|httpx] [--repeats 100] [--tiny]

A server process (uvicorn, one worker, 127.0.0.1, free port) holds `--size`
in-memory entities with relationships (and, as `redstring serve` by default,
a cache of query embeddings); this process builds the same corpus
for the in-process baseline. Measured in one run: the HTTP median of
`retrieve(k: 10)` with `relationships(first: 10) { target { name } }`, the
median of `Retriever.retrieve` in process (`--repeats` each), then `--clients` concurrent
clients for `--seconds`. Targets (issue 4): HTTP median <= in-process median
+ 10 ms; >= 150 requests/s with zero errors; p99 reported.

The load comes from `wrk` (Debian package `wrk`: one thread, `--clients`
keep-alive connections, a Lua script that rotates the queries and counts
any response with GraphQL `errors`) when it is installed, so that the load
generator takes little of the CPU the server is measured on; `--load httpx`
uses Python clients in this process instead. Both processes cap numpy's BLAS
at one thread, as `redstring serve` does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import uvicorn
from threadpoolctl import threadpool_limits

from bench.corpus import make_corpus
from bench.measure import free_port, machine, median_ms
from bench.options import parse_args
from redstring import (
    HashingEmbeddingProvider,
    Redstring,
    Relationship,
    RelationshipId,
    TenantId,
)
from redstring.api.app import create_app
from redstring.api.settings import Settings

TENANT = TenantId(uuid.UUID(int=7))
QUERY = """
query ($q: String!, $tenant: ID!) {
  retrieve(query: $q, tenantId: $tenant, k: 10) {
    matches { score entity { name relationships(first: 10) { target { name } } } }
  }
}
"""


async def build_services(size: int) -> tuple[Redstring, list[str]]:
    corpus = make_corpus(TENANT, size, seed=11)
    rng = random.Random(12)
    relationships = [
        Relationship(
            id=RelationshipId(uuid.UUID(int=rng.getrandbits(128))),
            tenant_id=TENANT,
            source_entity_id=a.id,
            target_entity_id=b.id,
            relationship_type=rng.choice(["PARTNER_OF", "SUPPLIES", "LOCATED_IN"]),
        )
        for a, b in (rng.sample(corpus, 2) for _ in range(2 * size))
    ]
    # As `redstring serve` runs by default: with the cache of query embeddings.
    services = Redstring.in_memory(
        HashingEmbeddingProvider(384), query_cache_size=Settings().query_cache_size
    )
    await services.upsert(corpus, relationships)
    queries = [e.name for e in rng.sample(corpus, 50)]
    return services, queries


def serve(size: int, port: int) -> None:
    services, _ = asyncio.run(build_services(size))
    config = uvicorn.Config(
        create_app(services=services), host="127.0.0.1", port=port, log_level="warning"
    )
    uvicorn.Server(config).run()


def main(size: int, seconds: float, clients: int, load: str, repeats: int) -> None:
    threadpool_limits(limits=1, user_api="blas")
    port = free_port()
    command = [sys.executable, "-m", "bench.graphql", "--serve", str(port), "--size", str(size)]
    server = subprocess.Popen(command)
    try:
        asyncio.run(measure(port, size, seconds, clients, load, repeats))
    finally:
        server.terminate()
        server.wait(timeout=30)


async def wait_ready(client: httpx.AsyncClient, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            if (await client.get("/readyz")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.2)
    raise SystemExit("the server did not become ready in time")


def payload(query: str, tenant: TenantId = TENANT) -> dict[str, object]:
    return {"query": QUERY, "variables": {"q": query, "tenant": str(tenant)}}


@dataclass(frozen=True)
class LoadFigures:
    """What a load of concurrent clients gave: requests answered (a failure counted too),
    failures, the load's duration, and the median and p99 latency."""

    requests: int
    errors: int
    seconds: float
    median_ms: float
    p99_ms: float

    @property
    def rate(self) -> float:
        """Requests a second."""
        return self.requests / self.seconds

    def describe(self) -> str:
        return (
            f"{self.rate:.0f} requests/s, {self.errors} errors, median {self.median_ms:.1f} ms, "
            f"p99 {self.p99_ms:.1f} ms"
        )


# wrk's Lua hooks: `request` rotates the bodies, `response` counts failed
# responses (HTTP status or GraphQL errors), `done` prints one parsable line.
WRK_SCRIPT = """
bodies = {%(bodies)s}
sent = 0
failed = 0
request = function()
  sent = sent + 1
  return wrk.format("POST", "/graphql", {["Content-Type"] = "application/json"},
                    bodies[(sent %% #bodies) + 1])
end
response = function(status, headers, body)
  if status ~= 200 or string.find(body, '"errors"', 1, true) then failed = failed + 1 end
end
threads = {}
setup = function(thread) table.insert(threads, thread) end
done = function(summary, latency, requests)
  local failures = summary.errors.connect + summary.errors.read + summary.errors.write
                   + summary.errors.timeout
  for _, thread in ipairs(threads) do failures = failures + thread:get("failed") end
  io.write(string.format("RESULT %%d %%d %%d %%d %%d\\n", summary.requests, failures,
           summary.duration, latency:percentile(50), latency:percentile(99)))
end
"""


def wrk_load(
    port: int, queries: list[str], seconds: float, clients: int, tenant: TenantId = TENANT
) -> LoadFigures:
    """Run wrk: `clients` connections for `seconds`, sending `queries` in turn."""
    bodies = ", ".join(f"[==[{json.dumps(payload(q, tenant))}]==]" for q in queries)
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "graphql.lua"
        script.write_text(WRK_SCRIPT % {"bodies": bodies})
        command = ["wrk", "-t1", f"-c{clients}", f"-d{seconds:.0f}s", "--timeout", "30s"]
        command += ["-s", str(script), f"http://127.0.0.1:{port}/graphql"]
        output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    [line] = [line for line in output.splitlines() if line.startswith("RESULT ")]
    requests, errors, micros, p50, p99 = (int(v) for v in line.split()[1:])
    return LoadFigures(requests, errors, micros / 1e6, p50 / 1000, p99 / 1000)


async def run_load(
    port: int,
    queries: list[str],
    seconds: float,
    clients: int,
    load: str,
    tenant: TenantId = TENANT,
) -> LoadFigures:
    """`clients` concurrent clients for `seconds` against the server on `port`, sending
    `queries` in turn (`QUERY` in `tenant`): wrk when `load` is "wrk", else httpx."""
    if load == "wrk":
        return wrk_load(port, queries, seconds, clients, tenant)
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", limits=limits, timeout=30
    ) as client:
        return await httpx_load(client, poster(client, queries, tenant), seconds, clients)


def poster(
    client: httpx.AsyncClient, queries: list[str], tenant: TenantId = TENANT
) -> Callable[[], Awaitable[None]]:
    """A call that posts the next of `queries` and raises on an HTTP or GraphQL error."""
    cursor = iter(range(10**9))

    async def over_http() -> None:
        query = queries[next(cursor) % len(queries)]
        response = await client.post("/graphql", json=payload(query, tenant))
        response.raise_for_status()
        if "errors" in response.json():
            raise RuntimeError(response.text)

    return over_http


async def measure(
    port: int, size: int, seconds: float, clients: int, load: str, repeats: int
) -> None:
    services, queries = await build_services(size)
    base = f"http://127.0.0.1:{port}"
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as client:
        await wait_ready(client, time.monotonic() + 300)
        cursor = iter(range(10**9))

        async def in_process() -> object:
            return await services.retrieve(queries[next(cursor) % len(queries)], TENANT, k=10)

        http_ms = await median_ms(poster(client, queries), repeats)
        local_ms = await median_ms(in_process, repeats)
    figures = await run_load(port, queries, seconds, clients, load)
    print(f"machine: {machine()}; server: one uvicorn worker on 127.0.0.1")
    print(f"corpus: {size:,} entities, {2 * size:,} relationships, in memory")
    print(f"HTTP retrieve k=10 + relationships(first: 10) median: {http_ms:.2f} ms")
    print(f"in-process Retriever.retrieve k=10 median: {local_ms:.2f} ms")
    print(f"HTTP - in-process: {http_ms - local_ms:+.2f} ms")
    print(f"load ({load}): {clients} clients for {figures.seconds:.0f} s: {figures.describe()}")


async def httpx_load(
    client: httpx.AsyncClient,
    over_http: Callable[[], Awaitable[None]],
    seconds: float,
    clients: int,
) -> LoadFigures:
    """Python clients in this process; the same figures as `wrk_load`."""
    latencies: list[float] = []
    errors = 0
    stop_at = time.monotonic() + seconds

    async def worker() -> None:
        nonlocal errors
        while time.monotonic() < stop_at:
            started = time.perf_counter()
            try:
                await over_http()
            except (httpx.HTTPError, RuntimeError):
                errors += 1
            latencies.append((time.perf_counter() - started) * 1000)

    load_started = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(clients)))
    elapsed = time.monotonic() - load_started
    latencies.sort()
    p99 = latencies[int(0.99 * (len(latencies) - 1))]
    return LoadFigures(len(latencies), errors, elapsed, statistics.median(latencies), p99)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument(
        "--load", choices=["wrk", "httpx"], default="wrk" if shutil.which("wrk") else "httpx"
    )
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--serve", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parse_args(parser, size=300, seconds=1.0, clients=2, repeats=5)
    if args.serve:
        serve(args.size, args.serve)
    else:
        main(args.size, args.seconds, args.clients, args.load, args.repeats)
