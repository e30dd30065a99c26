"""The flow page's computations of the settings dict s (topics/flows/page.py): one coupling
layer on a grid (its image, log-determinants, inverse error, the image's density), the data
sets, and the trained flows the claims measure; cached across sessions by their inputs.
Shared by the views and the claims."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import streamlit as st
import torch

from engine import flows
from engine.flows.reads import build_trainer
from ui.lesson_measures import lesson_measure

# ----------------------------------------------------------------------------- constants
LIM = 4.0                # the Train tab's plot and density grid: [-LIM, LIM]^2
RES = 100                # density grid cells per axis (a live frame)
BASE = 2.5               # the Coupling tab's base grid covers [-BASE, BASE]^2
LINES, LINE_POINTS = 11, 80          # grid lines each way, points per line
NODES = LINES            # grid nodes per axis (the lines' crossings), coloured by log|det J|
IMAGE_LIM, IMAGE_RES = 10.0, 400     # where the image's density is summed: [-10, 10]^2
TRAIN_STEPS = 1500       # what the training claims measure after
KEEPS = {"keep x₁, transform x₂": 0, "keep x₂, transform x₁": 1}
DATA = tuple(flows.GENERATORS)
LAYERS = (1, 2, 4, 8, 12)
HIDDEN = (16, 32, 64)
LRS = (5e-4, 1e-3, 2e-3, 5e-3)


# ----------------------------------------------------------------------------- one layer
def coupling_from(s: Mapping[str, Any]) -> flows.SliderCoupling:
    """The Coupling tab's layer: raw log-scale a + b·x_keep, shift c·sin(w·x_keep)."""
    return flows.SliderCoupling(KEEPS[s["fl_keep"]], float(s["fl_a"]), float(s["fl_b"]),
                                float(s["fl_c"]), float(s["fl_w"]))


@dataclass(frozen=True)
class CouplingResult:
    lines: np.ndarray        # (2 * LINES, LINE_POINTS, 2) the base grid's lines
    image: np.ndarray        # (2 * LINES, LINE_POINTS, 2) their images f(x)
    back: np.ndarray         # (2 * LINES, LINE_POINTS, 2) f^{-1}(f(x)): the grid again
    nodes: np.ndarray        # (NODES^2, 2) grid nodes x
    node_image: np.ndarray   # (NODES^2, 2) f(x)
    logdet: np.ndarray       # (NODES^2,) log|det df/dx| at the nodes (the layer's s)
    raw_max: float           # largest |a + b·x_keep| on the grid, before the tanh bound
    inverse_error: float     # max |f^{-1}(f(x)) - x| over lines and nodes (float32)
    autograd_gap: float      # max |logdet - log|det J_autograd|| over the nodes
    image_integral: float    # sum of p_Y(y) h^2 over [-IMAGE_LIM, IMAGE_LIM]^2


def _grid_lines() -> np.ndarray:
    c = np.linspace(-BASE, BASE, LINES)
    u = np.linspace(-BASE, BASE, LINE_POINTS)
    one = np.stack([np.broadcast_to(c[:, None], (LINES, LINE_POINTS)),
                    np.broadcast_to(u[None, :], (LINES, LINE_POINTS))], -1)
    return np.concatenate([one, one[..., ::-1]]).astype(np.float32)


def image_density_integral(layer, lim: float = IMAGE_LIM, res: int = IMAGE_RES) -> float:
    """sum_ij p_Y(y_ij) h^2 for y = f(x), x ~ N(0, I), by the change of variables
    p_Y(y) = N(f^{-1}(y); 0, I) · |det df^{-1}/dy|, on cell centres of [-lim, lim]^2."""
    _, y = flows.grid_points(lim, res, torch.float64)
    with torch.no_grad():
        x, logdet_inv = layer.inverse(y)
        logp = flows.gaussian_log_prob(x) + logdet_inv
    h = 2 * lim / res
    return float(torch.exp(logp).sum() * h * h)


@st.cache_data(max_entries=32, show_spinner=False)
def _coupling(key: tuple) -> CouplingResult:
    s = dict(key)
    layer = coupling_from(s)
    lines = _grid_lines()
    xs = np.linspace(-BASE, BASE, NODES)
    gx, gy = np.meshgrid(xs, xs)
    nodes = np.stack([gx.ravel(), gy.ravel()], 1).astype(np.float32)
    flat = torch.as_tensor(lines.reshape(-1, 2))
    with torch.no_grad():
        image = layer(flat)[0].numpy().reshape(lines.shape)
        back = layer.inverse(torch.as_tensor(image.reshape(-1, 2)))[0].numpy().reshape(
            lines.shape)
        node_image = layer(torch.as_tensor(nodes))[0].numpy()
        raw = layer.raw_log_scale(torch.as_tensor(nodes[:, layer.keep]))
    both = torch.as_tensor(np.concatenate([lines.reshape(-1, 2), nodes]))
    own, auto = flows.logdet_vs_autograd(layer, torch.as_tensor(nodes))
    return CouplingResult(lines, image, back, nodes, node_image, own.astype(np.float32),
                          float(raw.abs().max()), flows.inverse_error(layer, both),
                          float(np.abs(own - auto).max()),
                          image_density_integral(layer))


COUPLING_KEYS = ("fl_keep", "fl_a", "fl_b", "fl_c", "fl_w")


def coupling_of(s: Mapping[str, Any]) -> CouplingResult:
    """The Coupling tab's layer on its grid, and what the tab measures on it."""
    return _coupling(tuple((k, s[k]) for k in COUPLING_KEYS))


def coupling_measure(name: str):
    """A claim's measure: a field of coupling_of(s) (logdet_min / logdet_max / logdet_range
    read the log-determinants)."""
    def measure(s):
        r = coupling_of(s)
        if name == "logdet_min":
            return float(r.logdet.min())
        if name == "logdet_max":
            return float(r.logdet.max())
        if name == "logdet_range":
            return float(r.logdet.max() - r.logdet.min())
        if name == "logdet_abs":
            return float(np.abs(r.logdet).max())
        return float(getattr(r, name))
    return measure


# ----------------------------------------------------------------------------- training
@st.cache_data(max_entries=8, show_spinner=False)
def data_of(name: str, seed: int = 0) -> flows.FlowData:
    return flows.flow_data(name, seed=int(seed))


@dataclass(frozen=True)
class TrainedSummary:
    steps: int
    train_nll: float
    held_nll: float
    integral: float
    inverse_error: float     # max |f^{-1}(f(x)) - x| over the held-out points


@st.cache_data(max_entries=16, show_spinner=False)
def trained_of(data: str, layers: int, hidden: int, lr: float, steps: int = TRAIN_STEPS,
               seed: int = 0) -> TrainedSummary:
    """A flow trained `steps` Adam steps from the page's defaults (what the training claims
    measure; the Train tab reaches the same numbers after the same steps with the same seed)."""
    tr = build_trainer(data, layers, hidden, lr, seed, "cpu", LIM)
    tr.step(steps)
    snap = tr.snapshot()
    return TrainedSummary(tr.steps, snap.train_nll, snap.held_nll, snap.density.integral,
                          flows.inverse_error(tr.model, tr.x_held))


def trained_measure(name: str, steps: int = TRAIN_STEPS, **changes):
    """A (slow) claim's measure: a field of trained_of on the settings with `changes`."""
    def measure(s):
        s = {**s, **changes}
        return float(getattr(trained_of(s["fl_data"], int(s["fl_layers"]), int(s["fl_hidden"]),
                                        float(s["fl_lr"]), steps), name))
    return measure


@lesson_measure
def start_integral(s: Mapping[str, Any]) -> float:
    """The density's integral over the Train tab's plot at step 0 (fast: no training)."""
    return trained_of(s["fl_data"], int(s["fl_layers"]), int(s["fl_hidden"]),
                      float(s["fl_lr"]), 0).integral


# ----------------------------------------------------------------------------- lessons
@lesson_measure
def coupling_value(s: Mapping[str, Any], name: str = "inverse_error") -> float:
    """A lesson's measurement on the Coupling tab: coupling_measure(name)(s)."""
    return coupling_measure(name)(s)


@lesson_measure(trains=True)
def trained_value(s: Mapping[str, Any], name: str = "held_nll", steps: int = TRAIN_STEPS,
                  layers: int | None = None) -> float:
    """A lesson's measurement after training (slow): trained_measure(name, steps)(s), with
    `layers` coupling layers when given."""
    changes = {} if layers is None else {"fl_layers": int(layers)}
    return trained_measure(name, int(steps), **changes)(s)


@lesson_measure
def digits_value(s: Mapping[str, Any], name: str = "spread_ratio") -> float:
    """A lesson's measurement on the digits tab's shipped flow: topics.flows.digits.<name>(s)
    (one of DIGITS_MEASURES)."""
    from topics.flows import digits
    if name not in DIGITS_MEASURES:
        raise ValueError(f"unknown digits measure {name!r}")
    return float(getattr(digits, name)(s))


DIGITS_MEASURES = ("spread_ratio", "roughness_ratio", "frozen_spread", "bits_below_baseline",
                   "shipped_bits")


def base_density(lim: float, res: int = RES) -> tuple[np.ndarray, np.ndarray]:
    """The standard normal base density on the plot's grid: xs (res,), p (res, res) with
    p[i, j] = exp(-(xs[j]² + xs[i]²) / 2) / 2π (row i: y = xs[i])."""
    xs = np.linspace(-lim, lim, res)
    sq = xs[None, :] ** 2 + xs[:, None] ** 2          # (res, res)
    return xs, np.exp(-sq / 2) / (2 * np.pi)
