"""Gradient flow through time: ‖∂h_T/∂h_{T-k}‖ measured with autograd on the unrolled cells.

For a linear RNN h_t = W h_{t-1} + ..., ∂h_T/∂h_{T-k} = W^k, whose norm grows or decays like
ρ(W)^k (ρ the spectral radius); tanh and the LSTM's forget gate change that rate.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from engine.device import make_generator, resolve_device, to_numpy
from engine.recurrent.cells import MODULES, N_BLOCKS, _unroll, cell_params


@dataclass(frozen=True)
class GradientFlow:
    """norms[k] = RMS over unit directions e_j of ‖∂(e_j·h_T)/∂h_{T-k}‖ = ‖J_k‖_F / √H,
    J_k = ∂h_T/∂h_{T-k}, for lags k = 0..T-1 (norms[0] = 1)."""
    kind: str
    lags: np.ndarray
    norms: np.ndarray
    spectral_radius: float     # of the recurrent matrix (block) after rescaling
    forget_bias: float
    clip: float | None


def _init_module(kind: str, input_size: int, hidden: int, seed: int, init: str) -> nn.RNNBase:
    """A fresh module of `kind`, initialised from `seed` (U(-1/√H, 1/√H) as PyTorch does, or
    orthogonal recurrent blocks for init="orthogonal")."""
    module = MODULES[kind](input_size, hidden)
    g = make_generator(seed, "cpu")
    k = 1.0 / math.sqrt(hidden)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.rand(p.shape, generator=g) * 2 * k - k)
        if init == "orthogonal":
            for b in range(N_BLOCKS[kind]):
                q, r = torch.linalg.qr(torch.randn(hidden, hidden, generator=g))
                module.weight_hh_l0[b * hidden:(b + 1) * hidden] = q * torch.sign(torch.diag(r))
        elif init != "uniform":
            raise ValueError(f"unknown init {init!r}: uniform | orthogonal")
    return module


def spectral_radius(W: torch.Tensor) -> float:
    """ρ(W) = max |λ_i(W)|."""
    return float(torch.linalg.eigvals(W.detach().double().cpu()).abs().max())


def set_spectral_radius(module: nn.RNNBase, rho: float) -> None:
    """Scale each H×H gate block of W_hh so that its spectral radius is rho."""
    H = module.hidden_size
    with torch.no_grad():
        W = module.weight_hh_l0
        for b in range(W.shape[0] // H):
            block = W[b * H:(b + 1) * H]
            block.mul_(rho / max(spectral_radius(block), 1e-12))


def set_forget_bias(module: nn.RNNBase, kind: str, bias: float) -> None:
    """LSTM: total forget bias b_if + b_hf = bias (f ≈ σ(bias) at rest). GRU: the same for
    the update gate z, which plays the keep role (h_t = (1-z) n + z h_{t-1}). RNN: nothing."""
    H = module.hidden_size
    block = {"lstm": 1, "gru": 1}.get(kind)
    if block is None:
        return
    with torch.no_grad():
        module.bias_ih_l0[block * H:(block + 1) * H] = bias
        module.bias_hh_l0[block * H:(block + 1) * H] = 0.0


def gradient_flow(kind: str, T: int = 100, hidden: int = 32, seed: int = 0,
                  spectral_radius: float | None = None, forget_bias: float = 0.0,
                  clip: float | None = None, input_size: int = 4, init: str = "uniform",
                  device: str | torch.device | None = "cpu") -> GradientFlow:
    """‖∂h_T/∂h_{T-k}‖ for k = 0..T-1 through a freshly initialised `kind` module
    ("rnn", "gru", "lstm", or "linear": h_t = W_hh h_{t-1} + W_ih x_t + b) driven by a seeded
    input x_t ~ N(0, I).

    One backward pass gives the whole Jacobian: the batch holds H copies of the sequence and
    L = Σ_j h_T[j, j], so the gradient of copy j is row j of J_k. With `clip`, each row's
    gradient is rescaled to norm ≤ clip at every step on the way back (per-step gradient
    clipping). For a linear RNN J_k = W_hhᵏ, so norms[k] ≈ ρᵏ (exactly ρᵏ for a scaled
    orthogonal W_hh); with tanh it is Π diag(1 - h²) W_hh. Computed in float64 (float32 on
    MPS) so that tiny gradients (1e-40) do not underflow to 0."""
    if kind not in MODULES:
        raise ValueError(f"unknown kind {kind!r}; choose from {', '.join(MODULES)}")
    if T < 1 or hidden < 1:
        raise ValueError("T and hidden must be >= 1")
    dev = resolve_device(device)
    module = _init_module(kind, input_size, hidden, seed, init)
    if spectral_radius is not None:
        set_spectral_radius(module, float(spectral_radius))
    set_forget_bias(module, kind, float(forget_bias))
    dtype = torch.float32 if dev.type == "mps" else torch.float64  # float64: no underflow
    module = module.to(dev, dtype)
    p = cell_params(module)
    g = make_generator(seed + 1, "cpu")
    x = torch.randn(T, 1, input_size, generator=g, dtype=torch.float64)
    x = x.to(dev, dtype).expand(T, hidden, input_size)
    h0 = torch.zeros(hidden, hidden, device=dev, dtype=dtype)
    c0 = torch.zeros(hidden, hidden, device=dev, dtype=dtype) if kind == "lstm" else None
    grads: dict[int, torch.Tensor] = {}

    def hook_for(t: int):
        def hook(grad: torch.Tensor) -> torch.Tensor:
            if clip is not None:
                n = grad.norm(dim=1, keepdim=True)
                grad = grad * torch.clamp(float(clip) / (n + 1e-30), max=1.0)
            grads[t] = grad.detach()
            return grad
        return hook

    def on_hidden(t: int, h: torch.Tensor) -> torch.Tensor:
        if h.requires_grad:
            h.register_hook(hook_for(t))
        return h

    hs, _, _ = _unroll(kind, p, x, h0, c0, on_hidden=on_hidden)
    hs[-1].diagonal().sum().backward()
    rows = torch.stack([grads.get(t, torch.zeros(hidden, hidden, device=dev, dtype=dtype))
                        for t in range(T)], 0)                      # (T, H, H)
    norms = rows.pow(2).sum(dim=(1, 2)).div(hidden).sqrt().flip(0)  # by lag k = T-1-t
    rho = globals()["spectral_radius"](module.weight_hh_l0[:hidden])
    return GradientFlow(kind, np.arange(T), to_numpy(norms).astype(np.float64), rho,
                        float(forget_bias) if kind in ("lstm", "gru") else 0.0,
                        None if clip is None else float(clip))
