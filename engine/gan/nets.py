"""The GAN's networks and optimizers: the MLP builder (optional spectral norm W / σ(W)), the
discriminator with PacGAN packing and minibatch-std, the optimizer registry, and the
differentiable optimizer updates used to unroll D (Metz et al. 2016).
"""
from __future__ import annotations

from typing import Callable

import torch
from torch import nn


def mlp(d_in: int, hidden: tuple[int, ...], d_out: int, act: Callable[[], nn.Module],
        spectral: bool = False) -> nn.Sequential:
    """Linear → act → ... → Linear; with `spectral`, every Linear weight is W / σ(W), σ from one
    power-iteration step per forward (σ ≈ uᵀWv)."""
    layers: list[nn.Module] = []
    dims = (d_in, *hidden)
    for a, b in zip(dims[:-1], dims[1:]):
        layers += [nn.Linear(a, b), act()]
    layers.append(nn.Linear(dims[-1], d_out))
    if spectral:
        layers = [nn.utils.parametrizations.spectral_norm(m) if isinstance(m, nn.Linear) else m
                  for m in layers]
    return nn.Sequential(*layers)


# foreach=True: one multi-tensor call per update instead of one per parameter (the default on
# CUDA; on the CPU a little less Python per step, bitwise the per-parameter loop's numbers).
OPTIMIZERS: dict[str, Callable] = {
    "adam": lambda params, lr, betas: torch.optim.Adam(params, lr=lr, betas=betas, foreach=True),
    "rmsprop": lambda params, lr, betas: torch.optim.RMSprop(params, lr=lr,   # PyTorch α = 0.99
                                                             foreach=True),
    "sgd": lambda params, lr, betas: torch.optim.SGD(params, lr=lr, foreach=True),
}


# Differentiable optimizer updates for the unrolled D, on all of D's parameters flattened
# into one vector p (a few large ops instead of many small ones): update(p, g, state, lr,
# betas) -> (new p, new state). Every op keeps the graph, so G's gradient flows through them.

def _unroll_state(opt: torch.optim.Optimizer, params: list[torch.Tensor]) -> dict:
    """opt's current state for `params`, detached and flattened like p: step t, and Adam's
    moments m, v or RMSprop's square_avg s where it has them (absent before its first step:
    the updates then start from zeros)."""
    st = [opt.state.get(p, {}) for p in params]
    state: dict = {"t": float(st[0]["step"]) if st and "step" in st[0] else 0.0}
    for name, key in (("m", "exp_avg"), ("v", "exp_avg_sq"), ("s", "square_avg")):
        if st and key in st[0]:
            state[name] = torch.cat([s[key].detach().reshape(-1) for s in st])
    return state


def _adam_unroll(p, g, state, lr, betas, eps=1e-8):
    """Adam: m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g², p ← p − lr·m̂ / (√(v̂ + eps²) + eps),
    m̂ = m / (1 − β₁ᵗ), v̂ = v / (1 − β₂ᵗ). The eps² inside the root keeps its derivative finite
    where v = 0; otherwise this is torch.optim.Adam's step (checked in the tests)."""
    b1, b2 = betas
    t = state["t"] + 1
    zero = torch.zeros_like(p)
    m = b1 * state.get("m", zero) + (1 - b1) * g
    v = b2 * state.get("v", zero) + (1 - b2) * g * g
    p = p - (lr / (1 - b1 ** t)) * m / ((v / (1 - b2 ** t) + eps * eps).sqrt() + eps)
    return p, {**state, "t": t, "m": m, "v": v}


def _rmsprop_unroll(p, g, state, lr, betas, alpha=0.99, eps=1e-8):
    """RMSprop (PyTorch's): s ← αs + (1−α)g², p ← p − lr·g / (√(s + eps²) + eps)."""
    s = alpha * state.get("s", torch.zeros_like(p)) + (1 - alpha) * g * g
    return p - lr * g / ((s + eps * eps).sqrt() + eps), {**state, "s": s}


UNROLL_UPDATES: dict[str, Callable] = {
    "adam": _adam_unroll,
    "rmsprop": _rmsprop_unroll,
    "sgd": lambda p, g, state, lr, betas: (p - lr * g, state),
}


class Discriminator(nn.Module):
    """D on 2-D points with the optional remedies that change its input:
    PacGAN `pack`: D sees `pack` samples concatenated, (B, 2) -> (B/pack, 2·pack);
    `minibatch_std`: the mean over features of the batch std, s = mean_j std_i(x_ij), is
    appended to every row as one more input."""

    def __init__(self, hidden: tuple[int, ...], pack: int = 1, minibatch_std: bool = False,
                 spectral: bool = False, dim: int = 2):
        super().__init__()
        self.pack, self.minibatch_std = int(pack), bool(minibatch_std)
        # each row's output depends on that row alone (no packing, no batch statistic, no
        # power iteration per call): real and fake rows may then share one forward
        self.rowwise = self.pack == 1 and not self.minibatch_std and not spectral
        d_in = dim * self.pack + (1 if self.minibatch_std else 0)
        self.net = mlp(d_in, hidden, 1, lambda: nn.LeakyReLU(0.2), spectral)

    def prepare(self, x: torch.Tensor) -> torch.Tensor:
        if self.pack > 1:
            x = x[: (len(x) // self.pack) * self.pack].reshape(-1, x.shape[1] * self.pack)
        if self.minibatch_std:
            s = x.std(0, unbiased=False).mean() if len(x) > 1 else x.new_zeros(())
            x = torch.cat([x, s.expand(len(x), 1)], 1)
        return x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(self.prepare(x)).squeeze(-1)

    def pointwise(self, x: torch.Tensor, context: torch.Tensor | None = None) -> torch.Tensor:
        """D's value for each single point x (for heatmaps and arrows): the point is packed
        with copies of itself, and the minibatch-std feature is taken from `context` (a
        batch of fakes) or 0."""
        h = x.repeat(1, self.pack) if self.pack > 1 else x
        if self.minibatch_std:
            s = (context.std(0, unbiased=False).mean() if context is not None and len(context) > 1
                 else x.new_zeros(()))
            h = torch.cat([h, s.expand(len(h), 1)], 1)
        return self.net(h).squeeze(-1)
