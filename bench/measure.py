"""Timing and memory figures shared by the benchmarks."""

from __future__ import annotations

import os
import platform
import resource
import statistics
import time
from collections.abc import Awaitable, Callable


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def median_ms(run: Callable[[], Awaitable[object]], repeats: int) -> float:
    """Median wall time of `run` in milliseconds, after one warm-up call."""
    await run()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        await run()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


async def alternating_medians_ms(
    runs: dict[str, Callable[[], Awaitable[object]]], repeats: int
) -> dict[str, float]:
    """Median wall time of each run in milliseconds, the runs taken in turn (order
    reversed every round) after one warm-up each, so drift on a shared machine
    falls on all of them alike."""
    for run in runs.values():
        await run()
    samples: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for round_ in range(repeats):
        for name in names if round_ % 2 == 0 else reversed(names):
            start = time.perf_counter()
            await runs[name]()
            samples[name].append((time.perf_counter() - start) * 1000)
    return {name: statistics.median(values) for name, values in samples.items()}


def machine() -> str:
    """Processor, core count and Python version, for the figures' heading."""
    cpu = platform.processor() or platform.machine()
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"
