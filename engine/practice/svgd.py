"""Stein variational gradient descent in 1-D (notes 004, Sec. 4.4.5, Fig. 4.12).

Particles x_1..x_n move along the kernelised Stein direction

    φ(x_i) = 1/n Σ_j [ k(x_j, x_i) ∇log p(x_j) + ∂k(x_j, x_i)/∂x_j ],     x_i ← x_i + ε φ(x_i)

with the RBF kernel k(a, b) = exp(−(a − b)² / h), so ∂k(x_j, x_i)/∂x_j = −2 (x_j − x_i)/h ·
k(x_j, x_i): the first term pulls particles up the target's density, the second pushes them
apart (a bandwidth h too small leaves them independent gradient ascents, too large pushes them
together). h = "median": med² / log n with med the median pairwise distance (Liu & Wang).

Target: a mixture of two Gaussians, p(x) = w N(x; −m, 1) + (1 − w) N(x; m, 1)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Mixture:
    """p(x) = w N(x; −m, s²) + (1 − w) N(x; m, s²)."""
    m: float = 2.0
    w: float = 1 / 3
    s: float = 1.0

    @property
    def mean(self) -> float:
        """E[x] = (1 − 2w) m."""
        return (1 - 2 * self.w) * self.m

    @property
    def std(self) -> float:
        """sd[x] = √(s² + m² − E[x]²) (each component's variance plus the spread of the means)."""
        return math.sqrt(self.s ** 2 + self.m ** 2 - self.mean ** 2)

    def density(self, x: np.ndarray) -> np.ndarray:
        return (self.w * _normal(x, -self.m, self.s)
                + (1 - self.w) * _normal(x, self.m, self.s))

    def score(self, x: np.ndarray) -> np.ndarray:
        """∇log p(x) = Σ_c r_c(x) (μ_c − x)/s², r_c the component's responsibility."""
        a = self.w * _normal(x, -self.m, self.s)
        b = (1 - self.w) * _normal(x, self.m, self.s)
        tot = np.maximum(a + b, 1e-300)
        return (a * (-self.m - x) + b * (self.m - x)) / (tot * self.s ** 2)


def _normal(x: np.ndarray, mu: float | np.ndarray, s: float) -> np.ndarray:
    return np.exp(-0.5 * ((x - mu) / s) ** 2) / (s * math.sqrt(2 * math.pi))


def median_bandwidth(x: np.ndarray) -> float:
    """h = med² / log n (med: the median pairwise distance), at least 1e-3."""
    d = np.abs(x[:, None] - x[None, :])
    n = len(x)
    med = float(np.median(d[np.triu_indices(n, 1)])) if n > 1 else 1.0
    return max(med ** 2 / math.log(max(n, 2)), 1e-3)


def svgd_direction(x: np.ndarray, score: np.ndarray, h: float) -> np.ndarray:
    """φ(x_i) = 1/n Σ_j [k(x_j, x_i) score_j − 2 (x_j − x_i)/h · k(x_j, x_i)]; x, score (n,)."""
    diff = x[:, None] - x[None, :]                  # (n, n): [j, i] = x_j − x_i
    k = np.exp(-diff ** 2 / h)                      # (n, n)
    drive = k * score[:, None]                      # (n, n)
    repulse = -2.0 * diff / h * k                   # (n, n)
    return (drive + repulse).mean(0)                # (n,)


@dataclass(frozen=True)
class SvgdRun:
    frames: np.ndarray      # (F, n) the particles at the recorded iterations
    iterations: np.ndarray  # (F,) which iterations
    bandwidths: np.ndarray  # (F,) h used at each recorded iteration


def run_svgd(target: Mixture, n: int, iterations: int, step: float, bandwidth: float | str,
             seed: int = 0, start: tuple[float, float] = (-10.0, 1.0),
             frames: int = 60) -> SvgdRun:
    """n particles from N(start[0], start[1]²) moved by `iterations` SVGD steps of size
    `step` (with Adagrad-free plain steps); h fixed, or "median" recomputed every step."""
    if n < 2:
        raise ValueError("SVGD needs at least 2 particles: one particle feels no repulsion "
                         "and climbs to the nearest mode, it cannot represent a density.")
    rng = np.random.default_rng(int(seed))
    x = start[0] + start[1] * rng.standard_normal(int(n))
    keep = set(np.unique(np.linspace(0, iterations, frames).round().astype(int)).tolist())
    out, its, hs = [], [], []
    for t in range(int(iterations) + 1):
        h = median_bandwidth(x) if bandwidth == "median" else float(bandwidth)
        if t in keep:
            out.append(x.copy())
            its.append(t)
            hs.append(h)
        if t == iterations:
            break
        x = x + step * svgd_direction(x, target.score(x), h)
    return SvgdRun(np.asarray(out), np.asarray(its), np.asarray(hs))


def kde(x: np.ndarray, grid: np.ndarray, width: float = 0.3) -> np.ndarray:
    """Gaussian kernel density estimate of the particles on `grid` (bandwidth `width`)."""
    return _normal(grid[:, None], x[None, :], width).mean(1)


def mode_share(x: np.ndarray) -> float:
    """The share of particles right of 0 (the heavier mode's side)."""
    return float(np.mean(x > 0))
