"""What the VAE page draws from a model: decoded latent grids (N(0,1) quantiles or linear),
single decoded points, interpolations mu_t = (1 - t) mu(x_a) + t mu(x_b), the encoded test set
and the pixel reconstruction error mean (x - decode(mu(x)))^2.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from engine.device import to_numpy
from engine.vae.model import VAE


@dataclass(frozen=True)
class LatentGrid:
    images: np.ndarray    # (n, n, 8, 8): images[iy, ix] decoded at z[dims] = (zx[ix], zy[iy])
    zx: np.ndarray        # (n,) latent coordinates along dims[0] (ascending)
    zy: np.ndarray        # (n,) along dims[1] (ascending)
    dims: tuple[int, int]
    span: str


def grid_values(n: int, span: str = "quantiles", lo: float = 0.05, hi: float = 0.95,
                limit: float = 3.0) -> np.ndarray:
    """n coordinates: Phi^-1(linspace(lo, hi, n)) (the N(0,1) quantiles, Kingma & Welling's
    figure) or linspace(-limit, limit, n)."""
    return SPANS[span](int(n), lo, hi, limit)


SPANS: dict[str, Callable[..., np.ndarray]] = {
    "quantiles": lambda n, lo, hi, limit: torch.special.ndtri(
        torch.linspace(lo, hi, n, dtype=torch.float64)).numpy(),
    "linear": lambda n, lo, hi, limit: np.linspace(-limit, limit, n),
}


@torch.no_grad()
def latent_grid(model: VAE, n: int = 15, span: str = "quantiles", lo: float = 0.05,
                hi: float = 0.95, dims: tuple[int, int] = (0, 1), limit: float = 3.0,
                values: tuple[np.ndarray, np.ndarray] | None = None) -> LatentGrid:
    """Decode the n x n grid z[dims[0]] = zx[ix], z[dims[1]] = zy[iy], all other coordinates 0
    (the prior mean): a traversal of two latent dimensions. One batched decoder call.
    `values` = (zx, zy) gives the coordinates directly (e.g. spanning an autoencoder's codes,
    which has no prior to take quantiles of); `span` is then only the grid's label."""
    if values is not None:
        return _decode_grid(model, np.asarray(values[0], np.float64),
                            np.asarray(values[1], np.float64), dims, span)
    if span not in SPANS:
        raise ValueError(f"unknown span {span!r}; choose one of {sorted(SPANS)}")
    if not 0.0 < lo < hi < 1.0:
        raise ValueError("need 0 < lo < hi < 1")
    if len(set(dims)) != 2 or not all(0 <= d < model.latent_dim for d in dims):
        raise ValueError(f"dims must be two different latent dimensions in 0..{model.latent_dim - 1}")
    vals = grid_values(n, span, lo, hi, limit)
    return _decode_grid(model, vals, vals, dims, span)


@torch.no_grad()
def _decode_grid(model: VAE, zx: np.ndarray, zy: np.ndarray, dims: tuple[int, int],
                 span: str) -> LatentGrid:
    if len(set(dims)) != 2 or not all(0 <= d < model.latent_dim for d in dims):
        raise ValueError(f"dims must be two different latent dimensions in 0..{model.latent_dim - 1}")
    dev = next(model.parameters()).device
    vx = torch.as_tensor(zx, dtype=torch.float32, device=dev)
    vy = torch.as_tensor(zy, dtype=torch.float32, device=dev)
    z = torch.zeros(len(zy), len(zx), model.latent_dim, device=dev)
    z[..., dims[0]] = vx[None, :]
    z[..., dims[1]] = vy[:, None]
    side = int(round(math.sqrt(model.input_dim)))
    imgs = model.decode(z.reshape(-1, model.latent_dim)).reshape(len(zy), len(zx), side, side)
    return LatentGrid(to_numpy(imgs), zx.copy(), zy.copy(), (int(dims[0]), int(dims[1])), span)


@torch.no_grad()
def decode_point(model: VAE, z: np.ndarray | list[float]) -> np.ndarray:
    """The (8, 8) mean image decoded at one latent point z (latent_dim,)."""
    dev = next(model.parameters()).device
    zt = torch.as_tensor(np.asarray(z, dtype=np.float32), device=dev).reshape(1, -1)
    side = int(round(math.sqrt(model.input_dim)))
    return to_numpy(model.decode(zt)).reshape(side, side)


@torch.no_grad()
def interpolate(model: VAE, x_a: np.ndarray, x_b: np.ndarray, steps: int = 8) -> np.ndarray:
    """Decode z_t = (1 - t) mu(x_a) + t mu(x_b), t = linspace(0, 1, steps): (steps, 8, 8)."""
    dev = next(model.parameters()).device
    xs = torch.as_tensor(np.stack([np.ravel(x_a), np.ravel(x_b)]), dtype=torch.float32, device=dev)
    mu, _ = model.encode(xs)
    t = torch.linspace(0, 1, int(steps), device=dev)[:, None]
    z = (1 - t) * mu[0] + t * mu[1]
    side = int(round(math.sqrt(model.input_dim)))
    return to_numpy(model.decode(z)).reshape(-1, side, side)


@dataclass(frozen=True)
class LatentCodes:
    means: np.ndarray     # (n, latent_dim) encoder means mu(x)
    logvars: np.ndarray   # (n, latent_dim)
    labels: np.ndarray    # (n,)


@torch.no_grad()
def encode_dataset(model: VAE, x: np.ndarray, labels: np.ndarray) -> LatentCodes:
    """Encoder means and log-variances of every row of x (n, 64), in one batch."""
    dev = next(model.parameters()).device
    mu, logvar = model.encode(torch.as_tensor(x, dtype=torch.float32, device=dev))
    return LatentCodes(to_numpy(mu), to_numpy(logvar), np.asarray(labels))


@torch.no_grad()
def reconstruction_mse(model: VAE, x: np.ndarray) -> float:
    """Mean over pixels and images of (x - decode(mu(x)))^2 (the encoder mean, no sampling)."""
    dev = next(model.parameters()).device
    xt = torch.as_tensor(x, dtype=torch.float32, device=dev)
    mu, _ = model.encode(xt)
    return float((model.decode(mu) - xt).pow(2).mean())
