"""A network you build: TensorFlow Playground's view computed with PyTorch. Pick a 2-D
dataset, the input features and the hidden layers; every neuron is drawn as a small heat map of
its output over the input plane, every weight as a line as wide as its size (blue positive,
orange negative), beside the output's map with the data and the train and test loss. What the
playground cannot show: the exact number of linear regions of a ReLU network (engine.regions)
and the test loss with a neuron knocked out. Every control is in the URL.
Settings -> engine/network/ -> topics/network/figures.py.

The constants and pure computations that the views and the claims share are in compute.py,
PRESETS and STEPS with their claims in tour.py. The live view's `draw(view, tick)` builds its
frame with `live_parts(network_frame_parts, view, **inputs)`: pure, plain values in, parts out."""
from __future__ import annotations

import functools
import math

import numpy as np
import streamlit as st

from engine.network import BOX, FEATURE_NAMES, MAX_LAYERS, MAX_UNITS, bce, layer_outputs
from engine.network import feature_matrix
from live.controls import live_training
from live.parts import Caption, Figure
from live.push import live_parts, place
from topics.network import figures as figs
from topics.network.compute import (BATCHES, DATASET_NAMES, KNOCK_OPTIONS, LRS, NOISES,
                                    OUT_RES, REG_RATES, SHARES, TRAIN_MAX, build_trainer,
                                    dataset_of, frame_maps, hidden_of, knocked_pairs,
                                    region_count,
                                    trainer_config)
from topics.network.tour import PRESETS, STEPS
from ui import session
from ui.page import Live, View, topic_page, user_errors
from ui.render import explain, show_figure
from ui.state import Control, StateTable

ACT_NAMES = {"relu": "ReLU", "tanh": "tanh", "sigmoid": "sigmoid", "linear": "linear"}
REG_NAMES = {"none": "none", "L1": "L1", "L2": "L2"}

# ----------------------------------------------------------------------------- state
STATE = StateTable([
    Control("ne_data", "circle", "Dataset", kind="selectbox", options=tuple(DATASET_NAMES),
            format_func=DATASET_NAMES.get),
    Control("ne_noise", 0.0, "Noise", kind="select_slider", options=NOISES),
    Control("ne_share", 0.5, "Share of points to train on", kind="select_slider",
            options=SHARES),
    Control("ne_batch", 10, "Batch size", kind="select_slider", options=BATCHES),
    Control("ne_features", ["x1", "x2"], "Input features", kind="multiselect",
            options=FEATURE_NAMES),
    Control("ne_layers", 2, "Hidden layers", lo=0, hi=MAX_LAYERS, step=1),
    Control("ne_units", 4, "Neurons per hidden layer", lo=1, hi=MAX_UNITS, step=1),
    Control("ne_widths", "", "Or each layer's neurons (e.g. 4, 2; 0: none)", kind="text",
            help="Overrides the two sliders: up to 6 layers of 1 to 8 neurons."),
    Control("ne_act", "tanh", "Activation", kind="segmented", options=tuple(ACT_NAMES),
            format_func=ACT_NAMES.get),
    Control("ne_lr", 0.03, "Learning rate (SGD)", kind="select_slider", options=LRS),
    Control("ne_reg", "none", "Regularisation", kind="segmented", options=tuple(REG_NAMES)),
    Control("ne_rate", 0.0, "Regularisation rate", kind="select_slider", options=REG_RATES),
    Control("ne_test", False, "Show test data", kind="checkbox"),
    Control("ne_discrete", False, "Discretize output", kind="checkbox"),
    Control("ne_knock", [], "Knock out neurons", kind="multiselect", options=KNOCK_OPTIONS),
])


def _finite(v: float, fmt: str = ".3f") -> str:
    return format(v, fmt) if math.isfinite(v) else "—"


# ----------------------------------------------------------------------------- frame
def _on_click_neuron() -> None:
    """A click on a neuron's dot (paused) knocks it out, or brings it back."""
    sel = st.session_state.get("ne_fig_net")
    pts = (sel or {}).get("selection", {}).get("points", []) if isinstance(sel, dict) else \
        getattr(getattr(sel, "selection", None), "points", [])
    knocked = list(st.session_state.get("ne_knock", []))
    for p in pts:
        label = p.get("customdata") if isinstance(p, dict) else None
        if isinstance(label, str) and label in KNOCK_OPTIONS:
            knocked = [k for k in knocked if k != label] if label in knocked else [*knocked,
                                                                                   label]
    st.session_state["ne_knock"] = knocked


def network_frame_parts(view, read, knocked: frozenset, show_test: bool,
                        discretize: bool) -> dict:
    """One live frame of the Network tab as parts (pure: the frame route may build it): the
    drawn network with every neuron's map, the output map with the data and the loss curves,
    and a caption with the losses, the regions and, with neurons knocked out, the test loss
    without them."""
    snap = view.snapshot()
    finite = all(np.isfinite(W).all() and np.isfinite(b).all() for W, b in snap.layers)
    layers = snap.layers if finite else [(np.zeros_like(W), np.zeros_like(b))
                                         for W, b in snap.layers]
    knocked = {p for p in knocked if p[0] < len(layers) - 1 and p[1] < layers[p[0]][0].shape[0]}
    maps = frame_maps(layers, snap.activation, snap.features, knocked)
    out = frame_maps(layers, snap.activation, snap.features, knocked, OUT_RES)
    ts, tv = view.history.as_arrays("train")
    es, ev = view.history.as_arrays("test")
    test = (snap.x_test, snap.y_test) if show_test else None
    title = (f"Iteration {view.steps:,} · test loss {_finite(snap.test_loss)} (orange) · "
             f"train loss {_finite(snap.train_loss)} (grey)")
    fig = figs.network_figure(maps.inputs, snap.features, maps.hidden, out.output, out.xs,
                              out.ys, layers, knocked, (snap.x_train, snap.y_train), test,
                              (ts, tv, es, ev), title, discretize)
    words = [f"Train accuracy **{snap.train_accuracy:.0%}**, test accuracy "
             f"**{snap.test_accuracy:.0%}**."]
    if view.diverged_at is not None or not finite:
        words = [f"**Diverged** at iteration {view.diverged_at or view.steps}: the learning "
                 "rate is too large, the loss left the floating-point range. Lower it and "
                 "press Reset."]
    if len(layers) == 1:
        words.append("No hidden layer: a linear model, its boundary a straight line in the "
                     "features.")
    regions = region_count(layers, snap.activation, snap.features, knocked) if finite else None
    if regions is not None:
        words.append(f"**{regions:,}** linear regions in the plane (exact).")
    if knocked and finite:
        keep = [np.ones(W.shape[0], np.float32) for W, _ in layers[:-1]]
        for li, j in knocked:
            keep[li][j] = 0.0
        h0 = feature_matrix(snap.x_test, snap.features)
        f = layer_outputs(layers, snap.activation, h0, keep)[-1][:, 0]
        words.append(f"Test loss with {len(knocked)} neuron{'s' if len(knocked) > 1 else ''} "
                     f"knocked out: **{_finite(bce(f, snap.y_test))}**.")
    return {"ne_fig_net": Figure(fig, on_select=_on_click_neuron, selection_mode="points"),
            "ne_caption": Caption(" ".join(words))}


# ----------------------------------------------------------------------------- views
def _controls() -> None:
    for key in ("ne_data", "ne_features", "ne_layers", "ne_units", "ne_act", "ne_lr"):
        STATE.widget(key)
    with st.expander("Layers, data, regularisation, view"):
        for key in ("ne_widths", "ne_noise", "ne_share", "ne_batch", "ne_reg", "ne_rate", "ne_test",
                    "ne_discrete", "ne_knock"):
            STATE.widget(key)


def network_view(panel) -> None:
    with panel.controls:
        _controls()
    s = STATE.values()
    with panel.figure:
        if not s["ne_features"]:
            st.warning("No input feature is selected: the network would see nothing. Choose "
                       "at least one feature (x1 and x2 to start).")
            return
        _, unread = hidden_of(s)
        if unread:
            st.warning(f"Each layer's neurons: {unread}. The sliders' {int(s['ne_layers'])} "
                       f"layers of {int(s['ne_units'])} are used instead.")
        config = trainer_config(s)
        seed, device = session.seed(), session.device()
        make = functools.partial(build_trainer, config, seed, device)
        knocked = frozenset(knocked_pairs(s["ne_knock"]))

        def draw(view, tick) -> None:
            parts = live_parts(network_frame_parts, view, knocked=knocked,
                               show_test=bool(s["ne_test"]),
                               discretize=bool(s["ne_discrete"]))
            place(parts, "ne_fig_net")
            place(parts, "ne_caption")

        with user_errors("train the network"):
            live_training("ne_train", make, draw, config={**config, "seed": seed,
                                                          "device": device},
                          steps_per_frame=20, max_steps_per_frame=500)
    with panel.notes:
        explain("Each neuron's square is its output over the plane x1, x2 ∈ [-6, 6] (blue "
                "positive, orange negative, each on its own scale); the lines are the weights, "
                "as wide as |w| and blue where w > 0. One iteration is one SGD step on a batch "
                "of training points, on the mean binary cross-entropy of σ(f) (plus the L1 or "
                "L2 penalty of the weights). The big map is P(class 1 | x), the data on it; "
                "below it the loss on all training and test points. A ReLU network on x1, x2 "
                "alone is piecewise linear: the caption counts its exact linear regions. "
                "Click a neuron's dot (paused) to knock it out: it outputs 0, its map turns "
                "grey and the caption gives the test loss without it; click again, or use "
                "the list under Layers, data, regularisation, view, to bring it back.")


def data_view(panel) -> None:
    with panel.controls:
        for key in ("ne_data", "ne_noise", "ne_share"):
            STATE.widget(key)
    s = STATE.values()
    xtr, ytr, xte, yte = dataset_of(str(s["ne_data"]), float(s["ne_noise"]),
                                    float(s["ne_share"]), session.seed())
    with panel.figure:
        show_figure(figs.data_figure(xtr, ytr, xte, yte, BOX,
                                     f"{len(xtr)} training points (filled), {len(xte)} test "
                                     f"points (rings), noise {float(s['ne_noise']):.0%}"),
                    key="ne_fig_data")
    with panel.notes:
        explain("TensorFlow Playground's four datasets of 500 points, regenerated here with "
                "numpy: a disc inside a ring, the four quadrants of XOR, two Gaussian blobs, "
                "two interleaved spirals. Noise moves the points (or, for circle and XOR, "
                "the position their label is read from).")


VIEWS = [View("network", "Network", network_view, live=Live("ne_train", train_max=TRAIN_MAX)),
         View("data", "Data", data_view)]

if __name__ == "__main__":
    topic_page("network", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"h_l=\mathrm{act}(W_l h_{l-1}+b_l),\ "
                       r"L=\mathrm{BCE}\big(\sigma(f(\phi(x))),y\big)+\lambda R(W)")
