"""The flow page's live factory (a pure function of plain values: it may run in a worker
process, live/workers.py) and what the page reads off a FlowTrainer besides its snapshot, as
plain data (live.controls.read_trainer(key, fn) with fn module-level and picklable)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from engine.flows.data import flow_data
from engine.flows.trainer import FlowTrainer


def build_trainer(data: str, layers: int, hidden: int, lr: float, seed: int,
                  device: str | None, lim: float = 4.0) -> FlowTrainer:
    """A FlowTrainer on the data set `data` (flow_data(data, seed=seed)): `layers` coupling
    layers of `hidden` units, Adam at `lr`."""
    d = flow_data(data, seed=int(seed))
    return FlowTrainer(d.train, d.held_out, layers=int(layers), hidden=int(hidden),
                       lr=float(lr), seed=int(seed), device=device, lim=float(lim))


STAGE_POINTS = 400      # training points pushed through the layers (every one drawn)


@dataclass(frozen=True)
class Stages:
    steps: int
    points: np.ndarray      # (K + 1, STAGE_POINTS, 2): h_0 = x, h_1, ..., h_K = z
    keeps: tuple[int, ...]  # the coordinate each layer copies


@torch.no_grad()
def stages_of(trainer: FlowTrainer) -> Stages:
    """read_trainer fn: the first STAGE_POINTS training points after each coupling layer."""
    hs = trainer.model.stages(trainer.x[:STAGE_POINTS])
    return Stages(int(trainer.steps), np.stack([h.cpu().numpy() for h in hs]),
                  trainer.model.keeps)
