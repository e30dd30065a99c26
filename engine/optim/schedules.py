"""Learning-rate schedules η_t as arrays over steps (or epochs) t = 0 … n − 1, in closed form;
tests/engine/test_schedules.py checks each against the PyTorch scheduler it mirrors.

    transformer  η_t = d^(−1/2) · min(s^(−1/2), s · w^(−3/2)),  s = t + 1   (Vaswani et al. 2017:
                 linear warm-up over w steps, then 1/√s; torch LambdaLR with that factor)
    sgdr         cosine annealing with warm restarts (Loshchilov & Hutter 2017): within a cycle
                 of length T_i, η_t = η_min + (η_max − η_min)(1 + cos(π t_cur / T_i)) / 2, and
                 T_{i+1} = T_mult · T_i  (torch CosineAnnealingWarmRestarts)
    step         η_t = η · γ^⌊t / T⌋  (torch StepLR)
    constant     η_t = η
"""
from __future__ import annotations

import numpy as np

SCHEDULES = ("transformer", "sgdr", "step", "constant")


def transformer_lr(n: int, d_model: int, warmup: int) -> np.ndarray:
    s = np.arange(1, int(n) + 1, dtype=np.float64)
    return float(d_model) ** -0.5 * np.minimum(s ** -0.5, s * float(warmup) ** -1.5)


def sgdr_lr(n: int, lr_max: float, period: int, mult: int = 1, lr_min: float = 0.0
            ) -> np.ndarray:
    t = np.arange(int(n), dtype=np.float64)
    if mult == 1:
        t_cur, t_i = t % period, np.full_like(t, float(period))
    else:                       # cycle i starts at T0 (mult^i − 1)/(mult − 1)
        i = np.floor(np.log(t / period * (mult - 1) + 1) / np.log(mult) + 1e-9)
        start = period * (mult ** i - 1) / (mult - 1)
        t_cur, t_i = t - start, period * mult ** i
    return lr_min + (lr_max - lr_min) * (1 + np.cos(np.pi * t_cur / t_i)) / 2


def step_lr(n: int, lr: float, period: int, gamma: float = 0.1) -> np.ndarray:
    return lr * gamma ** np.floor(np.arange(int(n)) / period)


def schedule(name: str, n: int, lr: float = 0.1, d_model: int = 512, warmup: int = 4000,
             period: int = 50, mult: int = 1) -> np.ndarray:
    """η_t for t = 0 … n − 1 of the named schedule (the parameters it does not use are
    ignored)."""
    if name == "transformer":
        return transformer_lr(n, d_model, warmup)
    if name == "sgdr":
        return sgdr_lr(n, lr, period, mult)
    if name == "step":
        return step_lr(n, lr, period)
    if name == "constant":
        return np.full(int(n), float(lr))
    raise ValueError(f"unknown schedule {name!r}: one of {', '.join(SCHEDULES)}")


def restarts(lrs: np.ndarray) -> np.ndarray:
    """The steps t where η jumps up (a warm restart): η_t > η_{t−1}, after a decrease."""
    lrs = np.asarray(lrs)
    up = np.flatnonzero(np.diff(lrs) > 1e-12 * np.abs(lrs).max()) + 1
    down = np.flatnonzero(np.diff(lrs) < 0)
    return up[up > (down[0] if down.size else len(lrs))]
