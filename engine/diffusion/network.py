"""The eps-network eps_theta(x_t, t, c): an MLP on [x_t, sinusoidal emb(t), class emb(c)].
"""
from __future__ import annotations

import math

import torch
from torch import nn

from engine.diffusion.schedule import EpsFn


def timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal embedding [sin(t f_i), cos(t f_i)], f_i = 10000^(-i/half), i < half."""
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=t.device) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([torch.sin(args), torch.cos(args)], -1)


class EpsMLP(nn.Module):
    """eps_theta(x_t, t, c): an MLP on [x_t, emb(t), emb(c)] with SiLU. Class token
    `num_classes` is the "no class" token used for classifier-free guidance."""

    def __init__(self, hidden: int = 64, depth: int = 3, emb_dim: int = 32,
                 num_classes: int = 0):
        super().__init__()
        self.hidden, self.depth, self.emb_dim, self.num_classes = hidden, depth, emb_dim, num_classes
        self.class_emb = nn.Embedding(num_classes + 1, emb_dim) if num_classes else None
        d_in = 2 + emb_dim + (emb_dim if num_classes else 0)
        layers: list[nn.Module] = []
        for i in range(depth):
            layers += [nn.Linear(d_in if i == 0 else hidden, hidden), nn.SiLU()]
        layers.append(nn.Linear(hidden, 2))
        self.net = nn.Sequential(*layers)

    def config(self) -> dict:
        return {"hidden": self.hidden, "depth": self.depth, "emb_dim": self.emb_dim,
                "num_classes": self.num_classes}

    def forward(self, x: torch.Tensor, t, c=None) -> torch.Tensor:
        """eps_theta(x, t, c); t and c are scalars or (n,) tensors. With one t and one c for
        the whole batch (sampling), the first layer's embedding part W_e [emb(t), emb(c)] + b
        is computed once and broadcast: the same numbers, a third fewer multiply-adds. With a
        t per row (training) the first layer is one matmul on [x, emb(t), emb(c)]."""
        t = torch.as_tensor(t, device=x.device).reshape(-1)
        emb = [timestep_embedding(t, self.emb_dim)]
        if self.class_emb is not None:
            if c is None:
                c = self.num_classes
            c = torch.as_tensor(c, device=x.device).long().reshape(-1)
            emb.append(self.class_emb(c).expand(t.shape[0], -1) if c.shape[0] == 1 else
                       self.class_emb(c))
        emb = torch.cat([e.expand(max(e.shape[0] for e in emb), -1) for e in emb], -1)
        if emb.shape[0] == x.shape[0] and x.shape[0] > 1:
            return self.net(torch.cat([x, emb], -1))
        first = self.net[0]
        h = x @ first.weight[:, :2].T + (emb @ first.weight[:, 2:].T + first.bias)
        return self.net[1:](h)


def network_eps(model: EpsMLP, c=None) -> EpsFn:
    """eps(x, t) of a network (conditioned on class c, or unconditional when c is None)."""
    def fn(x: torch.Tensor, t: int) -> torch.Tensor:
        with torch.no_grad():
            return model(x, t, c)
    return fn
