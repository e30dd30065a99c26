"""What the diffusion page reads from a DiffusionTrainer besides its snapshot, as plain data.

The Reverse tab samples with "the network from the Train tab". The trainer may live in
another process (engine/handle.py's TrainerView), so the page asks for its network as plain
data with `viz.live.read_trainer(key, net_of)` and rebuilds it here (`model_of`): the
EpsMLP's config and weights as numpy arrays and the schedule's β_t, which give back the same
ε_θ(x, t, c) exactly (float32 weights copied bit for bit).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from engine.diffusion import EpsMLP, Schedule


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
