"""Benchmark: the slowest operations the cost limit allows, on the demo data (run by hand).

    .venv/bin/python -m bench.cost_limit [--max-cost 20000] [--shapes N] [--tiny]

A server process (uvicorn, one worker, 127.0.0.1, free port, the demo
dataset in memory, `REDSTRING_MAX_COST` as given) answers, one at a time,
shapes built to cost as much as the limit allows: 1 to 30 aliases of
`retrieve(k: 100)` walking 1 to 3 hops of `relationships(first: n) { target }`
with the largest `n` allowed, and the same walks with the largest `k` for a
fixed `first`. For each: its cost, wall time, response size, and the
longest `GET /healthz` took while it ran (polled every 5 ms from a thread).
The slowest of them must finish well within the request deadline (10 s by
default); see docs/security.md, "Limits".
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator

import httpx
from graphql import parse

from bench.measure import free_port, machine
from bench.options import parse_args
from redstring.api.demo import DEMO_TENANT_ID
from redstring.api.operation_cost import operation_cost
from redstring.api.schema.build import build_schema

SCHEMA = build_schema()._schema


def cost(query: str) -> int:
    return operation_cost(SCHEMA, parse(query), None, {}) or 0


def aliased(count: int, field: str) -> str:
    return "{ " + " ".join(f"a{i}: {field}" for i in range(count)) + " }"


def retrieve(k: int, inner: str) -> str:
    return (
        f'retrieve(query: "acme", tenantId: "{DEMO_TENANT_ID}", k: {k}) '
        f"{{ matches {{ entity {{ name {inner} }} }} }}"
    )


def hops(first: int, depth: int) -> str:
    inner = ""
    for _ in range(depth):
        inner = f"relationships(first: {first}) {{ relationshipType target {{ name {inner} }} }}"
    return inner


def largest(make: Callable[[int], str], top: int, max_cost: int) -> int | None:
    """The largest `x` in 0..top whose `make(x)` costs at most `max_cost`."""
    allowed = [x for x in range(top + 1) if cost(make(x)) <= max_cost]
    return max(allowed) if allowed else None


def shapes(max_cost: int) -> Iterator[tuple[str, str]]:
    """Each shape's name and query, found as it is asked for: finding the largest `first`
    and `k` of every shape parses and costs a few thousand queries (seconds of CPU), which
    `--shapes N` spares for the shapes it does not run."""
    for count in (1, 2, 5, 10, 30):
        for depth in (1, 2, 3):

            def by_first(first: int, count: int = count, depth: int = depth) -> str:
                return aliased(count, retrieve(100, hops(first, depth)))

            def by_k(k: int, count: int = count, depth: int = depth) -> str:
                return aliased(count, retrieve(k, hops(50, depth)))

            first = largest(by_first, 200, max_cost)
            if first is not None:
                yield (
                    f"{count} x retrieve(k: 100), {depth} hop(s) of first: {first}",
                    by_first(first),
                )
            k = largest(by_k, 100, max_cost)
            if k:
                yield f"{count} x retrieve(k: {k}), {depth} hop(s) of first: 50", by_k(k)


def longest_healthz_while(
    base: str, run: Callable[[], httpx.Response]
) -> tuple[httpx.Response, float, float]:
    """`run()`'s response, its wall time, and the longest `/healthz` wait meanwhile."""
    longest = 0.0
    stop = threading.Event()

    def poll() -> None:
        nonlocal longest
        with httpx.Client(base_url=base) as client:
            while not stop.is_set():
                start = time.perf_counter()
                client.get("/healthz")
                longest = max(longest, time.perf_counter() - start)
                time.sleep(0.005)

    poller = threading.Thread(target=poll)
    poller.start()
    start = time.perf_counter()
    try:
        response = run()
    finally:
        took = time.perf_counter() - start
        stop.set()
        poller.join()
    return response, took, longest


def main(max_cost: int, most: int | None) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(
        os.environ,
        REDSTRING_DEMO="true",
        REDSTRING_MAX_COST=str(max_cost),
        REDSTRING_GRAPHIQL="false",
        REDSTRING_LOG_LEVEL="warning",
    )
    command = [
        sys.executable, "-m", "uvicorn", "--factory", "redstring.api.app:app_from_environment",
        "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
    ]  # fmt: skip
    server = subprocess.Popen(command, env=env)
    try:
        with httpx.Client(base_url=base, timeout=120) as client:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    if client.get("/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.2)
            print(f"max cost {max_cost}; {machine()}")
            for name, query in itertools.islice(shapes(max_cost), most):
                response, took, healthz = longest_healthz_while(
                    base, lambda q=query: client.post("/graphql", json={"query": q})
                )
                outcome = "ok" if "errors" not in response.json() else "refused"
                print(
                    f"{name:44s} cost {cost(query):>6}  {outcome:7s} {took * 1000:6.0f} ms  "
                    f"{len(response.content) / 1e6:5.2f} MB  /healthz up to {healthz * 1000:5.0f} ms",
                    flush=True,
                )
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-cost", type=int, default=20_000)
    parser.add_argument("--shapes", type=int, default=None, help="run only the first N shapes")
    args = parse_args(parser, shapes=2)
    main(args.max_cost, args.shapes)
