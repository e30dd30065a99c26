"""Planar and radial flows (Rezende & Mohamed 2015) on 2-D points, used in the density
direction x -> z so the likelihood is exact: log p(x) = log N(f(x); 0, I) + sum_k log|det J_k|.

Planar layer, u_hat the constrained u (w . u_hat >= -1 keeps the layer invertible):

    y = x + u_hat * tanh(w . x + b)
    log|det dy/dx| = log|1 + u_hat . w * (1 - tanh^2(w . x + b))|
    u_hat = u + (m(w . u) - w . u) w / |w|^2,   m(a) = -1 + softplus(a)

Radial layer, alpha = softplus(a) > 0, beta = -alpha + softplus(b) >= -alpha:

    r = |x - x0|,  h = 1 / (alpha + r)
    y = x + beta * h * (x - x0)
    log|det dy/dx| = (d - 1) log(1 + beta h) + log(1 + beta h - beta h^2 r),   d = 2

Neither layer has a closed-form inverse, so the page shows their densities, not samples.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class PlanarLayer(nn.Module):
    def __init__(self, dim: int = 2):
        super().__init__()
        self.w = nn.Parameter(torch.randn(dim) * 0.5)
        self.u = nn.Parameter(torch.randn(dim) * 0.5)
        self.b = nn.Parameter(torch.zeros(()))

    def u_hat(self) -> torch.Tensor:
        wu = self.w @ self.u
        return self.u + (-1 + F.softplus(wu) - wu) * self.w / (self.w @ self.w + 1e-12)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """y (n, 2) and log|det dy/dx| (n,) for x (n, 2)."""
        u = self.u_hat()                                        # (2,)
        a = x @ self.w + self.b                                 # (n,)
        h = torch.tanh(a)                                       # (n,)
        y = x + h[:, None] * u[None, :]                         # (n, 2)
        logdet = torch.log(torch.abs(1 + (1 - h ** 2) * (u @ self.w)) + 1e-12)   # (n,)
        return y, logdet


class RadialLayer(nn.Module):
    def __init__(self, dim: int = 2):
        super().__init__()
        self.x0 = nn.Parameter(torch.randn(dim))
        self.a = nn.Parameter(torch.randn(()))
        self.b = nn.Parameter(torch.randn(()))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """y (n, 2) and log|det dy/dx| (n,) for x (n, 2)."""
        alpha = F.softplus(self.a)
        beta = -alpha + F.softplus(self.b)
        diff = x - self.x0                                      # (n, 2)
        r = diff.norm(dim=1)                                    # (n,)
        h = 1 / (alpha + r)                                     # (n,)
        y = x + (beta * h)[:, None] * diff                      # (n, 2)
        logdet = (torch.log1p(beta * h) + torch.log(1 + beta * h - beta * h ** 2 * r))  # (n,)
        return y, logdet


KINDS = {"planar": PlanarLayer, "radial": RadialLayer}


class SimpleFlow(nn.Module):
    """K planar or radial layers in a row, then an elementwise affine map z = z * exp(s) + m
    (a learned scale and centre, 4 parameters): the density direction x -> z."""

    def __init__(self, kind: str, layers: int):
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"unknown flow layer {kind!r}; choose one of {', '.join(KINDS)}")
        if layers < 1:
            raise ValueError("a planar or radial flow needs at least one layer")
        self.kind = kind
        self.layers = nn.ModuleList(KINDS[kind]() for _ in range(int(layers)))
        self.log_scale = nn.Parameter(torch.zeros(2))
        self.shift = nn.Parameter(torch.zeros(2))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """z = f(x) (n, 2) and sum_k log|det df_k| (n,)."""
        logdet = torch.zeros(x.shape[0], dtype=x.dtype, device=x.device)
        for layer in self.layers:
            x, ld = layer(x)
            logdet = logdet + ld
        z = x * torch.exp(self.log_scale) + self.shift
        return z, logdet + self.log_scale.sum()
