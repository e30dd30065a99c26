"""Initialization & batch norm: the variance of activations and gradients through a deep random
MLP, the mean-field (σ_w, σ_b) map of tanh with its edge of chaos, three deep nets training side
by side on the digits, and batch norm step by step (running statistics, train vs eval mode, the
learning rates it allows). Settings -> engine/signal.py, engine/signal_training.py ->
viz/initialization_figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): constants and STATE, the pure computations that the
views and the claims share, PRESETS and STEPS with their claims, one function per view, footer.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd
import streamlit as st

from engine import signal as S
from engine import signal_training as T
from engine.nets import INITS
from viz import initialization_figures as figs
from viz import session, warm
from viz.claims import Claim
from viz.live import live_training
from viz.page import View, topic_page, user_errors
from viz.render import explain, show_figure
from viz.state import Control, StateTable
from viz.widgets import Preset, Step, export_buttons

# ----------------------------------------------------------------------------- constants
SEEDS = (0, 1)                  # claims on random networks hold on both
ACTIVATIONS = list(S.ACTIVATIONS)
NORMS = list(S.NORMS)
INIT_LABELS = {name: scheme.label for name, scheme in INITS.items()}
SW_RANGE, SB_RANGE = (0.1, 4.0), (0.0, 2.0)
MAP_RESOLUTION = 60
TRAIN_STEPS = 300               # the step the training claims are measured at
GAP_BATCHES = (2, 4, 8, 16, 32, 64, 128)

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
    Control("bn_sweep", False, "Compare learning rates with and without BN (~10 s)",
            kind="toggle"),
])


# ----------------------------------------------------------------------------- computation
# Pure functions of the settings dict s: the views draw them and the claims measure them.

@st.cache_data(max_entries=24, show_spinner="Propagating through the network…")
def _propagate(depth, width, act, init, n, seed, norm, sw, sb, device) -> S.Propagation:
    return S.propagate(depth, width, act, init, n, seed, norm, sw, sb, device)


def propagation_of(s: Mapping[str, Any], seed: int = 0, device: str = "cpu") -> S.Propagation:
    return _propagate(int(s["in_depth"]), int(s["in_width"]), s["in_act"], s["in_init"],
                      int(s["in_samples"]), int(seed), s["in_norm"], float(s["in_sw"]),
                      float(s["in_sb"]), device)


@st.cache_data(max_entries=8, show_spinner="Computing the mean-field map…")
def _map(activation: str, depth: int) -> S.VarianceMap:
    return S.variance_map(activation, SW_RANGE, SB_RANGE, depth, MAP_RESOLUTION)


def map_of(s: Mapping[str, Any]) -> S.VarianceMap:
    return _map("tanh", int(s["in_depth"]))


def chi_of(s: Mapping[str, Any]) -> float:
    return S.chi_at(s["in_act"], float(s["in_sw"]), float(s["in_sb"]), int(s["in_depth"]))


def grad_ratio(p: S.Propagation) -> float:
    """Measured per-layer factor of the gradient variance, backwards over the middle layers."""
    last = p.depth - max(1, p.depth // 5)
    return S.per_layer_ratio(p.grad_var[::-1], max(1, p.depth // 5), last)


def train_config(s: Mapping[str, Any], seed: int) -> T.DeepNetsConfig:
    norm = s["tr_norm"]
    nets = (T.NetSpec("normal", float(s["tr_sw"]), norm), T.NetSpec("xavier_normal", 1.0, norm),
            T.NetSpec("kaiming_normal", 1.0, norm))
    return T.DeepNetsConfig(nets, int(s["tr_depth"]), int(s["tr_width"]), s["tr_act"],
                            float(s["tr_lr"]), seed=int(seed))


@st.cache_data(max_entries=8, show_spinner="Training the three nets…")
def _trained(config: T.DeepNetsConfig, steps: int) -> T.DeepNetsSnapshot:
    tr = T.DeepNetsTrainer(config, device="cpu")
    tr.step(steps)
    return tr.snapshot()


def trained_loss(s: Mapping[str, Any], seed: int, net: int) -> float:
    """Mean mini-batch loss of net `net` over steps 281-300 (the claims' training run)."""
    return float(T.final_loss(_trained(train_config(s, seed), TRAIN_STEPS))[net])


def init_grad_norms(s: Mapping[str, Any], seed: int) -> np.ndarray:
    """(3, depth+1) ‖∂loss/∂W_l‖ of the three nets at initialisation (the figure's step 0)."""
    return T.DeepNetsTrainer(train_config(s, seed), device="cpu").snapshot().grad_norms[0]


def he_over_small(s: Mapping[str, Any], seed: int) -> float:
    """Smallest He gradient norm over the largest of the normal σ_w net, at step 0."""
    g = init_grad_norms(s, seed)
    return float(g[2].min() / g[0].max())


@st.cache_data(max_entries=64, show_spinner=False)
def _bn_trace(batch: int, batches: int, momentum: float, gamma: float, beta: float,
              seed: int) -> S.BatchNormTrace:
    return S.batchnorm_trace(batch, batches, momentum, gamma, beta, seed)


def bn_trace_of(s: Mapping[str, Any], seed: int = 0) -> S.BatchNormTrace:
    return _bn_trace(int(s["bn_batch"]), int(s["bn_batches"]), float(s["bn_momentum"]),
                     float(s["bn_gamma"]), float(s["bn_beta"]), int(seed))


@st.cache_data(max_entries=64, show_spinner=False)
def _gaps(momentum: float, seed: int) -> np.ndarray:
    return np.array([S.train_vs_eval_gap(b, momentum=momentum, seed=seed) for b in GAP_BATCHES])


def gaps_of(s: Mapping[str, Any], seed: int = 0) -> np.ndarray:
    """mean |y_train − y_eval| at every batch size of GAP_BATCHES (~20 ms: cached)."""
    return _gaps(float(s["bn_momentum"]), int(seed))


def gap_at(s: Mapping[str, Any], batch: int, seed: int) -> float:
    return float(gaps_of(s, seed)[GAP_BATCHES.index(batch)])


@st.cache_data(max_entries=4, show_spinner="Training 10 nets for the learning-rate sweep…")
def sweep_of(seed: int = 0) -> T.LRSweep:
    return T.lr_sweep(seed=int(seed), device="cpu")


# ---- measurements the claims use (on both seeds)
def worst(measure: Callable[[Mapping[str, Any], int], float], agg=max):
    """A claim measure: `agg` of measure(s, seed) over SEEDS (max for upper bounds)."""
    return lambda s: agg(measure(s, seed) for seed in SEEDS)


def act_ratio(s, seed) -> float:
    return S.per_layer_ratio(propagation_of(s, seed).act_var)


def end_over_first(s, seed) -> float:
    v = propagation_of(s, seed).act_var
    return float(v[-1] / v[1])


def spread(s, seed) -> float:
    """max / min of Var(h_l) over layers 1..L."""
    v = propagation_of(s, seed).act_var[1:]
    return float(np.max(v) / np.min(v))


def last_var(s, seed) -> float:
    return float(propagation_of(s, seed).act_var[-1])


def grad_in_over_out(s, seed) -> float:
    g = propagation_of(s, seed).grad_var
    return float(g[0] / g[-1])


def chi_error(s, seed) -> float:
    return abs(grad_ratio(propagation_of(s, seed)) / chi_of(s) - 1.0)


# ----------------------------------------------------------------------------- presets
BASE = {"in_sb": 0.0, "in_norm": "none", "in_depth": 50, "in_width": 256, "in_samples": 512}
RELU_XAVIER = {**BASE, "in_act": "relu", "in_init": "xavier_normal", "in_sw": 1.0}
RELU_HE = {**BASE, "in_act": "relu", "in_init": "kaiming_normal", "in_sw": 1.0}
TANH_SMALL = {**BASE, "in_act": "tanh", "in_init": "normal", "in_sw": 0.5}
TANH_LARGE = {**BASE, "in_act": "tanh", "in_init": "normal", "in_sw": 3.0}
SIGMOID = {**BASE, "in_act": "sigmoid", "in_init": "xavier_normal", "in_sw": 1.0, "in_depth": 20}
BN_RESCUE = {**BASE, "in_act": "relu", "in_init": "normal", "in_sw": 4.0, "in_norm": "batchnorm"}
CHAOS = {**BASE, "in_act": "tanh", "in_init": "normal", "in_sw": 2.5, "in_sb": 0.5}
TRAIN = {"tr_act": "relu", "tr_sw": 0.5, "tr_depth": 20, "tr_width": 64, "tr_lr": 0.05,
         "tr_norm": "none"}
BN_SMALL_BATCH = {"bn_batch": 2, "bn_momentum": 0.1, "bn_batches": 200, "bn_gamma": 1.0,
                  "bn_beta": 0.0}
BN_SWEEP = {**BN_SMALL_BATCH, "bn_batch": 32, "bn_sweep": True}

C_XAVIER = (Claim("per-layer variance ratio, worst seed above 0.5", worst(act_ratio), hi=0.55),
            Claim("per-layer variance ratio, worst seed below 0.5", worst(act_ratio, min),
                  lo=0.45))
C_HE = (Claim("per-layer variance ratio (max over seeds)", worst(act_ratio), hi=1.05),
        Claim("per-layer variance ratio (min over seeds)", worst(act_ratio, min), lo=0.95),
        Claim("Var(h_50)/Var(h_1), largest over seeds", worst(end_over_first), hi=5.0),
        Claim("Var(h_50)/Var(h_1), smallest over seeds", worst(end_over_first, min), lo=0.2))
C_TANH_SMALL = (Claim("Var(h_50), largest over seeds", worst(last_var), hi=1e-20),
                Claim("per-layer ratio (σ_w² tanh'(0)² = 0.25), max", worst(act_ratio),
                      hi=0.28),
                Claim("per-layer ratio, min", worst(act_ratio, min), lo=0.22))
C_TANH_LARGE = (Claim("share of h_50 within 2% of ±1, smallest over seeds",
                      worst(lambda s, seed: float(propagation_of(s, seed).saturated[-1]), min),
                      lo=0.3),
                Claim("Var(∂L/∂x) / Var(∂L/∂h_50), smallest over seeds",
                      worst(grad_in_over_out, min), lo=1e6))
C_SIGMOID = (Claim("Var(∂L/∂x) / Var(∂L/∂h_20), largest over seeds", worst(grad_in_over_out),
                   hi=1e-15),)
C_BN = (Claim("max/min of Var(h_l) with batch norm, largest over seeds", worst(spread), hi=1.5),
        Claim("per-layer ratio without batch norm (σ_w²/2 = 8), min over seeds",
              worst(lambda s, seed: act_ratio({**s, "in_norm": "none"}, seed), min), lo=7.0),
        Claim("backward gradient factor with batch norm, min over seeds",
              worst(lambda s, seed: grad_ratio(propagation_of(s, seed)), min), lo=1.2))
C_CHAOS = (Claim("|measured gradient factor / χ − 1|, worst seed", worst(chi_error), hi=0.05),
           Claim("χ at (2.5, 0.5)", chi_of, lo=1.3),)
C_TRAIN = (Claim("He net's loss at step 300, largest over seeds",
                 worst(lambda s, seed: trained_loss(s, seed, 2)), hi=1.5, slow=True),
           Claim("normal σ_w = 0.5 net's loss at step 300, smallest over seeds",
                 worst(lambda s, seed: trained_loss(s, seed, 0), min), lo=2.25, slow=True),
           Claim("Xavier net's loss at step 300, smallest over seeds",
                 worst(lambda s, seed: trained_loss(s, seed, 1), min), lo=2.0, slow=True),
           Claim("He's smallest / normal σ_w = 0.5's largest gradient norm at step 0, min "
                 "over seeds", worst(he_over_small, min), lo=1e8))
C_GAP = (Claim("mean |y_train − y_eval| at B = 2, smallest over seeds",
               worst(lambda s, seed: gap_at(s, 2, seed), min), lo=0.5),
         Claim("gap at B = 2 / gap at B = 64, smallest over seeds",
               worst(lambda s, seed: gap_at(s, 2, seed) / gap_at(s, 64, seed), min), lo=4.0))
C_SWEEP = (Claim("largest lr that trains: with BN / without, smallest over seeds",
                 worst(lambda s, seed: float(sweep_of(seed).max_stable_lr[1]
                                             / sweep_of(seed).max_stable_lr[0]), min),
                 lo=10.0, slow=True),)

PRESETS = {
    "ReLU + Xavier: variance halves per layer": Preset(
        RELU_XAVIER, "Xavier gives Var(W) = 2/(n+n) = 1/n here; ReLU keeps only half of the "
                     "second moment, so Var(h_l) falls by ≈ 0.5 per layer (measured 0.45-0.55 "
                     "on two seeds): 10⁻¹⁵ after 50 layers. The gradients shrink the same way "
                     "towards the input.", "signal", C_XAVIER),
    "ReLU + He: the variance keeps its size": Preset(
        RELU_HE, "He doubles Var(W) to 2/n and cancels ReLU's halving: the per-layer ratio is "
                 "0.95-1.05 and after 50 layers Var(h_50)/Var(h_1) stays between 0.2 and 5 "
                 "(seeds 0 and 1). "
                 "It does wander (seed to seed): at finite width the log-variance takes a "
                 "random walk of step ~1/n.", "signal", C_HE),
    "tanh σ_w = 0.5: signal dies": Preset(
        TANH_SMALL, "Near 0, tanh is the identity, so each layer multiplies the variance by "
                    "σ_w² = 0.25 (measured 0.22-0.28): below 10⁻²⁰ at layer 50. The histogram "
                    "collapses into the middle bin.", "signal", C_TANH_SMALL),
    "tanh σ_w = 3: saturates at ±1": Preset(
        TANH_LARGE, "Large weights push most pre-activations far out: over 30% of h_50 sits "
                    "within 2% of ±1 (the histogram's edge bins), and the gradient grows by a "
                    "factor over 10⁶ on its way back to the input (χ > 1).", "signal",
        C_TANH_LARGE),
    "sigmoid: gradients vanish": Preset(
        SIGMOID, "σ'(z) ≤ 1/4, so every layer shrinks the gradient variance by σ_w² E[σ'(z)²] "
                 "≪ 1: after 20 layers Var(∂L/∂x) is below 10⁻¹⁵ of its value at the top. "
                 "The forward signal does not die (sigmoid is centred on 0.5).", "signal",
        C_SIGMOID),
    "BN rescues normal(σ_w = 4)": Preset(
        BN_RESCUE, "Without batch norm ReLU with σ_w = 4 multiplies the variance by σ_w²/2 = 8 "
                   "per layer (measured > 7): 10⁴⁵ at layer 50. With batch norm every layer's "
                   "pre-activations are standardised, and Var(h_l) varies by less than 1.5× "
                   "over all 50 layers. The backward pass is not rescued: at initialization "
                   "batch norm makes the gradient variance grow by over 1.2× per layer going "
                   "back (the red line; Yang et al. 2019). (Switch Normalization to 'none' to "
                   "see the forward explosion.)",
        "signal", C_BN),
    "Chaotic tanh: χ predicts the gradients": Preset(
        CHAOS, "At (σ_w, σ_b) = (2.5, 0.5) the mean-field χ is above 1.3: the gradient "
               "variance grows by χ per layer going back. The measured factor in the random "
               "network matches χ within 5% on two seeds.", "chaos", C_CHAOS),
    "Only He trains a 20-layer ReLU net": Preset(
        TRAIN, "Press Play. After 300 SGD steps (lr 0.05) the He net is below loss 1.5 on two "
               "seeds; the normal σ_w = 0.5 net is still at chance (≥ 2.25, ln 10 = 2.30) and "
               "Xavier barely moved (≥ 2.0). The σ_w = 0.5 net's gradients start over "
               "10⁸ times smaller than He's in every layer (right panel, step 0).", "train", C_TRAIN),
    "Eval with batch size 2 differs from train": Preset(
        BN_SMALL_BATCH, "With B = 2 batch norm in train mode maps every feature to ±1 whatever "
                        "the inputs; eval mode uses the running statistics. On the same "
                        "batches the outputs differ by ≥ 0.5 on average, over 4× the gap at "
                        "B = 64.", "bn", C_GAP),
    "BN allows a 10× larger learning rate": Preset(
        BN_SWEEP, "A 10-layer ReLU He net trained 60 SGD steps at each learning rate: with "
                  "batch norm the largest rate that still trains is at least 10× the largest "
                  "without (two seeds).", "bn", C_SWEEP),
}

STEPS = [
    Step("One layer: Var(z) = n · Var(W) · E[h²]",
         "Each pre-activation sums n products. With Var(W) = 1/n (Xavier for equal widths) and "
         "ReLU, which keeps half of the second moment, every layer halves the variance: a "
         "straight line on the log plot, slope 0.5 per layer.", RELU_XAVIER, "signal",
         C_XAVIER),
    Step("He init doubles the weights' variance",
         "Var(W) = 2/n cancels the halving: the per-layer ratio is 1 (0.95-1.05 measured). "
         "What remains is a slow random walk of the log-variance, smaller for wider layers "
         "(try width 1024).", RELU_HE, "signal", C_HE),
    Step("tanh: too small dies, too large saturates",
         "With σ_w = 0.5 the variance falls by 0.25 per layer and the histogram collapses to 0. "
         "Choose the preset *tanh σ_w = 3* next: the values pile up at ±1 and the gradients "
         "explode backwards.", TANH_SMALL, "signal", C_TANH_SMALL),
    Step("The edge of chaos",
         "The mean-field map says where each regime lives: χ = σ_w² E[φ'(z)²] < 1 (blue) "
         "gradients vanish, > 1 (red) they explode. Click the map to load a point; the "
         "measured backward factor matches χ.", CHAOS, "chaos", C_CHAOS),
    Step("Training: only the well-scaled net learns",
         "Press Play: three 20-layer ReLU nets on the same digit batches. Tiny gradients "
         "everywhere (right panel, log scale) leave the normal σ_w = 0.5 net at chance.",
         TRAIN, "train", C_TRAIN),
    Step("Batch norm, and its train/eval mistake",
         "BN standardises each feature with the batch's μ_B and σ²_B and keeps running "
         "averages for eval mode. With B = 2 the two modes disagree strongly: evaluate in "
         "eval mode, and do not train BN on tiny batches.", BN_SMALL_BATCH, "bn", C_GAP),
]


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
        ratio, g = S.per_layer_ratio(p.act_var), grad_ratio(p)
        cols = st.columns(3)
        cols[0].metric("Var(h_L) / Var(h_1)", f"{p.act_var[-1] / p.act_var[1]:.3g}"
                       if p.diverged_at is None else "overflow")
        cols[1].metric("per-layer variance ratio", f"{ratio:.3g}")
        cols[2].metric("backward gradient factor", f"{g:.3g}")
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

    def draw(trainer, tick) -> None:
        show_figure(figs.training_figure(trainer.snapshot()), key="in_train_fig")

    with panel.figure:
        trainer = live_training("in_train", lambda: T.DeepNetsTrainer(config, session.device()),
                                draw, config={"config": repr(config), "device": session.device()},
                                steps_per_frame=20, max_steps_per_frame=200)
    with panel.notes:
        snap = trainer.snapshot()
        st.dataframe(pd.DataFrame({"net": snap.labels,
                                   "test accuracy": snap.test_accuracy,
                                   "loss (last 20 steps)": T.final_loss(snap)}),
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
                r = sweep_of(seed)
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
    computed in the background once per server process (viz/warm.py)."""
    for x in [*PRESETS.values(), *STEPS]:
        if x.view in ("signal", "chaos"):
            s = STATE.resolve(x.settings)
            yield functools.partial(propagation_of, s, seed, device)
            if x.view == "chaos":
                yield functools.partial(map_of, s)


VIEWS = [View("signal", "Signal", signal_view), View("chaos", "Edge of chaos", chaos_view),
         View("train", "Train", train_view), View("bn", "Batch norm", bn_view)]

if __name__ == "__main__":
    seed, device = session.seed(), session.device()
    warm.start("initialization", (seed, device), lambda: _preset_jobs(seed, device))
    topic_page("initialization", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"\mathrm{Var}(z_l) = n\,\mathrm{Var}(W_l)\,\mathbb{E}[h_{l-1}^2]"
                       r"\qquad \chi = \sigma_w^2\,\mathbb{E}[\phi'(z)^2]")
