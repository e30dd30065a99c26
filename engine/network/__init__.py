"""A network you build: the page's maths, free of any UI (engine/ never imports Streamlit or Plotly).

    trainer.py   NetworkTrainer, the live trainer (engine.training.TrainerBase)

The example fits a small MLP to two moons: replace it with the page's own model, keeping each
function's formula in its docstring with the code's symbol names."""
from __future__ import annotations

from engine.network.trainer import NetworkTrainer, Snapshot, make_points

__all__ = ["NetworkTrainer", "Snapshot", "make_points"]
