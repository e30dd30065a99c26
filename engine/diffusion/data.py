"""The 2-D data sets of the diffusion page (weighted mixtures, the two-mode Langevin demo, the
shared toy sets) and user CSV points, centred and scaled.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from engine.datasets import DATASETS, ToyData, gaussian_mixture, parse_points_csv as parse_csv


def weighted_mixture(n: int = 1000, seed: int = 0, noise: float = 0.25, k: int = 3,
                     first_weight: float = 0.6, radius: float = 2.0) -> ToyData:
    """k Gaussians N(r (cos 2pi j/k, sin 2pi j/k), noise^2 I) with weight first_weight on
    mode 0 and (1 - first_weight)/(k - 1) on each other mode."""
    if k < 2:
        raise ValueError("the mixture needs k >= 2 modes")
    angle = 2 * np.pi * np.arange(k) / k + np.pi / 2
    centers = radius * np.stack([np.cos(angle), np.sin(angle)], 1)
    w = np.full(k, (1 - first_weight) / (k - 1))
    w[0] = first_weight
    return gaussian_mixture(centers, n, noise, seed, w)


def two_mode_gap(n: int = 1000, seed: int = 0, noise: float = 0.5, gap: float = 8.0,
                 first_weight: float = 0.8) -> ToyData:
    """Two Gaussians at (-gap/2, 0) and (+gap/2, 0), weights (first_weight, 1 - first_weight):
    the Langevin demo."""
    centers = np.array([[-gap / 2, 0.0], [gap / 2, 0.0]])
    return gaussian_mixture(centers, n, noise, seed, np.array([first_weight, 1 - first_weight]))


DIFFUSION_DATA: dict[str, Callable[..., ToyData]] = {
    "mixture": weighted_mixture,
    "two_moons": DATASETS["two_moons"],
    "swiss_roll": DATASETS["swiss_roll"],
    "spiral": DATASETS["spiral"],
    "ring": DATASETS["ring"],
}


def parse_points_csv(text: str | bytes, max_rows: int = 5000) -> ToyData:
    """User points for this page: engine.datasets.parse_points_csv (x, y and an optional
    class column 0..9, header optional, validated), then centred and scaled so that the
    larger axis standard deviation is 1. Raises ValueError with a message a user can act on."""
    data = parse_csv(text, max_rows=max_rows, label_column=True, num_classes=10)
    pts = data.points.astype(np.float64)
    scale = pts.std(0).max()
    if scale <= 0:
        raise ValueError("all points are identical")
    return ToyData(((pts - pts.mean(0)) / scale).astype(np.float32), data.labels)
