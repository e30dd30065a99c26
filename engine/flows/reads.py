"""The flow page's live factory: a pure function of plain values (it may run in a worker
process, live/workers.py)."""
from __future__ import annotations

from engine.flows.data import flow_data
from engine.flows.trainer import FlowTrainer


def build_trainer(data: str, layers: int, hidden: int, lr: float, seed: int,
                  device: str | None, lim: float = 4.0) -> FlowTrainer:
    """A FlowTrainer on the data set `data` (flow_data(data, seed=seed)): `layers` coupling
    layers of `hidden` units, Adam at `lr`."""
    d = flow_data(data, seed=int(seed))
    return FlowTrainer(d.train, d.held_out, layers=int(layers), hidden=int(hidden),
                       lr=float(lr), seed=int(seed), device=device, lim=float(lim))
