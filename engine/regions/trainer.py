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
from engine.training import History, TrainerBase

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
    """Full-batch Adam (torch.optim.Adam, defaults beta = (0.9, 0.999), eps = 1e-8) on a Task,
    loss MSE (regression) or BCE-with-logits (classification), on an MLP from make_mlp. The
    exact region count in the box is in history["regions"] at step 0 and every `count_every`
    steps.

    The count costs an exact partition, far more than an Adam step of the small nets, so a
    step does not compute it: at a counted step it keeps the (W, b) of the moment (a few
    hundred numbers) and the partitions are made when the history is read (a snapshot, a
    view, a saved state). At the page's pace, one frame per `count_every` steps, the pending
    count is the state the frame draws, whose partition the frame needs anyway."""

    batched = "engine.regions.batched"   # a class steps its trainers as one batch

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
        self.opt = torch.optim.Adam(self.params, lr=self.lr)
        self.loss_fn = LOSSES[self.task.kind]
        self._partition: Partition | None = None
        self._partition_step = -1
        self._pending: list[tuple[int, list[torch.Tensor]]] = []   # counted steps' (W, b)
        with torch.no_grad():
            loss0 = float(self.loss())
        self._history.log(0, {"loss": loss0, **self._region_metrics()})

    @property
    def history(self) -> History:
        """The history with every pending region count made (see the class docstring)."""
        if self._pending:
            self._count_pending()
        return self._history

    @history.setter
    def history(self, value: History) -> None:
        self._history, self._pending = value, []

    def loss(self) -> torch.Tensor:
        return self.loss_fn(self.model(self.x)[:, 0], self.y)

    def partition(self) -> Partition:
        if self._partition_step != self.steps:
            self._partition = partition(self.model, self.box)
            self._partition_step = self.steps
        return self._partition

    def _iteration(self) -> dict[str, float]:
        self.opt.zero_grad(set_to_none=True)
        loss = self.loss()
        loss.backward()
        self.opt.step()
        metrics = {"loss": float(loss.detach())}
        if math.isfinite(metrics["loss"]) and self.steps % self.count_every == 0:
            self._pending.append((self.steps, [p.detach().clone() for p in self.params]))
        return metrics

    def _log(self, metrics: dict[str, float]) -> None:
        self._history.log(self.steps, {"loss": metrics["loss"]})

    def _count_pending(self) -> None:
        """Log the region metrics of every counted step not yet measured, in step order (the
        current step's partition is the one snapshots draw: made once, shared)."""
        pending, self._pending = self._pending, []
        for step, params in pending:
            if step == self.steps:
                metrics = self._region_metrics()
            else:
                layers = [(to_numpy(w).astype(np.float64), to_numpy(b).astype(np.float64))
                          for w, b in zip(params[::2], params[1::2])]
                metrics = self._region_metrics(partition(layers, self.box))
            self._history.log(step, metrics)

    NEAR = 0.3   # "near the bend": region centroid within this distance of it

    def _region_metrics(self, part: Partition | None = None) -> dict[str, float]:
        """The exact region count and, for tasks with a known bend, the share of regions
        whose centroid lies within NEAR of it (training moves regions there)."""
        part = self.partition() if part is None else part
        out = {"regions": float(part.count)}
        if self.task.bend_distance is not None and part.count:
            out["near_bend"] = float(np.mean(self.task.bend_distance(part.centroid) < self.NEAR))
        return out

    def snapshot(self) -> RegionSnapshot:
        with torch.no_grad():
            loss = float(self.loss())
        part = self.partition() if self.diverged_at is None else self._partition
        return RegionSnapshot(self.steps, loss, part, to_numpy(self.x), to_numpy(self.y),
                              self.task.kind, self.diverged_at)

    def _modules(self) -> dict[str, nn.Module]:
        return {"model": self.model}

    def _optimizers(self) -> dict[str, torch.optim.Optimizer]:
        return {"opt": self.opt}

    def _load_extra_state(self, state: dict) -> None:
        self._partition_step = -1
