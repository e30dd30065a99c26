"""Measurements of one optimizer trajectory that the gradient-descent page states as facts
(its claims) and shows in its table. Pure numpy on engine.optim results.

    sign_flip_share(z)  = mean_k [sign z_{k+1} != sign z_k]   over |z_k| > 1e-12
    mean_late_step(x)   = mean over the last n steps of |x_{k+1} - x_k|
    tail_rate(e)        = engine.optim.measured_rate(e)         (second half of the run)
    swing_growth(z)     = max_k |z_k| / |z_0|                    (> 1: the swings first grow)
"""
from __future__ import annotations

import numpy as np

from engine.optim import (Landscape, Trajectory, distance_to_minimizer, eigen_errors,
                          measured_rate, steps_to_reach)


def gap(problem: Landscape, tr: Trajectory, k: int | None = None) -> float:
    """f(x_k) − f* (k = the last step when None)."""
    return float(tr.losses[-1 if k is None else k] - problem.f_star)


def steps_to(problem: Landscape, tr: Trajectory, tol: float) -> float:
    """First step with f − f* <= tol (inf when never)."""
    hit = steps_to_reach(tr, problem.f_star, tol)
    return float("inf") if hit is None else float(hit)


def sign_flip_share(z: np.ndarray, floor: float = 1e-12) -> float:
    """Share of steps on which z changes sign (1.0: a full zigzag, 0: monotone), ignoring
    entries below `floor` (rounding noise once converged)."""
    z = np.asarray(z, dtype=np.float64)
    z = z[np.abs(z) > floor]
    return float(np.mean(np.sign(z[1:]) != np.sign(z[:-1]))) if len(z) > 2 else 0.0


def eigen_flip_share(problem: Landscape, tr: Trajectory, which: int) -> float:
    """sign_flip_share of the error along eigenvector `which` (0 = flattest)."""
    return sign_flip_share(eigen_errors(problem, tr.points)[:, which])


def swing_growth(problem: Landscape, tr: Trajectory, which: int) -> float:
    """Largest |error| along eigenvector `which` over the run, relative to the start's."""
    z = np.abs(eigen_errors(problem, tr.points)[:, which])
    return float(z.max() / z[0]) if z[0] > 0 else float("inf")


def tail_rate(problem: Landscape, tr: Trajectory) -> float:
    """Measured per-step contraction of |x − x*| on the second half of the run."""
    return float(measured_rate(distance_to_minimizer(problem, tr.points)))


def mean_late_step(points: np.ndarray, last: int = 100) -> float:
    """Mean |x_{k+1} − x_k| over the last `last` steps: does the method still move?"""
    p = np.asarray(points, dtype=np.float64)
    return float(np.linalg.norm(np.diff(p[-last - 1:], axis=0), axis=1).mean())


def diverged_at(tr: Trajectory) -> float:
    return float("inf") if tr.diverged_at is None else float(tr.diverged_at)
