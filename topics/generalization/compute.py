"""The generalization page's computations of the settings dict s (topics/generalization/page.py):
the training configurations of its tabs, the trained snapshots and double-descent curves, and the
measurements the claims read (each also shown on the page). Shared by the views and the claims."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import streamlit as st

from engine.generalization import double_descent as dd
from engine import generalization
from engine.generalization import reads, polyfit
from ui.lesson_measures import lesson_measure

# ----------------------------------------------------------------------------- constants
TOY_SETS = ["two_moons", "circles", "spiral"]
TOY_LABELS = {"two_moons": "Two moons", "circles": "Circles", "spiral": "Spiral"}
OPT_LABELS = {"adam": "Adam", "sgd": "SGD", "momentum": "SGD + momentum (β = 0.9)"}
LRS = [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3]
L2S = [0.0, 1e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 1.0]
WDS = [0.0, 0.01, 0.1, 0.3, 1.0, 3.0]
COEFS = [1e-3, 1e-2, 0.1, 1.0]
RIDGES = [1e-4, 1e-3, 1e-2, 1e-1]
NAMED_STEP = 1000         # the iteration the overfitting and L2-vs-AdamW texts name
RANDOM_STEP = 400         # ... and the random-labels text
GRID_RES = 60
CLAIM_SEED = 0            # claims: the page's default seed; tests also set it to 1 (read at call time)
LABEL_NOISE = 0.2         # the Overfitting tab's default label noise (STATE's gen_label_noise)


def _fmt(v: float) -> str:
    return "0" if v == 0 else f"{v:g}"


# ----------------------------------------------------------------------------- computation
# Pure functions of the settings dict s: the views draw them, the claims measure them.

def overfit_config(s: Mapping[str, Any]) -> generalization.TrainConfig:
    return generalization.TrainConfig(dataset=s["gen_data"], n_train=int(s["gen_n"]), n_val=500, noise=0.2,
                         label_noise=float(s["gen_label_noise"]), width=int(s["gen_width"]),
                         depth=int(s["gen_depth"]), dropout=float(s["gen_dropout"]),
                         optimizer=s["gen_opt"], lr=float(s["gen_lr"]), l2=float(s["gen_l2"]),
                         weight_decay=float(s["gen_wd"]), patience=int(s["gen_patience"]))


def random_configs(s: Mapping[str, Any]) -> dict[str, generalization.TrainConfig]:
    """The same network on the true and on shuffled digit labels."""
    base = generalization.TrainConfig(dataset="digits", n_train=int(s["gen_rl_n"]), n_val=359,
                         width=int(s["gen_rl_width"]), depth=2, lr=1e-3, log_every=25)
    return {"true labels": base,
            "random labels": generalization.TrainConfig(**{**base.__dict__, "random_labels": True})}


def decay_configs(s: Mapping[str, Any]) -> dict[str, generalization.TrainConfig]:
    """Adam with coefficient λ as coupled L2 and as decoupled weight decay, on the noisy
    data of the Overfitting tab with its default network."""
    base = generalization.TrainConfig(dataset="two_moons", n_train=100, noise=0.2,
                         label_noise=LABEL_NOISE, width=128, depth=2,
                         optimizer="adam", lr=3e-3)
    lam = float(s["gen_coef"])
    return {"Adam + L2": generalization.TrainConfig(**{**base.__dict__, "l2": lam}),
            "AdamW": generalization.TrainConfig(**{**base.__dict__, "weight_decay": lam})}


def overfit_setup(config: generalization.TrainConfig) -> str:
    """The Overfitting run's data and network, as its figure names them."""
    return (f"{config.n_train} points, {config.label_noise:.0%} flipped, "
            f"{config.depth}×{config.width} ReLU")


def random_setup(s: Mapping[str, Any]) -> str:
    """The Random labels runs' network and training set, as their figure names them."""
    config = random_configs(s)["true labels"]
    return f"{config.depth}×{config.width} ReLU net, {config.n_train} training digits"


def decay_setup(s: Mapping[str, Any]) -> str:
    """The L2 vs AdamW runs' learning rate and AdamW's shrink per step, as their figure
    names them."""
    config = decay_configs(s)["AdamW"]
    return (f"Adam η = {config.lr:g}; AdamW shrinks θ by ηλ = "
            f"{config.lr * config.weight_decay:.2g} per step")


@st.cache_data(max_entries=64, show_spinner="Training…")
def trained(config: generalization.TrainConfig, seed: int, steps: int) -> generalization.GeneralizationSnapshot:
    """The snapshot after `steps` iterations (what the claims measure)."""
    tr = generalization.GeneralizationTrainer(config, seed=seed, device="cpu")
    tr.step(steps)
    return tr.snapshot()


@lesson_measure(trains=True)
def gap_at(s, step: int = NAMED_STEP, seed: int | None = None) -> float:
    """train accuracy − validation accuracy at `step` (Overfitting tab settings)."""
    seed = CLAIM_SEED if seed is None else seed
    snap = trained(overfit_config(s), seed, step)
    return reads.at(snap, "train_acc", step) - reads.at(snap, "val_acc", step)


@lesson_measure(trains=True)
def overfit_measure(s, name: str, step: int = NAMED_STEP, seed: int | None = None) -> float:
    seed = CLAIM_SEED if seed is None else seed
    return reads.at(trained(overfit_config(s), seed, step), name, step)


@lesson_measure(trains=True)
def val_loss_growth(s, seed: int | None = None) -> float:
    """validation loss at NAMED_STEP / its minimum over the run."""
    seed = CLAIM_SEED if seed is None else seed
    snap = trained(overfit_config(s), seed, NAMED_STEP)
    return reads.at(snap, "val_loss", NAMED_STEP) / float(snap.val_loss.min())


@lesson_measure(trains=True)
def best_step(s, seed: int | None = None) -> float:
    seed = CLAIM_SEED if seed is None else seed
    return float(trained(overfit_config(s), seed, NAMED_STEP).best_step)


@lesson_measure(trains=True)
def random_measure(s, run: str, name: str, seed: int | None = None) -> float:
    seed = CLAIM_SEED if seed is None else seed
    return reads.at(trained(random_configs(s)[run], seed, RANDOM_STEP), name, RANDOM_STEP)


@lesson_measure(trains=True)
def memorization_slowdown(s, seed: int | None = None) -> float:
    """steps to 95% training accuracy: random labels / true labels."""
    seed = CLAIM_SEED if seed is None else seed
    snaps = {k: trained(c, seed, RANDOM_STEP) for k, c in random_configs(s).items()}
    return reads.steps_to_train_acc(snaps["random labels"]) / reads.steps_to_train_acc(snaps["true labels"])


@lesson_measure(trains=True)
def decay_measure(s, run: str, name: str, seed: int | None = None) -> float:
    seed = CLAIM_SEED if seed is None else seed
    return reads.at(trained(decay_configs(s)[run], seed, NAMED_STEP), name, NAMED_STEP)


@lesson_measure(trains=True)
def norm_ratio(s, seed: int | None = None) -> float:
    """‖θ‖ of AdamW / ‖θ‖ of Adam + L2 at NAMED_STEP, same λ."""
    seed = CLAIM_SEED if seed is None else seed
    return decay_measure(s, "AdamW", "weight_norm", seed) / decay_measure(s, "Adam + L2", "weight_norm", seed)


@lesson_measure(trains=True)
def norm_vs_unregularized(s, seed: int | None = None) -> float:
    """AdamW's ‖θ‖ / the unregularized run's ‖θ‖ at NAMED_STEP."""
    seed = CLAIM_SEED if seed is None else seed
    cfg = decay_configs(s)["AdamW"]
    plain = generalization.TrainConfig(**{**cfg.__dict__, "weight_decay": 0.0})
    return (decay_measure(s, "AdamW", "weight_norm", seed)
            / reads.at(trained(plain, seed, NAMED_STEP), "weight_norm", NAMED_STEP))


@st.cache_data(max_entries=32, show_spinner=False)
def curve_of(n: int, noise: float, ridge: float, seed: int) -> dd.DoubleDescentCurve:
    return dd.random_features_curve(int(n), noise=float(noise), ridge=float(ridge), seed=int(seed))


def curves_of(s, seed: int | None = None) -> dict[str, dd.DoubleDescentCurve]:
    """The min-norm curve and the curve with the chosen ridge."""
    seed = CLAIM_SEED if seed is None else seed
    n, noise = int(s["gen_dd_n"]), float(s["gen_dd_noise"])
    return {"min-norm (ridge 0)": curve_of(n, noise, 0.0, seed),
            f"ridge {_fmt(s['gen_dd_ridge'])}": curve_of(n, noise, float(s["gen_dd_ridge"]), seed)}


@lesson_measure(trains=True)
def peak_offset(s, seed: int | None = None) -> float:
    """|argmax_p test error − n| / n of the min-norm curve."""
    seed = CLAIM_SEED if seed is None else seed
    c = curves_of(s, seed)["min-norm (ridge 0)"]
    return abs(dd.peak_width(c) - c.n_train) / c.n_train


@lesson_measure(trains=True)
def peak_ratio(s, which: str, seed: int | None = None) -> float:
    seed = CLAIM_SEED if seed is None else seed
    curves = list(curves_of(s, seed).values())
    return dd.peak_ratio(curves[0 if which == "plain" else 1])


# ---- the Polynomial fit tab: closed-form least squares on the 1-D toy set (no training)
POLY_MAX_DEGREE = 15


def poly_data_of(s: Mapping[str, Any]) -> polyfit.ToyRegression:
    return polyfit.toy_regression(int(s["gen_pf_n"]), float(s["gen_pf_noise"]),
                                  int(s["gen_pf_seed"]))


def poly_coef_of(s: Mapping[str, Any], degree: int | None = None):
    data = poly_data_of(s)
    return polyfit.fit(data.x_train, data.y_train,
                       int(s["gen_pf_degree"]) if degree is None else int(degree))


def poly_sweep_of(s: Mapping[str, Any]) -> polyfit.DegreeSweep:
    return polyfit.degree_sweep(poly_data_of(s), POLY_MAX_DEGREE)


@lesson_measure
def poly_mse(s, split: str = "train", degree: int | None = None) -> float:
    """Mean squared error of the fit (of the slide's degree, or `degree`) on the training or
    the validation points."""
    sweep = poly_sweep_of(s)
    d = int(s["gen_pf_degree"]) if degree is None else int(degree)
    return float((sweep.train_mse if split == "train" else sweep.val_mse)[d])


@lesson_measure
def poly_best_degree(s) -> float:
    """The degree with the lowest validation error."""
    sweep = poly_sweep_of(s)
    return float(sweep.degrees[int(np.argmin(sweep.val_mse))])


@lesson_measure
def poly_max_gap(s) -> float:
    """max |fit − sin(2πx)| over [0, 1] (1,001 points): how far the fit strays from the truth."""
    x = np.linspace(0.0, 1.0, 1001)
    return float(np.abs(polyfit.predict(poly_coef_of(s), x) - polyfit.true_function(x)).max())
