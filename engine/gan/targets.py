"""GAN targets: 2-D point sets (mixtures carry their centers and std) and a plotting box.

    1-D bimodal: x₁ ~ ½N(−gap, σ²) + ½N(+gap, σ²), x₂ = 0
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from engine.datasets import ToyData, grid, ring, spiral, two_moons
from engine.device import numpy_rng


POOL_SIZE = 20_000   # real points drawn once per target; batches are drawn from this pool


def bimodal_1d(n: int = 1000, seed: int = 0, noise: float = 0.1, gap: float = 1.5) -> ToyData:
    """1-D bimodal target on the x-axis: x₁ ~ ½N(−gap, noise²) + ½N(+gap, noise²), x₂ = 0."""
    rng = numpy_rng(seed)
    labels = rng.integers(0, 2, n)
    centers = np.array([[-gap, 0.0], [gap, 0.0]], dtype=np.float32)
    pts = centers[labels].copy()
    pts[:, 0] += noise * rng.standard_normal(n)
    return ToyData(pts.astype(np.float32), labels.astype(np.int64), centers, float(noise),
                   np.array([0.5, 0.5]))


# name -> gen(n, seed, std) -> ToyData. Mixtures (ring, grid, bimodal) carry centers + std.
TARGETS: dict[str, Callable[..., ToyData]] = {
    "ring of 8": lambda n, seed, std: ring(n, seed, noise=std, k=8, radius=2.0),
    "5x5 grid": lambda n, seed, std: grid(n, seed, noise=std, k=5, spacing=1.0),
    "two moons": lambda n, seed, std: two_moons(n, seed, noise=std),
    "spiral": lambda n, seed, std: spiral(n, seed, noise=std),
    "1-D bimodal": lambda n, seed, std: bimodal_1d(n, seed, noise=std),
}


def make_target(name: str, std: float = 0.05, seed: int = 0, n: int = POOL_SIZE) -> ToyData:
    """TARGETS[name](n, seed, std) with a clear error for an unknown name or a bad std."""
    if name not in TARGETS:
        raise KeyError(f"unknown target {name!r}; choose one of {list(TARGETS)}")
    if not (0 < std <= 1.0):
        raise ValueError("std must be in (0, 1]")
    return TARGETS[name](int(n), int(seed), float(std))


def data_box(points: np.ndarray, margin: float = 0.5) -> tuple[float, float, float, float]:
    """(x_min, x_max, y_min, y_max) of the points, padded, with equal-ish extent >= 1."""
    lo, hi = points.min(0), points.max(0)
    mid, half = (lo + hi) / 2, np.maximum((hi - lo) / 2, 0.5) + margin
    return (float(mid[0] - half[0]), float(mid[0] + half[0]),
            float(mid[1] - half[1]), float(mid[1] + half[1]))
