"""Backpropagation on a graph: type an expression, see its computational graph with every
forward value, walk the backward pass node by node (upstream × local = downstream on every
edge) and compare the result with torch.autograd; then check gradients by finite
differences, backpropagate through a linear layer, and count what a full Jacobian costs in
forward and reverse mode. Settings -> engine/autodiff -> topics/backpropagation/figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): constants and STATE, one function per view, and
the footer. The pure computations that both the views and the claims use are in
topics/backpropagation/compute.py, PRESETS and STEPS with their claims in
topics/backpropagation/tour.py."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from engine import autodiff
from engine.autodiff.loss_curves import REGRESSION_LOSSES
from topics.backpropagation import figures as figs
from ui.value_slope import value_slope_figure
from ui import session
from ui.autoplay import Autoplay
from topics.backpropagation.compute import (
    DEFAULT_EXPR, DEFAULT_VALUES, MISSING_VALUE, env_of, graph_of, gradcheck_of, layer_of,
    gradient_text, loss_curves_of, modes_of, singular_note)
from topics.backpropagation.tour import PRESETS, STEPS
from ui.page import View, topic_page
from ui.plain_text import elide, plain
from ui.render import explain, show_figure
from ui.state import Control, StateTable
from ui.widgets import export_buttons

# ----------------------------------------------------------------------------- constants
LOSS_LABELS = {"mse": "mean squared error", "cross_entropy": "softmax cross-entropy"}
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
    Control("bp_rl_losses", ["quadratic", "absolute", "huber"], "Losses", kind="multiselect",
            options=list(REGRESSION_LOSSES)),
    Control("bp_rl_delta", 1.0, "Huber threshold δ", kind="select_slider",
            options=[0.25, 0.5, 1.0, 2.0]),
    Control("bp_rl_range", 3.0, "Errors shown |e| ≤", kind="select_slider",
            options=[1.0, 2.0, 3.0, 5.0]),
])





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
        st.warning(plain(f"No value for {elide(', '.join(missing), 120)}: using "
                         f"{MISSING_VALUE:g}."), icon=":material/warning:")
    if unused:
        st.caption(plain(f"Not in the expression (ignored): {elide(', '.join(unused), 120)}."))
    if not graph.input_names:
        st.info("The expression has no variables: nothing to differentiate.",
                icon=":material/info:")
    return s


def _show_parse_error(expr: str, exc: ValueError) -> None:
    message = str(exc)
    st.error(plain(f"Cannot read this: {message}"), icon=":material/error:")
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
        _nonfinite_notice(d)
        if session.classroom():     # the projector's narrow column cut a third label
            play = st.container()
            step, reset = st.columns(2, gap="small")
        else:
            step, play, reset = st.columns(3, gap="small")
        step.button("Step", key="bp_next", width="stretch",
                    on_click=_step_to, args=(None, n), disabled=n == 0,
                    help="Process the next node of the backward pass.")
        playing = PLAYER.is_playing() and n > 0
        play.button("Pause" if playing else "Play", key="bp_play", on_click=_toggle_play,
                    args=(n,), type="primary", width="stretch", disabled=n == 0,
                    help=f"One backward step every {TICK_S:g} s.")
        reset.button("Reset", key="bp_reset", width="stretch",
                     on_click=_step_to, args=(0, n), help="Back to the forward pass.")
        _gradient_table(d)
    with panel.figure:
        _walk(d)
    with panel.notes:
        explain("Green: each node's forward value. Red: dL/d(node), the gradient of the "
                "output with respect to that node, once the backward pass has reached it. "
                "Each step takes one node (in reverse topological order, so all of its "
                "gradient has arrived), multiplies its upstream gradient by the local "
                "gradient of each input (the products are written under the title), and "
                "sends each product down its edge (orange), where "
                "it is added to what that input already has.")
        _export_graph(s, d)


def _nonfinite_notice(d: autodiff.Differentiation) -> None:
    """Where an inf or NaN starts and why (engine/autodiff/nonfinite.py), at most 3 causes."""
    found = autodiff.nonfinite_notes(d)
    if found:
        more = f"; and {len(found) - 3} more" if len(found) > 3 else ""
        st.warning(plain("Not a finite number: " + "; ".join(found[:3]) + more + "."),
                   icon=":material/warning:")


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
    # Styler text, not a NumberColumn format: a NumberColumn shows NaN as an empty "None"
    table = pd.DataFrame(rows).style.format(gradient_text, subset=["ours", "torch.autograd"])
    # 200 px before the projector's 1.3x zoom (assets/classroom.css) fit its narrow controls
    # column: stretched to the column, the table ran past it and its third column was cut
    st.dataframe(table, hide_index=True, key="bp_table", width=200, column_config={
        "input": st.column_config.TextColumn("∂f/∂", width=48),
        "ours": st.column_config.Column("ours", width=76),
        "torch.autograd": st.column_config.Column("autograd", width=76)})
    st.caption(f"f = {d.output:.6g} · max |ours − torch| = {d.max_torch_diff:.1e} (float64)")
    note = singular_note(d)
    if note:
        st.warning(note, icon=":material/warning:")


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


def losses_view(panel) -> None:
    """Quadratic, absolute and Huber loss against the error, with ∂L/∂ŷ by autograd."""
    with panel.controls:
        STATE.widget("bp_rl_losses")
        STATE.widget("bp_rl_delta")
        STATE.widget("bp_rl_range")
    s = STATE.values()
    with panel.figure:
        if not s["bp_rl_losses"]:
            st.warning("Choose at least one loss.", icon=":material/warning:")
            return
        e, curves = loss_curves_of(s)
        show_figure(value_slope_figure(e, curves, ("loss L(e)", "∂L/∂ŷ (autograd)"),
                                       "error e = ŷ − y"), key="bp_losses_fig")
    with panel.notes:
        explain("PyTorch's own F.mse_loss, F.l1_loss and F.huber_loss, differentiated by "
                "autograd. The quadratic loss's gradient grows with the error, so one outlier "
                "can dominate a batch; the absolute loss's is ±1 whatever the error and jumps "
                "at 0 (autograd returns 0 there); Huber is quadratic within δ and linear "
                "beyond, so its gradient is the error clipped to ±δ.")


# Every view runs in the skeleton's fragment; the Graph view nests the player's fragment in it
# (the step slider reruns only the graph figure).
VIEWS = [View("graph", "Graph", graph_view),
         View("gradcheck", "Gradient check", gradcheck_view),
         View("layers", "Layers", layers_view),
         View("modes", "Forward vs reverse mode", modes_view),
         View("losses", "Regression losses", losses_view)]

if __name__ == "__main__":
    topic_page("backpropagation", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"\frac{\partial L}{\partial u} = \sum_{v:\,u \to v} "
                       r"\frac{\partial L}{\partial v}\,\frac{\partial v}{\partial u}")
