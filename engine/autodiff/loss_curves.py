"""Regression losses against the error e = ŷ − y, with their derivative ∂L/∂ŷ by autograd of
PyTorch's own loss functions (what a trainer calls), not by a formula:

    quadratic  L = e²                                   (F.mse_loss)      ∂L/∂ŷ = 2e
    absolute   L = |e|                                  (F.l1_loss)       ∂L/∂ŷ = sign e (0 at 0)
    huber      L = e²/2 for |e| ≤ δ, δ(|e| − δ/2) else  (F.huber_loss)    ∂L/∂ŷ = clip(e, −δ, δ)
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F

REGRESSION_LOSSES = ("quadratic", "absolute", "huber")


def _loss(name: str, y_hat: torch.Tensor, y: torch.Tensor, delta: float) -> torch.Tensor:
    if name == "quadratic":
        return F.mse_loss(y_hat, y, reduction="none")
    if name == "absolute":
        return F.l1_loss(y_hat, y, reduction="none")
    if name == "huber":
        return F.huber_loss(y_hat, y, reduction="none", delta=delta)
    raise ValueError(f"unknown loss {name!r}: one of {', '.join(REGRESSION_LOSSES)}")


def regression_loss_curves(names: Sequence[str], errors: np.ndarray, delta: float = 1.0
                           ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{name: (L(e), ∂L/∂ŷ(e))} at the errors e (target y = 0, prediction ŷ = e)."""
    out = {}
    for name in names:
        y_hat = torch.as_tensor(np.asarray(errors, dtype=np.float64)).clone().requires_grad_(True)
        loss = _loss(name, y_hat, torch.zeros_like(y_hat), float(delta))
        (grad,) = torch.autograd.grad(loss.sum(), y_hat)
        out[name] = (loss.detach().numpy(), grad.numpy())
    return out
