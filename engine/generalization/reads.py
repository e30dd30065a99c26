"""What the generalization page reads from its live trainers and measures in its claims: plain
data (numpy, small dataclasses), no torch objects. The `*_of(trainer, ...)` readers run next to
the trainer (live.controls.read_trainer: possibly in a worker process), so they are module-level
functions, picklable with their arguments bound by functools.partial.

    at(snap, name, k)        = the value of `name` logged at the last evaluation <= k
    steps_to_train_acc(snap) = first logged iteration with train accuracy >= acc (inf: never)
    boundary_box(data)       = the points' bounding box, widened by 0.3 on every side
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine import generalization

BEST = "best-validation model"


@dataclass(frozen=True)
class Boundary:
    """What the Overfitting figure needs beyond the snapshot: the model's probabilities on a
    grid over the points, and the points (training labels, flipped ones, validation)."""
    grid: generalization.DecisionGrid
    data: generalization.SplitData


def boundary_box(data: generalization.SplitData, margin: float = 0.3) -> tuple[float, float, float, float]:
    pts = np.concatenate([data.x_train, data.x_val])
    lo, hi = pts.min(0) - margin, pts.max(0) + margin
    return float(lo[0]), float(hi[0]), float(lo[1]), float(hi[1])


def boundary_of(trainer: generalization.GeneralizationTrainer, which: str = "current model",
                res: int = 60) -> Boundary:
    """The decision grid of the current model (or, with which == BEST, of the weights of the
    lowest validation loss) over boundary_box of the trainer's data."""
    model = trainer.best_model() if which == BEST else trainer.model
    return Boundary(generalization.decision_grid(model, boundary_box(trainer.data), res), trainer.data)


def train_to(trainer, target: int) -> None:
    """Advance a (pair of) trainer(s) to `target` iterations; nothing once there or diverged."""
    if trainer.steps < target and trainer.diverged_at is None:
        trainer.step(target - trainer.steps)


def latest(snap: generalization.GeneralizationSnapshot) -> dict[str, float]:
    """The last logged evaluation of a snapshot (NaN before the first)."""
    names = ("train_loss", "val_loss", "train_acc", "val_acc", "weight_norm")
    return {k: float(getattr(snap, k)[-1]) if len(getattr(snap, k)) else float("nan")
            for k in names}


def at(snap: generalization.GeneralizationSnapshot, name: str, step: int) -> float:
    """Logged value of `name` at the last evaluation <= step."""
    i = int(np.searchsorted(snap.steps, step, side="right")) - 1
    return float(getattr(snap, name)[max(i, 0)])


def steps_to_train_acc(snap: generalization.GeneralizationSnapshot, acc: float = 0.95) -> float:
    hit = np.flatnonzero(snap.train_acc >= acc)
    return float(snap.steps[hit[0]]) if hit.size else float("inf")
