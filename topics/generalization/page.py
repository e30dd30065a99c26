"""Generalization & regularization: train and validation curves split on a noisy toy set,
dropout / L2 / weight decay / early stopping close the gap, a network memorizes random digit
labels, coupled L2 is not weight decay under Adam, and double descent of random features.
Settings -> engine/generalization/__init__.py, engine/generalization/double_descent.py (what the page reads from its
live trainers: engine/generalization/reads.py) -> topics/generalization/figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): constants and STATE, one function per view, and the
footer. The constants and pure computations that both the views and the claims use are in
topics/generalization/compute.py (CLAIM_SEED is read there), PRESETS and STEPS with their claims
in topics/generalization/tour.py."""
from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from engine.generalization import double_descent as dd
from engine import generalization
from engine.generalization import polyfit, reads
from topics.generalization import figures as figs
from ui import session
from topics.generalization.compute import (
    TOY_SETS, TOY_LABELS, OPT_LABELS, LRS, L2S, WDS, COEFS, RIDGES, NAMED_STEP, RANDOM_STEP,
    GRID_RES, LABEL_NOISE, POLY_MAX_DEGREE, _fmt, overfit_config, random_configs, decay_configs,
    overfit_setup, random_setup, decay_setup,
    curves_of, poly_coef_of, poly_data_of, poly_sweep_of)
from topics.generalization.tour import PRESETS, STEPS
from live.controls import live_training, read_trainer
from live.push import live_parts, place_all
from ui.page import Live, View, topic_page, user_errors
from ui.progress import chunked_steps, request_target
from live.parts import Figure, Metrics
from ui.render import explain, show_figure
from ui.state import Control, StateTable
from ui.widgets import export_buttons

# ----------------------------------------------------------------------------- constants
STATE = StateTable([
    # Overfitting
    Control("gen_data", "two_moons", "Data set", kind="selectbox", options=TOY_SETS,
            format_func=TOY_LABELS.get),
    Control("gen_n", 100, "Training points", lo=20, hi=400, step=10),
    Control("gen_label_noise", LABEL_NOISE, "Label noise (fraction flipped)", lo=0.0, hi=0.4,
            step=0.05,
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
    Control("gen_opt", "adam", "Optimizer", kind="selectbox", options=list(generalization.OPTIMIZERS),
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
    # Polynomial fit
    Control("gen_pf_degree", 12, "Polynomial degree M", lo=0, hi=POLY_MAX_DEGREE, step=1),
    Control("gen_pf_n", 13, "Training points", lo=5, hi=40, step=1),
    Control("gen_pf_noise", 0.2, "Noise std", kind="select_slider",
            options=[0.0, 0.05, 0.1, 0.2, 0.3, 0.5]),
    Control("gen_pf_seed", 3, "Noise draw", lo=0, hi=9, step=1),
    Control("gen_pf_val", False, "Show validation points", kind="toggle"),
])


# ----------------------------------------------------------------------------- views
def _steps_of(key: str) -> int | None:
    return read_trainer(key, lambda trainer: int(trainer.steps))


def _train_to_button(key: str, target: int, label: str) -> None:
    """The button asks for `target` iterations; they run here in chunks with a bar (done /
    total) and a Cancel, before the live view draws the result."""
    st.button(label, key=f"{key}__to{target}", on_click=request_target, args=(key, target),
              icon=":material/fast_forward:", width="stretch",
              help=f"Runs the remaining iterations up to {target:,} at once, with a progress bar.")
    chunked_steps(key, f"Training to {target:,}", lambda: _steps_of(key),
                  lambda t: read_trainer(key, functools.partial(reads.train_to, target=t)))


def _live_config(config: Any) -> dict[str, Any]:
    return {"config": repr(config), "seed": session.seed(), "device": session.device()}


def overfit_parts(view, read, which: str, patience: int, setup: str) -> dict:
    """One live frame of the Overfitting tab as parts (live/parts.py; pure, so the frame
    route can build it too): the boundary and curves figure, and the metric row. The boundary
    grid (current or best-validation model) is computed next to the trainer."""
    snap = view.snapshot()
    b = read(functools.partial(reads.boundary_of, which=which, res=GRID_RES))
    last = reads.latest(snap)
    return {"gen_overfit_fig": Figure(figs.overfit_figure(b.grid, b.data, snap, patience, which,
                                                                 setup)),
            "gen_overfit_metrics": Metrics([
                ("Train accuracy", f"{last['train_acc']:.2f}"),
                ("Validation accuracy", f"{last['val_acc']:.2f}"),
                ("Gap", f"{last['train_acc'] - last['val_acc']:+.2f}"),
                ("‖θ‖", f"{last['weight_norm']:.1f}")])}


def pair_parts(view, read, key: str, panels: tuple[str, str], first: tuple[str, str, str],
               chance: float | None, setup: str) -> dict:
    """One live frame of two runs side by side (Random labels, L2 vs AdamW) as parts: the
    comparison figure (its last panel titled with `setup`) and, per run, the metric `first` =
    (label, snapshot field, format) and validation accuracy, in one row."""
    snaps = view.snapshot()
    label, field, fmt = first
    row = []
    for name in snaps:
        last = reads.latest(snaps[name])
        row += [(f"{name}: {label}", format(last[field], fmt)),
                (f"{name}: validation", f"{last['val_acc']:.2f}")]
    return {f"{key}_fig": Figure(figs.compare_figure(snaps, panels, chance=chance, setup=setup)),
            f"{key}_metrics": Metrics(row)}


def overfit_view(panel) -> None:
    with panel.controls:
        # first under the card, whose words name it: on the projector's first screen
        _train_to_button("gen_overfit", NAMED_STEP, "Train to 1,000")
        STATE.widget("gen_data")
        STATE.widget("gen_n")
        STATE.widget("gen_label_noise")
        STATE.widget("gen_dropout")
        STATE.widget("gen_l2")
        STATE.widget("gen_wd")
        # beside the figure, not above it: on the projector the figure keeps the height
        which = STATE.widget("gen_boundary")
        with st.expander("Network, optimizer, early stopping"):
            STATE.widget("gen_width")
            STATE.widget("gen_depth")
            STATE.widget("gen_opt")
            STATE.widget("gen_lr")
            STATE.widget("gen_patience")
    s = STATE.values()
    config = overfit_config(s)
    box = None

    def draw(view, tick) -> None:
        place_all(live_parts(overfit_parts, view, which=which, patience=config.patience,
                                  setup=overfit_setup(config)))

    with panel.figure:
        with user_errors("train the network"):
            box = live_training("gen_overfit", lambda: generalization.GeneralizationTrainer(
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


def _pair_live(panel, key: str, configs: dict[str, generalization.TrainConfig], panels: tuple[str, str],
               first: tuple[str, str, str], chance: float | None, steps_per_frame: int,
               what: str, export: str, notes: str, setup: str) -> None:
    """Two runs trained side by side (Random labels, L2 vs AdamW): the comparison figure (its
    last panel titled with `setup`), per run the metric `first` = (label, snapshot field,
    format) and validation accuracy, export."""
    def draw(view, tick) -> None:
        place_all(live_parts(pair_parts, view, key=key, panels=panels, first=first,
                             chance=chance, setup=setup))

    pair = None
    with panel.figure:
        with user_errors(what):
            pair = live_training(key, lambda: generalization.PairTrainer({
                k: generalization.GeneralizationTrainer(c, seed=session.seed(), device=session.device())
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
               "change it.", random_setup(STATE.values()))


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
               "decoupled it so that λ can be tuned independently of η.",
               decay_setup(STATE.values()))


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


def poly_view(panel) -> None:
    """Least-squares polynomials on a few noisy points of sin(2πx) (engine/generalization/
    polyfit.py, closed form)."""
    with panel.controls:
        for key in ("gen_pf_degree", "gen_pf_n", "gen_pf_noise", "gen_pf_seed", "gen_pf_val"):
            STATE.widget(key)
    s = STATE.values()
    data, sweep = poly_data_of(s), poly_sweep_of(s)
    degree = int(s["gen_pf_degree"])
    grid = np.linspace(0.0, 1.0, 400)
    fit = polyfit.predict(poly_coef_of(s), grid)
    with panel.figure:
        show_figure(figs.polyfit_figure(data, grid, polyfit.true_function(grid), fit, degree,
                                        sweep, bool(s["gen_pf_val"])), key="gen_poly_fig")
        cols = st.columns(3)
        cols[0].metric("Training error (MSE)", f"{sweep.train_mse[degree]:.3g}")
        if s["gen_pf_val"]:
            cols[1].metric("Validation error (MSE)", f"{sweep.val_mse[degree]:.3g}")
            cols[2].metric("Best degree on validation",
                           f"{int(sweep.degrees[np.argmin(sweep.val_mse)])}")
    with panel.notes:
        explain("The training inputs are evenly spaced on [0, 1], their labels sin(2πx) plus "
                "Gaussian noise; the polynomial minimizes the squared error on them (least "
                "squares, no training loop). With as many coefficients as points, M + 1 = n, "
                "it passes through every point, noise included, and swings between them. The "
                "validation points, drawn the same way at other x, show what the training "
                "error hides.")


def _frame(snap: generalization.GeneralizationSnapshot) -> pd.DataFrame:
    return pd.DataFrame({"iteration": snap.steps, "train_loss": snap.train_loss,
                         "val_loss": snap.val_loss, "train_acc": snap.train_acc,
                         "val_acc": snap.val_acc, "weight_norm": snap.weight_norm})


def _export(snap: generalization.GeneralizationSnapshot, config: generalization.TrainConfig, name: str) -> None:
    with st.expander("Export"):
        export_buttons(_frame(snap), {"config": config.__dict__, "best_step": snap.best_step,
                                      "early_stop_step": snap.stop_step}, name)


VIEWS = [View("overfit", "Overfitting", overfit_view,
              live=Live("gen_overfit", train_max=5_000)),
         View("random", "Random labels", random_view,
              live=Live("gen_random", train_max=2_000)),
         View("decay", "L2 vs AdamW", decay_view,
              live=Live("gen_decay", train_max=5_000)),
         View("double", "Double descent", double_view),
         View("poly", "Polynomial fit", poly_view)]

if __name__ == "__main__":
    topic_page("generalization", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"\min_\theta\ \tfrac1n\textstyle\sum_i \ell(f_\theta(x_i), y_i)"
                       r" + \tfrac{\lambda}{2}\lVert\theta\rVert^2"
                       r"\quad\text{vs}\quad \theta \leftarrow (1-\eta\,\mathrm{wd})\,\theta - \eta\,u_t")
