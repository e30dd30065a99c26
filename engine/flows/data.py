"""The flow page's 2-D data sets, seeded, each standardised (mean 0, overall standard deviation
1), then split into training and held-out points.

    moons         two interleaved half circles (engine.datasets.two_moons)
    rings         two concentric circles, radii 1 and 2, N(0, 0.08^2) noise
    checkerboard  uniform on the 8 dark squares of a 4x4 board on [-2, 2]^2
    spiral        two interleaved spirals (engine.datasets.spiral)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from engine.datasets import spiral, two_moons


def _moons(n: int, rng: np.random.Generator) -> np.ndarray:
    return two_moons(n=n, seed=int(rng.integers(2 ** 31)), noise=0.05).points


def _rings(n: int, rng: np.random.Generator) -> np.ndarray:
    r = rng.choice([1.0, 2.0], size=n)
    angle = rng.uniform(0, 2 * np.pi, n)
    x = np.stack([r * np.cos(angle), r * np.sin(angle)], 1)
    return x + 0.08 * rng.standard_normal((n, 2))


def _checkerboard(n: int, rng: np.random.Generator) -> np.ndarray:
    x1 = rng.uniform(-2, 2, n)
    x2 = rng.uniform(0, 1, n) - 2 * rng.integers(0, 2, n) + (np.floor(x1) % 2)
    return np.stack([x1, x2], 1)


def _spiral(n: int, rng: np.random.Generator) -> np.ndarray:
    return spiral(n=n, seed=int(rng.integers(2 ** 31)), noise=0.05).points


GENERATORS: dict[str, Callable[[int, np.random.Generator], np.ndarray]] = {
    "moons": _moons, "rings": _rings, "checkerboard": _checkerboard, "spiral": _spiral}


@dataclass(frozen=True)
class FlowData:
    name: str
    train: np.ndarray        # (n_train, 2) float32
    held_out: np.ndarray     # (n_held, 2) float32


def flow_data(name: str, n_train: int = 1000, n_held: int = 500, seed: int = 0) -> FlowData:
    """n_train + n_held points of GENERATORS[name], standardised together,
    x <- (x - mean) / sigma with sigma^2 = mean |x - mean|^2 / 2 (one scale for both
    coordinates: the shape keeps its aspect), then split."""
    if name not in GENERATORS:
        raise ValueError(f"unknown data set {name!r}; choose one of {', '.join(GENERATORS)}")
    rng = np.random.default_rng(seed)
    x = np.asarray(GENERATORS[name](n_train + n_held, rng), dtype=np.float64)
    x = x[rng.permutation(len(x))]
    x = x - x.mean(0)
    x = x / np.sqrt((x ** 2).mean())                        # one std over both axes
    x = x.astype(np.float32)
    return FlowData(name, x[:n_train], x[n_train:])
