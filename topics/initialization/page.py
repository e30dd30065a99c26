"""Initialization & batch norm: the variance of activations and gradients through a deep random
MLP, the mean-field (σ_w, σ_b) map of tanh with its edge of chaos, three deep nets training side
by side on the digits, and batch norm step by step (running statistics, train vs eval mode, the
learning rates it allows). Settings -> engine/signal/__init__.py, engine/signal/training.py ->
topics/initialization/figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): constants and STATE, one function per view, and the
footer. The constants and pure computations that both the views and the claims use are in
topics/initialization/compute.py, PRESETS and STEPS with their claims in topics/initialization/tour.py.
"""
from __future__ import annotations

import functools
from typing import Any, Mapping

import numpy as np
import pandas as pd
import streamlit as st

from engine.signal import training as signal_training
from engine.signal.activations import ACTIVATIONS as PHIS, activation_curves
from engine.nets import INITS
from ui.value_slope import value_slope_figure
from topics.initialization import figures as figs
from ui import session
from ui import warm
from ui.claims import measured
from topics.initialization.compute import (
    ACTIVATIONS, NORMS, INIT_LABELS, SW_RANGE, SB_RANGE, GAP_BATCHES, propagation_of, map_of,
    chi_of, grad_ratio, train_config, bn_trace_of, gaps_of, signal_metrics, spectra_of, sweep_of)
from topics.initialization.tour import PRESETS, STEPS
from live.controls import live_training
from live.push import live_parts, place
from ui.page import Live, View, topic_page, user_errors
from live.parts import Figure
from ui.progress import progress
from ui.render import explain, show_figure
from ui.state import Control, StateTable
from ui.widgets import export_buttons

# ----------------------------------------------------------------------------- constants
STATE = StateTable([
    Control("in_act", "tanh", "Activation φ", kind="selectbox", options=ACTIVATIONS),
    Control("in_init", "normal", "Initialization", kind="selectbox", options=list(INITS),
            format_func=INIT_LABELS.get,
            help="normal σ_w: W ~ N(0, σ_w²/n). The other schemes use σ_w as a gain on their "
                 "own standard deviation (1 = the scheme as published)."),
    Control("in_sw", 1.0, "σ_w (gain)", lo=SW_RANGE[0], hi=SW_RANGE[1], step=0.05),
    Control("in_sb", 0.0, "σ_b (bias std)", lo=SB_RANGE[0], hi=SB_RANGE[1], step=0.05),
    Control("in_norm", "none", "Normalization before φ", kind="segmented", options=NORMS,
            format_func={"none": "none", "batchnorm": "batch", "layernorm": "layer"}.get),
    Control("in_depth", 50, "Depth L", lo=1, hi=100, step=1),
    Control("in_width", 256, "Width n", kind="select_slider", options=[32, 64, 128, 256, 512, 1024]),
    Control("in_samples", 512, "Inputs x ~ N(0, I)", kind="select_slider",
            options=[128, 256, 512, 1024]),
    Control("tr_act", "relu", "Activation", kind="selectbox", options=ACTIVATIONS),
    Control("tr_sw", 0.5, "σ_w of the 'normal' net", lo=0.1, hi=3.0, step=0.05),
    Control("tr_depth", 20, "Hidden layers", lo=2, hi=40, step=1),
    Control("tr_width", 64, "Width", kind="select_slider", options=[32, 64, 128]),
    Control("tr_lr", 0.05, "Learning rate (SGD)", kind="select_slider",
            options=[0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5]),
    Control("tr_norm", "none", "Normalization (all three)", kind="segmented",
            options=["none", "batchnorm"]),
    Control("bn_batch", 8, "Batch size B", kind="select_slider", options=list(GAP_BATCHES)),
    Control("bn_momentum", 0.1, "Momentum m of the running statistics", lo=0.01, hi=0.5,
            step=0.01),
    Control("bn_batches", 60, "Mini-batches seen", lo=1, hi=300, step=1),
    Control("bn_gamma", 1.0, "γ (scale)", lo=0.1, hi=3.0, step=0.1),
    Control("bn_beta", 0.0, "β (shift)", lo=-2.0, hi=2.0, step=0.1),
    Control("bn_sweep", False, "Compare learning rates with and without BN (10 trainings)",
            kind="toggle"),
    Control("in_phis", ["sigmoid", "tanh", "relu"], "Activations", kind="multiselect",
            options=list(PHIS)),
    Control("in_zmax", 5.0, "z from −z_max to z_max", lo=1.0, hi=10.0, step=0.5),
])


# ----------------------------------------------------------------------------- views
def _signal_controls() -> None:
    STATE.widget("in_act")
    STATE.widget("in_init")
    STATE.widget("in_sw")
    STATE.widget("in_norm")
    STATE.widget("in_depth")
    with st.expander("Width, bias, inputs"):
        STATE.widget("in_width")
        STATE.widget("in_sb")
        STATE.widget("in_samples")


def _propagation_title(s: Mapping[str, Any]) -> str:
    norm = "" if s["in_norm"] == "none" else f" + {s['in_norm']}"
    return (f"{s['in_act']}, {s['in_init'].replace('_', ' ')} init, σ_w = {s['in_sw']:g}"
            f"{norm}: {s['in_depth']} layers × {s['in_width']}")


def signal_view(panel) -> None:
    with panel.controls:
        _signal_controls()
    s = STATE.values()
    p = None
    with panel.figure, user_errors("propagate through the network"):
        p = propagation_of(s, session.seed(), session.device())
        if p.diverged_at is not None:
            st.warning(f"The activations overflowed float32 at layer {p.diverged_at}: the "
                       f"curves stop there.", icon=":material/warning:")
        show_figure(figs.signal_figure(p, _propagation_title(s)), key="in_signal")
        shown = signal_metrics(p)        # never "nan": too few layers or an overflow named
        cols = st.columns(3)
        cols[0].metric("Var(h_L) / Var(h_1)", shown["end"])
        cols[1].metric("per-layer variance ratio", shown["ratio"])
        cols[2].metric("backward gradient factor", shown["grad"])
    if p is None:
        return
    with panel.notes:
        show_figure(figs.rank_figure(p), key="in_rank")
        explain("**Left:** the variance of the activations h_l over all inputs and units "
                "(blue), and of the gradient of a random readout loss L = Σ⟨r, h_L⟩ with "
                "respect to h_l (red, read right to left). **Right:** how the values of each "
                "layer are distributed (fixed bins; values outside the range are counted in "
                "the end bins). **Below:** the effective rank of the first inputs' "
                "activations: when it falls to 1 every input is mapped onto one line (rank "
                "collapse), which batch norm prevents.")
        layers = np.arange(p.depth + 1)
        data = pd.DataFrame({"layer": layers, "act_mean": p.act_mean, "act_var": p.act_var,
                             "preact_var": p.preact_var, "grad_var": p.grad_var,
                             "effective_rank": p.eff_rank, "saturated": p.saturated})
        with st.expander("Export"):
            export_buttons(data, {k: s[k] for k in s if k.startswith("in_")},
                           "initialization-signal")


def _on_map_click() -> None:
    pick = figs.pick_from_selection(st.session_state.get("in_map"), SW_RANGE, SB_RANGE)
    if pick is not None:
        st.session_state["in_sw"], st.session_state["in_sb"] = pick
        st.session_state["in_act"], st.session_state["in_init"] = "tanh", "normal"
        st.session_state["in_norm"] = "none"


def chaos_view(panel) -> None:
    with panel.controls:
        st.caption("Click the map to load (σ_w, σ_b) for tanh with normal init.")
        STATE.widget("in_sw")
        STATE.widget("in_sb")
        STATE.widget("in_depth")
    s = STATE.values()
    with panel.figure, user_errors("compute the mean-field map"):
        m = map_of(s)
        show_figure(figs.chaos_figure(m, (float(s["in_sw"]), float(s["in_sb"]))), key="in_map",
                    on_select=_on_map_click, selection_mode=("points",))
        tanh_s = {**s, "in_act": "tanh", "in_init": "normal", "in_norm": "none"}
        p = propagation_of(tanh_s, session.seed(), session.device())
        cols = st.columns(3)
        cols[0].metric("χ (mean field)", f"{chi_of(tanh_s):.3f}")
        cols[1].metric("measured gradient factor", f"{grad_ratio(p):.3f}")
        cols[2].metric("Var(∂L/∂x) / Var(∂L/∂h_L)", f"{p.grad_var[0] / p.grad_var[-1]:.3g}")
    with panel.notes:
        explain("Mean-field theory follows the pre-activation variance q_l = σ_w² E[tanh(z)²] "
                "+ σ_b² (z ~ N(0, q_{l-1})) to its fixed point q*, and χ = σ_w² E[tanh'(z)²] "
                "there. χ is the factor by which the gradient variance changes per layer: "
                "below the black line (χ < 1, ordered) it vanishes and inputs merge; above it "
                "(χ > 1, chaotic) it explodes. The metrics compare χ with the factor measured "
                "in the random network of the Signal tab (tanh, normal σ_w, σ_b, this depth).")


def train_frame_parts(view, read, lr: float | None = None) -> dict:
    """One live frame of the Train tab as parts (live/parts.py; pure, so the frame route can
    build it too): the three nets' losses (SGD at rate `lr`) and gradient norms."""
    return {"in_train_fig": Figure(figs.training_figure(view.snapshot(), lr=lr))}


def train_view(panel) -> None:
    with panel.controls:
        STATE.widget("tr_act")
        STATE.widget("tr_sw")
        STATE.widget("tr_norm")
        with st.expander("Depth, width, learning rate"):
            STATE.widget("tr_depth")
            STATE.widget("tr_width")
            STATE.widget("tr_lr")
    s = STATE.values()
    config = train_config(s, session.seed())

    device = session.device()

    def draw(view, tick) -> None:
        place(live_parts(train_frame_parts, view, lr=config.lr), "in_train_fig")

    with panel.figure:
        # a pure factory over plain values (the trainer may be built in a worker process)
        trainer = live_training("in_train", functools.partial(signal_training.DeepNetsTrainer, config, device),
                                draw, config={"config": repr(config), "device": device},
                                steps_per_frame=20, max_steps_per_frame=200)
    with panel.notes:
        snap = trainer.snapshot()
        st.dataframe(pd.DataFrame({"net": snap.labels,
                                   "test accuracy": snap.test_accuracy,
                                   "loss (last 20 steps)": signal_training.final_loss(snap)}),
                     hide_index=True, key="in_train_table")
        explain("Three MLPs (64 pixels → hidden layers → 10 classes) with the same "
                "architecture and the same mini-batches, differing only in the initialization: "
                "normal σ_w (W ~ N(0, σ_w²/n)), Xavier and He. Right panel: the gradient norm "
                "of every weight matrix at the latest record (every 10 steps), log scale.")
        if snap.losses.shape[1]:
            data = pd.DataFrame(snap.losses.T, columns=list(snap.labels))
            data.insert(0, "step", snap.loss_steps)
            with st.expander("Export"):
                export_buttons(data, {k: s[k] for k in s if k.startswith("tr_")},
                               "initialization-training")


def bn_view(panel) -> None:
    with panel.controls:
        STATE.widget("bn_batch")
        STATE.widget("bn_momentum")
        STATE.widget("bn_batches")
        with st.expander("γ and β"):
            STATE.widget("bn_gamma")
            STATE.widget("bn_beta")
        STATE.widget("bn_sweep")
    s = STATE.values()
    seed = session.seed()
    trace = None
    with panel.figure:
        if s["bn_sweep"]:                  # the figure the switch asks for comes first
            with user_errors("run the learning-rate sweep"):
                with progress("Training nets for the learning-rate sweep", unit="nets") as bar:
                    r = sweep_of(seed, progress=bar)
                show_figure(figs.lr_sweep_figure(r), key="in_bn_sweep")
                st.caption(f"Largest learning rate that trains: without BN "
                           f"**{r.max_stable_lr[0]:g}**, with BN **{r.max_stable_lr[1]:g}**.")
        with user_errors("run batch norm"):
            trace = bn_trace_of(s, seed)
            show_figure(figs.bn_step_figure(trace), key="in_bn_step")
    with panel.notes:
        gaps = gaps_of(s, seed)
        cols = st.columns(2)
        with cols[0]:
            show_figure(figs.gap_figure(GAP_BATCHES, gaps, int(s["bn_batch"])), key="in_bn_gap")
        if trace is not None:
            with cols[1]:
                show_figure(figs.running_stats_figure(trace), key="in_bn_running")
        explain("Train mode normalises each feature with the mini-batch's own mean and "
                "variance (● in the right panel); eval mode uses the running averages (×). "
                "They agree when the batch is large and the running statistics have converged. "
                "With B = 2, x̂ = ±1 for every feature whatever the inputs: a model evaluated "
                "in train mode, or trained on tiny batches, behaves differently at test time.")


def _preset_jobs(seed: int, device: str):
    """What the Signal and Edge-of-chaos presets and tour steps draw (0.3-0.6 s each, cold):
    computed in the background once per server process (ui/warm.py)."""
    for x in [*PRESETS.values(), *STEPS]:
        if x.view in ("signal", "chaos"):
            s = STATE.resolve(x.settings)
            yield functools.partial(propagation_of, s, seed, device)
            if x.view == "chaos":
                yield functools.partial(map_of, s)
            # the card measures its claims on other seeds too: warm those as well
            yield from (functools.partial(measured, c, s) for c in x.claims if c.live)


def phi_view(panel) -> None:
    """φ and φ′: why sigmoid and tanh pass at most 1/4 and 1 of a gradient back per layer."""
    with panel.controls:
        STATE.widget("in_phis")
        STATE.widget("in_zmax")
    s = STATE.values()
    with panel.figure:
        if not s["in_phis"]:
            st.warning("Choose at least one activation.", icon=":material/warning:")
            return
        z, curves = activation_curves(s["in_phis"], float(s["in_zmax"]))
        show_figure(value_slope_figure(z, curves), key="in_phi_fig")
        st.caption(" · ".join(f"{name}: max φ′ = {d.max():.3g}" for name, (_, d)
                              in curves.items()))
    with panel.notes:
        explain("The backward pass multiplies the gradient by φ′(z) at every layer. The "
                "sigmoid's slope is at most 1/4 and tanh's at most 1, both fading to 0 where "
                "the unit saturates; ReLU passes exactly 1 for z > 0 and 0 below; the smooth "
                "variants (GELU, Swish, Mish, ELU) keep a small slope for negative z.")


def spectra_view(panel) -> None:
    """The covariance spectra of the first layers' signals of the Signal tab's network."""
    with panel.controls:
        _signal_controls()
    s = STATE.values()
    with panel.figure, user_errors("propagate through the network"):
        sp = spectra_of(s, session.seed())
        show_figure(figs.spectra_figure(sp, _propagation_title(s)), key="in_spectra")
        names = ["x", *(f"h_{layer}" for layer in range(1, len(sp)))]
        st.caption(" · ".join(f"{name}: λmax/λmin = {eig[0] / eig[-1]:.3g}" if eig[-1] > 0
                              else f"{name}: singular" for name, eig in zip(names, sp)))
    with panel.notes:
        explain("The covariance of a layer's signal over the inputs says in which directions "
                "the inputs still differ. Whitened inputs have equal eigenvalues (up to "
                "sampling noise). Each random layer stretches some directions and squeezes "
                "others, so the spread of eigenvalues grows layer after layer: the signal "
                "becomes ill-conditioned, and gradient descent on the layers after it slows "
                "down, as on an elongated bowl.")


VIEWS = [View("signal", "Signal", signal_view), View("chaos", "Edge of chaos", chaos_view),
         View("train", "Train", train_view,
              live=Live("in_train", train_max=2_000)), View("bn", "Batch norm", bn_view),
         View("phi", "Activations φ, φ′", phi_view),
         View("spectra", "Covariance spectra", spectra_view)]

if __name__ == "__main__":
    seed, device = session.seed(), session.device()
    warm.start("initialization", (seed, device), lambda: _preset_jobs(seed, device))
    topic_page("initialization", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"\mathrm{Var}(z_l) = n\,\mathrm{Var}(W_l)\,\mathbb{E}[h_{l-1}^2]"
                       r"\qquad \chi = \sigma_w^2\,\mathbb{E}[\phi'(z)^2]")
