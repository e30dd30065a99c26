"""Planar, radial, coupling (Real NVP) and continuous-time (neural ODE) flows fitted to the same
2-D points the same way (Adam on -mean log p of random batches), with what each costs:

    time per step = wall time of the `steps` Adam steps / steps       (seconds, this machine)
    parameters    = sum of the model's parameter sizes
    NLL           = -mean log p over the held-out points               (nats per point)
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from engine.flows.measures import DensityGrid, density_grid, flow_log_prob
from engine.flows.ode import ODEFlow
from engine.flows.realnvp import RealNVP
from engine.flows.simple import SimpleFlow

FAMILIES = ("planar", "radial", "coupling", "ode")


def build_flow(family: str, layers: int, hidden: int = 64, ode_steps: int = 8):
    """A flow of `family` with `layers` layers (coupling: of `hidden` units; ode: `layers`
    is unused, its field has `hidden` units and `ode_steps` RK4 steps)."""
    if family in ("planar", "radial"):
        return SimpleFlow(family, int(layers))
    if family == "coupling":
        return RealNVP(int(layers), int(hidden))
    if family == "ode":
        return ODEFlow(int(hidden), int(ode_steps))
    raise ValueError(f"unknown flow family {family!r}; choose one of {', '.join(FAMILIES)}")


def parameter_count(model: torch.nn.Module) -> int:
    return int(sum(p.numel() for p in model.parameters()))


@dataclass(frozen=True)
class FitResult:
    family: str
    layers: int
    steps: int
    params: int
    seconds_per_step: float
    train_nll: float
    held_nll: float
    curve: np.ndarray        # (steps,) the batch NLL of each step
    density: DensityGrid     # exact p(x) on the plot's grid after training

    @property
    def integral(self) -> float:
        """The density's sum over the plot (about 1)."""
        return self.density.integral


def fit_flow(family: str, layers: int, train: np.ndarray, held_out: np.ndarray,
             steps: int, hidden: int = 64, lr: float = 5e-3, batch: int = 256,
             seed: int = 0, lim: float = 4.0, res: int = 60, ode_steps: int = 8
             ) -> FitResult:
    """Fit build_flow(family, layers, hidden) for `steps` Adam steps (seeded), measure it."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        model = build_flow(family, layers, hidden, ode_steps)
    x = torch.as_tensor(np.asarray(train), dtype=torch.float32)
    x_held = torch.as_tensor(np.asarray(held_out), dtype=torch.float32)
    opt = torch.optim.Adam(model.parameters(), lr=float(lr))
    gen = torch.Generator().manual_seed(int(seed))
    curve = np.zeros(int(steps))
    start = time.perf_counter()
    for i in range(int(steps)):
        idx = torch.randint(0, x.shape[0], (int(batch),), generator=gen)
        loss = -flow_log_prob(model, x[idx]).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        opt.step()
        curve[i] = float(loss.detach())
    per_step = (time.perf_counter() - start) / max(int(steps), 1)
    with torch.no_grad():
        train_nll = float(-flow_log_prob(model, x).mean())
        held_nll = float(-flow_log_prob(model, x_held).mean())
    return FitResult(family, int(layers), int(steps), parameter_count(model), per_step,
                     train_nll, held_nll, curve, density_grid(model, lim, res))
