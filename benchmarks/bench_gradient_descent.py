"""Gradient-descent page: the two computations a slider drag triggers (issue #3 targets:
< 100 ms each on the 2-core CPU): the nine-method race x 1000 steps and the 60 x 60
heavy-ball rate map x 300 steps; NumPy backend (what the page uses on CPU) and torch CPU."""
from __future__ import annotations

import numpy as np

from benchmarks import Measurement, median_time
from engine import optim

PROBLEM = optim.Quadratic.from_spectrum((0.05, 1.0), angle_deg=30.0)
ENTRIES = [optim.RaceEntry(m, lr) for m, lr in
           (("gd", 1.4), ("momentum", 1.4), ("nesterov", 1.4), ("adagrad", 0.5),
            ("rmsprop", 0.05), ("adam", 0.1), ("amsgrad", 0.1), ("newton", 1.0),
            ("rprop", 0.1))]
LRS = np.geomspace(0.01, 4.2, 60)
BETAS = np.linspace(0.0, 0.99, 60)


def race(device=None) -> Measurement:
    t = median_time(lambda: optim.race(PROBLEM, ENTRIES, (-2.5, 1.5), 1000, grad_noise=0.1,
                                       device=device), repeat=7)
    return Measurement(t * 1e3, "ms", f"9 methods x 1000 steps, one race() call, "
                                      f"{'NumPy' if device is None else 'torch ' + device}; "
                                      f"target < 100 ms")


def rate_map(device=None) -> Measurement:
    t = median_time(lambda: optim.rate_map(PROBLEM, LRS, BETAS, 300, device=device), repeat=7)
    return Measurement(t * 1e3, "ms", f"60 x 60 (lr, beta) heavy-ball runs x 300 steps, "
                                      f"{'NumPy' if device is None else 'torch ' + device}; "
                                      f"target < 100 ms")


BENCHMARKS = {
    "gradient_descent: race, 9 methods x 1000 steps (NumPy)": race,
    "gradient_descent: race, 9 methods x 1000 steps (torch cpu)": lambda: race("cpu"),
    "gradient_descent: rate map 60x60 x 300 steps (NumPy)": rate_map,
    "gradient_descent: rate map 60x60 x 300 steps (torch cpu)": lambda: rate_map("cpu"),
}
