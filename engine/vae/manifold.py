"""Autoencoder vs PCA on a curved 2-D manifold: PCA reconstructs through the top principal line,
mean + (x - mean) V_k V_k^T; a small tanh autoencoder with a 1-D bottleneck follows the arc.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from engine.device import numpy_rng, resolve_device, to_numpy


def curved_manifold(n: int = 400, seed: int = 0, noise: float = 0.05) -> np.ndarray:
    """Points near an arc: x = (2t, 1.5 (t^2 - 1/3)) + noise * e,
    t ~ U(-1, 1), e ~ N(0, I). A 1-D curve a line (PCA) cannot follow. (n, 2) float32."""
    rng = numpy_rng(seed)
    t = rng.uniform(-1, 1, n)
    pts = np.stack([2 * t, 1.5 * (t**2 - 1 / 3)], 1) + noise * rng.standard_normal((n, 2))
    return pts.astype(np.float32)


@dataclass(frozen=True)
class Reconstruction:
    points: np.ndarray    # (n, 2) input
    recon: np.ndarray     # (n, 2) reconstruction through a 1-D bottleneck
    mse: float            # mean over points of ||x - recon||^2
    curve: np.ndarray     # (m, 2) the decoder's image of the code range (the learned manifold)


def pca_reconstruct(points: np.ndarray, k: int = 1) -> Reconstruction:
    """Project onto the top-k principal directions: recon = mean + (x - mean) V_k V_k^T."""
    x = np.asarray(points, np.float64)
    mean = x.mean(0)
    _, _, vt = np.linalg.svd(x - mean, full_matrices=False)
    v = vt[:k].T
    codes = (x - mean) @ v
    recon = mean + codes @ v.T
    t = np.linspace(codes.min(), codes.max(), 100)[:, None] if k == 1 else codes
    curve = mean + t @ v.T
    return Reconstruction(points, recon.astype(np.float32),
                          float(((x - recon) ** 2).sum(1).mean()), curve.astype(np.float32))


def fit_autoencoder_2d(points: np.ndarray, hidden: int = 32, linear: bool = False,
                       steps: int = 1500, lr: float = 0.01, seed: int = 0,
                       device: str | torch.device | None = None) -> Reconstruction:
    """A 2 -> hidden -> 1 -> hidden -> 2 autoencoder (tanh; linear=True: 2 -> 1 -> 2 with no
    nonlinearity, which learns the PCA line) trained full-batch with Adam on mean ||x - x_hat||^2."""
    dev = resolve_device(device)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        if linear:
            enc, dec = nn.Linear(2, 1), nn.Linear(1, 2)
        else:
            enc = nn.Sequential(nn.Linear(2, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))
            dec = nn.Sequential(nn.Linear(1, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 2))
    enc, dec = enc.to(dev), dec.to(dev)
    x = torch.as_tensor(np.asarray(points, np.float32), device=dev)
    opt = torch.optim.Adam([*enc.parameters(), *dec.parameters()], lr=lr)
    for _ in range(int(steps)):
        loss = (dec(enc(x)) - x).pow(2).sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        codes = enc(x)
        recon = dec(codes)
        t = torch.linspace(float(codes.min()), float(codes.max()), 200, device=dev)[:, None]
        curve = dec(t)
        mse = float((recon - x).pow(2).sum(1).mean())
    return Reconstruction(np.asarray(points), to_numpy(recon), mse, to_numpy(curve))
