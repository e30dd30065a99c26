"""LSTM gating: the gates of a trained LSTM on real sequences, gradient flow through time
(RNN vs GRU vs LSTM), a live RNN-vs-LSTM race on delayed recall, and a one-unit cell."""
from __future__ import annotations

import numpy as np
import streamlit as st

from engine import recurrent as R
from viz import lstm_gating_figures as F
from viz import session
from viz.page import page_header, user_errors
from viz.live import live_training
from viz.render import explain, show_figure
from viz.topics import ROOT
from viz.widgets import Preset, Step, export_buttons, guided_steps, preset_picker

WEIGHTS = ROOT / "assets" / "weights"
INPUTS = ("task sample", "typed symbols", "pulse", "step", "noise")
CLAMP = ("free", "0", "0.5", "1")
CLIPS = ("off", "0.1", "1", "10")
KINDS = ("rnn", "gru", "lstm")

PRESETS = {
    "Trained LSTM remembers a symbol": Preset(
        {"lg_input": "task sample", "lg_delay": 40, "lg_clamp_i": "free", "lg_clamp_f": "free",
         "lg_clamp_o": "free"},
        "Gates tab: the input gate opens at the symbol, the forget gate stays near 1 through "
        "the distractors, the output gate opens at '?'."),
    "Freeze the memory (f = 1, i = 0)": Preset(
        {"lg_input": "task sample", "lg_clamp_i": "0", "lg_clamp_f": "1", "lg_clamp_o": "free"},
        "Gates tab: nothing is written and nothing forgotten, so every c row is flat (c stays "
        "at its start value 0) and the answer is a guess."),
    "Erase every step (f = 0)": Preset(
        {"lg_input": "task sample", "lg_clamp_i": "free", "lg_clamp_f": "0", "lg_clamp_o": "free"},
        "Gates tab: c_t = i ⊙ g only: the symbol is overwritten by the next input."),
    "Vanishing: RNN vs GRU vs LSTM": Preset(
        {"lg_rho": 1.0, "lg_fb": 2, "lg_T": 150, "lg_clip": "off",
         "lg_kinds": ["rnn", "gru", "lstm"]},
        "Gradient-flow tab: the RNN's gradient falls by tens of orders of magnitude; the "
        "LSTM's, with forget bias 2, decays far more slowly."),
    "Exploding RNN, clipped": Preset(
        {"lg_rho": 2.5, "lg_fb": 1, "lg_T": 100, "lg_clip": "1", "lg_kinds": ["rnn"]},
        "Gradient-flow tab: with ρ = 2.5 the RNN's gradient grows with the lag; clipping at 1 "
        "caps it (set clipping to off to see the explosion)."),
    "One cell: short memory (forget bias 0)": Preset(
        {"lg_s_f_b": 0.0, "lg_s_f_u": 0.0, "lg_s_i_b": -2.0},
        "Single-cell tab: f = σ(0) = ½, so c halves every step after the pulse."),
    "One cell: long memory (forget bias 4)": Preset(
        {"lg_s_f_b": 4.0, "lg_s_f_u": 0.0, "lg_s_i_b": -2.0},
        "Single-cell tab: f = σ(4) ≈ 0.98: the pulse is remembered for ~38 steps."),
}

STEPS = [
    Step("The task", "The network sees a symbol (A–D), then D steps of random distractor "
         "symbols, then '?' and must answer the first symbol. The shipped LSTM (16 units) "
         "was trained at D = 40.", {"lg_input": "task sample", "lg_delay": 40}),
    Step("Read the gates", "In the Gates tab, look at t = 0: some units' input gate i opens "
         "and g writes a value that c then keeps (flat rows) while f ≈ 1 over the delay.",
         {"lg_clamp_i": "free", "lg_clamp_f": "free", "lg_clamp_o": "free"}),
    Step("Break a gate", "Clamp f = 0: the memory is erased each step and the answer turns "
         "into a guess. Clamp f = 1, i = 0: nothing is ever written.", {"lg_clamp_f": "0"}),
    Step("Why gradients vanish", "Gradient flow: through k steps a tanh RNN multiplies by "
         "diag(1−h²)W k times; the LSTM's cell path multiplies by f only.",
         {"lg_rho": 1.0, "lg_fb": 2, "lg_T": 150, "lg_clip": "off",
          "lg_kinds": ["rnn", "gru", "lstm"]}),
    Step("The forget bias sets the memory", "Compare forget bias 0, 1, 2: with 0 the LSTM "
         "forgets almost as fast as the RNN.", {"lg_fb": 0}),
    Step("Train them yourself", "Train tab: press Play. At delay 40 the LSTM learns within a "
         "few hundred iterations, the RNN stays at chance (25 %).",
         {"lg_tr_delay": 40, "lg_tr_curr": False}),
]

page_header("LSTM gating",
            "The input, forget and output gates of a trained LSTM opening and closing on a "
            "real sequence, and why gradients survive through its cell but vanish in an RNN.",
            r"c_t = f_t \odot c_{t-1} + i_t \odot g_t,\qquad h_t = o_t \odot \tanh(c_t)")
preset_picker(PRESETS, key="lg_preset")
st.caption("New here? The guided tour at the bottom of the page walks through the tabs.")


@st.cache_resource(show_spinner=False)
def load_shipped(kind: str, device: str):
    path = WEIGHTS / f"lstm_gating_{kind}.pt"
    if not path.exists():
        return None
    return R.load_net(path, device)


@st.cache_data(show_spinner=False, max_entries=64)
def flows(kinds: tuple, T: int, hidden: int, seed: int, rho: float, fb: float, clip,
          device: str):
    return {k: R.gradient_flow(k, T=T, hidden=hidden, seed=seed, spectral_radius=rho,
                               forget_bias=fb, clip=clip, device=device) for k in kinds}


def _clamp_box(col, gate: str, label: str) -> float | None:
    v = col.selectbox(label, CLAMP, key=f"lg_clamp_{gate}", bind="query-params")
    return None if v == "free" else float(v)


dev, seed = session.device(), session.seed()
tab_gates, tab_flow, tab_train, tab_cell = st.tabs(
    ["Gates", "Gradient flow", "Train: RNN vs LSTM", "A single cell"])

# ---------------------------------------------------------------------------- Gates
with tab_gates:
    shipped = load_shipped("lstm", dev)
    if shipped is None:
        st.warning("The pretrained LSTM is missing (run `python -m scripts.pretrain "
                   "lstm_gating`); showing an untrained LSTM with the same shape.")
        net, meta = R.RecurrentNet("lstm", 5, 16, 4).to(dev), {"delay": 40, "distract": 1.0,
                                                              "n_symbols": 4}
    else:
        net, meta = shipped
    K = meta["n_symbols"]
    c1, c2, c3 = st.columns([1.2, 1.5, 1.3])
    source = c1.selectbox("Input", INPUTS, key="lg_input", bind="query-params",
                          help="A task sample, your own symbols, or a test signal.")
    x, labels = None, None
    with user_errors("build this input"):
        if source == "task sample":
            delay = c2.slider("Delay D", 1, 100, meta["delay"], key="lg_delay",
                              bind="query-params")
            b = R.make_task_batch("delayed_recall", 1, delay, seed=seed,
                                  n_symbols=K, distract=meta["distract"])
            x = b.x[0].cpu().numpy()
        elif source == "typed symbols":
            text = c2.text_input("Symbols (A–D, '.' blank, '?' go)",
                                 "B" + ".CADBAC.DBA" * 2 + "?", key="lg_text",
                                 bind="query-params", max_chars=200)
            x = R.encode_recall(text, K)
        else:
            names = [*R.RECALL_ALPHABET[:K], "go"]
            ch = c2.selectbox("Channel", names, key="lg_channel", bind="query-params")
            length = c3.slider("Length", 5, 100, 40, key="lg_len", bind="query-params")
            x = R.signal_input(source, length, K + 1, channel=names.index(ch), at=2,
                               seed=seed)
        labels = R.recall_labels(x, K)
    if x is not None:
        st.markdown("**Clamp a gate** (replace it by a constant at every step):")
        cc = st.columns(3)
        clamp = {g: v for g, v in (("i", _clamp_box(cc[0], "i", "input gate i")),
                                   ("f", _clamp_box(cc[1], "f", "forget gate f")),
                                   ("o", _clamp_box(cc[2], "o", "output gate o")))
                 if v is not None}
        trace = R.lstm_trace(net.rnn, x, clamp=clamp)
        free = R.lstm_trace(net.rnn, x) if clamp else None
        T, H = trace.h.shape
        # the answer after the last step (the readout sees h_T of the possibly clamped run)
        probs = R.head_probs(net, trace.h[-1])
        left, right = st.columns([3, 1])
        with right:
            answer = R.RECALL_ALPHABET[int(probs.argmax())]
            st.metric("Network answers", answer, f"p = {probs.max():.2f}", delta_color="off")
            if source == "task sample":
                st.metric("Correct answer", R.RECALL_ALPHABET[int(b.y[0])])
            rnn_shipped = load_shipped("rnn", dev)
            if rnn_shipped is not None:
                rp = R.predict_probs(rnn_shipped[0], x)
                st.metric("Same-size RNN answers", R.RECALL_ALPHABET[int(rp.argmax())],
                          f"p = {rp.max():.2f}", delta_color="off",
                          help="A 16-unit tanh RNN trained with the same recipe (600 Adam "
                               "steps at D = 40): it stays near chance (25 %).")
            show_figure(F.probability_bars(probs, R.RECALL_ALPHABET[:K]), key="lg_fig_probs")
        with left:
            show_figure(F.gate_heatmaps(trace, labels), key="lg_fig_heat")
        for k in ("lg_unit", "lg_t"):   # keep bound values inside this input's range
            limit = H - 1 if k == "lg_unit" else T - 1
            if isinstance(st.session_state.get(k), int) and st.session_state[k] > limit:
                st.session_state[k] = limit
        u1, u2 = st.columns(2)
        unit = u1.slider("Unit", 0, H - 1, int(np.abs(trace.c).max(0).argmax()),
                         key="lg_unit", bind="query-params")
        t = u2.slider("Time step for the equations", 0, T - 1, 0, key="lg_t",
                      bind="query-params")
        show_figure(F.unit_lines(trace, unit, labels, reference=free), key="lg_fig_unit")
        st.latex(F.lstm_equations(trace, t, unit))
        explain("Each gate is a sigmoid of the current input and the previous hidden state: "
                "**i** decides how much of the candidate **g** is written, **f** how much of "
                "the old cell is kept, **o** how much of tanh(c) is shown as h. Along the cell "
                "path ∂c_t/∂c_{t−1} = diag(f): no repeated multiplication by a weight matrix.")
        export_buttons(F.trace_frame(trace, labels),
                       {"input": source, "clamp": clamp, "T": T, "hidden": H,
                        "weights": "assets/weights/lstm_gating_lstm.pt"}, "lstm_gating_trace")

# ---------------------------------------------------------------------------- Gradient flow
with tab_flow:
    g1, g2, g3, g4 = st.columns(4)
    rho = g1.slider("Spectral radius ρ of W_hh", 0.5, 3.0, 1.0, 0.05, key="lg_rho",
                    bind="query-params", help="Every recurrent block is rescaled to this ρ.")
    fb = g2.select_slider("Forget-gate bias", [0, 1, 2, 3], 1, key="lg_fb",
                          bind="query-params", help="LSTM forget gate (and GRU update gate).")
    T_flow = g3.slider("Sequence length T", 10, 300, 100, 10, key="lg_T", bind="query-params")
    clip_s = g4.selectbox("Per-step clipping", CLIPS, key="lg_clip", bind="query-params")
    kinds = st.multiselect("Cells", KINDS, default=list(KINDS), key="lg_kinds",
                           bind="query-params", format_func=F.KIND_NAMES.get)
    if not kinds:
        st.warning("Choose at least one cell to compare.")
    else:
        clip = None if clip_s == "off" else float(clip_s)
        with user_errors("compute the gradient flow"), st.spinner("Backpropagating…"):
            res = flows(tuple(k for k in KINDS if k in kinds), int(T_flow), 32, seed,
                        float(rho), float(fb), clip, dev)
            show_figure(F.gradient_flow_figure(res, rho), key="lg_fig_flow")
            cols = st.columns(len(res))
            lag = min(100, int(T_flow) - 1)
            for col, (k, fl) in zip(cols, res.items()):
                col.metric(f"{F.KIND_NAMES[k]}: gradient at lag {lag}", f"{fl.norms[lag]:.2e}")
            explain("Measured with autograd on freshly initialised 32-unit cells driven by "
                    "noise: the batch holds 32 copies so one backward pass gives the whole "
                    "Jacobian ∂h_T/∂h_t (shown: its Frobenius norm / √32). For a linear RNN "
                    "it is Wᵏ, which shrinks or grows like ρᵏ (dashed). The tanh RNN shrinks "
                    "faster still (tanh′ ≤ 1). Clipping rescales the backpropagated gradient at "
                    "each step to norm ≤ the threshold: it stops explosion, not vanishing.")
            export_buttons(F.flows_frame(res), {"rho": rho, "forget_bias": fb, "T": T_flow,
                                                "clip": clip, "kinds": list(res)},
                           "lstm_gating_gradients")

# ---------------------------------------------------------------------------- Train
with tab_train:
    t1, t2, t3, t4 = st.columns(4)
    tr_delay = t1.slider("Delay D", 5, 80, 40, 5, key="lg_tr_delay", bind="query-params")
    tr_curr = t2.toggle("Curriculum", False, key="lg_tr_curr",
                        bind="query-params", help="Grow the delay from 2 up to D: add 2 whenever "
                                                  "the running accuracy reaches 95 %.")
    tr_hidden = t3.select_slider("Hidden units", [8, 16, 32], 16, key="lg_tr_hidden",
                                 bind="query-params")
    tr_lr = t4.select_slider("Learning rate", [0.001, 0.003, 0.01, 0.03], 0.01,
                             key="lg_tr_lr", bind="query-params")
    config = {"delay": tr_delay, "curriculum": tr_curr, "hidden": tr_hidden, "lr": tr_lr,
              "seed": seed, "device": dev}

    def make_race():
        return R.RaceTrainer(("rnn", "lstm"), task="delayed_recall",
                             length=2 if tr_curr else tr_delay, max_length=tr_delay,
                             curriculum=tr_curr, hidden=tr_hidden, lr=tr_lr, batch=64,
                             seed=seed, device=dev, forget_bias=2.0,
                             task_params={"n_symbols": 4, "distract": 1.0})

    def draw(race, tick) -> None:
        delays = np.unique(np.linspace(2, max(tr_delay * 1.5, 10), 7).astype(int))
        acc = {k: R.accuracy_by_length(r.net, "delayed_recall", delays, n=100, seed=seed,
                                       distract=1.0) for k, r in race.racers.items()}
        levels = {k: r.level for k, r in race.racers.items()}
        a, b = st.columns(2)
        with a:
            show_figure(F.accuracy_vs_delay(delays, acc, levels, 0.25), key="lg_fig_acc")
        with b:
            show_figure(F.race_history({k: r.history.as_arrays("accuracy")
                                        for k, r in race.racers.items()}), key="lg_fig_hist")

    live_training("lg_race", make_race, draw, config, steps_per_frame=20,
                  max_steps_per_frame=200)
    explain("Both nets see the same batches: one symbol, D random distractor symbols, '?'. "
            "Trained from scratch at a long delay, the RNN's gradient from the answer back to "
            "the symbol vanishes, so it never finds the signal; the LSTM's forget gate "
            "(bias 2) carries it. With the curriculum on, the RNN can follow for a while: "
            "short delays first make the task learnable step by step.")

# ---------------------------------------------------------------------------- Single cell
with tab_cell:
    st.markdown("A hidden-size-1 LSTM: each gate computes act(w·x_t + u·h_{t−1} + b). "
                "A pulse arrives at t = 5; watch how long c remembers it.")
    weights = {}
    cols = st.columns(4)
    for col, gate in zip(cols, "ifgo"):
        w0, u0, b0 = R.SCALAR_DEFAULTS[gate]
        with col:
            st.markdown(f"**{F.PANELS[gate][0]}**")
            weights[gate] = tuple(
                st.slider(f"{name}_{gate}", -6.0, 6.0, float(v0), 0.5,
                          key=f"lg_s_{gate}_{name}", bind="query-params")
                for name, v0 in (("w", w0), ("u", u0), ("b", b0)))
    amp = st.slider("Pulse amplitude", -2.0, 2.0, 1.0, 0.1, key="lg_s_amp",
                    bind="query-params")
    xs = R.pulse(60, at=5, amplitude=amp)
    cell_trace = R.lstm_trace(R.scalar_lstm(weights), xs[:, None])
    f_rest = float(cell_trace.f[-1, 0])
    show_figure(F.scalar_cell_figure(xs, cell_trace, R.memory_half_life(f_rest)),
                key="lg_fig_cell")
    m1, m2, m3 = st.columns(3)
    m1.metric("forget gate at rest", f"{f_rest:.3f}")
    m2.metric("c right after the pulse", f"{cell_trace.c[5, 0]:.3f}")
    m3.metric("c at the end (t = 59)", f"{cell_trace.c[-1, 0]:.3g}")
    explain("With x = 0 after the pulse, i·g = i·tanh(u_g h + b_g); for b_g = u_g = 0 nothing "
            "new is written and c_t = f·c_{t−1}: the memory decays like fᵗ, half-life "
            "ln ½ / ln f. The forget bias b_f sets f = σ(b_f): 0 → ½ (1 step), 2 → 0.88 "
            "(5 steps), 4 → 0.98 (38 steps).")

st.divider()
guided_steps(STEPS, key="lg_steps")
