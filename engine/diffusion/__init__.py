"""Diffusion on 2-D data: noise schedules, the forward process, an exact Gaussian-mixture
denoiser, a small eps-network and its trainer, DDPM / DDIM / Langevin samplers, and sample
quality metrics.

Index convention: timesteps are t = 1..T. The schedule tensors are stored 0-based, so
    betas[t-1] = beta_t,  alphas[t-1] = alpha_t = 1 - beta_t,
    alpha_bars[t-1] = alpha_bar_t = prod_{s<=t} (1 - beta_s),
and alpha_bar_0 = 1 (no noise), available as `schedule.alpha_bar(0)`.

Forward process: q(x_t | x_0) = N(sqrt(alpha_bar_t) x_0, (1 - alpha_bar_t) I).
Noise and score: eps*(x_t, t) = -sqrt(1 - alpha_bar_t) grad_x log q_t(x_t).

The package, by job (every name stays importable as `from engine.diffusion import ...`):

    schedule.py    Schedule, SCHEDULES, q_sample, q_step          the forward process
    denoiser.py    MixtureDenoiser, gmm_log_prob_and_score, density_grid   the exact eps*
    network.py     EpsMLP, timestep_embedding, network_eps        the learned eps_theta
    trainer.py     DiffusionTrainer, DiffusionSnapshot
    samplers.py    ddpm_sample, ddim_sample, langevin, annealed_langevin, guidance, eps_field
    measures.py    mode_weights, sliced_wasserstein, mmd_rbf, METRICS, steps_vs_quality
    data.py        DIFFUSION_DATA, weighted_mixture, two_mode_gap, parse_points_csv
    reverse.py     SAMPLERS, ReverseSetup, reverse_run             one run for the page
    pretrained.py  PRETRAINED, save_model, load_model (engine.weights files)
"""
from __future__ import annotations

from engine.datasets import ToyData  # noqa: F401 (D.ToyData on the page, as before the split)
from engine.device import numpy_rng  # noqa: F401 (D.numpy_rng on the page, as before the split)
from engine.diffusion.data import (DIFFUSION_DATA, parse_points_csv, two_mode_gap,
                                   weighted_mixture)
from engine.diffusion.denoiser import MixtureDenoiser, density_grid, gmm_log_prob_and_score
from engine.diffusion.measures import (METRICS, StepsQuality, mmd_rbf, mode_weights,
                                       sliced_wasserstein, steps_vs_quality)
from engine.diffusion.network import EpsMLP, network_eps, timestep_embedding
from engine.diffusion.pretrained import PRETRAINED, load_model, save_model
from engine.diffusion.reverse import (SAMPLERS, ReverseRun, ReverseSetup, annealed_sigmas,
                                      langevin_step_size, reverse_run)
from engine.diffusion.samplers import (SampleResult, annealed_langevin, annealed_step,
                                       ddim_sample, ddim_timesteps, ddpm_sample, eps_field,
                                       geometric_sigmas, guidance, langevin)
from engine.diffusion.schedule import SCHEDULES, EpsFn, Schedule, ScoreFn, q_sample, q_step
from engine.diffusion.trainer import DiffusionSnapshot, DiffusionTrainer

__all__ = [
    "ToyData", "numpy_rng",   # imported helpers the page reaches through this module
    "DIFFUSION_DATA", "METRICS", "PRETRAINED", "SAMPLERS", "SCHEDULES", "DiffusionSnapshot",
    "DiffusionTrainer", "EpsFn", "EpsMLP", "MixtureDenoiser", "ReverseRun", "ReverseSetup",
    "SampleResult", "Schedule", "ScoreFn", "StepsQuality", "annealed_langevin", "annealed_sigmas",
    "annealed_step", "ddim_sample", "ddim_timesteps", "ddpm_sample", "density_grid", "eps_field",
    "geometric_sigmas", "gmm_log_prob_and_score", "guidance", "langevin", "langevin_step_size",
    "load_model", "mmd_rbf", "mode_weights", "network_eps", "parse_points_csv", "q_sample",
    "q_step", "reverse_run", "save_model", "sliced_wasserstein", "steps_vs_quality",
    "timestep_embedding", "two_mode_gap", "weighted_mixture",
]
