"""The initialization page's computations of the settings dict s (topics/initialization/page.py):
signal propagation, the mean-field map, the three trained nets, batch norm, and the measurements
the claims read (each also shown on the page). Shared by the views and the claims."""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping

import numpy as np
import streamlit as st

from engine import signal
from engine.signal import training as signal_training
from engine.nets import INITS
from ui.lesson_measures import lesson_measure

# ----------------------------------------------------------------------------- constants
SEEDS = (0, 1)                  # claims on random networks hold on both
ACTIVATIONS = list(signal.ACTIVATIONS)
NORMS = list(signal.NORMS)
INIT_LABELS = {name: scheme.label for name, scheme in INITS.items()}
SW_RANGE, SB_RANGE = (0.1, 4.0), (0.0, 2.0)
MAP_RESOLUTION = 60
TRAIN_STEPS = 300               # the step the training claims are measured at
GAP_BATCHES = (2, 4, 8, 16, 32, 64, 128)


# ----------------------------------------------------------------------------- computation
# Pure functions of the settings dict s: the views draw them and the claims measure them.

@st.cache_data(max_entries=24, show_spinner="Propagating through the network…")
def _propagate(depth, width, act, init, n, seed, norm, sw, sb, device) -> signal.Propagation:
    return signal.propagate(depth, width, act, init, n, seed, norm, sw, sb, device)


def propagation_of(s: Mapping[str, Any], seed: int = 0, device: str = "cpu") -> signal.Propagation:
    return _propagate(int(s["in_depth"]), int(s["in_width"]), s["in_act"], s["in_init"],
                      int(s["in_samples"]), int(seed), s["in_norm"], float(s["in_sw"]),
                      float(s["in_sb"]), device)


SPECTRA_LAYERS = 5              # the Covariance spectra tab draws h_0 … h_5


@st.cache_data(max_entries=8, show_spinner="Computing the covariance spectra…")
def _spectra(depth, width, act, init, n, seed, norm, sw, sb) -> np.ndarray:
    return signal.covariance_spectra(depth, width, act, init, n, seed, norm, sw, sb)


def spectra_of(s: Mapping[str, Any], seed: int = 0) -> np.ndarray:
    """Eigenvalues (largest first) of the covariance of h_0 … h_min(L, 5) over the inputs, for
    the network the Signal tab propagates."""
    depth = min(int(s["in_depth"]), SPECTRA_LAYERS)
    return _spectra(depth, int(s["in_width"]), s["in_act"], s["in_init"], int(s["in_samples"]),
                    int(seed), s["in_norm"], float(s["in_sw"]), float(s["in_sb"]))


@lesson_measure
def spectrum_condition(s, layer: int) -> float:
    """λmax / λmin of the covariance of h_layer (the Covariance spectra tab)."""
    eig = spectra_of(s)[int(layer)]
    return float(eig[0] / eig[-1]) if eig[-1] > 0 else math.inf


@st.cache_data(max_entries=8, show_spinner="Computing the mean-field map…")
def _map(activation: str, depth: int) -> signal.VarianceMap:
    return signal.variance_map(activation, SW_RANGE, SB_RANGE, depth, MAP_RESOLUTION)


def map_of(s: Mapping[str, Any]) -> signal.VarianceMap:
    return _map("tanh", int(s["in_depth"]))


def chi_of(s: Mapping[str, Any]) -> float:
    return signal.chi_at(s["in_act"], float(s["in_sw"]), float(s["in_sb"]), int(s["in_depth"]))


def grad_ratio(p: signal.Propagation) -> float:
    """Measured per-layer factor of the gradient variance, backwards over the middle layers."""
    last = p.depth - max(1, p.depth // 5)
    return signal.per_layer_ratio(p.grad_var[::-1], max(1, p.depth // 5), last)


def train_config(s: Mapping[str, Any], seed: int) -> signal_training.DeepNetsConfig:
    norm = s["tr_norm"]
    nets = (signal_training.NetSpec("normal", float(s["tr_sw"]), norm), signal_training.NetSpec("xavier_normal", 1.0, norm),
            signal_training.NetSpec("kaiming_normal", 1.0, norm))
    return signal_training.DeepNetsConfig(nets, int(s["tr_depth"]), int(s["tr_width"]), s["tr_act"],
                            float(s["tr_lr"]), seed=int(seed))


@st.cache_data(max_entries=8, show_spinner="Training the three nets…")
def _trained(config: signal_training.DeepNetsConfig, steps: int) -> signal_training.DeepNetsSnapshot:
    tr = signal_training.DeepNetsTrainer(config, device="cpu")
    tr.step(steps)
    return tr.snapshot()


def trained_loss(s: Mapping[str, Any], seed: int, net: int) -> float:
    """Mean mini-batch loss of net `net` over steps 281-300 (the claims' training run)."""
    return float(signal_training.final_loss(_trained(train_config(s, seed), TRAIN_STEPS))[net])


def init_grad_norms(s: Mapping[str, Any], seed: int) -> np.ndarray:
    """(3, depth+1) ‖∂loss/∂W_l‖ of the three nets at initialisation (the figure's step 0)."""
    return signal_training.DeepNetsTrainer(train_config(s, seed), device="cpu").snapshot().grad_norms[0]


@lesson_measure(trains=True)
def he_over_small(s: Mapping[str, Any], seed: int) -> float:
    """Smallest He gradient norm over the largest of the normal σ_w net, at step 0."""
    g = init_grad_norms(s, seed)
    return float(g[2].min() / g[0].max())


@st.cache_data(max_entries=64, show_spinner=False)
def _bn_trace(batch: int, batches: int, momentum: float, gamma: float, beta: float,
              seed: int) -> signal.BatchNormTrace:
    return signal.batchnorm_trace(batch, batches, momentum, gamma, beta, seed)


def bn_trace_of(s: Mapping[str, Any], seed: int = 0) -> signal.BatchNormTrace:
    return _bn_trace(int(s["bn_batch"]), int(s["bn_batches"]), float(s["bn_momentum"]),
                     float(s["bn_gamma"]), float(s["bn_beta"]), int(seed))


@st.cache_data(max_entries=64, show_spinner=False)
def _gaps(momentum: float, seed: int) -> np.ndarray:
    return np.array([signal.train_vs_eval_gap(b, momentum=momentum, seed=seed) for b in GAP_BATCHES])


def gaps_of(s: Mapping[str, Any], seed: int = 0) -> np.ndarray:
    """mean |y_train − y_eval| at every batch size of GAP_BATCHES (~20 ms: cached)."""
    return _gaps(float(s["bn_momentum"]), int(seed))


def gap_at(s: Mapping[str, Any], batch: int, seed: int) -> float:
    return float(gaps_of(s, seed)[GAP_BATCHES.index(batch)])


SWEEP_LRS = (0.1, 0.3, 1.0, 3.0, 10.0)     # engine.signal.training.lr_sweep's default rates


@st.cache_data(max_entries=4 * len(SWEEP_LRS), show_spinner=False)
def _sweep_column(seed: int, lr: float) -> signal_training.LRSweep:
    return signal_training.lr_sweep(lrs=(float(lr),), seed=int(seed), device="cpu")


def sweep_of(seed: int = 0, progress=None) -> signal_training.LRSweep:
    """engine lr_sweep, one learning rate at a time (each cached; every rate trains fresh nets
    from the same seed, so the columns equal one sweep's), with `progress(done, total)` in nets
    after each rate that had to be trained or read back."""
    cols = []
    for j, lr in enumerate(SWEEP_LRS):
        cols.append(_sweep_column(int(seed), lr))
        if progress is not None:
            progress((j + 1) * len(cols[0].labels), len(SWEEP_LRS) * len(cols[0].labels))
    first = cols[0]
    return signal_training.sweep_from_losses(SWEEP_LRS, first.labels,
                               np.concatenate([c.final_loss for c in cols], axis=1),
                               first.steps, first.train_fraction)


# ---- measurements the claims use (on both seeds)
def worst(measure: Callable[[Mapping[str, Any], int], float], agg=max):
    """A claim measure: `agg` of measure(s, seed) over SEEDS (max for upper bounds)."""
    return lambda s: agg(measure(s, seed) for seed in SEEDS)


@lesson_measure
def act_ratio(s, seed) -> float:
    return signal.per_layer_ratio(propagation_of(s, seed).act_var)


@lesson_measure
def end_over_first(s, seed) -> float:
    v = propagation_of(s, seed).act_var
    return float(v[-1] / v[1])


@lesson_measure
def spread(s, seed) -> float:
    """max / min of Var(h_l) over layers 1..L."""
    v = propagation_of(s, seed).act_var[1:]
    return float(np.max(v) / np.min(v))


@lesson_measure
def last_var(s, seed) -> float:
    return float(propagation_of(s, seed).act_var[-1])


@lesson_measure
def grad_in_over_out(s, seed) -> float:
    g = propagation_of(s, seed).grad_var
    return float(g[0] / g[-1])


@lesson_measure
def chi_error(s, seed) -> float:
    return abs(grad_ratio(propagation_of(s, seed)) / chi_of(s) - 1.0)


def finite_prefix(values: np.ndarray) -> np.ndarray:
    """`values` up to (not including) the first non-finite entry: the layers an overflow left
    drawn (the curves stop there)."""
    v = np.asarray(values, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(v) | (v <= 0))
    return v if not len(bad) else v[:bad[0]]


def signal_metrics(p: signal.Propagation) -> dict[str, str]:
    """The signal view's three metrics as shown, measured on the finite layers (an overflow
    stops the curves, not the numbers), and named instead of "nan" when the net has too few
    layers for a ratio: Var(h_L)/Var(h_1), the per-layer ratio of Var(h_l) (layers 1..L), the
    backward factor of the gradient variance (grad_ratio, middle layers)."""
    act = finite_prefix(p.act_var)
    grad = finite_prefix(p.grad_var[::-1])[::-1]
    cut = "" if len(act) == len(p.act_var) else f" (to layer {len(act) - 1})"
    end = f"{act[-1] / act[1]:.3g}{cut}" if len(act) > 2 else "— (needs L ≥ 2)"
    ratio = signal.per_layer_ratio(act) if len(act) > 2 else math.nan
    if len(grad) == len(p.grad_var):
        g = grad_ratio(p)
    else:          # backwards from the top over the finite layers
        back = p.grad_var[::-1][:len(finite_prefix(p.grad_var[::-1]))]
        g = signal.per_layer_ratio(back) if len(back) > 2 else math.nan
    short = "overflow" if p.diverged_at is not None else None
    return {"end": end if len(act) > 2 or short is None else short,
            "ratio": f"{ratio:.3g}{cut}" if math.isfinite(ratio) else short or "— (needs L ≥ 2)",
            "grad": f"{g:.3g}" if math.isfinite(g) else short or "— (needs L ≥ 3)"}
