"""Generalization & regularization: train and validation curves split on a noisy toy set,
dropout / L2 / weight decay / early stopping close the gap, a network memorizes random digit
labels, coupled L2 is not weight decay under Adam, and double descent of random features.
Settings -> engine/generalization.py, engine/double_descent.py (what the page reads from its
live trainers: engine/generalization_measures.py) -> viz/generalization_figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): constants and STATE, the pure computations that
both the views and the claims use, PRESETS and STEPS with their claims, one function per
view, and the footer."""
from __future__ import annotations

import functools
from typing import Any, Mapping

import pandas as pd
import streamlit as st

from engine import double_descent as dd
from engine import generalization as G
from engine import generalization_measures as M
from viz import generalization_figures as figs
from viz import session
from viz.claims import Claim
from viz.live import live_training, read_trainer
from viz.page import View, topic_page, user_errors
from viz.render import explain, show_figure
from viz.state import Control, StateTable
from viz.widgets import Preset, Step, export_buttons

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


def _fmt(v: float) -> str:
    return "0" if v == 0 else f"{v:g}"


STATE = StateTable([
    # Overfitting
    Control("gen_data", "two_moons", "Data set", kind="selectbox", options=TOY_SETS,
            format_func=TOY_LABELS.get),
    Control("gen_n", 100, "Training points", lo=20, hi=400, step=10),
    Control("gen_label_noise", 0.2, "Label noise (fraction flipped)", lo=0.0, hi=0.4, step=0.05,
            help="This fraction of all points (training and validation alike) gets the other "
                 "class: the best possible validation accuracy is about 1 − this fraction."),
    Control("gen_dropout", 0.0, "Dropout p", lo=0.0, hi=0.8, step=0.1,
            help="Inverted dropout after each hidden ReLU: a unit is zeroed with probability p "
                 "and the rest are scaled by 1/(1 − p). Off when the curves are evaluated."),
    Control("gen_l2", 0.0, "L2 penalty λ (added to the loss)", kind="select_slider", options=L2S,
            format_func=_fmt, help="objective = CE + (λ/2)‖θ‖²: its gradient adds λθ."),
    Control("gen_wd", 0.0, "Decoupled weight decay", kind="select_slider", options=WDS,
            format_func=_fmt, help="θ ← θ(1 − η·wd) before each update (AdamW's decay)."),
    Control("gen_patience", 10, "Early-stopping patience (evaluations of 10 steps)", lo=1, hi=50,
            step=1),
    Control("gen_width", 128, "Hidden width", kind="select_slider", options=[8, 16, 32, 64, 128, 256]),
    Control("gen_depth", 2, "Hidden layers", lo=1, hi=4, step=1),
    Control("gen_opt", "adam", "Optimizer", kind="selectbox", options=list(G.OPTIMIZERS),
            format_func=OPT_LABELS.get),
    Control("gen_lr", 3e-3, "Learning rate η", kind="select_slider", options=LRS, format_func=_fmt),
    Control("gen_boundary", "current model", "Boundary of", kind="segmented",
            options=["current model", "best-validation model"], url=False),
    # Random labels
    Control("gen_rl_n", 500, "Training digits", lo=100, hi=1400, step=100),
    Control("gen_rl_width", 128, "Hidden width (digits)", kind="select_slider",
            options=[32, 64, 128, 256, 512]),
    # L2 vs AdamW
    Control("gen_coef", 0.01, "Coefficient λ (both runs)", kind="select_slider", options=COEFS,
            format_func=_fmt),
    # Double descent
    Control("gen_dd_n", 100, "Training points n", lo=20, hi=200, step=10),
    Control("gen_dd_noise", 0.5, "Label noise std", lo=0.0, hi=1.0, step=0.05),
    Control("gen_dd_ridge", 1e-2, "Ridge of the second curve", kind="select_slider", options=RIDGES,
            format_func=_fmt),
])


# ----------------------------------------------------------------------------- computation
# Pure functions of the settings dict s: the views draw them, the claims measure them.

def overfit_config(s: Mapping[str, Any]) -> G.TrainConfig:
    return G.TrainConfig(dataset=s["gen_data"], n_train=int(s["gen_n"]), n_val=500, noise=0.2,
                         label_noise=float(s["gen_label_noise"]), width=int(s["gen_width"]),
                         depth=int(s["gen_depth"]), dropout=float(s["gen_dropout"]),
                         optimizer=s["gen_opt"], lr=float(s["gen_lr"]), l2=float(s["gen_l2"]),
                         weight_decay=float(s["gen_wd"]), patience=int(s["gen_patience"]))


def random_configs(s: Mapping[str, Any]) -> dict[str, G.TrainConfig]:
    """The same network on the true and on shuffled digit labels."""
    base = G.TrainConfig(dataset="digits", n_train=int(s["gen_rl_n"]), n_val=359,
                         width=int(s["gen_rl_width"]), depth=2, lr=1e-3, log_every=25)
    return {"true labels": base,
            "random labels": G.TrainConfig(**{**base.__dict__, "random_labels": True})}


def decay_configs(s: Mapping[str, Any]) -> dict[str, G.TrainConfig]:
    """Adam with coefficient λ as coupled L2 and as decoupled weight decay, on the noisy
    data of the Overfitting tab with its default network."""
    base = G.TrainConfig(dataset="two_moons", n_train=100, noise=0.2,
                         label_noise=float(STATE["gen_label_noise"].default), width=128, depth=2,
                         optimizer="adam", lr=3e-3)
    lam = float(s["gen_coef"])
    return {"Adam + L2": G.TrainConfig(**{**base.__dict__, "l2": lam}),
            "AdamW": G.TrainConfig(**{**base.__dict__, "weight_decay": lam})}


@st.cache_data(max_entries=64, show_spinner="Training…")
def trained(config: G.TrainConfig, seed: int, steps: int) -> G.GeneralizationSnapshot:
    """The snapshot after `steps` iterations (what the claims measure)."""
    tr = G.GeneralizationTrainer(config, seed=seed, device="cpu")
    tr.step(steps)
    return tr.snapshot()


def gap_at(s, step: int = NAMED_STEP, seed: int | None = None) -> float:
    """train accuracy − validation accuracy at `step` (Overfitting tab settings)."""
    seed = CLAIM_SEED if seed is None else seed
    snap = trained(overfit_config(s), seed, step)
    return M.at(snap, "train_acc", step) - M.at(snap, "val_acc", step)


def overfit_measure(s, name: str, step: int = NAMED_STEP, seed: int | None = None) -> float:
    seed = CLAIM_SEED if seed is None else seed
    return M.at(trained(overfit_config(s), seed, step), name, step)


def val_loss_growth(s, seed: int | None = None) -> float:
    """validation loss at NAMED_STEP / its minimum over the run."""
    seed = CLAIM_SEED if seed is None else seed
    snap = trained(overfit_config(s), seed, NAMED_STEP)
    return M.at(snap, "val_loss", NAMED_STEP) / float(snap.val_loss.min())


def best_step(s, seed: int | None = None) -> float:
    seed = CLAIM_SEED if seed is None else seed
    return float(trained(overfit_config(s), seed, NAMED_STEP).best_step)


def random_measure(s, run: str, name: str, seed: int | None = None) -> float:
    seed = CLAIM_SEED if seed is None else seed
    return M.at(trained(random_configs(s)[run], seed, RANDOM_STEP), name, RANDOM_STEP)


def memorization_slowdown(s, seed: int | None = None) -> float:
    """steps to 95% training accuracy: random labels / true labels."""
    seed = CLAIM_SEED if seed is None else seed
    snaps = {k: trained(c, seed, RANDOM_STEP) for k, c in random_configs(s).items()}
    return M.steps_to_train_acc(snaps["random labels"]) / M.steps_to_train_acc(snaps["true labels"])


def decay_measure(s, run: str, name: str, seed: int | None = None) -> float:
    seed = CLAIM_SEED if seed is None else seed
    return M.at(trained(decay_configs(s)[run], seed, NAMED_STEP), name, NAMED_STEP)


def norm_ratio(s, seed: int | None = None) -> float:
    """‖θ‖ of AdamW / ‖θ‖ of Adam + L2 at NAMED_STEP, same λ."""
    seed = CLAIM_SEED if seed is None else seed
    return decay_measure(s, "AdamW", "weight_norm", seed) / decay_measure(s, "Adam + L2", "weight_norm", seed)


def norm_vs_unregularized(s, seed: int | None = None) -> float:
    """AdamW's ‖θ‖ / the unregularized run's ‖θ‖ at NAMED_STEP."""
    seed = CLAIM_SEED if seed is None else seed
    cfg = decay_configs(s)["AdamW"]
    plain = G.TrainConfig(**{**cfg.__dict__, "weight_decay": 0.0})
    return (decay_measure(s, "AdamW", "weight_norm", seed)
            / M.at(trained(plain, seed, NAMED_STEP), "weight_norm", NAMED_STEP))


@st.cache_data(max_entries=32, show_spinner=False)
def curve_of(n: int, noise: float, ridge: float, seed: int) -> dd.DoubleDescentCurve:
    return dd.random_features_curve(int(n), noise=float(noise), ridge=float(ridge), seed=int(seed))


def curves_of(s, seed: int | None = None) -> dict[str, dd.DoubleDescentCurve]:
    """The min-norm curve and the curve with the chosen ridge."""
    seed = CLAIM_SEED if seed is None else seed
    n, noise = int(s["gen_dd_n"]), float(s["gen_dd_noise"])
    return {"min-norm (ridge 0)": curve_of(n, noise, 0.0, seed),
            f"ridge {_fmt(s['gen_dd_ridge'])}": curve_of(n, noise, float(s["gen_dd_ridge"]), seed)}


def peak_offset(s, seed: int | None = None) -> float:
    """|argmax_p test error − n| / n of the min-norm curve."""
    seed = CLAIM_SEED if seed is None else seed
    c = curves_of(s, seed)["min-norm (ridge 0)"]
    return abs(dd.peak_width(c) - c.n_train) / c.n_train


def peak_ratio(s, which: str, seed: int | None = None) -> float:
    seed = CLAIM_SEED if seed is None else seed
    curves = list(curves_of(s, seed).values())
    return dd.peak_ratio(curves[0 if which == "plain" else 1])


# ----------------------------------------------------------------------------- presets
NO_REG = {"gen_data": "two_moons", "gen_n": 100, "gen_label_noise": 0.2, "gen_dropout": 0.0,
          "gen_l2": 0.0, "gen_wd": 0.0, "gen_width": 128, "gen_depth": 2, "gen_opt": "adam",
          "gen_lr": 3e-3, "gen_patience": 10}
DROPOUT = {**NO_REG, "gen_dropout": 0.5}
L2 = {**NO_REG, "gen_l2": 1e-2}
RANDOM = {"gen_rl_n": 500, "gen_rl_width": 128}
SAME_COEF = {"gen_coef": 0.01}
BIG_COEF = {"gen_coef": 1.0}
DOUBLE = {"gen_dd_n": 100, "gen_dd_noise": 0.5, "gen_dd_ridge": 1e-2}

C_NO_REG = (Claim("train acc − val acc at iteration 1,000", gap_at, lo=0.15, slow=True),)
C_EARLY = (Claim("iteration of the lowest validation loss", best_step, hi=100, slow=True),
           Claim("validation loss at 1,000 / its minimum", val_loss_growth, lo=3.0, slow=True))
C_DROPOUT = (Claim("train acc − val acc at iteration 1,000, dropout 0.5", gap_at, hi=0.1, slow=True),
             Claim("gap with dropout / gap without", lambda s: gap_at(s) / gap_at({**s, "gen_dropout": 0.0}),
                   hi=0.5, slow=True))
C_L2 = (Claim("train acc − val acc at iteration 1,000, L2 λ = 0.01", gap_at, hi=0.08, slow=True),
        Claim("‖θ‖ at iteration 1,000, L2 λ = 0.01", lambda s: overfit_measure(s, "weight_norm"),
              hi=8.0, slow=True))
C_RANDOM = (Claim("random labels: train accuracy at iteration 400",
                  lambda s: random_measure(s, "random labels", "train_acc"), lo=0.95, slow=True),
            Claim("random labels: validation accuracy at iteration 400 (10 classes)",
                  lambda s: random_measure(s, "random labels", "val_acc"), hi=0.15, slow=True),
            Claim("true labels: validation accuracy at iteration 400",
                  lambda s: random_measure(s, "true labels", "val_acc"), lo=0.85, slow=True),
            Claim("steps to 95% train accuracy: random / true labels", memorization_slowdown,
                  lo=2.0, slow=True))
C_SAME_COEF = (Claim("‖θ‖ AdamW / ‖θ‖ Adam + L2 at iteration 1,000, λ = 0.01", norm_ratio, lo=5.0,
                     slow=True),
               Claim("val acc Adam + L2 − val acc AdamW at iteration 1,000",
                     lambda s: decay_measure(s, "Adam + L2", "val_acc")
                     - decay_measure(s, "AdamW", "val_acc"), lo=0.05, slow=True))
C_BIG_COEF = (Claim("Adam + L2, λ = 1: validation accuracy at 1,000 (chance 0.5)",
                    lambda s: decay_measure(s, "Adam + L2", "val_acc"), hi=0.6, slow=True),
              Claim("Adam + L2, λ = 1: ‖θ‖ at 1,000",
                    lambda s: decay_measure(s, "Adam + L2", "weight_norm"), hi=2.5, slow=True),
              Claim("AdamW, λ = 1: validation accuracy at 1,000",
                    lambda s: decay_measure(s, "AdamW", "val_acc"), lo=0.65, slow=True),
              Claim("AdamW, λ = 1: ‖θ‖ / unregularized ‖θ‖ at 1,000", norm_vs_unregularized,
                    hi=0.7, slow=True))
C_PEAK = (Claim("|argmax_p test error − n| / n, ridge 0", peak_offset, hi=0.1),
          Claim("test error at p = n / best error with p ≤ n/2, ridge 0",
                lambda s: peak_ratio(s, "plain"), lo=10.0))
C_RIDGE = (Claim("test error at p = n / best error with p ≤ n/2, ridge 0.01",
                 lambda s: peak_ratio(s, "ridge"), hi=1.0),)

PRESETS = {
    "No regularization overfits the noisy moons": Preset(
        NO_REG, "100 training points, 20% of labels flipped, a 2×128 ReLU net with Adam. Press "
                "**Play** (or *Train to 1,000*): training accuracy climbs to 0.95–1.0 while "
                "validation accuracy falls back to about 0.7; at iteration 1,000 the gap is at "
                "least 0.15 (measured 0.25). The boundary bends around the ringed, flipped "
                "points.", "overfit", C_NO_REG),
    "Dropout 0.5 narrows the gap": Preset(
        DROPOUT, "The same run with dropout p = 0.5: at iteration 1,000 train and validation "
                 "accuracy differ by at most 0.1 (measured 0.07), under half the gap without "
                 "dropout, and the boundary stays smooth.", "overfit", C_DROPOUT),
    "L2 λ = 0.01 closes the gap": Preset(
        L2, "Adding (λ/2)‖θ‖² with λ = 0.01 keeps ‖θ‖ below 8 (measured 4.5, against ~50 "
            "without): train and validation accuracy end within 0.08 (measured 0.05).",
        "overfit", C_L2),
    "Random labels are memorized": Preset(
        RANDOM, "The same 64-128-128-10 network on 500 digits with their true labels and with "
                "random labels. By iteration 400 it fits the random labels too (training "
                "accuracy ≥ 0.95), at least twice as slowly as the true ones (measured 4×), while its validation "
                "accuracy stays at chance (≤ 0.15 on 10 classes). With true labels validation "
                "reaches ≥ 0.85.", "random", C_RANDOM),
    "Same λ: Adam + L2 shrinks the weights far more than AdamW": Preset(
        SAME_COEF, "λ = 0.01 as coupled L2 and as AdamW's decay, both with Adam (η = 0.003). At "
                   "iteration 1,000 AdamW's ‖θ‖ is over 5× larger (measured ~11×): its decay "
                   "shrinks θ by only ηλ = 3·10⁻⁵ per step, while Adam + L2 converges to the "
                   "minimum of loss + (λ/2)‖θ‖². Adam + L2 also validates at least 0.05 better "
                   "here. The same number is a different regularizer.", "decay", C_SAME_COEF),
    "λ = 1: Adam + L2 collapses, AdamW still learns": Preset(
        BIG_COEF, "At λ = 1 the coupled penalty wins: Adam + L2 drives ‖θ‖ below 2.5 and "
                  "predicts one class (validation accuracy ≤ 0.6, chance 0.5). AdamW's decay "
                  "(ηλ = 0.003 per step) keeps ‖θ‖ under 0.7× the unregularized norm and "
                  "validates at ≥ 0.65.", "decay", C_BIG_COEF),
    "Double descent peaks at p = n": Preset(
        DOUBLE, "Min-norm least squares on p random ReLU features of n = 100 points: the test "
                "error peaks within 10% of p = n (over 10× the best error with p ≤ 50) and "
                "falls again as p grows.", "double", C_PEAK),
    "Ridge 0.01 removes the peak": Preset(
        DOUBLE, "With ridge 0.01 (orange) the error at p = n is no higher than the best error "
                "with p ≤ n/2: the peak is gone.", "double", C_RIDGE),
}

STEPS = [
    Step("Train and validation curves split",
         "With few, noisy points a large network fits the training labels, flipped ones "
         "included: training accuracy goes to ~1 while validation accuracy drops back to ~0.7 "
         "(gap ≥ 0.15 at iteration 1,000). Press **Play**.", NO_REG, "overfit", C_NO_REG),
    Step("Early stopping",
         "The validation loss is lowest within the first 100 iterations and is over 3× higher "
         "by iteration 1,000 (the model grows confident on the flipped points). Early stopping "
         "keeps the weights of the best validation loss (green line; grey: where patience "
         "runs out). Switch *Boundary of* to compare.", NO_REG, "overfit", C_EARLY),
    Step("Dropout",
         "Each step trains a random thinned network (p = 0.5); no unit can rely on another. At "
         "iteration 1,000 the gap is at most 0.1, under half of the unregularized one.",
         DROPOUT, "overfit", C_DROPOUT),
    Step("Networks memorize random labels",
         "Zhang et al. (2017): the same network fits 500 digits with random labels (training "
         "accuracy ≥ 0.95 by iteration 400, at least twice as slowly as the true labels) while "
         "validation stays at chance. Capacity alone does not explain generalization.",
         RANDOM, "random", C_RANDOM),
    Step("L2 is not weight decay under Adam",
         "Coupled L2 adds λθ to the gradient, which Adam then divides by √v̂; decoupled decay "
         "(AdamW) shrinks θ by ηλ outside Adam. At the same λ = 0.01, Adam + L2 ends with a "
         "weight norm over 5× smaller: the coefficients are not interchangeable (Loshchilov & "
         "Hutter tune them separately).", SAME_COEF, "decay", C_SAME_COEF),
    Step("Double descent",
         "More features than points can generalize well: the min-norm fit's test error peaks "
         "at the interpolation threshold p = n, where the smallest singular value of the "
         "feature matrix goes to 0, and descends again beyond it. A ridge of 0.01 removes the "
         "peak.", DOUBLE, "double", C_PEAK + C_RIDGE),
]


# ----------------------------------------------------------------------------- views
def _train_to(key: str, target: int) -> None:
    """Button callback: advance the live trainer to `target` iterations at once."""
    read_trainer(key, functools.partial(M.train_to, target=target))


def _train_to_button(key: str, target: int, label: str) -> None:
    st.button(label, key=f"{key}__to{target}", on_click=_train_to, args=(key, target),
              icon=":material/fast_forward:", width="stretch",
              help=f"Runs the remaining iterations up to {target:,} at once (a few seconds).")


def _live_config(config: Any) -> dict[str, Any]:
    return {"config": repr(config), "seed": session.seed(), "device": session.device()}


def overfit_view(panel) -> None:
    with panel.controls:
        STATE.widget("gen_data")
        STATE.widget("gen_n")
        STATE.widget("gen_label_noise")
        STATE.widget("gen_dropout")
        STATE.widget("gen_l2")
        STATE.widget("gen_wd")
        with st.expander("Network, optimizer, early stopping"):
            STATE.widget("gen_width")
            STATE.widget("gen_depth")
            STATE.widget("gen_opt")
            STATE.widget("gen_lr")
            STATE.widget("gen_patience")
        _train_to_button("gen_overfit", NAMED_STEP, "Train to 1,000")
    s = STATE.values()
    config = overfit_config(s)
    box = None

    def draw(view, tick) -> None:
        # inside the live fragment: switching the boundary redraws this frame only
        which = STATE.widget("gen_boundary")
        snap = view.snapshot()
        b = read_trainer("gen_overfit", functools.partial(M.boundary_of, which=which, res=GRID_RES))
        show_figure(figs.overfit_figure(b.grid, b.data, snap, config.patience, which),
                    key="gen_overfit_fig")
        last = M.latest(snap)
        cols = st.columns(4)
        cols[0].metric("Train accuracy", f"{last['train_acc']:.2f}")
        cols[1].metric("Validation accuracy", f"{last['val_acc']:.2f}")
        cols[2].metric("Gap", f"{last['train_acc'] - last['val_acc']:+.2f}")
        cols[3].metric("‖θ‖", f"{last['weight_norm']:.1f}")

    with panel.figure:
        with user_errors("train the network"):
            box = live_training("gen_overfit", lambda: G.GeneralizationTrainer(
                config, seed=session.seed(), device=session.device()), draw, _live_config(config),
                steps_per_frame=100)
    with panel.notes:
        explain("Full-batch training on the training points; every 10 iterations the network "
                "is evaluated **without dropout** on the training set and on 500 validation "
                "points drawn from the same noisy distribution. The ringed points carry a "
                "flipped label. Green line: lowest validation loss so far (early stopping "
                "returns these weights); grey: where training stops with the chosen patience. "
                "L2 adds (λ/2)‖θ‖² to the loss; weight decay multiplies θ by (1 − η·wd) each "
                "step; both act on all parameters, biases included.")
        if box is not None:
            _export(box.snapshot(), config, "generalization_overfit")


def _pair_live(panel, key: str, configs: dict[str, G.TrainConfig], panels: tuple[str, str],
               first: tuple[str, str, str], chance: float | None, steps_per_frame: int,
               what: str, export: str, notes: str) -> None:
    """Two runs trained side by side (Random labels, L2 vs AdamW): the comparison figure, per
    run the metric `first` = (label, snapshot field, format) and validation accuracy, export."""
    def draw(view, tick) -> None:
        snaps = view.snapshot()
        show_figure(figs.compare_figure(snaps, panels, chance=chance), key=f"{key}_fig")
        cols = st.columns(4)
        label, field, fmt = first
        for i, name in enumerate(snaps):
            last = M.latest(snaps[name])
            cols[2 * i].metric(f"{name}: {label}", format(last[field], fmt))
            cols[2 * i + 1].metric(f"{name}: validation", f"{last['val_acc']:.2f}")

    pair = None
    with panel.figure:
        with user_errors(what):
            pair = live_training(key, lambda: G.PairTrainer({
                k: G.GeneralizationTrainer(c, seed=session.seed(), device=session.device())
                for k, c in configs.items()}), draw, _live_config(configs),
                steps_per_frame=steps_per_frame)
    with panel.notes:
        explain(notes)
        if pair is not None:
            frame = pd.concat([_frame(snap).assign(run=run) for run, snap in pair.snapshot().items()])
            with st.expander("Export"):
                export_buttons(frame, {"runs": {k: c.__dict__ for k, c in configs.items()}}, export)


def random_view(panel) -> None:
    with panel.controls:
        STATE.widget("gen_rl_n")
        STATE.widget("gen_rl_width")
        st.caption("Adam, η = 0.001, full batch, two hidden ReLU layers; validation: 359 "
                   "held-out digits with their true labels.")
        _train_to_button("gen_random", RANDOM_STEP, "Train to 400")
    _pair_live(panel, "gen_random", random_configs(STATE.values()), ("acc", "loss"),
               ("train", "train_acc", ".2f"), 0.1, 25, "train on the digits",
               "generalization_random_labels",
               "Both networks start from the same weights. With random labels there is "
               "nothing to learn about digits, so validation accuracy (true labels) stays at "
               "1/10; the training set is fitted anyway, by memorizing each image. Zhang et "
               "al. (2017) showed this for CIFAR-10 networks: explicit regularizers barely "
               "change it.")


def decay_view(panel) -> None:
    with panel.controls:
        STATE.widget("gen_coef")
        st.caption("Both: Adam, η = 0.003, the noisy moons of the Overfitting tab (100 points, "
                   "20% flipped), 2×128 ReLU. Adam + L2: g ← ∇CE + λθ, then Adam. AdamW: Adam "
                   "on ∇CE, and θ ← θ(1 − ηλ).")
        _train_to_button("gen_decay", NAMED_STEP, "Train to 1,000")
    _pair_live(panel, "gen_decay", decay_configs(STATE.values()), ("acc", "weight_norm"),
               ("‖θ‖", "weight_norm", ".1f"), None, 100, "train both runs",
               "generalization_l2_vs_adamw",
               "For plain SGD the two are the same update (θ ← θ − η(∇CE + λθ)). Under Adam "
               "they differ: the L2 gradient λθ is divided by √v̂ like every other gradient, "
               "so once it dominates a weight's gradient Adam moves that weight toward 0 by "
               "about η per step, and the run converges to the minimizer of CE + (λ/2)‖θ‖². "
               "AdamW's decay ηλθ does not pass through Adam: it is the same relative shrink "
               "for every weight, and it is small when ηλ is small. Loshchilov & Hutter (2019) "
               "decoupled it so that λ can be tuned independently of η.")


def double_view(panel) -> None:
    with panel.controls:
        STATE.widget("gen_dd_n")
        STATE.widget("gen_dd_noise")
        STATE.widget("gen_dd_ridge")
        st.caption("x ~ N(0, I₁₀), y = βᵀx + noise; features relu(Wx)/√p; two draws of "
                   "(W, data) averaged. Closed form, no training.")
    s = STATE.values()
    with panel.figure:
        with user_errors("compute the double-descent curve"):
            curves = curves_of(s, session.seed())
            show_figure(figs.double_descent_figure(curves), key="gen_double_fig")
            plain = curves["min-norm (ridge 0)"]
            cols = st.columns(3)
            cols[0].metric("Peak at p", f"{dd.peak_width(plain)}")
            cols[1].metric("Error at p = n / best p ≤ n/2 (ridge 0)", f"{dd.peak_ratio(plain):.3g}")
            cols[2].metric(f"… with ridge {_fmt(s['gen_dd_ridge'])}",
                           f"{dd.peak_ratio(list(curves.values())[1]):.3g}")
    with panel.notes:
        explain("For each width p the coefficients are a = V diag(s/(s² + nλ)) Uᵀy from the "
                "SVD Φ = U diag(s) Vᵀ of the n × p feature matrix (λ = 0: the minimum-norm "
                "interpolant pinv(Φ)y). Below p = n the fit is least squares; past p = n it "
                "interpolates the noisy labels (training error 0; drawn at 10⁻⁶ on the log "
                "axis) and, among all interpolants, has the smallest ‖a‖. At p = n the "
                "smallest singular value is near 0, ‖a‖ and the test error blow up. The test "
                "error is measured against the noiseless teacher on 1,000 fresh points.")
        frame = pd.concat([pd.DataFrame({"curve": k, "p": c.widths, "test_error": c.test_error,
                                         "train_error": c.train_error, "coef_norm": c.coef_norm})
                           for k, c in curves.items()])
        with st.expander("Export"):
            export_buttons(frame, {"settings": {k: s[k] for k in STATE if k.startswith("gen_dd")}},
                           "generalization_double_descent")


def _frame(snap: G.GeneralizationSnapshot) -> pd.DataFrame:
    return pd.DataFrame({"iteration": snap.steps, "train_loss": snap.train_loss,
                         "val_loss": snap.val_loss, "train_acc": snap.train_acc,
                         "val_acc": snap.val_acc, "weight_norm": snap.weight_norm})


def _export(snap: G.GeneralizationSnapshot, config: G.TrainConfig, name: str) -> None:
    with st.expander("Export"):
        export_buttons(_frame(snap), {"config": config.__dict__, "best_step": snap.best_step,
                                      "early_stop_step": snap.stop_step}, name)


VIEWS = [View("overfit", "Overfitting", overfit_view),
         View("random", "Random labels", random_view),
         View("decay", "L2 vs AdamW", decay_view),
         View("double", "Double descent", double_view)]

if __name__ == "__main__":
    topic_page("generalization", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"\min_\theta\ \tfrac1n\textstyle\sum_i \ell(f_\theta(x_i), y_i)"
                       r" + \tfrac{\lambda}{2}\lVert\theta\rVert^2"
                       r"\quad\text{vs}\quad \theta \leftarrow (1-\eta\,\mathrm{wd})\,\theta - \eta\,u_t")
