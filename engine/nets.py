"""Shared building blocks: the weight-initialisation schemes (one registry) and an MLP builder.

Every scheme draws the weight matrix W of shape (fan_out, fan_in) of a layer z = W h + b from
a torch.Generator; `gain` multiplies the scheme's standard deviation (or uniform bound):

    normal            W ~ N(0, gain² / fan_in)             mean-field: gain = σ_w; σ_w = 1 is LeCun
    xavier_normal     W ~ N(0, gain² · 2 / (fan_in + fan_out))                          (Glorot)
    xavier_uniform    W ~ U(-a, a),  a = gain · √6 / √(fan_in + fan_out)   (Var = a²/3, as above)
    kaiming_normal    W ~ N(0, gain² · 2 / fan_in)                                          (He)
    kaiming_uniform   W ~ U(-a, a),  a = gain · √6 / √fan_in                    (Var = 2 / fan_in)
    orthogonal        W = gain · Q, Q with orthonormal rows or columns (QR of a Gaussian matrix,
                      signs fixed by diag(R)), so every entry has variance 1 / max(fan_in, fan_out)
    zeros             W = 0

The variance argument (one layer, independent zero-mean entries): Var(z) = fan_in · Var(W) ·
E[h²]. Xavier keeps it for tanh near 0 in both directions (2 / (fan_in + fan_out)); He keeps it
through ReLU, which halves the second moment (E[relu(z)²] = Var(z) / 2), hence 2 / fan_in.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import torch
from torch import nn

from engine.device import make_generator


@dataclass(frozen=True)
class InitScheme:
    """One way to draw W (fan_out, fan_in); `std(fan_in, fan_out)` is the entry std at gain 1."""
    label: str
    std: Callable[[int, int], float]
    draw: Callable[[int, int, torch.Generator, float], torch.Tensor]

    def __call__(self, fan_in: int, fan_out: int, generator: torch.Generator,
                 gain: float = 1.0) -> torch.Tensor:
        return self.draw(int(fan_in), int(fan_out), generator, float(gain))


def _gaussian(std: Callable[[int, int], float]):
    def draw(fan_in: int, fan_out: int, g: torch.Generator, gain: float) -> torch.Tensor:
        return gain * std(fan_in, fan_out) * torch.randn(fan_out, fan_in, generator=g)
    return draw


def _uniform(std: Callable[[int, int], float]):
    """U(-a, a) with a = √3 · std, the bound that gives variance std²."""
    def draw(fan_in: int, fan_out: int, g: torch.Generator, gain: float) -> torch.Tensor:
        bound = gain * math.sqrt(3.0) * std(fan_in, fan_out)
        return (2.0 * torch.rand(fan_out, fan_in, generator=g) - 1.0) * bound
    return draw


def _orthogonal(fan_in: int, fan_out: int, g: torch.Generator, gain: float) -> torch.Tensor:
    rows, cols = max(fan_in, fan_out), min(fan_in, fan_out)
    q, r = torch.linalg.qr(torch.randn(rows, cols, generator=g, dtype=torch.float64))
    q = q * torch.sign(torch.diagonal(r)).masked_fill(torch.diagonal(r) == 0, 1.0)
    w = q if fan_out >= fan_in else q.T
    return (gain * w).to(torch.float32)


def _zeros(fan_in: int, fan_out: int, g: torch.Generator, gain: float) -> torch.Tensor:
    return torch.zeros(fan_out, fan_in)


def lecun_std(fan_in: int, fan_out: int) -> float:
    return math.sqrt(1.0 / fan_in)


def xavier_std(fan_in: int, fan_out: int) -> float:
    return math.sqrt(2.0 / (fan_in + fan_out))


def kaiming_std(fan_in: int, fan_out: int) -> float:
    return math.sqrt(2.0 / fan_in)


def orthogonal_std(fan_in: int, fan_out: int) -> float:
    return math.sqrt(1.0 / max(fan_in, fan_out))


INITS: dict[str, InitScheme] = {
    "normal": InitScheme("normal σ_w: N(0, σ_w²/fan_in)", lecun_std, _gaussian(lecun_std)),
    "xavier_normal": InitScheme("Xavier (Glorot) normal", xavier_std, _gaussian(xavier_std)),
    "xavier_uniform": InitScheme("Xavier (Glorot) uniform", xavier_std, _uniform(xavier_std)),
    "kaiming_normal": InitScheme("He (Kaiming) normal", kaiming_std, _gaussian(kaiming_std)),
    "kaiming_uniform": InitScheme("He (Kaiming) uniform", kaiming_std, _uniform(kaiming_std)),
    "orthogonal": InitScheme("orthogonal", orthogonal_std, _orthogonal),
    "zeros": InitScheme("zeros", lambda fan_in, fan_out: 0.0, _zeros),
}


def init_weight(name: str, fan_in: int, fan_out: int, generator: torch.Generator,
                gain: float = 1.0) -> torch.Tensor:
    """W (fan_out, fan_in) drawn by INITS[name]; a clear KeyError for an unknown name."""
    if name not in INITS:
        raise KeyError(f"unknown init {name!r}; choose one of {sorted(INITS)}")
    return INITS[name](fan_in, fan_out, generator, gain)


ACTIVATIONS: dict[str, Callable[[], nn.Module]] = {
    "linear": nn.Identity,
    "tanh": nn.Tanh,
    "relu": nn.ReLU,
    "sigmoid": nn.Sigmoid,
    "gelu": nn.GELU,
}

NORMS: dict[str, Callable[[int], nn.Module] | None] = {
    "none": None,
    "batchnorm": lambda width: nn.BatchNorm1d(width),
    "layernorm": lambda width: nn.LayerNorm(width),
}


def mlp(widths: Sequence[int], activation: str = "relu", init: str = "kaiming_normal",
        gain: float = 1.0, bias_std: float = 0.0, norm: str = "none", seed: int = 0,
        output_init: str | None = None) -> nn.Sequential:
    """Linear -> [norm] -> activation for every hidden layer, then a plain Linear.

    widths = (input, hidden_1, ..., hidden_L, output). Hidden weights are drawn by
    INITS[init] with `gain`; the output layer by INITS[output_init or init] (gain 1 unless it
    is the same scheme); biases b ~ N(0, bias_std²). Deterministic for a seed (CPU generator)."""
    widths = [int(w) for w in widths]
    if len(widths) < 2 or min(widths) < 1:
        raise ValueError("widths needs an input and an output size, all positive")
    for name, table in (("activation", ACTIVATIONS), ("norm", NORMS)):
        value = activation if name == "activation" else norm
        if value not in table:
            raise KeyError(f"unknown {name} {value!r}; choose one of {sorted(table)}")
    g = make_generator(seed, "cpu")
    layers: list[nn.Module] = []
    last = len(widths) - 2
    for i, (fan_in, fan_out) in enumerate(zip(widths[:-1], widths[1:])):
        lin = nn.Linear(fan_in, fan_out)
        scheme, layer_gain = (init, gain) if i < last else (output_init or init,
                                                             gain if output_init is None else 1.0)
        with torch.no_grad():
            lin.weight.copy_(init_weight(scheme, fan_in, fan_out, g, layer_gain))
            lin.bias.copy_(bias_std * torch.randn(fan_out, generator=g))
        layers.append(lin)
        if i < last:
            if NORMS[norm] is not None:
                layers.append(NORMS[norm](fan_out))
            layers.append(ACTIVATIONS[activation]())
    return nn.Sequential(*layers)
