"""Mechanics: a few word tokens through one attention head, step by step (seeded
embeddings and projections Q = X W_q, K = X W_k, V = X W_v), and the permutation check:
without positions, attention(P x) = P attention(x)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from engine.device import make_generator, to_numpy
from engine.attention.dot_product import (attention, causal_mask, sinusoidal_encoding,
                                          softmax_entropy)


WORDS = ("the", "cat", "sat", "on", "a", "warm", "mat", "today", "and", "slept",
         "very", "well")


@dataclass(frozen=True)
class Mechanics:
    tokens: list[str]      # (n,) labels in the order fed in
    x: np.ndarray          # (n, d_model) input embeddings (+ positions if added)
    q: np.ndarray          # (n, d_k)  q = x W_q
    k: np.ndarray          # (n, d_k)  k = x W_k
    v: np.ndarray          # (n, d_k)  v = x W_v
    scores: np.ndarray     # (n, n)    q k^T
    logits: np.ndarray     # (n, n)    scores / (sqrt(d_k) T) + mask  (-inf masked)
    weights: np.ndarray    # (n, n)    softmax over keys
    out: np.ndarray        # (n, d_k)  weights v
    divisor: float         # sqrt(d_k) * T, or T when not scaled

    @property
    def mean_entropy(self) -> float:
        """Mean over query rows of H = -sum_j w_j log w_j (nats)."""
        return float(softmax_entropy(torch.as_tensor(self.weights)).mean())


def token_embeddings(n_tokens: int, d_model: int, seed: int = 0) -> torch.Tensor:
    """x (n_tokens, d_model) ~ N(0, 1), seeded."""
    g = make_generator(seed, "cpu")
    return torch.randn(int(n_tokens), int(d_model), generator=g)


def projections(d_model: int, d_k: int, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """W_q, W_k, W_v (d_model, d_k) ~ N(0, 1/d_model) so q, k, v have unit variance."""
    g = make_generator(int(seed) + 1, "cpu")
    return tuple(torch.randn(int(d_model), int(d_k), generator=g) / math.sqrt(d_model)
                 for _ in range(3))


def mechanics(n_tokens: int = 5, d_model: int = 8, d_k: int = 4, temperature: float = 1.0,
              scale: bool = True, causal: bool = False, seed: int = 0,
              perm: list[int] | None = None, positions: bool = False) -> Mechanics:
    """One head on seeded random tokens: x (optionally reordered by perm, then optionally
    + sinusoidal PE of the new positions), q = x W_q, k = x W_k, v = x W_v,
    (out, weights) = attention(q, k, v, causal mask?, scale, temperature)."""
    x = token_embeddings(n_tokens, d_model, seed)
    labels = [WORDS[i % len(WORDS)] for i in range(int(n_tokens))]
    if perm is not None:
        order = torch.as_tensor(list(perm), dtype=torch.long)
        x, labels = x[order], [labels[i] for i in perm]
    if positions:
        x = x + sinusoidal_encoding(n_tokens, d_model)
    wq, wk, wv = projections(d_model, d_k, seed)
    q, k, v = x @ wq, x @ wk, x @ wv
    mask = causal_mask(n_tokens) if causal else None
    out, w = attention(q, k, v, mask=mask, scale=scale, temperature=temperature)
    divisor = (math.sqrt(d_k) if scale else 1.0) * float(temperature)
    scores = q @ k.T
    logits = scores / divisor + (mask if mask is not None else 0.0)
    return Mechanics(labels, to_numpy(x), to_numpy(q), to_numpy(k), to_numpy(v),
                     to_numpy(scores), to_numpy(logits), to_numpy(w), to_numpy(out), divisor)


def permutation_error(n_tokens: int, d_model: int, d_k: int, perm: list[int], seed: int = 0,
                      positions: bool = False, causal: bool = False,
                      temperature: float = 1.0, scale: bool = True) -> float:
    """max |out(P x) - P out(x)|: ~1e-7 without positions (equivariance), large with."""
    kw = dict(n_tokens=n_tokens, d_model=d_model, d_k=d_k, seed=seed, positions=positions,
              causal=causal, temperature=temperature, scale=scale)
    base = mechanics(**kw)
    permuted = mechanics(perm=perm, **kw)
    return float(np.abs(permuted.out - base.out[list(perm)]).max())


def seeded_permutation(n: int, seed: int) -> list[int]:
    """A permutation of range(n) that is not the identity (for n >= 2), seeded."""
    rng = np.random.default_rng(int(seed))
    for _ in range(100):
        p = rng.permutation(int(n)).tolist()
        if n < 2 or p != list(range(n)):
            return p
    return list(range(1, n)) + [0]
