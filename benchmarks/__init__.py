"""`python -m benchmarks` prints the performance table.

Each module benchmarks/bench_<topic>.py exposes

    BENCHMARKS: dict[str, Callable[[], Measurement]]

(name -> a function that runs the work and returns a Measurement). They are discovered
automatically; `python -m benchmarks gan` runs only modules whose name contains "gan".

DLPLAY_BENCH_SMOKE=1 runs every benchmark at a token size (`sized(full, smoke)`: one round,
no warm-up, a few iterations): its numbers mean nothing, but every import and call path runs
(tests/test_benchmarks_smoke.py).
"""
from __future__ import annotations

import contextlib
import os
import statistics
import time
from dataclasses import dataclass
from typing import Callable

SMOKE = os.environ.get("DLPLAY_BENCH_SMOKE", "").strip() not in ("", "0")


def sized(full, smoke):
    """`full` for a measurement, `smoke` under DLPLAY_BENCH_SMOKE=1."""
    return smoke if SMOKE else full


@dataclass(frozen=True)
class Measurement:
    value: float          # the number reported (seconds, it/s, ...)
    unit: str             # "ms", "it/s", "x plain loop", ...
    note: str = ""        # what it is measured against / the target


def median_time(fn: Callable[[], object], repeat: int = 5, warmup: int = 1) -> float:
    """Median wall time of fn() in seconds over `repeat` runs after `warmup` runs."""
    repeat, warmup = sized(repeat, 1), sized(warmup, 0)
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def alternating_times(runs: dict[str, Callable[[], object]], rounds: int = 9,
                      warmup: int = 1) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) seconds of every run in `rounds` alternating rounds (run a, run b, run a,
    ...), after `warmup` calls each, so a change of machine load hits all runs alike.
    Compare runs per round (median of the per-round ratios)."""
    rounds, warmup = sized(rounds, 1), sized(warmup, 0)
    for fn in runs.values():
        for _ in range(warmup):
            fn()
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, fn in runs.items():
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            times[name].append((time.perf_counter() - t0, time.process_time() - c0))
    return times


@contextlib.contextmanager
def torch_threads(n: int | None):
    """Run a block with `n` torch intra-op threads (None: leave as is), then restore."""
    import torch       # here, so that `python -m benchmarks --help` starts without torch
    before = torch.get_num_threads()
    if n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
