"""Counting linear regions (engine.regions): 1-D inputs (breakpoints, pieces, the sawtooth
net whose 2^depth pieces need depth layers of 2 units), the bounds on the region count (the
trivial 2^(#ReLUs), Zaslavsky's for one layer, the product bound for deep nets) and the study
of how a fixed budget of units is best split into layers."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch
from torch import nn

from engine.regions.geometry import Box, _as_layers, count_regions, make_mlp

# --------------------------------------------------------------------------------------
# 1-D inputs: breakpoints, pieces, the sawtooth
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Pieces1D:
    edges: np.ndarray       # (m+1,) sorted: piece i is [edges[i], edges[i+1]]
    slope: np.ndarray       # (m,) output slope on each piece (first output)
    intercept: np.ndarray   # (m,)
    patterns: np.ndarray    # (m, n_hidden) bool

    @property
    def count(self) -> int:
        return len(self.slope)

    def slope_sign_changes(self) -> int:
        """How often the derivative df/dx changes sign along the interval (pieces with slope
        exactly 0 are skipped): the local extrema of f."""
        s = np.sign(self.slope)
        s = s[s != 0]
        return int((s[1:] != s[:-1]).sum())

    def kinks(self, rtol: float = 1e-9) -> np.ndarray:
        """Breakpoints where the slope really changes (adjacent pieces can share a map)."""
        scale = max(1.0, float(np.abs(self.slope).max(initial=0.0)))
        change = np.abs(np.diff(self.slope)) > rtol * scale
        return self.edges[1:-1][change]


def linear_pieces_1d(model_or_layers, interval: tuple[float, float] = (-2.0, 2.0),
                     tol: float | None = None) -> Pieces1D:
    """Exact activation intervals of a 1-input ReLU MLP on `interval`: the 1-D analogue of
    `partition` (pre-activation z = p x + q on a piece is zero at x = -q / p)."""
    layers = _as_layers(model_or_layers)
    if layers[0][0].shape[1] != 1:
        raise ValueError("linear_pieces_1d needs a network with 1 input")
    lo0, hi0 = map(float, interval)
    if not hi0 > lo0:
        raise ValueError("the interval needs lo < hi")
    tol = 1e-9 * (hi0 - lo0) if tol is None else float(tol)
    lo, hi = np.array([lo0]), np.array([hi0])
    M, c = np.ones((1, 1)), np.zeros((1, 1))
    bits: list[np.ndarray] = []
    for W, b in layers[:-1]:
        P = M @ W.T            # (R, d_l): z = P x + q
        q = c @ W.T + b
        layer_bits = []
        for j in range(W.shape[0]):
            p, q0 = P[:, j], q[:, j]
            slo, shi = p * lo + q0, p * hi + q0
            eps = tol * np.maximum(np.abs(p), 1e-300)
            slo = np.where(np.abs(slo) <= eps, 0.0, slo)
            shi = np.where(np.abs(shi) <= eps, 0.0, shi)
            split = slo * shi < 0
            on = np.where(np.maximum(slo, shi) > 0, True,
                          np.where(np.minimum(slo, shi) < 0, False, q0 > 0))
            if split.any():
                ii = np.flatnonzero(split)
                root = -q0[ii] / p[ii]
                pos_left = slo[ii] > 0
                new_lo, new_hi = root, hi[ii].copy()
                hi = hi.copy()
                hi[ii] = root
                on[ii] = pos_left
                lo = np.concatenate([lo, new_lo])
                hi = np.concatenate([hi, new_hi])
                on = np.concatenate([on, ~pos_left])
                P, q = np.concatenate([P, P[ii]]), np.concatenate([q, q[ii]])
                M, c = np.concatenate([M, M[ii]]), np.concatenate([c, c[ii]])
                bits = [np.concatenate([bt, bt[ii]]) for bt in bits]
                layer_bits = [np.concatenate([bt, bt[ii]]) for bt in layer_bits]
            layer_bits.append(on)
        D = np.stack(layer_bits, 1).astype(np.float64)
        M, c = D * P, D * q      # h = M x + c, M (R, d_l) for the single input
        bits.extend(layer_bits)
    W, b = layers[-1]
    slope = (M @ W.T)[:, 0]
    intercept = (c @ W.T + b)[:, 0]
    order = np.argsort(lo, kind="stable")
    patterns = np.stack(bits, 1)[order] if bits else np.zeros((len(lo), 0), bool)
    edges = np.concatenate([lo[order], [hi0]])
    return Pieces1D(edges, slope[order], intercept[order], patterns)


def breakpoints(model: nn.Module, interval: tuple[float, float] = (-2.0, 2.0)) -> np.ndarray:
    """Interior points of `interval` where some hidden unit switches (sorted)."""
    return linear_pieces_1d(model, interval).edges[1:-1]


def sawtooth_net(depth: int) -> nn.Sequential:
    """The "folding" network: depth hidden layers of 2 units, each computing the tent map
    T(t) = 2 relu(t) - 4 relu(t - 1/2) (= 2t on [0, 1/2], 2 - 2t on [1/2, 1]) of the previous
    layer's tent value. f = T∘...∘T (depth times) has 2^depth linear pieces on [0, 1] with only
    2·depth units, while one hidden layer needs 2^depth - 1 units for that (Telgarsky 2016)."""
    depth = int(depth)
    if depth < 1:
        raise ValueError("depth must be >= 1")
    fold = torch.tensor([[2.0, -4.0]])
    layers: list[nn.Module] = []
    for i in range(depth):
        lin = nn.Linear(1 if i == 0 else 2, 2)
        with torch.no_grad():
            w = torch.ones(2, 1) if i == 0 else torch.ones(2, 1) @ fold
            lin.weight.copy_(w)
            lin.bias.copy_(torch.tensor([0.0, -0.5]))
        layers += [lin, nn.ReLU()]
    out = nn.Linear(2, 1)
    with torch.no_grad():
        out.weight.copy_(fold)
        out.bias.zero_()
    return nn.Sequential(*layers, out)


# --------------------------------------------------------------------------------------
# Bounds
# --------------------------------------------------------------------------------------

def zaslavsky_bound(n_hyperplanes: int, dim: int) -> int:
    """Regions of an arrangement of n hyperplanes in general position in R^d:
    sum_{i=0..d} C(n, i)."""
    return sum(math.comb(int(n_hyperplanes), i) for i in range(int(dim) + 1))


def product_bound(widths: Sequence[int], input_dim: int = 2, effective: bool = False) -> int:
    """prod_l sum_{i=0..d_l-1} C(d_l, i) (Raghu et al. / Serra et al.), d_0 = input_dim.
    effective=True uses min(d_0, ..., d_l-1) for the upper limit instead (Montúfar et al. 2017:
    the image of one region in layer l-1 has dimension at most that), a tighter bound."""
    dims = [int(input_dim), *[int(w) for w in widths]]
    total = 1
    for l in range(1, len(dims)):
        d = min(dims[:l]) if effective else dims[l - 1]
        total *= zaslavsky_bound(dims[l], d)
    return total


def trivial_bound(widths: Sequence[int]) -> int:
    """2^(number of ReLUs): every on/off pattern at most once."""
    return 2 ** sum(int(w) for w in widths)


BOUNDS: dict[str, Callable[[Sequence[int], int], int]] = {
    "2^(#ReLUs)": lambda w, d: trivial_bound(w),
    "product bound (Raghu/Serra)": lambda w, d: product_bound(w, d),
    "product bound, effective dim (Montúfar 2017)": lambda w, d: product_bound(w, d, True),
}


def split_budget(total: int, max_depth: int = 6) -> list[tuple[int, ...]]:
    """Architectures of equal width that use exactly `total` neurons, depth 1..max_depth
    (e.g. 24 -> 1x24, 2x12, 3x8, 4x6, 6x4)."""
    return [(total // d,) * d for d in range(1, max_depth + 1) if total % d == 0]


@dataclass(frozen=True)
class BudgetRow:
    widths: tuple[int, ...]
    counts: np.ndarray          # exact region count for each seed
    bounds: dict[str, int]


def budget_study(total: int = 24, seeds: Sequence[int] = (0, 1, 2), box: Box = (-2, 2, -2, 2),
                 init: str = "kaiming", init_scale: float = 1.0,
                 max_depth: int = 6) -> list[BudgetRow]:
    """Exact region counts at initialisation for every equal-width split of `total` neurons,
    next to the bounds."""
    rows = []
    for widths in split_budget(total, max_depth):
        counts = np.array([count_regions(make_mlp(widths, seed=s, init=init,
                                                  init_scale=init_scale), box) for s in seeds])
        rows.append(BudgetRow(widths, counts, {k: f(widths, 2) for k, f in BOUNDS.items()}))
    return rows
