"""Running the optimizers (engine.optim): one run (optimize), a batch of runs of one method
(optimize_many, e.g. a learning-rate sweep), and a race of several methods from one start with
the same gradient noise (race). Results are Trajectory / BatchTrajectory: points, f(points),
|grad f(points)| and the divergence step (|x| > 1e6 or f(x) not finite)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch

from engine.device import numpy_rng
from engine.optim.optimizers import OPTIMIZERS, _run_kernel, resolve_hyper
from engine.optim.problems import DIVERGENCE_RADIUS, Landscape

# --------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Trajectory:
    """One run. points (n + 1, 2), losses f(points) (n + 1,), grad_norms |grad f| (n + 1,)
    (the noiseless gradient), n = steps, or n = diverged_at - 1 when the run diverged:
    diverged_at is the first step k with |x_k| > 1e6 or f(x_k) not finite (None if never)."""
    method: str
    hyper: dict
    points: np.ndarray
    losses: np.ndarray
    grad_norms: np.ndarray
    diverged_at: int | None
    steps: int


@dataclass(frozen=True)
class BatchTrajectory:
    """B runs at once: points (steps + 1, B, 2), losses / grad_norms (steps + 1, B);
    entries from diverged_at[b] on are NaN; diverged_at[b] = -1 when run b never diverged."""
    method: str
    points: np.ndarray
    losses: np.ndarray
    grad_norms: np.ndarray
    diverged_at: np.ndarray

    def run(self, b: int, hyper: dict | None = None) -> Trajectory:
        d = int(self.diverged_at[b])
        n = self.points.shape[0] if d < 0 else d
        return Trajectory(self.method, dict(hyper or {}), self.points[:n, b].copy(),
                          self.losses[:n, b].copy(), self.grad_norms[:n, b].copy(),
                          None if d < 0 else d, self.points.shape[0] - 1)


def _noise(seed: int, steps: int, grad_noise: float) -> np.ndarray | None:
    """grad_noise * xi_k, xi_k ~ N(0, I_2), k = 1..steps: one seeded stream per call."""
    if not grad_noise:
        return None
    return float(grad_noise) * numpy_rng(seed).standard_normal((steps, 2))


def _finish(problem: Landscape, method: str, points) -> BatchTrajectory:
    """Losses, gradient norms and the divergence step of a batch of runs (vectorized)."""
    if isinstance(points, torch.Tensor):
        points = points.detach().cpu().numpy()
    with np.errstate(all="ignore"):
        losses = np.asarray(problem.value(points), dtype=np.float64)
        gr = np.asarray(problem.grad(points))
        grad_norms = np.sqrt((gr * gr).sum(-1))
        bad = (~np.isfinite(losses)) | (~np.isfinite(points).all(-1)) | \
            ((points * points).sum(-1) > DIVERGENCE_RADIUS ** 2)
    any_bad = bad.any(0)
    first = np.where(any_bad, bad.argmax(0), -1)
    steps_axis = np.arange(points.shape[0])[:, None]
    mask = (first[None, :] >= 0) & (steps_axis >= first[None, :])
    points = np.where(mask[..., None], np.nan, points)
    losses = np.where(mask, np.nan, losses)
    grad_norms = np.where(mask, np.nan, grad_norms)
    return BatchTrajectory(method, points, losses, grad_norms, first.astype(np.int64))


def _check_common(problem, steps, grad_noise):
    if not isinstance(problem, Landscape):
        raise TypeError(f"problem must be a Landscape, got {type(problem).__name__}")
    steps = int(steps)
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    if not math.isfinite(float(grad_noise)) or grad_noise < 0:
        raise ValueError(f"grad_noise must be a finite number >= 0, got {grad_noise}")
    return steps


def _prepare(problem: Landscape, method: str, x0, steps: int, lr, seed: int, grad_noise: float,
             device, hyper: dict, record=None):
    """Validate, broadcast to a batch, build the kernel's coefficient columns; run the kernel.
    Returns the raw points (steps + 1, B, 2) as numpy or a torch tensor."""
    steps = _check_common(problem, steps, grad_noise)
    params = resolve_hyper(method, lr, **hyper)
    x0 = np.atleast_2d(np.asarray(x0, dtype=np.float64))
    if x0.shape[-1] != 2 or x0.ndim != 2:
        raise ValueError(f"start points must have shape (2,) or (B, 2), got {x0.shape}")
    sizes = [np.asarray(v).size for v in params.values()] + [x0.shape[0]]
    batch = max(sizes)
    if any(s not in (1, batch) for s in sizes):
        raise ValueError(f"batch sizes do not match: {sizes}")
    x0 = np.array(np.broadcast_to(x0, (batch, 2)), dtype=np.float64)
    opt = OPTIMIZERS[method]
    cols = {k: np.broadcast_to(np.asarray(params[k], dtype=np.float64).reshape(-1), (batch,))
            for k in opt.defaults}
    # the coefficient functions are elementwise: call them on (B,) arrays
    coef = opt.coefficients(**{k: cols[k] for k in opt.defaults if k != "lr"})
    coef["lr"] = cols["lr"]
    coef = {k: np.broadcast_to(np.asarray(v, dtype=np.float64).reshape(-1), (batch,))
            for k, v in coef.items()}
    return _run_kernel(opt.family, problem, x0, steps, coef, _noise(seed, steps, grad_noise),
                       device, record)


def optimize_many(problem: Landscape, method: str, x0, steps: int, lr=None, seed: int = 0,
                  grad_noise: float = 0.0, device: str | torch.device | None = None,
                  **hyper) -> BatchTrajectory:
    """B runs of one method at once. x0: (2,) or (B, 2) start points; lr and every
    hyperparameter may be a scalar or a length-B sequence (a sweep). The gradient noise
    sequence is the same for every run (seeded by `seed`). device=None: NumPy; else torch on
    that device (float64)."""
    points = _prepare(problem, method, x0, steps, lr, seed, grad_noise, device, hyper)
    return _finish(problem, method, points)


def optimize(problem: Landscape, method: str, x0, steps: int, lr: float | None = None,
             seed: int = 0, grad_noise: float = 0.0, device: str | torch.device | None = None,
             **hyper) -> Trajectory:
    """One run of `method` from x0 for `steps` steps (see the module docstring for the
    rules). Unknown methods or hyperparameters raise ValueError."""
    params = resolve_hyper(method, lr, **hyper)
    batch = optimize_many(problem, method, x0, steps, seed=seed, grad_noise=grad_noise,
                          device=device, **params)
    if batch.points.shape[1] != 1:
        raise ValueError("optimize() runs one start point; use optimize_many for a batch")
    return batch.run(0, params)


@dataclass(frozen=True)
class RaceEntry:
    method: str
    lr: float | None = None
    hyper: dict = field(default_factory=dict)


def race(problem: Landscape, entries: Sequence[RaceEntry], x0, steps: int, seed: int = 0,
         grad_noise: float = 0.0, device=None) -> dict[str, Trajectory]:
    """Every entry from the same start with the same gradient noise; entries of one family
    run as one batch. Returns method -> Trajectory, in the order given."""
    steps = _check_common(problem, steps, grad_noise)
    resolved = [(e.method, resolve_hyper(e.method, e.lr, **e.hyper)) for e in entries]
    if len({m for m, _ in resolved}) != len(resolved):
        raise ValueError("each method may appear once in a race")
    out: dict[str, Trajectory] = {}
    by_family: dict[str, list] = {}
    for method, params in resolved:
        by_family.setdefault(OPTIMIZERS[method].family, []).append((method, params))
    noise = _noise(seed, steps, grad_noise)
    start = np.asarray(x0, dtype=np.float64).reshape(1, 2)
    for family, runs in by_family.items():
        coefs = []
        for method, params in runs:
            opt = OPTIMIZERS[method]
            c = opt.coefficients(**{k: v for k, v in params.items() if k != "lr"})
            c["lr"] = params["lr"]
            coefs.append(c)
        keys = coefs[0].keys()
        batch = len(runs)
        coef = {k: np.array([np.asarray(c[k], dtype=np.float64).item() for c in coefs])
                for k in keys}
        points = _run_kernel(family, problem, np.repeat(start, batch, 0), steps, coef, noise,
                             device)
        result = _finish(problem, family, points)
        for b, (method, params) in enumerate(runs):
            tr = result.run(b, params)
            out[method] = Trajectory(method, params, tr.points, tr.losses, tr.grad_norms,
                                     tr.diverged_at, steps)
    return {m: out[m] for m, _ in resolved}
