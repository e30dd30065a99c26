"""A small WaveNet on a synthetic "vowel": a waveform predicted and generated one sample at a
time from the samples before it.

The signal (`vowels`): every sequence repeats one period of PERIOD samples, its timbre a sum
of HARMONICS harmonics with random amplitudes a_h and phases φ_h (drawn afresh per sequence),
under a slow random envelope g(t), plus a little noise:

    x[t] = g(t) sum_{h=1}^{H} a_h sin(2π h t / P + φ_h) + σ ε_t

No fixed short filter predicts such a waveform (its timbre is new in every sequence, and H
harmonics need 2H past samples of an exact linear recurrence); one period back, x[t - P],
nearly equals x[t]. A model can use that only if its field reaches P samples into the past.

The model (`WaveNet`): the input shifted right one sample (so output t sees x[< t] only),
a 1 x 1 convolution to C channels, then L gated residual layers

    z = tanh(W_f *_d h) ⊙ σ(W_g *_d h),     h <- h + W_r z

(*_d: a causal convolution of 2 taps at dilation d_l), and a 1 x 1 convolution to the
prediction x̂[t] (trained by mean squared error). With 2 taps the field is 1 + sum_l d_l
samples of the past: 32 for dilations 1, 2, 4, 8, 16, 6 for five undilated layers, with the
very same number of weights. Generation feeds each prediction back as the next input."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from engine.autoregressive.masks import CausalConv1d

PERIOD = 24              # samples per period: 667 Hz at 16 kHz
HARMONICS = 8
LENGTH = 256             # samples per training sequence
NOISE = 0.02
DILATED = (1, 2, 4, 8, 16)
UNDILATED = (1, 1, 1, 1, 1)
SCHEDULES = {"dilated": DILATED, "undilated": UNDILATED}


def vowels(n: int, seed: int, length: int = LENGTH) -> np.ndarray:
    """(n, length) float32 waveforms, see the module docstring (seeded)."""
    rng = np.random.default_rng(seed)
    t = np.arange(length)                                                # (T,)
    h = np.arange(1, HARMONICS + 1)                                      # (H,)
    amp = rng.uniform(0, 1, (n, HARMONICS)) / h                          # (n, H) darker highs
    phase = rng.uniform(0, 2 * math.pi, (n, HARMONICS))                  # (n, H)
    waves = (amp[:, :, None] * np.sin(2 * math.pi * h[None, :, None] * t / PERIOD
                                      + phase[:, :, None])).sum(1)       # (n, T)
    waves /= np.abs(waves).max(1, keepdims=True)
    rate = rng.uniform(0.5, 2.0, (n, 1)) / length                        # envelope cycles
    env = 0.75 + 0.25 * np.sin(2 * math.pi * rate * t + rng.uniform(0, 2 * math.pi, (n, 1)))
    x = env * waves + NOISE * rng.standard_normal((n, length))
    return x.astype(np.float32)


def field_of(dilations: tuple[int, ...]) -> int:
    """Past samples that reach one prediction: 1 + sum of the dilations (2 taps)."""
    return 1 + int(sum(dilations))


class WaveNet(nn.Module):
    def __init__(self, dilations: tuple[int, ...] = DILATED, channels: int = 16):
        super().__init__()
        if not dilations or min(dilations) < 1:
            raise ValueError("a WaveNet needs at least one layer, every dilation at least 1")
        self.dilations = tuple(int(d) for d in dilations)
        self.inp = nn.Conv1d(1, channels, 1)
        self.filters = nn.ModuleList(CausalConv1d(channels, 2 * channels, 2, d)
                                     for d in self.dilations)
        self.residual = nn.ModuleList(nn.Conv1d(channels, channels, 1) for _ in self.dilations)
        self.out = nn.Conv1d(channels, 1, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (B, T) -> x̂ (B, T), x̂[t] a function of x[< t] only."""
        shifted = F.pad(x, (1, 0))[:, None, :-1]                         # (B, 1, T)
        h = self.inp(shifted)                                            # (B, C, T)
        for conv, res in zip(self.filters, self.residual):
            f, g = conv(h).chunk(2, 1)                                   # (B, C, T) each
            h = h + res(torch.tanh(f) * torch.sigmoid(g))
        return self.out(h)[:, 0]                                         # (B, T)


def parameter_count(model: nn.Module) -> int:
    return int(sum(p.numel() for p in model.parameters()))


@dataclass(frozen=True)
class WaveFit:
    model: WaveNet
    losses: np.ndarray       # (steps,) training mean squared error


def train_wavenet(dilations: tuple[int, ...], steps: int = 600, seed: int = 0,
                  channels: int = 16, batch: int = 32, lr: float = 3e-3) -> WaveFit:
    """Adam on the mean squared one-step error over fresh seeded batches of vowels."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = WaveNet(tuple(dilations), channels)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for i in range(int(steps)):
        x = torch.from_numpy(vowels(batch, seed=10_000 * (seed + 1) + i))  # (B, T)
        loss = F.mse_loss(model(x)[:, PERIOD:], x[:, PERIOD:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return WaveFit(model, np.asarray(losses))


HELD_OUT_SEED = 999_983   # the held-out vowels: a seed the training batches never use


@torch.no_grad()
def held_out_error(model: WaveNet, n: int = 64) -> float:
    """Mean squared one-step error on n held-out vowels (after their first period), in units
    of the signal's variance (1: no better than predicting 0; the noise alone gives
    about NOISE² / variance)."""
    x = torch.from_numpy(vowels(n, HELD_OUT_SEED))                       # (n, T)
    err = F.mse_loss(model(x)[:, PERIOD:], x[:, PERIOD:])
    return float(err / x[:, PERIOD:].var())


@torch.no_grad()
def generate(model: WaveNet, prompt: np.ndarray, length: int) -> np.ndarray:
    """(length,) a waveform whose first len(prompt) samples are the prompt and the rest are
    generated one sample at a time, each prediction fed back as the next input."""
    if not 0 < len(prompt) <= length:
        raise ValueError("the prompt must hold between 1 and `length` samples")
    x = torch.zeros(1, length)
    x[0, :len(prompt)] = torch.as_tensor(prompt, dtype=torch.float32)
    for t in range(len(prompt), length):
        x[0, t] = model(x[:, :t + 1])[0, t]
    return x[0].numpy()
