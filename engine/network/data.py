"""TensorFlow Playground's four 2-D classification datasets, its noise and its train/test split,
seeded (numpy). Points lie in the square [-6, 6]^2 that the page draws; labels y in {0, 1}.

    circle   class 1 inside radius 2.5 (r ~ U(0, 2.5)), class 0 on the ring r ~ U(3.5, 5); the
             label is read off the point moved by noise * U(-5, 5) per coordinate
    xor      x ~ U(-5, 5) per coordinate, pushed 0.3 away from the axes; y = [x1' x2' >= 0] with
             x' = x + noise * U(-5, 5)
    gauss    N((2, 2), v I) for class 1, N((-2, -2), v I) for class 0, v = 0.5 + 7 noise
    spiral   two arms r = 5 t, angle 3.5 pi t + {0, pi}, t = i / (n/2), plus noise * U(-1, 1)

`noise` runs from 0 to 0.5 as the playground's 0-50 %."""
from __future__ import annotations

import numpy as np

DATASETS = ("circle", "xor", "gauss", "spiral")
BOX = (-6.0, 6.0, -6.0, 6.0)


def _circle(n: int, noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    half = n // 2
    r = np.concatenate([rng.uniform(0, 2.5, half), rng.uniform(3.5, 5.0, n - half)])  # (n,)
    angle = rng.uniform(0, 2 * np.pi, n)                                                # (n,)
    x = np.stack([r * np.sin(angle), r * np.cos(angle)], 1)                             # (n, 2)
    moved = x + noise * rng.uniform(-5, 5, (n, 2))                                      # (n, 2)
    return x, (np.linalg.norm(moved, axis=1) < 2.5).astype(np.float64)


def _xor(n: int, noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x = rng.uniform(-5, 5, (n, 2))                                                      # (n, 2)
    x = x + np.where(x > 0, 0.3, -0.3)
    moved = x + noise * rng.uniform(-5, 5, (n, 2))                                      # (n, 2)
    return x, (moved[:, 0] * moved[:, 1] >= 0).astype(np.float64)


def _gauss(n: int, noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    half = n // 2
    std = np.sqrt(0.5 + 7.0 * noise)
    y = np.concatenate([np.ones(half), np.zeros(n - half)])                             # (n,)
    centre = np.where(y[:, None] == 1, 2.0, -2.0)                                       # (n, 1)
    return centre + std * rng.standard_normal((n, 2)), y


def _spiral(n: int, noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    half = n // 2
    xs, ys = [], []
    for label, (count, shift) in enumerate(((n - half, np.pi), (half, 0.0))):
        t = np.arange(count) / max(count, 1)                                            # (m,)
        r, a = 5 * t, 3.5 * np.pi * t + shift
        arm = np.stack([r * np.sin(a), r * np.cos(a)], 1)                               # (m, 2)
        xs.append(arm + noise * rng.uniform(-1, 1, (count, 2)))
        ys.append(np.full(count, float(label)))
    return np.concatenate(xs), np.concatenate(ys)


_MAKERS = {"circle": _circle, "xor": _xor, "gauss": _gauss, "spiral": _spiral}


def make_dataset(kind: str, n: int = 500, noise: float = 0.0,
                 seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(x (n, 2) float32, y (n,) float32 in {0, 1}) of one of DATASETS, seeded."""
    if kind not in _MAKERS:
        raise ValueError(f"unknown dataset {kind!r}: one of {', '.join(DATASETS)}")
    if n < 2:
        raise ValueError("a dataset needs at least 2 points")
    if not 0.0 <= noise <= 0.5:
        raise ValueError("noise runs from 0 to 0.5")
    x, y = _MAKERS[kind](int(n), float(noise), np.random.default_rng(int(seed)))
    return x.astype(np.float32), y.astype(np.float32)


def split(x: np.ndarray, y: np.ndarray, train_share: float,
          seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x_train, y_train, x_test, y_test): a seeded shuffle, the first round(train_share n)
    points to train on (at least 1 on each side)."""
    n = len(x)
    order = np.random.default_rng(int(seed) + 1).permutation(n)
    k = min(max(int(round(float(train_share) * n)), 1), n - 1)
    tr, te = order[:k], order[k:]
    return x[tr], y[tr], x[te], y[te]
