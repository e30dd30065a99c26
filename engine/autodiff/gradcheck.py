"""Finite differences against autodiff: the gradient check and its U-shaped error curve.

For input x_i and step h (e_i = the unit vector of input i):

    forward   g_i ~ (f(x + h e_i) - f(x)) / h             truncation error ~ h   |f''| / 2
    central   g_i ~ (f(x + h e_i) - f(x - h e_i)) / (2h)   truncation error ~ h^2 |f'''| / 6

Both lose ~ eps |f| / h to round-off (eps = 2.2e-16, float64), so the error falls with h
until round-off takes over: the best step is near eps^(1/2) * scale (forward) and
eps^(1/3) * scale (central), scale = max(1, max_i |x_i|). The relative error of a
finite-difference gradient g_fd against the autodiff one g is

    rel_err = |g_fd - g| / max(|g_fd|, |g|)        (vector norms over all inputs; 0 if both 0)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from engine.autodiff.graph import Graph

EPS = float(np.finfo(np.float64).eps)
DEFAULT_HS = np.logspace(-1, -12, 111)      # 10 steps per decade, 1e-1 down to 1e-12


@dataclass(frozen=True)
class Difference:
    name: str
    order: int                                          # truncation error ~ h^order
    estimate: Callable[[Callable, np.ndarray], np.ndarray]   # (f(shift), h) -> gradient


DIFFERENCES = {
    "forward": Difference("forward", 1, lambda f, h: (f(h) - f(0.0)) / h),
    "central": Difference("central", 2, lambda f, h: (f(h) - f(-h)) / (2.0 * h)),
}


def finite_difference(graph: Graph, env: Mapping[str, float], h, kind: str = "central"
                      ) -> dict[str, float | np.ndarray]:
    """The finite-difference gradient {name: g_i}; `h` may be an array of steps (one
    vectorized forward pass per input and side)."""
    if kind not in DIFFERENCES:
        raise ValueError(f"unknown difference {kind!r} (known: {', '.join(DIFFERENCES)})")
    h = np.asarray(h, dtype=np.float64)
    grads = {}
    for name in graph.input_names:
        def f(shift, name=name):
            return np.asarray(graph.forward({**env, name: env[name] + shift}))
        with np.errstate(all="ignore"):
            g = DIFFERENCES[kind].estimate(f, h)
        grads[name] = float(g) if np.ndim(g) == 0 else g
    return grads


def relative_error(g_fd: np.ndarray, g: np.ndarray) -> np.ndarray:
    """|g_fd - g| / max(|g_fd|, |g|) over the last axis (the inputs); 0 where both are 0."""
    num = np.linalg.norm(g_fd - g, axis=-1)
    den = np.maximum(np.linalg.norm(g_fd, axis=-1), np.linalg.norm(g, axis=-1))
    with np.errstate(all="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


@dataclass(frozen=True)
class GradcheckCurve:
    hs: np.ndarray                       # steps, decreasing
    errors: dict[str, np.ndarray]        # kind -> relative error at each h
    best_h: dict[str, float]             # kind -> the h of the smallest error
    best_error: dict[str, float]
    theory_h: dict[str, float]           # kind -> eps^(1/(order+1)) * scale
    truncation_slope: dict[str, float]   # log-log slope for h > 10 best_h (~ the order)
    roundoff_slope: dict[str, float]     # log-log slope for h < best_h / 10 (~ -1)
    gradient: dict[str, float]           # autodiff gradient at env
    scale: float


def gradcheck_curve(graph: Graph, env: Mapping[str, float], hs=None) -> GradcheckCurve:
    hs = DEFAULT_HS if hs is None else np.asarray(hs, dtype=np.float64)
    graph.forward(env)
    grad = graph.backward()
    names = graph.input_names
    g = np.array([grad[n] for n in names])
    scale = max([1.0] + [abs(float(env[n])) for n in names])
    errors, best_h, best_err, theory, trunc, roundoff = {}, {}, {}, {}, {}, {}
    for kind, diff in DIFFERENCES.items():
        fd = finite_difference(graph, env, hs, kind)
        g_fd = np.stack([np.broadcast_to(fd[n], hs.shape) for n in names], axis=-1) \
            if names else np.zeros(hs.shape + (0,))
        err = relative_error(g_fd, g)
        errors[kind] = err
        i = int(np.nanargmin(err)) if np.isfinite(err).any() else 0
        best_h[kind], best_err[kind] = float(hs[i]), float(err[i])
        theory[kind] = EPS ** (1.0 / (diff.order + 1)) * scale
        trunc[kind] = _slope(hs, err, hs > 10 * best_h[kind])
        roundoff[kind] = _slope(hs, err, hs < best_h[kind] / 10)
    graph.forward(env)                   # leave the graph at env, not at a shifted point
    return GradcheckCurve(hs, errors, best_h, best_err, theory, trunc, roundoff, grad, scale)


def _slope(hs: np.ndarray, err: np.ndarray, mask: np.ndarray) -> float:
    """Least-squares slope of log10(err) against log10(h) where mask and err > 0 (NaN if
    fewer than 3 such points)."""
    keep = mask & (err > 0) & np.isfinite(err)
    if keep.sum() < 3:
        return float("nan")
    return float(np.polyfit(np.log10(hs[keep]), np.log10(err[keep]), 1)[0])
