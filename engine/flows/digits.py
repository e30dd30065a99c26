"""Real NVP on scikit-learn's 8 x 8 digits (notes 004, Sec. 11.2-11.3 and Fig. 11.7, small):
the 17 grey levels v in 0..16 of the autoregressive page's split (engine.autoregressive.digits,
same seed), dequantised and taken to logit space, a stack of coupling layers with alternating
checkerboard and half-image masks, and temperature sampling.

    y = (v + u) / 17,  u ~ U[0, 1)^64                        dequantised, in (0, 1)
    x = logit(ALPHA + (1 - 2 ALPHA) y)                       the flow's input, (N, 64)
    coupling k, mask m_k:  x' = m x + (1 - m) (x e^{s(m x)} + t(m x)),  log|det| = sum (1-m) s
    log p(v + u) = log N(f(x); 0, I) + log|det df/dx| + log|dx/dy| - 64 log 17

Bits per pixel: -log2 p(v + u) / 64, an upper bound on the discrete model's -log2 P(v) / 64
(Jensen over u), on the same scale as the PixelCNN's bits per pixel at 17 levels.
Sampling at temperature T: z ~ N(0, T^2 I), x = f^{-1}(z), grey = (sigmoid(x) - ALPHA) /
(1 - 2 ALPHA) * 16 in [0, 16]; T = 0 gives z = 0, one image.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np
import torch
from torch import nn

from engine import weights
from engine.autoregressive.digits import GREYS, quantised_digits
from engine.flows.coupling import bound_log_scale
from engine.flows.realnvp import compose, compose_inverse

PIXELS = 64
ALPHA = 0.05
WEIGHTS = Path(__file__).resolve().parents[2] / "assets" / "weights" / "flows_digits.pt"
MODEL_CONFIG = {"layers": 10, "hidden": 64}
LOG_DEQ = math.log(GREYS)


def digit_levels(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(train (N, 64), test (M, 64)) integer grey levels 0..16, the autoregressive page's split."""
    d = quantised_digits(GREYS, seed)
    return d.train.reshape(-1, PIXELS), d.test.reshape(-1, PIXELS)


def to_logit(levels: torch.Tensor, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """x (N, 64) in logit space and log|dx/dy| summed over pixels (N,), y = (v + u) / 17."""
    y = (levels.float() + u) / GREYS                                  # (N, 64) in (0, 1)
    p = ALPHA + (1 - 2 * ALPHA) * y
    x = torch.log(p) - torch.log1p(-p)
    logdet = (math.log(1 - 2 * ALPHA) - torch.log(p) - torch.log1p(-p)).sum(1)   # (N,)
    return x, logdet


def to_grey(x: torch.Tensor) -> torch.Tensor:
    """Grey values in [0, 16] of logit-space images x (N, 64)."""
    y = (torch.sigmoid(x) - ALPHA) / (1 - 2 * ALPHA)
    return (y * (GREYS - 1)).clamp(0, GREYS - 1)


def masks() -> list[torch.Tensor]:
    """The 4 masks a stack cycles through (1 = kept): checkerboard, its complement, the left
    half, the right half (notes 004, Fig. 11.2: spatial partitions)."""
    r, c = np.mgrid[:8, :8]
    board = ((r + c) % 2 == 0).astype(np.float32).ravel()
    left = (c < 4).astype(np.float32).ravel()
    return [torch.as_tensor(m) for m in (board, 1 - board, left, 1 - left)]


class MaskedCoupling(nn.Module):
    mask: torch.Tensor       # (64,) 1 = kept pixel (a buffer: saved with the weights)

    def __init__(self, mask: torch.Tensor, hidden: int):
        super().__init__()
        self.register_buffer("mask", mask.clone())
        last = nn.Linear(hidden, 2 * PIXELS)
        nn.init.zeros_(last.weight)
        nn.init.zeros_(last.bias)
        self.net = nn.Sequential(nn.Linear(PIXELS, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                 nn.ReLU(), last)

    def scale_shift(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.net(x * self.mask)                                  # (N, 128)
        free = 1 - self.mask
        return bound_log_scale(out[:, :PIXELS]) * free, out[:, PIXELS:] * free

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        s, t = self.scale_shift(x)
        return x * torch.exp(s) + t, s.sum(1)

    def inverse(self, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        s, t = self.scale_shift(y)                                     # kept pixels are equal
        return (y - t) * torch.exp(-s), -s.sum(1)


class DigitsRealNVP(nn.Module):
    def __init__(self, layers: int = 10, hidden: int = 64):
        super().__init__()
        ms = masks()
        self.layers = nn.ModuleList(MaskedCoupling(ms[k % len(ms)], int(hidden))
                                    for k in range(int(layers)))

    def couplings(self) -> list[MaskedCoupling]:
        return [cast(MaskedCoupling, m) for m in self.layers]

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """z = f(x) (n, 64) and sum_k log|det df_k| (n,)."""
        return compose(self.couplings(), x)

    def inverse(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x = f^{-1}(z) (n, 64) and sum_k log|det df_k^{-1}| (n,)."""
        return compose_inverse(self.couplings(), z)


def log_prob_levels(model: DigitsRealNVP, levels: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """log p(v + u) (N,) in the grey-level space [0, 17)^64 (nats)."""
    x, ld_pre = to_logit(levels, u)
    z, ld = model(x)
    base = -0.5 * (z ** 2).sum(1) - 0.5 * PIXELS * math.log(2 * math.pi)
    return base + ld + ld_pre - PIXELS * LOG_DEQ


@torch.no_grad()
def bits_per_pixel(model: DigitsRealNVP, levels: np.ndarray, seed: int = 0,
                   draws: int = 4) -> float:
    """-mean log2 p(v + u) / 64 over the images and `draws` seeded dequantisations each."""
    v = torch.as_tensor(levels)
    gen = torch.Generator().manual_seed(int(seed))
    total = 0.0
    for _ in range(int(draws)):
        u = torch.rand(v.shape, generator=gen)
        total += float(-log_prob_levels(model, v, u).double().mean())
    return total / int(draws) / PIXELS / math.log(2)


@torch.no_grad()
def sample_digits(model: DigitsRealNVP, n: int, temperature: float, seed: int = 0
                  ) -> np.ndarray:
    """(n, 8, 8) grey values in [0, 16]: z ~ N(0, T^2 I), x = f^{-1}(z)."""
    if not (math.isfinite(temperature) and temperature >= 0):
        raise ValueError("the temperature must be a finite number >= 0")
    gen = torch.Generator().manual_seed(int(seed))
    z = torch.randn(int(n), PIXELS, generator=gen) * float(temperature)
    x, _ = model.inverse(z)
    return to_grey(x).reshape(-1, 8, 8).numpy()


@dataclass(frozen=True)
class SampleStats:
    spread: float       # mean over pixels of the std across samples (grey levels): variety
    roughness: float    # mean |difference| of neighbouring pixels within a sample: not smooth


def sample_stats(images: np.ndarray) -> SampleStats:
    """Variety and roughness of samples (n, 8, 8) in grey levels."""
    spread = float(images.std(0).mean())
    dx = np.abs(np.diff(images, axis=2)).mean()
    dy = np.abs(np.diff(images, axis=1)).mean()
    return SampleStats(spread, float((dx + dy) / 2))


def train_digits_flow(steps: int, seed: int = 0, lr: float = 1e-3, batch: int = 128,
                      weight_decay: float = 1e-5, progress=None) -> tuple[DigitsRealNVP, dict]:
    """Adam on -mean log p(v + u) with a fresh u each batch; returns the model and its test
    and train bits per pixel."""
    train, test = digit_levels()
    torch.manual_seed(int(seed))
    model = DigitsRealNVP(**MODEL_CONFIG)
    opt = torch.optim.Adam(model.parameters(), lr=float(lr), weight_decay=float(weight_decay))
    gen = torch.Generator().manual_seed(int(seed))
    v = torch.as_tensor(train)
    for i in range(int(steps)):
        idx = torch.randint(0, len(v), (int(batch),), generator=gen)
        u = torch.rand(int(batch), PIXELS, generator=gen)
        loss = -log_prob_levels(model, v[idx], u).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 50.0)
        opt.step()
        if progress is not None:
            progress(i + 1)
    model.eval()
    return model, {"test_bits": bits_per_pixel(model, test), "train_bits":
                   bits_per_pixel(model, train)}


def save_digits_flow(path: Path | str, model: DigitsRealNVP, **meta) -> Path:
    return weights.save(path, MODEL_CONFIG, model.state_dict(), meta)  # type: ignore[return-value]


def digits_flow_from_weights(w: weights.Weights) -> DigitsRealNVP:
    """The digits flow (eval mode) with a loaded file's state; a state that does not fit is
    stale."""
    model = DigitsRealNVP(**MODEL_CONFIG)
    try:
        model.load_state_dict(w.state)
    except RuntimeError as err:
        raise weights.StaleWeightsError(f"weights file {w.path} does not fit the digits flow: "
                                        f"{weights.REBUILD_HINT}") from err
    return model.eval()


def load_digits_flow(path: Path | str = WEIGHTS) -> tuple[DigitsRealNVP, dict]:
    """The shipped flow (eval mode) and its meta. Raises weights.WeightsError (missing,
    corrupt, stale) with the rebuild hint."""
    w = weights.load(path, "cpu", expect_config=MODEL_CONFIG)
    return digits_flow_from_weights(w), w.meta
