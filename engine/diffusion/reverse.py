"""One reverse run for the page: the sampler registry, recorded frames and the drift field per
frame (-eps for DDPM/DDIM, the score for Langevin).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from engine.device import make_generator
from engine.diffusion.denoiser import MixtureDenoiser
from engine.diffusion.samplers import (SampleResult, annealed_langevin, annealed_step,
                                       ddim_sample, ddpm_sample, eps_field, geometric_sigmas,
                                       langevin)
from engine.diffusion.schedule import EpsFn, Schedule


@dataclass(frozen=True)
class ReverseSetup:
    """What a sampler needs. eps_fn: the (guided) eps(x, t) of the chosen denoiser;
    exact: the exact denoiser of the data (Langevin samplers use its score)."""
    eps_fn: EpsFn
    exact: MixtureDenoiser
    schedule: Schedule
    n: int = 500
    steps: int = 50            # DDIM sub-sequence length S
    eta: float = 0.0
    langevin_steps: int = 500  # plain Langevin steps; annealed: spread over `levels`
    levels: int = 10
    seed: int = 0
    device: str | None = None
    record: int = 30


@dataclass(frozen=True)
class ReverseRun:
    result: SampleResult
    time_label: str            # "t" (diffusion time) or "Langevin step"
    grid: np.ndarray           # (G, 2)
    field: np.ndarray          # (F, G, 2) the drift direction (-eps or score) at each frame


def langevin_step_size(den: MixtureDenoiser) -> float:
    """A stable step: 0.1 x the smallest component variance of the data mixture."""
    v = den.vars if den.isotropic else torch.linalg.eigvalsh(den.covs)[:, 0]
    return 0.1 * float(v.min())


def _langevin_start(s: ReverseSetup) -> torch.Tensor:
    g = make_generator(s.seed, "cpu")
    return 2.0 * torch.randn(s.n, 2, generator=g)


def _run_ddpm(s: ReverseSetup) -> SampleResult:
    return ddpm_sample(s.eps_fn, s.n, s.schedule, s.seed, s.device, s.record)


def _run_ddim(s: ReverseSetup) -> SampleResult:
    return ddim_sample(s.eps_fn, s.n, s.schedule, s.steps, s.eta, s.seed, s.device, s.record)


def _run_langevin(s: ReverseSetup) -> SampleResult:
    return langevin(lambda x: s.exact.score(x, 0), _langevin_start(s),
                    langevin_step_size(s.exact), s.langevin_steps, s.seed, s.device, s.record)


def annealed_sigmas(den: MixtureDenoiser, levels: int, sigma_max: float = 3.0) -> list[float]:
    """sigma_max down to a fifth of the data's smallest component std, geometric (the last
    level then barely widens the data: std sqrt(s^2 + (s/5)^2) ~ 1.02 s)."""
    v = den.vars if den.isotropic else torch.linalg.eigvalsh(den.covs)[:, 0]
    return geometric_sigmas(sigma_max, math.sqrt(float(v.min())) / 5, levels)


def _run_annealed(s: ReverseSetup) -> SampleResult:
    sig = annealed_sigmas(s.exact, s.levels)
    return annealed_langevin(lambda x, sg: s.exact.score_sigma(x, sg), sig, _langevin_start(s),
                             annealed_step(sig), max(1, s.langevin_steps // s.levels),
                             s.seed, s.device, s.record)


SAMPLERS: dict[str, Callable[[ReverseSetup], SampleResult]] = {
    "DDIM": _run_ddim,
    "DDPM": _run_ddpm,
    "Langevin": _run_langevin,
    "annealed Langevin": _run_annealed,
}


def reverse_run(sampler: str, setup: ReverseSetup, lim: float = 3.5, res: int = 13) -> ReverseRun:
    """Run SAMPLERS[sampler] and evaluate the drift field on a res x res grid at each
    recorded frame: -eps(x, t) for DDPM/DDIM (t of the frame), the score for Langevin
    (annealed: the score at the noise level of the frame)."""
    if sampler not in SAMPLERS:
        raise KeyError(f"unknown sampler {sampler!r}; choose one of {sorted(SAMPLERS)}")
    result = SAMPLERS[sampler](setup)
    ex = setup.exact
    if sampler in ("DDIM", "DDPM"):
        grid, field = eps_field(setup.eps_fn, result.times, -lim, lim, res, setup.device)
        return ReverseRun(result, "t", grid, field)
    if sampler == "Langevin":
        fn = lambda x, i: -ex.score(x, 0)  # noqa: E731
    else:
        sig = annealed_sigmas(ex, setup.levels)
        each = max(1, setup.langevin_steps // setup.levels)
        fn = lambda x, i: -ex.score_sigma(x, sig[min(len(sig) - 1, max(0, i - 1) // each)])  # noqa: E731
    grid, field = eps_field(fn, [max(1, int(i)) for i in result.times], -lim, lim, res, setup.device)
    return ReverseRun(result, "Langevin step", grid, field)
