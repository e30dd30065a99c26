"""LSTM gating: the gates of a trained LSTM on real sequences, gradient flow through time
(RNN vs GRU vs LSTM), a live RNN-vs-LSTM race on delayed recall, and a one-unit cell.
Settings -> engine/recurrent/ -> topics/lstm_gating/figures.py.

The page skeleton (docs/ADDING_A_PAGE.md): constants and STATE, one function per view, and
the footer. The constants and pure computations that both the views and the claims use are in
topics/lstm_gating/compute.py, PRESETS and STEPS with their claims in topics/lstm_gating/tour.py."""
from __future__ import annotations

import functools

import numpy as np
import streamlit as st

from engine.recurrent import reads
from engine import recurrent as rec
from topics.lstm_gating import figures as figs
from ui import session
from ui import shipped_models
from live.controls import live_training
from live.push import live_parts, place
from topics.lstm_gating.compute import (
    DELAYS, KINDS, K, HIDDEN, CHECK_DELAYS, PROBE, FLOW_LAG, GATE_TITLES, RACE_EVAL_EVERY,
    RACE_EVAL_N,
    load_shipped, shipped_problem, lstm_net, clamps_of, input_of, trace_of, storing_units,
    unit_of, accuracy_by_delay, flows_of, cell_trace_of, clamped_note)
from topics.lstm_gating.tour import PRESETS, STEPS
from ui.page import Live, View, topic_page, user_errors
from live.parts import Figure
from ui.render import explain, show_figure
from ui.state import Control, StateTable
from ui.widgets import export_buttons

# ----------------------------------------------------------------------------- constants
INPUTS = ("task sample", "typed symbols", "pulse", "step", "noise")
CLAMP = ("free", "0", "0.5", "1")
CLIPS = ("off", "0.1", "1", "10")
UNITS = ["auto", *range(HIDDEN)]
UNIT_FRAGMENT = "lg_unit_detail"        # the unit/time pickers and what they draw
HEATMAPS_BELOW_PX = 680                 # the six gate heat maps under the unit's lines


def _unit_label(u) -> str:
    return "auto: the unit that stores the symbol" if u == "auto" else f"unit {u}"


STATE = StateTable([
    Control("lg_input", "task sample", "Input", kind="selectbox", options=INPUTS,
            help="A task sample, your own symbols, or a test signal."),
    Control("lg_delay", 40, "Delay D", lo=DELAYS[0], hi=DELAYS[1], step=1,
            help=f"The shipped nets were trained on delays {DELAYS[0]}-{DELAYS[1]}."),
    Control("lg_text", "B" + ".CADBAC.DBA" * 2 + "?", "Symbols (A–D, '.' blank, '?' go)",
            kind="text", extra={"max_chars": 200}),
    Control("lg_channel", "A", "Channel", kind="selectbox",
            options=[*rec.RECALL_ALPHABET[:K], "go"]),
    Control("lg_len", 40, "Length", lo=5, hi=100, step=1),
    *[Control(f"lg_clamp_{g}", "free", title, kind="selectbox", options=CLAMP)
      for g, title in GATE_TITLES.items()],
    Control("lg_unit", "auto", "Unit", kind="selectbox", options=UNITS,
            format_func=_unit_label),
    Control("lg_unit_first", False, "One unit over time as the main figure", kind="toggle",
            help="The chosen unit's gates and states over time in place of the heat maps "
                 "(which move under it)."),
    # its range follows the sequence length: not URL-bound (a new range is a new widget to
    # Streamlit, which then prefers the URL's value over a preset's; docs/ADDING_A_PAGE.md)
    Control("lg_t", 0, "Time step for the equations", lo=0, hi=300, step=1, url=False),
    Control("lg_rho", 1.0, "Spectral radius ρ of W_hh", lo=0.5, hi=3.0, step=0.05,
            help="Every recurrent block is rescaled to this ρ."),
    Control("lg_fb", 1, "Forget-gate bias", kind="select_slider", options=[0, 1, 2, 3],
            help="LSTM forget gate (and GRU update gate)."),
    Control("lg_T", 100, "Sequence length T", lo=10, hi=300, step=10),
    Control("lg_clip", "off", "Per-step clipping", kind="selectbox", options=CLIPS),
    Control("lg_kinds", list(KINDS), "Cells", kind="multiselect", options=list(KINDS),
            format_func=figs.KIND_NAMES.get),
    Control("lg_tr_delay", 40, "Delay D", lo=5, hi=80, step=5),
    Control("lg_tr_curr", False, "Curriculum", kind="toggle",
            help="Grow the delay from 2 up to D: add 2 whenever the running accuracy "
                 "reaches 95 %."),
    Control("lg_tr_hidden", 16, "Hidden units", kind="select_slider", options=[8, 16, 32]),
    Control("lg_tr_lr", 0.01, "Learning rate", kind="select_slider",
            options=[0.001, 0.003, 0.01, 0.03]),
    *[Control(f"lg_s_{gate}_{name}", float(v), f"{name}_{gate}", lo=-6.0, hi=6.0, step=0.5)
      for gate in "ifgo" for name, v in zip("wub", rec.SCALAR_DEFAULTS[gate])],
    Control("lg_s_amp", 1.0, "Pulse amplitude", lo=-2.0, hi=2.0, step=0.1),
])




def _projector_margins(fig):
    """The figures skip the automargin pass (a lighter redraw per slider move); classroom
    fonts need it: the two-line time ticks ("18" over the input "A") reach the axis title."""
    if session.classroom():
        fig.update_xaxes(automargin=True)
    return fig


# ----------------------------------------------------------------------------- views
def _input_controls() -> None:
    source = STATE.widget("lg_input")
    if source == "task sample":
        STATE.widget("lg_delay")
    elif source == "typed symbols":
        STATE.widget("lg_text")
    else:
        c = st.columns(2)
        STATE.widget("lg_channel", c[0])
        STATE.widget("lg_len", c[1])


def gates_view(panel) -> None:
    net, _ = lstm_net()
    with panel.controls:
        if load_shipped("lstm") is None:
            problem = shipped_problem("lstm")
            if problem:
                shipped_models.warn(problem, "Showing an untrained LSTM with the same shape "
                                    "(rebuild: `python -m scripts.pretrain lstm_gating`).")
            else:
                st.warning("The pretrained LSTM is missing (run `python -m scripts.pretrain "
                           "lstm_gating`); showing an untrained LSTM with the same shape.")
        _input_controls()
        st.markdown("**Clamp a gate** (a constant at every step):")
        c = st.columns(3)
        for col, g in zip(c, GATE_TITLES):
            STATE.widget(f"lg_clamp_{g}", col, label=g)
        STATE.widget("lg_unit_first")
    with panel.figure:
        figure_box = st.container()
    s = STATE.values()
    unit_first = bool(s["lg_unit_first"])
    seed = session.seed()
    traced = None
    with user_errors("build this input"):
        traced = trace_of(s, seed)
    if traced is None:
        return
    trace, free, labels, answer = traced
    T, H = trace.h.shape
    probs = rec.head_probs(net, trace.h[-1])      # the readout of the (possibly clamped) h_T
    with panel.controls:
        st.metric("Network answers", rec.RECALL_ALPHABET[int(probs.argmax())],
                  f"p = {probs.max():.2f}", delta_color="off")
        if answer is not None:
            st.metric("Correct answer", rec.RECALL_ALPHABET[answer])
        rnn = load_shipped("rnn")
        if rnn is None and shipped_problem("rnn"):
            shipped_models.warn(shipped_problem("rnn"), "The RNN comparison is hidden.")
        if rnn is not None:
            rp = rec.predict_probs(rnn[0], input_of(s, seed)[0])
            st.metric("Same-size RNN answers", rec.RECALL_ALPHABET[int(rp.argmax())],
                      f"p = {rp.max():.2f}", delta_color="off",
                      help="A 16-unit tanh RNN trained with the same recipe (1,500 Adam steps "
                           f"on delays {DELAYS[0]}-{DELAYS[1]}): it stays near chance (25 %).")
    heatmaps = _projector_margins(figs.gate_heatmaps(trace, labels))
    if not unit_first:
        with figure_box:
            show_figure(heatmaps, key="lg_fig_heat")
    with panel.notes:
        c = st.columns([1, 1, 2])
        with c[2]:
            st.markdown("**Answer** (softmax of the readout of h at '?')")
            for sym, p in zip(rec.RECALL_ALPHABET[:K], probs):
                st.progress(float(p), text=f"P({sym}) = {p:.3f}")
        # the unit's lines: under the heat maps, or the main figure in their place
        unit_box = figure_box if unit_first else st.container()
        if unit_first:      # under the unit's lines: its own height, not the screen's
            show_figure(heatmaps, key="lg_fig_heat", height=HEATMAPS_BELOW_PX)

    def unit_detail() -> None:
        _unit_detail(c[0], c[1], unit_box, trace, free, labels)

    st.fragment(unit_detail, key=UNIT_FRAGMENT)()
    with panel.notes:
        explain("Each gate is a sigmoid of the current input and the previous hidden state: "
                "**i** decides how much of the candidate **g** is written, **f** how much of "
                "the old cell is kept, **o** how much of tanh(c) is shown as h. Along the cell "
                "path ∂c_t/∂c_{t−1} = diag(f): no repeated multiplication by a weight matrix. "
                "In this trained net the storing units keep f near 1 only for 'their' symbol, "
                "so c keeps moving in that symbol's direction; tanh saturates, so h at '?' "
                "reads ±o whatever the drift.")
        if load_shipped("lstm") is not None:
            acc = accuracy_by_delay("lstm")
            st.caption("Shipped LSTM, accuracy by delay (512 sequences each): "
                       + ", ".join(f"D={d}: {a:.0%}" for d, a in zip(CHECK_DELAYS, acc)) + "."
                       + clamped_note(s))
        with st.expander("Export"):
            export_buttons(figs.trace_frame(trace, labels),
                           {"input": s["lg_input"], "clamp": clamps_of(s), "T": T, "hidden": H,
                            "weights": "assets/weights/lstm_gating_lstm.pt"},
                           "lstm_gating_trace")


def _unit_detail(unit_col, t_col, box, trace, free, labels) -> None:
    """The unit and time-step pickers with what they drive (the unit's lines and the
    equations of one step): a fragment, so they redraw nothing else."""
    T = trace.h.shape[0]
    STATE.widget("lg_unit", unit_col)
    STATE.widget("lg_t", t_col, hi=max(T - 1, 1))
    s = STATE.values()
    unit = unit_of(s, labels)
    t = min(int(s["lg_t"]), T - 1)
    with box:
        first = next((lab for lab in labels if lab in rec.RECALL_ALPHABET[:K]), None)
        if s["lg_unit"] == "auto" and first:
            d = storing_units()[rec.RECALL_ALPHABET.index(first)][1]
            st.caption(f"Unit {unit} stores '{first}': over {PROBE['n']} sequences at delay "
                       f"{PROBE['delay']}, its tanh(c) at '?' separates '{first}' from the "
                       f"other symbols by d′ = {d:.1f} standard deviations.")
        show_figure(_projector_margins(figs.unit_lines(trace, unit, labels, reference=free)),
                    key="lg_fig_unit")
        st.latex(figs.lstm_equations(trace, t, unit))


def flow_view(panel) -> None:
    with panel.controls:
        STATE.widget("lg_rho")
        STATE.widget("lg_fb")
        STATE.widget("lg_T")
        STATE.widget("lg_clip")
        STATE.widget("lg_kinds")
    s = STATE.values()
    with panel.figure:
        if not s["lg_kinds"]:
            st.warning("Choose at least one cell to compare.")
            return
        res = None
        with user_errors("compute the gradient flow"), st.spinner("Backpropagating…"):
            res = flows_of(s, session.seed(), session.device())
        if res is None:
            return
        lag = min(FLOW_LAG, int(s["lg_T"]) - 1)
        cols = st.columns(len(res))
        for col, (k, fl) in zip(cols, res.items()):
            col.metric(f"{figs.KIND_NAMES[k]}: gradient at lag {lag}", f"{fl.norms[lag]:.2e}")
        show_figure(figs.gradient_flow_figure(res, float(s["lg_rho"])), key="lg_fig_flow")
    with panel.notes:
        explain("Measured with autograd on freshly initialised 32-unit cells driven by "
                "noise: the batch holds 32 copies so one backward pass gives the whole "
                "Jacobian ∂h_T/∂h_t (shown: its Frobenius norm / √32). For a linear RNN "
                "it is Wᵏ, which shrinks or grows like ρᵏ (dashed). The tanh RNN shrinks "
                "faster still (tanh′ ≤ 1). Clipping rescales the backpropagated gradient at "
                "each step to norm ≤ the threshold: it stops explosion, not vanishing.")
        with st.expander("Export"):
            export_buttons(figs.flows_frame(res), {"rho": s["lg_rho"], "forget_bias": s["lg_fb"],
                                                "T": s["lg_T"], "clip": s["lg_clip"],
                                                "kinds": list(res)}, "lstm_gating_gradients")


def race_parts(view, read, delays: tuple[int, ...], seed: int) -> dict:
    """One live frame of the race as parts (live/parts.py; pure, so the frame route can build
    it too): accuracy by delay (the nets stay with the trainer, maybe in a worker: only the
    accuracies come back) and the accuracy history of both nets."""
    acc = read(functools.partial(reads.race_accuracy_by_delay, delays=delays, seed=seed))
    racers = view.snapshot().racers
    return {"lg_fig_acc": Figure(figs.accuracy_vs_delay(
                np.asarray(delays), acc, {k: r.level for k, r in racers.items()}, 0.25)),
            "lg_fig_hist": Figure(figs.race_history(
                {k: view.history.as_arrays(f"{k}/accuracy") for k in racers}))}


def train_view(panel) -> None:
    with panel.controls:
        STATE.widget("lg_tr_delay")
        STATE.widget("lg_tr_curr")
        STATE.widget("lg_tr_hidden")
        STATE.widget("lg_tr_lr")
    s = STATE.values()
    seed, dev = session.seed(), session.device()
    delay, curr = int(s["lg_tr_delay"]), bool(s["lg_tr_curr"])
    config = {"delay": delay, "curriculum": curr, "hidden": s["lg_tr_hidden"],
              "lr": s["lg_tr_lr"], "seed": seed, "device": dev}

    def make_race():
        return rec.RaceTrainer(("rnn", "lstm"), eval_every=RACE_EVAL_EVERY,
                             eval_n=RACE_EVAL_N, task="delayed_recall",
                             length=2 if curr else delay, max_length=delay, curriculum=curr,
                             hidden=int(s["lg_tr_hidden"]), lr=float(s["lg_tr_lr"]),
                             batch=64, seed=seed, device=dev, forget_bias=2.0,
                             task_params={"n_symbols": K, "distract": 1.0})

    delays = tuple(int(d) for d in np.unique(np.linspace(2, max(delay * 1.5, 10), 7)
                                             .astype(int)))

    def draw(view, tick) -> None:
        parts = live_parts(race_parts, view, delays=delays, seed=seed)
        a, b = st.columns(2)
        with a:
            place(parts, "lg_fig_acc")
        with b:
            place(parts, "lg_fig_hist")

    with panel.figure:
        live_training("lg_race", make_race, draw, config, steps_per_frame=20,
                      max_steps_per_frame=200)
    with panel.notes:
        explain("Both nets see the same batches: one symbol, D random distractor symbols, '?'. "
                "Trained from scratch at a long delay, the RNN's gradient from the answer back "
                "to the symbol vanishes, so it never finds the signal; the LSTM's forget gate "
                "(bias 2) can carry it, though from scratch at delay 40 that depends on the "
                "seed. With the curriculum on, short delays first make the task learnable "
                "step by step, and the RNN can follow for a while.")


def cell_view(panel) -> None:
    with panel.controls:
        st.caption("A hidden-size-1 LSTM: each gate computes act(w·x_t + u·h_{t−1} + b). "
                   "A pulse arrives at t = 5.")
        for gate in "ifgo":
            with st.expander(figs.PANELS[gate][0], expanded=gate == "f"):
                cols = st.columns(3)
                for col, name in zip(cols, "wub"):
                    STATE.widget(f"lg_s_{gate}_{name}", col)
        STATE.widget("lg_s_amp")
    s = STATE.values()
    xs, cell_trace = cell_trace_of(s)
    f_rest = float(cell_trace.f[-1, 0])
    with panel.figure:
        m1, m2, m3 = st.columns(3)
        m1.metric("forget gate at rest", f"{f_rest:.3f}")
        m2.metric("c right after the pulse", f"{cell_trace.c[5, 0]:.3f}")
        m3.metric("c at the end (t = 59)", f"{cell_trace.c[-1, 0]:.3g}")
        show_figure(figs.scalar_cell_figure(xs, cell_trace, rec.memory_half_life(f_rest)),
                    key="lg_fig_cell")
    with panel.notes:
        explain("With x = 0 after the pulse, i·g = i·tanh(u_g h + b_g); for b_g = u_g = 0 "
                "nothing new is written and c_t = f·c_{t−1}: the memory decays like fᵗ, "
                "half-life ln ½ / ln f. The forget bias b_f sets f = σ(b_f): 0 → ½ (1 step), "
                "2 → 0.88 (5 steps), 4 → 0.98 (38 steps).")


VIEWS = [View("gates", "Gates", gates_view),
         View("flow", "Gradient flow", flow_view),
         View("train", "Train: RNN vs LSTM", train_view,
              live=Live("lg_race", train_max=3_000)),
         View("cell", "A single cell", cell_view)]

if __name__ == "__main__":
    topic_page("lstm_gating", state=STATE, presets=PRESETS, steps=STEPS, views=VIEWS,
               formula=r"c_t = f_t \odot c_{t-1} + i_t \odot g_t,\qquad "
                       r"h_t = o_t \odot \tanh(c_t)")
