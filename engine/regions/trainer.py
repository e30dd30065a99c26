"""Training a ReLU MLP on a 2-D task and watching its linear regions move (engine.regions):
the tasks (TASKS), their losses, and RegionTrainer (full-batch Adam on the trainer base)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch
from torch import nn

from engine.datasets import make_dataset
from engine.device import resolve_device, to_numpy
from engine.regions.geometry import Box, Partition, make_mlp, partition
from engine.training import TrainerBase

# --------------------------------------------------------------------------------------
# Training: fit the MLP to a 2-D task and watch the regions move
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Task:
    kind: str                                   # "regression" | "classification"
    make: Callable[[int, int], tuple[np.ndarray, np.ndarray]]  # (n, seed) -> x (n,2), y (n,)
    description: str
    # distance from x (n, 2) to where the target bends most, when that is a simple set
    bend_distance: Callable[[np.ndarray], np.ndarray] | None = None


def _surface(fn: Callable[[np.ndarray, np.ndarray], np.ndarray], scale: float = 2.0):
    def make(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        x = np.random.default_rng(seed).uniform(-scale, scale, (n, 2))
        return x.astype(np.float32), fn(x[:, 0], x[:, 1]).astype(np.float32)
    return make


def _toy(name: str, scale: float, **params):
    def make(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
        d = make_dataset(name, n, seed, **params)
        pts = d.points - d.points.mean(0)
        pts = pts * (scale / np.abs(pts).max())
        return pts.astype(np.float32), (d.labels % 2).astype(np.float32)
    return make


TASKS: dict[str, Task] = {
    "bump (regression)": Task("regression", _surface(lambda x, y: np.exp(-2 * (x ** 2 + y ** 2))),
                              "y = exp(-2|x|²): curved only near the origin"),
    "ridge (regression)": Task("regression", _surface(lambda x, y: np.tanh(4 * (x - 0.5 * y))),
                               "y = tanh(4(x₁ - x₂/2)): bends along one line",
                               lambda p: np.abs(p[:, 0] - 0.5 * p[:, 1]) / math.sqrt(1.25)),
    "ripple (regression)": Task("regression",
                                _surface(lambda x, y: np.sin(2 * np.sqrt(x ** 2 + y ** 2))),
                                "y = sin(2|x|): rings of curvature"),
    "circles (classification)": Task("classification", _toy("circles", 1.8, noise=0.08),
                                     "two concentric circles, logistic loss"),
    "spiral (classification)": Task("classification", _toy("spiral", 1.8, noise=0.05),
                                    "two interleaved spirals, logistic loss"),
}

LOSSES = {
    "regression": lambda out, y: nn.functional.mse_loss(out, y),
    "classification": lambda out, y: nn.functional.binary_cross_entropy_with_logits(out, y),
}


@dataclass(frozen=True)
class RegionSnapshot:
    step: int
    loss: float
    partition: Partition
    points: np.ndarray          # (n, 2) training inputs
    targets: np.ndarray         # (n,)
    kind: str
    diverged_at: int | None


class RegionTrainer(TrainerBase):
    """Full-batch Adam on a Task, loss MSE (regression) or BCE-with-logits (classification), on
    an MLP from make_mlp. Every `count_every` steps (and at step 0) it records the exact region
    count in the box in history["regions"].

    Adam, written out (same numbers as torch.optim.Adam with its defaults, whose first
    construction costs seconds of lazy imports): with g = grad(loss), t = step number,
        m <- beta1 m + (1 - beta1) g,   v <- beta2 v + (1 - beta2) g^2,
        p <- p - lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps),
    beta1 = 0.9, beta2 = 0.999, eps = 1e-8."""

    betas, eps = (0.9, 0.999), 1e-8

    def __init__(self, widths: Sequence[int], task: str = "bump (regression)", seed: int = 0,
                 lr: float = 0.01, init: str = "kaiming", init_scale: float = 1.0,
                 box: Box = (-2, 2, -2, 2), n: int = 400, count_every: int = 25,
                 device: str | torch.device | None = None):
        if task not in TASKS:
            raise KeyError(f"unknown task {task!r}; choose one of {sorted(TASKS)}")
        super().__init__()
        self.device = resolve_device(device)
        self.task, self.box = TASKS[task], tuple(map(float, box))
        self.count_every = int(count_every)
        x, y = self.task.make(int(n), int(seed))
        self.x = torch.as_tensor(x, device=self.device)
        self.y = torch.as_tensor(y, device=self.device)
        self.model = make_mlp(widths, seed=seed, init=init, init_scale=init_scale).to(self.device)
        self.lr = float(lr)
        self.params = list(self.model.parameters())
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.loss_fn = LOSSES[self.task.kind]
        self._partition: Partition | None = None
        self._partition_step = -1
        with torch.no_grad():
            loss0 = float(self.loss())
        self.history.log(0, {"loss": loss0, **self._region_metrics()})

    def loss(self) -> torch.Tensor:
        return self.loss_fn(self.model(self.x)[:, 0], self.y)

    def partition(self) -> Partition:
        if self._partition_step != self.steps:
            self._partition = partition(self.model, self.box)
            self._partition_step = self.steps
        return self._partition

    def _iteration(self) -> dict[str, float]:
        for p in self.params:
            p.grad = None
        loss = self.loss()
        loss.backward()
        self._adam(self.steps)
        metrics = {"loss": float(loss.detach())}
        if math.isfinite(metrics["loss"]) and self.steps % self.count_every == 0:
            counts = self._region_metrics()
            self.history.log(self.steps, counts)     # counts at their own step; loss per call
            metrics.update(counts)
        return metrics

    def _log(self, metrics: dict[str, float]) -> None:
        self.history.log(self.steps, {"loss": metrics["loss"]})

    NEAR = 0.3   # "near the bend": region centroid within this distance of it

    def _region_metrics(self) -> dict[str, float]:
        """The exact region count and, for tasks with a known bend, the share of regions
        whose centroid lies within NEAR of it (training moves regions there)."""
        part = self.partition()
        out = {"regions": float(part.count)}
        if self.task.bend_distance is not None and part.count:
            out["near_bend"] = float(np.mean(self.task.bend_distance(part.centroid) < self.NEAR))
        return out

    @torch.no_grad()
    def _adam(self, t: int) -> None:
        b1, b2 = self.betas
        for p, m, v in zip(self.params, self.m, self.v):
            m.mul_(b1).add_(p.grad, alpha=1 - b1)
            v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
            denom = (v / (1 - b2 ** t)).sqrt_().add_(self.eps)
            p.addcdiv_(m, denom, value=-self.lr / (1 - b1 ** t))

    def snapshot(self) -> RegionSnapshot:
        with torch.no_grad():
            loss = float(self.loss())
        part = self.partition() if self.diverged_at is None else self._partition
        return RegionSnapshot(self.steps, loss, part, to_numpy(self.x), to_numpy(self.y),
                              self.task.kind, self.diverged_at)

    def _modules(self) -> dict[str, nn.Module]:
        return {"model": self.model}

    def _extra_state(self) -> dict:
        return {"adam_m": [m.cpu() for m in self.m], "adam_v": [v.cpu() for v in self.v]}

    def _load_extra_state(self, state: dict) -> None:
        with torch.no_grad():
            for buf, saved in zip(self.m + self.v, state["adam_m"] + state["adam_v"]):
                buf.copy_(saved)
        self._partition_step = -1
