"""Noise schedules and the forward process (t = 1..T, tensors stored 0-based).

    betas[t-1] = beta_t,  alpha_t = 1 - beta_t,  alpha_bar_t = prod_{s<=t} alpha_s,  alpha_bar_0 = 1
    linear:  beta_t from beta_start to beta_end;  cosine: alpha_bar_t = f(t)/f(0),
             f(t) = cos^2(((t/T + s)/(1 + s)) pi/2)
    q(x_t | x_0) = N(sqrt(alpha_bar_t) x_0, (1 - alpha_bar_t) I)
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch


EpsFn = Callable[[torch.Tensor, int], torch.Tensor]      # eps(x_t, t) -> (n, 2)
ScoreFn = Callable[[torch.Tensor], torch.Tensor]         # grad log p(x) -> (n, 2)


@dataclass(frozen=True)
class Schedule:
    """beta_t for t = 1..T (float64, CPU). betas[t-1] = beta_t, alphas = 1 - betas,
    alpha_bars[t-1] = prod_{s<=t} alphas[s-1]."""
    name: str
    betas: torch.Tensor
    alphas: torch.Tensor
    alpha_bars: torch.Tensor

    @property
    def T(self) -> int:
        return int(self.betas.numel())

    @classmethod
    def from_betas(cls, name: str, betas: torch.Tensor) -> "Schedule":
        betas = torch.as_tensor(betas, dtype=torch.float64)
        alphas = 1.0 - betas
        return cls(name, betas, alphas, torch.cumprod(alphas, 0))

    @classmethod
    def linear(cls, T: int = 1000, beta_start: float = 1e-4, beta_end: float = 0.02) -> "Schedule":
        """DDPM: beta_t linear from beta_start (t=1) to beta_end (t=T)."""
        if T < 1:
            raise ValueError("T must be >= 1")
        return cls.from_betas("linear", torch.linspace(beta_start, beta_end, int(T),
                                                       dtype=torch.float64))

    @classmethod
    def cosine(cls, T: int = 1000, s: float = 0.008) -> "Schedule":
        """Nichol & Dhariwal: alpha_bar_t = f(t)/f(0), f(t) = cos^2(((t/T + s)/(1 + s)) pi/2);
        beta_t = 1 - alpha_bar_t / alpha_bar_{t-1}, clipped to at most 0.999."""
        if T < 1:
            raise ValueError("T must be >= 1")
        t = torch.arange(int(T) + 1, dtype=torch.float64)
        f = torch.cos(((t / T + s) / (1 + s)) * math.pi / 2) ** 2
        ab = f / f[0]
        betas = (1 - ab[1:] / ab[:-1]).clamp(max=0.999)
        return cls.from_betas("cosine", betas)

    def alpha_bar(self, t: int) -> float:
        """alpha_bar_t for t in 0..T (alpha_bar_0 = 1)."""
        return 1.0 if t <= 0 else float(self.alpha_bars[int(t) - 1])

    def snr(self) -> torch.Tensor:
        """Signal-to-noise ratio SNR(t) = alpha_bar_t / (1 - alpha_bar_t), t = 1..T."""
        return self.alpha_bars / (1 - self.alpha_bars)


SCHEDULES: dict[str, Callable[..., Schedule]] = {"linear": Schedule.linear,
                                                 "cosine": Schedule.cosine}


def _ab_of(t, schedule: Schedule, like: torch.Tensor) -> torch.Tensor:
    """alpha_bar_t as a tensor broadcastable against `like` (n, d); t int or (n,) ints."""
    ab_full = torch.cat([torch.ones(1, dtype=torch.float64), schedule.alpha_bars])
    t = torch.as_tensor(t, device="cpu").long()
    ab = ab_full[t].to(dtype=like.dtype, device=like.device)
    return ab.reshape(-1, *([1] * (like.dim() - 1))) if ab.dim() else ab


def q_sample(x0: torch.Tensor, t, noise: torch.Tensor, schedule: Schedule) -> torch.Tensor:
    """x_t = sqrt(alpha_bar_t) x0 + sqrt(1 - alpha_bar_t) noise  (t int or (n,) ints in 0..T)."""
    ab = _ab_of(t, schedule, x0)
    return ab.sqrt() * x0 + (1 - ab).sqrt() * noise


def q_step(x_prev: torch.Tensor, t: int, noise: torch.Tensor, schedule: Schedule) -> torch.Tensor:
    """One forward step x_t = sqrt(1 - beta_t) x_{t-1} + sqrt(beta_t) noise."""
    beta = float(schedule.betas[t - 1])
    return math.sqrt(1 - beta) * x_prev + math.sqrt(beta) * noise
