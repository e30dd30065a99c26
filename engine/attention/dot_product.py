"""Scaled dot-product attention, additive masks, sinusoidal positions, why we scale.

    weights = softmax(q k^T / (sqrt(d_k) * temperature) + mask),  out = weights v
    masks: 0 where a query may look, -inf where it may not (Sparse-Transformer ones causal)
    PE[p, 2i] = sin(p / 10000^(2i/d)),  PE[p, 2i+1] = cos(p / 10000^(2i/d))
    entropy H = -sum_j w_j ln w_j of a softmax row; without 1/sqrt(d_k) it collapses as d_k grows
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
import torch

from engine.device import make_generator, resolve_device


NEG_INF = float("-inf")


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
              mask: torch.Tensor | None = None, scale: bool = True,
              temperature: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """(out, weights) with weights = softmax(q k^T / (sqrt(d_k) * temperature) + mask)
    over the keys (last axis) and out = weights v. Batched over leading dims.

    q: (..., T_q, d_k), k: (..., T_k, d_k), v: (..., T_k, d_v); mask: additive, broadcastable
    to (..., T_q, T_k) (0 keeps, -inf removes; a bool mask is True = keep). With scale=True
    and temperature=1 this equals torch.nn.functional.scaled_dot_product_attention.
    A query row whose keys are all masked gets all-zero weights (not NaN).
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1)
    divisor = (math.sqrt(d_k) if scale else 1.0) * float(temperature)
    logits = scores / divisor
    if mask is not None:
        mask = mask.to(logits.device)
        if mask.dtype == torch.bool:
            mask = torch.zeros(mask.shape, dtype=logits.dtype, device=logits.device) \
                .masked_fill(~mask, NEG_INF)
        logits = logits + mask.to(logits.dtype)
    weights = torch.softmax(logits, dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)  # fully masked rows -> zeros
    return weights @ v, weights


def _additive(allowed: torch.Tensor) -> torch.Tensor:
    return torch.zeros(allowed.shape).masked_fill(~allowed, NEG_INF)


def _offsets(n: int) -> torch.Tensor:
    """offset[i, j] = i - j (query i, key j)."""
    idx = torch.arange(int(n))
    return idx[:, None] - idx[None, :]


def full_mask(n: int, param: int | None = None) -> torch.Tensor:
    """No restriction: every query sees every key (n^2 entries)."""
    return torch.zeros(int(n), int(n))


def causal_mask(n: int, param: int | None = None) -> torch.Tensor:
    """Key j allowed for query i iff j <= i (n(n+1)/2 entries)."""
    return _additive(_offsets(n) >= 0)


def local_mask(n: int, window: int) -> torch.Tensor:
    """Causal sliding window: key j allowed iff 0 <= i - j < window."""
    d = _offsets(n)
    return _additive((d >= 0) & (d < max(1, int(window))))


def strided_mask(n: int, stride: int) -> torch.Tensor:
    """Causal strided pattern (Sparse Transformer): key j allowed iff j <= i and
    (i - j) mod stride == 0."""
    d = _offsets(n)
    return _additive((d >= 0) & (d % max(1, int(stride)) == 0))


def sparse_mask(n: int, stride: int) -> torch.Tensor:
    """Sparse Transformer's factorised pattern: local window `stride` OR strided `stride`
    (two heads together cover every earlier position in two hops); O(n sqrt n) with
    stride ~ sqrt(n)."""
    allowed = torch.isfinite(local_mask(n, stride)) | torch.isfinite(strided_mask(n, stride))
    return _additive(allowed)


MASKS: dict[str, Callable[[int, int], torch.Tensor]] = {
    "full": full_mask, "causal": causal_mask, "local": local_mask, "strided": strided_mask,
    "local + strided": sparse_mask,
}


def default_window(n: int) -> int:
    """sqrt(n) rounded up: the window/stride that makes the sparse patterns O(n sqrt n)."""
    return max(1, math.ceil(math.sqrt(int(n))))


def mask_nonzeros(name: str, ns, param: int | None = None) -> np.ndarray:
    """Number of allowed (query, key) pairs of MASKS[name] for each n in ns; param None ->
    default_window(n)."""
    fn = MASKS[name]
    return np.array([int(torch.isfinite(fn(int(n), param or default_window(int(n)))).sum())
                     for n in ns], dtype=np.int64)


def sinusoidal_encoding(n_positions: int, d_model: int) -> torch.Tensor:
    """PE (n_positions, d_model): PE[pos, 2i] = sin(pos / 10000^(2i/d_model)),
    PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model))."""
    pos = torch.arange(int(n_positions), dtype=torch.float64)[:, None]
    two_i = torch.arange(0, int(d_model), 2, dtype=torch.float64)
    angle = pos / torch.pow(10000.0, two_i / int(d_model))
    pe = torch.zeros(int(n_positions), int(d_model), dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : int(d_model) // 2])
    return pe.float()


def position_similarity(pe: torch.Tensor) -> torch.Tensor:
    """S = PE PE^T: S[p, q] = sum_i cos((p - q) w_i) for even d (depends only on p - q)."""
    return pe @ pe.T


def softmax_entropy(weights: torch.Tensor) -> torch.Tensor:
    """H = -sum_j w_j log w_j per row (0 log 0 = 0), in nats."""
    return -(torch.special.xlogy(weights, weights)).sum(-1)


def softmax_entropy_vs_dim(dims, scale: bool = True, seed: int = 0, n_keys: int = 16,
                           n_rows: int = 2048, device: str | torch.device | None = "cpu"
                           ) -> np.ndarray:
    """Mean entropy (nats) of attention rows softmax(q k^T / s) for q, k ~ N(0, I_{d_k})
    (unit variance per component), n_keys keys per row, for each d_k in dims;
    s = sqrt(d_k) if scale else 1. Unscaled scores have variance d_k, so the softmax
    saturates and the entropy falls towards 0; scaled scores have variance 1 and the
    entropy stays flat (below the maximum log n_keys)."""
    dev = resolve_device(device)
    g = make_generator(seed, dev)
    out = []
    for d in dims:
        d = int(d)
        q = torch.randn(n_rows, 1, d, generator=g, device=dev)
        k = torch.randn(n_rows, n_keys, d, generator=g, device=dev)
        _, w = attention(q, k, k, scale=scale)
        out.append(float(softmax_entropy(w).mean()))
    return np.asarray(out)
