"""Gradient-descent page: the two computations a slider drag triggers (targets:
< 100 ms each on the 2-core CPU): the nine-method race x 1000 steps and the 60 x 60
heavy-ball rate map x 300 steps; NumPy backend (what the page uses on CPU) and torch CPU."""
from __future__ import annotations

import statistics
import time

import numpy as np

from benchmarks import Measurement
from engine import optim

PROBLEM = optim.Quadratic.from_spectrum((0.05, 1.0), angle_deg=30.0)
ENTRIES = [optim.RaceEntry(m, lr) for m, lr in
           (("gd", 1.4), ("momentum", 1.4), ("nesterov", 1.4), ("adagrad", 0.5),
            ("rmsprop", 0.05), ("adam", 0.1), ("amsgrad", 0.1), ("newton", 1.0),
            ("rprop", 0.1))]
LRS = np.geomspace(0.01, 4.2, 60)
BETAS = np.linspace(0.0, 0.99, 60)


def _wall_and_cpu(fn, repeat: int = 7) -> tuple[float, float]:
    """Median wall time and median process CPU time (s) after one warm-up. The CPU time is
    what the run costs on an otherwise idle core; wall time also counts waiting for the CPU
    when other processes compete (these 2-core machines are often shared)."""
    fn()
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def _measure(fn, what: str, device) -> Measurement:
    wall, cpu = _wall_and_cpu(fn)
    backend = "NumPy" if device is None else f"torch {device}"
    return Measurement(wall * 1e3, "ms", f"{what}, {backend}; CPU time {cpu * 1e3:.0f} ms; "
                                         f"target < 100 ms")


def race(device=None) -> Measurement:
    return _measure(lambda: optim.race(PROBLEM, ENTRIES, (-2.5, 1.5), 1000, grad_noise=0.1,
                                       device=device), "9 methods x 1000 steps, one race()",
                    device)


def rate_map(device=None) -> Measurement:
    return _measure(lambda: optim.rate_map(PROBLEM, LRS, BETAS, 300, device=device),
                    "60 x 60 (lr, beta) heavy-ball runs x 300 steps", device)


BENCHMARKS = {
    "gradient_descent: race, 9 methods x 1000 steps (NumPy)": race,
    "gradient_descent: race, 9 methods x 1000 steps (torch cpu)": lambda: race("cpu"),
    "gradient_descent: rate map 60x60 x 300 steps (NumPy)": rate_map,
    "gradient_descent: rate map 60x60 x 300 steps (torch cpu)": lambda: rate_map("cpu"),
}
