"""Activation functions φ and their derivatives φ′ on a grid of pre-activations z, the
derivative taken by autograd (the same backward pass a network uses), not by a formula.

    z, curves = activation_curves(["tanh", "relu"], 5.0, 401)
    phi, dphi = curves["tanh"]            # φ(z), φ′(z) as numpy arrays

Leaky ReLU uses slope 0.1 for z < 0 (PyTorch's default is 0.01, hard to see on a plot); Swish is
z·σ(z) (β = 1, PyTorch's SiLU).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F

ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "relu": torch.relu,
    "leaky_relu": lambda z: F.leaky_relu(z, 0.1),
    "elu": F.elu,
    "gelu": F.gelu,
    "swish": F.silu,
    "mish": F.mish,
    "softplus": F.softplus,
}


def activation_curves(names: Sequence[str], z_max: float, n: int = 401
                      ) -> tuple[np.ndarray, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """(z on [−z_max, z_max], {name: (φ(z), φ′(z))}); φ′ from autograd of Σ φ(z)."""
    z0 = torch.linspace(-float(z_max), float(z_max), int(n), dtype=torch.float64)
    out = {}
    for name in names:
        z = z0.clone().requires_grad_(True)
        phi = ACTIVATIONS[name](z)
        (dphi,) = torch.autograd.grad(phi.sum(), z)
        out[name] = (phi.detach().numpy(), dphi.numpy())
    return z0.numpy(), out
