"""Per-keystroke latency for `bench.quality`: a prefix against its whole word, over HTTP.

A real `redstring serve` (one uvicorn worker, 127.0.0.1, a free port, memory
backend, its default embedding provider, the cache of query embeddings off so
that no request is answered from it) holds made-up names
(`bench.quality_sets.made_up_names`), loaded through the API. For words
drawn from them, each prefix of 3 letters up to the word less one letter is
sent as a hybrid `retrieve(k: 10)`, and the same request with the whole word,
the two taken in turn (which goes first alternates), so drift on the shared
machine falls on both alike.
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.load import LOAD_BATCH, RETRIEVE, UPSERT_ENTITIES, graphql, percentile
from bench.measure import free_port
from bench.quality_sets import fold, made_up_names

MIN_PREFIX = 3


@dataclass(frozen=True)
class KeystrokeResult:
    entities: int
    pairs: int
    prefix_ms: list[float]
    word_ms: list[float]

    def p(self, samples: list[float], share: float) -> float:
        return percentile(sorted(samples), share)


def server_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDSTRING_")}
    env.update(REDSTRING_BACKEND="memory", REDSTRING_DEMO="false", REDSTRING_QUERY_CACHE_SIZE="0")
    return env


async def wait_ready(
    client: httpx.AsyncClient, process: subprocess.Popen[bytes], log: Path
) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited ({process.returncode}):\n{tail(log)}")
        try:
            if (await client.get("/readyz")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.2)
    raise SystemExit(f"the server was not ready in time:\n{tail(log)}")


def tail(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:]


def launch(port: int, log: Path) -> subprocess.Popen[bytes]:
    """`redstring serve` on 127.0.0.1:`port`, its output into `log`."""
    command = [sys.executable, "-m", "redstring.api", "serve"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--workers", "1"]
    with log.open("wb") as out:
        return subprocess.Popen(
            command, env=server_environment(), stdout=out, stderr=subprocess.STDOUT
        )


async def measure(size: int, words: int, seed: int) -> KeystrokeResult:
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="redstring-quality-") as folder:
        log = Path(folder) / "server.log"
        process = launch(port, log)
        try:
            async with httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{port}", timeout=120
            ) as client:
                await wait_ready(client, process, log)
                return await over(client, size, words, seed)
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def over(client: httpx.AsyncClient, size: int, words: int, seed: int) -> KeystrokeResult:
    tenant = str(uuid.uuid4())
    names = made_up_names(size, seed)
    for low in range(0, size, LOAD_BATCH):
        batch = [
            {"id": str(uuid.uuid5(uuid.NAMESPACE_URL, n)), "name": n, "entityType": "brand"}
            for n in names[low : low + LOAD_BATCH]
        ]
        await graphql(client, UPSERT_ENTITIES, {"tenant": tenant, "entities": batch})
    rng = random.Random(seed + 2)
    chosen = [max(fold(n).split(), key=len) for n in rng.sample(names, min(words, size))]
    pairs = [(w[:n], w) for w in chosen for n in range(MIN_PREFIX, len(w))]

    async def send(text: str) -> float:
        variables = {"q": text, "tenant": tenant, "mode": "HYBRID", "types": None}
        start = time.perf_counter()
        await graphql(client, RETRIEVE, variables)
        return (time.perf_counter() - start) * 1000

    for prefix, word in pairs[:5]:  # warm-up, not counted
        await send(prefix)
        await send(word)
    prefix_ms, word_ms = [], []
    for i, (prefix, word) in enumerate(pairs):
        if i % 2 == 0:
            prefix_ms.append(await send(prefix))
            word_ms.append(await send(word))
        else:
            word_ms.append(await send(word))
            prefix_ms.append(await send(prefix))
    return KeystrokeResult(size, len(pairs), prefix_ms, word_ms)
