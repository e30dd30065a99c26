"""The live-training protocol every trainable demo follows, and helpers around it.

A trainer is a plain object (no Streamlit) with

    step(n) -> dict[str, float]   advance n iterations, return the latest metrics
    snapshot() -> Any             what the page draws (small, CPU/numpy)
    state_dict() / load_state_dict(d)
    steps: int                    iterations done so far
    history: History              metric name -> list of (step, value)

Divergence is a result, not a crash: a trainer whose loss becomes non-finite sets
`diverged_at` to the step and further step() calls do nothing.

`run_for(trainer, max_steps, budget_s)` advances a trainer by at most max_steps iterations
and stops early once budget_s seconds of wall time are spent (docs/ARCHITECTURE.md: budget ticks by
time, not step count). The page's fragment calls it once per tick.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np
import torch
from torch import nn

from engine.device import make_generator, resolve_device, to_numpy


@runtime_checkable
class Trainer(Protocol):
    steps: int
    diverged_at: int | None

    def step(self, n: int = 1) -> dict[str, float]: ...
    def snapshot(self) -> Any: ...
    def state_dict(self) -> dict: ...
    def load_state_dict(self, state: dict) -> None: ...


@dataclass
class History:
    """Metric name -> parallel lists of steps and values (for loss curves)."""
    steps: dict[str, list[int]] = field(default_factory=dict)
    values: dict[str, list[float]] = field(default_factory=dict)

    def log(self, step: int, metrics: dict[str, float]) -> None:
        for name, value in metrics.items():
            self.steps.setdefault(name, []).append(int(step))
            self.values.setdefault(name, []).append(float(value))

    def last(self, name: str, default: float = math.nan) -> float:
        vals = self.values.get(name)
        return vals[-1] if vals else default

    def as_arrays(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        return (np.asarray(self.steps.get(name, []), dtype=np.int64),
                np.asarray(self.values.get(name, []), dtype=np.float64))

    def copy(self) -> "History":
        return History({k: list(v) for k, v in self.steps.items()},
                       {k: list(v) for k, v in self.values.items()})

    def state_dict(self) -> dict:
        return {"steps": {k: list(v) for k, v in self.steps.items()},
                "values": {k: list(v) for k, v in self.values.items()}}

    @classmethod
    def from_state_dict(cls, state: dict) -> "History":
        return cls({k: list(v) for k, v in state["steps"].items()},
                   {k: list(v) for k, v in state["values"].items()})


@dataclass(frozen=True)
class TickResult:
    steps_done: int      # iterations run in this tick
    seconds: float       # wall time spent training in this tick
    metrics: dict        # metrics after the last iteration (empty if none ran)
    diverged_at: int | None


def run_for(trainer: Trainer, max_steps: int, budget_s: float = 0.4,
            chunk: int | None = None, *, stop: Callable[[], bool] | None = None,
            chunk_s: float | None = None) -> TickResult:
    """Advance `trainer` by at most `max_steps` iterations, in chunks, stopping once
    `budget_s` seconds have elapsed (checked between chunks), the run diverged, or
    `stop()` returns True (checked before every chunk: a Pause lands within one chunk).

    With `chunk_s`, chunks are sized by time: the first has `chunk` iterations (1 if not
    given), each next one n = floor(chunk_s / t_step) with t_step the seconds per iteration
    of the chunk before (growing at most 4x per chunk), so a chunk costs about chunk_s."""
    max_steps = max(0, int(max_steps))
    if chunk_s is None:
        chunk = max(1, int(chunk or max(1, max_steps // 20)))
    else:
        chunk = max(1, int(chunk or 1))
    t0 = time.perf_counter()
    done, metrics = 0, {}
    while done < max_steps and trainer.diverged_at is None:
        if stop is not None and stop():
            break
        n = min(chunk, max_steps - done)
        t_chunk = time.perf_counter()
        metrics = trainer.step(n)
        done += n
        now = time.perf_counter()
        if now - t0 >= budget_s:
            break
        if chunk_s is not None:
            t_step = max((now - t_chunk) / n, 1e-6)
            chunk = max(1, min(4 * n, int(chunk_s / t_step)))
    return TickResult(done, time.perf_counter() - t0, metrics, trainer.diverged_at)


def is_finite(value: float | torch.Tensor) -> bool:
    if isinstance(value, torch.Tensor):
        return bool(torch.isfinite(value).all())
    return math.isfinite(value)


# --------------------------------------------------------------------------------------
# The reference trainer: a small MLP classifier on 2-D points. Used by the tests of the
# protocol and of the live-training widget; also a template for the topic trainers.
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ClassifierSnapshot:
    step: int
    loss: float
    accuracy: float
    grid_x: np.ndarray        # (res,) x-coordinates of the probability grid
    grid_y: np.ndarray        # (res,) y-coordinates
    probability: np.ndarray   # (res, res) P(class 1 | x) on the grid, [iy, ix]
    diverged_at: int | None


class MLPClassifierTrainer:
    """Full-batch logistic MLP on 2-D points x (n, 2) with labels y in {0, 1}.

    loss = mean BCE(sigmoid(f(x)), y), minimised with plain gradient descent
    w <- w - lr * grad(loss). Deterministic for a given seed on a given device.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, hidden: int = 16, lr: float = 0.5,
                 seed: int = 0, device: str | torch.device | None = None):
        self.device = resolve_device(device)
        self.seed, self.lr = int(seed), float(lr)
        self.x = torch.as_tensor(np.asarray(x), dtype=torch.float32, device=self.device)
        self.y = torch.as_tensor(np.asarray(y), dtype=torch.float32, device=self.device)
        g = make_generator(self.seed, "cpu")
        self.model = nn.Sequential(nn.Linear(2, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        with torch.no_grad():
            for p in self.model.parameters():
                p.copy_(torch.randn(p.shape, generator=g) * (1.0 / math.sqrt(p.shape[-1])))
        self.model.to(self.device)
        self.steps = 0
        self.diverged_at: int | None = None
        self.history = History()

    def loss(self) -> torch.Tensor:
        logits = self.model(self.x).squeeze(-1)
        return nn.functional.binary_cross_entropy_with_logits(logits, self.y)

    def step(self, n: int = 1) -> dict[str, float]:
        metrics: dict[str, float] = {}
        for _ in range(int(n)):
            if self.diverged_at is not None:
                break
            self.model.zero_grad(set_to_none=True)
            loss = self.loss()
            loss.backward()
            with torch.no_grad():
                for p in self.model.parameters():
                    p -= self.lr * p.grad
            self.steps += 1
            value = float(loss.detach())
            metrics = {"loss": value}
            if not math.isfinite(value):
                self.diverged_at = self.steps
                break
        if metrics:
            self.history.log(self.steps, metrics)
        return metrics

    @torch.no_grad()
    def accuracy(self) -> float:
        pred = (self.model(self.x).squeeze(-1) > 0).float()
        return float((pred == self.y).float().mean())

    @torch.no_grad()
    def snapshot(self, res: int = 40) -> ClassifierSnapshot:
        lo = to_numpy(self.x.min(0).values) - 0.5
        hi = to_numpy(self.x.max(0).values) + 0.5
        gx, gy = np.linspace(lo[0], hi[0], res), np.linspace(lo[1], hi[1], res)
        xx, yy = np.meshgrid(gx, gy)
        grid = torch.as_tensor(np.stack([xx.ravel(), yy.ravel()], 1), dtype=torch.float32,
                               device=self.device)
        prob = torch.sigmoid(self.model(grid)).reshape(res, res)
        return ClassifierSnapshot(self.steps, float(self.loss()), self.accuracy(),
                                  gx, gy, to_numpy(prob), self.diverged_at)

    def state_dict(self) -> dict:
        return {"model": {k: v.detach().cpu().clone() for k, v in self.model.state_dict().items()},
                "steps": self.steps, "diverged_at": self.diverged_at,
                "history": self.history.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        self.steps = int(state["steps"])
        self.diverged_at = state["diverged_at"]
        self.history = History.from_state_dict(state["history"])
