"""Constants and the cached pure computations of the A network you build page: what the views draw and
what the claims measure, from the same engine calls."""
from __future__ import annotations

from typing import Any, Mapping

import streamlit as st

from engine.network import NetworkTrainer
from ui.lesson_measures import lesson_measure

# ----------------------------------------------------------------------------- constants
NOISES = (0.05, 0.1, 0.2, 0.3, 0.5)
HIDDEN = (2, 4, 8, 16, 32)
LRS = (0.001, 0.003, 0.01, 0.03, 0.1)


# ----------------------------------------------------------------------------- computations
def build_trainer(n: int, noise: float, hidden: int, lr: float, seed: int,
                  device: str) -> NetworkTrainer:
    """The live trainer, from plain values only (it may be built in a worker process)."""
    return NetworkTrainer(n=n, noise=noise, hidden=hidden, lr=lr, seed=seed, device=device)


def trainer_args(s: Mapping[str, Any]) -> tuple[int, float, int, float]:
    """(n, noise, hidden, lr) of the settings s."""
    return (int(s["ne_n"]), float(s["ne_noise"]), int(s["ne_hidden"]),
            float(s["ne_lr"]))


@st.cache_data(max_entries=32, show_spinner=False)
def _accuracy_after(n: int, noise: float, hidden: int, lr: float, steps: int,
                    seed: int) -> float:
    trainer = build_trainer(n, noise, hidden, lr, seed, "cpu")
    trainer.step(steps)
    return trainer.snapshot().accuracy


@lesson_measure
def accuracy_after(s: Mapping[str, Any], steps: int = 300, seed: int = 0) -> float:
    """Training accuracy of a fresh trainer on the settings s after `steps` iterations."""
    return _accuracy_after(*trainer_args(s), int(steps), int(seed))
