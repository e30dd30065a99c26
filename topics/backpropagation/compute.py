"""The backpropagation page's computations of the settings dict s
(topics/backpropagation/page.py): the parsed graph with its forward values and gradients,
gradient checks, a linear layer, forward vs reverse mode, and the measurements the claims
read (each also shown on the page). Shared by the views and the claims."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import streamlit as st

from engine import autodiff
from engine.autodiff.loss_curves import regression_loss_curves
from ui.lesson_measures import lesson_measure

# ----------------------------------------------------------------------------- constants
DEFAULT_EXPR = "(x + y) * z"
DEFAULT_VALUES = "x = -2, y = 5, z = -4"
MISSING_VALUE = 1.0              # a variable without a value gets this (with a warning)
SWEEP_NS = (1, 2, 4, 8, 16, 32, 64, 128)


# ----------------------------------------------------------------------------- computation
# Pure functions of the settings dict s (STATE.values() on the page, STATE.resolve(preset)
# in the claims): the page draws exactly what the claims measure.

def env_of(s: Mapping[str, Any]) -> tuple[dict[str, float], list[str], list[str]]:
    """(values for every input of the expression, names given no value, names not used)."""
    graph = autodiff.parse(s["bp_expr"])
    given = autodiff.parse_values(s["bp_values"])
    missing = [n for n in graph.input_names if n not in given]
    unused = [n for n in given if n not in graph.input_names]
    env = {n: given.get(n, MISSING_VALUE) for n in graph.input_names}
    return env, missing, unused


@st.cache_data(max_entries=64, show_spinner=False)
def _differentiate(expr: str, env_items: tuple) -> autodiff.Differentiation:
    return autodiff.differentiate(expr, dict(env_items))


def graph_of(s: Mapping[str, Any]) -> autodiff.Differentiation:
    env, _, _ = env_of(s)
    return _differentiate(s["bp_expr"], tuple(env.items()))


@st.cache_data(max_entries=32, show_spinner=False)
def _gradcheck(expr: str, env_items: tuple) -> autodiff.GradcheckCurve:
    return autodiff.gradcheck_curve(autodiff.parse(expr), dict(env_items))


def gradcheck_of(s: Mapping[str, Any]) -> autodiff.GradcheckCurve:
    env, _, _ = env_of(s)
    return _gradcheck(s["bp_expr"], tuple(env.items()))


@st.cache_data(max_entries=32, show_spinner=False)
def _layer(n_in: int, n_out: int, batch: int, loss: str, seed: int) -> autodiff.LayerExample:
    return autodiff.layer_example(n_in, n_out, batch, loss, seed)


def layer_of(s: Mapping[str, Any], seed: int = 0) -> autodiff.LayerExample:
    return _layer(int(s["bp_lin_in"]), int(s["bp_lin_out"]), int(s["bp_batch"]),
                  s["bp_loss"], int(seed))


@st.cache_data(max_entries=32, show_spinner=False)
def _modes(n: int, m: int) -> tuple[tuple[int, ...], tuple[autodiff.JacobianCost, ...],
                                   autodiff.JacobianCost]:
    ns = tuple(sorted({k for k in SWEEP_NS if k <= max(n, 16)} | {n}))
    costs = tuple(autodiff.cost_forward_vs_reverse(k, m) for k in ns)
    return ns, costs, costs[ns.index(n)]


def modes_of(s: Mapping[str, Any]):
    """(the n of the sweep, the JacobianCost at each, the one at the chosen n)."""
    return _modes(int(s["bp_n"]), int(s["bp_m"]))


# ---- measurements the claims use (also shown on the page)
@lesson_measure
def grad(s, name: str) -> float:
    return graph_of(s).gradients[name]


@lesson_measure
def torch_gap(s) -> float:
    """max |ours − torch.autograd| over the output and every input gradient."""
    return graph_of(s).max_torch_diff


@lesson_measure
def node_value(s, label: str) -> float:
    d = graph_of(s)
    return float(d.values[[n.label for n in d.nodes].index(label)])


def contributions_into(s, name: str) -> list[float]:
    """The gradients that flow into input `name` along its edges, in trace order."""
    d = graph_of(s)
    node = [n.label for n in d.nodes].index(name)
    return [c for st_ in d.trace for i, c in zip(st_.inputs, st_.contribution) if i == node]


@lesson_measure
def sigmoid_local(s) -> float:
    """σ(1 − σ) at the neuron's output: the sigmoid's local gradient."""
    out = graph_of(s).output
    return out * (1 - out)


@lesson_measure
def max_abs_grad(s) -> float:
    return max(abs(v) for v in graph_of(s).gradients.values())



def singular_note(d: autodiff.Differentiation) -> str | None:
    """A sentence naming the inputs whose gradient (or the output) is not finite at these
    values, or None when every number is finite: x/0, log of 0, √ at 0 are singular points
    where the derivative does not exist, and the table must say so rather than look empty."""
    bad = [n for n in d.input_names if not np.isfinite(d.gradients[n])]
    if np.isfinite(d.output) and not bad:
        return None
    names = ([] if np.isfinite(d.output) else [f"f = {gradient_text(d.output)}"]) + \
        [f"∂f/∂{n} = {gradient_text(d.gradients[n])}" for n in bad]
    # the cause (which node, which operation) is the page's "Not a finite number" notice
    return (f"{', '.join(names)}: not finite at these values. The expression is singular "
            f"or undefined here, so its derivative does not exist; pick other input values.")


def gradient_text(v: float) -> str:
    """A table cell: 4 significant digits, or nan / ∞ / −∞ spelled out (a NumberColumn would
    show a NaN as an empty 'None')."""
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "∞" if v > 0 else "−∞"
    return f"{v:.4g}"


# ---- the Regression losses tab: L(e) and ∂L/∂ŷ of PyTorch's losses over errors e
def loss_curves_of(s: Mapping[str, Any]) -> tuple[np.ndarray, dict]:
    r = float(s["bp_rl_range"])
    e = np.linspace(-r, r, 401)
    return e, regression_loss_curves(s["bp_rl_losses"], e, float(s["bp_rl_delta"]))


@lesson_measure
def regression_loss_at(s, loss: str, error: float, slope: bool = False) -> float:
    """L (or ∂L/∂ŷ with slope = true) of `loss` at the error e = ŷ − y, with the tab's δ."""
    loss_value, grad = regression_loss_curves([loss], np.array([float(error)]),
                                              float(s["bp_rl_delta"]))[loss]
    return float((grad if slope else loss_value)[0])
