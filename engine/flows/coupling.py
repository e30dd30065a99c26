"""The affine coupling layer (notes 004, Sec. 11.2.1, Fig. 11.1) on 2-D points.

With a partition `keep` (the coordinate copied) and `other` (the one transformed):

    y_keep  = x_keep
    y_other = x_other * exp(s(x_keep)) + t(x_keep)
    x_other = (y_other - t(y_keep)) * exp(-s(y_keep))                 (the inverse)
    log|det dy/dx| = s(x_keep)                                        (triangular Jacobian)

The log-scale is bounded, s = S_MAX * tanh(raw / S_MAX), so exp(s) never overflows whatever
the network (or a slider) asks for; |s| < S_MAX.
"""
from __future__ import annotations

import math

import torch
from torch import nn

S_MAX = 4.0          # bound on the log-scale: exp(s) in (e^-4, e^4)


def bound_log_scale(raw: torch.Tensor, s_max: float = S_MAX) -> torch.Tensor:
    """s = s_max * tanh(raw / s_max): about raw for |raw| << s_max, never past ±s_max."""
    return s_max * torch.tanh(raw / s_max)


def couple(x: torch.Tensor, keep: int, s: torch.Tensor, t: torch.Tensor
           ) -> tuple[torch.Tensor, torch.Tensor]:
    """y and log|det dy/dx| of one coupling step, given s and t already computed on x_keep.

    x: (n, 2); s, t: (n,). Returns y (n, 2), logdet (n,) = s."""
    other = 1 - keep
    y = x.clone()
    y[:, other] = x[:, other] * torch.exp(s) + t          # (n,)
    return y, s


def uncouple(y: torch.Tensor, keep: int, s: torch.Tensor, t: torch.Tensor
             ) -> tuple[torch.Tensor, torch.Tensor]:
    """x and log|det dx/dy| = -s of the inverse step (s, t computed on y_keep = x_keep)."""
    other = 1 - keep
    x = y.clone()
    x[:, other] = (y[:, other] - t) * torch.exp(-s)       # (n,)
    return x, -s


class Coupling(nn.Module):
    """What every coupling layer shares: y = couple(x) and its inverse, with s and t from the
    subclass's `scale_shift(x_keep)` and the copied coordinate `keep`."""

    keep: int

    def scale_shift(self, x_keep: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        s, t = self.scale_shift(x[:, self.keep])
        return couple(x, self.keep, s, t)

    def inverse(self, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        s, t = self.scale_shift(y[:, self.keep])
        return uncouple(y, self.keep, s, t)


class AffineCoupling(Coupling):
    """One affine coupling layer on 2-D points: s and t are small MLPs of x_keep
    (1 -> hidden -> hidden -> 2), whose last layer starts at zero so the layer starts as the
    identity (s = t = 0)."""

    def __init__(self, keep: int, hidden: int = 64, s_max: float = S_MAX):
        super().__init__()
        if keep not in (0, 1):
            raise ValueError("keep must be 0 or 1 (the coordinate copied)")
        self.keep, self.s_max = int(keep), float(s_max)
        last = nn.Linear(hidden, 2)
        nn.init.zeros_(last.weight)
        nn.init.zeros_(last.bias)
        self.net = nn.Sequential(nn.Linear(1, hidden), nn.Tanh(), nn.Linear(hidden, hidden),
                                 nn.Tanh(), last)

    def scale_shift(self, x_keep: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """s(x_keep), t(x_keep), each (n,), for x_keep (n,)."""
        out = self.net(x_keep[:, None])                   # (n, 2)
        return bound_log_scale(out[:, 0], self.s_max), out[:, 1]


class SliderCoupling(Coupling):
    """A coupling layer with hand-set s and t (the page's sliders, no training):

        raw(x_keep) = a + b * x_keep,   s = S_MAX * tanh(raw / S_MAX)
        t(x_keep)   = c * sin(w * x_keep)
    """

    def __init__(self, keep: int = 0, a: float = 0.0, b: float = 0.0, c: float = 0.0,
                 w: float = 1.5, s_max: float = S_MAX):
        super().__init__()
        for name, v in (("a", a), ("b", b), ("c", c), ("w", w)):
            if not math.isfinite(v):
                raise ValueError(f"the {name} setting is not a finite number")
        self.keep, self.a, self.b, self.c, self.w, self.s_max = int(keep), a, b, c, w, s_max

    def raw_log_scale(self, x_keep: torch.Tensor) -> torch.Tensor:
        return self.a + self.b * x_keep

    def scale_shift(self, x_keep: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        s = bound_log_scale(self.raw_log_scale(x_keep), self.s_max)
        return s, self.c * torch.sin(self.w * x_keep)
