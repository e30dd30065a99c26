"""What the flow page measures on a flow (any module with forward(x) -> (y, logdet) and
inverse(y) -> (x, logdet)): the exact density on a grid and its integral, negative
log-likelihoods, the inverse's round-trip error, and the log-determinant against autograd.

    density on a grid:  p(x) = exp(log p(x)) at cell centres x_ij of [-lim, lim]^2
    integral:           sum_ij p(x_ij) h^2,  h = 2 lim / res          (should be about 1)
    NLL:                -mean_i log p(x_i)                              (nats per point)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from engine.flows.realnvp import gaussian_log_prob


def cell_centres(lim: float, res: int) -> np.ndarray:
    """The res cell centres of [-lim, lim]: -lim + (i + 1/2) h, h = 2 lim / res."""
    h = 2 * lim / res
    return -lim + (np.arange(res) + 0.5) * h


def grid_points(lim: float, res: int, dtype=torch.float32) -> tuple[np.ndarray, torch.Tensor]:
    """(xs (res,), points (res*res, 2)) with points[iy * res + ix] = (xs[ix], xs[iy])."""
    xs = cell_centres(lim, res)
    gx, gy = np.meshgrid(xs, xs)                              # (res, res) each, [iy, ix]
    pts = torch.as_tensor(np.stack([gx.ravel(), gy.ravel()], 1), dtype=dtype)
    return xs, pts


@dataclass(frozen=True)
class DensityGrid:
    xs: np.ndarray           # (res,) cell centres (both axes)
    density: np.ndarray      # (res, res) p(x) at [iy, ix]
    log_density: np.ndarray  # (res, res) log p(x)
    integral: float          # sum p h^2 over the box


def flow_log_prob(flow, x: torch.Tensor) -> torch.Tensor:
    """log p(x) = log N(f(x); 0, I) + log|det df/dx|, (n,)."""
    z, logdet = flow(x)
    return gaussian_log_prob(z) + logdet


@torch.no_grad()
def density_grid(flow, lim: float, res: int = 100) -> DensityGrid:
    """The flow's exact density on res x res cell centres of [-lim, lim]^2, and its sum."""
    xs, pts = grid_points(lim, res)
    p = next(flow.parameters(), None)
    if p is not None:
        pts = pts.to(p.device)
    logp = flow_log_prob(flow, pts).double().cpu().numpy().reshape(res, res)
    dens = np.exp(logp)
    h = 2 * lim / res
    return DensityGrid(xs, dens.astype(np.float32), logp.astype(np.float32),
                       float(np.nansum(dens) * h * h))


@torch.no_grad()
def nll(flow, x: np.ndarray | torch.Tensor) -> float:
    """-mean log p(x) in nats per point."""
    x = torch.as_tensor(np.asarray(x), dtype=torch.float32)
    return float(-flow_log_prob(flow, x).double().mean())


@torch.no_grad()
def inverse_error(flow, x: torch.Tensor) -> float:
    """max_i |f^{-1}(f(x_i)) - x_i| (largest coordinate error)."""
    y, _ = flow(x)
    back, _ = flow.inverse(y)
    return float((back - x).abs().max())


def logdet_vs_autograd(flow, x: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """(the flow's own log|det df/dx| (n,), log|det J| of the Jacobian autograd computes (n,)).

    f acts on each point alone, so row r of point i's Jacobian is the gradient of
    sum_i f(x_i)_r with respect to x_i: two backward passes give all n 2x2 Jacobians."""
    x = x.detach().clone().requires_grad_(True)
    y, logdet = flow(x)
    rows = [torch.autograd.grad(y[:, r].sum(), x, retain_graph=True)[0] for r in range(2)]
    jac = torch.stack(rows, 1)                                    # (n, 2, 2)
    _, auto = torch.linalg.slogdet(jac.double())
    return logdet.detach().double().numpy(), auto.numpy()
