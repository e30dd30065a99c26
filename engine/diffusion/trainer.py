"""DiffusionTrainer: minimises mean ||eps - eps_theta(x_t, t, c)||^2 with x_t = q_sample(x0, t,
eps), t ~ U{1..T}, Adam (label dropout for classifier-free guidance).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from engine.device import make_generator, resolve_device
from engine.diffusion.network import EpsMLP, network_eps
from engine.diffusion.samplers import ddim_sample
from engine.diffusion.schedule import Schedule
from engine.training import TrainerBase


@dataclass(frozen=True)
class DiffusionSnapshot:
    step: int
    loss: float                # mean loss of the last step() call
    samples: np.ndarray        # (m, 2) DDIM samples (eta=0, fixed seed) from the current net
    diverged_at: int | None


class DiffusionTrainer(TrainerBase):
    """Minimises L = mean ||eps - eps_theta(x_t, t, c)||^2 with x_t = q_sample(x0, t, eps),
    t ~ U{1..T}, eps ~ N(0, I), Adam. With labels, c is the class, replaced by the "no class"
    token with probability p_uncond (classifier-free guidance training).

    On engine.training.TrainerBase: one iteration = one Adam step. step(n) returns and logs
    {"loss": the mean over the call's finite iterations} (a diverged iteration ends the call
    and is not averaged in). State: "model", "opt" (deep-copied), steps, diverged_at,
    history."""

    batched = "engine.diffusion.batched"   # a class steps its trainers as one batch

    def __init__(self, points: np.ndarray, labels: np.ndarray | None = None,
                 schedule: Schedule | None = None, hidden: int = 64, depth: int = 3,
                 lr: float = 2e-3, batch: int = 256, p_uncond: float = 0.1, seed: int = 0,
                 device=None, snapshot_particles: int = 400):
        super().__init__()
        self.device = resolve_device(device)
        self.seed, self.lr, self.batch, self.p_uncond = int(seed), float(lr), int(batch), float(p_uncond)
        self.schedule = schedule or Schedule.linear()
        self.x = torch.as_tensor(np.asarray(points), dtype=torch.float32, device=self.device)
        self.labels = None if labels is None else torch.as_tensor(
            np.asarray(labels), dtype=torch.long, device=self.device)
        num_classes = 0 if labels is None else int(np.max(labels)) + 1
        torch.manual_seed(self.seed)          # nn.Linear's init draws from the global generator
        self.model = EpsMLP(hidden, depth, num_classes=num_classes).to(self.device)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=self.lr)
        self.gen = make_generator(self.seed, self.device)
        self.ab = torch.cat([torch.ones(1, dtype=torch.float64),
                             self.schedule.alpha_bars]).float().to(self.device)
        self.snapshot_particles = snapshot_particles
        self._total, self._done = 0.0, 0      # the current step(n) call's finite losses

    def loss_on_batch(self) -> torch.Tensor:
        g, n, T = self.gen, self.x.shape[0], self.schedule.T
        idx = torch.randint(0, n, (self.batch,), generator=g, device=self.device)
        t = torch.randint(1, T + 1, (self.batch,), generator=g, device=self.device)
        eps = torch.randn(self.batch, 2, generator=g, device=self.device)
        ab = self.ab[t][:, None]
        x_t = ab.sqrt() * self.x[idx] + (1 - ab).sqrt() * eps
        c = None
        if self.labels is not None:
            drop = torch.rand(self.batch, generator=g, device=self.device) < self.p_uncond
            c = torch.where(drop, self.model.num_classes, self.labels[idx])
        return ((eps - self.model(x_t, t, c)) ** 2).sum(-1).mean()

    def _iteration(self) -> dict[str, float]:
        self.opt.zero_grad(set_to_none=True)
        loss = self.loss_on_batch()
        loss.backward()
        self.opt.step()
        value = float(loss.detach())
        if math.isfinite(value):
            self._total, self._done = self._total + value, self._done + 1
        return {"loss": value}

    def _call_mean(self) -> dict[str, float]:
        return {"loss": self._total / self._done} if self._done else {}

    def _log(self, metrics: dict[str, float]) -> None:
        if self._done:
            self.history.log(self.steps, self._call_mean())

    def step(self, n: int = 1) -> dict[str, float]:
        self._total, self._done = 0.0, 0
        super().step(n)
        return self._call_mean()

    @torch.no_grad()
    def snapshot(self) -> DiffusionSnapshot:
        res = ddim_sample(network_eps(self.model), self.snapshot_particles, self.schedule,
                          steps=25, eta=0.0, seed=self.seed, device=self.device)
        return DiffusionSnapshot(self.steps, self.history.last("loss"), res.samples,
                                 self.diverged_at)

    def _modules(self) -> dict[str, torch.nn.Module]:
        return {"model": self.model}

    def _optimizers(self) -> dict[str, torch.optim.Optimizer]:
        return {"opt": self.opt}
