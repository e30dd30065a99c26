"""Real NVP on 2-D points (notes 004, Sec. 11.2): a stack of affine coupling layers whose
partitions alternate (notes 004, Fig. 11.3), a standard Gaussian base, exact log-likelihood.

    z = f(x) = f_K(... f_1(x)),   h_0 = x, h_k = f_k(h_{k-1})
    log p(x) = log N(z; 0, I) + sum_k log|det df_k/dh_{k-1}|         (notes 004, Eq. 11.6)
    log N(z; 0, I) = -|z|^2 / 2 - log(2 pi)                           (2-D)
    sample: z ~ N(0, I), x = f_1^{-1}(... f_K^{-1}(z))
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

import torch
from torch import nn

from engine.flows.coupling import S_MAX, AffineCoupling

LOG_2PI = math.log(2 * math.pi)


def gaussian_log_prob(z: torch.Tensor) -> torch.Tensor:
    """log N(z; 0, I) for z (n, 2): -|z|^2/2 - log(2 pi). Returns (n,)."""
    return -0.5 * (z ** 2).sum(-1) - LOG_2PI


def compose(layers: Sequence[nn.Module], x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A flow of invertible layers f = f_K o ... o f_1: z = f(x) (n, d) and
    sum_k log|det df_k| (n,), each layer returning (its output, its log-determinant)."""
    logdet = torch.zeros(x.shape[0], dtype=x.dtype, device=x.device)   # (n,)
    for layer in layers:
        x, ld = layer(x)
        logdet = logdet + ld
    return x, logdet


def compose_inverse(layers: Sequence[nn.Module], z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """x = f^{-1}(z) (n, d) through the layers' inverses, last layer first, and
    sum_k log|det df_k^{-1}| (n,)."""
    logdet = torch.zeros(z.shape[0], dtype=z.dtype, device=z.device)   # (n,)
    for layer in reversed(layers):
        z, ld = layer.inverse(z)  # type: ignore[operator]
        logdet = logdet + ld
    return z, logdet


class RealNVP(nn.Module):
    """K coupling layers, layer k keeps coordinate k % 2 (alternating partitions)."""

    def __init__(self, layers: int = 8, hidden: int = 64, s_max: float = S_MAX):
        super().__init__()
        if layers < 0:
            raise ValueError("the number of coupling layers must be >= 0")
        self.keeps = tuple(k % 2 for k in range(layers))     # the coordinate layer k copies
        self.layers = nn.ModuleList(AffineCoupling(k, hidden, s_max) for k in self.keeps)
        self.hidden = int(hidden)

    def couplings(self) -> list[AffineCoupling]:
        """The layers, first to last."""
        return [cast(AffineCoupling, m) for m in self.layers]

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """z = f(x) (n, 2) and sum_k log|det df_k| (n,)."""
        return compose(self.couplings(), x)

    def inverse(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x = f^{-1}(z) (n, 2) and sum_k log|det df_k^{-1}| (n,)."""
        return compose_inverse(self.couplings(), z)

    def stages(self, x: torch.Tensor) -> list[torch.Tensor]:
        """[h_0 = x, h_1, ..., h_K = z]: the points after each layer."""
        out = [x]
        for layer in self.layers:
            x, _ = layer(x)
            out.append(x)
        return out

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """log p(x) = log N(f(x)) + sum_k log|det df_k|, (n,)."""
        z, logdet = self(x)
        return gaussian_log_prob(z) + logdet

    @torch.no_grad()
    def sample(self, n: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """n points x = f^{-1}(z), z ~ N(0, I)."""
        p = next(self.parameters(), None)
        device = p.device if p is not None else torch.device("cpu")
        z = torch.randn(n, 2, generator=generator, device=device)
        return self.inverse(z)[0]
