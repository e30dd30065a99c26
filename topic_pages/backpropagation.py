"""Backpropagation on a graph: type an expression, see its computational graph with every
forward value, walk the backward pass node by node (upstream × local = downstream on every
edge) and compare the result with torch.autograd; then check gradients by finite
differences, backpropagate through a linear layer, and count what a full Jacobian costs in
forward and reverse mode. Settings -> engine/autodiff -> viz/backpropagation_figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): constants and STATE, the pure computations that
both the views and the claims use, PRESETS and STEPS with their claims, one function per
view, and the footer."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd
import streamlit as st

from engine import autodiff
from viz import backpropagation_figures as figs
from viz import session
from viz.autoplay import Autoplay
from viz.claims import Claim
from viz.page import View, topic_page
from viz.render import explain, show_figure
from viz.state import Control, StateTable
from viz.widgets import Preset, Step, export_buttons

# ----------------------------------------------------------------------------- constants
DEFAULT_EXPR = "(x + y) * z"
DEFAULT_VALUES = "x = -2, y = 5, z = -4"
MISSING_VALUE = 1.0              # a variable without a value gets this (with a warning)
LOSS_LABELS = {"mse": "mean squared error", "cross_entropy": "softmax cross-entropy"}
SWEEP_NS = (1, 2, 4, 8, 16, 32, 64, 128)
TICK_S = 1.0                     # Play: one backward step per second
# Play state (not widgets): the step shown while playing, auto-play on, skip one advance
AT, PLAYING, HOLD = "bp_at", "bp_playing", "bp_hold"
PLAYER = Autoplay(AT, PLAYING, HOLD)
WALK = "bp_walk"                 # key of the player fragment (step slider + graph)

STATE = StateTable([
    Control("bp_expr", DEFAULT_EXPR, "Expression f", kind="text",
            help="Numbers, names, + − * / **, and exp, log, sqrt, tanh, sigmoid, relu, sin, "
                 "cos, max(a, b). Parsed with a whitelist, never evaluated by Python."),
    Control("bp_values", DEFAULT_VALUES, "Input values", kind="text",
            help="name = number, separated by commas."),
    # not URL-bound: its range follows the graph, and a URL-bound slider whose range changes
    # is redrawn from the URL's value, so a preset could not set "the last step"
    Control("bp_step", 0, "Backward step", lo=0, hi=autodiff.MAX_NODES, step=1, url=False,
            help="0 = the forward pass only; each step processes one node, from the output "
                 "back to the inputs."),
    Control("bp_lin_in", 5, "Inputs n_in", lo=1, hi=12, step=1),
    Control("bp_lin_out", 3, "Outputs n_out", lo=1, hi=10, step=1),
    Control("bp_batch", 4, "Batch size B", lo=1, hi=8, step=1),
    Control("bp_loss", "mse", "Loss", kind="selectbox", options=list(autodiff.LOSSES),
            format_func=LOSS_LABELS.get),
    Control("bp_n", 16, "Inputs n of f: ℝⁿ → ℝᵐ", lo=1, hi=128, step=1),
    Control("bp_m", 1, "Outputs m", lo=1, hi=128, step=1),
])


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
def grad(s, name: str) -> float:
    return graph_of(s).gradients[name]


def torch_gap(s) -> float:
    """max |ours − torch.autograd| over the output and every input gradient."""
    return graph_of(s).max_torch_diff


def node_value(s, label: str) -> float:
    d = graph_of(s)
    return float(d.values[[n.label for n in d.nodes].index(label)])


def contributions_into(s, name: str) -> list[float]:
    """The gradients that flow into input `name` along its edges, in trace order."""
    d = graph_of(s)
    node = [n.label for n in d.nodes].index(name)
    return [c for st_ in d.trace for i, c in zip(st_.inputs, st_.contribution) if i == node]


def sigmoid_local(s) -> float:
    """σ(1 − σ) at the neuron's output: the sigmoid's local gradient."""
    out = graph_of(s).output
    return out * (1 - out)


def max_abs_grad(s) -> float:
    return max(abs(v) for v in graph_of(s).gradients.values())


# ----------------------------------------------------------------------------- presets
COURSE = {"bp_expr": DEFAULT_EXPR, "bp_values": DEFAULT_VALUES}
NEURON = {"bp_expr": "sigmoid(w0*x0 + w1*x1 + w2)",
          "bp_values": "w0 = 2, x0 = -1, w1 = -3, x1 = -2, w2 = -3"}
TWICE = {"bp_expr": "x * y + x", "bp_values": "x = 3, y = -2"}
RELU = {"bp_expr": "relu(w * x + b) * 3", "bp_values": "w = -1, x = 2, b = 0.5"}
ROUTER = {"bp_expr": "max(x, y) * z", "bp_values": "x = 4, y = 1, z = 2"}
END = {"bp_step": autodiff.MAX_NODES}          # clamped to the last step of the graph
CHECK = {**NEURON, "bp_step": 0}
LAYER = {"bp_lin_in": 5, "bp_lin_out": 3, "bp_batch": 4, "bp_loss": "cross_entropy"}
SCALAR_LOSS = {"bp_n": 100, "bp_m": 1}
WIDE_OUT = {"bp_n": 2, "bp_m": 64}

EXACT = 1e-12


def _equals(what: str, fn, value: float, tol: float = EXACT) -> Claim:
    return Claim(what, fn, lo=value - tol, hi=value + tol)


C_TORCH = Claim("max |ours − torch.autograd|", torch_gap, hi=EXACT)
C_COURSE = (_equals("f", lambda s: graph_of(s).output, -12.0),
            _equals("∂f/∂x", lambda s: grad(s, "x"), -4.0),
            _equals("∂f/∂y", lambda s: grad(s, "y"), -4.0),
            _equals("∂f/∂z", lambda s: grad(s, "z"), 3.0), C_TORCH)
C_NEURON = (Claim("σ(1 − σ) at the output", sigmoid_local, lo=0.1966, hi=0.1967),
            *[Claim(f"∂f/∂{w} − σ(1 − σ)·{x}",
                    lambda s, w=w, x=x: grad(s, w) - sigmoid_local(s) *
                    autodiff.parse_values(s["bp_values"])[x], lo=-EXACT, hi=EXACT)
              for w, x in (("w0", "x0"), ("w1", "x1"))],
            _equals("∂f/∂w2 (the bias: σ(1 − σ) × 1)", lambda s: grad(s, "w2"),
                    0.19661193324148185, 1e-15),
            _equals("∂f/∂w0", lambda s: grad(s, "w0"), -0.19661193324148185, 1e-15), C_TORCH)
C_TWICE = (_equals("number of gradients flowing into x", lambda s: len(contributions_into(s,
                                                                                          "x")),
                   2, 0),
           _equals("their sum − ∂f/∂x", lambda s: sum(contributions_into(s, "x")) -
                   grad(s, "x"), 0.0),
           _equals("∂f/∂x = y + 1", lambda s: grad(s, "x"), -1.0), C_TORCH)
C_RELU = (Claim("pre-activation w·x + b", lambda s: node_value(s, "+"), hi=-1e-9),
          _equals("largest |gradient| of any input", max_abs_grad, 0.0, 0.0), C_TORCH)
C_ROUTER = (_equals("∂f/∂x (the larger input)", lambda s: grad(s, "x"), 2.0),
            _equals("∂f/∂y (the smaller input)", lambda s: grad(s, "y"), 0.0, 0.0),
            _equals("∂f/∂z", lambda s: grad(s, "z"), 4.0), C_TORCH)
C_CHECK = (Claim("best central h / (ε^(1/3) · scale)",
                 lambda s: gradcheck_of(s).best_h["central"] / gradcheck_of(s).theory_h[
                     "central"], lo=0.1, hi=10),
           Claim("ε^(1/3) · scale", lambda s: gradcheck_of(s).theory_h["central"],
                 lo=1.8e-5, hi=1.85e-5),
           Claim("√ε · scale", lambda s: gradcheck_of(s).theory_h["forward"],
                 lo=4.4e-8, hi=4.5e-8),
           Claim("smallest central relative error", lambda s: gradcheck_of(s).best_error[
               "central"], lo=1e-12, hi=1e-10),
           Claim("smallest forward relative error", lambda s: gradcheck_of(s).best_error[
               "forward"], lo=2e-9, hi=1e-8),
           Claim("best forward h / (√ε · scale)",
                 lambda s: gradcheck_of(s).best_h["forward"] / gradcheck_of(s).theory_h[
                     "forward"], lo=0.1, hi=10),
           Claim("forward slope for large h (truncation ∝ h)",
                 lambda s: gradcheck_of(s).truncation_slope["forward"], lo=0.8, hi=1.2),
           Claim("central slope for large h (truncation ∝ h²)",
                 lambda s: gradcheck_of(s).truncation_slope["central"], lo=1.8, hi=2.2),
           Claim("central slope for small h (round-off ∝ 1/h)",
                 lambda s: gradcheck_of(s).roundoff_slope["central"], lo=-1.3, hi=-0.7))
C_LAYER = (_equals("max |ours − torch.autograd| over dW, dx, db",
                   lambda s: layer_of(s).max_abs_diff, 0.0, 1e-12),
           _equals("rows of dL/dW − rows of W", lambda s: layer_of(s).grads.dW.shape[0] -
                   layer_of(s).W.shape[0], 0, 0),
           _equals("columns of dL/dW − columns of W", lambda s: layer_of(s).grads.dW.shape[1] -
                   layer_of(s).W.shape[1], 0, 0))
C_SCALAR = (_equals("reverse-mode passes", lambda s: modes_of(s)[2].reverse_passes, 1, 0),
            _equals("forward-mode passes", lambda s: modes_of(s)[2].forward_passes, 100, 0),
            Claim("max |J_forward − J_reverse| vs the closed form",
                  lambda s: modes_of(s)[2].max_error, hi=1e-12))
C_WIDE = (_equals("forward-mode passes", lambda s: modes_of(s)[2].forward_passes, 2, 0),
          _equals("reverse-mode passes", lambda s: modes_of(s)[2].reverse_passes, 64, 0))

PRESETS = {
    "Course example: (x + y)·z": Preset(
        {**COURSE, **END}, "x = −2, y = 5, z = −4: q = x + y = 3 and f = q·z = −12. Backward: "
        "∂f/∂z = q = 3 and ∂f/∂q = z = −4; the + node passes −4 unchanged to both x and y. "
        "torch.autograd gives the same −4, −4, 3.", "graph", C_COURSE),
    "Sigmoid neuron": Preset(
        {**NEURON, **END}, "σ(w0·x0 + w1·x1 + w2) = σ(1) = 0.731. The sigmoid's local gradient "
        "is σ(1 − σ) = 0.197, so each weight's gradient is 0.197 × its input "
        "(∂f/∂w0 = 0.197 × (−1) = −0.197) and the bias gets 0.197 itself.", "graph", C_NEURON),
    "A variable used twice: gradients add": Preset(
        {**TWICE, **END}, "x feeds both the × node and the final +: two gradients flow back "
        "into it, y = −2 from the product and 1 from the sum. They add: ∂f/∂x = y + 1 = −1.",
        "graph", C_TWICE),
    "ReLU's zero-gradient region": Preset(
        {**RELU, **END}, "w·x + b = −1.5 < 0, so the ReLU outputs 0 and its local gradient "
        "is 0: every input gradient is exactly 0, whatever happens after it.", "graph",
        C_RELU),
    "max as a gradient router": Preset(
        {**ROUTER, **END}, "max(4, 1) = 4: the local gradient is 1 for the larger input and 0 "
        "for the other, so all of ∂f/∂max = z = 2 goes to x and none to y.", "graph",
        C_ROUTER),
    "Gradient check on the sigmoid neuron": Preset(
        CHECK, "Central differences reach a relative error of about 1e-11, at an h within a "
        "decade of ε^(1/3)·scale = 1.8e-5 (red dotted line; scale = the largest |input| = 3); "
        "forward differences only get down to about 5e-9, near √ε·scale = 4.5e-8 (blue). Right "
        "of each minimum the error falls as h² (central) or h (forward): truncation; left of "
        "it, it grows as 1/h: round-off.", "gradcheck", C_CHECK),
    "Linear layer + cross-entropy": Preset(
        LAYER, "y = W x + b on a batch of 4: dL/dW = δᵀx has W's shape (3, 5), dL/dx = δW has "
        "x's shape (4, 5), dL/db sums δ over the batch; autograd agrees to 1e-12.", "layers",
        C_LAYER),
    "Scalar loss, 100 inputs: reverse mode": Preset(
        SCALAR_LOSS, "A loss is one number (m = 1): reverse mode gets the whole gradient in 1 "
        "backward pass, forward mode needs 100 passes, one per input. This is why training "
        "uses backpropagation.", "modes", C_SCALAR),
    "Few inputs, many outputs: forward mode": Preset(
        WIDE_OUT, "f: ℝ² → ℝ⁶⁴: forward mode needs 2 passes, reverse mode 64.", "modes",
        C_WIDE),
}

STEPS = [
    Step("The forward pass",
         "Each node computes its value from its inputs, left to right: q = x + y = 3, then "
         "f = q·z = −12 (green numbers). Nothing has been differentiated yet.",
         {**COURSE, "bp_step": 0}, "graph",
         (_equals("q = x + y", lambda s: node_value(s, "+"), 3.0),
          _equals("f", lambda s: graph_of(s).output, -12.0))),
    Step("One backward step",
         "Backprop starts at the output with dL/df = 1. The × node's local gradients are "
         "∂f/∂q = z = −4 and ∂f/∂z = q = 3; multiplied by the upstream 1 they go down its "
         "edges (orange).", {**COURSE, "bp_step": 1}, "graph",
         (_equals("first step: upstream", lambda s: graph_of(s).trace[0].upstream, 1.0),
          _equals("first step: gradient sent to q", lambda s: graph_of(s).trace[0]
                  .contribution[0], -4.0),
          _equals("first step: gradient sent to z", lambda s: graph_of(s).trace[0]
                  .contribution[1], 3.0))),
    Step("Upstream × local = downstream",
         "The + node has local gradient 1 for both inputs, so it copies its upstream −4 to x "
         "and to y. The walk is over: (−4, −4, 3), the same as torch.autograd.",
         {**COURSE, **END}, "graph", C_COURSE),
    Step("Fan-out: gradients add",
         "When a value is used twice, two gradients come back and are summed: in x·y + x, "
         "x receives −2 and 1, ∂f/∂x = −1.", {**TWICE, **END}, "graph", C_TWICE),
    Step("Check a gradient numerically",
         "Finite differences approximate each partial derivative. Too large an h: truncation "
         "error; too small: round-off. Central differences are best near ε^(1/3) times the "
         "inputs' scale, forward differences near √ε times it.",
         CHECK, "gradcheck", C_CHECK),
    Step("Whole layers at once",
         "For y = W x + b the same chain rule gives matrices: dL/dW = δᵀx, dL/dx = δW; each "
         "gradient has the shape of what it differentiates.", LAYER, "layers", C_LAYER),
    Step("Why reverse mode",
         "A full Jacobian of f: ℝⁿ → ℝᵐ costs n forward-mode passes or m reverse-mode "
         "passes. A loss has m = 1: one backward pass gives all n gradients.",
         SCALAR_LOSS, "modes", C_SCALAR),
]


# ----------------------------------------------------------------------------- views
def expression_controls() -> dict[str, Any] | None:
    """The expression and its input values; returns the settings, or None (with a message
    that names the problem) when they cannot be read."""
    STATE.widget("bp_expr")
    STATE.widget("bp_values")
    s = STATE.values()
    try:
        graph = autodiff.parse(s["bp_expr"])
        _, missing, unused = env_of(s)
    except ValueError as exc:
        _show_parse_error(s["bp_expr"], exc)
        return None
    if missing:
        st.warning(f"No value for {', '.join(missing)}: using {MISSING_VALUE:g}.",
                   icon=":material/warning:")
    if unused:
        st.caption(f"Not in the expression (ignored): {', '.join(unused)}.")
    if not graph.input_names:
        st.info("The expression has no variables: nothing to differentiate.",
                icon=":material/info:")
    return s


def _show_parse_error(expr: str, exc: ValueError) -> None:
    message = str(exc)
    st.error(f"Cannot read this: {message}", icon=":material/error:")
    col = _column_of(message)
    if col is not None and len(expr) <= 120:
        st.code(f"{expr}\n{' ' * (col - 1)}^", language=None)


def _column_of(message: str) -> int | None:
    marker = "at column "
    if marker not in message:
        return None
    digits = message.split(marker, 1)[1].split()[0].rstrip(":,")
    return int(digits) if digits.isdigit() else None


def _current_step() -> int:
    key = AT if PLAYER.is_playing() else "bp_step"
    return int(st.session_state.get(key, 0))


def _step_to(k: int | None, n_steps: int) -> None:
    """Step (k = None: one further than shown) or Reset (k = 0); stops auto-play."""
    k = _current_step() + 1 if k is None else k
    k = min(max(k, 0), n_steps)
    st.session_state["bp_step"] = st.session_state[AT] = k
    st.session_state[PLAYING] = False
    st.rerun(scope="app")      # the buttons sit in the view's fragment: redraw the player too


def _toggle_play(n_steps: int) -> None:
    """Play from the step shown (from 0 when at the end) / Pause where the walk is."""
    if not PLAYER.is_playing():
        st.session_state[AT] = min(int(st.session_state.get("bp_step", 0)), n_steps)
    PLAYER.toggle(n_steps)
    if not PLAYER.is_playing():
        st.session_state["bp_step"] = int(st.session_state.get(AT, 0))
    st.rerun(scope="app")      # a fragment-only rerun would leave the player's timer ticking


def graph_view(panel) -> None:
    with panel.controls:
        s = expression_controls()
    if s is None:
        return
    d = graph_of(s)
    n = len(d.trace)
    with panel.controls:
        c = st.columns(3, gap="small")
        c[0].button("Step", key="bp_next", width="stretch",
                    on_click=_step_to, args=(None, n), disabled=n == 0,
                    help="Process the next node of the backward pass.")
        playing = PLAYER.is_playing() and n > 0
        c[1].button("Pause" if playing else "Play", key="bp_play", on_click=_toggle_play,
                    args=(n,), type="primary", width="stretch", disabled=n == 0,
                    help=f"One backward step every {TICK_S:g} s.")
        c[2].button("Reset", key="bp_reset", width="stretch",
                    on_click=_step_to, args=(0, n), help="Back to the forward pass.")
        _gradient_table(d)
    with panel.figure:
        _walk(d)
    with panel.notes:
        explain("Green: each node's forward value. Red: dL/d(node), the gradient of the "
                "output with respect to that node, once the backward pass has reached it. "
                "Each step takes one node (in reverse topological order, so all of its "
                "gradient has arrived), multiplies its upstream gradient by the local "
                "gradient of each input, and sends the product down the edge (orange), where "
                "it is added to what that input already has.")
        _export_graph(s, d)


def _walk(d: autodiff.Differentiation) -> None:
    """The figure and the step slider, inside a fragment that advances one step per tick
    while playing (the slider is replaced by a progress bar then: a tick sent before the
    last answer arrived would carry a stale slider value)."""
    n = len(d.trace)
    big = session.classroom()
    playing = PLAYER.is_playing() and n > 0
    st.session_state[HOLD] = True          # a full run shows the step; only ticks advance

    @st.fragment(run_every=TICK_S if playing else None, key=WALK)
    def _frame() -> None:
        running = PLAYER.is_playing() and n > 0
        hold = st.session_state.pop(HOLD, False)
        k = min(int(st.session_state.get(AT if running else "bp_step", 0)), n)
        if running and not hold:
            k = st.session_state[AT] = min(k + 1, n)
            if k >= n:
                st.session_state[PLAYING] = False
                st.session_state["bp_step"] = k
                st.rerun(scope="app")
        figure = st.container()             # drawn after the slider has read its value
        if n == 0:
            st.caption("A single input or a constant: there is no operation to step through.")
        elif running:
            st.progress(k / n, text=f"Backward step {k} of {n} (playing)")
        else:
            k = STATE.widget("bp_step", hi=n)   # (the URL's value on a first run)
            st.session_state[AT] = k
        with figure:
            show_figure(figs.graph_figure(d, k, big), key="bp_graph")

    _frame()


def _gradient_table(d: autodiff.Differentiation) -> None:
    if not d.input_names:
        return
    rows = [{"input": n, "ours": d.gradients[n], "torch.autograd": d.torch_gradients[n]}
            for n in d.input_names]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="bp_table", column_config={
        "input": st.column_config.TextColumn("∂f/∂"),
        "ours": st.column_config.NumberColumn("ours", format="%.4g"),
        "torch.autograd": st.column_config.NumberColumn("autograd", format="%.4g")})
    st.caption(f"f = {d.output:.6g} · max |ours − torch| = {d.max_torch_diff:.1e} (float64)")


def _export_graph(s, d: autodiff.Differentiation) -> None:
    frame = pd.DataFrame({"node": [nd.id for nd in d.nodes], "op": [nd.op for nd in d.nodes],
                          "label": [nd.label for nd in d.nodes],
                          "inputs": [" ".join(map(str, nd.inputs)) for nd in d.nodes],
                          "value": d.values, "gradient": d.grads})
    config = {"settings": {k: s[k] for k in ("bp_expr", "bp_values")},
              "gradients": d.gradients, "torch_gradients": d.torch_gradients,
              "trace": [{"node": t.node, "upstream": t.upstream, "inputs": t.inputs,
                         "local": t.local, "contribution": t.contribution} for t in d.trace]}
    with st.expander("Export"):
        export_buttons(frame, config, "backpropagation")
        st.caption("CSV: every node (op, inputs, forward value, gradient). JSON: the "
                   "expression, the gradients (ours and torch's) and the backward trace.")


def gradcheck_view(panel) -> None:
    with panel.controls:
        s = expression_controls()
    if s is None:
        return
    c = gradcheck_of(s)
    with panel.figure:
        show_figure(figs.gradcheck_figure(c), key="bp_gradcheck")
    with panel.controls:
        st.metric("best h, central", f"{c.best_h['central']:.1e}",
                  help=f"ε^(1/3)·scale = {c.theory_h['central']:.1e} (dotted)")
        st.metric("smallest error, central", f"{c.best_error['central']:.1e}")
        st.metric("best h, forward", f"{c.best_h['forward']:.1e}",
                  help=f"√ε·scale = {c.theory_h['forward']:.1e} (dotted)")
        if np.isnan(c.truncation_slope["central"]):
            st.caption("No truncation error here: central differences are exact (up to "
                       "round-off) for this expression at every h shown.")
    with panel.notes:
        explain(f"Forward: (f(x + h) − f(x))/h has truncation error ∝ h (measured slope "
                f"{c.truncation_slope['forward']:.2f}); central: (f(x + h) − f(x − h))/2h has "
                f"∝ h² (slope {c.truncation_slope['central']:.2f}). Both lose ≈ ε|f|/h to "
                f"round-off (slopes {c.roundoff_slope['forward']:.2f} and "
                f"{c.roundoff_slope['central']:.2f}), ε = 2.2e-16. Scale = max(1, |x|) = "
                f"{c.scale:g}. A relative error of exactly 0 is drawn at 1e-17.")


def layers_view(panel) -> None:
    with panel.controls:
        c0, c1 = st.columns(2)
        STATE.widget("bp_lin_in", c0)
        STATE.widget("bp_lin_out", c1)
        STATE.widget("bp_batch")
        STATE.widget("bp_loss")
    s = STATE.values()
    ex = layer_of(s, session.seed())
    with panel.figure:
        show_figure(figs.layer_figure(ex), key="bp_layers")
    with panel.controls:
        st.metric("max |ours − autograd|", f"{ex.max_abs_diff:.1e}")
        st.caption(f"loss = {ex.loss:.6g} (autograd: {ex.torch_loss:.6g})")
    with panel.notes:
        rows = [("dL/dy = δ", ex.shapes["dL/dy"], "closed form of the loss", 0.0),
                ("dL/dW", ex.shapes["dL/dW"], "δᵀ X", _diff(ex.grads.dW, ex.torch_grads.dW)),
                ("dL/dx", ex.shapes["dL/dx"], "δ W", _diff(ex.grads.dx, ex.torch_grads.dx)),
                ("dL/db", ex.shapes["dL/db"], "Σ over the batch of δ",
                 _diff(ex.grads.db, ex.torch_grads.db))]
        st.dataframe(pd.DataFrame(rows, columns=["gradient", "shape", "formula",
                                                 "max |ours − autograd|"]),
                     hide_index=True, key="bp_layer_table")
        explain("Rows are examples: X is B × n_in, W is n_out × n_in, Y = X Wᵀ + b. The "
                "gradient of a parameter always has the parameter's shape, and a sum over the "
                "batch appears wherever a parameter is shared by all examples (W, b).")


def _diff(a, b) -> float:
    return float(np.abs(a - b).max())


def modes_view(panel) -> None:
    with panel.controls:
        STATE.widget("bp_n")
        STATE.widget("bp_m")
    s = STATE.values()
    ns, costs, cur = modes_of(s)
    with panel.figure:
        show_figure(figs.modes_figure(ns, costs, cur), key="bp_modes")
    with panel.controls:
        c0, c1 = st.columns(2)
        c0.metric("forward passes", cur.forward_passes)
        c1.metric("reverse passes", cur.reverse_passes)
        st.caption(f"Cheaper: **{cur.cheaper}**. Both Jacobians equal the closed form "
                   f"W₂ diag(1 − h²) W₁ to {cur.max_error:.0e}. Measured here: forward "
                   f"{cur.seconds_forward * 1e3:.1f} ms, reverse "
                   f"{cur.seconds_reverse * 1e3:.1f} ms.")
    with panel.notes:
        explain("f(x) = W₂ tanh(W₁ x), 16 hidden units. Forward mode pushes a tangent "
                "through the graph with the values: one Jacobian-vector product (torch.func.jvp) "
                "gives one column, so n of them are needed. Reverse mode runs forward once, "
                "then pulls a cotangent back: one vector-Jacobian product (torch.func.vjp) "
                "gives one row, so m are needed. The passes are counted as the loops run.")


# Every view runs in the skeleton's fragment; the Graph view nests the player's fragment in it
# (the step slider reruns only the graph figure).
VIEWS = [View("graph", "Graph", graph_view),
         View("gradcheck", "Gradient check", gradcheck_view),
         View("layers", "Layers", layers_view),
         View("modes", "Forward vs reverse mode", modes_view)]

if __name__ == "__main__":
    topic_page("backpropagation", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"\frac{\partial L}{\partial u} = \sum_{v:\,u \to v} "
                       r"\frac{\partial L}{\partial v}\,\frac{\partial v}{\partial u}")
