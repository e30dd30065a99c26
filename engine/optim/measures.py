"""Theory and measurements for engine.optim's runs: GD and heavy-ball rates in closed form
(gd_rate = max_i |1 - lr l_i|, optimal lr 2 / (l_min + l_max), heavy_ball_rate), the measured
per-step contraction of an error sequence (measured_rate), the heavy-ball rate map, errors in
the Hessian's eigen-coordinates, and steps_to_reach."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from engine.optim.problems import DIVERGENCE_RADIUS, Landscape, _like, _xp
from engine.optim.runs import Trajectory, _prepare

# --------------------------------------------------------------------------------------
# Theory
# --------------------------------------------------------------------------------------

def gd_rate(lr: float, eigenvalues: Sequence[float]) -> float:
    """max_i |1 - lr l_i|: the factor by which GD shrinks the slowest error component per step."""
    lam = np.asarray(eigenvalues, dtype=np.float64)
    return float(np.max(np.abs(1.0 - lr * lam)))


def _positive(eigenvalues) -> tuple[float, float]:
    lam = np.asarray(eigenvalues, dtype=np.float64)
    mu, big = float(lam.min()), float(lam.max())
    if mu <= 0:
        raise ValueError("the optimal step sizes need positive eigenvalues (a minimum); "
                         f"got {tuple(lam)}")
    return mu, big


def optimal_gd_lr(eigenvalues: Sequence[float]) -> float:
    """2 / (l_min + l_max): balances the slowest and the fastest direction."""
    mu, big = _positive(eigenvalues)
    return 2.0 / (mu + big)


def optimal_gd_rate(eigenvalues: Sequence[float]) -> float:
    """(k - 1) / (k + 1), k = l_max / l_min."""
    mu, big = _positive(eigenvalues)
    k = big / mu
    return (k - 1) / (k + 1)


def optimal_momentum(eigenvalues: Sequence[float]) -> tuple[float, float]:
    """Heavy ball (v <- beta v + g, x <- x - lr v): lr = 4 / (sqrt(L) + sqrt(mu))^2,
    beta = ((sqrt(k) - 1) / (sqrt(k) + 1))^2, k = L / mu."""
    mu, big = _positive(eigenvalues)
    k = big / mu
    return 4.0 / (math.sqrt(big) + math.sqrt(mu)) ** 2, ((math.sqrt(k) - 1) / (math.sqrt(k) + 1)) ** 2


def optimal_momentum_rate(eigenvalues: Sequence[float]) -> float:
    """(sqrt(k) - 1) / (sqrt(k) + 1): the heavy ball's rate at optimal_momentum."""
    mu, big = _positive(eigenvalues)
    k = big / mu
    return (math.sqrt(k) - 1) / (math.sqrt(k) + 1)


def heavy_ball_rate(lr, beta, eigenvalues: Sequence[float]):
    """Spectral radius of the heavy ball on a quadratic: per eigenvalue l the error obeys
    z_{k+1} = (1 + beta - lr l) z_k - beta z_{k-1}, whose roots solve
    mu^2 - (1 + beta - lr l) mu + beta = 0; the rate is the largest |mu| over both l.
    lr and beta may be arrays (broadcast); beta = 0 gives gd_rate."""
    lr = np.asarray(lr, dtype=np.float64)[..., None]
    beta = np.asarray(beta, dtype=np.float64)[..., None]
    lam = np.asarray(eigenvalues, dtype=np.float64)
    t = 1.0 + beta - lr * lam
    disc = (t * t - 4.0 * beta).astype(np.complex128)
    root = np.sqrt(disc)
    r = np.maximum(np.abs((t + root) / 2), np.abs((t - root) / 2)).max(-1)
    return float(r) if r.ndim == 0 else r


# --------------------------------------------------------------------------------------
# Measurements
# --------------------------------------------------------------------------------------

FLOOR = 1e-12   # error ratios below this are rounding noise for float64 (|x*| ~ 1)


def distance_to_minimizer(problem: Landscape, points: np.ndarray) -> np.ndarray:
    """|x_k - x*| for points (..., 2)."""
    return np.linalg.norm(np.asarray(points) - problem.minimizer, axis=-1)


def measured_rate(errors: np.ndarray, floor: float = FLOOR, ceiling: float = 1e12):
    """Per-step contraction of an error sequence e_0..e_n (axis 0; more axes = more runs):
    (E_b / E_a)^(1 / (b - a)) with b the last step whose e_b / e_0 lies in [floor, ceiling]
    (before rounding noise or overflow) and a = b // 2 (past the transient). For a shrinking
    sequence E is its upper envelope E_k = max_{j >= k} e_j (so the oscillation of an
    underdamped heavy ball does not bias the estimate), else E = e. NaN if b < 2."""
    e = np.asarray(errors, dtype=np.float64)
    with np.errstate(all="ignore"):
        ratio = e / e[:1]
        ok = np.isfinite(ratio) & (ratio >= floor) & (ratio <= ceiling)
        envelope = np.flip(np.fmax.accumulate(np.flip(np.where(ok, e, np.nan), 0), 0), 0)
    n = e.shape[0]
    idx = np.arange(n).reshape((n,) + (1,) * (e.ndim - 1))
    b = np.where(ok, idx, 0).max(0)
    a = b // 2
    eb = np.take_along_axis(e, b[None], 0)[0]
    ea = np.take_along_axis(e, a[None], 0)[0]
    shrinking = eb < e[0]
    eb = np.where(shrinking, np.take_along_axis(envelope, b[None], 0)[0], eb)
    ea = np.where(shrinking, np.take_along_axis(envelope, a[None], 0)[0], ea)
    with np.errstate(all="ignore"):
        rate = np.where(b >= 2, (eb / ea) ** (1.0 / np.maximum(b - a, 1)), np.nan)
    return float(rate) if rate.ndim == 0 else rate


@dataclass(frozen=True)
class RateMap:
    """Heavy-ball convergence rate on a grid: measured[i, j] for betas[i], lrs[j] (per-step
    contraction of |x - x*|; > 1 diverges), and theory[i, j] = heavy_ball_rate."""
    lrs: np.ndarray
    betas: np.ndarray
    measured: np.ndarray
    theory: np.ndarray | None
    steps: int


def rate_map(problem: Landscape, lrs: Sequence[float], betas: Sequence[float], steps: int = 300,
             x0=None, device: str | torch.device | None = None) -> RateMap:
    """Run the heavy ball for every (beta, lr) pair as one batch of len(lrs) * len(betas)
    runs and measure each run's rate (measured_rate of |x_k - x*|)."""
    lrs = np.asarray(lrs, dtype=np.float64)
    betas = np.asarray(betas, dtype=np.float64)
    bb, ll = np.meshgrid(betas, lrs, indexing="ij")
    start = problem.default_start if x0 is None else x0

    def distance(x_like):             # record |x_k - x*| per run instead of the points
        xs = _like(problem.minimizer, x_like)[:, None]
        xp = _xp(x_like)

        def rec(x):                   # x (2, B); hypot: no underflow of tiny squares
            d = x - xs
            return xp.hypot(d[0], d[1])
        return rec

    err = _prepare(problem, "momentum", start, steps, ll.ravel(), 0, 0.0, device,
                   {"beta": bb.ravel()}, record=distance)          # (steps + 1, B)
    if isinstance(err, torch.Tensor):
        err = err.cpu().numpy()
    with np.errstate(all="ignore"):
        diverged = ~(np.isfinite(err) & (err <= DIVERGENCE_RADIUS)).all(0)
    rates = measured_rate(err).reshape(bb.shape)
    rates = np.where(diverged.reshape(bb.shape), np.maximum(np.nan_to_num(rates, nan=np.inf), 1.0),
                     rates)
    theory = heavy_ball_rate(ll, bb, problem.eigenvalues) if problem.is_quadratic else None
    return RateMap(lrs, betas, rates, theory, int(steps))


def eigen_errors(problem: Landscape, points: np.ndarray) -> np.ndarray:
    """z = V^T (x - x*): the error along each Hessian eigenvector at the minimizer
    (columns follow curvature() order, smallest eigenvalue first). points (..., 2)."""
    _, vecs = problem.curvature()
    return (np.asarray(points) - problem.minimizer) @ vecs


def steps_to_reach(trajectory: Trajectory, f_star: float, tol: float = 1e-8) -> int | None:
    """The first step k with f(x_k) - f* <= tol (None if the run never gets there)."""
    hit = np.flatnonzero(np.asarray(trajectory.losses) - f_star <= tol)
    return int(hit[0]) if hit.size else None


# --------------------------------------------------------------------------------------
# The local quadratic (second-order Taylor) model
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TaylorModel:
    """q(w) = f(w₀) + gᵀ(w − w₀) + ½ (w − w₀)ᵀ H (w − w₀), g and H at w₀."""
    center: np.ndarray
    value: float
    grad: np.ndarray
    hessian: np.ndarray

    def __call__(self, w: np.ndarray) -> np.ndarray:
        d = np.asarray(w, dtype=np.float64) - self.center
        return self.value + d @ self.grad + 0.5 * np.einsum("...i,ij,...j->...", d, self.hessian,
                                                             d)

    @property
    def minimizer(self) -> np.ndarray | None:
        """w₀ − H⁻¹g (the Newton step) when H is positive definite, else None."""
        if np.linalg.eigvalsh(self.hessian).min() <= 0:
            return None
        return self.center - np.linalg.solve(self.hessian, self.grad)

    def level_ellipses(self, factors: Sequence[float], n: int = 120) -> list[np.ndarray]:
        """Level curves of a positive definite model through (w − w*)ᵀH(w − w*) = 2c, with
        c = factor · (q(w₀) − q(w*)): factor 1 passes through w₀. Each (n + 1, 2), closed."""
        w_star = self.minimizer
        if w_star is None:
            return []
        lam, vec = np.linalg.eigh(self.hessian)
        drop = float(self.value - self(w_star))
        t = np.linspace(0.0, 2 * np.pi, n + 1)
        unit = np.stack([np.cos(t), np.sin(t)], 1)
        return [w_star + (unit * np.sqrt(2 * f * drop / lam)) @ vec.T for f in factors]


def taylor_model(problem: Landscape, w0: Sequence[float]) -> TaylorModel:
    w0 = np.asarray(w0, dtype=np.float64)
    return TaylorModel(w0, float(problem.value(w0)), np.asarray(problem.grad(w0), np.float64),
                       np.asarray(problem.hessian(w0), np.float64))


def taylor_gap(problem: Landscape, w0: Sequence[float], radius: float, n: int = 64) -> float:
    """max |f − q| over n points on the circle of `radius` around w₀."""
    model = taylor_model(problem, w0)
    t = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    ring = model.center + radius * np.stack([np.cos(t), np.sin(t)], 1)
    return float(np.abs(np.asarray(problem.value(ring)) - model(ring)).max())
