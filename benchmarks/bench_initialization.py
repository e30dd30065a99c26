"""Signal propagation (engine/signal/__init__.py) and the deep-net trainer (engine/signal/training.py):
`propagate` at the issue's size and at the page's default, the mean-field map, and a live tick."""
from __future__ import annotations

import time

import torch

from benchmarks import Measurement, median_time
from engine import signal as S
from engine.signal import training as T


def _matmul_floor(depth: int, width: int, n: int) -> float:
    """Seconds for depth forward + depth backward matmuls of (n, width) x (width, width)."""
    x, w = torch.randn(n, width), torch.randn(width, width)
    t0 = time.perf_counter()
    for _ in range(2 * depth):
        x @ w
    return time.perf_counter() - t0


def _propagate(depth: int, width: int, n: int, target_ms: float | None = None) -> Measurement:
    t = median_time(lambda: S.propagate(depth, width, "tanh", "normal", n, seed=0), repeat=3)
    floor = _matmul_floor(depth, width, n)
    note = (f"forward + backward + per-layer stats, {torch.get_num_threads()} torch thread(s); "
            f"the {2 * depth} matmuls alone take {floor * 1e3:.0f} ms here")
    if target_ms is not None:
        note += f"; target < {target_ms:.0f} ms"
    return Measurement(t * 1e3, "ms", note)


def _map() -> Measurement:
    t = median_time(lambda: S.variance_map("tanh", depth=50, resolution=60), repeat=3)
    return Measurement(t * 1e3, "ms", "tanh (σ_w, σ_b) map, 60x60 grid, 50 layers, "
                                      "80-node Gauss-Hermite")


def _train() -> Measurement:
    tr = T.DeepNetsTrainer(T.DeepNetsConfig(), device="cpu")
    tr.step(2)
    t = median_time(lambda: tr.step(20), repeat=3, warmup=0)
    return Measurement(20 / t, "it/s", "3 nets x 20 layers x 64 wide, batch 64, SGD "
                                       "(one iteration = one step of each net)")


BENCHMARKS = {
    "initialization: propagate 50 x 512 x 1024": lambda: _propagate(50, 512, 1024, 200.0),
    "initialization: propagate 50 x 256 x 512 (page default)": lambda: _propagate(50, 256, 512),
    "initialization: mean-field map": _map,
    "initialization: train 3 deep nets on digits": _train,
}
