"""Turning next-token logits z (V,) into the distribution a sampler draws from.

    temperature   p_i = softmax(z / T)_i;  T = 0 is the limit: all mass on argmax z (greedy)
    top-k         keep the k most probable tokens
    top-p         keep the smallest set of most probable tokens whose mass reaches p
                  (the most probable token is always kept, so p = 0 is greedy too)
    renormalise   q_i = p_i [i kept] / sum_j p_j [j kept]

The entropy H(q) = -sum_i q_i log2 q_i is in bits. All functions are pure: numpy in, numpy
out, computed in float64."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

T_MIN = 1e-3          # below this a temperature is treated as 0 (greedy)


def softmax(z: np.ndarray) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    e = np.exp(z - z.max())
    return e / e.sum()


def with_temperature(logits: np.ndarray, temperature: float) -> np.ndarray:
    """softmax(z / T); for T < T_MIN the one-hot of argmax z (greedy, no division by 0)."""
    z = np.asarray(logits, dtype=np.float64)
    if not np.isfinite(temperature) or temperature < 0:
        raise ValueError(f"a temperature must be a number >= 0, not {temperature}")
    if temperature < T_MIN:
        out = np.zeros_like(z)
        out[int(np.argmax(z))] = 1.0
        return out
    return softmax(z / float(temperature))


def top_k_mask(p: np.ndarray, k: int) -> np.ndarray:
    """Boolean (V,): the k most probable tokens (k <= 0 or k >= V keeps all)."""
    p = np.asarray(p)
    if k <= 0 or k >= len(p):
        return np.ones(len(p), dtype=bool)
    keep = np.zeros(len(p), dtype=bool)
    keep[np.argsort(-p, kind="stable")[:int(k)]] = True
    return keep


def top_p_mask(p: np.ndarray, top_p: float) -> np.ndarray:
    """Boolean (V,): the smallest prefix of tokens sorted by falling p whose mass reaches
    top_p (the first token always kept; top_p >= 1 keeps all)."""
    p = np.asarray(p, dtype=np.float64)
    if top_p >= 1.0:
        return np.ones(len(p), dtype=bool)
    order = np.argsort(-p, kind="stable")
    before = np.cumsum(p[order]) - p[order]          # mass of the tokens ranked above each
    keep = np.zeros(len(p), dtype=bool)
    keep[order[before < max(float(top_p), 0.0)]] = True
    keep[order[0]] = True
    return keep


def entropy_bits(q: np.ndarray) -> float:
    q = np.asarray(q, dtype=np.float64)
    nz = q[q > 0]
    return float(-(nz * np.log2(nz)).sum()) + 0.0        # + 0.0: never -0.0


@dataclass(frozen=True)
class Shaped:
    raw: np.ndarray          # (V,) softmax(z): the model's distribution at T = 1
    tempered: np.ndarray     # (V,) softmax(z / T)
    keep: np.ndarray         # (V,) bool: kept by top-k and top-p, with tempered p > 0
    final: np.ndarray        # (V,) tempered, cut and renormalised: what is sampled
    kept_mass: float         # sum of tempered over the kept tokens
    kept: int                # how many tokens are kept
    entropy_raw: float       # H(raw) in bits
    entropy_final: float     # H(final) in bits


def shape(logits: np.ndarray, temperature: float, top_k: int = 0,
          top_p: float = 1.0) -> Shaped:
    """The distribution after temperature, then top-k, then top-p, renormalised."""
    raw = softmax(logits)
    tempered = with_temperature(logits, temperature)
    keep = top_k_mask(tempered, top_k) & top_p_mask(tempered, top_p) & (tempered > 0)
    mass = float(tempered[keep].sum())
    final = np.where(keep, tempered, 0.0) / mass
    return Shaped(raw, tempered, keep, final, mass, int(keep.sum()), entropy_bits(raw),
                  entropy_bits(final))


def draw(q: np.ndarray, u: float) -> int:
    """The token whose cumulative-mass interval holds u in [0, 1) (inverse-CDF sampling)."""
    c = np.cumsum(np.asarray(q, dtype=np.float64))
    return int(min(np.searchsorted(c, u * c[-1], side="right"), len(c) - 1))
