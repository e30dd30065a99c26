"""The generator as a map: a grid of the latent plane carried through G into data space.

    nodes    z_ij = u_i e₁ + u_j e₂  (u on [−extent, extent], res points; the other latent
             coordinates 0: a 2-D slice when latent_dim > 2, one line when latent_dim = 1)
    weights  w_ij = φ(u_i) φ(u_j) / Σ φ(u_k) φ(u_l)     (the N(0, I) prior mass of each node)
    mode     m_ij = argmin_c ‖G(z_ij) − c‖        (the mode whose cell G(z_ij) lands in)
    shares   s_c = Σ_{m_ij = c} w_ij               (the share of the latent plane sent to mode c)
    on mode  Σ w_ij over the nodes with ‖G(z_ij) − c_{m_ij}‖ <= radius (= n_sigma·std)
    Jacobian det J_ij = ∂₁x ∂₂y − ∂₂x ∂₁y of G on the plane (finite differences on the grid):
             where its sign differs from the mass's majority sign the map is folded over itself
    arrows   −∇_x L_G(D(x)) at x = G(z) of every `arrow_every`-th node: the pull D exerts on a
             fake sample there (GANTrainer.fake_gradients)

The pure functions take numpy arrays; `manifold_of(trainer)` applies them to a GANTrainer
(a read_trainer fn: picklable, returns numpy arrays only).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from engine.device import to_numpy
from engine.gan.trainer import CriticGrid

GRID_RES = 41        # nodes per latent axis
GRID_EXTENT = 2.5    # ±2.5 standard deviations of the prior on each axis
ARROW_EVERY = 5      # an arrow at every 5th node of each axis (9 × 9 on the default grid)


@dataclass(frozen=True)
class LatentGrid:
    u: np.ndarray         # (res,) coordinates along each plane axis
    z: np.ndarray         # (rows, res, latent_dim) nodes; rows = res, or 1 when latent_dim = 1
    weights: np.ndarray   # (rows, res) prior mass of each node, sums to 1


def latent_grid(latent_dim: int, res: int = GRID_RES, extent: float = GRID_EXTENT
                ) -> LatentGrid:
    """The nodes z_ij = u_i e₁ + u_j e₂ of the latent plane spanned by the first two
    coordinates (all others 0) and their normalised N(0, I) prior weights. Row i holds
    u₂ = u_i (so z[i, j] = (u_j, u_i, 0, ...)): the array is laid out like an image of the
    plane. With latent_dim = 1 the 'plane' is the line z = u_j (one row)."""
    if latent_dim < 1 or res < 2 or not extent > 0:
        raise ValueError("latent_dim >= 1, res >= 2 and extent > 0 are needed")
    u = np.linspace(-extent, extent, res)                      # (res,)
    phi = np.exp(-0.5 * u ** 2)                                # (res,) unnormalised density
    rows = res if latent_dim >= 2 else 1
    z = np.zeros((rows, res, latent_dim))                      # (rows, res, latent_dim)
    z[:, :, 0] = u[None, :]
    if latent_dim >= 2:
        z[:, :, 1] = u[:, None]
        w = phi[:, None] * phi[None, :]                        # (res, res)
    else:
        w = phi[None, :]                                       # (1, res)
    return LatentGrid(u, z, w / w.sum())


def mode_assignment(points: np.ndarray, centers: np.ndarray, radius: float = math.inf
                    ) -> np.ndarray:
    """Index of each point's nearest center when it lies within `radius` of it (default:
    always, the center's Voronoi cell), else −1; −1 for a non-finite point.
    points (..., 2), centers (k, 2) -> (...) int."""
    p = np.asarray(points, np.float64)
    c = np.asarray(centers, np.float64).reshape(-1, 2)
    flat = p.reshape(-1, 2)                                          # (n, 2)
    d2 = ((flat[:, None, :] - c[None, :, :]) ** 2).sum(-1)          # (n, k)
    nearest = d2.argmin(1)                                          # (n,)
    near = np.sqrt(d2[np.arange(len(flat)), nearest]) <= radius
    near &= np.isfinite(flat).all(1)
    return np.where(near, nearest, -1).reshape(p.shape[:-1])


def mode_shares(assign: np.ndarray, weights: np.ndarray, k: int) -> np.ndarray:
    """s_c = Σ_{assign = c} w for c = 0..k−1: the weighted share of the grid sent to each
    mode (the rest, 1 − Σ s_c, lands near no mode). assign, weights: the same shape."""
    a = np.asarray(assign).ravel()
    w = np.asarray(weights, np.float64).ravel()
    return np.bincount(a[a >= 0], weights=w[a >= 0], minlength=k)[:k]


def jacobian_det(mapped: np.ndarray, u: np.ndarray) -> np.ndarray:
    """det ∂G/∂(u₁, u₂) at every node of a mapped 2-D grid (rows, res, 2) whose row i has
    u₂ = u[i] and column j has u₁ = u[j] (np.gradient: central differences inside, one-sided
    at the border). (rows, res); NaN where the map is not finite."""
    x, y = mapped[..., 0], mapped[..., 1]
    dx_du2, dx_du1 = np.gradient(x, u, u)
    dy_du2, dy_du1 = np.gradient(y, u, u)
    return dx_du1 * dy_du2 - dx_du2 * dy_du1


def fold_share(det: np.ndarray, weights: np.ndarray) -> float:
    """The prior mass of the nodes where the map is turned over: det J has the sign
    opposite to the one that carries most of the mass (0 for an orientation-keeping map;
    near ½ where G folds the plane onto itself). Nodes with det = 0 or NaN count for
    neither sign."""
    d, w = np.asarray(det).ravel(), np.asarray(weights, np.float64).ravel()
    pos, neg = float(w[d > 0].sum()), float(w[d < 0].sum())
    return min(pos, neg) / (pos + neg) if pos + neg > 0 else math.nan


@dataclass(frozen=True)
class Manifold:
    """One picture of G as a map (the page's Manifold tab), plain arrays."""
    step: int
    u: np.ndarray              # (res,) latent coordinates of the grid's nodes
    mapped: np.ndarray         # (rows, res, 2) G(z) at every node
    assign: np.ndarray         # (rows, res) the mode whose cell each node lands in (−1: none)
    near: np.ndarray           # (rows, res) bool: the node lands within `radius` of that mode
    shares: np.ndarray         # (k,) prior mass of the grid sent to each mode's cell
    on_mode: float             # prior mass of the grid landing within `radius` of a mode
    fold: float                # prior mass where the map is turned over (NaN: a 1-D latent)
    arrows_at: np.ndarray      # (a, 2) mapped nodes that get an arrow
    arrows: np.ndarray         # (a, 2) −∇_x L_G there
    critic: CriticGrid         # D on the plot box
    real: np.ndarray           # (m, 2) real points
    box: tuple[float, float, float, float]
    centers: np.ndarray | None
    radius: float | None
    latent_dim: int



def manifold_of(trainer, res: int = GRID_RES, extent: float = GRID_EXTENT,
                arrow_every: int = ARROW_EVERY, critic_res: int = 40) -> Manifold:
    """read_trainer fn: the latent grid of `trainer` mapped through its G, the mode cell of
    each node and the shares per mode, the share landing on a mode, the fold share, D on the plot box and −∇_x L_G at every
    `arrow_every`-th node."""
    grid = latent_grid(trainer.latent_dim, res, extent)
    with torch.no_grad():
        z = torch.as_tensor(grid.z.reshape(-1, trainer.latent_dim), dtype=trainer.dtype,
                            device=trainer.device)                     # (rows·res, latent)
        mapped = to_numpy(trainer.G(z)).astype(np.float64).reshape(*grid.z.shape[:2], 2)
    t = trainer.target
    if t.centers is not None and t.std is not None:
        centers = np.asarray(t.centers, np.float64)
        radius = float(trainer.n_sigma * t.std)
        assign = mode_assignment(mapped, centers)
        near = mode_assignment(mapped, centers, radius) >= 0
        shares = mode_shares(assign, grid.weights, len(centers))
        on_mode = float(grid.weights[near].sum())
    else:
        centers, radius, on_mode = None, None, math.nan
        assign = np.full(grid.weights.shape, -1)
        near = np.zeros(grid.weights.shape, bool)
        shares = np.zeros(0)
    fold = (fold_share(jacobian_det(mapped, grid.u), grid.weights)
            if trainer.latent_dim >= 2 else math.nan)
    at = mapped[::arrow_every, ::arrow_every].reshape(-1, 2)          # (a, 2)
    finite = np.isfinite(mapped).all()
    arrows = (trainer.fake_gradients(at.astype(np.float32)).astype(np.float64) if finite
              else np.zeros((0, 2)))
    return Manifold(int(trainer.steps), grid.u, mapped, assign, near, shares, on_mode, fold,
                    at if finite else np.zeros((0, 2)), arrows,
                    trainer.critic_grid(res=critic_res),
                    np.asarray(t.points[trainer.show_idx]), _box(trainer.box),
                    centers, radius, int(trainer.latent_dim))


def _box(box) -> tuple[float, float, float, float]:
    x0, x1, y0, y1 = (float(v) for v in box)
    return x0, x1, y0, y1


def largest_share(m: Manifold) -> float:
    """The largest share of the grid that one mode's cell receives (1/k for an even spread,
    ~1 when the whole plane is squeezed into one mode)."""
    return float(m.shares.max()) if len(m.shares) else math.nan


def modes_reached(m: Manifold, min_share: float = 0.01) -> int:
    """Modes whose cell receives at least `min_share` of the grid's prior mass (the page's
    1% rule, on the grid)."""
    return int((m.shares >= min_share).sum())


