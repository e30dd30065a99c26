"""Deep embedded clustering (DEC, Xie et al. 2016; notes 001, L4686-L4822): an autoencoder's
code z_i = f(x_i) and k cluster centres mu_j, refined together.

    soft_assign(z, mu, alpha):      q_ij = (1 + |z_i - mu_j|^2 / alpha)^(-(alpha + 1) / 2)
                                           / sum_j' (same with mu_j')          (Student's t)
    target_distribution(q):         p_ij = (q_ij^2 / f_j) / sum_j' (q_ij'^2 / f_j'),
                                    f_j = sum_i q_ij                  (sharpened, size-balanced)
    kl_loss(p, q):                  L = (1/n) sum_i sum_j p_ij log(p_ij / q_ij)     (KL(P||Q))
    gradient_terms(z, mu, p, q, alpha): the term of cluster j in dL/dz_i, with p held fixed,
                                    g_ij = (1/n) (alpha + 1)/alpha (1 + |z_i - mu_j|^2/alpha)^-1
                                           (p_ij - q_ij) (z_i - mu_j),  dL/dz_i = sum_j g_ij

The autoencoder (64 -> HIDDEN -> CODE -> HIDDEN -> 64) is pretrained on scikit-learn's digits
by mean squared reconstruction error (scripts/pretrain_representations.py, seeded) and shipped
in assets/weights/representations_ae.pt (read once per process)."""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import torch
from torch import nn

from engine import weights
from engine.datasets import load_digits

CODE = 10                 # the code's width
HIDDEN = 128              # the autoencoder's hidden layer
PRETRAIN_EPOCHS = 60      # Adam epochs of the autoencoder's pretraining
PRETRAIN_LR = 2e-3
BATCH = 128
SHIPPED = Path(__file__).resolve().parents[2] / "assets" / "weights" / "representations_ae.pt"
MODEL_CONFIG = {"name": "digits_autoencoder", "inputs": 64, "hidden": HIDDEN, "code": CODE}


def soft_assign(z: torch.Tensor, mu: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
    """q (n, k) of the module docstring; z (n, d), mu (k, d)."""
    d2 = torch.cdist(z, mu).pow(2)                                 # (n, k)
    kernel = (1 + d2 / alpha).pow(-(alpha + 1) / 2)                # (n, k)
    return kernel / kernel.sum(1, keepdim=True)


def target_distribution(q: torch.Tensor) -> torch.Tensor:
    """p (n, k) of the module docstring."""
    weight = q.pow(2) / q.sum(0, keepdim=True)                     # (n, k)
    return weight / weight.sum(1, keepdim=True)


def kl_loss(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """L = (1/n) sum_ij p_ij log(p_ij / q_ij), a scalar (0 log 0 = 0)."""
    terms = torch.where(p > 0, p * (p.clamp_min(1e-30).log() - q.clamp_min(1e-30).log()),
                        torch.zeros_like(p))                       # (n, k)
    return terms.sum() / len(p)


def gradient_terms(z: torch.Tensor, mu: torch.Tensor, p: torch.Tensor, q: torch.Tensor,
                   alpha: float = 1.0) -> torch.Tensor:
    """g (n, k, d) of the module docstring: g[i, j] is what cluster j adds to dL/dz_i."""
    diff = z[:, None, :] - mu[None, :, :]                          # (n, k, d)
    d2 = diff.pow(2).sum(-1)                                       # (n, k)
    coeff = (alpha + 1) / alpha / (1 + d2 / alpha) * (p - q) / len(z)   # (n, k)
    return coeff[..., None] * diff


def pull_toward(z: torch.Tensor, mu: torch.Tensor, p: torch.Tensor, q: torch.Tensor,
                alpha: float, j: int) -> torch.Tensor:
    """(n,) how hard gradient descent pulls each z_i toward mu_j through cluster j's term:
    -g_ij . (mu_j - z_i) / |mu_j - z_i|, times n (per point, not per mean). Positive: toward
    the centre."""
    g = gradient_terms(z, mu, p, q, alpha)[:, j]                   # (n, d)
    toward = mu[j] - z                                             # (n, d)
    unit = toward / toward.norm(dim=1, keepdim=True).clamp_min(1e-12)
    return -(g * unit).sum(1) * len(z)


class Autoencoder(nn.Module):
    """x (n, 64) in [0, 1] -> z = encoder(x) (n, CODE) -> decoder(z) (n, 64), ReLU between."""

    def __init__(self, code: int = CODE, hidden: int = HIDDEN):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, code))
        self.decoder = nn.Sequential(nn.Linear(code, hidden), nn.ReLU(), nn.Linear(hidden, 64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.encoder(x))


def digits_pixels() -> tuple[np.ndarray, np.ndarray]:
    """(x (1797, 64) float32 in [0, 1], y (1797,) int64): scikit-learn's digits, flattened."""
    d = load_digits()
    return d.images.reshape(len(d.images), -1).astype(np.float32), d.labels.astype(np.int64)


def pretrain_autoencoder(seed: int = 0, epochs: int = PRETRAIN_EPOCHS,
                         progress=None) -> tuple[Autoencoder, float]:
    """(an Autoencoder fitted to all digits, its final mean squared error): Adam on
    mean |x - decoder(encoder(x))|^2 over seeded minibatches of BATCH, labels unused.
    progress(epoch) is called after each epoch."""
    x = torch.from_numpy(digits_pixels()[0])                       # (n, 64)
    gen = torch.Generator().manual_seed(int(seed))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        model = Autoencoder()
    opt = torch.optim.Adam(model.parameters(), lr=PRETRAIN_LR)
    for epoch in range(int(epochs)):
        for idx in torch.randperm(len(x), generator=gen).split(BATCH):
            loss = (model(x[idx]) - x[idx]).pow(2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        if progress is not None:
            progress(epoch + 1)
    with torch.no_grad():
        mse = float((model(x) - x).pow(2).mean())
    return model.eval(), mse


def load_autoencoder(path: str | Path = SHIPPED, device: str = "cpu") -> Autoencoder:
    """The shipped pretrained Autoencoder (engine.weights format; a WeightsError says what is
    wrong with a missing or stale file and how to rebuild it)."""
    w = weights.load(path, device, expect_config=MODEL_CONFIG)
    model = Autoencoder().to(device)
    model.load_state_dict(w.state)
    return model.eval()


@functools.lru_cache(maxsize=2)
def shipped_state() -> dict[str, torch.Tensor]:
    """The shipped autoencoder's state dict on the CPU, read once per process."""
    return {k: v.clone() for k, v in load_autoencoder().state_dict().items()}


@functools.lru_cache(maxsize=2)
def digit_codes() -> np.ndarray:
    """(1797, CODE) float32: the shipped encoder's codes of all digits."""
    model = Autoencoder()
    model.load_state_dict(shipped_state())
    with torch.no_grad():
        return model.encoder(torch.from_numpy(digits_pixels()[0])).numpy()
