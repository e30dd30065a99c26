"""Predictive uncertainty on 1-D regression with a gap in the data (notes 004, Sec. 4.4.6):
a deep ensemble and MC dropout, both small MLPs 1 -> H -> H -> 1 (tanh).

Data: x_i uniform on two intervals [-X_OUT, -X_IN] and [X_IN, X_OUT] (nothing in the gap
|x| < X_IN), y_i = sin(2 x_i) + 0.3 x_i + noise·ε_i, ε_i ~ N(0, 1).

Deep ensemble: K members, each its own initialisation, trained by full-batch Adam on
L_k = mean_i (f_k(x_i) − y_i)²; all K in one batched matmul (weights W (K, in, out)).
Predictive mean and spread on a grid x*:

    μ(x*) = 1/K Σ_k f_k(x*),      σ(x*) = sqrt(1/K Σ_k (f_k(x*) − μ(x*))²)

MC dropout: one net with dropout rate p after each hidden layer, trained the same way; at
prediction the dropout stays on, T passes give f_t(x*) and μ, σ as above over t.

The band's width is 2σ; `width_ratio` = mean σ over the gap / mean σ over the data's
intervals: above 1 where the model knows that it does not know."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

X_IN, X_OUT = 1.0, 3.0        # data on [-X_OUT, -X_IN] ∪ [X_IN, X_OUT]
X_PLOT = 4.5                  # prediction grid: [-X_PLOT, X_PLOT]


def gap_data(n: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(x (n,), y (n,)) float32: x uniform on the two intervals, y = sin(2x) + 0.3x + noise·ε."""
    rng = np.random.default_rng(int(seed))
    side = rng.choice([-1.0, 1.0], size=int(n))
    x = side * rng.uniform(X_IN, X_OUT, size=int(n))
    y = target(x) + float(noise) * rng.standard_normal(int(n))
    return x.astype(np.float32), y.astype(np.float32)


def target(x: np.ndarray) -> np.ndarray:
    """The noiseless function the data sample: sin(2x) + 0.3x."""
    return np.sin(2 * x) + 0.3 * x


def in_data(x: np.ndarray) -> np.ndarray:
    """True where X_IN <= |x| <= X_OUT (where training points lie)."""
    a = np.abs(x)
    return (a >= X_IN) & (a <= X_OUT)


def in_gap(x: np.ndarray) -> np.ndarray:
    """True inside the gap |x| < X_IN."""
    return np.abs(x) < X_IN


def _init_stack(k: int, widths: list[int], g: torch.Generator) -> list[torch.Tensor]:
    """Weights W_l (k, in, out) ~ U(±1/sqrt(in)) and biases b_l (k, 1, out) (PyTorch's
    Linear default), leaves with grad."""
    params = []
    for fan_in, fan_out in zip(widths[:-1], widths[1:]):
        bound = 1.0 / math.sqrt(fan_in)
        w = (torch.rand(k, fan_in, fan_out, generator=g) * 2 - 1) * bound
        b = (torch.rand(k, 1, fan_out, generator=g) * 2 - 1) * bound
        params += [w.requires_grad_(), b.requires_grad_()]
    return params


def stacked_forward(params: list[torch.Tensor], x: torch.Tensor, drop: float = 0.0,
                    g: torch.Generator | None = None) -> torch.Tensor:
    """f_k(x) for every member k: x (k, n, 1) -> (k, n, 1); tanh hidden layers, inverted
    dropout at rate `drop` after each (mask ~ Bernoulli(1 − drop) / (1 − drop))."""
    h = x
    layers = len(params) // 2
    for i in range(layers):
        w, b = params[2 * i], params[2 * i + 1]
        h = torch.baddbmm(b, h, w)                                     # (k, n, out)
        if i < layers - 1:
            h = torch.tanh(h)
            if drop > 0:
                keep = (torch.rand(h.shape, generator=g) >= drop).to(h.dtype)
                h = h * keep / (1.0 - drop)
    return h


def fit_stack(x: np.ndarray, y: np.ndarray, k: int, hidden: int, steps: int, lr: float,
              seed: int, drop: float = 0.0) -> list[torch.Tensor]:
    """k MLPs 1 -> hidden -> hidden -> 1, each from its own seeded initialisation, trained by
    full-batch Adam for `steps` on L = Σ_k mean_i (f_k(x_i) − y_i)² (members independent)."""
    g = torch.Generator().manual_seed(int(seed))
    params = _init_stack(int(k), [1, int(hidden), int(hidden), 1], g)
    xt = torch.as_tensor(x).reshape(1, -1, 1).expand(int(k), -1, -1)   # (k, n, 1)
    yt = torch.as_tensor(y).reshape(1, -1, 1)                          # (1, n, 1)
    opt = torch.optim.Adam(params, lr=float(lr))
    for _ in range(int(steps)):
        pred = stacked_forward(params, xt, drop, g)                    # (k, n, 1)
        loss = ((pred - yt) ** 2).mean(dim=(1, 2)).sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return [p.detach() for p in params]


@dataclass(frozen=True)
class Band:
    xs: np.ndarray           # (m,) prediction grid
    samples: np.ndarray      # (s, m) the members' (or passes') predictions
    mean: np.ndarray         # (m,) μ(x*)
    std: np.ndarray          # (m,) σ(x*)
    width_in: float          # mean σ over the data's intervals
    width_gap: float         # mean σ over the gap
    width_out: float         # mean σ beyond the data, X_OUT < |x| <= X_PLOT
    rmse_in: float           # sqrt(mean (μ − target)²) over the data's intervals

    @property
    def width_ratio(self) -> float:
        """mean σ in the gap / mean σ inside the data."""
        return self.width_gap / max(self.width_in, 1e-12)


def band_of(xs: np.ndarray, samples: np.ndarray) -> Band:
    """μ, σ over the rows of samples (s, m) and the band's mean width in each region."""
    mean = samples.mean(0)
    std = samples.std(0)
    outside = np.abs(xs) > X_OUT
    rmse = float(np.sqrt(np.mean((mean[in_data(xs)] - target(xs[in_data(xs)])) ** 2)))
    return Band(xs, samples, mean, std, float(std[in_data(xs)].mean()),
                float(std[in_gap(xs)].mean()), float(std[outside].mean()), rmse)


def grid(m: int = 181) -> np.ndarray:
    return np.linspace(-X_PLOT, X_PLOT, m).astype(np.float32)


def ensemble_band(x: np.ndarray, y: np.ndarray, members: int, hidden: int = 32,
                  steps: int = 400, lr: float = 0.01, seed: int = 0) -> Band:
    """A deep ensemble of `members` nets (at least 2: one member has no spread)."""
    if members < 2:
        raise ValueError("An ensemble needs at least 2 members: with one there is no "
                         "disagreement, so no band.")
    params = fit_stack(x, y, members, hidden, steps, lr, seed)
    xs = grid()
    with torch.no_grad():
        out = stacked_forward(params, torch.as_tensor(xs).reshape(1, -1, 1)
                              .expand(members, -1, -1))                # (K, m, 1)
    return band_of(xs, out[..., 0].numpy())


def mc_dropout_band(x: np.ndarray, y: np.ndarray, drop: float, passes: int = 100,
                    hidden: int = 32, steps: int = 400, lr: float = 0.01,
                    seed: int = 0) -> Band:
    """One net trained with dropout `drop`, predicted with dropout on, `passes` times."""
    if not 0.0 < drop < 1.0:
        raise ValueError("MC dropout needs a dropout rate between 0 and 1: at 0 every pass "
                         "gives the same prediction and the band collapses to a line.")
    params = fit_stack(x, y, 1, hidden, steps, lr, seed, drop=drop)
    g = torch.Generator().manual_seed(int(seed) + 1)
    xs = grid()
    with torch.no_grad():
        rep = [p.expand(int(passes), *p.shape[1:]) for p in params]
        out = stacked_forward(rep, torch.as_tensor(xs).reshape(1, -1, 1)
                              .expand(int(passes), -1, -1), drop, g)  # (T, m, 1)
    return band_of(xs, out[..., 0].numpy())
