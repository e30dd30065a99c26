"""FlowTrainer: fits a RealNVP to 2-D points by maximum likelihood, Adam on mini-batches.

    loss = -mean_{x in batch} log p(x)      (the NLL in nats per point)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from engine.device import make_generator, resolve_device
from engine.flows.measures import DensityGrid, density_grid, flow_log_prob
from engine.flows.realnvp import RealNVP
from engine.training import SingleModelTrainer

GRID_LINES, LINE_POINTS = 9, 60     # the base space's grid: 9 lines each way, 60 points each


@dataclass(frozen=True)
class FlowSnapshot:
    step: int
    train_nll: float           # -mean log p over all training points
    held_nll: float            # the same over the held-out points
    density: DensityGrid       # exact p(x) on the page's grid and its integral
    samples: np.ndarray        # (m, 2) x = f^{-1}(z), z ~ N(0, I) with a fixed seed
    warped: np.ndarray         # (2 * GRID_LINES, LINE_POINTS, 2) base grid lines through f^-1
    diverged_at: int | None


def base_grid_lines(extent: float = 2.5) -> np.ndarray:
    """(2 * GRID_LINES, LINE_POINTS, 2): lines z_1 = c and z_2 = c, c in [-extent, extent]."""
    c = np.linspace(-extent, extent, GRID_LINES)
    u = np.linspace(-extent, extent, LINE_POINTS)
    vertical = np.stack([np.broadcast_to(c[:, None], (GRID_LINES, LINE_POINTS)),
                         np.broadcast_to(u[None, :], (GRID_LINES, LINE_POINTS))], -1)
    return np.concatenate([vertical, vertical[..., ::-1]]).astype(np.float32)


class FlowTrainer(SingleModelTrainer):
    """One iteration = one Adam step on -mean log p of a random batch. Each step(n) call logs
    "train" (NLL over all training points) and "held_out" (over the held-out points). State:
    "model", "opt", steps, diverged_at, history."""

    def __init__(self, train: np.ndarray, held_out: np.ndarray, layers: int = 8,
                 hidden: int = 64, lr: float = 2e-3, batch: int = 256, seed: int = 0,
                 device=None, lim: float = 4.0, res: int = 100, n_samples: int = 500):
        super().__init__()
        self.device = resolve_device(device)
        self.seed, self.lr, self.batch = int(seed), float(lr), int(batch)
        self.lim, self.res, self.n_samples = float(lim), int(res), int(n_samples)
        self.x = torch.as_tensor(np.asarray(train), dtype=torch.float32, device=self.device)
        self.x_held = torch.as_tensor(np.asarray(held_out), dtype=torch.float32,
                                      device=self.device)
        torch.manual_seed(self.seed)          # nn.Linear's init draws from the global generator
        self.model = RealNVP(int(layers), int(hidden)).to(self.device)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=self.lr)
        self.gen = make_generator(self.seed, self.device)

    def _iteration(self) -> dict[str, float]:
        idx = torch.randint(0, self.x.shape[0], (self.batch,), generator=self.gen,
                            device=self.device)
        self.opt.zero_grad(set_to_none=True)
        loss = -flow_log_prob(self.model, self.x[idx]).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 10.0)
        self.opt.step()
        return {"batch": float(loss.detach())}

    @torch.no_grad()
    def nlls(self) -> dict[str, float]:
        """{"train": NLL of all training points, "held_out": of the held-out points}."""
        return {"train": float(-flow_log_prob(self.model, self.x).mean()),
                "held_out": float(-flow_log_prob(self.model, self.x_held).mean())}

    def _log(self, metrics: dict[str, float]) -> None:
        self.history.log(self.steps, self.nlls())

    @torch.no_grad()
    def snapshot(self) -> FlowSnapshot:
        return self.cached("snapshot", self._snapshot)

    @torch.no_grad()
    def _snapshot(self) -> FlowSnapshot:
        gen = make_generator(self.seed + 1, self.device)        # the same samples every frame
        samples = self.model.sample(self.n_samples, gen).cpu().numpy()
        lines = torch.as_tensor(base_grid_lines(), device=self.device).reshape(-1, 2)
        warped = self.model.inverse(lines)[0].cpu().numpy().reshape(2 * GRID_LINES,
                                                                    LINE_POINTS, 2)
        dens = density_grid(self.model, self.lim, self.res)
        n = self.nlls()
        return FlowSnapshot(self.steps, n["train"], n["held_out"], dens, samples, warped,
                            self.diverged_at)

