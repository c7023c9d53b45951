"""Timing and memory figures shared by the benchmarks."""

from __future__ import annotations

import os
import platform
import resource
import socket
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass


def free_port() -> int:
    """A TCP port of 127.0.0.1 free now, for a server a bench starts."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def awaitable(work: Callable[[], object]) -> Callable[[], Awaitable[object]]:
    """`work`, a plain call, as the coroutine function the medians below time."""

    async def run() -> object:
        return work()

    return run


async def median_ms(run: Callable[[], Awaitable[object]], repeats: int) -> float:
    """Median wall time of `run` in milliseconds, after one warm-up call."""
    await run()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        await run()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


@dataclass(frozen=True)
class Medians:
    """Median wall time and median CPU time of this process, in milliseconds."""

    wall_ms: float
    cpu_ms: float


async def alternating_medians(
    runs: dict[str, Callable[[], Awaitable[object]]], repeats: int
) -> dict[str, Medians]:
    """Median wall and client CPU time of each run, the runs taken in turn (order
    reversed every round) after one warm-up each, so drift on a shared machine
    falls on all of them alike. The CPU time is this process's alone: a remote
    server's work shows only in the wall time."""
    for run in runs.values():
        await run()
    wall: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for round_ in range(repeats):
        for name in names if round_ % 2 == 0 else reversed(names):
            start, start_cpu = time.perf_counter(), time.process_time()
            await runs[name]()
            cpu[name].append((time.process_time() - start_cpu) * 1000)
            wall[name].append((time.perf_counter() - start) * 1000)
    return {
        name: Medians(statistics.median(wall[name]), statistics.median(cpu[name])) for name in runs
    }


async def alternating_medians_ms(
    runs: dict[str, Callable[[], Awaitable[object]]], repeats: int
) -> dict[str, float]:
    """`alternating_medians`, wall time only."""
    return {name: m.wall_ms for name, m in (await alternating_medians(runs, repeats)).items()}


def machine() -> str:
    """Processor, core count and Python version, for the figures' heading."""
    cpu = platform.processor() or platform.machine()
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"
