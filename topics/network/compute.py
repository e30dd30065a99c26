"""Constants and the cached pure computations of the network page: what the views draw and
what the claims measure, from the same engine calls (engine/network/)."""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import streamlit as st

from engine.network import (BOX, FEATURE_NAMES, MAX_LAYERS, MAX_UNITS, NetworkTrainer,
                            feature_matrix,
                            layer_outputs, make_dataset, neuron_maps, ordered, split,
                            weight_norm)
from engine.regions import parse_widths, partition
from ui.lesson_measures import lesson_measure

# ----------------------------------------------------------------------------- constants
DATASET_NAMES = {"circle": "Circle", "xor": "Exclusive or (XOR)", "gauss": "Two Gaussians",
                 "spiral": "Spiral"}
NOISES = tuple(round(0.05 * i, 2) for i in range(11))          # the playground's 0-50 %
SHARES = tuple(round(0.1 * i, 1) for i in range(1, 10))        # train share 10-90 %
LRS = (0.00001, 0.0001, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
REG_RATES = (0.0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
BATCHES = tuple(range(1, 31))
MAP_RES = 20             # each neuron's map: MAP_RES x MAP_RES points of the plane
OUT_RES = 48             # the output's map
REGION_UNITS = 32        # exact regions are counted up to this many ReLUs (cost per frame)
TRAIN_MAX = 10_000


def unit_labels(layers: int, units: int) -> list[str]:
    """"L1 n1", ... of every hidden neuron of `layers` layers of `units`."""
    return [f"L{li} n{j}" for li in range(1, layers + 1) for j in range(1, units + 1)]


KNOCK_OPTIONS = tuple(unit_labels(6, 8))


def knocked_pairs(labels) -> set[tuple[int, int]]:
    """{(layer index from 0, unit index from 0)} of labels like "L2 n3"."""
    out = set()
    for label in labels:
        layer, unit = label.split()
        out.add((int(layer[1:]) - 1, int(unit[1:]) - 1))
    return out


# ----------------------------------------------------------------------------- settings
def hidden_of(s: Mapping[str, Any]) -> tuple[tuple[int, ...], str | None]:
    """(the hidden widths, None) from the typed list ne_widths ("4, 2") where one is typed,
    else from the sliders (ne_layers layers of ne_units); a list that cannot be read gives the
    sliders' widths and the reason in words."""
    sliders = (int(s["ne_units"]),) * int(s["ne_layers"])
    text = str(s.get("ne_widths", "") or "").strip()
    if not text:
        return sliders, None
    if text == "0":
        return (), None
    try:
        return parse_widths(text, MAX_LAYERS, MAX_UNITS), None
    except ValueError as err:
        return sliders, str(err)


def trainer_config(s: Mapping[str, Any]) -> dict:
    """The trainer's arguments, plain values, from the settings s."""
    return {"dataset": str(s["ne_data"]), "noise": float(s["ne_noise"]),
            "train_share": float(s["ne_share"]), "features": ordered(s["ne_features"]),
            "hidden": hidden_of(s)[0],
            "activation": str(s["ne_act"]), "lr": float(s["ne_lr"]),
            "regularization": str(s["ne_reg"]),
            "reg_rate": float(s["ne_rate"]) if s["ne_reg"] != "none" else 0.0,
            "batch": int(s["ne_batch"])}


def build_trainer(config: dict, seed: int, device: str) -> NetworkTrainer:
    """The live trainer, from plain values only (it may be built in a worker process)."""
    return NetworkTrainer(**config, seed=seed, device=device)


def _key(config: dict) -> tuple:
    return tuple(sorted((k, tuple(v) if isinstance(v, (list, tuple)) else v)
                        for k, v in config.items()))


@st.cache_data(max_entries=8, show_spinner=False)
def dataset_of(kind: str, noise: float, share: float, seed: int = 0):
    """(x_train, y_train, x_test, y_test) of the settings, as the trainer splits them."""
    x, y = make_dataset(kind, 500, noise, seed)
    return split(x, y, share, seed)


# ----------------------------------------------------------------------------- trained runs
@st.cache_data(max_entries=64, show_spinner=False)
def _run(key: tuple, steps: int, seed: int) -> dict:
    config = {k: (list(v) if isinstance(v, tuple) else v) for k, v in key}
    trainer = build_trainer(config, seed, "cpu")
    trainer.step(steps)
    snap = trainer.snapshot()
    _, test = trainer.history.as_arrays("test")
    train_steps, train = trainer.history.as_arrays("train")
    h0 = feature_matrix(snap.x_train, snap.features)
    hidden = layer_outputs(snap.layers, snap.activation, h0)[:-1]
    silent = sum(int((np.abs(h) <= 0).all(0).sum()) for h in hidden)
    units = sum(h.shape[1] for h in hidden)
    return {"train_accuracy": snap.train_accuracy, "test_accuracy": snap.test_accuracy,
            "train_loss": snap.train_loss, "test_loss": snap.test_loss,
            "weight_norm": weight_norm(snap.layers), "diverged_at": trainer.diverged_at,
            "train_steps": train_steps, "train_curve": train, "test_curve": test,
            "dead_share": silent / units if units else 0.0}


def run_of(s: Mapping[str, Any], steps: int, seed: int = 0, **change: Any) -> dict:
    """A fresh trainer of the settings s (with `change` to its config) after `steps`
    iterations: its accuracies, losses, weight norm and curves."""
    return _run(_key({**trainer_config(s), **change}), int(steps), int(seed))


@lesson_measure(trains=True)
def test_accuracy_after(s: Mapping[str, Any], steps: int = 1000, seed: int = 0) -> float:
    """Test accuracy of a fresh network of the settings s after `steps` SGD steps."""
    return float(run_of(s, steps, seed)["test_accuracy"])


@lesson_measure(trains=True)
def train_loss_after(s: Mapping[str, Any], steps: int = 1000, seed: int = 0) -> float:
    """Training loss (mean binary cross-entropy on every training point) of a fresh network
    of the settings s after `steps` SGD steps."""
    return float(run_of(s, steps, seed)["train_loss"])


def steps_to_accuracy(s: Mapping[str, Any], target: float, steps: int, seed: int = 0,
                      every: int = 100, **change: Any) -> float:
    """The first multiple of `every` at which the test accuracy of a fresh network reaches
    `target`, within `steps` (inf: never)."""
    return _steps_to(_key({**trainer_config(s), **change}), float(target), int(steps),
                     int(seed), int(every))


@st.cache_data(max_entries=32, show_spinner=False)
def _steps_to(key: tuple, target: float, steps: int, seed: int, every: int) -> float:
    config = {k: (list(v) if isinstance(v, tuple) else v) for k, v in key}
    trainer = build_trainer(config, seed, "cpu")
    while trainer.steps < steps and trainer.diverged_at is None:
        trainer.step(every)
        if trainer.snapshot().test_accuracy >= target:
            return float(trainer.steps)
    return math.inf


def weight_norm_ratio(s: Mapping[str, Any], steps: int = 1000) -> float:
    """||W|| of the settings' network after `steps` over ||W|| of the same run without
    regularisation."""
    return (run_of(s, steps)["weight_norm"]
            / run_of(s, steps, regularization="none", reg_rate=0.0)["weight_norm"])


def noise_loss_ratio(s: Mapping[str, Any], steps: int = 1000) -> float:
    """Test loss at the settings' noise over the test loss without noise, both after
    `steps`."""
    return run_of(s, steps)["test_loss"] / run_of(s, steps, noise=0.0)["test_loss"]


def train_loss_fall(s: Mapping[str, Any], steps: int = 1000, early: int = 100) -> float:
    """Training loss at iteration `steps` over the training loss at iteration `early`."""
    run = run_of(s, steps)
    at = dict(zip(run["train_steps"].tolist(), run["train_curve"].tolist()))
    return float(at[steps] / at[early])


def diverged_at(s: Mapping[str, Any], steps: int = 100) -> float:
    """The iteration at which a fresh run of the settings diverged (inf: not within
    `steps`)."""
    at = run_of(s, steps)["diverged_at"]
    return math.inf if at is None else float(at)


def dead_share(s: Mapping[str, Any], steps: int = 300) -> float:
    """Share of hidden units whose output is 0 on every training point after `steps`."""
    return float(run_of(s, steps)["dead_share"])


# ----------------------------------------------------------------------------- a frame
def frame_maps(layers, activation: str, features, knocked: set, res: int = MAP_RES):
    """Every neuron's map (engine.network.neuron_maps) with the knocked-out units silenced."""
    keep = [np.ones(W.shape[0], np.float32) for W, _ in layers[:-1]]
    for li, j in knocked:
        if li < len(keep) and j < len(keep[li]):
            keep[li][j] = 0.0
    return neuron_maps(layers, activation, features, BOX, res, keep)


def region_count(layers, activation: str, features, knocked: set) -> int | None:
    """The exact number of linear regions of the network in the box (engine.regions'
    partition), where the network is piecewise linear in the plane: ReLU units on the inputs
    x1, x2 only. None otherwise, or over REGION_UNITS units (the cost of a frame)."""
    hidden = [W.shape[0] for W, _ in layers[:-1]]
    if (activation != "relu" or tuple(features) != ("x1", "x2") or not hidden
            or sum(hidden) > REGION_UNITS):
        return None
    exact = [(np.asarray(W, np.float64).copy(), np.asarray(b, np.float64).copy())
             for W, b in layers]
    if not all(np.isfinite(W).all() and np.isfinite(b).all() for W, b in exact):
        return None
    for li, j in knocked:               # a silenced unit never switches on: no line of its own
        if li < len(hidden) and j < hidden[li]:
            exact[li][0][j] = 0.0
            exact[li][1][j] = -1.0
    return int(partition(exact, BOX).count)


FEATURE_OPTIONS = FEATURE_NAMES
