"""The 1-D toy of the variational principle: z ~ N(0, 1), x = g(z) + 0.5 n, g(z) = z^3 - 3z.

    log p(x) = log integral p(x, z) dz               (trapezoid rule on a z grid)
    ELBO(q) = E_q[log p(x, z)] + H(q) = log p(x) - KL(q || p(z|x))
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from engine.vae.model import LOG_2PI


TOY_NOISE = 0.5   # x = g(z) + TOY_NOISE * n, n ~ N(0, 1)


def toy_g(z):
    """g(z) = z^3 - 3z: folds the line (local max 2 at z=-1, local min -2 at z=1), so p(x) is
    bimodal (modes near x = +-2) and p(z|x) has up to three modes for |x| < 2."""
    return z**3 - 3 * z


def toy_log_joint(x: float, z):
    """log p(x, z) = log N(z; 0, 1) + log N(x; g(z), TOY_NOISE^2) (numpy or torch z)."""
    return -0.5 * z**2 - 0.5 * (x - toy_g(z)) ** 2 / TOY_NOISE**2 - LOG_2PI - math.log(TOY_NOISE)


def _logsumexp(a: np.ndarray, axis: int = -1) -> np.ndarray:
    m = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(m, axis) + np.log(np.sum(np.exp(a - m), axis=axis))


def toy_z_grid(lo: float = -5.0, hi: float = 5.0, n: int = 4001) -> np.ndarray:
    return np.linspace(lo, hi, n)


def toy_log_px(x, z_grid: np.ndarray | None = None) -> np.ndarray:
    """log p(x) = log integral p(x, z) dz by the trapezoid rule on z_grid (vectorised over x)."""
    zg = toy_z_grid() if z_grid is None else z_grid
    x = np.asarray(x, dtype=np.float64)
    lj = toy_log_joint(x[..., None], zg)
    w = np.full(zg.shape, zg[1] - zg[0])
    w[[0, -1]] *= 0.5
    return _logsumexp(lj + np.log(w), axis=-1)


def true_posterior(x: float, z_grid: np.ndarray | None = None) -> np.ndarray:
    """p(z|x) = p(x, z) / p(x) on z_grid (a density: integrates to 1 by the trapezoid rule)."""
    zg = toy_z_grid() if z_grid is None else z_grid
    return np.exp(toy_log_joint(float(x), zg) - toy_log_px(float(x), zg))


_GH_NODES, _GH_WEIGHTS = np.polynomial.hermite_e.hermegauss(60)   # for E over N(0, 1)
_GH_WEIGHTS = _GH_WEIGHTS / np.sqrt(2 * np.pi)


def elbo_gaussian_q(x: float, m, s):
    """ELBO(q) = E_q[log p(x, z)] + H(q) for q = N(m, s^2) (vectorised over m, s):
    the expectation by 60-point Gauss-Hermite (exact here: log p(x, z) is a degree-6
    polynomial in z), H(q) = 1/2 log(2 pi e s^2)."""
    m, s = np.asarray(m, np.float64), np.asarray(s, np.float64)
    z = m[..., None] + s[..., None] * _GH_NODES
    e_log_joint = np.sum(_GH_WEIGHTS * toy_log_joint(float(x), z), axis=-1)
    return e_log_joint + 0.5 * np.log(2 * np.pi * np.e * s**2)


def kl_q_posterior(x: float, m: float, s: float, z_grid: np.ndarray | None = None) -> float:
    """KL(q || p(z|x)) = integral q log(q / p(z|x)) dz by the trapezoid rule on z_grid."""
    zg = toy_z_grid(-12, 12, 24001) if z_grid is None else z_grid
    log_q = -0.5 * ((zg - m) / s) ** 2 - np.log(s) - 0.5 * LOG_2PI
    log_post = toy_log_joint(float(x), zg) - toy_log_px(float(x), zg)
    f = np.exp(log_q) * (log_q - log_post)
    return float(np.trapezoid(f, zg))


@dataclass(frozen=True)
class ToyELBO:
    x: float
    m: float
    s: float
    log_px: float
    elbo: float
    gap: float              # log p(x) - ELBO = KL(q || p(z|x)) >= 0
    z: np.ndarray           # grid for the curves
    posterior: np.ndarray   # p(z|x) on z
    q: np.ndarray           # N(z; m, s^2) on z
    x_axis: np.ndarray      # grid of x for the marginal
    px: np.ndarray          # p(x) on x_axis


def toy_elbo(x: float, m: float, s: float) -> ToyELBO:
    """Everything the "Why the ELBO" tab draws, for observation x and q = N(m, s^2)."""
    if s <= 0:
        raise ValueError("sigma of q must be > 0")
    z = toy_z_grid(-4, 4, 801)
    xa = np.linspace(-6, 6, 481)
    lp = float(toy_log_px(x))
    el = float(elbo_gaussian_q(x, m, s))
    q = np.exp(-0.5 * ((z - m) / s) ** 2) / (s * math.sqrt(2 * math.pi))
    return ToyELBO(float(x), float(m), float(s), lp, el, lp - el, z, true_posterior(x, z), q,
                   xa, np.exp(toy_log_px(xa)))


def fit_q(x: float, m0: float = 0.0, s0: float = 1.0, steps: int = 300, lr: float = 0.05) -> tuple[float, float]:
    """Maximise ELBO(m, s) by Adam on (m, log s) from (m0, s0): converges to the Gaussian that
    hugs the posterior mode nearest the start (KL(q||p) is mode-seeking). Deterministic."""
    nodes = torch.as_tensor(_GH_NODES)
    weights = torch.as_tensor(_GH_WEIGHTS)
    m = torch.tensor(float(m0), dtype=torch.float64, requires_grad=True)
    log_s = torch.tensor(math.log(max(float(s0), 1e-3)), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([m, log_s], lr=lr)
    for _ in range(int(steps)):
        z = m + torch.exp(log_s) * nodes
        elbo = (weights * toy_log_joint(float(x), z)).sum() + log_s
        opt.zero_grad()
        (-elbo).backward()
        opt.step()
    return float(m.detach()), float(torch.exp(log_s.detach()))
