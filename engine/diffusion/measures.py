"""Sample quality: mode weights (nearest mean), sliced 2-Wasserstein, RBF MMD^2, and DDIM
quality against the number of steps.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch

from engine.device import numpy_rng
from engine.diffusion.samplers import ddim_sample
from engine.diffusion.schedule import EpsFn, Schedule


def mode_weights(samples: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Fraction of samples whose nearest mean (Euclidean) is means[k], k = 0..K-1."""
    samples = np.asarray(samples, np.float64)
    ok = np.isfinite(samples).all(1)
    if not ok.any():
        return np.zeros(len(means))
    d = ((samples[ok, None, :] - np.asarray(means)[None]) ** 2).sum(-1)
    return np.bincount(d.argmin(1), minlength=len(means)) / ok.sum()


def sliced_wasserstein(a: np.ndarray, b: np.ndarray, n_proj: int = 128, seed: int = 0) -> float:
    """Sliced 2-Wasserstein distance: sqrt(mean_theta W2^2(<a, theta>, <b, theta>)) over
    n_proj random unit directions theta; 1-D W2 from sorted projections (unequal sizes are
    compared at the quantile levels (i + 1/2)/m of the smaller sample, m = its size)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return math.inf
    theta = numpy_rng(seed).standard_normal((n_proj, a.shape[1]))
    theta /= np.linalg.norm(theta, axis=1, keepdims=True)
    pa, pb = np.sort(a @ theta.T, 0), np.sort(b @ theta.T, 0)
    m = min(len(pa), len(pb))
    level = (np.arange(m) + 0.5) / m                   # empirical quantile function at these levels
    qa = pa[(level * len(pa)).astype(int)]
    qb = pb[(level * len(pb)).astype(int)]
    return float(np.sqrt(np.mean((qa - qb) ** 2)))


def mmd_rbf(a: np.ndarray, b: np.ndarray, bandwidth: float | None = None) -> float:
    """Biased squared MMD with k(x, y) = exp(-||x - y||^2 / (2 h^2)):
    MMD^2 = mean k(a, a') + mean k(b, b') - 2 mean k(a, b); h = median pairwise distance
    of the pooled sample when not given."""
    a, b = torch.as_tensor(np.asarray(a, np.float64)), torch.as_tensor(np.asarray(b, np.float64))
    if bandwidth is None:
        z = torch.cat([a, b])[:1000]
        bandwidth = float(torch.cdist(z, z).median().clamp_min(1e-6))
    k = lambda u, v: torch.exp(-torch.cdist(u, v) ** 2 / (2 * bandwidth ** 2))  # noqa: E731
    return float(k(a, a).mean() + k(b, b).mean() - 2 * k(a, b).mean())


METRICS: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "sliced Wasserstein": sliced_wasserstein,
    "MMD (RBF)": mmd_rbf,
}


@dataclass(frozen=True)
class StepsQuality:
    steps: np.ndarray        # (m,) S values
    etas: np.ndarray         # (e,) eta values
    distance: np.ndarray     # (e, m) metric(samples(S, eta), reference)
    metric: str


def steps_vs_quality(eps_fn: EpsFn, schedule: Schedule, reference: np.ndarray,
                     steps: Sequence[int] = (5, 10, 20, 50, 100), etas: Sequence[float] = (0.0, 1.0),
                     n: int = 1000, seed: int = 0, metric: str = "sliced Wasserstein",
                     device=None, progress: Callable[[float], None] | None = None) -> StepsQuality:
    """DDIM sample quality vs step count S for each eta (the DDIM paper's table, in 2-D)."""
    dist = np.zeros((len(etas), len(steps)))
    jobs = [(i, j) for i in range(len(etas)) for j in range(len(steps))]
    for done, (i, j) in enumerate(jobs, start=1):
        res = ddim_sample(eps_fn, n, schedule, steps=steps[j], eta=etas[i], seed=seed, device=device)
        dist[i, j] = METRICS[metric](res.samples, reference)
        if progress:
            progress(done / len(jobs))
    return StepsQuality(np.asarray(steps), np.asarray(etas, float), dist, metric)
