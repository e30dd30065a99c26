"""Samplers: ancestral DDPM, DDIM (eta), plain and annealed Langevin, classifier-free guidance,
recorded frames, and the drift field -eps(x, t) for plots.

    DDPM: x_{t-1} = (x_t - beta_t / sqrt(1 - ab_t) eps) / sqrt(alpha_t) + sqrt(beta_t) z
    DDIM: x0_hat = (x_t - sqrt(1 - ab_t) eps) / sqrt(ab_t),
          x_s = sqrt(ab_s) x0_hat + sqrt(1 - ab_s - sigma^2) eps + sigma z
    Langevin: x <- x + step grad log p(x) + sqrt(2 step) z
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch

from engine.device import make_generator, resolve_device, to_numpy
from engine.diffusion.schedule import EpsFn, Schedule, ScoreFn


@dataclass(frozen=True)
class SampleResult:
    samples: np.ndarray     # (n, 2) final samples
    times: np.ndarray       # (F,) time label of each recorded frame (diffusion t, or Langevin step)
    frames: np.ndarray      # (F, n, 2) recorded states (F = 0 when not recorded)
    diverged_at: int | None = None


def guidance(eps_cond: EpsFn, eps_uncond: EpsFn, w: float) -> EpsFn:
    """Classifier-free guidance: eps_hat = (1 + w) eps(x, c) - w eps(x)  (w = 0: conditional)."""
    if w == 0:
        return eps_cond

    def fn(x: torch.Tensor, t: int) -> torch.Tensor:
        return (1 + w) * eps_cond(x, t) - w * eps_uncond(x, t)
    return fn


def _frame_picks(n_steps: int, record: int) -> set[int]:
    """Indices 0..n_steps (0 = start state) of the `record` frames to keep, evenly spaced."""
    if record <= 0:
        return set()
    return set(np.unique(np.round(np.linspace(0, n_steps, min(record, n_steps + 1))).astype(int)))


class _Recorder:
    def __init__(self, n_steps: int, record: int):
        self.picks, self.times, self.frames = _frame_picks(n_steps, record), [], []

    def __call__(self, i: int, label: int, x: torch.Tensor) -> None:
        if i in self.picks:
            self.times.append(int(label))
            self.frames.append(to_numpy(x).astype(np.float32))

    def result(self, x: torch.Tensor) -> SampleResult:
        out = to_numpy(x).astype(np.float32)
        frames = np.stack(self.frames) if self.frames else np.zeros((0, *out.shape), np.float32)
        bad = np.where(~np.isfinite(out).all(1))[0]
        return SampleResult(out, np.asarray(self.times, np.int64), frames,
                            None if not len(bad) else -1)


def _start(n: int, seed: int, device, x_T) -> tuple[torch.Tensor, torch.Generator, torch.device]:
    dev = resolve_device(device)
    g = make_generator(seed, dev)
    x = torch.randn(n, 2, generator=g, device=dev) if x_T is None else \
        torch.as_tensor(x_T, dtype=torch.float32, device=dev).clone()
    return x, g, dev


@torch.no_grad()
def ddpm_sample(eps_fn: EpsFn, n: int, schedule: Schedule, seed: int = 0, device=None,
                record: int = 0, x_T=None) -> SampleResult:
    """Ancestral DDPM sampling from x_T ~ N(0, I):
    x_{t-1} = (1/sqrt(alpha_t)) (x_t - beta_t / sqrt(1 - alpha_bar_t) eps(x_t, t)) + sigma_t z,
    sigma_t^2 = beta_t, z ~ N(0, I), and no noise in the last step (t = 1)."""
    x, g, dev = _start(n, seed, device, x_T)
    T = schedule.T
    rec = _Recorder(T, record)
    rec(0, T, x)
    betas, alphas, abars = (schedule.betas.tolist(), schedule.alphas.tolist(),
                            schedule.alpha_bars.tolist())
    for i, t in enumerate(range(T, 0, -1), start=1):
        beta, alpha, ab = betas[t - 1], alphas[t - 1], abars[t - 1]
        x = (x - beta / math.sqrt(1 - ab) * eps_fn(x, t)) / math.sqrt(alpha)
        if t > 1:
            x = x + math.sqrt(beta) * torch.randn(x.shape, generator=g, device=dev)
        rec(i, t - 1, x)
    return rec.result(x)


def ddim_timesteps(T: int, steps: int) -> list[int]:
    """The evenly spaced sub-sequence tau_i = round(i T / S), i = 1..S (tau_S = T)."""
    steps = max(1, min(int(steps), T))
    return sorted(set(int(round(i * T / steps)) for i in range(1, steps + 1)))


@torch.no_grad()
def ddim_sample(eps_fn: EpsFn, n: int, schedule: Schedule, steps: int = 50, eta: float = 0.0,
                seed: int = 0, device=None, record: int = 0, x_T=None) -> SampleResult:
    """DDIM on the sub-sequence tau (t -> s = previous tau, s = 0 at the end):
    x0_hat = (x_t - sqrt(1 - ab_t) eps) / sqrt(ab_t),
    sigma = eta sqrt((1 - ab_s)/(1 - ab_t)) sqrt(1 - ab_t/ab_s),
    x_s = sqrt(ab_s) x0_hat + sqrt(1 - ab_s - sigma^2) eps + sigma z.
    eta = 0 is deterministic given x_T (the seed)."""
    x, g, dev = _start(n, seed, device, x_T)
    taus = ddim_timesteps(schedule.T, steps)
    rec = _Recorder(len(taus), record)
    rec(0, taus[-1], x)
    seq = list(reversed(taus))
    for i, t in enumerate(seq, start=1):
        s = seq[i] if i < len(seq) else 0
        ab_t, ab_s = schedule.alpha_bar(t), schedule.alpha_bar(s)
        e = eps_fn(x, t)
        x0 = (x - math.sqrt(1 - ab_t) * e) / math.sqrt(ab_t)
        sigma = eta * math.sqrt((1 - ab_s) / (1 - ab_t)) * math.sqrt(max(0.0, 1 - ab_t / ab_s))
        x = math.sqrt(ab_s) * x0 + math.sqrt(max(0.0, 1 - ab_s - sigma ** 2)) * e
        if sigma > 0:
            x = x + sigma * torch.randn(x.shape, generator=g, device=dev)
        rec(i, s, x)
    return rec.result(x)


@torch.no_grad()
def langevin(score_fn: ScoreFn, x0, step: float, n_steps: int, seed: int = 0, device=None,
             record: int = 0) -> SampleResult:
    """Unadjusted Langevin dynamics x <- x + step grad log p(x) + sqrt(2 step) z."""
    x, g, dev = _start(0, seed, device, x0)
    rec = _Recorder(n_steps, record)
    rec(0, 0, x)
    for i in range(1, int(n_steps) + 1):
        x = x + step * score_fn(x) + math.sqrt(2 * step) * torch.randn(x.shape, generator=g, device=dev)
        rec(i, i, x)
    return rec.result(x)


@torch.no_grad()
def annealed_langevin(score_fn: Callable[[torch.Tensor, float], torch.Tensor],
                      sigmas: Sequence[float], x0, step: float, n_steps_each: int,
                      seed: int = 0, device=None, record: int = 0) -> SampleResult:
    """Annealed Langevin (Song & Ermon 2019): for sigma_1 > ... > sigma_L, run n_steps_each
    Langevin steps on log p_sigma_i with step alpha_i = step * sigma_i^2 / sigma_L^2."""
    x, g, dev = _start(0, seed, device, x0)
    total = len(sigmas) * int(n_steps_each)
    rec = _Recorder(total, record)
    rec(0, 0, x)
    i = 0
    for sigma in sigmas:
        a = step * (sigma / sigmas[-1]) ** 2
        for _ in range(int(n_steps_each)):
            i += 1
            x = x + a * score_fn(x, sigma) + math.sqrt(2 * a) * torch.randn(x.shape, generator=g, device=dev)
            rec(i, i, x)
    return rec.result(x)


def annealed_step(sigmas: Sequence[float], ratio: float = 0.1) -> float:
    """A stable base step for annealed_langevin: step = ratio * sigma_L^2, so that level i
    moves by alpha_i = ratio * sigma_i^2, a fixed fraction of that level's variance
    (a larger base step makes the first, widest levels overshoot and diverge)."""
    return ratio * float(sigmas[-1]) ** 2


def geometric_sigmas(sigma_max: float, sigma_min: float, levels: int) -> list[float]:
    """sigma_1 = sigma_max > ... > sigma_L = sigma_min, geometrically spaced."""
    return np.geomspace(sigma_max, sigma_min, max(2, int(levels))).tolist()


@torch.no_grad()
def eps_field(eps_fn: EpsFn, times: Sequence[int], lo: float, hi: float, res: int = 15,
              device=None) -> tuple[np.ndarray, np.ndarray]:
    """(grid (res*res, 2), field (F, res*res, 2)): -eps(x, t) on a grid for each t in times
    (t = 0 uses t = 1). -eps points along the score, towards the data."""
    dev = resolve_device(device)
    ticks = np.linspace(lo, hi, res)
    grid = np.stack(np.meshgrid(ticks, ticks), -1).reshape(-1, 2).astype(np.float32)
    g = torch.as_tensor(grid, device=dev)
    field = np.stack([to_numpy(-eps_fn(g, max(1, int(t)))) for t in times]) if len(times) else \
        np.zeros((0, len(grid), 2), np.float32)
    return grid, field
