"""What the diffusion page reads from a DiffusionTrainer besides its snapshot, as plain data.

The Reverse tab samples with "the network from the Train tab". The trainer may live in
another process (live/handle.py's TrainerView), so the page asks for its network as plain
data with `live.controls.read_trainer(key, net_of)` and rebuilds it here (`model_of`): the
EpsMLP's config and weights as numpy arrays and the schedule's β_t, which give back the same
ε_θ(x, t, c) exactly (float32 weights copied bit for bit).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from engine.diffusion import SCHEDULES, DiffusionTrainer, EpsMLP, Schedule


@dataclass(frozen=True)
class TrainedNet:
    steps: int
    data_id: Any                              # what the page tagged the trainer's data with
    config: dict                              # EpsMLP(**config)
    weights: dict[str, np.ndarray] = field(repr=False)
    schedule: str = "linear"
    betas: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)


def net_of(trainer) -> TrainedNet:
    """read_trainer fn: the trainer's network and schedule as numpy arrays."""
    return TrainedNet(int(trainer.steps), getattr(trainer, "data_id", None),
                      dict(trainer.model.config()),
                      {k: v.detach().cpu().numpy().copy()
                       for k, v in trainer.model.state_dict().items()},
                      trainer.schedule.name, trainer.schedule.betas.cpu().numpy().copy())


def model_of(net: TrainedNet) -> tuple[EpsMLP, Schedule]:
    """(network in eval mode on the CPU, schedule) rebuilt from a TrainedNet."""
    model = EpsMLP(**net.config)
    model.load_state_dict({k: torch.as_tensor(v) for k, v in net.weights.items()})
    model.eval()
    return model, Schedule.from_betas(net.schedule, torch.as_tensor(net.betas))


def build_trainer(points: np.ndarray, labels: np.ndarray | None, schedule: str, hidden: int,
                  lr: float, seed: int, device: str | None, data_id: Any = None
                  ) -> DiffusionTrainer:
    """A DiffusionTrainer on `points` (labels: their classes) with SCHEDULES[schedule](),
    tagged with `data_id` (the Reverse tab samples with it only on the same data). Plain
    values in, nothing read from a Streamlit session: the page binds it with
    functools.partial, and with DLPLAY_TRAINERS=process it is pickled and run in a worker
    process (live/workers.py)."""
    trainer = DiffusionTrainer(points, labels, SCHEDULES[schedule](), hidden=int(hidden),
                               lr=float(lr), seed=int(seed), device=device)
    trainer.data_id = data_id
    return trainer
